package router

import "ramjet.dev/ramjet/match"

// ingress-nginx's server-tokens. nginx never passes a backend's Server
// header on: proxy_pass hides it by default (proxy_hide_header's defaults
// are Date, Server, X-Pad and X-Accel-*), on every proxied answer, 101 and
// error pages included. With server-tokens "false", the default,
// ingress-nginx also clears nginx's own (nginx.tmpl: more_clear_headers
// Server), so no answer carries one; with "true" every answer carries
// nginx's. The router drops the backend's field where it copies the
// answer's header (skipResponseHeader for its own HTTP/1 proxy,
// modifyResponse for ReverseProxy) and puts Options.ServerTokens on every
// answer before any step runs.

// decorServerTokens sends Options.ServerTokens as Server.
var decorServerTokens = decoration{name: "server tokens", headers: []string{"Server"}}

// serverTokensValue is the header value for Options.ServerTokens, shared
// by every answer (a full slice, so an append copies it); nil for none,
// and for a value holding a control character.
func serverTokensValue(v string) []string {
	if v == "" || !match.ValidHeaderValue(v) {
		return nil
	}
	return []string{v}[:1:1]
}
