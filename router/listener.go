package router

import (
	"context"
	"maps"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"

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
	if p := ServerPort(req); p != 0 {
		port = p
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

type socketPortKey struct{}

// socketPortsMarked is whether SocketPort ever marked a connection, so
// that listenerOf looks for the mark only then.
var socketPortsMarked atomic.Bool

// SocketPort marks a connection's context (from http.Server.ConnContext)
// with the port its socket was accepted on, where its LocalAddr is not
// that socket's: behind a PROXY protocol header, LocalAddr is the
// header's destination (see PeerIsClient). Gateway listeners are judged
// by the socket's port, as nginx picks a server by the socket it listens
// on ($server_port is the local port, not $proxy_protocol_server_port).
func SocketPort(ctx context.Context, port int) context.Context {
	socketPortsMarked.Store(true)
	return context.WithValue(ctx, socketPortKey{}, port)
}

// ServerPort is nginx's $server_port for req: the port of the socket it
// arrived on, SocketPort's mark where there is one, else its LocalAddr's;
// 0 when unknown.
func ServerPort(req *http.Request) int {
	if socketPortsMarked.Load() {
		if p, ok := req.Context().Value(socketPortKey{}).(int); ok && p != 0 {
			return p
		}
	}
	switch a := req.Context().Value(http.LocalAddrContextKey).(type) {
	case *net.TCPAddr:
		return a.Port
	case net.Addr:
		if _, p, err := net.SplitHostPort(a.String()); err == nil {
			n, _ := strconv.Atoi(p)
			return n
		}
	}
	return 0
}
