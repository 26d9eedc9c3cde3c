package router

import (
	"net/http"

	"ramjet.dev/ramjet/router/h1"
)

// httpHost is nginx's $http_host: the Host field as sent, port and case
// kept, also beside an absolute-form target ("GET http://a.example/x"),
// whose host Request.Host holds as net/http has it ($host). present is
// false when the request had no Host field. A request router/h1 did not
// read has only Request.Host.
func httpHost(req *http.Request) (host string, present bool) {
	if t := req.RequestURI; t != "" && t[0] != '/' {
		if f, present, ok := h1.HostField(req); ok {
			return f, present
		}
	}
	return req.Host, req.Host != ""
}

// bestHost is ingress-nginx's $best_http_host before forwarded headers
// (lua_ingress.lua: $http_host or $host): the Host field as sent, else
// Request.Host.
func bestHost(req *http.Request) string {
	if h, ok := httpHost(req); ok && h != "" {
		return h
	}
	return req.Host
}
