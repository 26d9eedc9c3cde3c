package main

import (
	"cmp"
	"io"
	"net/http"
	"net/netip"
	"strconv"
	"strings"

	"ramjet.dev/ramjet/match"
	"ramjet.dev/ramjet/router"
)

// catchAllHealth answers the health check path (-health-check-path) with
// 200 on the traffic listeners, as ingress-nginx's catch-all server does
// for cloud load balancers that probe port 80: only for names no Ingress
// rule claims, and only where nginx's location would win, a string prefix
// location there. An Exact or regex route of the catch-all that matches,
// or a longer Prefix, is nginx's better location and is served instead.
// Like nginx's, the answer is not logged.
func catchAllHealth(rt *router.Router, path string) http.Handler {
	path = cmp.Or(path, "/healthz")
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if strings.HasPrefix(req.URL.Path, nginxStatusPath) && healthOnCatchAll(rt.Lookup(req), nginxStatusPath) {
			nginxStatus(w, rt.ClientAddr(req))
			return
		}
		if !strings.HasPrefix(req.URL.Path, path) || !healthOnCatchAll(rt.Lookup(req), path) {
			rt.ServeHTTP(w, req)
			return
		}
		w.Header().Set("Content-Length", "0")
		w.WriteHeader(http.StatusOK)
	})
}

// nginxStatusPath is the catch-all's stub_status location in ingress-nginx,
// a string prefix location like the health check's.
const nginxStatusPath = "/nginx_status"

// nginxStatus answers /nginx_status as ingress-nginx's location does to
// client: 403 unless it is an address of the default
// nginx-status-ipv4-whitelist or -ipv6-whitelist (127.0.0.1, ::1), whose
// ConfigMap keys are not read. ramjet keeps no stub_status counters, so an
// allowed client gets 404. Like nginx's, the answer is not logged.
func nginxStatus(w http.ResponseWriter, client netip.Addr) {
	status := http.StatusForbidden
	if client = client.Unmap(); client == netip.AddrFrom4([4]byte{127, 0, 0, 1}) || client == netip.IPv6Loopback() {
		status = http.StatusNotFound
	}
	body := strconv.Itoa(status) + " " + http.StatusText(status) + "\n"
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}

// healthOnCatchAll reports that d, the router's decision for a request
// under path, is the catch-all's and that no route of it outranks
// nginx's location for path.
func healthOnCatchAll(d router.Decision, path string) bool {
	if d.Table == nil || d.VirtualHost == nil || d.VirtualHost != d.Table.VirtualHostByName("") {
		return false
	}
	r := d.Route
	return r == nil || r.Type == match.Prefix && len(r.Path) < len(path)
}
