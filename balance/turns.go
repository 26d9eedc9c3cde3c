package balance

import "math/bits"

// exactTurns deals the turns of weights whose reduced sum is past
// maxRotation, where a rotation would have to scale them down (a weight
// of 1 beside 9,999 then took more than twice its share): over every
// period of turns (the sum of the weights reduced by their GCD) each
// index is dealt exactly its reduced weight, with no table of turns.
//
// The live indices are halved again and again: of a range's n turns the
// upper half takes those where the running count of its share, floor(t·R/n)
// for its weight R, steps up, evenly spread (Bresenham's line, as a
// chained Split deals its turns), and that count numbers the turns the
// upper half deals on; the lower half deals the rest. A turn costs one
// 128-bit product and division per halving: log2 of the live indices.
type exactTurns struct {
	period uint64
	// index are the live indices in order; prefix[k] the sum of the
	// reduced weights of index[:k].
	index  []uint32
	prefix []uint64
}

// newExactTurns returns the turns of weights, or nil when their reduced
// sum is at most limit (a rotation serves them exactly) or does not fit
// in 63 bits.
func newExactTurns(weights []int, limit int) *exactTurns {
	g := 0
	for _, w := range weights {
		if w > 0 {
			g = gcd(g, w)
		}
	}
	if g == 0 {
		return nil
	}
	e := &exactTurns{prefix: []uint64{0}}
	for i, w := range weights {
		if w <= 0 {
			continue
		}
		var carry uint64
		if e.period, carry = bits.Add64(e.period, uint64(w/g), 0); carry != 0 || e.period > 1<<63 {
			return nil
		}
		e.index = append(e.index, uint32(i))
		e.prefix = append(e.prefix, e.period)
	}
	if e.period <= uint64(limit) {
		return nil
	}
	return e
}

// at is the index of turn t. It never allocates.
func (e *exactTurns) at(t uint64) int {
	t %= e.period
	lo, hi := 0, len(e.index)
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		n := e.prefix[hi] - e.prefix[lo]
		upper := e.prefix[hi] - e.prefix[mid]
		// t < n and upper <= n < 2^63: the quotient fits in 64 bits.
		ph, pl := bits.Mul64(t, upper)
		q, r := bits.Div64(ph, pl, n)
		if r+upper >= n {
			t, lo = q, mid // the count steps up at t: the upper half's turn q
		} else {
			t, hi = t-q, mid // the lower half's turn: t less the upper half's before it
		}
	}
	return int(e.index[lo])
}
