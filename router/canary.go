package router

import (
	"net/http"

	"ramjet.dev/ramjet/balance"
	"ramjet.dev/ramjet/match"
)

// ReasonInvalidBackend is the Record.Reason of a 500: the request's share
// of a weighted split (a canary) belongs to a backend that is not valid
// (its Service or port does not exist, or it is an ExternalName), which is
// Gateway API's rule for weighted backends (SPEC §10, §13).
const ReasonInvalidBackend = "invalid-backend"

var ansInvalidBackend = answer{http.StatusInternalServerError, ReasonInvalidBackend,
	"500 Internal Server Error: the weighted backend chosen for this request is not valid\n"}

// stepSteer chooses between the backend and its canary and reads the
// session (steerRequest). Its other answers, for a canary that cannot take
// the request, are decide's (backendFor).
var stepSteer = step{name: "steer", kind: kindSteer, reasons: []string{ReasonInvalidBackend, ReasonBackendRedirect}}

// steerRequest chooses the backend the request is served by, past its
// canary (SPEC §10) and by its session (SPEC §9), and checks a canary
// chosen as decide checked the primary.
func (r *Router) steerRequest(s *requestState) bool {
	if rt := s.d.res.Route; rt != nil && rt.Split != nil && r.splitRequest(s, rt.Split) {
		return true
	}
	if s.d.backend.Traffic == nil {
		// No canary, no affinity: the backend decide chose (steer's answer
		// for it, without building one).
		s.ch, s.bal = choice{backend: s.d.backend}, s.d.bal
		return false
	}
	ch, a, refused := s.d.st.steer(s.d.backend, s.d.res.Route, s.req, &r.live.Load().headers)
	if refused {
		s.d.backend = ch.backend
		r.refuse(s, a)
		return true
	}
	s.ch, s.bal = ch, s.d.bal
	if ch.backend != s.d.backend {
		s.d.backend = ch.backend
		if s.bal, a = s.d.st.backendFor(ch.backend, s.grpc); a.status != 0 {
			r.refuse(s, a)
			return true
		}
	}
	return false
}

// choice is the backend a request is served by once its primary's canary
// had its say, with what session affinity needs. It is a value kept in the
// exchange, so deciding costs no allocation.
type choice struct {
	backend *match.Backend
	// affinity is the chosen backend's session affinity, nil without.
	affinity *match.SessionAffinity
	// session is the session part of the request's cookie ("" for none),
	// whichever backend set it; cookiePath the path a new cookie is set for; userAgent is read
	// for conditional-samesite-none.
	session    string
	cookiePath string
	userAgent  string
	// noCookie: the route sets no session cookie (Route.NoAffinityCookie);
	// https: the request came over TLS, which makes the cookie Secure.
	noCookie bool
	https    bool
	// setCookie: the exchange set the session's cookie, which an error
	// page keeps (serveErrorPage).
	setCookie bool
}

// steer decides between a primary backend and its canary (SPEC §10), then
// reads the request's session for the backend chosen (SPEC §9). The
// primary is servable: one that is not has already answered 503, even
// where the canary would have been chosen. A canary with no ready
// endpoints is skipped without consulting its rules; one that is not valid
// answers 500 for the requests its rules choose (refused is true).
func (st *serving) steer(b *match.Backend, rt *match.Route, req *http.Request, hs *headerSettings) (ch choice, a answer, refused bool) {
	ch.backend = b
	if t := b.Traffic; t != nil && t.Canary != nil {
		c := t.Canary
		skip := c.Backend.State == match.Serving && len(c.Backend.Endpoints) == 0
		if !skip && st.toCanary(b, c, req, hs) {
			if c.Backend.State != match.Serving {
				return choice{backend: c.Backend}, ansInvalidBackend, true
			}
			ch.backend = c.Backend
		}
	}
	if t := ch.backend.Traffic; t != nil && t.Affinity != nil {
		st.readSession(&ch, t.Affinity, rt, req)
	}
	return ch, answer{}, false
}

// toCanary applies the canary's rules in ingress-nginx's order: a session
// pinned to the primary stays there, one pinned to the canary goes to it,
// then the header (value, else pattern, else
// "always"/"never"), the cookie ("always"/"never"), then the weight. A rule
// that does not decide passes the request to the next; a pattern that
// does not compile decides for the primary (balancer.lua:243-250). hs
// says which header lines nginx would have kept for the header rule.
func (st *serving) toCanary(primary *match.Backend, c *match.Canary, req *http.Request, hs *headerSettings) bool {
	// The primary's own sessions first (balancer.lua:195-198): else each
	// request of a session would risk the weight's move to the canary.
	if st.pinned(primary, req) {
		return false
	}
	if c.Sticky && st.pinned(c.Backend, req) {
		return true
	}
	if c.Header != "" {
		if v, ok := canaryHeader(req, c.Header, hs); ok {
			switch {
			case c.HeaderValue != "":
				if v == c.HeaderValue {
					return true
				}
			case c.HeaderPattern != nil:
				if c.HeaderPattern.MatchString(v) {
					return true
				}
			case c.HeaderPatternError:
				return false
			case v == "always":
				return true
			case v == "never":
				return false
			}
		}
	}
	if c.Cookie != "" {
		if v, ok := balance.Cookie(req, c.Cookie); ok {
			switch v {
			case "always":
				return true
			case "never":
				return false
			}
		}
	}
	switch {
	case c.Weight <= 0:
		return false
	case c.Weight >= c.WeightTotal:
		return true
	}
	s := st.splits[primary]
	if s == nil {
		return false
	}
	i, _ := s.Next()
	return i == 1
}

// canaryHeader is the canary's header as ingress-nginx's balancer reads
// it, ngx.var["http_" .. name] with each '-' as '_' (balancer.lua
// route_to_alternative_balancer); name is canonical, with '-' for every
// '_' of the annotation. nginx reads only the lines it kept: under
// ignore_invalid_headers a name with '_' (without underscores_in_headers)
// or any other byte but letters, digits and '-' is dropped before a
// variable sees it (hs.invalidName); the lines of the other spellings it
// kept count too (hs.httpVariable).
func canaryHeader(req *http.Request, name string, hs *headerSettings) (string, bool) {
	if hs.invalidName(name) {
		return "", false
	}
	return hs.httpVariable(req, name)
}

// pinned reports a request whose affinity cookie names backend b (false
// when b has no affinity), as ingress-nginx's is_affinitized: the cookie's
// backend token alone decides, not whether its endpoint is still live.
func (st *serving) pinned(b *match.Backend, req *http.Request) bool {
	if b.Traffic == nil || b.Traffic.Affinity == nil {
		return false
	}
	v, ok := balance.StickyCookie(req.Header["Cookie"], b.Traffic.Affinity.CookieName)
	if !ok {
		return false
	}
	_, token := splitSession(v)
	bal := st.balancers[b]
	return bal != nil && token != "" && token == bal.Token()
}

// canaryWeights is the split of a primary's requests that no other canary
// rule decided: primary first, canary second; nil when the weight alone
// decides (0 or less: never; the total or more: always).
func canaryWeights(c *match.Canary) []int {
	if c.Weight <= 0 || c.Weight >= c.WeightTotal {
		return nil
	}
	return []int{c.WeightTotal - c.Weight, c.Weight}
}

// splits builds the rotation of every canary weight in t, identified by
// the primary backend, so a rebuilt table continues the rotation.
func (r *Router) splits(t *match.Table) map[*match.Backend]*balance.Split {
	var m map[*match.Backend]*balance.Split
	for b := range t.Backends() {
		if b.Traffic == nil || b.Traffic.Canary == nil {
			continue
		}
		w := canaryWeights(b.Traffic.Canary)
		if w == nil {
			continue
		}
		if m == nil {
			m = make(map[*match.Backend]*balance.Split)
		}
		m[b] = r.registry.Split(b.ID+" canary", w)
	}
	return m
}

// liveSplits are the splits of the new serving state and of the previous
// one, whose requests may still be deciding: a sweep keeps their positions.
func liveSplits(states ...*serving) []*balance.Split {
	var out []*balance.Split
	for _, st := range states {
		if st == nil {
			continue
		}
		for _, s := range st.splits {
			out = append(out, s)
		}
		for _, s := range st.routeSplits {
			out = append(out, s)
		}
	}
	return out
}
