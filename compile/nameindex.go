package compile

import "hash/maphash"

// nameIndex maps a namespace and name to a V: an open-addressing table of
// the names' 64-bit hashes, each beside its value. A slot holds an 8-byte
// hash where a map keyed by the strings holds 32 bytes of keys, which at
// 100,000 objects is megabytes a compile allocates, zeroes and the garbage
// collector scans, and a probe hashes the strings once. keyOf gives the
// name a stored value is under: names whose hashes are equal are told
// apart by it, and probing goes on past them.
type nameIndex[V any] struct {
	seed  maphash.Seed
	slots []nameSlot[V]
	n     int
	keyOf func(V) (ns, name string)
}

type nameSlot[V any] struct {
	hash uint64 // 0 for an empty slot
	v    V
}

func newNameIndex[V any](n int, keyOf func(V) (ns, name string)) nameIndex[V] {
	size := 16
	for !(n*5 <= size*4) {
		size *= 2
	}
	return nameIndex[V]{seed: maphash.MakeSeed(), slots: make([]nameSlot[V], size), keyOf: keyOf}
}

// nameHash hashes a namespace and name; a variable so that a test can
// make names collide.
var nameHash = func(seed maphash.Seed, ns, name string) uint64 {
	return maphash.Comparable(seed, objKey{ns, name})
}

// find returns the slot holding ns/name, or else the empty slot where it
// belongs, and the name's hash.
func (x *nameIndex[V]) find(ns, name string) (slot int, h uint64, found bool) {
	h = max(nameHash(x.seed, ns, name), 1)
	mask := len(x.slots) - 1
	for i := int(h) & mask; ; i = (i + 1) & mask {
		switch s := &x.slots[i]; s.hash {
		case 0:
			return i, h, false
		case h:
			if kns, kname := x.keyOf(s.v); kns == ns && kname == name {
				return i, h, true
			}
		}
	}
}

// get returns the value stored under ns/name.
func (x *nameIndex[V]) get(ns, name string) (V, bool) {
	i, _, found := x.find(ns, name)
	return x.slots[i].v, found // the zero value when not found
}

// add stores v under ns/name unless a value is stored there already, which
// it returns instead.
func (x *nameIndex[V]) add(ns, name string, v V) (V, bool) {
	i, h, found := x.find(ns, name)
	if found {
		return x.slots[i].v, true
	}
	x.slots[i] = nameSlot[V]{h, v}
	x.n++
	if x.n*5 > len(x.slots)*4 {
		x.grow()
	}
	return v, false
}

// grow doubles the table; hashes are kept, so no name is hashed again.
func (x *nameIndex[V]) grow() {
	old := x.slots
	x.slots = make([]nameSlot[V], 2*len(old))
	mask := len(x.slots) - 1
	for _, s := range old {
		if s.hash == 0 {
			continue
		}
		i := int(s.hash) & mask
		for x.slots[i].hash != 0 {
			i = (i + 1) & mask
		}
		x.slots[i] = s
	}
}
