package match

import (
	"cmp"
	"errors"
	"slices"
	"strconv"
	"strings"
)

// TLS passthrough by Gateway listener (SPEC §20): a Gateway API TLSRoute
// attached to a listener with protocol TLS and tls.mode Passthrough
// splices the connections whose server name (SNI) its hostnames match to
// its backends, TLS and all. Such a listener shares its port with the
// HTTPS listeners there: the listener hostname that matches a connection's
// server name most specifically decides whether it is terminated (an
// HTTPS listener's) or passed through (a TLS listener's), and a TLS
// listener's connection no route of it matches is refused.

// PassthroughRoute is one hostname of a TLSRoute on one TLS passthrough
// listener.
type PassthroughRoute struct {
	// Listener is the port the listener serves (TLS set);
	// ListenerHostname its hostname, "" for none.
	Listener         Listener
	ListenerHostname string
	// Hostname is the server names the route takes on that listener: a
	// name, a "*." wildcard matching names any number of labels below it,
	// or "" for every name the listener accepts.
	Hostname string
	// Source names the route (Kind "TLSRoute") and its rule.
	Source Source
	// Split shares the connections among the route's backends by weight;
	// an invalid alternative's share is refused, as is every connection
	// of a route without a valid backend of positive weight.
	Split *Split
}

// PassthroughListener is the hostname of a Gateway listener with
// protocol TLS and tls.mode Passthrough on a port (Listener.TLS set): it
// takes the server names it matches most specifically even when no route
// of it does (then the connection is refused).
type PassthroughListener = ListenerHost

// tlsPort is the index of one TLS port that has passthrough listeners.
type tlsPort struct {
	// hostnames are those of every listener on the port, HTTPS and TLS,
	// anyName set when one has none; passthrough holds the TLS listeners',
	// each with its routes.
	hostnames   map[string]bool
	anyName     bool
	passthrough map[string]*sniRoutes
}

// sniRoutes are one TLS listener's routes by hostname.
type sniRoutes struct {
	exact    map[string]*PassthroughRoute
	wildcard map[string]*PassthroughRoute // keyed by the suffix after "*."
	any      *PassthroughRoute
}

// HasPassthrough reports whether some Gateway TLS listener passes
// connections through: only then is a ClientHello worth peeking at for
// PassthroughOn.
func (t *Table) HasPassthrough() bool { return len(t.tlsPorts) > 0 }

// PassthroughOn decides a TLS connection that arrived on listener l
// naming serverName (SNI): claimed is false when it is for an HTTPS
// listener, or for an Ingress's host that names it more specifically
// than a TLS listener's route (or the listener) does (terminate it as any
// other); when it is true the connection belongs to a TLS passthrough
// listener, or to no listener and no Ingress, and r is the route that
// takes it, nil when none does (refuse the connection).
func (t *Table) PassthroughOn(l Listener, serverName string) (r *PassthroughRoute, claimed bool) {
	if len(t.tlsPorts) == 0 {
		return nil, false
	}
	p := t.tlsPorts[l]
	if p == nil {
		return nil, false
	}
	name := trimDot(lowerASCII(serverName))
	lh, ok := mostSpecific(name, p.hostnames, p.anyName)
	if !ok {
		// No listener on the port accepts the name: a Gateway refuses
		// it, unless an Ingress serves it (every listener serves the
		// Ingresses' hosts).
		return nil, !t.ingressServes(name)
	}
	rs := p.passthrough[lh]
	if rs == nil {
		return nil, false // an HTTPS listener's
	}
	r = rs.route(name)
	taken := lh
	if r != nil {
		taken = r.Hostname
	}
	// Every listener serves the Ingresses' hosts: one that names the
	// server name more specifically than the route (or, without one, the
	// listener) keeps it, terminated.
	if vh := t.hostSet.host(name).vh; vh != nil && vh.Name != "" && specificity(vh.Name) > specificity(taken) {
		return nil, false
	}
	return r, true
}

// route is the route that takes name: the exact one, else the wildcard
// with the most labels, else the one without hostnames; nil for none.
func (rs *sniRoutes) route(name string) *PassthroughRoute {
	if r := rs.exact[name]; r != nil && name != "" {
		return r
	}
	for i := strings.IndexByte(name, '.'); i > 0 && i < len(name)-1; {
		if r := rs.wildcard[name[i+1:]]; r != nil {
			return r
		}
		j := strings.IndexByte(name[i+1:], '.')
		if j < 0 {
			break
		}
		i += j + 1
	}
	return rs.any
}

// specificity ranks a hostname by the Gateway API's precedence: none,
// then wildcards by their number of labels, then a name.
func specificity(h string) int {
	switch {
	case h == "":
		return 0
	case strings.HasPrefix(h, "*."):
		return 1 + strings.Count(h, ".")
	}
	return 1 << 20
}

// ingressServes reports whether a host without a Listener serves name:
// an Ingress's host, or a catch-all with routes or a fallback that an
// Ingress or the default backend gave it.
func (t *Table) ingressServes(name string) bool {
	vh := t.hostSet.host(name).vh
	return vh != nil && (vh.Name != "" || len(vh.Routes) > 0 || vh.Fallback != nil)
}

// mostSpecific is the hostname among hostnames that name belongs to by
// the Gateway API's listener precedence: the name itself, else the
// wildcard with the most labels (any depth below it), else "" when
// anyName; ok is false for none.
func mostSpecific(name string, hostnames map[string]bool, anyName bool) (string, bool) {
	if name != "" && hostnames[name] {
		return name, true
	}
	for i := strings.IndexByte(name, '.'); i > 0 && i < len(name)-1; {
		if w := "*" + name[i:]; hostnames[w] {
			return w, true
		}
		j := strings.IndexByte(name[i+1:], '.')
		if j < 0 {
			break
		}
		i += j + 1
	}
	return "", anyName
}

// PassthroughRoutes yields the table's passthrough routes in their
// order: by listener, listener hostname and hostname.
func (t *Table) PassthroughRoutes() []*PassthroughRoute { return slices.Clone(t.passthroughRoutes) }

func comparePassthroughRoutes(a, b *PassthroughRoute) int {
	return cmp.Or(compareListeners(a.Listener, b.Listener), strings.Compare(a.ListenerHostname, b.ListenerHostname),
		strings.Compare(a.Hostname, b.Hostname))
}

// indexPassthroughRoutes builds the TLS ports' index: listeners from ls
// (every served listener's hostname, HTTPS ones included) and pl (the
// TLS passthrough listeners'); of two routes with one listener and
// hostname the first given is kept.
func (t *Table) indexPassthroughRoutes(routes []*PassthroughRoute, ls []ListenerHost, pl []PassthroughListener) error {
	if len(pl) == 0 && len(routes) == 0 {
		return nil
	}
	for _, r := range routes {
		if r == nil {
			continue
		}
		if !r.Listener.TLS {
			return &ValueError{Host: r.Hostname, Field: "PassthroughRoute.Listener", Err: errors.New("a passthrough listener's port carries TLS")}
		}
		if r.Split != nil {
			if err := checkSplit(r.Split); err != nil {
				return &ValueError{Host: r.Hostname, Field: "PassthroughRoute.Split", Err: err}
			}
		}
		t.passthroughRoutes = append(t.passthroughRoutes, r)
	}
	slices.SortStableFunc(t.passthroughRoutes, comparePassthroughRoutes)
	t.passthroughRoutes = slices.CompactFunc(t.passthroughRoutes, func(a, b *PassthroughRoute) bool {
		return comparePassthroughRoutes(a, b) == 0
	})
	t.tlsPorts = make(map[Listener]*tlsPort)
	port := func(l Listener) *tlsPort {
		p := t.tlsPorts[l]
		if p == nil {
			p = &tlsPort{hostnames: map[string]bool{}, passthrough: map[string]*sniRoutes{}}
			t.tlsPorts[l] = p
		}
		return p
	}
	listener := func(p *tlsPort, h string) *sniRoutes {
		if h == "" {
			p.anyName = true
		}
		p.hostnames[h] = true
		rs := p.passthrough[h]
		if rs == nil {
			rs = &sniRoutes{exact: map[string]*PassthroughRoute{}, wildcard: map[string]*PassthroughRoute{}}
			p.passthrough[h] = rs
		}
		return rs
	}
	for _, lh := range pl {
		if lh.Listener.TLS {
			listener(port(lh.Listener), lh.Hostname)
			t.passthroughListeners = append(t.passthroughListeners, lh)
		}
	}
	for _, r := range t.passthroughRoutes {
		rs := listener(port(r.Listener), r.ListenerHostname)
		t.passthroughListeners = append(t.passthroughListeners, ListenerHost{Listener: r.Listener, Hostname: r.ListenerHostname})
		switch suffix, wild := strings.CutPrefix(r.Hostname, "*."); {
		case r.Hostname == "":
			rs.any = r
		case wild:
			rs.wildcard[suffix] = r
		default:
			rs.exact[r.Hostname] = r
		}
	}
	// The HTTPS listeners on those ports take the names they match more
	// specifically than a TLS listener does.
	for _, lh := range ls {
		p := t.tlsPorts[lh.Listener]
		if p == nil || p.passthrough[lh.Hostname] != nil {
			continue
		}
		p.hostnames[lh.Hostname] = true
		p.anyName = p.anyName || lh.Hostname == ""
		t.terminatingListeners = append(t.terminatingListeners, lh)
	}
	for _, s := range []*[]ListenerHost{&t.passthroughListeners, &t.terminatingListeners} {
		slices.SortFunc(*s, func(a, b ListenerHost) int {
			return cmp.Or(compareListeners(a.Listener, b.Listener), strings.Compare(a.Hostname, b.Hostname))
		})
		*s = slices.Compact(*s)
	}
	return nil
}

// passthroughSection is the TLS passthrough listeners of Gateways, with
// their routes, and the HTTPS listeners sharing their ports. A table
// without them encodes as if the section did not exist.
var passthroughSection = section{
	name: "tls-passthrough-routes",
	digest: []digestPart{{
		tag:      "tls-passthrough-routes",
		tableHas: func(t *Table) bool { return len(t.tlsPorts) > 0 },
		table: func(e *encoder, t *Table) {
			for _, ls := range [][]ListenerHost{t.passthroughListeners, t.terminatingListeners} {
				e.num(len(ls))
				for _, lh := range ls {
					e.num(int(lh.Listener.Port))
					e.flag(lh.Listener.TLS)
					e.str(lh.Hostname)
				}
			}
			e.num(len(t.passthroughRoutes))
			for _, r := range t.passthroughRoutes {
				e.num(int(r.Listener.Port))
				e.str(r.ListenerHostname)
				e.str(r.Hostname)
				e.str(r.Source.String())
				e.flag(r.Split != nil)
				if r.Split != nil {
					e.num(len(r.Split.Alternatives))
					for _, a := range r.Split.Alternatives {
						e.backendRef(a.Backend)
						e.num(a.Weight)
					}
				}
			}
		},
	}},
}

// writePassthroughText writes the TLS passthrough listeners and routes
// after the certificates:
//
//	tls-listener <port> <hostname|*> passthrough|terminate
//	tls-route <port> <listener hostname|*> <hostname|*> -> <weight>*<backend|refused> ... from <source>
func (t *Table) writePassthroughText(b *strings.Builder) {
	name := func(h string) string { return cmp.Or(h, "*") }
	for _, lh := range t.passthroughListeners {
		b.WriteString("tls-listener " + strconv.Itoa(int(lh.Listener.Port)) + " " + name(lh.Hostname) + " passthrough\n")
	}
	for _, lh := range t.terminatingListeners {
		b.WriteString("tls-listener " + strconv.Itoa(int(lh.Listener.Port)) + " " + name(lh.Hostname) + " terminate\n")
	}
	for _, r := range t.passthroughRoutes {
		b.WriteString("tls-route " + strconv.Itoa(int(r.Listener.Port)) + " " + name(r.ListenerHostname) + " " + name(r.Hostname) + " ->")
		if r.Split == nil || len(r.Split.Alternatives) == 0 {
			b.WriteString(" refused")
		} else {
			for _, a := range r.Split.Alternatives {
				id := "refused"
				if a.Backend != nil {
					id = a.Backend.ID
				}
				b.WriteString(" " + strconv.Itoa(a.Weight) + "*" + id)
			}
		}
		b.WriteString(" from " + r.Source.String() + "\n")
	}
}
