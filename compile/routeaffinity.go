package compile

import (
	"cmp"

	"ramjet.dev/ramjet/balance"
	"ramjet.dev/ramjet/match"
)

// Session persistence of route sources (SPEC §20): a rule's
// sessionPersistence is the session affinity ramjet has (SPEC §9), the
// cookie of its backend. The routes of the rule set it; the others on
// that backend follow a cookie they are sent and set none, as an
// Ingress's routes without affinity do. Affinity is its backend's, so the
// oldest claim decides: an Ingress's (decideAffinity) before any route's,
// then the oldest route's; a different one warns.

// routeAffinity is a rule's request for affinity on one route.
type routeAffinity struct {
	hr    *HTTPRoute
	rule  *HTTPRouteRule
	route *match.Route
}

// noteRouteAffinity records a route of a route source: one whose rule
// asks for affinity gets it (applyRouteAffinity), the others never set
// an affinity cookie.
func (b *builder) noteRouteAffinity(hr *HTTPRoute, rule *HTTPRouteRule, r *match.Route) {
	if rule.Affinity == nil {
		r.NoAffinityCookie = true
		return
	}
	b.routeAffinity = append(b.routeAffinity, routeAffinity{hr, rule, r})
}

// applyRouteAffinity gives each rule's backend its session affinity, after
// decideAffinity. A rule whose requests are split among backends gets
// none: which backend answers is not kept.
func (b *builder) applyRouteAffinity() {
	done := map[*HTTPRouteRule]bool{}
	for _, ra := range b.routeAffinity {
		r, rule := ra.route, ra.rule
		be := r.Backend
		if r.Split != nil || be == nil {
			if !done[rule] {
				b.warn(RuleRejected, ra.hr.ref(), rule.AffinityField,
					"session persistence needs one backend; with weighted backends which one answers is not kept, so the rule is served without it")
			}
			done[rule] = true
			r.NoAffinityCookie = true
			continue
		}
		done[rule] = true
		want := *rule.Affinity
		want.CookieName = cmp.Or(want.CookieName, defaultSessionCookie)
		if want.Mode == balance.NoAffinity {
			want.Mode = balance.Balanced
		}
		t := be.Traffic
		switch {
		case t == nil:
			be.Traffic = &match.Traffic{Affinity: &want}
		case t.Affinity == nil:
			t.Affinity = &want
		case *t.Affinity != want:
			b.warn(AnnotationConflict, ra.hr.ref(), rule.AffinityField,
				"backend "+be.ID+" has "+affinityText(t.Affinity)+", as an older claim on it decides; this rule asks for "+affinityText(&want))
		}
	}
	// A route that sets no cookie on a backend without affinity is an
	// ordinary route, and a cookie path matters only where one is set.
	for _, v := range b.vhostOrder {
		for _, r := range v.vh.Routes {
			if r.Backend == nil || r.Backend.Traffic == nil || r.Backend.Traffic.Affinity == nil {
				r.NoAffinityCookie, r.CookieSlash = false, false
			}
		}
	}
}
