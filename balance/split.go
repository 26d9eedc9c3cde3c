package balance

import (
	"math/bits"
	"slices"
)

// maxSplitRotation caps a split's rotation. Splits have few alternatives
// and are built once per table, so the cap can be far above maxRotation:
// any total up to 65,536 (after dividing by the GCD of the weights) is
// served by a rotation. A split with a larger total needs none: its turns
// are computed (chained), exact for any total.
const maxSplitRotation = 1 << 16

// Split chooses among the alternatives of a weighted split (the primary and
// canary backends of a route, SPEC §10) in a deterministic, interleaved
// rotation built by buildRotation: over one full rotation each alternative
// is chosen exactly its share of times, spread out rather than in bursts,
// and every replica walks the same sequence. There is no random draw.
//
// Its position is a cursor kept in the registry by the split's identity,
// like a backend's, so a rebuilt table continues the rotation where the
// previous one left it: shares stay exact across table swaps.
type Split struct {
	id       string
	n        int
	live     int
	rotation []uint32 // nil when uniform or chained
	// period and chain, when period is set: a split too long for a
	// rotation, whose live alternatives get their reduced weights of
	// every period turns (chained).
	period uint64
	chain  []link
	cursor *cursor
}

// link is a live alternative of a chained split: its index and reduced
// weight, and rest, the sum of the weights of those after it.
type link struct {
	index        int
	weight, rest uint64
}

// Split returns the split for identity id over len(weights) alternatives.
// Identities are separate from backend identities. Weights of 0 or less
// are never chosen; uniform weights need no rotation. The rotation is built
// only when the weights differ from the last ones seen for id.
func (r *Registry) Split(id string, weights []int) *Split {
	s := &Split{id: id, n: len(weights)}
	for _, w := range weights {
		if w > 0 {
			s.live++
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	st := r.state(r.splits, id, nil)
	s.cursor = st.cursor
	if s.live >= 2 {
		if s.chain, s.period = chainOf(weights); s.period > maxSplitRotation {
			return s
		}
		s.chain, s.period = nil, 0
	}
	if s.live > 0 && !uniform(weights) {
		if !slices.Equal(st.rotationOf, weights) {
			st.rotationOf, st.rotation = slices.Clone(weights), buildRotation(weights, maxSplitRotation)
		}
		s.rotation = st.rotation
	}
	return s
}

// chainOf is the live alternatives of weights, reduced by their GCD, as
// a chain, and the sum of their reduced weights; a period of 0 when that
// sum does not fit in 63 bits (a rotation approximates it instead).
func chainOf(weights []int) ([]link, uint64) {
	g := 0
	for _, w := range weights {
		if w > 0 {
			g = gcd(g, w)
		}
	}
	var chain []link
	var total uint64
	for i, w := range weights {
		if w <= 0 {
			continue
		}
		var carry uint64
		if total, carry = bits.Add64(total, uint64(w/g), 0); carry != 0 || total > 1<<63 {
			return nil, 0
		}
		chain = append(chain, link{index: i, weight: uint64(w / g)})
	}
	rest := total
	for k := range chain {
		rest -= chain[k].weight
		chain[k].rest = rest
	}
	return chain, total
}

// Next returns the index of the alternative for the next request; ok is
// false when no weight is positive. It never allocates.
func (s *Split) Next() (i int, ok bool) {
	if s.live == 0 {
		return 0, false
	}
	if s.period != 0 {
		return s.chained(s.cursor.n.Add(1) - 1), true
	}
	return s.cursor.turn(s.rotation, s.n), true
}

// chained is the alternative of turn t of a split without a rotation. Each
// link of the chain shares its turns between its alternative and the rest
// of the chain, by their weights: the rest takes turn t of n where the
// running count of its share, floor(t*rest/n), steps up, so that every n
// turns hold exactly rest of them, spread evenly (Bresenham's line), and
// that count numbers the turns the next link shares. Over period turns
// each alternative is chosen exactly its weight of times; with two
// alternatives the second is chosen where its own count steps up. The
// products are taken in 128 bits.
func (s *Split) chained(t uint64) int {
	t %= s.period
	n := s.period
	last := len(s.chain) - 1
	for _, l := range s.chain[:last] {
		hi, lo := bits.Mul64(t, l.rest)
		if bits.Rem64(hi, lo, n)+l.rest < n {
			return l.index
		}
		t, _ = bits.Div64(hi, lo, n)
		n = l.rest
	}
	return s.chain[last].index
}

// Period is the length of one full rotation: the number of requests over
// which every alternative gets exactly its share (0 when none is live).
func (s *Split) Period() int {
	switch {
	case s.live == 0:
		return 0
	case s.period != 0:
		return int(s.period)
	case s.rotation != nil:
		return len(s.rotation)
	}
	return s.n
}
