package compile

import (
	"slices"
	"strconv"
	"testing"
)

// BenchmarkRecompile changes one object of an n-Ingress snapshot per
// iteration and compiles it with a Compiler that compiled the previous
// one: an Ingress (a path added, then removed again), or, with
// "-endpoints", one EndpointSlice's addresses. Each result is checked
// against Compile's digest before the timing starts. "-full" times
// Compile of the same snapshots, for a comparison within one run.
func BenchmarkRecompile(b *testing.B) {
	for _, n := range []int{1000, 10000, 50000} {
		for _, kind := range []string{"", "-endpoints", "-full"} {
			b.Run(strconv.Itoa(n)+kind, func(b *testing.B) {
				base := benchSnapshot(n)
				versions := make([]Snapshot, 2)
				for v := range versions {
					s := base
					i := n / 2
					if kind != "-endpoints" {
						s.Ingresses = slices.Clone(base.Ingresses)
						ing := base.Ingresses[i].DeepCopy()
						if v == 1 {
							paths := &ing.Spec.Rules[0].HTTP.Paths
							*paths = append(*paths, prefix("/added/", "svc-"+strconv.Itoa(i), 80))
						}
						s.Ingresses[i] = ing
					} else {
						s.EndpointSlices = slices.Clone(base.EndpointSlices)
						sl := base.EndpointSlices[i].DeepCopy()
						if v == 1 {
							sl.Endpoints = sl.Endpoints[1:]
						}
						s.EndpointSlices[i] = sl
					}
					versions[v] = s
				}
				if kind == "-full" {
					b.ReportAllocs()
					defer reportCPU(b)()
					v := 0
					for b.Loop() {
						v++
						Compile(versions[v%2], Options{})
					}
					return
				}
				c := &Compiler{}
				for v := range 3 {
					got := c.Compile(versions[v%2])
					if want := Compile(versions[v%2], Options{}); got.Table.Digest() != want.Table.Digest() || got.String() != want.String() {
						b.Fatal("the Compiler's table differs from Compile's")
					}
				}
				if c.recompiles == 0 {
					b.Fatal("no recompile")
				}
				b.ReportAllocs()
				stop := reportCPU(b)
				v := 0
				for b.Loop() {
					v++
					c.Compile(versions[v%2])
				}
				stop()
				if c.recompiles < v {
					b.Fatalf("%d of %d compiles recompiled", c.recompiles, v)
				}
			})
		}
	}
}
