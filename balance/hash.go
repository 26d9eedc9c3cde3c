package balance

import (
	"math/bits"
	"slices"
	"strings"
)

// Consistent hashing uses a ring with virtual nodes. Each endpoint owns
// pointsPerEndpoint positions derived from its address alone, so the ring for
// a set of addresses does not depend on their order, and adding or removing
// one address moves exactly the keys that its own points cover (about 1/n)
// while every other key keeps its endpoint. A key goes to the owner of the
// first point at or after the key's hash, wrapping around. Rendezvous
// hashing would need no ring, but costs one hash per endpoint on every pick;
// the ring costs one binary search, which stays within the pick budget for
// backends with thousands of endpoints.
//
// The hash is a fixed, unseeded function, so every replica sends a key to
// the same endpoint.
const pointsPerEndpoint = 160

type ring struct {
	// points holds position<<32 | endpoint index, sorted by position, equal
	// positions by address.
	points []uint64
	// index[b] is the first point whose position's top indexBits bits are
	// at least b, with index[len-1] == len(points): a lookup scans only one
	// bucket of one to two points instead of searching the whole ring.
	index     []uint32
	indexBits uint
}

// newRing builds the ring for addrs. shares (aligned with addrs, nil for
// uniform) scales each endpoint's number of points relative to the largest
// share; an endpoint with no share gets no points. It returns nil when no
// endpoint has points.
func newRing(addrs []string, shares []int) *ring {
	top := 0
	for _, s := range shares {
		top = max(top, s)
	}
	// Points carry the endpoint's rank in address order while sorting, so
	// that equal positions order the same whatever the order of addrs.
	byAddr := make([]uint32, len(addrs))
	for i := range byAddr {
		byAddr[i] = uint32(i)
	}
	slices.SortStableFunc(byAddr, func(a, b uint32) int { return strings.Compare(addrs[a], addrs[b]) })
	points := make([]uint64, 0, len(addrs)*pointsPerEndpoint)
	for rank, i := range byAddr {
		n := pointsPerEndpoint
		if shares != nil {
			if shares[i] <= 0 {
				continue
			}
			n = max(1, (pointsPerEndpoint*shares[i]+top-1)/top)
		}
		h := hashString(addrs[i])
		for j := range n {
			pos := mix64(h + uint64(j+1)*golden64)
			points = append(points, pos&^0xFFFFFFFF|uint64(rank))
		}
	}
	if len(points) == 0 {
		return nil
	}
	points = sortPoints(points)
	for k, p := range points {
		points[k] = p&^0xFFFFFFFF | uint64(byAddr[uint32(p)])
	}

	r := &ring{points: points, indexBits: uint(min(bits.Len(uint(len(points)))-1, 24))}
	r.index = make([]uint32, 1<<r.indexBits+1)
	k := 0
	for b := range r.index {
		for k < len(points) && points[k]>>(64-r.indexBits) < uint64(b) {
			k++
		}
		r.index[b] = uint32(k)
	}
	return r
}

// sortPoints sorts position<<32 | rank values that were appended in
// ascending rank. Positions are uniformly spread, so a radix sort on the
// 32 position bits does the job in four linear passes; being stable, it
// keeps equal positions in rank order, exactly as a full comparison sort.
func sortPoints(p []uint64) []uint64 {
	if len(p) < 256 {
		slices.Sort(p)
		return p
	}
	buf := make([]uint64, len(p))
	for shift := 32; shift < 64; shift += 8 {
		var start [256]int
		for _, v := range p {
			start[byte(v>>shift)]++
		}
		sum := 0
		for d, n := range start {
			start[d], sum = sum, sum+n
		}
		for _, v := range p {
			d := byte(v >> shift)
			buf[start[d]] = v
			start[d]++
		}
		p, buf = buf, p
	}
	return p
}

// search returns the index in points of the first point at or after the
// position of key hash h, wrapping to 0.
func (r *ring) search(h uint64) int {
	target := h &^ 0xFFFFFFFF
	bucket := h >> (64 - r.indexBits)
	lo, hi := int(r.index[bucket]), int(r.index[bucket+1])
	for lo < hi && r.points[lo] < target {
		lo++
	}
	if lo == len(r.points) {
		return 0
	}
	return lo
}

const (
	golden64 = 0x9E3779B97F4A7C15
	mulA     = 0xBF58476D1CE4E5B9
	mulB     = 0x94D049BB133111EB
)

// mix64 is a bijective finalizer: every input bit affects every output bit.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= mulA
	x ^= x >> 27
	x *= mulB
	x ^= x >> 31
	return x
}

// hashString hashes s eight bytes at a time without allocating. It must
// never change: replicas and successive versions agree on where keys go.
func hashString(s string) uint64 {
	h := uint64(len(s)) * golden64
	for len(s) >= 8 {
		v := uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
			uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
		h = fold(h ^ v)
		s = s[8:]
	}
	if len(s) > 0 {
		var v uint64
		for i := range len(s) {
			v |= uint64(s[i]) << (8 * i)
		}
		h = fold(h ^ v)
	}
	return mix64(h)
}

// fold mixes one word into the state: the high and low halves of a 128-bit
// product, so high input bits reach the low output bits too.
func fold(x uint64) uint64 {
	hi, lo := bits.Mul64(x^mulA, mulB)
	return hi ^ lo
}
