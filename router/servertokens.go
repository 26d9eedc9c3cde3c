package router

import "ramjet.dev/ramjet/match"

// ingress-nginx's server-tokens. nginx does not pass a backend's Server
// header on: proxy_pass hides it by default (proxy_hide_header's defaults
// are Date, Server, X-Pad and X-Accel-*), on every proxied answer, 101 and
// error pages included. With server-tokens "false", the default,
// ingress-nginx also clears nginx's own (nginx.tmpl: more_clear_headers
// Server), so no answer carries one; with "true" every answer carries
// nginx's. The router drops the backend's field where it copies the
// answer's header (headerSettings.hidden, for its own HTTP/1 proxy and
// modifyResponse for ReverseProxy) and puts Options.ServerTokens on every
// answer before any step runs. allow-backend-server-header
// (Options.BackendServerHeader) is nginx.tmpl's proxy_pass_header Server:
// with server-tokens "true" a proxied answer carries the backend's Server
// instead, or none when the backend sent none (nginx's header filter then
// writes none either), so headerSettings.backendServer clears
// ServerTokens' before the backend's head is copied.

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
