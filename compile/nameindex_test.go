package compile

import (
	"hash/maphash"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
)

// TestNameIndexCollisions compiles snapshots with duplicate and missing
// names while every namespace and name hashes alike, so every name past
// the first is told apart by name alone: the result must not change.
func TestNameIndexCollisions(t *testing.T) {
	s := richSnapshot()
	s.Services = append(s.Services, mkService("prod", "web", "http:80:9090"), nil)
	s.Ingresses = append(s.Ingresses, mkIngress("prod", "shop", 100, withRules(mkRule("dup.example.com", prefix("/", "web", 80)))), nil)
	want := Compile(s, Options{}).String()
	wantBench := Compile(benchSnapshot(200), Options{}).String()

	real := nameHash
	t.Cleanup(func() { nameHash = real })
	for name, h := range map[string]func(maphash.Seed, string, string) uint64{
		"all":  func(maphash.Seed, string, string) uint64 { return 7 },
		"some": func(seed maphash.Seed, ns, name string) uint64 { return real(seed, ns, name) % 3 },
	} {
		nameHash = h
		r := rand.New(rand.NewPCG(3, 4))
		for i := range 5 {
			if diff := cmp.Diff(want, Compile(shuffled(r, s), Options{}).String()); diff != "" {
				t.Fatalf("%s, shuffle %d (-want +got):\n%s", name, i, diff)
			}
		}
		require.Equal(t, wantBench, Compile(benchSnapshot(200), Options{}).String(), name)
	}
}

func TestNameIndex(t *testing.T) {
	real := nameHash
	t.Cleanup(func() { nameHash = real })
	nameHash = func(maphash.Seed, string, string) uint64 { return 1 }
	keys := []objKey{{"a", "b"}, {"a", "c"}, {"b", "b"}, {"ab", ""}}
	x := newNameIndex(0, func(i int) (string, string) { return keys[i].ns, keys[i].name })
	for i, k := range keys {
		_, ok := x.get(k.ns, k.name)
		require.False(t, ok, k)
		v, dup := x.add(k.ns, k.name, i)
		require.False(t, dup, k)
		require.Equal(t, i, v)
	}
	for i, k := range keys {
		v, ok := x.get(k.ns, k.name)
		require.True(t, ok, k)
		require.Equal(t, i, v)
		v, dup := x.add(k.ns, k.name, 99)
		require.True(t, dup, k)
		require.Equal(t, i, v)
	}
	_, ok := x.get("a", "d")
	require.False(t, ok)
}
