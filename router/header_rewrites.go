package router

import (
	"net/http"
	"slices"
	"strings"

	"ramjet.dev/ramjet/match"
)

// rewriteHead applies the location's proxy_redirect, proxy_cookie_domain
// and proxy_cookie_path (match.HeaderRewrite) to the backend's response
// head h, as nginx rewrites a proxied response's Location, Refresh and
// Set-Cookie fields. The router's own answers and error pages never pass
// here, nor do the first own Set-Cookie values of h, which the router set
// (the session cookie, affinity.go): nginx rewrites only the cookies it
// copies from the upstream's head. A location without them pays one nil
// check.
func (x *exchange) rewriteHead(h http.Header, own int) {
	p := x.proxying()
	if !p.HasHeaderRewrites() {
		return
	}
	if rw := p.Redirect; rw != nil {
		rewriteField(h, "Location", 0, func(v string) (string, bool) {
			v, ok := rw.RewriteLocation(v)
			if ok && strings.HasPrefix(v, "/") && !p.RedirectRelative && x.host != "" {
				// nginx's header filter completes a Location it rewrote
				// to begin with "/" (absolute_redirect on), with the
				// request's host and without its port (ingress-nginx's
				// port_in_redirect off); one it left stays relative.
				v = x.scheme() + "://" + x.host + v
			}
			return v, ok
		})
		rewriteField(h, "Refresh", 0, rw.RewriteRefresh)
	}
	if p.CookieDomain != nil || p.CookiePath != nil {
		rewriteField(h, "Set-Cookie", own, func(v string) (string, bool) {
			return match.RewriteSetCookie(v, p.CookieDomain, p.CookiePath)
		})
	}
}

// rewriteField replaces each value of h's field k from index from on that
// f rewrites; the slice is copied first, as another map may share it.
func rewriteField(h http.Header, k string, from int, f func(string) (string, bool)) {
	vs := h[k]
	copied := false
	for i, v := range vs {
		if i < from {
			continue
		}
		nv, ok := f(v)
		if !ok {
			continue
		}
		if !copied {
			vs, copied = slices.Clone(vs), true
			h[k] = vs
		}
		vs[i] = nv
	}
}

// scheme is the client's scheme, as clientProto saw it.
func (x *exchange) scheme() string {
	if x.https {
		return "https"
	}
	return "http"
}
