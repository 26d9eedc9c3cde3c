package match

import (
	"hash/maphash"
	"math"
	"math/bits"
	"slices"
	"unsafe"
)

// pathTable is one open-addressing hash table over the Exact and Prefix keys
// of every virtual host, keyed by (host number, key). A probe lands on a
// slot holding the full hash, so a miss compares no key bytes, and a hit
// reads the key once: at 100,000 routes a lookup's cost is its cache misses,
// and this keeps them to one or two per candidate.
//
// The slots are cut in pages, so that a table Update builds shares the
// pages it does not write with the table it came from.
type pathTable struct {
	seed  maphash.Seed
	pages [][]pathSlot // pathPage slots each, or fewer in a one-page table
	mask  uint64       // slots - 1, slots a power of two, at most half full
	used  int          // slots in use
	// owned, while Update writes the table, marks the pages it copied.
	owned []bool
}

// pathPageBits is log2 of a page's slots: 48 KiB of slots.
const pathPageBits = 10

// pathSlot is empty when its hash is 0: a slot in use has the hash's top
// bit set (usedBit), so a probe that misses reads only the first four
// bytes of each slot, and those never straddle a cache line. The key is
// held as its bytes and a 32-bit length, and the hash in 32 bits, so a
// slot is 40 bytes, not 48: a large table's slots are a fifth fewer bytes
// for New to fault in and for the GC to scan, and a probe's run of slots
// spans fewer cache lines. A slot's home is hash & mask, and a table has
// fewer than 1<<31 slots, so the hash's low 31 bits place it.
type pathSlot struct {
	hash   uint32
	host   uint32
	exact  *Route
	prefix *Route
	key    *byte
	keyLen uint32
	// chains, in a host with conditions, is 1 + the offset of the key's
	// chain in the host's (hostChains); 0 when exact and prefix answer.
	chains uint32
}

// is reports whether the slot holds (host, key), whose hash is h.
func (s *pathSlot) is(h, host uint32, key string) bool {
	if s.hash != h || s.host != host || int(s.keyLen) != len(key) {
		return false
	}
	// The string made by hand, as unsafe.String's checks cost a lookup
	// instructions on every hit.
	k := stringHeader{s.key, len(key)}
	return *(*string)(unsafe.Pointer(&k)) == key
}

// stringHeader is a string's representation.
type stringHeader struct {
	data *byte
	len  int
}

// keyString is the slot's key.
func (s *pathSlot) keyString() string { return unsafe.String(s.key, s.keyLen) }

// usedBit marks a slot's hash as in use; no mask reaches it.
const usedBit = 1 << 31

func newPathTable(keys int) pathTable {
	// Room beyond half full for a few keys more, for Update.
	n := uint64(1) << bits.Len(uint(2*keys+63))
	slots := make([]pathSlot, n)
	page := min(n, 1<<pathPageBits)
	pages := make([][]pathSlot, 0, n/page)
	for i := uint64(0); i < n; i += page {
		pages = append(pages, slots[i:i+page:i+page])
	}
	return pathTable{seed: maphash.MakeSeed(), pages: pages, mask: n - 1}
}

func (pt *pathTable) at(i uint64) *pathSlot {
	return &pt.pages[i>>pathPageBits][i&(1<<pathPageBits-1)]
}

// mut is the slot at i for writing: in a page of this table's own.
func (pt *pathTable) mut(i uint64) *pathSlot {
	if p := i >> pathPageBits; pt.owned != nil && !pt.owned[p] {
		pt.pages[p] = slices.Clone(pt.pages[p])
		pt.owned[p] = true
	}
	return pt.at(i)
}

func (pt *pathTable) hash(host uint32, key string) uint32 {
	// maphash output is uniform in every bit; adding a per-host odd multiple
	// keeps the same key of different hosts apart.
	return uint32(maphash.String(pt.seed, key)+uint64(host)*0x9e3779b97f4a7c15) | usedBit
}

// find returns the slot of (host, key), or nil. The page is looked up
// once, and again only when a probe runs past its end.
func (pt *pathTable) find(host uint32, key string) *pathSlot {
	h := pt.hash(host, key)
	i := uint64(h) & pt.mask
	page := pt.pages[i>>pathPageBits]
	for {
		s := &page[i&(1<<pathPageBits-1)]
		if s.is(h, host, key) {
			return s
		}
		if s.hash == 0 {
			return nil
		}
		if i = (i + 1) & pt.mask; i&(1<<pathPageBits-1) == 0 {
			page = pt.pages[i>>pathPageBits]
		}
	}
}

// slot returns the slot of (host, key), claiming an empty one if needed;
// the caller sets a route in it straight away. Capacity was reserved by
// newPathTable.
func (pt *pathTable) slot(host uint32, key string) *pathSlot {
	if uint64(len(key)) > math.MaxUint32 {
		// No path a request can carry is this long; a slot's length is 32 bits.
		panic("match: path key longer than 4 GiB")
	}
	h := pt.hash(host, key)
	for i := uint64(h) & pt.mask; ; i = (i + 1) & pt.mask {
		s := pt.at(i)
		if s.hash == 0 {
			s = pt.mut(i)
			s.hash, s.host = h, host
			s.key, s.keyLen = unsafe.StringData(key), uint32(len(key))
			pt.used++
			return s
		}
		if s.is(h, host, key) {
			return pt.mut(i)
		}
	}
}

// clone is the table for Update to change: it shares the pages until it
// writes them.
func (pt *pathTable) clone() pathTable {
	c := *pt
	c.pages = slices.Clone(pt.pages)
	c.owned = make([]bool, len(pt.pages))
	return c
}

// done ends Update's writing.
func (pt *pathTable) done() { pt.owned = nil }

// full reports whether adding keys more keys would fill the table past
// half.
func (pt *pathTable) full(keys int) bool {
	return 2*(pt.used+keys) > int(pt.mask+1)
}

// removeHost removes the keys of the host numbered id, vh, indexed with
// indexHost: each Exact and Prefix key but the root prefix.
func (pt *pathTable) removeHost(id uint32, vh *VirtualHost) {
	for _, r := range vh.Routes {
		if r.Type == Exact || r.Type == Prefix && r.Path != "" {
			pt.remove(id, r.Path)
		}
	}
}

// remove empties the slot of (host, key), if any, and shifts the slots
// probed after it back, so that every probe still finds its key before an
// empty slot (linear probing's deletion without tombstones).
func (pt *pathTable) remove(host uint32, key string) {
	h := pt.hash(host, key)
	i := uint64(h) & pt.mask
	for {
		s := pt.at(i)
		if s.hash == 0 {
			return
		}
		if s.is(h, host, key) {
			break
		}
		i = (i + 1) & pt.mask
	}
	for j := (i + 1) & pt.mask; ; j = (j + 1) & pt.mask {
		s := pt.at(j)
		if s.hash == 0 {
			break
		}
		// s stays when its home slot lies cyclically in (i, j].
		home := uint64(s.hash) & pt.mask
		if i <= j && i < home && home <= j || i > j && (i < home || home <= j) {
			continue
		}
		*pt.mut(i) = *s
		i = j
	}
	*pt.mut(i) = pathSlot{}
	pt.used--
}
