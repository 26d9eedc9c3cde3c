package compile

import (
	"hash/maphash"
	"math/rand/v2"
	"strconv"
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

// TestNameIndex fills an index past several growths with names whose
// hashes collide in a few ways: every name must be found, and only those.
func TestNameIndex(t *testing.T) {
	real := nameHash
	t.Cleanup(func() { nameHash = real })
	for name, h := range map[string]func(maphash.Seed, string, string) uint64{
		"real":  real,
		"equal": func(maphash.Seed, string, string) uint64 { return 1 },
		"zero":  func(maphash.Seed, string, string) uint64 { return 0 },
		"few":   func(_ maphash.Seed, ns, name string) uint64 { return uint64(len(ns)+len(name)) % 5 },
		"high":  func(_ maphash.Seed, ns, name string) uint64 { return uint64(len(ns)+len(name)) << 40 },
	} {
		nameHash = h
		var keys []objKey
		for i := range 300 {
			keys = append(keys, objKey{"ns-" + strconv.Itoa(i%7), "n" + strconv.Itoa(i)})
		}
		x := newNameIndex(0, func(i int) (string, string) { return keys[i].ns, keys[i].name })
		for i, k := range keys {
			_, ok := x.get(k.ns, k.name)
			require.False(t, ok, "%s: %v found before it was added", name, k)
			v, dup := x.add(k.ns, k.name, i)
			require.False(t, dup, "%s: %v", name, k)
			require.Equal(t, i, v)
		}
		for i, k := range keys {
			v, ok := x.get(k.ns, k.name)
			require.True(t, ok, "%s: %v not found", name, k)
			require.Equal(t, i, v)
			v, dup := x.add(k.ns, k.name, 999)
			require.True(t, dup, "%s: %v", name, k)
			require.Equal(t, i, v)
		}
		for _, k := range []objKey{{"ns-1", "n0"}, {"ns-0", "n"}, {"", ""}, {"ns-0n", "0"}} {
			_, ok := x.get(k.ns, k.name)
			require.False(t, ok, "%s: %v found", name, k)
		}
	}
}
