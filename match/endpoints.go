package match

import (
	"errors"
	"slices"
	"strings"
)

// An endpoint-only change (an EndpointSlice changed, nothing else) gives
// some backends new endpoints and leaves everything else as it was. Hosts
// refer to backends by pointer, so the hosts that refer to a changed
// backend are copied to refer to its copy; nothing else is rebuilt.

// errEndpointsShared is returned when a changed backend is referred to
// from where a host copy cannot follow: another backend's canary, a
// response's error backend or a mirror, or a host Changes do not name.
var errEndpointsShared = errors.New("match: a backend whose endpoints change is referred to beyond the hosts named")

// withEndpoints returns c with c.Endpoints turned into backends and hosts
// replaced: a copy of each backend with its new endpoints, and a copy of
// each host of c.EndpointHosts referring to the copies. Every reference
// to a changed backend must be from one of those hosts' routes or
// fallback; it checks that the table's backends and the copied hosts refer
// to them in no other way.
func (t *Table) withEndpoints(c Changes) (Changes, error) {
	repl := make(map[*Backend]*Backend, len(c.Endpoints))
	ids := make([]string, 0, len(c.Endpoints))
	for id := range c.Endpoints {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		i, ok := slices.BinarySearchFunc(t.backends, id, func(be *Backend, id string) int { return strings.Compare(be.ID, id) })
		if !ok {
			return c, errors.New("match: no backend " + id + " to give endpoints")
		}
		old := t.backends[i]
		be := *old
		be.Endpoints = c.Endpoints[id]
		repl[old] = &be
	}
	for _, be := range t.backends {
		if tr := be.Traffic; tr != nil && tr.Canary != nil && repl[tr.Canary.Backend] != nil {
			return c, errEndpointsShared
		}
	}
	if vh := t.catchAll.vh; vh != nil && repl[vh.Fallback] != nil && !slices.Contains(c.EndpointHosts, "") {
		return c, errEndpointsShared
	}
	out := c
	out.Endpoints, out.EndpointHosts = nil, nil
	out.VirtualHosts = slices.Clone(c.VirtualHosts)
	out.Backends = slices.Clone(c.Backends)
	for _, old := range t.backends {
		if be := repl[old]; be != nil {
			out.Backends = append(out.Backends, be)
		}
	}
	names := slices.Clone(c.EndpointHosts)
	slices.Sort(names)
	names = slices.Compact(names)
	var cl hostCloner
	olds := make([]*VirtualHost, 0, len(names))
	for _, name := range names {
		hi, ok := t.hostOf(name)
		if !ok {
			continue
		}
		olds = append(olds, hi.vh)
		cl.count(hi.vh)
	}
	for _, old := range olds {
		vh := cl.clone(old)
		if be := repl[vh.Fallback]; be != nil {
			vh.Fallback = be
		}
		if be := repl[vh.Passthrough]; be != nil {
			vh.Passthrough = be
		}
		for _, r := range vh.Routes {
			if be := repl[r.Backend]; be != nil {
				r.Backend = be
			}
			if r.Split != nil && slices.ContainsFunc(r.Split.Alternatives, func(a Alternative) bool { return repl[a.Backend] != nil }) {
				sp := &Split{Alternatives: slices.Clone(r.Split.Alternatives)}
				for i, a := range sp.Alternatives {
					if be := repl[a.Backend]; be != nil {
						sp.Alternatives[i].Backend = be
					}
				}
				r.Split = sp
			}
			if refersInResponse(r.Response, repl) || r.Split != nil && slices.ContainsFunc(r.Split.Alternatives, func(a Alternative) bool {
				return slices.ContainsFunc(a.Mirrors, func(m *Mirror) bool { return repl[m.Backend] != nil })
			}) {
				return c, errEndpointsShared
			}
		}
		out.VirtualHosts = append(out.VirtualHosts, vh)
	}
	return out, nil
}

// refersInResponse reports whether a response's error backend or mirrors
// refer to a changed backend (a split's mirrors are checked beside it).
func refersInResponse(resp *Response, repl map[*Backend]*Backend) bool {
	if resp == nil {
		return false
	}
	if repl[resp.ErrorBackend] != nil || resp.Mirror != nil && repl[resp.Mirror.Backend] != nil {
		return true
	}
	return slices.ContainsFunc(resp.Mirrors, func(m *Mirror) bool { return m != nil && repl[m.Backend] != nil })
}
