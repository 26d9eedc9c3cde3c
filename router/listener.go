package router

import (
	"maps"
	"net"
	"net/http"

	"ramjet.dev/ramjet/match"
)

// listenerOf is the Gateway listener a request arrived on (SPEC §20): the
// Gateway port its local port is published as (Options.GatewayPorts) and
// whether TLS was terminated.
func (r *Router) listenerOf(req *http.Request) match.Listener {
	l := match.Listener{TLS: req.TLS != nil}
	port := 80
	if l.TLS {
		port = 443
	}
	if a, ok := req.Context().Value(http.LocalAddrContextKey).(*net.TCPAddr); ok && a.Port != 0 {
		port = a.Port
	}
	if p, ok := (*r.gatewayPorts.Load())[port]; ok {
		l.Port = p
	} else {
		l.Port = int32(port)
	}
	return l
}

// SetGatewayPorts replaces Options.GatewayPorts, for a server that learns
// its listeners' ports once they are bound; safe while serving.
func (r *Router) SetGatewayPorts(m map[int]int32) {
	c := maps.Clone(m)
	r.gatewayPorts.Store(&c)
}
