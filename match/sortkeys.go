package match

import (
	"slices"
	"strings"
)

// sortByKey sorts s as slices.SortStableFunc does by key, then tie, then
// position, in O(n log n) comparisons that read the keys from one array:
// a stable sort's merging, and reading each key through its pointer, cost
// a large table's New more than the rest of its sorting.
func sortByKey[T any](s []T, key func(T) string, tie func(a, b T) int) {
	if len(s) < 2 {
		return
	}
	type keyed struct {
		k string
		v T
		i int
	}
	tmp := make([]keyed, len(s))
	for i, v := range s {
		tmp[i] = keyed{key(v), v, i}
	}
	slices.SortFunc(tmp, func(a, b keyed) int {
		if c := strings.Compare(a.k, b.k); c != 0 {
			return c
		}
		if tie != nil {
			if c := tie(a.v, b.v); c != 0 {
				return c
			}
		}
		return a.i - b.i
	})
	for i := range tmp {
		s[i] = tmp[i].v
	}
}
