package compile

import (
	"strconv"
	"strings"
	"testing"

	discoveryv1 "k8s.io/api/discovery/v1"

	"ramjet.dev/ramjet/match"
)

// TestCompilerFollowsPassthrough: a snapshot that differs from the one
// before only by its TLSRoutes or passthrough listeners (a TLSRoute
// applied, a TLS listener added) is compiled again, not answered with the
// previous table.
func TestCompilerFollowsPassthrough(t *testing.T) {
	l := match.Listener{Port: 443, TLS: true}
	c := &Compiler{}
	empty := c.Compile(Snapshot{})
	withListener := Snapshot{PassthroughListeners: []match.ListenerHost{{Listener: l, Hostname: "*.tls.test"}}}
	r := c.Compile(withListener)
	if r.Table.Digest() == empty.Table.Digest() {
		t.Fatal("a passthrough listener added: the previous table was kept")
	}
	withRoute := withListener
	withRoute.TLSRoutes = []*TLSRoute{{Namespace: "app", Name: "db", Listener: l, ListenerHostname: "*.tls.test",
		Hostnames: []string{"db.tls.test"}, Field: "spec.rules[0]", Backends: []WeightedBackend{{Weight: 1, Invalid: "test"}}}}
	r2 := c.Compile(withRoute)
	if len(r2.Table.PassthroughRoutes()) != 1 {
		t.Fatalf("a TLSRoute added: %d passthrough routes\n%s", len(r2.Table.PassthroughRoutes()), r2.Table)
	}
	r3 := c.Compile(withListener)
	if len(r3.Table.PassthroughRoutes()) != 0 {
		t.Fatal("a TLSRoute removed: still served")
	}
}

// TestRecompileGatewayEndpoints: an endpoint-only change reaches what
// Gateway listeners and TLS passthrough hold of the backends, as Compile's
// table does: a listener's copy of the catch-all, whose hostless rule
// sends to web, and a TLSRoute sending to db.
func TestRecompileGatewayEndpoints(t *testing.T) {
	l := match.Listener{Port: 443, TLS: true}
	s := mkSnapshot(
		mkIngress("app", "web", 1, withClassName("ramjet"), withRules(mkRule("", prefix("/", "web", 80)), mkRule("web.example.com", prefix("/", "web", 80)))),
		mkService("app", "web", "http:80:8080"), mkService("app", "db", "pg:5432:5432"),
		mkSlice("app", "web", "web-1", "http", 8080, "10.0.0.1"),
		mkSlice("app", "db", "db-1", "pg", 5432, "10.0.1.1"),
	)
	s.Listeners = []match.ListenerHost{{Listener: l, Hostname: "*.example.com"}, {Listener: l, Hostname: "other.example.com"}}
	s.TLSRoutes = []*TLSRoute{{Namespace: "app", Name: "db", Listener: l, ListenerHostname: "db.tls.test",
		Hostnames: []string{"db.tls.test"}, Field: "spec.rules[0]",
		Backends: []WeightedBackend{{Service: ServiceRef{Namespace: "app", Name: "db", Port: "5432"}, Weight: 1, Field: "spec.rules[0].backendRefs[0]"}}}}
	s.PassthroughListeners = []match.ListenerHost{{Listener: l, Hostname: "db.tls.test"}}

	// What a request or a connection reaches, endpoints included.
	reach := func(tab *match.Table) string {
		var out []string
		for _, host := range []string{"any.test", "web.example.com", "other.example.com"} {
			for _, on := range []match.Listener{{}, l} {
				r := tab.LookupOn(on, host, "/", nil)
				if r.Backend != nil {
					out = append(out, host+" on "+on.String()+": "+r.Backend.ID+" "+strings.Join(r.Backend.Endpoints, ","))
				}
			}
		}
		if r, _ := tab.PassthroughOn(l, "db.tls.test"); r != nil && r.Split != nil {
			for _, a := range r.Split.Alternatives {
				out = append(out, "passthrough: "+a.Backend.ID+" "+strings.Join(a.Backend.Endpoints, ","))
			}
		}
		return strings.Join(out, "\n")
	}
	c := &Compiler{}
	check := func(what string) {
		t.Helper()
		got, want := c.Compile(s), Compile(s, Options{})
		if got.String() != want.String() || got.Table.Digest() != want.Table.Digest() || reach(got.Table) != reach(want.Table) {
			t.Fatalf("%s: the Compiler's table differs from Compile's\n--- Compile:\n%s\n%s\n--- Compiler:\n%s\n%s", what, want, reach(want.Table), got, reach(got.Table))
		}
	}
	check("first")
	for i, svc := range []string{"web", "db", "web", "db"} {
		sl := s.EndpointSlices
		s.EndpointSlices = nil
		for _, x := range sl {
			if x.Labels[discoveryv1.LabelServiceName] == svc {
				x = x.DeepCopy()
				x.Endpoints[0].Addresses = []string{"10.0.2." + strconv.Itoa(i+1)}
			}
			s.EndpointSlices = append(s.EndpointSlices, x)
		}
		check("endpoints of " + svc)
	}
	if c.recompiles == 0 {
		t.Fatalf("nothing was recompiled: %v", c.fullReasons)
	}
}
