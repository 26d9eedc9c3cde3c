package compile

import "hash/maphash"

// nameIndex maps a namespace and name to a V through a 64-bit hash of the
// two. Its map holds 8-byte keys where one keyed by the strings holds 32,
// which at 100,000 objects is megabytes a compile allocates, zeroes and the
// garbage collector scans. keyOf gives the name a stored value is under; a
// name whose hash another name already holds (a 64-bit collision) is kept
// in a second map, by name.
type nameIndex[V any] struct {
	seed   maphash.Seed
	byHash map[uint64]V
	byName map[objKey]V
	keyOf  func(V) (ns, name string)
}

func newNameIndex[V any](n int, keyOf func(V) (ns, name string)) nameIndex[V] {
	return nameIndex[V]{seed: maphash.MakeSeed(), byHash: make(map[uint64]V, n), keyOf: keyOf}
}

// nameHash hashes a namespace and name; a variable so that a test can make
// every name collide.
var nameHash = func(seed maphash.Seed, ns, name string) uint64 {
	return maphash.Comparable(seed, objKey{ns, name})
}

// get returns the value stored under ns/name.
func (x *nameIndex[V]) get(ns, name string) (V, bool) {
	v, ok := x.byHash[nameHash(x.seed, ns, name)]
	if !ok {
		return v, false
	}
	if kns, kname := x.keyOf(v); kns == ns && kname == name {
		return v, true
	}
	v, ok = x.byName[objKey{ns, name}]
	return v, ok
}

// add stores v under ns/name unless a value is stored there already, which
// it returns instead.
func (x *nameIndex[V]) add(ns, name string, v V) (V, bool) {
	h := nameHash(x.seed, ns, name)
	old, ok := x.byHash[h]
	if !ok {
		x.byHash[h] = v
		return v, false
	}
	if kns, kname := x.keyOf(old); kns == ns && kname == name {
		return old, true
	}
	if old, ok := x.byName[objKey{ns, name}]; ok {
		return old, true
	}
	if x.byName == nil {
		x.byName = make(map[objKey]V)
	}
	x.byName[objKey{ns, name}] = v
	return v, false
}
