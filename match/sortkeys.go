package match

import (
	"math"
	"slices"
	"strings"
	"unsafe"
)

// sortByKey sorts s as slices.SortStableFunc does by key, then tie, then
// position, in O(n log n) comparisons that read the keys from one array:
// a stable sort's merging, and reading each key through its pointer, cost
// a large table's New more than the rest of its sorting.
//
// The scratch holds each key as its bytes and a 32-bit length beside a
// 32-bit position: 24 bytes an element, not 32. An input already in order
// (keys ascending, ties in order) is left as it is, without scratch.
func sortByKey[T any](s []T, key func(T) string, tie func(a, b T) int) {
	if len(s) < 2 {
		return
	}
	if sortedByKey(s, key, tie) {
		return
	}
	if uint64(len(s)) > math.MaxUint32 {
		// Beyond 32-bit positions (no table is this large).
		slices.SortStableFunc(s, func(a, b T) int { return compareKeyed(key(a), key(b), a, b, tie) })
		return
	}
	type keyed struct {
		k    *byte
		n, i uint32
		v    T
	}
	tmp := make([]keyed, len(s))
	for i, v := range s {
		k := key(v)
		if uint64(len(k)) > math.MaxUint32 {
			slices.SortStableFunc(s, func(a, b T) int { return compareKeyed(key(a), key(b), a, b, tie) })
			return
		}
		tmp[i] = keyed{unsafe.StringData(k), uint32(len(k)), uint32(i), v}
	}
	slices.SortFunc(tmp, func(a, b keyed) int {
		// compareKeyed written out: as a generic call it costs the
		// comparison about as much again.
		ka, kb := stringHeader{a.k, int(a.n)}, stringHeader{b.k, int(b.n)}
		if c := strings.Compare(*(*string)(unsafe.Pointer(&ka)), *(*string)(unsafe.Pointer(&kb))); c != 0 {
			return c
		}
		if tie != nil {
			if c := tie(a.v, b.v); c != 0 {
				return c
			}
		}
		return int(a.i) - int(b.i)
	})
	for i := range tmp {
		s[i] = tmp[i].v
	}
}

// compareKeyed orders a and b by their keys, then by tie.
func compareKeyed[T any](ka, kb string, a, b T, tie func(a, b T) int) int {
	if c := strings.Compare(ka, kb); c != 0 || tie == nil {
		return c
	}
	return tie(a, b)
}

// sortedByKey reports whether s is in sortByKey's order already.
func sortedByKey[T any](s []T, key func(T) string, tie func(a, b T) int) bool {
	prev := key(s[0])
	for i := 1; i < len(s); i++ {
		k := key(s[i])
		if compareKeyed(prev, k, s[i-1], s[i], tie) > 0 {
			return false
		}
		prev = k
	}
	return true
}
