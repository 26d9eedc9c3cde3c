package balance

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
)

// TestSubsetsLayout: ceil(n/size) sets of size endpoints in their order,
// the last one filled up from the first endpoints (chashsubset.lua:16-49).
func TestSubsetsLayout(t *testing.T) {
	tests := []struct {
		n, size int
		want    [][]uint32
	}{
		{7, 3, [][]uint32{{0, 1, 2}, {3, 4, 5}, {6, 0, 1}}},
		{6, 3, [][]uint32{{0, 1, 2}, {3, 4, 5}}},
		{2, 3, [][]uint32{{0, 1, 0}}},
		{4, 1, [][]uint32{{0}, {1}, {2}, {3}}},
		{2, 5, [][]uint32{{0, 1, 0, 1, 0}}},
	}
	for _, tt := range tests {
		ss := newSubsets(tt.n, tt.size)
		got := make([][]uint32, len(ss.ring.points)/pointsPerEndpoint)
		for k := range got {
			for j := range tt.size {
				got[k] = append(got[k], uint32(ss.member(k, j)))
			}
		}
		require.Empty(t, cmp.Diff(tt.want, got), "n=%d size=%d", tt.n, tt.size)
	}
}

// TestHashSubset: a key always lands in one set and is served round-robin
// by its members; keys spread over every set; a retry takes another member
// of the set first; a request without the key goes round-robin over all.
func TestHashSubset(t *testing.T) {
	eps := addrs(9)
	b := NewRegistry().Balancer(Config{ID: "prod/api:80", Endpoints: eps, Algorithm: Hash, HashKey: mustHashKey(t, "$request_uri"), HashSubset: 3})
	require.NotNil(t, b.subsets)
	require.Nil(t, b.ring, "subsets need no ring over the endpoints")

	sets := map[int]bool{}
	for _, key := range hashKeys(300) {
		seen := map[string]int{}
		for range 6 {
			e, ok := b.Pick(key)
			require.True(t, ok)
			e.Release()
			seen[e.Addr]++
		}
		require.Len(t, seen, 3, "key %s is served by its set's three endpoints", key)
		set := -1
		for addr, n := range seen {
			require.Equal(t, 2, n, "round-robin within the set")
			k := slices.Index(eps, addr) / 3
			require.True(t, set < 0 || set == k, "key %s reached two sets", key)
			set = k
		}
		sets[set] = true
	}
	require.Len(t, sets, 3, "keys spread over every set")

	first, _ := b.Pick("/k")
	second, ok := b.Pick("/k", first)
	require.True(t, ok)
	require.NotEqual(t, first.Addr, second.Addr)
	require.Equal(t, slices.Index(eps, first.Addr)/3, slices.Index(eps, second.Addr)/3, "a retry stays in the set while it has untried members")
	third, ok := b.Pick("/k", first, second)
	require.True(t, ok)
	fourth, ok := b.Pick("/k", first, second, third)
	require.True(t, ok, "a set all tried gives way to the next set on the ring")
	require.NotEqual(t, slices.Index(eps, first.Addr)/3, slices.Index(eps, fourth.Addr)/3)
	for _, e := range []Endpoint{first, second, third, fourth} {
		e.Release()
	}

	seen := map[string]bool{}
	for range 9 {
		e, _ := b.Pick("")
		e.Release()
		seen[e.Addr] = true
	}
	require.Len(t, seen, 9, "without a key, round-robin over every endpoint")
}
