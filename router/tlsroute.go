package router

import (
	"strconv"

	"ramjet.dev/ramjet/balance"
	"ramjet.dev/ramjet/match"
)

// PassthroughVerdict is what becomes of a TLS connection once its
// ClientHello is read (PassthroughFor).
type PassthroughVerdict int

const (
	// Terminate: hand the connection (its ClientHello replayed) to the
	// TLS server, as any other.
	Terminate PassthroughVerdict = iota
	// Splice: pass it through, unterminated, to the endpoint chosen.
	Splice
	// Refuse: close it. It belongs to a Gateway TLS passthrough listener
	// but no route of it takes the server name, or the route's backend
	// chosen for it is invalid or has no ready endpoint (SPEC §20); or it
	// is an ssl-passthrough host's whose Service has no ready endpoint.
	Refuse
)

// PassthroughFor decides a TLS connection that arrived on local port
// localPort (published as a Gateway port by Options.GatewayPorts) naming
// serverName (SNI): a Gateway TLS passthrough listener's connection goes
// to its TLSRoute's backend chosen by weight (match.Table.PassthroughOn),
// an ssl-passthrough host's to its backend (PassthroughEndpoint), refused
// without an endpoint and terminated without its Service; every other is
// terminated. With Splice, addr is the endpoint ("ip:port") and
// release ends the connection's count as in flight.
func (r *Router) PassthroughFor(localPort int, serverName string) (addr string, release func(), v PassthroughVerdict) {
	st := r.state.Load()
	if st == nil {
		return "", nil, Terminate
	}
	if st.table.HasPassthrough() {
		port := int32(localPort)
		if p, ok := (*r.gatewayPorts.Load())[localPort]; ok {
			port = p
		}
		pr, claimed := st.table.PassthroughOn(match.Listener{Port: port, TLS: true}, serverName)
		if claimed {
			if pr == nil || pr.Split == nil {
				return "", nil, Refuse
			}
			bs := st.routeSplits[pr.Split]
			if bs == nil {
				return "", nil, Refuse
			}
			i, ok := bs.Next()
			if !ok || pr.Split.Alternatives[i].Backend == nil {
				return "", nil, Refuse
			}
			bal := st.balancers[pr.Split.Alternatives[i].Backend]
			if bal == nil {
				return "", nil, Refuse
			}
			e, ok := bal.Pick("")
			if !ok {
				return "", nil, Refuse
			}
			return e.Addr, e.Release, Splice
		}
	}
	b := st.table.Passthrough(serverName)
	if b == nil || b.State == match.ServiceNotFound {
		// ingress-nginx leaves a passthrough host whose Service is
		// missing out of its TCP proxy: nginx terminates its TLS.
		return "", nil, Terminate
	}
	if addr, release, ok := r.PassthroughEndpoint(serverName); ok {
		return addr, release, Splice
	}
	// ingress-nginx's TCP proxy dials the Service's cluster IP, refused
	// without a ready endpoint, and closes the client's connection.
	return "", nil, Refuse
}

// PeeksClientHello reports whether the serving table passes some TLS
// connections through, Gateway TLS listeners' or ssl-passthrough hosts':
// only then need a TLS listener read a connection's ClientHello before
// its handshake.
func (r *Router) PeeksClientHello() bool {
	st := r.state.Load()
	return st != nil && (st.table.HasPassthrough() || st.table.HasSSLPassthrough())
}

// passthroughSplits adds the rotation of every passthrough route's
// weighted backends to m, identified by listener, hostname and source.
func (r *Router) passthroughSplits(t *match.Table, m map[*match.Split]*balance.Split) map[*match.Split]*balance.Split {
	for _, pr := range t.PassthroughRoutes() {
		if pr.Split == nil {
			continue
		}
		if m == nil {
			m = make(map[*match.Split]*balance.Split)
		}
		if m[pr.Split] == nil {
			m[pr.Split] = r.registry.Split("tls-route "+strconv.Itoa(int(pr.Listener.Port))+" "+pr.ListenerHostname+" "+pr.Hostname+" "+pr.Source.String(), pr.Split.Weights())
		}
	}
	return m
}
