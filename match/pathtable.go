package match

import (
	"hash/maphash"
	"math/bits"
)

// pathTable is one open-addressing hash table over the Exact and Prefix keys
// of every virtual host, keyed by (host number, key). A probe lands on a
// slot holding the full hash, so a miss compares no key bytes, and a hit
// reads the key once: at 100,000 routes a lookup's cost is its cache misses,
// and this keeps them to one or two per candidate.
type pathTable struct {
	seed  maphash.Seed
	slots []pathSlot // a power of two, at most half full
	mask  uint64
}

// pathSlot is empty when it holds neither route.
type pathSlot struct {
	hash   uint64
	key    string
	host   uint32
	exact  *Route
	prefix *Route
}

func newPathTable(keys int) pathTable {
	n := uint64(1) << bits.Len(uint(max(2*keys, 8)-1))
	return pathTable{seed: maphash.MakeSeed(), slots: make([]pathSlot, n), mask: n - 1}
}

func (pt *pathTable) hash(host uint32, key string) uint64 {
	// maphash output is uniform in every bit; adding a per-host odd multiple
	// keeps the same key of different hosts apart.
	return maphash.String(pt.seed, key) + uint64(host)*0x9e3779b97f4a7c15
}

// find returns the slot of (host, key), or nil.
func (pt *pathTable) find(host uint32, key string) *pathSlot {
	h := pt.hash(host, key)
	for i := h & pt.mask; ; i = (i + 1) & pt.mask {
		s := &pt.slots[i]
		if s.exact == nil && s.prefix == nil {
			return nil
		}
		if s.hash == h && s.host == host && s.key == key {
			return s
		}
	}
}

// slot returns the slot of (host, key), claiming an empty one if needed;
// the caller sets a route in it straight away. Capacity was reserved by
// newPathTable.
func (pt *pathTable) slot(host uint32, key string) *pathSlot {
	h := pt.hash(host, key)
	for i := h & pt.mask; ; i = (i + 1) & pt.mask {
		s := &pt.slots[i]
		if s.exact == nil && s.prefix == nil {
			s.hash, s.key, s.host = h, key, host
			return s
		}
		if s.hash == h && s.host == host && s.key == key {
			return s
		}
	}
}
