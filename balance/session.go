package balance

import "fmt"

// Affinity is cookie session affinity (SPEC §9, ingress-nginx's affinity
// and affinity-mode): once a session is placed on an endpoint, its cookie
// brings it back there while that endpoint is live.
type Affinity uint8

const (
	// NoAffinity: every request is balanced by the algorithm.
	NoAffinity Affinity = iota
	// Balanced places a new session by consistent hashing on a session key
	// the cookie carries: when endpoints are added, about 1/n of sessions
	// move to them, which rebalances load after a scale-up.
	Balanced
	// Persistent places a new session with the algorithm and names its
	// endpoint in the cookie: a session moves only when its endpoint goes.
	Persistent
)

func (a Affinity) String() string {
	switch a {
	case NoAffinity:
		return "none"
	case Balanced:
		return "balanced"
	case Persistent:
		return "persistent"
	}
	return fmt.Sprintf("Affinity(%d)", a)
}

// ParseAffinityMode parses affinity-mode: "balanced" or "persistent", in
// lower case, as ingress-nginx's validator accepts them
// (internal/ingress/annotations/sessionaffinity/main.go:79-80).
func ParseAffinityMode(s string) (Affinity, error) {
	switch s {
	case "balanced":
		return Balanced, nil
	case "persistent":
		return Persistent, nil
	}
	return NoAffinity, fmt.Errorf("affinity-mode %q is not balanced or persistent", s)
}

// session is a balancer's affinity state. Cookie values name neither
// addresses nor positions in a list: a persistent value is a hash of the
// backend identity and the endpoint address, a balanced one a session key
// that hashes onto the ring. Both are the same on every replica, so a
// session keeps its endpoint whichever replica serves it.
type session struct {
	mode Affinity
	// token identifies the backend in cookie values (see Token).
	token string
	// endpointTokens are aligned with the balancer's endpoints; byToken
	// finds an endpoint by its token (persistent only).
	endpointTokens []string
	byToken        map[string]int
	// seed makes a backend's balanced session keys its own.
	seed uint64
}

func newSession(id string, mode Affinity, endpoints []string) *session {
	s := &session{mode: mode, token: hexToken(hashString("backend|" + id)), seed: hashString("session|" + id)}
	if mode == Persistent {
		s.endpointTokens = make([]string, len(endpoints))
		s.byToken = make(map[string]int, len(endpoints))
		for i, addr := range endpoints {
			t := hexToken(hashString(id + "|" + addr))
			s.endpointTokens[i] = t
			s.byToken[t] = i
		}
	}
	return s
}

// hexToken writes h as 16 lower-case hex digits.
func hexToken(h uint64) string {
	var buf [16]byte
	const digits = "0123456789abcdef"
	for i := 15; i >= 0; i-- {
		buf[i] = digits[h&0xf]
		h >>= 4
	}
	return string(buf[:])
}

// Affinity returns the balancer's session affinity mode.
func (b *Balancer) Affinity() Affinity {
	if b.session == nil {
		return NoAffinity
	}
	return b.session.mode
}

// Token identifies the backend in session cookie values: 16 hex digits
// derived from the backend identity alone, so every replica and every
// table agrees on it. "" without affinity.
func (b *Balancer) Token() string {
	if b.session == nil {
		return ""
	}
	return b.session.token
}

// PickSession is Pick for a request of a session. value is the session
// part of the request's cookie ("" for none), whichever backend set it.
// When it names an endpoint that may be picked and is not among tried,
// that endpoint is returned and fresh is "". Otherwise a new endpoint is
// chosen (balanced: on the ring by a new session key; persistent: by the
// algorithm) and fresh is the value to set in the cookie. Without affinity it
// is Pick. Like Pick, it counts the endpoint in flight; only a new session
// allocates (its value).
func (b *Balancer) PickSession(value, key string, tried ...Endpoint) (e Endpoint, fresh string, ok bool) {
	s := b.session
	if s == nil {
		e, ok = b.Pick(key, tried...)
		return e, "", ok
	}
	if b.live == 0 {
		return Endpoint{}, "", false
	}
	if value != "" {
		if i := b.sessionEndpoint(value); i >= 0 && b.pickable(i) && !isTried(b.endpoints[i].inflight, tried) {
			e = b.endpoints[i]
			e.inflight.n.Add(1)
			return e, "", true
		}
	}
	if s.mode == Persistent {
		e, ok = b.Pick(key, tried...)
		if !ok {
			return Endpoint{}, "", false
		}
		return e, s.endpointTokens[b.indexOf(e)], true
	}
	// Balanced: a new session key from the cursor, unique per backend and
	// the same sequence on every replica, placed by the ring. A key whose
	// endpoint was tried gives way to the next one.
	for range 20 {
		k := hexToken(mix64(b.cursor.n.Add(1) ^ s.seed))
		i := int(uint32(b.ring.points[b.ring.search(hashString(k))]))
		if !isTried(b.endpoints[i].inflight, tried) {
			e = b.endpoints[i]
			e.inflight.n.Add(1)
			return e, k, true
		}
	}
	// Every key so far hit a tried endpoint: take an untried one by the
	// algorithm, without a cookie; the next request starts a new session.
	e, ok = b.Pick(key, tried...)
	if !ok {
		return Endpoint{}, "", false
	}
	return e, "", true
}

// sessionEndpoint finds the endpoint a session value names, -1 if none.
func (b *Balancer) sessionEndpoint(value string) int {
	s := b.session
	if s.mode == Persistent {
		if i, ok := s.byToken[value]; ok {
			return i
		}
		return -1
	}
	if b.ring == nil {
		return -1
	}
	// Any key is placed, as resty.chash finds one for any string: a key
	// another backend (or ingress-nginx) made keeps its endpoint here too.
	return int(uint32(b.ring.points[b.ring.search(hashString(value))]))
}

// indexOf finds e among the balancer's endpoints by its counter.
func (b *Balancer) indexOf(e Endpoint) int {
	for i := range b.endpoints {
		if b.endpoints[i].inflight == e.inflight {
			return i
		}
	}
	return 0
}
