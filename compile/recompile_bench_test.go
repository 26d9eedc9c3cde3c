package compile

import (
	"slices"
	"strconv"
	"testing"

	"ramjet.dev/ramjet/match"
)

// BenchmarkRecompile changes one object of an n-Ingress snapshot per
// iteration and compiles it with a Compiler that compiled the previous
// one: an Ingress (a path added, then removed again), or, with
// "-endpoints", one EndpointSlice's addresses. Each result is checked
// against Compile's digest before the timing starts. "-full" times
// Compile of the same snapshots, for a comparison within one run;
// "-gateway" changes an Ingress of a snapshot with Gateway listeners (an
// HTTPS one, and one whose hostname an Ingress serves) and a TLSRoute.
func BenchmarkRecompile(b *testing.B) {
	for _, n := range []int{1000, 10000, 50000} {
		for _, kind := range []string{"", "-endpoints", "-full", "-gateway"} {
			b.Run(strconv.Itoa(n)+kind, func(b *testing.B) {
				base := benchSnapshot(n)
				if kind == "-gateway" {
					tls := match.Listener{Port: 443, TLS: true}
					base.Listeners = []match.ListenerHost{{Listener: tls}, {Listener: match.Listener{Port: 80}, Hostname: "host-1.example.com"}}
					base.PassthroughListeners = []match.ListenerHost{{Listener: match.Listener{Port: 8443, TLS: true}, Hostname: "db.example.com"}}
					base.TLSRoutes = []*TLSRoute{{Namespace: "ns-0", Name: "db", Listener: match.Listener{Port: 8443, TLS: true},
						ListenerHostname: "db.example.com", Hostnames: []string{"db.example.com"}, Field: "spec.rules[0]",
						Backends: []WeightedBackend{{Service: ServiceRef{Namespace: "ns-0", Name: "svc-0", Port: "80"}, Weight: 1, Field: "spec.rules[0].backendRefs[0]"}}}}
				}
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
