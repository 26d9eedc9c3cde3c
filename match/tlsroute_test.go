package match

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func passthroughTable(t testing.TB) *Table {
	t.Helper()
	a := &Backend{ID: "ns/a:443", Namespace: "ns", Name: "a", Port: 443}
	b := &Backend{ID: "ns/b:443", Namespace: "ns", Name: "b", Port: 443}
	tls443 := Listener{Port: 443, TLS: true}
	route := func(lh, h string, be *Backend) *PassthroughRoute {
		r := &PassthroughRoute{Listener: tls443, ListenerHostname: lh, Hostname: h,
			Source: Source{Kind: "TLSRoute", Namespace: "ns", Name: h}}
		if be != nil {
			r.Split = &Split{Alternatives: []Alternative{{Backend: be, Weight: 1}}}
		}
		return r
	}
	tbl, err := New(Spec{
		Backends: []*Backend{a, b},
		PassthroughRoutes: []*PassthroughRoute{
			route("*.example.com", "abc.example.com", a),
			route("*.example.com", "*.example.com", b),
			route("", "*.org", a),
			route("", "invalid.net", nil),
		},
		PassthroughListeners: []PassthroughListener{{Listener: tls443, Hostname: "*.example.com"}, {Listener: tls443}, {Listener: tls443, Hostname: "idle.io"}},
		// An HTTPS listener on the same port, more specific than the TLS one
		// for its name.
		Listeners: []ListenerHost{{Listener: tls443, Hostname: "www.example.com"}, {Listener: Listener{Port: 8443, TLS: true}}},
	})
	require.NoError(t, err)
	return tbl
}

func TestPassthroughOn(t *testing.T) {
	tbl := passthroughTable(t)
	tls443 := Listener{Port: 443, TLS: true}
	for _, c := range []struct {
		l       Listener
		sni     string
		backend string // "" with claimed: refused
		claimed bool
	}{
		{tls443, "abc.example.com", "ns/a:443", true},
		{tls443, "ABC.example.com.", "ns/a:443", true},
		{tls443, "other.example.com", "ns/b:443", true},
		{tls443, "deep.other.example.com", "ns/b:443", true},
		{tls443, "www.example.com", "", false}, // the HTTPS listener's
		{tls443, "x.org", "ns/a:443", true},
		{tls443, "invalid.net", "", true}, // a route without a backend
		{tls443, "nomatch.net", "", true}, // the "" TLS listener's, no route
		{tls443, "idle.io", "", true},     // a listener without routes
		{tls443, "", "", true},
		{Listener{Port: 8443, TLS: true}, "abc.example.com", "", false},
		{Listener{Port: 443}, "abc.example.com", "", false},
	} {
		r, claimed := tbl.PassthroughOn(c.l, c.sni)
		assert.Equal(t, c.claimed, claimed, "%v %q", c.l, c.sni)
		got := ""
		if r != nil && r.Split != nil && r.Split.Alternatives[0].Backend != nil {
			got = r.Split.Alternatives[0].Backend.ID
		}
		assert.Equal(t, c.backend, got, "%v %q", c.l, c.sni)
	}
	assert.True(t, tbl.HasPassthrough())
	text := tbl.String()
	for _, line := range []string{
		"tls-listener 443 *.example.com passthrough\n",
		"tls-listener 443 idle.io passthrough\n",
		"tls-listener 443 www.example.com terminate\n",
		"tls-route 443 *.example.com abc.example.com -> 1*ns/a:443 from TLSRoute ns/abc.example.com\n",
		"tls-route 443 * invalid.net -> refused from TLSRoute ns/invalid.net\n",
	} {
		assert.Contains(t, text, line)
	}
	assert.NotContains(t, text, "tls-listener 8443", "a port without passthrough listeners")
}

// A table without passthrough routes keeps its digest: the part is new.
func TestPassthroughDigest(t *testing.T) {
	be := &Backend{ID: "ns/a:443", Namespace: "ns", Name: "a", Port: 443}
	spec := func(routes ...*PassthroughRoute) Spec {
		return Spec{Backends: []*Backend{be}, VirtualHosts: []*VirtualHost{{Name: "x", Routes: []*Route{{Type: Prefix, Path: "", Backend: be}}}}, PassthroughRoutes: routes}
	}
	plain, err := New(spec())
	require.NoError(t, err)
	with, err := New(spec(&PassthroughRoute{Listener: Listener{Port: 443, TLS: true}, Hostname: "a.io",
		Split: &Split{Alternatives: []Alternative{{Backend: be, Weight: 1}}}}))
	require.NoError(t, err)
	other, err := New(spec(&PassthroughRoute{Listener: Listener{Port: 443, TLS: true}, Hostname: "b.io",
		Split: &Split{Alternatives: []Alternative{{Backend: be, Weight: 1}}}}))
	require.NoError(t, err)
	assert.False(t, plain.HasPassthrough())
	assert.NotEqual(t, plain.Digest(), with.Digest())
	assert.NotEqual(t, with.Digest(), other.Digest())
	assert.False(t, strings.Contains(plain.String(), "tls-"))

	_, err = New(spec(&PassthroughRoute{Listener: Listener{Port: 443}, Hostname: "a.io"}))
	assert.Error(t, err, "a passthrough route on a plain port")
}

// A name no listener on the port accepts is refused, unless an Ingress
// (a host without a Listener) serves it.
func TestPassthroughUnlistenedName(t *testing.T) {
	be := &Backend{ID: "ns/a:443", Namespace: "ns", Name: "a", Port: 443}
	tls443 := Listener{Port: 443, TLS: true}
	tbl, err := New(Spec{
		Backends:     []*Backend{be},
		VirtualHosts: []*VirtualHost{{Name: "ingress.org", Routes: []*Route{{Type: Prefix, Path: "", Backend: be}}}},
		PassthroughRoutes: []*PassthroughRoute{{Listener: tls443, ListenerHostname: "*.example.com", Hostname: "*.example.com",
			Split: &Split{Alternatives: []Alternative{{Backend: be, Weight: 1}}}}},
	})
	require.NoError(t, err)
	r, claimed := tbl.PassthroughOn(tls443, "x.example.com")
	assert.True(t, claimed)
	assert.NotNil(t, r)
	r, claimed = tbl.PassthroughOn(tls443, "other.net")
	assert.True(t, claimed, "no listener, no Ingress: refused")
	assert.Nil(t, r)
	_, claimed = tbl.PassthroughOn(tls443, "ingress.org")
	assert.False(t, claimed, "an Ingress's host is terminated")

	// Beside a TLS listener without a hostname, an Ingress's host keeps
	// the names it takes more specifically than the route.
	tbl, err = New(Spec{
		Backends: []*Backend{be},
		VirtualHosts: []*VirtualHost{
			{Name: "shop.example.com", Routes: []*Route{{Type: Prefix, Path: "", Backend: be}}},
			{Name: "*.example.com", Routes: []*Route{{Type: Prefix, Path: "", Backend: be}}},
			{Name: "*.org", Routes: []*Route{{Type: Prefix, Path: "", Backend: be}}},
		},
		PassthroughRoutes: []*PassthroughRoute{{Listener: tls443, Hostname: "*.example.com",
			Split: &Split{Alternatives: []Alternative{{Backend: be, Weight: 1}}}}},
		PassthroughListeners: []PassthroughListener{{Listener: tls443}},
	})
	require.NoError(t, err)
	for name, want := range map[string]bool{
		"shop.example.com": false, // the Ingress's exact name
		"db.example.com":   true,  // the route's wildcard, as specific as the Ingress's
		"x.org":            false, // the Ingress's wildcard over the listener's none
		"x.net":            true,  // the listener's, no route: refused
	} {
		_, claimed := tbl.PassthroughOn(tls443, name)
		assert.Equal(t, want, claimed, name)
	}
}

// FuzzPassthroughOn: a ClientHello's server name is the client's to
// choose. Any name decides without panicking, the same way whatever its
// case and a trailing dot, and a route returned is one of the table's on
// that listener.
func FuzzPassthroughOn(f *testing.F) {
	for _, s := range []string{"", "abc.example.com", "x.org", ".", "..", "*.example.com", "a..example.com", ".example.com", "www.example.com.", "idle.io", "\x00", "é.example.com"} {
		f.Add(s)
	}
	tbl := passthroughTable(f)
	tls443 := Listener{Port: 443, TLS: true}
	f.Fuzz(func(t *testing.T, name string) {
		r, claimed := tbl.PassthroughOn(tls443, name)
		if r != nil {
			if !claimed || r.Listener != tls443 {
				t.Fatalf("%q: route %+v, claimed %v", name, r, claimed)
			}
		}
		if strings.HasSuffix(name, ".") {
			return
		}
		upper := []byte(name) // byte by byte: a name need not be UTF-8
		for i, c := range upper {
			if 'a' <= c && c <= 'z' {
				upper[i] = c - 'a' + 'A'
			}
		}
		if r2, claimed2 := tbl.PassthroughOn(tls443, string(upper)+"."); r2 != r || claimed2 != claimed {
			t.Fatalf("%q: %v %v; upper-case with a dot: %v %v", name, r, claimed, r2, claimed2)
		}
	})
}

// Update on a table with Gateway TLS passthrough keeps its listeners and
// routes: a host added beside them answers, and the passthrough answers
// and digest are New's.
func TestUpdateKeepsPassthroughRoutes(t *testing.T) {
	tbl := passthroughTable(t)
	next, err := tbl.Update(Changes{VirtualHosts: []*VirtualHost{{Name: "added.test"}}})
	require.NoError(t, err)
	want, err := New(func() Spec {
		s := tbl.spec
		s.Backends = tbl.backends
		s.VirtualHosts = append(slices.Clone(tbl.hosts), &VirtualHost{Name: "added.test"})
		return s
	}())
	require.NoError(t, err)
	assert.Equal(t, want.String(), next.String())
	assert.Equal(t, want.Digest(), next.Digest())
	r, claimed := next.PassthroughOn(Listener{Port: 443, TLS: true}, "abc.example.com")
	require.True(t, claimed)
	require.NotNil(t, r)
	assert.Equal(t, "ns/a:443", r.Split.Alternatives[0].Backend.ID)
}
