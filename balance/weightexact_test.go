package balance

import (
	"strconv"
	"testing"
)

// TestWeightedEndpointsExact: a weighted backend's endpoints each get
// exactly their share of requests over one period of the reduced weights
// (their sum once divided by their GCD), however large that sum is:
// weights past the rotation's cap are not scaled down, which gave a
// weight of 1 beside 9,999 more than twice its share, and one of 300
// endpoints 36 times its own. Turns stay spread (two near-equal weights
// alternate) and a pick allocates nothing.
func TestWeightedEndpointsExact(t *testing.T) {
	many := make([]int, 300)
	for i := range many {
		many[i] = 1 + i*i*7%1000
	}
	for _, weights := range [][]int{
		{1, 9999},
		{3, 5000, 0, 7},
		{1, 2, 4094},
		{4999, 5001},
		many,
	} {
		eps := make([]string, len(weights))
		for i := range eps {
			eps[i] = "10.0.0." + strconv.Itoa(i) + ":80"
		}
		b := NewRegistry().Balancer(Config{ID: "prod/api:80", Endpoints: eps, weights: weights})
		period := 0
		for _, w := range weights {
			period += max(w, 0)
		}
		period /= gcdOf(weights)
		got := make(map[string]int)
		run, last := 0, ""
		for range period {
			e, ok := b.Pick("")
			if !ok {
				t.Fatalf("weights %v: no pick", weights)
			}
			e.Release()
			got[e.Addr]++
			if run++; e.Addr != last {
				run, last = 1, e.Addr
			}
			if len(weights) == 2 && weights[0]*10 > weights[1] && run > 2 {
				t.Fatalf("weights %v: %s picked %d times in a row", weights, e.Addr, run)
			}
		}
		if n := testing.AllocsPerRun(100, func() { e, _ := b.Pick(""); e.Release() }); n != 0 {
			t.Errorf("weights %v: %v allocations per pick", weights[:min(len(weights), 4)], n)
		}
		g := gcdOf(weights)
		for i, w := range weights {
			want := max(w, 0) / g
			if got[eps[i]] != want {
				t.Errorf("weights %v: endpoint %d got %d of %d requests, want %d", weights[:min(len(weights), 4)], i, got[eps[i]], period, want)
			}
		}
	}
}

func gcdOf(ws []int) int {
	g := 0
	for _, w := range ws {
		if w > 0 {
			g = gcd(g, w)
		}
	}
	return g
}
