package main

import (
	"cmp"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"ramjet.dev/ramjet/match"
	"ramjet.dev/ramjet/router"
	"ramjet.dev/ramjet/router/h1"
)

// catchAllHealth answers the health check path (-health-check-path) with
// 200 on the traffic listeners, as ingress-nginx's catch-all server does
// for cloud load balancers that probe port 80: only for names no Ingress
// rule claims, and only where nginx's location would win, a string prefix
// location there. An Exact or regex route of the catch-all that matches,
// or a longer Prefix, is nginx's better location and is served instead.
// Like nginx's, the answer is not logged.
// allow, when set, holds the ConfigMap's /nginx_status allow lists; conns,
// when set, the counts /nginx_status gives them.
func catchAllHealth(rt *router.Router, path string, allow *atomic.Pointer[nginxStatusAllow], conns *h1.ConnStats) http.Handler {
	path = cmp.Or(path, "/healthz")
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if strings.HasPrefix(req.URL.Path, nginxStatusPath) && healthOnCatchAll(rt.Lookup(req), nginxStatusPath) {
			var lists nginxStatusAllow
			if allow != nil && allow.Load() != nil {
				lists = *allow.Load()
			}
			nginxStatus(w, lists.allows(rt.ClientAddr(req)), conns)
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

// nginxStatus answers /nginx_status as ingress-nginx's location does to a
// client: 403 unless allowed, an address of nginx-status-ipv4-whitelist
// or -ipv6-whitelist; an allowed client gets stub_status's text from the
// servers' connection counts (404 without them). Like nginx's, the
// answer is not logged.
func nginxStatus(w http.ResponseWriter, allowed bool, conns *h1.ConnStats) {
	status := http.StatusForbidden
	body := ""
	switch {
	case allowed && conns != nil:
		n := conns.Counts()
		status = http.StatusOK
		body = fmt.Sprintf("Active connections: %d \nserver accepts handled requests\n %d %d %d \nReading: %d Writing: %d Waiting: %d \n",
			n.Active, n.Accepted, n.Accepted, n.Requests, n.Reading, n.Writing, n.Waiting)
	case allowed:
		status = http.StatusNotFound
	}
	if body == "" {
		body = strconv.Itoa(status) + " " + http.StatusText(status) + "\n"
	}
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

// nginxStatusAllow are the ConfigMap's nginx-status-ipv4-whitelist and
// -ipv6-whitelist, the "allow" lines of ingress-nginx's /nginx_status
// location; a nil list is the key's default (127.0.0.1, ::1), an empty
// one allows no one.
type nginxStatusAllow struct{ ipv4, ipv6 []netip.Prefix }

func (a nginxStatusAllow) allows(client netip.Addr) bool {
	ipv4 := a.ipv4
	if ipv4 == nil {
		ipv4 = []netip.Prefix{netip.PrefixFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), 32)}
	}
	ipv6 := a.ipv6
	if ipv6 == nil {
		ipv6 = []netip.Prefix{netip.PrefixFrom(netip.IPv6Loopback(), 128)}
	}
	client = client.Unmap()
	for _, p := range slices.Concat(ipv4, ipv6) {
		if p.Contains(client) {
			return true
		}
	}
	return false
}

// nginxStatusConfigMapKeys are the ConfigMap's /nginx_status keys: comma
// separated addresses and CIDRs, as nginx's allow takes them (either
// family in either list), or all.
var nginxStatusConfigMapKeys = map[string]func(c *config, v string) error{
	"nginx-status-ipv4-whitelist": func(c *config, v string) (err error) {
		c.nginxStatus.ipv4, err = parseAllowList(v)
		return err
	},
	"nginx-status-ipv6-whitelist": func(c *config, v string) (err error) {
		c.nginxStatus.ipv6, err = parseAllowList(v)
		return err
	},
}

func parseAllowList(v string) ([]netip.Prefix, error) {
	list := []netip.Prefix{}
	for item := range strings.SplitSeq(v, ",") {
		item = strings.TrimSpace(item)
		switch {
		case item == "":
			continue
		case item == "all":
			list = append(list, netip.MustParsePrefix("0.0.0.0/0"), netip.MustParsePrefix("::/0"))
			continue
		}
		p, err := netip.ParsePrefix(item)
		if err != nil {
			addr, aerr := netip.ParseAddr(item)
			if aerr != nil {
				return nil, fmt.Errorf("%q is neither an address nor a CIDR", item)
			}
			p = netip.PrefixFrom(addr, addr.BitLen())
		}
		list = append(list, p.Masked())
	}
	return list, nil
}
