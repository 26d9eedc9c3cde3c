package compile

import (
	"slices"
	"strings"

	"ramjet.dev/ramjet/match"
)

// viewState is what the build keeps of the Gateway listeners' views
// (SPEC §20): the hosts of each listener's routes, apart from the
// Ingresses' hosts every listener serves, and the Ingress paths an older
// route takes the place of on one listener.
type viewState struct {
	hosts     map[match.Listener]map[string]*vhost
	displaced map[match.Listener]map[*match.Route]bool
}

func (s *viewState) displace(l match.Listener, r *match.Route) {
	if s.displaced == nil {
		s.displaced = make(map[match.Listener]map[*match.Route]bool)
	}
	if s.displaced[l] == nil {
		s.displaced[l] = make(map[*match.Route]bool)
	}
	s.displaced[l][r] = true
}

// routeVhost is the host a route attached to listener l places its rules
// in: the Ingresses' host of that name (created if none) for a route of
// every listener, else the listener's own host of that name, which holds
// the routes only until assembleViews adds the Ingresses' paths.
func (b *builder) routeVhost(l match.Listener, host string) *vhost {
	if l == (match.Listener{}) {
		v, ok := b.vhostNamed(host)
		if !ok {
			v = b.newVhost(host, nil)
		}
		return v
	}
	if b.views.hosts == nil {
		b.views.hosts = make(map[match.Listener]map[string]*vhost)
	}
	hosts := b.views.hosts[l]
	if hosts == nil {
		hosts = make(map[string]*vhost)
		b.views.hosts[l] = hosts
	}
	if v := hosts[host]; v != nil {
		return v
	}
	v := b.vhostSlab.new()
	v.vh = b.hostSlab.new()
	v.vh.Name, v.vh.Listener = host, l
	hosts[host] = v
	b.vhostOrder = append(b.vhostOrder, v)
	return v
}

// assembleViews turns the listeners' hosts into the hosts match serves on
// each listener, once every step has run: a listener's host whose name an
// Ingress also serves becomes a copy of the Ingresses' host (its settings,
// fallback and paths, but those an older route displaced there) with the
// route's rules beside them, so that Ingresses keep their own rule on
// every listener; every listener gets its catch-all so; and each listener
// hostname that no host serves gets an empty host (404), so that a request
// for it never reaches a host of a listener with a less specific hostname.
func (b *builder) assembleViews(hosts []*match.VirtualHost) []*match.VirtualHost {
	views := map[match.Listener]bool{}
	for l := range b.views.hosts {
		views[l] = true
	}
	for _, lh := range b.snap.Listeners {
		if lh.Listener != (match.Listener{}) {
			views[lh.Listener] = true
		}
	}
	if len(views) == 0 {
		return hosts
	}
	out := hosts[:0]
	for _, vh := range hosts {
		if vh.Listener == (match.Listener{}) {
			out = append(out, vh)
			continue
		}
		base := b.vhostOf(vh.Name)
		if base == nil {
			out = append(out, vh)
			continue
		}
		out = append(out, b.viewCopy(base.vh, vh.Listener, vh))
	}
	return append(out, listenerViews(b.snap.Listeners, views, b.views.hosts, func(h string) bool { return b.hasVhost(h) },
		func(l match.Listener) *match.VirtualHost { return b.viewCopy(b.catchAll.vh, l, nil) })...)
}

// listenerViews are the hosts each listener of views gets beside its
// route sources' hosts (own): its catch-all (catchAll), unless own has
// one, and an empty host for each of its hostnames in ls that neither own
// nor the hosts without a Listener (served) have.
func listenerViews(ls []match.ListenerHost, views map[match.Listener]bool, own map[match.Listener]map[string]*vhost,
	served func(string) bool, catchAll func(match.Listener) *match.VirtualHost) []*match.VirtualHost {
	var out []*match.VirtualHost
	for _, l := range slices.SortedFunc(func(yield func(match.Listener) bool) {
		for l := range views {
			if !yield(l) {
				return
			}
		}
	}, func(x, y match.Listener) int {
		if x.Port != y.Port {
			return int(x.Port - y.Port)
		}
		if x.TLS == y.TLS {
			return 0
		}
		if x.TLS {
			return 1
		}
		return -1
	}) {
		hosts := own[l]
		if hosts[""] == nil {
			out = append(out, catchAll(l))
		}
		claimed := map[string]bool{}
		for _, lh := range ls {
			h := lh.Hostname
			if lh.Listener != l || h == "" || hosts[h] != nil || claimed[h] || served(h) || invalidHost(h) != "" {
				continue
			}
			claimed[h] = true
			out = append(out, &match.VirtualHost{Name: h, Listener: l, DeepWildcard: strings.HasPrefix(h, "*.")})
		}
	}
	return out
}

// gatewayViews are the views of the listeners of ls (assembleViews),
// without route sources' hosts, of a table whose catch-all is catchAll
// and whose hosts without a Listener served names.
func gatewayViews(ls []match.ListenerHost, catchAll *match.VirtualHost, served func(string) bool) []*match.VirtualHost {
	views := map[match.Listener]bool{}
	for _, lh := range ls {
		if lh.Listener != (match.Listener{}) {
			views[lh.Listener] = true
		}
	}
	return listenerViews(ls, views, nil, served, func(l match.Listener) *match.VirtualHost {
		vh := *catchAll
		vh.Listener = l
		vh.Routes = make([]*match.Route, len(catchAll.Routes))
		for i, r := range catchAll.Routes {
			c := *r
			vh.Routes[i] = &c
		}
		return &vh
	})
}

// viewCopy is base as listener l serves it: a copy with copies of its
// routes but those displaced on l, and the routes of own, the listener's
// host of that name, if any.
func (b *builder) viewCopy(base *match.VirtualHost, l match.Listener, own *match.VirtualHost) *match.VirtualHost {
	vh := *base
	vh.Listener = l
	vh.Routes = make([]*match.Route, 0, len(base.Routes))
	for _, r := range base.Routes {
		if b.views.displaced[l][r] {
			continue
		}
		c := *r
		vh.Routes = append(vh.Routes, &c)
	}
	if own != nil {
		vh.Routes = append(vh.Routes, own.Routes...)
		vh.DeepWildcard = vh.DeepWildcard || own.DeepWildcard
	}
	return &vh
}
