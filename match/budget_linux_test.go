//go:build linux

package match

import (
	"fmt"
	"runtime"
	"syscall"
	"testing"
)

// The lookup budgets of SPEC §20 (a table without Gateway listeners
// looked up as before; a plain lookup with two listeners on one port
// within 5% of one; a lookup with conditions at 10,000 routes) as CPU time: on a shared machine the wall time of
// BenchmarkLookup and BenchmarkLookupListeners moves by tens of percent
// with the load, while the CPU time of the thread that looks up counts
// only its own work. Compare runs with benchstat on the cpu-ns/op
// metric.

// threadCPU is the CPU time the calling OS thread has used.
func threadCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_THREAD, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// cpuLoop runs lookup b.N times on one locked thread and reports its CPU
// time per lookup.
func cpuLoop(b *testing.B, lookup func(i int)) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.ReportAllocs()
	start := threadCPU()
	i := 0
	for b.Loop() {
		lookup(i)
		i++
	}
	b.ReportMetric(float64(threadCPU()-start)/float64(b.N), "cpu-ns/op")
}

func BenchmarkLookupCPU(b *testing.B) {
	for _, n := range benchSizes {
		fx := newBenchFixture(b, n)
		b.Run(fmt.Sprintf("routes=%d", n), func(b *testing.B) {
			cpuLoop(b, func(i int) {
				r := &fx.reqs[i&4095]
				if fx.table.Lookup(r.host, r.path).Route != r.want {
					b.Fatal("wrong route")
				}
			})
		})
	}
}

func BenchmarkLookupConditionsCPU(b *testing.B) {
	tab, qs, hs, ps, want := condFixture(b)
	cpuLoop(b, func(i int) {
		k := i & 4095
		if tab.LookupRequest(hs[k], ps[k], &qs[k]).Route != want[k] {
			b.Fatal("wrong route")
		}
	})
}

func BenchmarkLookupListenersCPU(b *testing.B) {
	l := Listener{Port: 80}
	b.Run("listeners=0", func(b *testing.B) {
		fx := newBenchFixture(b, 10000)
		cpuLoop(b, func(i int) {
			r := &fx.reqs[i&4095]
			if fx.table.LookupOn(l, r.host, r.path, nil).Route != r.want {
				b.Fatal("wrong route")
			}
		})
	})
	for _, two := range []bool{false, true} {
		tab, reqs := listenerBenchTable(b, two)
		b.Run(fmt.Sprintf("listeners=%d", map[bool]int{false: 1, true: 2}[two]), func(b *testing.B) {
			cpuLoop(b, func(i int) {
				r := &reqs[i&4095]
				if tab.LookupOn(l, r.host, r.path, nil).Route != r.want {
					b.Fatal("wrong route")
				}
			})
		})
	}
}
