package router

import (
	"net/http"

	"ramjet.dev/ramjet/match"
	"ramjet.dev/ramjet/router/configmap"
)

// DefaultHSTS is the Strict-Transport-Security value ingress-nginx sends
// by default (hsts "true", hsts-max-age "31536000",
// hsts-include-subdomains "true", hsts-preload "false").
const DefaultHSTS = "max-age=31536000; includeSubDomains"

// HSTSHeader is the Strict-Transport-Security value ingress-nginx builds
// from its hsts-max-age, hsts-include-subdomains and hsts-preload
// settings (rootfs/etc/nginx/lua/lua_ingress.lua, _M.header;
// configmap.HSTSHeader, which the hsts keys use).
func HSTSHeader(maxAge int64, includeSubDomains, preload bool) string {
	return configmap.HSTSHeader(maxAge, includeSubDomains, preload)
}

// hstsValue is the header value for the HSTS settings value and
// disable (see Options.HSTS): nil when none is sent. A value that is not
// a valid header field value (a control character) is dropped rather
// than written into every answer.
func hstsValue(value string, disable bool) *[]string {
	if disable {
		return nil
	}
	if value == "" {
		value = DefaultHSTS
	}
	if !match.ValidHeaderValue(value) {
		return nil
	}
	// A full slice expression: the slice is shared by every answer, so
	// an append to one answer's header must copy it, never write into it.
	s := []string{value}
	s = s[:1:1]
	return &s
}

// SetHSTS replaces the Options.HSTS and Options.DisableHSTS the Router
// was made with, from the next request on: ingress-nginx's hsts keys
// change without a restart.
func (r *Router) SetHSTS(value string, disable bool) {
	r.hsts.Store(hstsValue(value, disable))
}

// decorHSTS sends Strict-Transport-Security over TLS (hsts).
var decorHSTS = decoration{name: "hsts", headers: []string{"Strict-Transport-Security"}}

// setHSTS puts the Strict-Transport-Security header on the answer to a
// request that came over TLS, over any value the backend sent, as
// ingress-nginx's header filter sets it on every answer of a location
// (ngx.header[...] = value replaces the upstream's): the router's own
// answers and its redirects included. A request over plain HTTP never
// gets it, whatever X-Forwarded-Proto says: nginx tests ngx.var.scheme,
// the connection's own scheme. The answers nginx makes before it finds a
// location get none either, as the filter is the location's (see
// serverLevel, and dropHSTS for a client certificate's refusals).
func (r *Router) setHSTS(h http.Header, req *http.Request, d *decision) bool {
	if req.TLS == nil || d.at == &stepUnlocated && serverLevel(d.ans.reason) {
		return false
	}
	v := r.hsts.Load()
	if v == nil {
		return false
	}
	h["Strict-Transport-Security"] = *v
	return true
}

// serverLevel reports whether an unlocated answer is one ingress-nginx
// makes outside any location: a www twin's redirect (a server block of
// its own, nginx.tmpl's RedirectServers), app-root's and the
// block-user-agents and block-referers 403 (an "if" at server level), and
// nginx's own 400s for a bad Host, request-target or method
// (and the rest it refuses once it has read a head: ReasonRefused). A
// route's permanent- or temporal-redirect is a "return" inside the
// location, which the filter sees.
func serverLevel(reason string) bool {
	switch reason {
	case ReasonWWWRedirect, ReasonAppRoot, ReasonBlocked, ReasonBadHost, ReasonBadPath, ReasonRefused:
		return true
	}
	return false
}

// dropHSTS takes the Strict-Transport-Security header setHSTS put off
// the answer to s, which nginx makes before it finds a location (a client
// certificate refused: ngx_http_process_request, the server's error_page
// and "if"), where the location's header filter never runs. A value of
// the ConfigMap's add-headers, set at the http level, stays.
func dropHSTS(s *requestState) {
	if !s.hsts {
		return
	}
	s.hsts = false
	if s.cmh != nil && s.cmh.add != nil {
		if _, set := s.cmh.add["Strict-Transport-Security"]; set {
			return
		}
	}
	delete(s.w.Header(), "Strict-Transport-Security")
}

// keepHSTS drops the Strict-Transport-Security values a backend added
// after the router's own (both proxies append a backend's fields to the
// values setHSTS put first), so the client gets the router's alone.
func keepHSTS(h http.Header) {
	if v := h["Strict-Transport-Security"]; len(v) > 1 {
		h["Strict-Transport-Security"] = v[:1:1]
	}
}
