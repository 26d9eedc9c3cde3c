package router

import (
	"net/http"
	"strconv"
	"strings"

	"ramjet.dev/ramjet/match"
	"ramjet.dev/ramjet/match/vars"
)

// The redirects the table asks for (SPEC §11.1), answered by the router
// itself before the HTTPS redirect and before any backend is picked, in
// the order nginx meets them:
//
//   - from-to-www-redirect: a www twin is a server of its own there, so
//     every request to it answers 308 (Options.HTTPRedirectCode) to
//     <scheme>://<host>:<port><request-uri>,
//     the last byte of the request-uri dropped when it is "/" (ingress-nginx's
//     ngx_srv_redirect.lua). The port is the one the request arrived on, or
//     X-Forwarded-Port where forwarded headers are trusted; the scheme is
//     the connection's, or X-Forwarded-Proto where trusted (a PROXY
//     protocol header naming port 443 does not make it https there).
//   - app-root: a request whose normalized path is "/" answers 302 to
//     <scheme>://<Host header as sent><app-root> (nginx's "$scheme://$http_host"),
//     from the server's rewrite phase, before any location; with no Host
//     field at all (HTTP/1.0) the host part is empty, as nginx's.
//   - permanent-redirect and temporal-redirect: the matched route's (or,
//     when no route matched, the host creator's) "return <code> <url>": the
//     URL as written, made absolute with <scheme>://<host> when it starts
//     with "/" unless relative-redirects is set. nginx sends a Location only
//     for 301, 302, 303, 307 and 308; other codes carry the URL as the body.
//
// The scheme is the client's as clientProto sees it (X-Forwarded-Proto only
// when trusted), where nginx would use its own connection's.

// Reasons for the answers of this file, reported in Record.Reason.
const (
	ReasonRedirect    = "redirect"     // permanent-redirect or temporal-redirect
	ReasonAppRoot     = "app-root"     // 302 from / to the app-root
	ReasonWWWRedirect = "www-redirect" // 308 from a www twin (from-to-www-redirect)
)

var ansNoHostToRedirect = answer{http.StatusBadRequest, ReasonBadHost, "400 Bad Request: the request has no valid host name to redirect with\n"}

// redirectAction is the table's redirect for the request, if it has one:
// the answer, its Location ("" when the answer carries none), whether the
// answer names no declaration (the www twin is a server of its own), and
// whether there is a redirect at all. path and query are the
// request-target as received, clean the normalized path; appRoot says
// whether the server's app-root check runs (decideTarget). It writes
// nothing: decide calls it, so Lookup reports the same redirect.
func (r *Router) redirectAction(req *http.Request, res match.Result, host, path, query string, hasQuery bool, clean string, appRoot bool) (a answer, location string, unrouted, ok bool) {
	h := res.Host.Actions
	var rd *match.Redirect
	switch {
	case res.Route != nil:
		rd = res.Route.Redirect
	case h != nil && !res.RegexBudgetExceeded:
		rd = h.Fallback
	}
	if rd == nil && (h == nil || h.WWWTo == "" && h.AppRoot == "") {
		return answer{}, "", false, false
	}
	scheme := r.clientProto(req)
	switch {
	case h != nil && h.WWWTo != "":
		uri := path
		if strings.HasPrefix(vars.RequestURIOf(req.RequestURI), "?") {
			uri = "" // "http://h?q": $request_uri has no path
		}
		if hasQuery {
			uri += "?" + query
		}
		uri = strings.TrimSuffix(uri, "/")
		// ngx_srv_redirect.lua's scheme is ngx.var.scheme or a trusted
		// X-Forwarded-Proto, never a PROXY protocol header's port 443,
		// and goes with the socket's port: https there would send the
		// client to a TLS handshake with a plain-HTTP port.
		twin := r.forwardedProto(req)
		loc := twin + "://" + h.WWWTo + ":" + r.redirectPort(req, twin) + uri
		return redirectAnswer(r.live.Load().redirectCode, ReasonWWWRedirect, loc), loc, true, true
	case h != nil && h.AppRoot != "" && clean == "/" && appRoot:
		// An absent Host field (HTTP/1.0) is an empty $http_host: nginx
		// sends "http:///app" then.
		sent, present := httpHost(req)
		if present {
			var ok bool
			if sent, ok = hostAsSent(sent); !ok {
				return ansNoHostToRedirect, "", false, true
			}
		}
		loc := scheme + "://" + sent + h.AppRoot
		return redirectAnswer(http.StatusFound, ReasonAppRoot, loc), loc, false, true
	case rd != nil:
		loc := rd.URL
		if strings.HasPrefix(loc, "/") && !rd.Relative && host != "" {
			loc = scheme + "://" + host + loc
		}
		if !rd.HasLocation() {
			// nginx's "return 300 text": the text is the body.
			return answer{rd.Code, ReasonRedirect, rd.URL + "\n"}, "", false, true
		}
		return redirectAnswer(rd.Code, ReasonRedirect, loc), loc, false, true
	}
	return answer{}, "", false, false
}

func redirectAnswer(code int, reason, loc string) answer {
	return answer{code, reason, strconv.Itoa(code) + " " + http.StatusText(code) + ": " + loc + "\n"}
}

// redirectPort is nginx's $server_port: the port of the socket the request
// arrived on (80 or 443 when unknown), or X-Forwarded-Port where forwarded
// headers are trusted.
func (r *Router) redirectPort(req *http.Request, scheme string) string {
	if r.live.Load().trustForwardedProto {
		if v := req.Header["X-Forwarded-Port"]; len(v) > 0 {
			if p := strings.TrimSpace(v[0]); p != "" && validPort(":"+p) {
				return p
			}
		}
	}
	if p := ServerPort(req); p != 0 {
		return strconv.Itoa(p)
	}
	if scheme == "https" {
		return "443"
	}
	return "80"
}

// hostAsSent is the Host header with its port, as nginx's $http_host, once
// hostWithoutPort has vouched for the name.
func hostAsSent(h string) (string, bool) {
	name, ok := hostWithoutPort(h)
	if !ok {
		return "", false
	}
	return name + h[len(name):], true
}
