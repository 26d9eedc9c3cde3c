package compile

import (
	"slices"
	"strings"

	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"

	"ramjet.dev/ramjet/match"
)

// An endpoint-only change (EndpointSlices changed, nothing else) reaches
// the endpoints of the backends of the Services the slices belong to, and
// nothing else, unless an Ingress decides by endpoints: the default-backend
// annotation substitutes a backend without endpoints, service-upstream
// dials the cluster IP instead, a canary's backend is referred to from its
// primary's, and a spec.defaultBackend or global default backend reaches
// hosts no rule names. Without those, the previous table is kept with
// each such backend's endpoint list replaced (match.Changes.Endpoints);
// no Ingress is compiled again.

// endpointsOnly recompiles an endpoint-only change; ok is false when it
// cannot, and the caller recompiles the Ingresses naming the Services.
// TLSRoutes' Services (tlsServices) are recompiled with the routes, and
// with Gateway listeners (views) the catch-all is also theirs.
func (c *Compiler) endpointsOnly(o Options, global *objKey, tlsServices map[objKey]bool, views bool) (Result, bool) {
	p, cp := c.seen, c.couplings
	// Each reached Service's slices before and after the change.
	before := map[objKey][]*discoveryv1.EndpointSlice{}
	after := map[objKey][]*discoveryv1.EndpointSlice{}
	changed := make(map[objKey]bool, len(p.slices.changes)) // slice keys
	for _, ch := range p.slices.changes {
		changed[ch.key] = true
	}
	svcOf := func(sl *discoveryv1.EndpointSlice) objKey {
		return objKey{sl.Namespace, sl.Labels[discoveryv1.LabelServiceName]}
	}
	for _, ch := range p.slices.changes {
		for _, sl := range []*discoveryv1.EndpointSlice{ch.old, ch.new} {
			if sl == nil || sl.Labels[discoveryv1.LabelServiceName] == "" {
				continue
			}
			if k := svcOf(sl); after[k] == nil {
				after[k] = []*discoveryv1.EndpointSlice{}
			}
		}
	}
	if len(after) == 0 {
		return Result{}, false
	}
	for k := range after {
		for _, sk := range c.slicesBySvc[k] {
			sl := p.slices.m[sk].obj
			after[k] = append(after[k], sl)
			if !changed[sk] {
				before[k] = append(before[k], sl)
			}
		}
	}
	for _, ch := range p.slices.changes {
		if ch.old != nil && ch.old.Labels[discoveryv1.LabelServiceName] != "" {
			before[svcOf(ch.old)] = append(before[svcOf(ch.old)], ch.old)
		}
	}

	prev := c.last.Table
	streams := streamServices(prev)
	b := &builder{opts: o}
	var hosts []string
	endpoints := map[string][]string{}
	var oldWarnings, newWarnings []Warning
	sliceRefs := map[Ref]bool{}
	for k, now := range after {
		if global != nil && *global == k || streams[k] || tlsServices[k] {
			return Result{}, false
		}
		var refs []networkingv1.ServiceBackendPort // the ports k is named by
		for _, ik := range cp.bySvc[k] {
			e := p.ingresses.m[ik]
			if e == nil || !endpointsBlind(e.obj) {
				return Result{}, false
			}
			hosts = append(hosts, cp.facts[ik].hosts...)
			refs = appendPortRefs(refs, e.obj, k.name)
		}
		if views && slices.Contains(hosts, "") {
			return Result{}, false // the listeners' copies of the catch-all would keep the old endpoints
		}
		for _, sl := range before[k] {
			sliceRefs[Ref{Kind: "EndpointSlice", Namespace: sl.Namespace, Name: sl.Name}] = true
		}
		for _, sl := range now {
			sliceRefs[Ref{Kind: "EndpointSlice", Namespace: sl.Namespace, Name: sl.Name}] = true
		}
		var svc *serviceEntry
		if e := p.services.m[k]; e != nil {
			svc = &serviceEntry{svc: e.obj}
		}
		for be := range prev.BackendsWithIDPrefix(k.ns + "/" + k.name + ":") {
			if be.Namespace != k.ns || be.Name != k.name || be.State != match.Serving {
				continue
			}
			if svc == nil {
				return Result{}, false
			}
			// The Service port of the backend's number: resolve found it
			// by the number, name or targetPort as written, and with one
			// port of each number that is this one.
			var port *string
			for i := range svc.svc.Spec.Ports {
				if sp := &svc.svc.Spec.Ports[i]; sp.Port == be.Port {
					if port != nil {
						return Result{}, false
					}
					port = &sp.Name
				}
			}
			if port == nil {
				return Result{}, false
			}
			refs = slices.DeleteFunc(refs, func(r networkingv1.ServiceBackendPort) bool {
				return r.Number == be.Port || r.Name != "" && r.Name == *port
			})
			// The previous endpoints and warnings must be what the
			// previous slices give: else something else decided them.
			svc.slices = before[k]
			mark := len(b.warnings)
			if !slices.Equal(b.endpoints(svc, *port), be.Endpoints) {
				return Result{}, false
			}
			oldWarnings = append(oldWarnings, b.warnings[mark:]...)
			b.warnings = b.warnings[:mark]
			svc.slices = now
			eps := b.endpoints(svc, *port)
			newWarnings = append(newWarnings, b.warnings[mark:]...)
			b.warnings = b.warnings[:mark]
			if !slices.Equal(eps, be.Endpoints) {
				endpoints[be.ID] = eps
			}
		}
		// A port named only by paths the table does not serve (a lost
		// route) still has its slices read, and warned about, by Compile.
		if len(refs) > 0 {
			return Result{}, false
		}
	}

	// The warnings: the previous ones about the slices must be what they
	// gave then; they are replaced by what they give now.
	var kept, was []Warning
	for _, w := range c.last.Warnings {
		if sliceRefs[w.Object] {
			was = append(was, w)
		} else {
			kept = append(kept, w)
		}
	}
	if !slices.Equal(was, sortWarnings(oldWarnings)) {
		return Result{}, false
	}
	warnings := mergeWarnings(kept, sortWarnings(newWarnings))

	table := prev
	if len(endpoints) > 0 {
		var err error
		if table, err = prev.Update(match.Changes{Endpoints: endpoints, EndpointHosts: hosts}); err != nil {
			return Result{}, false
		}
	}
	u := c.last.Unclaimed
	u.Groups = slices.Clone(u.Groups)
	return Result{Table: table, Warnings: warnings, Claimed: c.last.Claimed, Unclaimed: u}, true
}

// endpointsBlind reports whether an Ingress's part in the table does not
// depend on the endpoints of the Services it names, beyond the endpoint
// lists of their backends, and whether its backends are referred to from
// its rules' hosts alone.
func endpointsBlind(ing *networkingv1.Ingress) bool {
	if ing.Spec.DefaultBackend != nil {
		return false
	}
	for k := range ing.Annotations {
		name := k[strings.LastIndexByte(k, '/')+1:]
		if strings.HasPrefix(name, "canary") || name == "service-upstream" || slices.Contains(couplingAnnotations, name) {
			return false
		}
	}
	return true
}

// appendPortRefs appends the Service ports that ing's rules name of the
// Service svc in its namespace.
func appendPortRefs(refs []networkingv1.ServiceBackendPort, ing *networkingv1.Ingress, svc string) []networkingv1.ServiceBackendPort {
	for _, rule := range ing.Spec.Rules {
		if rule.HTTP == nil {
			continue
		}
		for _, path := range rule.HTTP.Paths {
			if b := path.Backend.Service; b != nil && b.Name == svc {
				refs = append(refs, b.Port)
			}
		}
	}
	return refs
}
