package ramjet_test

import (
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/compile"
	"ramjet.dev/ramjet/router/routertest"
)

// TestCases runs every case file in testdata/cases through the real handler
// and compares each file's compiled tables with its golden rendering.
func TestCases(t *testing.T) {
	routertest.RunFiles(t, "testdata/cases")
}

// TestCasesOrderIndependent compiles every case with its objects shuffled
// and requires the same digest, warnings, table, claimed Ingresses and
// unclaimed summary (SPEC §15).
func TestCasesOrderIndependent(t *testing.T) {
	cases, err := routertest.LoadCases("testdata/cases")
	require.NoError(t, err)
	require.NotEmpty(t, cases)
	rng := rand.New(rand.NewPCG(1, 2))
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			want := compile.Compile(c.Objects, c.Options)
			for range 20 {
				got := compile.Compile(shuffled(rng, c.Objects), c.Options)
				require.Equal(t, want.Table.Digest(), got.Table.Digest())
				if d := cmp.Diff(want.Warnings, got.Warnings); d != "" {
					t.Fatalf("warnings depend on object order (-want +got):\n%s", d)
				}
				if d := cmp.Diff(want.Table.String(), got.Table.String()); d != "" {
					t.Fatalf("table depends on object order (-want +got):\n%s", d)
				}
				if d := cmp.Diff(want.Claimed, got.Claimed); d != "" {
					t.Fatalf("claimed Ingresses depend on object order (-want +got):\n%s", d)
				}
				if d := cmp.Diff(want.Unclaimed, got.Unclaimed); d != "" {
					t.Fatalf("unclaimed summary depends on object order (-want +got):\n%s", d)
				}
			}
		})
	}
}

func shuffled(rng *rand.Rand, s compile.Snapshot) compile.Snapshot {
	return compile.Snapshot{
		Ingresses:      shuffle(rng, s.Ingresses),
		IngressClasses: shuffle(rng, s.IngressClasses),
		Services:       shuffle(rng, s.Services),
		EndpointSlices: shuffle(rng, s.EndpointSlices),
		Secrets:        shuffle(rng, s.Secrets),
		ConfigMaps:     shuffle(rng, s.ConfigMaps),
	}
}

func shuffle[T any](rng *rand.Rand, in []T) []T {
	out := append([]T(nil), in...)
	rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}
