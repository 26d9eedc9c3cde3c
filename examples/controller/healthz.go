package main

import (
	"cmp"
	"net/http"
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
		if !strings.HasPrefix(req.URL.Path, path) || !healthOnCatchAll(rt.Lookup(req), path) {
			rt.ServeHTTP(w, req)
			return
		}
		w.Header().Set("Content-Length", "0")
		w.WriteHeader(http.StatusOK)
	})
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
