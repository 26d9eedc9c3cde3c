package compile

import (
	"testing"

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
