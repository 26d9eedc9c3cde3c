package balance

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSplitManyWayLargeTotalExact: a split of more than two backends whose
// weights, reduced by their GCD, add up to more than maxSplitRotation is
// exact too, as a two-way one is: over one full period (the reduced
// total) each backend gets exactly its reduced weight, a rebuild keeps
// the position, and at every turn each backend's count stays within one
// request per backend of its weight's share of the turns so far (the
// requests are spread, not bunched).
func TestSplitManyWayLargeTotalExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	cases := [][]int{
		{1, 1, 3 * maxSplitRotation},
		{30000, 30001, 0, 30002},
		{1, 2, 3, 4, 5, 6, 7, 8, 9, 65536},
		{99991, 99989, 1, 7, 13},
		{3 * 1000000, 2, 4, 6}, // reduced by 2
	}
	for range 8 {
		n := 3 + rng.IntN(6)
		w := make([]int, n)
		for i := range w {
			w[i] = rng.IntN(1 + rng.IntN(100000))
		}
		cases = append(cases, w)
	}
	for _, weights := range cases {
		total, g := 0, 0
		for _, w := range weights {
			total += w
			g = gcd(g, w)
		}
		if g == 0 || total/g <= maxSplitRotation {
			continue
		}
		t.Run(fmt.Sprint(weights), func(t *testing.T) {
			r := NewRegistry()
			s := r.Split("split", weights)
			period := total / g
			require.Equal(t, period, s.Period())
			got := make([]int, len(weights))
			for step := range period {
				if step == period/3 {
					s = r.Split("split", weights) // a new table
				}
				i, ok := s.Next()
				require.True(t, ok)
				got[i]++
				if step%4999 == 0 {
					for j, w := range weights {
						want := float64(step+1) * float64(w) / float64(total)
						require.InDelta(t, want, float64(got[j]), float64(len(weights)), "backend %d after %d turns", j, step+1)
					}
				}
			}
			for j, w := range weights {
				require.Equal(t, w/g, got[j], "backend %d of weight %d over one period of %d", j, w, period)
			}
		})
	}
}
