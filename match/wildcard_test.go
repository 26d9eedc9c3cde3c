package match

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestDeepWildcard: a DeepWildcard host matches names any number of labels
// below it, the longest wildcard first, an exact name before both; a
// one-label wildcard keeps ingress-nginx's rule; IP literals never match.
func TestDeepWildcard(t *testing.T) {
	be := func(id string) *Backend { return &Backend{ID: id, Endpoints: []string{"10.0.0.1:80"}} }
	deep, deeper, shallow, exact := be("deep"), be("deeper"), be("shallow"), be("exact")
	tab := mustNew(t, Spec{VirtualHosts: []*VirtualHost{
		{Name: "*.example.com", DeepWildcard: true, Fallback: deep},
		{Name: "*.b.example.com", DeepWildcard: true, Fallback: deeper},
		{Name: "*.one.test", Fallback: shallow},
		{Name: "x.y.example.com", Fallback: exact},
		{Name: "*.0.1", DeepWildcard: true, Fallback: be("ip")},
	}})
	for host, want := range map[string]*Backend{
		"a.example.com":       deep,
		"a.c.example.com":     deep,
		"x.y.z.example.com":   deep,
		"b.example.com":       deep,
		"a.b.example.com":     deeper, // the longer wildcard
		"a.a.b.example.com":   deeper,
		"q.r.a.b.example.com": deeper,
		"x.y.example.com":     exact,
		"example.com":         nil,
		"a.one.test":          shallow,
		"a.b.one.test":        nil,
		"10.0.0.1":            nil,
	} {
		res := tab.Lookup(host, "/")
		assert.Same(t, want, res.Backend, host)
	}
	one := mustNew(t, Spec{VirtualHosts: []*VirtualHost{{Name: "*.example.com", Fallback: deep}}})
	assert.Nil(t, one.Lookup("a.b.example.com", "/").Backend, "a table without deep wildcards keeps one label")
	assert.Contains(t, tab.String(), "*.example.com any-depth")
}

// TestAnyNameCertificate: a certificate for AnyName answers every server
// name, and a ClientHello without one, that no other certificate serves.
func TestAnyNameCertificate(t *testing.T) {
	a := &Certificate{Secret: "ns/a", Hosts: []string{"a.test"}}
	b := &Certificate{Secret: "ns/b", Hosts: []string{"*.b.test"}}
	c := &Certificate{Secret: "ns/c", Hosts: []string{AnyName, "c.test"}}
	tab := mustNew(t, Spec{Certificates: []*Certificate{a, b, c}})
	for name, want := range map[string]*Certificate{"a.test": a, "x.b.test": b, "c.test": c, "other.example": c, "": c, "x.y.b.test": c} {
		assert.Same(t, want, tab.Certificate(name), name)
	}
	none := mustNew(t, Spec{Certificates: []*Certificate{a}})
	assert.Nil(t, none.Certificate("other.example"))
	assert.Nil(t, none.Certificate(""))
}

// TestWildcardLabelBytes: ingress-nginx serves an Ingress wildcard host as
// the server_name regex ^(?<subdomain>[\w-]+)\.rest$, so only a first label
// of letters, digits, '_' and '-' reaches it; any other name goes to the
// catch-all. A deep (Gateway API) wildcard and an alias keep taking any label.
func TestWildcardLabelBytes(t *testing.T) {
	be := func(id string) *Backend { return &Backend{ID: id, Endpoints: []string{"10.0.0.1:80"}} }
	wild, deep, alias, any := be("wild"), be("deep"), be("alias"), be("any")
	tab := mustNew(t, Spec{VirtualHosts: []*VirtualHost{
		{Fallback: any},
		{Name: "*.example.com", Fallback: wild},
		{Name: "*.gw.test", DeepWildcard: true, Fallback: deep},
		{Name: "aliased.test", Fallback: alias, Actions: &HostActions{Aliases: []string{"*.alias.test"}}},
	}})
	for host, want := range map[string]*Backend{
		"a.example.com":          wild,
		"a_b-9.example.com":      wild,
		"x'or'1.example.com":     any,
		"*.example.com":          any,
		"a%41.example.com":       any,
		"a~b.example.com":        any,
		"\xc3\xa9.example.com":   any,
		"x'y.gw.test":            deep,
		"x!y.alias.test":         alias,
		"plain.alias.test":       alias,
		"x.y.plain.example.com":  any,
		"a-.example.com":         wild,
		"-.example.com":          wild,
		"__.example.com":         wild,
		"0123456789.example.com": wild,
	} {
		assert.Same(t, want, tab.Lookup(host, "/").Backend, host)
	}
}
