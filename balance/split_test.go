package balance

import (
	"fmt"
	"math/rand/v2"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
)

// Property: over one full rotation each alternative is chosen exactly its
// reduced share of times, however many times the split is rebuilt (a new
// table) in the middle of the rotation, and wherever the rotation stood
// when the walk began.
func TestSplitSharesAcrossRebuilds(t *testing.T) {
	rng := rand.New(rand.NewPCG(10, 10))
	for trial := range 300 {
		n := 2 + rng.IntN(4)
		weights := make([]int, n)
		for i := range weights {
			if rng.IntN(5) > 0 {
				weights[i] = rng.IntN(1000)
			}
		}
		if trial%3 == 0 {
			// A canary split: weight of a total.
			total := 100 + rng.IntN(20000)
			w := rng.IntN(total + 1)
			weights = []int{total - w, w}
			n = 2
		}
		t.Run(fmt.Sprint(weights), func(t *testing.T) {
			r := NewRegistry()
			id := "prod/web:80 canary"
			s := r.Split(id, weights)
			period := s.Period()
			shares := reduceWeights(weights, maxSplitRotation)
			sum := 0
			for _, v := range shares {
				sum += v
			}
			if sum == 0 {
				_, ok := s.Next()
				require.False(t, ok)
				return
			}
			require.Equal(t, sum, period)
			// Start somewhere in the rotation.
			for range rng.IntN(period) {
				s.Next()
			}
			got := make([]int, n)
			for step := range period {
				if rng.IntN(10) == 0 {
					s = r.Split(id, weights) // a table swap
					if step%2 == 0 {
						r.SweepSplits(nil, []*Split{s})
					}
				}
				i, ok := s.Next()
				require.True(t, ok)
				got[i]++
			}
			require.Empty(t, cmp.Diff(shares, got))
		})
	}
}

// Canary weights under the default total are exact for every weight: over
// 100 requests the canary gets exactly its weight.
func TestSplitCanaryWeightsExact(t *testing.T) {
	for w := 0; w <= 100; w++ {
		s := NewRegistry().Split("x", []int{100 - w, w})
		canary := 0
		for range 100 {
			if i, _ := s.Next(); i == 1 {
				canary++
			}
		}
		require.Equal(t, w, canary, "weight %d", w)
	}
}

// A two-way split is exact whatever its total: canary-weight 1 of a
// canary-weight-total of 1,000,000 is one request in a million, not one
// in 65,536 (the rotation's cap), and a rebuild keeps the position.
func TestSplitTwoWayLargeTotalExact(t *testing.T) {
	for _, weights := range [][]int{{999999, 1}, {1, 999999}, {700001, 299999}, {65536, 1}, {1 << 31, 1<<31 - 1}} {
		r := NewRegistry()
		s := r.Split("x", weights)
		total := weights[0] + weights[1]
		period := min(total, 1_000_000)
		require.Equal(t, total, s.Period(), "%v", weights)
		counts := [2]int{}
		longest, run := 0, 0
		for i := range period {
			if i == period/2 {
				s = r.Split("x", weights) // a new table
			}
			j, ok := s.Next()
			require.True(t, ok)
			counts[j]++
			if j == 1 {
				run = 0
			} else {
				run++
				longest = max(longest, run)
			}
		}
		if period == total {
			require.Equal(t, [2]int{weights[0], weights[1]}, counts, "%v", weights)
		}
		if weights[1] > weights[0] {
			require.LessOrEqual(t, longest, 1, "%v: the primary's requests spread", weights)
		}
	}
}

// ExampleSplit prints the canary's share of 10,000 requests for weights
// 1, 10, 33, 50 and 99 (of 100), and the longest run of consecutive
// primary requests: the canary's requests are spread evenly, never bunched.
func ExampleSplit() {
	for _, w := range []int{1, 10, 33, 50, 99} {
		s := NewRegistry().Split("prod/web:80 canary", []int{100 - w, w})
		canary, run, longest := 0, 0, 0
		for range 10000 {
			if i, _ := s.Next(); i == 1 {
				canary++
				run = 0
			} else {
				run++
				longest = max(longest, run)
			}
		}
		fmt.Printf("weight %2d: canary %4d of 10000 (%5.2f%%), primary %4d; longest primary run %d\n",
			w, canary, float64(canary)/100, 10000-canary, longest)
	}
	// Output:
	// weight  1: canary  100 of 10000 ( 1.00%), primary 9900; longest primary run 99
	// weight 10: canary 1000 of 10000 (10.00%), primary 9000; longest primary run 9
	// weight 33: canary 3300 of 10000 (33.00%), primary 6700; longest primary run 3
	// weight 50: canary 5000 of 10000 (50.00%), primary 5000; longest primary run 1
	// weight 99: canary 9900 of 10000 (99.00%), primary  100; longest primary run 1
}

// BenchmarkSplitRotation builds the rotation of a canary split whose total
// is the largest served exactly, and of a split over 1,000 weighted
// alternatives: the cost a new table pays when a weight changes.
func BenchmarkSplitRotation(b *testing.B) {
	rng := rand.New(rand.NewPCG(7, 8))
	wide := make([]int, 1000)
	for i := range wide {
		wide[i] = 1 + rng.IntN(100)
	}
	for _, bc := range []struct {
		name    string
		weights []int
	}{
		{"canary-1-of-65536", []int{65535, 1}},
		{"canary-33-of-100", []int{67, 33}},
		{"1000-weighted", wide},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			defer reportCPU(b)()
			for b.Loop() {
				buildRotation(bc.weights, maxSplitRotation)
			}
		})
	}
}

// BenchmarkSplitNext is one weighted decision.
func BenchmarkSplitNext(b *testing.B) {
	s := NewRegistry().Split("x", []int{90, 10})
	b.ReportAllocs()
	defer reportCPU(b)()
	for b.Loop() {
		s.Next()
	}
}

// BenchmarkBuildRotation1000 builds the rotation of 1,000 endpoints with
// weights from 1 to 100, as BenchmarkBuildRotation, reporting the
// process's CPU time per build beside the wall time.
func BenchmarkBuildRotation1000(b *testing.B) {
	rng := rand.New(rand.NewPCG(7, 8))
	weights := make([]int, 1000)
	for i := range weights {
		weights[i] = 1 + rng.IntN(100)
	}
	b.ReportAllocs()
	defer reportCPU(b)()
	for b.Loop() {
		buildRotation(weights, maxRotation)
	}
}

// reportCPU adds cpu-ns/op, the process's user and system CPU time per
// iteration, to a benchmark. On a machine shared with other work the wall
// time (ns/op) includes time the benchmark was not running; CPU time does
// not (it does include the garbage collector's).
func reportCPU(b *testing.B) func() {
	start := cpuTime()
	return func() {
		if b.N > 0 {
			b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
		}
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
