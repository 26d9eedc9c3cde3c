package compile

import (
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
)

// benchSnapshot has n Ingresses, each with one host and two paths (one
// Exact, one Prefix) to its own Service, which has three ready endpoints in
// one EndpointSlice.
func benchSnapshot(n int) Snapshot {
	s := Snapshot{
		IngressClasses: []*networkingv1.IngressClass{mkClass("ramjet", DefaultControllerName)},
		Ingresses:      make([]*networkingv1.Ingress, 0, n),
		Services:       make([]*corev1.Service, 0, n),
		EndpointSlices: make([]*discoveryv1.EndpointSlice, 0, n),
	}
	for i := range n {
		id := strconv.Itoa(i)
		svc := "svc-" + id
		s.Ingresses = append(s.Ingresses, mkIngress("ns-"+strconv.Itoa(i%50), "ing-"+id, int64(i/10),
			withRules(mkRule("host-"+id+".example.com", exact("/exact", svc, 80), prefix("/prefix/", svc, "http")))))
		s.Services = append(s.Services, mkService("ns-"+strconv.Itoa(i%50), svc, "http:80:8080"))
		a, b := strconv.Itoa(i/250), strconv.Itoa(i%250)
		s.EndpointSlices = append(s.EndpointSlices, mkSlice("ns-"+strconv.Itoa(i%50), svc, svc+"-abc", "http", 8080,
			"10.1."+a+"."+b, "10.2."+a+"."+b, "10.3."+a+"."+b))
	}
	return s
}

func BenchmarkCompile(b *testing.B) {
	for _, n := range []int{100, 1000, 10000, 100000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			s := benchSnapshot(n)
			tab, ws := compileTable(s, Options{})
			if len(ws) != 0 || tab.Size().Backends != n || tab.Size().VirtualHosts != n+1 {
				b.Fatalf("unexpected table: %d warnings, %d backends, %d hosts", len(ws), tab.Size().Backends, tab.Size().VirtualHosts)
			}
			b.ReportAllocs()
			for b.Loop() {
				Compile(s, Options{})
			}
		})
	}
}
