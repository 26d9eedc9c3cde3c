package balance

import (
	"math/bits"
	"slices"
)

// maxSplitRotation caps a split's rotation. Splits have few alternatives
// and are built once per table, so the cap can be far above maxRotation:
// any total up to 65,536 (after dividing by the GCD of the weights) is
// served exactly. A two-way split (a canary) with a larger total needs no
// rotation: its turns are computed (twoWay), exact for any total.
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
	rotation []uint32 // nil when uniform or two-way
	// period and second, when period is set: a two-way split too long for
	// a rotation, whose index 1 has second of every period turns.
	period, second uint64
	cursor         *cursor
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
	if len(weights) == 2 && s.live == 2 {
		g := gcd(weights[0], weights[1])
		if period := uint64(weights[0]/g) + uint64(weights[1]/g); period > maxSplitRotation {
			s.period, s.second = period, uint64(weights[1]/g)
			return s
		}
	}
	if s.live > 0 && !uniform(weights) {
		if !slices.Equal(st.rotationOf, weights) {
			st.rotationOf, st.rotation = slices.Clone(weights), buildRotation(weights, maxSplitRotation)
		}
		s.rotation = st.rotation
	}
	return s
}

// Next returns the index of the alternative for the next request; ok is
// false when no weight is positive. It never allocates.
func (s *Split) Next() (i int, ok bool) {
	if s.live == 0 {
		return 0, false
	}
	if s.period != 0 {
		return s.twoWay(s.cursor.n.Add(1) - 1), true
	}
	return s.cursor.turn(s.rotation, s.n), true
}

// twoWay is the index of turn t of a two-way split without a rotation:
// index 1 where the running count of its share, floor(t*second/period),
// steps up, so that every period turns hold exactly second of them,
// spread evenly (Bresenham's line). The product is taken in 128 bits.
func (s *Split) twoWay(t uint64) int {
	hi, lo := bits.Mul64(t%s.period, s.second)
	if bits.Rem64(hi, lo, s.period)+s.second >= s.period {
		return 1
	}
	return 0
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
