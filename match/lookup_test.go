package match

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func backend(name string) *Backend {
	return &Backend{ID: "prod/" + name + ":80", Namespace: "prod", Name: name, Port: 80, Endpoints: []string{"10.0.0.1:8080"}}
}

func exact(path string, b *Backend, order int) *Route {
	return &Route{Type: Exact, Path: path, Backend: b, Order: int32(order), Source: Source{Namespace: "prod", Name: "shop", Field: "spec.rules[0].http.paths[0]"}}
}

func prefix(path string, b *Backend, order int) *Route {
	return &Route{Type: Prefix, Path: path, Backend: b, Order: int32(order), Source: Source{Namespace: "prod", Name: "shop", Field: "spec.rules[0].http.paths[0]"}}
}

func regex(t testing.TB, pattern string, b *Backend, order int) *Route {
	t.Helper()
	re, err := CompileRegex(pattern, 0)
	require.NoError(t, err)
	return &Route{Type: Regex, Path: pattern, Backend: b, Order: int32(order), Regexp: re, Source: Source{Namespace: "prod", Name: "shop", Field: "spec.rules[0].http.paths[0]"}}
}

// lookupTable covers every rule of SPEC §3–§5 in one table.
// mustNew builds a table from a spec the test knows to be valid.
func mustNew(tb testing.TB, s Spec) *Table {
	tb.Helper()
	tab, err := New(s)
	require.NoError(tb, err)
	return tab
}

func lookupTable(t testing.TB) *Table {
	t.Helper()
	hosts := []*VirtualHost{
		{
			Name: "shop.example.com",
			Routes: []*Route{
				exact("/checkout", backend("checkout"), 1),
				exact("/api", backend("api-exact"), 2),
				prefix("/api", backend("api"), 3),
				prefix("/api/v1", backend("api-v1"), 4),
				prefix("/static", backend("static"), 5),
				regex(t, `/img/.*\.png`, backend("images"), 6),
				regex(t, `/img/(?!private/).*`, backend("img-public"), 7),
				exact("/Case", backend("case"), 8),
				exact("/slash/", backend("slash"), 9),
			},
			Fallback: backend("shop-default"),
		},
		{Name: "*.example.com", Routes: []*Route{prefix("", backend("wild"), 10)}},
		{Name: "*.0.0.1", Routes: []*Route{prefix("", backend("numeric-wild"), 19)}},
		// An exact host with nothing: 404, never the wildcard or catch-all.
		{Name: "empty.example.com"},
		{Name: "noroot.example.com", Routes: []*Route{prefix("/x", backend("noroot-x"), 11)}},
		{
			Name: "*.apps.example.com",
			Routes: []*Route{
				regex(t, `/old|/legacy`, backend("legacy"), 12),
				regex(t, `/v[0-9]+/`, backend("versioned"), 13),
			},
		},
		{
			// Keys of 127 bytes and more share one length bit.
			Name: "long.example.com",
			Routes: []*Route{
				prefix(longPath(130), backend("long-130"), 16),
				prefix(longPath(200), backend("long-200"), 17),
				exact(longPath(127), backend("long-exact"), 18),
			},
		},
		{
			Name:     "",
			Routes:   []*Route{exact("/healthz", backend("health"), 14), prefix("", backend("catchall"), 15)},
			Fallback: backend("never"),
		},
	}
	return mustNew(t, Spec{VirtualHosts: hosts})
}

func TestLookup(t *testing.T) {
	tab := lookupTable(t)
	tests := []struct {
		name, host, path string
		wantHost         string // virtual host name chosen
		wantBackend      string // "" for 404
		wantFallback     bool   // no route matched
	}{
		{"exact path", "shop.example.com", "/checkout", "shop.example.com", "prod/checkout:80", false},
		{"exact trailing slash counts", "shop.example.com", "/checkout/", "shop.example.com", "prod/shop-default:80", true},
		{"exact with trailing slash declared", "shop.example.com", "/slash/", "shop.example.com", "prod/slash:80", false},
		{"exact with trailing slash, request without", "shop.example.com", "/slash", "shop.example.com", "prod/shop-default:80", true},
		{"exact beats prefix on the same path", "shop.example.com", "/api", "shop.example.com", "prod/api-exact:80", false},
		{"prefix owns the slashed path", "shop.example.com", "/api/", "shop.example.com", "prod/api:80", false},
		{"prefix below", "shop.example.com", "/api/users", "shop.example.com", "prod/api:80", false},
		{"longer prefix exact length", "shop.example.com", "/api/v1", "shop.example.com", "prod/api-v1:80", false},
		{"longer prefix slashed", "shop.example.com", "/api/v1/", "shop.example.com", "prod/api-v1:80", false},
		{"longest prefix wins", "shop.example.com", "/api/v1/users/7", "shop.example.com", "prod/api-v1:80", false},
		{"element boundary: /api/v10 is not /api/v1", "shop.example.com", "/api/v10", "shop.example.com", "prod/api:80", false},
		{"element boundary: /apiv1 is not /api", "shop.example.com", "/apiv1", "shop.example.com", "prod/shop-default:80", true},
		{"declared with trailing slash matches without", "shop.example.com", "/static", "shop.example.com", "prod/static:80", false},
		{"prefix deep", "shop.example.com", "/static/css/a.css", "shop.example.com", "prod/static:80", false},
		{"prefix not a string prefix", "shop.example.com", "/staticx", "shop.example.com", "prod/shop-default:80", true},
		{"prefix is case-sensitive", "shop.example.com", "/API/users", "shop.example.com", "prod/shop-default:80", true},
		{"exact is case-sensitive", "shop.example.com", "/case", "shop.example.com", "prod/shop-default:80", true},
		{"exact case as declared", "shop.example.com", "/Case", "shop.example.com", "prod/case:80", false},
		{"longer regex first in controller order", "shop.example.com", "/img/cat.png", "shop.example.com", "prod/img-public:80", false},
		{"next regex when the first fails", "shop.example.com", "/img/private/cat.png", "shop.example.com", "prod/images:80", false},
		{"regex is case-insensitive", "shop.example.com", "/IMG/PRIVATE/CAT.PNG", "shop.example.com", "prod/images:80", false},
		{"regex is anchored at the start", "shop.example.com", "/x/img/cat.png", "shop.example.com", "prod/shop-default:80", true},
		{"regex open at the end", "x.apps.example.com", "/v2/things", "*.apps.example.com", "prod/versioned:80", false},
		{"top-level alternation stays anchored", "x.apps.example.com", "/x/legacy", "*.apps.example.com", "", true},
		{"alternation second branch", "x.apps.example.com", "/legacy/y", "*.apps.example.com", "prod/legacy:80", false},
		{"wildcard one label", "foo.example.com", "/anything", "*.example.com", "prod/wild:80", false},
		{"wildcard label '*' literally is no word label", "*.example.com", "/", "", "prod/catchall:80", false},
		{"wildcard not two labels", "a.b.example.com", "/anything", "", "prod/catchall:80", false},
		{"wildcard not the bare domain", "example.com", "/anything", "", "prod/catchall:80", false},
		{"wildcard not an empty label", ".example.com", "/anything", "", "prod/catchall:80", false},
		{"more specific wildcard for its label", "x.apps.example.com", "/nothing", "*.apps.example.com", "", true},
		{"exact host with no routes is 404, no reconsideration", "empty.example.com", "/anything", "empty.example.com", "", true},
		{"exact host path miss is 404, not the catch-all root", "noroot.example.com", "/y", "noroot.example.com", "", true},
		{"exact host prefix", "noroot.example.com", "/x/y", "noroot.example.com", "prod/noroot-x:80", false},
		{"exact host beats wildcard", "shop.example.com", "/nothing", "shop.example.com", "prod/shop-default:80", true},
		{"catch-all exact", "unknown.test", "/healthz", "", "prod/health:80", false},
		{"root prefix outranks the fallback", "unknown.test", "/healthz/x", "", "prod/catchall:80", false},
		{"no host", "", "/", "", "prod/catchall:80", false},
		{"ip literal never matches a wildcard", "10.0.0.1", "/a", "", "prod/catchall:80", false},
		{"numeric wildcard for a name", "a.0.0.1", "/a", "*.0.0.1", "prod/numeric-wild:80", false},
		{"not an ip: five parts", "1.10.0.0.1", "/a", "", "prod/catchall:80", false},
		{"ipv6 literal", "[::1]", "/a", "", "prod/catchall:80", false},
		{"long exact", "long.example.com", longPath(127), "long.example.com", "prod/long-exact:80", false},
		{"long exact is not a prefix", "long.example.com", longPath(127) + "/x", "long.example.com", "", true},
		{"long prefix", "long.example.com", longPath(130) + "/x", "long.example.com", "prod/long-130:80", false},
		{"longest long prefix", "long.example.com", longPath(200) + "/x/y", "long.example.com", "prod/long-200:80", false},
		{"long prefix between", "long.example.com", longPath(199), "long.example.com", "prod/long-130:80", false},
		{"host match is exact bytes", "SHOP.EXAMPLE.COM", "/checkout", "", "prod/catchall:80", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := tab.Lookup(tt.host, tt.path)
			require.NotNil(t, res.Host)
			got := struct {
				Host, Backend string
				Fallback      bool
			}{res.Host.Name, "", res.Route == nil}
			if res.Backend != nil {
				got.Backend = res.Backend.ID
			}
			want := struct {
				Host, Backend string
				Fallback      bool
			}{tt.wantHost, tt.wantBackend, tt.wantFallback}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Lookup(%q, %q) (-want +got):\n%s", tt.host, tt.path, diff)
			}
			if res.Route != nil && res.Backend != res.Route.Backend {
				t.Errorf("Result.Backend is not the route's backend")
			}
		})
	}
}

func TestLookupDoesNotAllocate(t *testing.T) {
	tab := lookupTable(t)
	for _, req := range [][2]string{
		{"shop.example.com", "/api/v1/users/7"},
		{"foo.example.com", "/a/b/c"},
		{"nowhere.test", "/healthz"},
		{"shop.example.com", "/img/cat.png"},         // backtracking engine
		{"shop.example.com", "/img/private/cat.png"}, // then the linear one
		{"empty.example.com", "/x"},
	} {
		allocs := testing.AllocsPerRun(100, func() { tab.Lookup(req[0], req[1]) })
		if r := tab.Lookup(req[0], req[1]).Route; raceEnabled && r != nil && r.Type == Regex {
			continue
		}
		if allocs != 0 {
			t.Errorf("Lookup(%q, %q) allocates %v times", req[0], req[1], allocs)
		}
	}
}

func TestNewTable(t *testing.T) {
	a, b := backend("a"), backend("b")
	hosts := []*VirtualHost{
		{Name: "z.example.com", Routes: []*Route{
			prefix("/p", b, 7),
			prefix("/p", a, 3), // same key, older: kept
			exact("/e", a, 9),
			exact("/e", b, 1), // same key, older: kept
		}},
		{Name: "a.example.com"},
		{Name: "*.example.com"},
		nil,
	}
	tab := mustNew(t, Spec{VirtualHosts: hosts, Backends: []*Backend{b, nil, a}, Inputs: []byte("abc")})

	var names []string
	for _, vh := range tab.hosts {
		names = append(names, vh.Name)
	}
	if diff := cmp.Diff([]string{"", "*.example.com", "a.example.com", "z.example.com"}, names); diff != "" {
		t.Errorf("hosts (-want +got):\n%s", diff)
	}
	require.Same(t, tab.hosts[0], tab.VirtualHostByName(""), "catch-all added and indexed")
	require.Nil(t, tab.hosts[0].Fallback, "added catch-all answers 404")

	type kept struct {
		Type    PathType
		Path    string
		Backend string
		Order   int32
	}
	var got []kept
	for _, r := range tab.VirtualHostByName("z.example.com").Routes {
		got = append(got, kept{r.Type, r.Path, r.Backend.ID, r.Order})
	}
	want := []kept{{Exact, "/e", b.ID, 1}, {Prefix, "/p", a.ID, 3}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("deduplicated routes (-want +got):\n%s", diff)
	}
	require.Equal(t, a.ID, tab.Lookup("z.example.com", "/p/x").Backend.ID)
	require.Equal(t, b.ID, tab.Lookup("z.example.com", "/e").Backend.ID)

	if diff := cmp.Diff([]string{a.ID, b.ID}, []string{tab.backends[0].ID, tab.backends[1].ID}); diff != "" || len(tab.backends) != 2 {
		t.Errorf("backends not sorted by ID without nils: %v", tab.backends)
	}
	require.Len(t, tab.Digest(), 64, "hex SHA-256")
	withInputs := func(in string) string {
		return mustNew(t, Spec{VirtualHosts: []*VirtualHost{{Name: "h"}}, Inputs: []byte(in)}).Digest()
	}
	require.Equal(t, withInputs("x"), withInputs("x"))
	require.NotEqual(t, withInputs("x"), withInputs("y"), "inputs are part of the digest")
}

func TestNewTableIndependentOfInputOrder(t *testing.T) {
	build := func(seed uint64) string {
		rng := rand.New(rand.NewPCG(seed, 0))
		routes := []*Route{
			exact("/b", backend("1"), 1), exact("/a", backend("2"), 2),
			prefix("", backend("3"), 3), prefix("/a/b", backend("4"), 4), prefix("/a", backend("5"), 5), prefix("/b", backend("6"), 6),
			regex(t, "/x.*", backend("7"), 7), regex(t, "/y.*", backend("8"), 8), regex(t, "/[a-z]+", backend("9"), 9), regex(t, "/y.*", backend("10"), 10),
		}
		hosts := []*VirtualHost{{Name: "b.test"}, {Name: "a.test", Routes: routes}, {Name: "*.test"}, {Name: ""}}
		backends := []*Backend{backend("z"), backend("y"), backend("x")}
		certs := []*Certificate{{Secret: "prod/b"}, {Secret: "prod/a"}}
		rng.Shuffle(len(routes), func(i, j int) { routes[i], routes[j] = routes[j], routes[i] })
		rng.Shuffle(len(hosts), func(i, j int) { hosts[i], hosts[j] = hosts[j], hosts[i] })
		rng.Shuffle(len(backends), func(i, j int) { backends[i], backends[j] = backends[j], backends[i] })
		rng.Shuffle(len(certs), func(i, j int) { certs[i], certs[j] = certs[j], certs[i] })
		return mustNew(t, Spec{VirtualHosts: hosts, Backends: backends, Certificates: certs}).String()
	}
	want := build(0)
	require.Contains(t, want, "route Regex linear /y.* -> prod/8:80", "lower Order kept among same regex key")
	require.NotContains(t, want, "prod/10:80")
	for seed := uint64(1); seed < 20; seed++ {
		if diff := cmp.Diff(want, build(seed)); diff != "" {
			t.Fatalf("seed %d: rendering depends on input order (-want +got):\n%s", seed, diff)
		}
	}
}

func TestCompareRoutes(t *testing.T) {
	routes := []*Route{
		{Type: Regex, Path: "/a.*", Order: 2},
		{Type: Prefix, Path: ""},
		{Type: Regex, Path: "/b.*", Order: 5},
		{Type: Exact, Path: "/z"},
		{Type: Prefix, Path: "/bb"},
		{Type: Regex, Path: "/long.*", Order: 9},
		{Type: Prefix, Path: "/a/b"},
		{Type: Exact, Path: "/a"},
		{Type: Regex, Path: "/a.*", Order: 1},
		{Type: Prefix, Path: "/ab"},
	}
	for i := range 20 {
		shuffled := append([]*Route(nil), routes...)
		rand.New(rand.NewPCG(uint64(i), 1)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		tab := mustNew(t, Spec{VirtualHosts: []*VirtualHost{{Name: "h", Routes: shuffled}}})
		var got []string
		for _, r := range tab.VirtualHostByName("h").Routes {
			got = append(got, r.Type.String()+" "+r.Path)
		}
		// Regex "/a.*" twice: only Order 1 is kept.
		want := []string{
			"Exact /a", "Exact /z",
			"Prefix /a/b", "Prefix /ab", "Prefix /bb", "Prefix ",
			"Regex /long.*", "Regex /b.*", "Regex /a.*",
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("order (-want +got):\n%s", diff)
		}
		require.Equal(t, int32(1), tab.VirtualHostByName("h").Routes[8].Order)
	}
}

func TestVirtualHostByName(t *testing.T) {
	tab := lookupTable(t)
	for _, name := range []string{"", "*.example.com", "shop.example.com", "*.apps.example.com"} {
		vh := tab.VirtualHostByName(name)
		require.NotNil(t, vh, name)
		require.Equal(t, name, vh.Name)
	}
	for _, name := range []string{"foo.example.com", "example.com", "*.", "*", "SHOP.example.com"} {
		require.Nil(t, tab.VirtualHostByName(name), name)
	}
}

func TestCertificate(t *testing.T) {
	older := &Certificate{Secret: "prod/z-older", Hosts: []string{"shop.example.com", "*.example.com"}}
	newer := &Certificate{Secret: "prod/a-newer", Hosts: []string{"shop.example.com", "b.example.com", "*.example.com", "*.apps.example.com"}}
	tab := mustNew(t, Spec{Certificates: []*Certificate{older, newer}})
	require.Equal(t, []*Certificate{newer, older}, tab.certs, "sorted by secret")
	tests := []struct {
		serverName string
		want       *Certificate
	}{
		{"shop.example.com", older},
		{"SHOP.Example.COM", older},
		{"shop.example.com.", older},
		{"b.example.com", newer},
		{"x.example.com", older},
		{"x.apps.example.com", newer},
		{"a.b.example.com", nil},
		{"example.com", nil},
		{".example.com", nil},
		{"", nil},
		{"other.test", nil},
	}
	for _, tt := range tests {
		got := tab.Certificate(tt.serverName)
		if got != tt.want {
			t.Errorf("Certificate(%q) = %v, want %v", tt.serverName, secretOf(got), secretOf(tt.want))
		}
	}
}

func secretOf(c *Certificate) string {
	if c == nil {
		return "<nil>"
	}
	return c.Secret
}

func TestRegexTimeouts(t *testing.T) {
	// A 10 ms timeout is a fifth of RegexBudget, but on a starved machine
	// the match may overrun the budget in wall-clock time, which leaves the
	// request unmatched without its fallback (RegexBudgetExceeded, tested
	// on its own): such an attempt is retried on a fresh table.
	for attempt := 1; ; attempt++ {
		re, err := CompileRegex(`/(?=.)(a+)+$`, 10*time.Millisecond)
		require.NoError(t, err)
		require.False(t, re.Linear())
		r1 := &Route{Type: Regex, Path: `/(?=.)(a+)+$`, Regexp: re, Backend: backend("re")}
		r2 := &Route{Type: Regex, Path: `/(?=.)(a+)+$`, Regexp: re, Backend: backend("re")}
		fallback := backend("fallback")
		tab := mustNew(t, Spec{VirtualHosts: []*VirtualHost{
			{Name: "a.test", Routes: []*Route{r1}, Fallback: fallback},
			{Name: "b.test", Routes: []*Route{r2}},
		}})

		res := tab.Lookup("a.test", "/"+strings.Repeat("a", 64)+"!")
		require.True(t, res.RegexTimedOut)
		if res.RegexBudgetExceeded && attempt < 5 {
			t.Logf("attempt %d: the timed-out match overran the request's budget", attempt)
			continue
		}
		require.False(t, res.RegexBudgetExceeded, "a 10 ms timeout overran the %v budget in %d attempts", RegexBudget, attempt)
		require.Nil(t, res.Route, "a timed-out match is no match")
		require.Same(t, fallback, res.Backend)
		require.Equal(t, uint64(1), tab.RegexTimeouts(), "a pattern shared by two routes counts once")
		return
	}
}

// longPath returns "/aaaa/aaaa/…" cut to n bytes; cut points fall inside
// elements, so each is a distinct element-aligned prefix only at its own length.
func longPath(n int) string {
	return strings.Repeat("/aaaa", n/5+1)[:n]
}

// TestLookupMatchesReference compares Lookup with a plain scan over random
// tables: many hosts sharing keys, nested prefixes, exact and prefix on the
// same path.
func TestLookupMatchesReference(t *testing.T) {
	segments := []string{"a", "b", "ab", "api", "v1"}
	randPath := func(rng *rand.Rand, maxDepth int) string {
		var b strings.Builder
		for range rng.IntN(maxDepth + 1) {
			b.WriteString("/" + segments[rng.IntN(len(segments))])
		}
		if b.Len() == 0 || rng.IntN(4) == 0 {
			b.WriteString("/")
		}
		return b.String()
	}
	hostNames := []string{"", "a.test", "b.test", "*.test", "x.a.test", "*.a.test", "c.test"}
	for seed := range uint64(200) {
		rng := rand.New(rand.NewPCG(seed, 2))
		var hosts []*VirtualHost
		for _, name := range hostNames {
			if rng.IntN(5) == 0 {
				continue
			}
			vh := &VirtualHost{Name: name}
			if rng.IntN(2) == 0 {
				vh.Fallback = backend("fallback-" + name)
			}
			for i := range rng.IntN(12) {
				p := randPath(rng, 3)
				b := backend(name + p)
				if rng.IntN(2) == 0 {
					vh.Routes = append(vh.Routes, exact(p, b, i))
				} else {
					vh.Routes = append(vh.Routes, prefix(strings.TrimRight(p, "/"), b, i))
				}
			}
			hosts = append(hosts, vh)
		}
		tab := mustNew(t, Spec{VirtualHosts: hosts})
		for range 200 {
			host := []string{"a.test", "b.test", "c.test", "x.test", "x.a.test", "y.a.test", "x.y.a.test", "", "test"}[rng.IntN(9)]
			path := randPath(rng, 5)
			res := tab.Lookup(host, path)
			wantHost := referenceHost(tab, host)
			wantRoute := referenceRoute(wantHost, path)
			if res.Host != wantHost || res.Route != wantRoute {
				t.Fatalf("seed %d: Lookup(%q, %q) = host %q route %v; want host %q route %v\n%s",
					seed, host, path, res.Host.Name, res.Route, wantHost.Name, wantRoute, tab)
			}
		}
	}
}

func TestIsIPv4(t *testing.T) {
	for s, want := range map[string]bool{
		"10.0.0.1": true, "255.255.255.255": true, "0.0.0.0": true, "1.2.3.4": true,
		"256.0.0.1": false, "1.2.3": false, "1.2.3.4.5": false, "1..2.3": false, "1.2.3.": false,
		"a.0.0.1": false, "1234.0.0.1": false, "": false, "1.2.3.4a": false, ".1.2.3": false,
	} {
		if got := isIPv4(s); got != want {
			t.Errorf("isIPv4(%q) = %v, want %v", s, got, want)
		}
	}
}

// TestPathTableSpreadsKeys: the path table's hash spreads keys that differ
// in a few bytes, or only in their host, so linear probing stays short: the
// mean probe for a key present is under 2 slots and none runs past 64.
func TestPathTableSpreadsKeys(t *testing.T) {
	type key struct {
		host uint32
		path string
	}
	var keys []key
	for h := range uint32(2000) {
		for _, p := range []string{"", "/", "/a", "/api", "/api/v1", "/api/v1/users", "/static/img/icons/social", fmt.Sprintf("/tenant/%06d/orders/and/a/long/tail/of/segments", h)} {
			keys = append(keys, key{h, p})
		}
	}
	for i := range 20000 {
		keys = append(keys, key{7, fmt.Sprintf("/k%d", i)}, key{8, strings.Repeat("x", i%97)})
	}
	pt := newPathTable(len(keys))
	for _, k := range keys {
		pt.slot(k.host, k.path)
	}
	total, longest := 0, 0
	for _, k := range keys {
		h := pt.hash(k.host, k.path)
		n := 1
		for i := uint64(h) & pt.mask; ; i = (i + 1) & pt.mask {
			if s := pt.at(i); s.is(h, k.host, k.path) {
				break
			}
			n++
		}
		total += n
		longest = max(longest, n)
	}
	mean := float64(total) / float64(len(keys))
	assert.Less(t, mean, 2.0, "mean probe")
	assert.Less(t, longest, 64, "longest probe")
	t.Logf("%d keys: mean probe %.2f, longest %d", len(keys), mean, longest)
}
