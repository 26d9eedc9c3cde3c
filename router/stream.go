package router

import (
	"ramjet.dev/ramjet/balance"
	"ramjet.dev/ramjet/match"
)

// Stream is a TCP or UDP service of the serving table (SPEC §22) as a
// listener in front of the router serves it: the entry, the settings of
// the table it came from, and its backend's balancer, whose counters it
// shares with the router's HTTP backends.
type Stream struct {
	Service  *match.L4Service
	Settings match.StreamSettings
	// Balancer picks an endpoint per connection or UDP session; the
	// endpoint's Release ends it. Nil when the backend cannot be served
	// (no such Service or port).
	Balancer *balance.Balancer
}

// Stream returns the serving table's service on port for proto; ok is
// false when there is none (no table yet, or the port is not in it).
func (r *Router) Stream(proto match.L4Protocol, port int32) (s Stream, ok bool) {
	st := r.state.Load()
	if st == nil {
		return Stream{}, false
	}
	svc := st.table.L4Service(proto, port)
	if svc == nil {
		return Stream{}, false
	}
	s = Stream{Service: svc, Settings: st.table.StreamSettings()}
	if svc.Backend.State == match.Serving {
		s.Balancer = st.balancers[svc.Backend]
	}
	return s, true
}
