package compile

import (
	"cmp"
	"slices"
	"strconv"
	"time"

	"ramjet.dev/ramjet/match"
)

// TLSRoute is a route source's TLS passthrough route on one listener
// (SPEC §20): the Gateway API's TLSRoute attached to a listener with
// protocol TLS and tls.mode Passthrough, as compile/gatewayapi translates
// it. Connections on the listener whose server name (SNI) one of
// Hostnames matches are spliced, unterminated, to Backends.
type TLSRoute struct {
	Namespace, Name string
	// Created decides between two routes taking one hostname on one
	// listener: the oldest, then namespace/name (the Gateway API's rule).
	Created time.Time
	// Listener is the port the listener serves (TLS set), and
	// ListenerHostname its hostname ("" for none).
	Listener         match.Listener
	ListenerHostname string
	// Hostnames the route takes there: names, "*." wildcards (any depth),
	// "" for every name the listener accepts.
	Hostnames []string
	// Field locates the rule ("spec.rules[0]"); Backends share its
	// connections by weight, an invalid one's share being refused.
	Field    string
	Backends []WeightedBackend
}

// TLSRouteKind is the Kind of a TLSRoute in warnings and sources.
const TLSRouteKind = "TLSRoute"

func (r *TLSRoute) ref() Ref { return Ref{Kind: TLSRouteKind, Namespace: r.Namespace, Name: r.Name} }

// buildTLSRoutes places the passthrough routes, oldest first, so that of
// two routes taking one hostname on one listener the older one wins.
func (b *builder) buildTLSRoutes() {
	if len(b.snap.TLSRoutes) == 0 {
		return
	}
	routes := slices.DeleteFunc(slices.Clone(b.snap.TLSRoutes), func(r *TLSRoute) bool { return r == nil })
	slices.SortStableFunc(routes, func(x, y *TLSRoute) int {
		return cmp.Or(x.Created.Compare(y.Created), cmp.Compare(x.Namespace, y.Namespace), cmp.Compare(x.Name, y.Name))
	})
	type key struct {
		l      match.Listener
		lh, hn string
	}
	taken := map[key]*TLSRoute{}
	for _, tr := range routes {
		if !tr.Listener.TLS {
			b.warn(RuleRejected, tr.ref(), "spec.parentRefs", "a passthrough listener's port carries TLS; the route is not served")
			continue
		}
		hosts := tr.Hostnames
		if len(hosts) == 0 {
			hosts = []string{""}
		}
		var split *match.Split
		for _, h := range hosts {
			if why := invalidHost(h); why != "" {
				b.warn(RuleRejected, tr.ref(), "spec.hostnames", "hostname "+strconv.Quote(h)+" "+why+"; the route does not take it")
				continue
			}
			k := key{tr.Listener, tr.ListenerHostname, h}
			if w := taken[k]; w != nil {
				b.conflict(RouteConflict, tr.ref(), "spec.hostnames",
					"hostname "+tlsHostLabel(h)+" on listener port "+strconv.Itoa(int(tr.Listener.Port))+" is taken by an older TLSRoute; its connections go there",
					w.ref(), "spec.hostnames")
				continue
			}
			taken[k] = tr
			if split == nil {
				split = b.tlsRouteSplit(tr)
			}
			b.passthroughRoutes = append(b.passthroughRoutes, &match.PassthroughRoute{
				Listener: tr.Listener, ListenerHostname: tr.ListenerHostname, Hostname: h,
				Source: match.Source{Kind: TLSRouteKind, Namespace: tr.Namespace, Name: tr.Name, Field: tr.Field},
				Split:  split,
			})
		}
	}
}

// tlsRouteSplit resolves the route's backends: an invalid reference, a
// Service or port that does not exist, keeps its share, which is refused.
func (b *builder) tlsRouteSplit(tr *TLSRoute) *match.Split {
	s := &match.Split{}
	positive := 0
	for i := range tr.Backends {
		wb := &tr.Backends[i]
		var be *match.Backend
		if wb.Invalid == "" {
			svc := wb.Service
			r := b.resolve(svc.Namespace, svc.Name, svc.Port)
			switch r.issue().problem {
			case ServiceNotFound, ExternalNameUnsupported:
				b.warn(r.issue().problem, tr.ref(), wb.Field+".name", r.issue().message+"; its share of the connections is refused")
			case ServicePortNotFound:
				b.warn(r.issue().problem, tr.ref(), wb.Field+".port", r.issue().message+"; its share of the connections is refused")
			default:
				r.backend.used = true
				be = r.backend.b
			}
		}
		w := int(max(wb.Weight, 0))
		if w > 0 {
			positive++
		}
		s.Alternatives = append(s.Alternatives, match.Alternative{Backend: be, Weight: w})
	}
	switch {
	case len(tr.Backends) == 0:
		b.warn(BackendUnsupported, tr.ref(), tr.Field+".backendRefs", "the rule names no backend; its connections are refused")
		return nil
	case positive == 0:
		b.warn(BackendUnsupported, tr.ref(), tr.Field+".backendRefs", "every backend has weight 0; the route's connections are refused")
	}
	return s
}

// tlsHostLabel names a route hostname in a message, "" as every name.
func tlsHostLabel(h string) string {
	if h == "" {
		return "(every name)"
	}
	return strconv.Quote(h)
}
