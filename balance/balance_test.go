package balance

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
)

func addrs(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("10.0.%d.%d:8080", i/250, i%250+1)
	}
	return out
}

// pickAddrs picks n times, releasing each pick, and returns the addresses.
func pickAddrs(t *testing.T, b *Balancer, n int) []string {
	t.Helper()
	out := make([]string, n)
	for i := range out {
		e, ok := b.Pick("")
		require.True(t, ok)
		out[i] = e.Addr
		e.Release()
	}
	return out
}

func TestRoundRobin(t *testing.T) {
	r := NewRegistry()
	b := r.Balancer(Config{ID: "prod/api:80", Endpoints: []string{"a:1", "b:1", "c:1"}})
	require.Empty(t, cmp.Diff([]string{"a:1", "b:1", "c:1", "a:1", "b:1"}, pickAddrs(t, b, 5)))

	empty := r.Balancer(Config{ID: "prod/empty:80"})
	_, ok := empty.Pick("")
	require.False(t, ok)
	_, ok = empty.Pick("k")
	require.False(t, ok)
}

// TestRebuildKeepsCounters rebuilds a backend's balancer the way a new table
// does and checks that cursors and in-flight counts carry over.
func TestRebuildKeepsCounters(t *testing.T) {
	t.Run("adding an unrelated backend keeps every cursor and count", func(t *testing.T) {
		r := NewRegistry()
		api := Config{ID: "prod/api:80", Endpoints: []string{"a:1", "b:1", "c:1"}}
		web := Config{ID: "prod/web:80", Endpoints: []string{"x:1", "y:1"}}
		gen1 := []*Balancer{r.Balancer(api), r.Balancer(web)}
		held := []Endpoint{mustPick(t, gen1[0]), mustPick(t, gen1[0]), mustPick(t, gen1[1])}
		r.Sweep(gen1)

		// The new backend shares address b:1 with api.
		gen2 := []*Balancer{r.Balancer(api), r.Balancer(web), r.Balancer(Config{ID: "prod/new:80", Endpoints: []string{"b:1", "z:1"}})}
		r.Sweep(gen2)
		require.Equal(t, "c:1", mustPick(t, gen2[0]).Addr, "api cursor continues")
		require.Equal(t, "y:1", mustPick(t, gen2[1]).Addr, "web cursor continues")
		require.Equal(t, "b:1", mustPick(t, gen2[2]).Addr, "new backend starts at the beginning")
		want := map[string]int64{"a:1": 1, "b:1": 2, "c:1": 1, "x:1": 1, "y:1": 1, "z:1": 0}
		require.Empty(t, cmp.Diff(want, inflightOf(r, want)))

		for _, e := range held {
			e.Release()
		}
		want = map[string]int64{"a:1": 0, "b:1": 1, "c:1": 1, "x:1": 0, "y:1": 1, "z:1": 0}
		require.Empty(t, cmp.Diff(want, inflightOf(r, want)))
	})

	t.Run("removing an endpoint keeps the others'", func(t *testing.T) {
		r := NewRegistry()
		gen1 := r.Balancer(Config{ID: "prod/api:80", Endpoints: []string{"a:1", "b:1", "c:1"}})
		a, b, c := mustPick(t, gen1), mustPick(t, gen1), mustPick(t, gen1)
		mustPick(t, gen1) // a again: a has 2 in flight

		gen2 := r.Balancer(Config{ID: "prod/api:80", Endpoints: []string{"a:1", "c:1"}})
		r.Sweep([]*Balancer{gen2})
		want := map[string]int64{"a:1": 2, "b:1": 1, "c:1": 1}
		require.Empty(t, cmp.Diff(want, inflightOf(r, want)))
		// The cursor stands at 4: 4 mod 2 is a:1.
		require.Equal(t, "a:1", mustPick(t, gen2).Addr)

		// Requests that started under gen1 end under gen2 and decrement
		// the counters they incremented.
		a.Release()
		b.Release()
		c.Release()
		want = map[string]int64{"a:1": 2, "b:1": 0, "c:1": 0}
		require.Empty(t, cmp.Diff(want, inflightOf(r, want)))
	})
}

func mustPick(t *testing.T, b *Balancer) Endpoint {
	t.Helper()
	e, ok := b.Pick("")
	require.True(t, ok)
	return e
}

func inflightOf(r *Registry, like map[string]int64) map[string]int64 {
	got := make(map[string]int64, len(like))
	for addr := range like {
		got[addr] = r.InFlight(addr)
	}
	return got
}

func TestWeightedRoundRobin(t *testing.T) {
	r := NewRegistry()
	cfg := Config{ID: "prod/api:80", Endpoints: []string{"a:1", "b:1", "c:1", "d:1"}, weights: []int{10, 20, 0, 10}}
	b := r.Balancer(cfg)
	// Shares 1, 2, 0, 1: b gets half, spread out, and c nothing.
	require.Empty(t, cmp.Diff([]string{"b:1", "a:1", "d:1", "b:1", "b:1", "a:1", "d:1", "b:1"}, pickAddrs(t, b, 8)))

	t.Run("uniform weights need no rotation", func(t *testing.T) {
		b := r.Balancer(Config{ID: "prod/u:80", Endpoints: []string{"a:1", "b:1"}, weights: []int{7, 7}})
		require.Nil(t, b.rotation)
		require.Empty(t, cmp.Diff([]string{"a:1", "b:1", "a:1"}, pickAddrs(t, b, 3)))
	})
	t.Run("all weights zero picks nothing", func(t *testing.T) {
		for _, p := range []Algorithm{RoundRobin, LeastConn, Hash} {
			b := r.Balancer(Config{ID: "prod/z:80", Endpoints: []string{"a:1"}, weights: []int{0}, Algorithm: p, HashKey: mustHashKey(t, "$request_uri")})
			_, ok := b.Pick("/x")
			require.False(t, ok, p.String())
		}
	})
	t.Run("rotation is reused while weights are unchanged", func(t *testing.T) {
		again := r.Balancer(cfg)
		require.Same(t, &b.rotation[0], &again.rotation[0])
		changed := cfg
		changed.weights = []int{1, 1, 1, 2}
		require.Empty(t, cmp.Diff([]uint32{3, 0, 1, 2, 3}, r.Balancer(changed).rotation))
	})
	t.Run("misaligned weights panic", func(t *testing.T) {
		require.PanicsWithValue(t, "balance: backend prod/api:80 has 1 weights for 4 endpoints", func() {
			r.Balancer(Config{ID: "prod/api:80", Endpoints: cfg.Endpoints, weights: []int{1}})
		})
	})
}

func TestLeastConn(t *testing.T) {
	tests := []struct {
		name    string
		weights []int
		loads   []int64
		want    []string // successive picks, each released before the next
	}{
		{"fewest in flight", nil, []int64{2, 0, 1}, []string{"b:1", "b:1", "b:1"}},
		{"ties go round-robin", nil, []int64{1, 0, 0, 0}, []string{"b:1", "c:1", "d:1", "b:1", "c:1", "d:1"}},
		{"all idle is round-robin", nil, []int64{0, 0, 0}, []string{"a:1", "b:1", "c:1", "a:1"}},
		{"per unit of weight", []int{1, 4, 2}, []int64{1, 3, 1}, []string{"c:1", "c:1"}},
		{"weighted ties round-robin", []int{1, 2, 2}, []int64{1, 2, 2}, []string{"a:1", "b:1", "c:1", "a:1"}},
		{"zero weight never picked", []int{0, 1, 1}, []int64{0, 5, 5}, []string{"b:1", "c:1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewRegistry()
			eps := []string{"a:1", "b:1", "c:1", "d:1"}[:len(tt.loads)]
			b := r.Balancer(Config{ID: "prod/api:80", Endpoints: eps, weights: tt.weights, Algorithm: LeastConn})
			for i, load := range tt.loads {
				b.endpoints[i].inflight.n.Store(load)
			}
			require.Empty(t, cmp.Diff(tt.want, pickAddrs(t, b, len(tt.want))))
			for i, load := range tt.loads {
				require.Equal(t, load, b.endpoints[i].inFlight(), "picks were released")
			}
		})
	}

	t.Run("holding picks spreads them", func(t *testing.T) {
		r := NewRegistry()
		b := r.Balancer(Config{ID: "prod/api:80", Endpoints: []string{"a:1", "b:1", "c:1"}, Algorithm: LeastConn})
		var got []string
		for range 6 {
			got = append(got, mustPick(t, b).Addr)
		}
		require.ElementsMatch(t, []string{"a:1", "a:1", "b:1", "b:1", "c:1", "c:1"}, got)
	})
}

func TestPickTried(t *testing.T) {
	key := mustHashKey(t, "$request_uri")
	eps := []string{"a:1", "b:1", "c:1"}
	for _, p := range []Algorithm{RoundRobin, LeastConn, Hash} {
		t.Run(p.String(), func(t *testing.T) {
			r := NewRegistry()
			b := r.Balancer(Config{ID: "prod/api:80", Endpoints: eps, Algorithm: p, HashKey: key})
			first, ok := b.Pick("/cart")
			require.True(t, ok)
			second, ok := b.Pick("/cart", first)
			require.True(t, ok)
			third, ok := b.Pick("/cart", first, second)
			require.True(t, ok)
			require.ElementsMatch(t, eps, []string{first.Addr, second.Addr, third.Addr})
			_, ok = b.Pick("/cart", first, second, third)
			require.False(t, ok, "nothing left to try")
			for _, e := range []Endpoint{first, second, third} {
				require.EqualValues(t, 1, e.inFlight())
				e.Release()
			}
		})
	}

	t.Run("hash retries are deterministic per key", func(t *testing.T) {
		r := NewRegistry()
		b := r.Balancer(Config{ID: "prod/api:80", Endpoints: addrs(10), Algorithm: Hash, HashKey: key})
		for k := range 50 {
			path := fmt.Sprintf("/item/%d", k)
			first, _ := b.Pick(path)
			retry1, _ := b.Pick(path, first)
			retry2, _ := b.Pick(path, first)
			require.Equal(t, retry1.Addr, retry2.Addr)
			require.NotEqual(t, first.Addr, retry1.Addr)
			first.Release()
			retry1.Release()
			retry2.Release()
		}
	})

	t.Run("weighted round-robin skips zero weights on retry", func(t *testing.T) {
		r := NewRegistry()
		b := r.Balancer(Config{ID: "prod/api:80", Endpoints: eps, weights: []int{3, 0, 1}})
		first := mustPick(t, b)
		require.Equal(t, "a:1", first.Addr)
		retry, ok := b.Pick("", first)
		require.True(t, ok)
		require.Equal(t, "c:1", retry.Addr)
		_, ok = b.Pick("", first, retry)
		require.False(t, ok)
	})
}

func TestPickAllocations(t *testing.T) {
	key := mustHashKey(t, "$request_uri")
	for _, p := range []Algorithm{RoundRobin, LeastConn, Hash} {
		for _, weights := range [][]int{nil, {1, 2, 3, 4}} {
			r := NewRegistry()
			b := r.Balancer(Config{ID: "prod/api:80", Endpoints: addrs(4), weights: weights, Algorithm: p, HashKey: key})
			allocs := testing.AllocsPerRun(100, func() {
				var tried [3]Endpoint
				n := 0
				for range 3 {
					e, ok := b.Pick("/cart", tried[:n]...)
					if !ok {
						break
					}
					tried[n] = e
					n++
				}
				for _, e := range tried[:n] {
					e.Release()
				}
			})
			require.Zero(t, allocs, "%s weights %v", p, weights)
		}
	}
}

func TestSweep(t *testing.T) {
	t.Run("unreferenced idle counters and cursors are released", func(t *testing.T) {
		r := NewRegistry()
		api := r.Balancer(Config{ID: "prod/api:80", Endpoints: []string{"a:1", "b:1"}})
		old := r.Balancer(Config{ID: "prod/old:80", Endpoints: []string{"b:1", "o:1"}})
		mustPick(t, old).Release()
		live := []*Balancer{api}

		// The first sweep keeps what was handed out since the last one.
		cursors, counters := r.Sweep(live)
		require.Zero(t, cursors)
		require.Zero(t, counters)
		cursors, counters = r.Sweep(live)
		require.Equal(t, 1, cursors)
		require.Equal(t, 1, counters)
		require.Empty(t, cmp.Diff([]string{"prod/api:80"}, keys(r.cursors)))
		require.Empty(t, cmp.Diff([]string{"a:1", "b:1"}, keys(r.inflight)))

		// A new balancer for the released backend starts afresh.
		again := r.Balancer(Config{ID: "prod/old:80", Endpoints: []string{"b:1", "o:1"}})
		require.Equal(t, "b:1", mustPick(t, again).Addr)
	})

	t.Run("a counter in flight is kept until idle", func(t *testing.T) {
		r := NewRegistry()
		gen1 := r.Balancer(Config{ID: "prod/api:80", Endpoints: []string{"a:1", "b:1"}})
		a := mustPick(t, gen1)
		gen2 := r.Balancer(Config{ID: "prod/api:80", Endpoints: []string{"b:1"}})
		for range 3 {
			_, counters := r.Sweep([]*Balancer{gen2})
			require.Zero(t, counters)
		}
		require.EqualValues(t, 1, r.InFlight("a:1"))

		// a:1 comes back while the old request is still in flight: the
		// new balancer shares the counter instead of starting a second.
		gen3 := r.Balancer(Config{ID: "prod/api:80", Endpoints: []string{"a:1", "b:1"}})
		require.Same(t, a.inflight, gen3.endpoints[0].inflight)
		skipped := mustPick(t, gen3)
		require.Equal(t, "b:1", skipped.Addr, "the cursor stands at 1")
		skipped.Release()
		b := mustPick(t, gen3)
		require.Equal(t, "a:1", b.Addr)
		require.EqualValues(t, 2, r.InFlight("a:1"))
		a.Release()
		b.Release()

		gen4 := r.Balancer(Config{ID: "prod/api:80", Endpoints: []string{"b:1"}})
		r.Sweep([]*Balancer{gen4})
		_, counters := r.Sweep([]*Balancer{gen4})
		require.Equal(t, 1, counters, "idle now, so released")
		require.NotContains(t, r.inflight, "a:1")
	})

	t.Run("release after the sweep decrements the same counter", func(t *testing.T) {
		r := NewRegistry()
		gen1 := r.Balancer(Config{ID: "prod/api:80", Endpoints: []string{"a:1"}})
		a := mustPick(t, gen1)
		counter := a.inflight
		// Drop the counter by hand, as if it had been swept, to check
		// that Release does not depend on the registry.
		r.mu.Lock()
		delete(r.inflight, "a:1")
		r.mu.Unlock()
		a.Release()
		require.Zero(t, counter.n.Load())

		// A live balancer whose counter was released gets it back.
		r.Sweep([]*Balancer{gen1})
		require.Same(t, counter, r.inflight["a:1"])
		gen2 := r.Balancer(Config{ID: "prod/api:80", Endpoints: []string{"a:1"}})
		require.Same(t, counter, gen2.endpoints[0].inflight)
	})

	t.Run("splits are swept like backends", func(t *testing.T) {
		r := NewRegistry()
		s := r.Split("prod/api:80 canary", []int{90, 10})
		gone := r.Split("prod/web:80 canary", []int{1, 1})
		require.NotSame(t, s.cursor, gone.cursor)
		r.SweepSplits(nil, []*Split{s})
		cursors, _ := r.SweepSplits(nil, []*Split{s})
		require.Equal(t, 1, cursors)
		require.Empty(t, cmp.Diff([]string{"prod/api:80 canary"}, keys(r.splits)))
	})
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func TestSplit(t *testing.T) {
	r := NewRegistry()
	s := r.Split("prod/api:80 canary", []int{80, 20})
	counts := make([]int, 2)
	var order []int
	for range 10 {
		i, ok := s.Next()
		require.True(t, ok)
		counts[i]++
		order = append(order, i)
	}
	require.Empty(t, cmp.Diff([]int{8, 2}, counts))
	require.Empty(t, cmp.Diff([]int{0, 0, 1, 0, 0, 0, 0, 1, 0, 0}, order), "the canary share is spread out")

	// A rebuild with the same identity continues the rotation.
	next := r.Split("prod/api:80 canary", []int{80, 20})
	i, _ := next.Next()
	require.Equal(t, 0, i)
	require.Equal(t, uint64(11), next.cursor.n.Load())

	uniformSplit := r.Split("prod/u", []int{3, 3, 3})
	var got []int
	for range 4 {
		i, _ := uniformSplit.Next()
		got = append(got, i)
	}
	require.Empty(t, cmp.Diff([]int{0, 1, 2, 0}, got))

	_, ok := r.Split("prod/none", []int{0, 0}).Next()
	require.False(t, ok)
	_, ok = r.Split("prod/empty", nil).Next()
	require.False(t, ok)
}

// TestConcurrentRebuilds picks and releases from many goroutines while the
// balancer is rebuilt from the registry every millisecond and swapped in,
// with sweeps, as a router does. Afterwards every in-flight count is zero.
// Then, on a stretch with no rebuilds, concurrent round-robin picks take
// consecutive cursor values, so no endpoint gets more than one request more
// than another.
func TestConcurrentRebuilds(t *testing.T) {
	r := NewRegistry()
	all := addrs(6)
	configs := []Config{
		{ID: "prod/api:80", Endpoints: all[:4]},
		{ID: "prod/api:80", Endpoints: all[1:6]},
		{ID: "prod/api:80", Endpoints: all, weights: []int{1, 2, 3, 1, 2, 3}},
		{ID: "prod/api:80", Endpoints: all[2:], Algorithm: LeastConn},
		{ID: "prod/api:80", Endpoints: all, Algorithm: Hash, HashKey: mustHashKey(t, "$request_uri")},
	}
	var current atomic.Pointer[Balancer]
	current.Store(r.Balancer(configs[0]))

	var (
		counters sync.Map // *counter -> struct{}: every counter ever picked
		stop     atomic.Bool
		wg       sync.WaitGroup
		picks    atomic.Int64
	)
	for g := range 8 {
		wg.Go(func() {
			var tried [2]Endpoint
			for i := 0; !stop.Load(); i++ {
				b := current.Load()
				key := fmt.Sprintf("/p/%d", (g*7+i)%50)
				e, ok := b.Pick(key)
				if !ok {
					continue
				}
				counters.Store(e.inflight, struct{}{})
				tried[0] = e
				if retry, ok := b.Pick(key, tried[:1]...); ok {
					counters.Store(retry.inflight, struct{}{})
					retry.Release()
				}
				picks.Add(1)
				e.Release()
			}
		})
	}
	// Rebuild every millisecond until many rebuilds have overlapped with
	// picking.
	for rebuild := 1; rebuild <= 200 || picks.Load() < 1000; rebuild++ {
		time.Sleep(time.Millisecond)
		b := r.Balancer(configs[rebuild%len(configs)])
		current.Store(b)
		r.Sweep([]*Balancer{b})
	}
	stop.Store(true)
	wg.Wait()

	counters.Range(func(k, _ any) bool {
		require.Zero(t, k.(*counter).n.Load())
		return true
	})
	for _, addr := range all {
		require.Zero(t, r.InFlight(addr), addr)
	}

	// The quiescent stretch.
	b := r.Balancer(configs[1])
	current.Store(b)
	perEndpoint := make([]atomic.Int64, b.Len())
	index := make(map[string]int)
	for i, e := range b.endpoints {
		index[e.Addr] = i
	}
	const perGoroutine = 2003
	for range 8 {
		wg.Go(func() {
			for range perGoroutine {
				e, ok := current.Load().Pick("")
				if !ok {
					panic("no endpoint")
				}
				perEndpoint[index[e.Addr]].Add(1)
				e.Release()
			}
		})
	}
	wg.Wait()
	lo, hi := int64(1<<62), int64(0)
	var total int64
	for i := range perEndpoint {
		n := perEndpoint[i].Load()
		lo, hi, total = min(lo, n), max(hi, n), total+n
	}
	require.Equal(t, int64(8*perGoroutine), total)
	require.LessOrEqual(t, hi-lo, int64(1), "round-robin fair within one request per endpoint")
	for _, addr := range all {
		require.Zero(t, r.InFlight(addr), addr)
	}
}
