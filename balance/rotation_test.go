package balance

import (
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
)

func TestReduceWeights(t *testing.T) {
	tests := []struct {
		name    string
		weights []int
		limit   int
		want    []int
	}{
		{"uniform", []int{5, 5, 5}, 0, []int{1, 1, 1}},
		{"gcd", []int{2, 4, 6}, 0, []int{1, 2, 3}},
		{"gcd canary 90/10", []int{90, 10}, 0, []int{9, 1}},
		{"zero and negative mean never", []int{0, 3, -4, 6}, 0, []int{0, 1, 0, 2}},
		{"all zero", []int{0, 0}, 0, []int{0, 0}},
		{"empty", nil, 0, []int{}},
		{"fits exactly", []int{3, 7}, 10, []int{3, 7}},
		{"scaled proportionally", []int{300, 700}, 10, []int{3, 7}},
		{"scaled, rounded to nearest", []int{1, 2, 1000}, 100, []int{1, 1, 98}},
		{"live endpoint never rounded to zero", []int{1, 100000}, 16, []int{1, 15}},
		{"several tiny weights kept", []int{1, 1, 1, 997}, 10, []int{1, 1, 1, 7}},
		{"more live weights than the cap", []int{1, 2, 3, 0, 4}, 3, []int{1, 1, 1, 0, 1}},
		{"huge weights keep their ratio", []int{3 << 60, 1 << 60}, 0, []int{3, 1}},
		{"default cap", []int{1, 8191}, 0, []int{1, 4095}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := reduceWeights(tt.weights, tt.limit)
			require.Empty(t, cmp.Diff(tt.want, got))
		})
	}
}

// randomWeights returns 1 to maxLen weights below maxWeight: one in
// zeroOneIn on average is 0, and each other is drawn below its own random
// bound, so that vectors mix small and large weights.
func randomWeights(rng *rand.Rand, maxLen, zeroOneIn, maxWeight int) []int {
	weights := make([]int, 1+rng.IntN(maxLen))
	for i := range weights {
		if rng.IntN(zeroOneIn) > 0 {
			weights[i] = rng.IntN(1 + rng.IntN(maxWeight))
		}
	}
	return weights
}

// TestReduceWeightsProperties checks the documented guarantees on random
// weight vectors: within the cap, proportional, GCD-reduced, and no live
// weight lost.
func TestReduceWeightsProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		weights := randomWeights(rng, 40, 5, 100000)
		limit := 1 + rng.IntN(600)
		shares := reduceWeights(weights, limit)
		require.Len(t, shares, len(weights))
		live, total, g := 0, 0, 0
		for i, s := range shares {
			if weights[i] > 0 {
				live++
				require.Positive(t, s, "weights %v limit %d index %d", weights, limit, i)
				g = gcd(g, s)
			} else {
				require.Zero(t, s)
			}
			total += s
		}
		if live == 0 {
			continue
		}
		require.LessOrEqual(t, total, max(limit, live), "weights %v limit %d", weights, limit)
		require.Equal(t, 1, g, "not reduced: weights %v limit %d shares %v", weights, limit, shares)
		// A heavier weight never gets a smaller share.
		for i := range weights {
			for j := range weights {
				if weights[i] > weights[j] && weights[j] > 0 {
					require.GreaterOrEqual(t, shares[i], shares[j], "weights %v limit %d shares %v", weights, limit, shares)
				}
			}
		}
	}
}

// TestBuildRotationSmooth is nginx's documented example of smooth weighted
// round-robin: weights 5, 1, 1 give a a b a c a a.
func TestBuildRotationSmooth(t *testing.T) {
	got := buildRotation([]int{5, 1, 1}, 0)
	require.Empty(t, cmp.Diff([]uint32{0, 0, 1, 0, 2, 0, 0}, got))
	require.Empty(t, cmp.Diff([]uint32{1, 0, 1, 2, 1}, buildRotation([]int{2, 6, 2, 0}, 0)))
	require.Nil(t, buildRotation([]int{0, -1}, 0))
	require.Nil(t, buildRotation(nil, 0))
}

// TestBuildRotationGuarantees: over one full rotation each index appears
// exactly its share; walking the rotation cyclically (as the cursor does),
// no index appears more than ceil(share/minShare) times in a row.
func TestBuildRotationGuarantees(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 3000 {
		weights := randomWeights(rng, 12, 6, 50)
		n := len(weights)
		limit := 1 + rng.IntN(300)
		shares := reduceWeights(weights, limit)
		rot := buildRotation(weights, limit)

		counts := make([]int, n)
		for _, i := range rot {
			counts[i]++
		}
		require.Empty(t, cmp.Diff(shares, counts), "weights %v limit %d", weights, limit)

		minShare := 0
		for _, s := range shares {
			if s > 0 && (minShare == 0 || s < minShare) {
				minShare = s
			}
		}
		if len(rot) == 0 {
			require.Zero(t, minShare)
			continue
		}
		longest := longestCyclicRuns(rot, n)
		for i, s := range shares {
			if s == 0 {
				continue
			}
			bound := (s + minShare - 1) / minShare
			require.LessOrEqual(t, longest[i], bound, "index %d share %d weights %v limit %d rotation %v", i, s, weights, limit, rot)
		}
	}
}

// longestCyclicRuns returns, per index, its longest run of consecutive
// appearances in rot repeated forever.
func longestCyclicRuns(rot []uint32, n int) []int {
	longest := make([]int, n)
	if len(rot) == 0 {
		return longest
	}
	run, prev := 0, rot[0]
	for k := range 2 * len(rot) {
		i := rot[k%len(rot)]
		if i == prev {
			run++
		} else {
			run, prev = 1, i
		}
		longest[i] = max(longest[i], min(run, len(rot)))
	}
	return longest
}

func TestWeightedConfig(t *testing.T) {
	got := weightedConfig("prod/api:80", []weightedEndpoint{
		{Addr: "10.0.0.2:80", Weight: 1},
		{Addr: "10.0.0.1:80", Weight: 3},
		{Addr: "10.0.0.2:80", Weight: 2},
		{Addr: "10.0.0.3:80", Weight: -1},
	})
	want := Config{
		ID:        "prod/api:80",
		Endpoints: []string{"10.0.0.1:80", "10.0.0.2:80", "10.0.0.3:80"},
		weights:   []int{3, 3, 0},
	}
	require.Empty(t, cmp.Diff(want, got, cmp.AllowUnexported(Config{}, HashKey{})))
}

// swrr is smooth weighted round-robin written plainly, one credit per
// index: the reference the grouped construction must reproduce exactly.
func swrr(shares []int) []uint32 {
	credit := make([]int, len(shares))
	total := 0
	for _, s := range shares {
		total += max(s, 0)
	}
	if total == 0 {
		return nil
	}
	out := make([]uint32, total)
	for step := range out {
		best := -1
		for i, s := range shares {
			if s <= 0 {
				continue
			}
			credit[i] += s
			if best < 0 || credit[i] > credit[best] {
				best = i
			}
		}
		credit[best] -= total
		out[step] = uint32(best)
	}
	return out
}

func TestRotationMatchesPlainSWRR(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	for range 1000 {
		shares := randomWeights(rng, 60, 8, 12)
		require.Empty(t, cmp.Diff(swrr(shares), rotationOf(shares)), "shares %v", shares)
	}
}
