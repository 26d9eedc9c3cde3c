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
