package gatewayapi

import (
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"ramjet.dev/ramjet/compile"
)

// routeWorld is n routes of one kind on one Gateway, each on its own
// host with one rule of one match (an HTTPRoute's Exact path
// /pkg.SvcN/Get, a GRPCRoute's Exact service pkg.SvcN and method Get, the
// same table key) with a header match, to its own Service.
func routeWorld(n int, httpRoutes, grpcRoutes bool) (Objects, compile.Snapshot) {
	o := Objects{GatewayClasses: classes(), Gateways: []*gwv1.Gateway{gateway("infra", "gw", "ours", listener("http", "", gwv1.NamespacesFromAll))}}
	var snap compile.Snapshot
	parents := []gwv1.ParentReference{{Name: "gw", Namespace: new(gwv1.Namespace("infra"))}}
	for i := range n {
		name := "r" + strconv.Itoa(i)
		svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "app", Name: name}, Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}
		o.Services = append(o.Services, svc)
		snap.Services = append(snap.Services, svc)
		snap.EndpointSlices = append(snap.EndpointSlices, &discoveryv1.EndpointSlice{
			ObjectMeta:  metav1.ObjectMeta{Namespace: "app", Name: name, Labels: map[string]string{discoveryv1.LabelServiceName: name}},
			AddressType: discoveryv1.AddressTypeIPv4,
			Ports:       []discoveryv1.EndpointPort{{Name: new(""), Port: new(int32(8080))}},
			Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"10.1." + strconv.Itoa(i/250) + "." + strconv.Itoa(i%250+1)}}},
		})
		if httpRoutes {
			path := "/pkg.Svc" + strconv.Itoa(i) + "/Get"
			o.HTTPRoutes = append(o.HTTPRoutes, httpRoute("app", name, parents, []gwv1.Hostname{gwv1.Hostname(name + ".example.com")},
				gwv1.HTTPRouteRule{
					Matches:     []gwv1.HTTPRouteMatch{{Path: &gwv1.HTTPPathMatch{Type: new(gwv1.PathMatchExact), Value: &path}, Headers: []gwv1.HTTPHeaderMatch{{Name: "version", Value: "v1"}}}},
					BackendRefs: []gwv1.HTTPBackendRef{toService("", name, 80)},
				}))
		}
		if grpcRoutes {
			b := grpcBackend(name)
			o.GRPCRoutes = append(o.GRPCRoutes, grpcRoute("app", name, 7, parents, []gwv1.Hostname{gwv1.Hostname(name + ".grpc.example.com")},
				gwv1.GRPCRouteRule{
					Matches:     []gwv1.GRPCRouteMatch{{Method: &gwv1.GRPCMethodMatch{Service: new("pkg.Svc" + strconv.Itoa(i)), Method: new("Get")}, Headers: []gwv1.GRPCHeaderMatch{{Name: "version", Value: "v1"}}}},
					BackendRefs: []gwv1.GRPCBackendRef{b},
				}))
		}
	}
	return o, snap
}

// BenchmarkCompileRoutes: 10,000 GRPCRoutes against 10,000 HTTPRoutes of
// the same shape, translated (status included) and compiled into a table;
// the budget is GRPCRoutes within 1.5x. Both: 10,000 of each on one
// listener, which the HTTPRoute/GRPCRoute hostname rule compares.
func BenchmarkCompileRoutes(b *testing.B) {
	const n = 10000
	for _, c := range []struct {
		name       string
		http, grpc bool
	}{{"HTTPRoute", true, false}, {"GRPCRoute", false, true}, {"Both", true, true}} {
		o, base := routeWorld(n, c.http, c.grpc)
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				snap := base
				tr := TranslateAll(o)
				tr.AddTo(&snap)
				res := compile.Compile(snap, compile.Options{})
				if len(res.Warnings) > 0 {
					b.Fatal(res.Warnings[0])
				}
			}
		})
	}
}
