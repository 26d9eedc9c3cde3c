package balance

import (
	"cmp"
	"math/bits"
	"slices"
	"strings"
)

// maxRotation caps the length of a rotation built for a Balancer or a
// split. Long enough to express shares to a fraction of a percent, short
// enough to build in well under a millisecond for typical backends.
const maxRotation = 4096

// weightBits bounds the precision weights are compared with, so that sums
// and products during scaling fit in 64 bits.
const weightBits = 40

// reduceWeights returns the number of times each index appears in one full
// rotation built from weights with length cap limit (limit < 1 means
// maxRotation):
//
//   - a weight of zero or less means "never": its share is 0;
//   - positive weights are divided by their greatest common divisor;
//   - when the reduced shares add up to more than limit, they are scaled down
//     proportionally (rounded to nearest) to add up to at most limit, but a
//     positive weight never becomes 0. If there are more positive weights
//     than limit, each gets a share of 1 and the rotation is as long as their
//     number.
//
// The result is aligned with weights and reduced by its own GCD.
func reduceWeights(weights []int, limit int) []int {
	if limit < 1 {
		limit = maxRotation
	}
	shares := make([]int, len(weights))
	var top int
	live := 0
	for i, w := range weights {
		if w > 0 {
			shares[i] = w
			top = max(top, w)
			live++
		}
	}
	if live == 0 {
		return shares
	}
	// Keep weightBits of precision so that totals cannot overflow.
	if shift := bits.Len(uint(top)) - weightBits; shift > 0 {
		for i, w := range shares {
			if w > 0 {
				shares[i] = max(1, w>>shift)
			}
		}
	}
	divideByGCD(shares)

	var total uint64
	for _, w := range shares {
		total += uint64(w)
	}
	if total <= uint64(limit) {
		return shares
	}
	if live >= limit {
		for i, w := range shares {
			if w > 0 {
				shares[i] = 1
			}
		}
		return shares
	}
	// The scaled sum is non-decreasing in the target length, so search for
	// the largest target whose rounded shares still fit under limit. Many
	// endpoints share few distinct weights, so each probe sums over the
	// distinct weights with their counts.
	distinct := weightCounts(shares)
	lo, hi := 1, limit // scaledSum(1) == live <= limit
	for lo < hi {
		mid := lo + (hi-lo+1)/2
		if scaledSum(distinct, uint64(mid), total) <= uint64(limit) {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	// Equal weights scale alike: scale each distinct weight once, then
	// find each weight's among the distinct ones (ascending).
	scaled := make([]int, len(distinct))
	for k, d := range distinct {
		scaled[k] = int(scaleShare(d.w, uint64(lo), total))
	}
	if top := distinct[len(distinct)-1].w; top <= uint64(4*len(shares)+1024) {
		// Small weights, the usual case: a slice maps each to its scaled
		// share without a search per index.
		byWeight := make([]int, top+1)
		for k, d := range distinct {
			byWeight[d.w] = scaled[k]
		}
		for i, w := range shares {
			if w > 0 {
				shares[i] = byWeight[w]
			}
		}
	} else {
		for i, w := range shares {
			if w > 0 {
				k, _ := slices.BinarySearchFunc(distinct, uint64(w), func(d weightCount, w uint64) int { return cmp.Compare(d.w, w) })
				shares[i] = scaled[k]
			}
		}
	}
	divideByGCD(shares)
	return shares
}

// scaleShare returns max(1, round(w*target/total)) for target <= total.
func scaleShare(w, target, total uint64) uint64 {
	hi, lo := bits.Mul64(w, 2*target)
	lo, carry := bits.Add64(lo, total, 0)
	hi += carry
	q, _ := bits.Div64(hi, lo, 2*total)
	return max(q, 1)
}

// weightCount is a positive weight and how many indices have it.
type weightCount struct{ w, n uint64 }

// weightCounts lists the distinct positive shares with their counts, in
// ascending order.
func weightCounts(shares []int) []weightCount {
	top := 0
	for _, w := range shares {
		top = max(top, w)
	}
	if top <= 4*len(shares)+1024 {
		// Small weights, the usual case: count them in a slice.
		counts := make([]uint64, top+1)
		for _, w := range shares {
			if w > 0 {
				counts[w]++
			}
		}
		var out []weightCount
		for w, n := range counts {
			if n > 0 {
				out = append(out, weightCount{uint64(w), n})
			}
		}
		return out
	}
	sorted := make([]int, 0, len(shares))
	for _, w := range shares {
		if w > 0 {
			sorted = append(sorted, w)
		}
	}
	slices.Sort(sorted)
	var out []weightCount
	for _, w := range sorted {
		if n := len(out); n > 0 && out[n-1].w == uint64(w) {
			out[n-1].n++
			continue
		}
		out = append(out, weightCount{uint64(w), 1})
	}
	return out
}

func scaledSum(distinct []weightCount, target, total uint64) uint64 {
	var sum uint64
	for _, d := range distinct {
		sum += d.n * scaleShare(d.w, target, total)
	}
	return sum
}

func divideByGCD(shares []int) {
	g := 0
	for _, w := range shares {
		if w > 0 {
			g = gcd(g, w)
		}
	}
	if g > 1 {
		for i := range shares {
			shares[i] /= g
		}
	}
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// buildRotation returns one full rotation over the indices of weights: a
// sequence in which index i appears exactly reduceWeights(weights, limit)[i]
// times, interleaved by smooth weighted round-robin (each step every index
// gains its share, the index with the most accumulated credit is chosen,
// lowest index on ties, and pays back the total). Walking the rotation
// cyclically, an index with share s never appears more than ceil(s/m) times
// in a row, where m is the smallest positive share, so heavy indices are
// spread out instead of served in bursts. Indices with no share never
// appear; when no weight is positive the rotation is empty.
//
// The indices mean whatever the caller's weights are aligned with:
// endpoints of one backend, or the backends of a weighted split.
func buildRotation(weights []int, limit int) []uint32 {
	return rotationOf(reduceWeights(weights, limit))
}

func rotationOf(shares []int) []uint32 {
	// Smooth weighted round-robin gives every index credit += share per
	// step, picks the most credit (lowest index on ties) and charges it the
	// total. Indices with equal shares gain credit alike, so among them the
	// one picked least often, lowest index first, is always ahead: they take
	// turns in index order. Tracking one turn pointer per distinct share
	// makes each step cost the number of distinct shares, not of indices.
	groups, members, total := shareGroups(shares)
	if total == 0 {
		return nil
	}
	// The scan reads three small arrays: each group's share, its debt
	// (total times the turns its holder has had) and its turn holder.
	n := len(groups)
	share, debt, head := make([]int64, n), make([]int64, n), make([]uint32, n)
	for k := range groups {
		share[k], head[k] = groups[k].share, groups[k].head
	}
	out := make([]uint32, total)
	for step := range out {
		t := int64(step) + 1
		best := 0
		bestCredit := t*share[0] - debt[0]
		for k := 1; k < n; k++ {
			credit := t*share[k] - debt[k]
			if credit > bestCredit || credit == bestCredit && head[k] < head[best] {
				best, bestCredit = k, credit
			}
		}
		g := &groups[best]
		out[step] = head[best]
		if g.next++; g.next == g.end {
			g.next = g.start
			debt[best] += total
		}
		head[best] = members[g.next]
	}
	return out
}

// shareGroup is the indices with one share: members[start:end] in
// ascending order, next the one whose turn it is (head caches it).
type shareGroup struct {
	share            int64
	start, end, next int
	head             uint32
}

// shareGroups groups the indices of positive shares by share, in order of
// each share's first index, with their members in one array.
func shareGroups(shares []int) (groups []shareGroup, members []uint32, total int64) {
	// Shares are small after reduceWeights: a slice finds a share's group
	// without hashing; a map serves any others.
	top := 0
	for _, s := range shares {
		top = max(top, s)
	}
	var slot []int32
	var bySlot map[int]int32
	if top <= 4*len(shares)+1024 {
		slot = make([]int32, top+1)
	} else {
		bySlot = make(map[int]int32)
	}
	find := func(s int) *int32 {
		if slot != nil {
			return &slot[s]
		}
		v := bySlot[s]
		return &v
	}
	var counts []int
	for _, s := range shares {
		if s <= 0 {
			continue
		}
		p := find(s)
		if *p == 0 {
			counts = append(counts, 0)
			*p = int32(len(counts)) // group number + 1
			if bySlot != nil {
				bySlot[s] = *p
			}
		}
		counts[*p-1]++
		total += int64(s)
	}
	groups = make([]shareGroup, len(counts))
	members = make([]uint32, 0, len(shares))
	start := 0
	for k, n := range counts {
		groups[k].start, groups[k].next, groups[k].end = start, start, start
		start += n
	}
	members = members[:start]
	for i, s := range shares {
		if s <= 0 {
			continue
		}
		g := &groups[*find(s)-1]
		g.share = int64(s)
		members[g.end] = uint32(i)
		g.end++
	}
	for k := range groups {
		groups[k].head = members[groups[k].start]
	}
	return groups, members, total
}

// uniform reports whether weights spread traffic evenly over every index,
// in which case a plain cursor does the job of a rotation.
func uniform(weights []int) bool {
	for _, w := range weights {
		if w <= 0 || w != weights[0] {
			return false
		}
	}
	return true
}

// weightedEndpoint is an address with a relative weight; 0 means no traffic.
type weightedEndpoint struct {
	Addr   string
	Weight int
}

// weightedConfig returns a Config for backend id whose Endpoints are the
// addresses of ws sorted and deduplicated, with weights aligned to them; an
// address listed twice gets the sum of its weights (an address shared by
// two weighted backends of a split receives both shares). Policy and
// HashKey are left for the caller to set.
func weightedConfig(id string, ws []weightedEndpoint) Config {
	sorted := slices.Clone(ws)
	slices.SortStableFunc(sorted, func(a, b weightedEndpoint) int { return strings.Compare(a.Addr, b.Addr) })
	cfg := Config{ID: id}
	for _, w := range sorted {
		weight := max(w.Weight, 0)
		if n := len(cfg.Endpoints); n > 0 && cfg.Endpoints[n-1] == w.Addr {
			cfg.weights[n-1] += weight
			continue
		}
		cfg.Endpoints = append(cfg.Endpoints, w.Addr)
		cfg.weights = append(cfg.weights, weight)
	}
	return cfg
}
