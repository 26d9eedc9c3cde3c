package match

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func condRoute(typ PathType, path string, order int, when *Conditions) *Route {
	r := &Route{Type: typ, Path: path, Order: int32(order), When: when,
		Backend: &Backend{ID: fmt.Sprintf("ns/b%d:80", order), Endpoints: []string{"10.0.0.1:80"}}}
	if typ == Regex {
		re, err := CompileRegex(path, 0)
		if err != nil {
			panic(err)
		}
		r.Regexp = re
	}
	return r
}

func header(kv ...string) map[string][]string {
	h := make(map[string][]string)
	for i := 0; i < len(kv); i += 2 {
		h[http.CanonicalHeaderKey(kv[i])] = append(h[http.CanonicalHeaderKey(kv[i])], kv[i+1])
	}
	return h
}

// A route whose conditions a request does not meet passes it on to the
// next candidate: another route of its key, then shorter prefixes, then
// the regex routes, then the fallback (Gateway API HTTPRoute matches).
func TestLookupRequestConditions(t *testing.T) {
	routes := []*Route{
		condRoute(Prefix, "/foo", 1, &Conditions{Headers: []ValueMatch{{Name: "x", Value: "1"}}}),
		condRoute(Prefix, "", 2, nil),
		condRoute(Exact, "/e", 3, &Conditions{Method: "POST"}),
		condRoute(Prefix, "/e", 4, &Conditions{Query: []ValueMatch{{Name: "q", Value: "a b"}}}),
		// one key: method first, then more headers, then more query params, then Order
		condRoute(Prefix, "/p", 5, &Conditions{Query: []ValueMatch{{Name: "a", Value: "1"}, {Name: "b", Value: "2"}}}),
		condRoute(Prefix, "/p", 6, &Conditions{Headers: []ValueMatch{{Name: "h", Value: "1"}}}),
		condRoute(Prefix, "/p", 7, &Conditions{Method: "GET"}),
		condRoute(Prefix, "/p", 8, &Conditions{Headers: []ValueMatch{{Name: "h", Value: "^[0-9]+$", Regex: true}}}),
		condRoute(Prefix, "/p", 9, &Conditions{Headers: []ValueMatch{{Name: "h", Value: "1"}, {Name: "i", Value: "1"}}}),
	}
	regex := []*Route{
		condRoute(Regex, "/r/[0-9]+", 10, &Conditions{Headers: []ValueMatch{{Name: "x", Value: "1"}}}),
		condRoute(Regex, "/r/", 11, nil),
	}
	tab := mustNew(t, Spec{VirtualHosts: []*VirtualHost{{Name: "h.test", Routes: routes}, {Name: "r.test", Routes: regex}}})
	for _, c := range []struct {
		method, path, query string
		h                   map[string][]string
		want                int
	}{
		{"GET", "/foo", "", nil, 2},
		{"GET", "/foo/bar", "", header("X", "1"), 1},
		{"GET", "/foo", "", header("x", "2"), 2},
		{"POST", "/e", "", nil, 3},
		{"GET", "/e", "q=a+b", nil, 4},
		{"GET", "/e", "q=a%20b&q=c", nil, 4},
		{"GET", "/e", "q=c&q=a+b", nil, 2}, // the first value decides
		{"GET", "/e", "q=a%2", nil, 2},
		{"GET", "/p", "a=1&b=2", header("h", "1", "i", "1"), 7},
		{"PUT", "/p", "a=1&b=2", header("h", "1", "i", "1"), 9},
		{"PUT", "/p", "a=1&b=2", header("h", "1"), 6},
		{"PUT", "/p", "a=1&b=2", header("h", "12"), 8},
		{"PUT", "/p", "b=2&a=1", nil, 5},
		{"PUT", "/p", "", header("h", "1", "h", "2"), 2}, // "1, 2"
		{"GET", "/r/12", "", header("x", "1"), 10},
		{"GET", "/r/12", "", nil, 11},
	} {
		q := &Request{Method: c.method, Header: c.h, Query: c.query}
		host := "h.test"
		if strings.HasPrefix(c.path, "/r/") {
			host = "r.test"
		}
		res := tab.LookupRequest(host, c.path, q)
		require.NotNil(t, res.Route, "%s %s?%s", c.method, c.path, c.query)
		assert.Equal(t, c.want, int(res.Route.Order), "%s %s?%s %v", c.method, c.path, c.query, c.h)
	}
	// Lookup meets no condition.
	assert.Equal(t, 2, int(tab.Lookup("h.test", "/foo").Route.Order))
	assert.Equal(t, 11, int(tab.Lookup("r.test", "/r/1").Route.Order))
}

// Two routes of one key with the same conditions are one route; with
// different ones both stay, and the text shows the conditions.
func TestConditionsDuplicatesAndText(t *testing.T) {
	a := condRoute(Prefix, "/a", 1, &Conditions{Method: "GET"})
	b := condRoute(Prefix, "/a", 2, &Conditions{Method: "GET"})
	c := condRoute(Prefix, "/a", 3, &Conditions{Headers: []ValueMatch{{Name: "version", Value: "two"}}})
	tab := mustNew(t, Spec{VirtualHosts: []*VirtualHost{{Name: "h.test", Routes: []*Route{a, b, c}}}})
	vh := tab.VirtualHostByName("h.test")
	assert.Equal(t, []*Route{a, c}, vh.Routes)
	assert.Contains(t, tab.String(), ` when method=GET`)
	assert.Contains(t, tab.String(), ` when header:Version="two"`)
	_, err := New(Spec{VirtualHosts: []*VirtualHost{{Name: "h.test", Routes: []*Route{
		condRoute(Prefix, "/a", 1, &Conditions{Headers: []ValueMatch{{Name: "v", Value: "(", Regex: true}}})}}}})
	assert.ErrorContains(t, err, "When.Headers")
}

// condFixture is 10,000 routes on 1,000 hosts, each route with a method,
// header or query parameter condition, and requests that meet some.
func condFixture(tb testing.TB) (*Table, []Request, []string, []string, []*Route) {
	const hosts = 1000
	var vhs []*VirtualHost
	for i := range hosts {
		vh := &VirtualHost{Name: benchHost(i)}
		be := &Backend{ID: fmt.Sprintf("prod/svc%06d:80", i), Endpoints: []string{"10.0.0.1:8080"}}
		vh.Routes = []*Route{
			{Type: Prefix, Path: "/api", Backend: be, Order: 0, When: &Conditions{Headers: []ValueMatch{{Name: "Version", Value: "two"}}}},
			{Type: Prefix, Path: "/api", Backend: be, Order: 1, When: &Conditions{Method: "POST"}},
			{Type: Prefix, Path: "/api", Backend: be, Order: 2, When: &Conditions{Query: []ValueMatch{{Name: "tenant", Value: "blue"}}}},
			{Type: Prefix, Path: "/api/v1", Backend: be, Order: 3, When: &Conditions{Headers: []ValueMatch{{Name: "Color", Value: "^(red|blue)$", Regex: true}}}},
			{Type: Prefix, Path: "/api/v1", Backend: be, Order: 4, When: &Conditions{Headers: []ValueMatch{{Name: "Version", Value: "two"}, {Name: "Color", Value: "green"}}}},
			{Type: Exact, Path: "/healthz", Backend: be, Order: 5, When: &Conditions{Method: "GET"}},
			{Type: Prefix, Path: "/static", Backend: be, Order: 6, When: &Conditions{Query: []ValueMatch{{Name: "v", Value: "2"}, {Name: "lang", Value: "en"}}}},
			{Type: Prefix, Path: "/static", Backend: be, Order: 7, When: &Conditions{Method: "HEAD"}},
			{Type: Prefix, Path: "/", Backend: be, Order: 8, When: &Conditions{Headers: []ValueMatch{{Name: "X-Canary", Value: "1"}}}},
			{Type: Prefix, Path: "/", Backend: be, Order: 9, When: &Conditions{Method: "GET"}},
		}
		vhs = append(vhs, vh)
	}
	tab := mustNew(tb, Spec{VirtualHosts: vhs})
	reqs := []Request{
		{Method: "GET", Header: header("Version", "two", "Accept", "*/*", "User-Agent", "bench"), Query: "x=1"},
		{Method: "POST", Header: header("Accept", "*/*"), Query: ""},
		{Method: "GET", Header: header("Color", "blue", "Accept", "*/*"), Query: "tenant=blue&page=3"},
		{Method: "GET", Header: header("Accept", "*/*"), Query: "lang=en&v=2"},
		{Method: "HEAD", Header: header("X-Canary", "1"), Query: ""},
	}
	paths := []string{"/api/v1/users/7", "/api/orders", "/static/app.js", "/healthz", "/docs/x"}
	rng := rand.New(rand.NewPCG(1, 2))
	var hs, ps []string
	var qs []Request
	var want []*Route
	for len(qs) < 4096 {
		h, p, q := benchHost(rng.IntN(hosts)), paths[rng.IntN(len(paths))], reqs[rng.IntN(len(reqs))]
		res := tab.LookupRequest(h, p, &q)
		if res.Route == nil {
			continue
		}
		hs, ps, qs, want = append(hs, h), append(ps, p), append(qs, q), append(want, res.Route)
	}
	return tab, qs, hs, ps, want
}

// BenchmarkLookupConditions: 10,000 routes with method, header and query
// parameter conditions; issue 27's budget is 150 ns a lookup.
func BenchmarkLookupConditions(b *testing.B) {
	tab, qs, hs, ps, want := condFixture(b)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		k := i & 4095
		if tab.LookupRequest(hs[k], ps[k], &qs[k]).Route != want[k] {
			b.Fatal("wrong route")
		}
		i++
	}
}

func TestCondFixtureMatchesSome(t *testing.T) {
	_, qs, _, _, want := condFixture(t)
	require.Len(t, qs, 4096)
	orders := map[int32]bool{}
	for _, r := range want {
		orders[r.Order] = true
	}
	assert.GreaterOrEqual(t, len(orders), 6, "the requests meet most kinds of condition")
}

// TestFiniteMatches: a pattern anchored at both ends with a few matches is
// matched as its strings, with the regex engine's answer on every input.
func TestFiniteMatches(t *testing.T) {
	for pattern, want := range map[string][]string{
		`^(red|blue)$`:        {"blue", "red"},
		`^a(b|c)?d$`:          {"abd", "acd", "ad"},
		`\Ared\z`:             {"red"},
		`^[a-c]x$`:            {"ax", "bx", "cx"},
		`^(a|ab)(c|bcd)$`:     {"abbcd", "abc", "abcd", "ac"},
		`^v[12]{2}$`:          {"v11", "v12", "v21", "v22"},
		`^$`:                  {""},
		`^(?i)red$`:           nil, // case folding
		`^re.$`:               nil, // any character
		`red`:                 nil, // unanchored
		`^red`:                nil,
		`^[a-z]{3}$`:          nil, // too many
		"^\\x{FFFD}$":         nil, // also matches an invalid byte
		`^(red|blue)$|^green`: nil,
	} {
		got := finiteMatches(pattern)
		assert.Equal(t, want, got, pattern)
		re := regexp.MustCompile(pattern)
		inputs := []string{"", "red", "Red", "redd", "xred", "blue", "ab", "abd", "ad", "acd", "abcd", "abbcd", "ac", "abc", "ax", "dx", "v12", "v13", "\xff", "re\xff"}
		for _, in := range inputs {
			if got != nil {
				assert.Equal(t, re.MatchString(in), slices.Contains(got, in), "%s on %q", pattern, in)
			}
		}
	}
	c, err := NewConditions(Conditions{Headers: []ValueMatch{{Name: "color", Value: `^(red|blue)$`, Regex: true}}, Query: []ValueMatch{{Name: "v", Value: `^(1|2)$`, Regex: true}}})
	require.NoError(t, err)
	for _, tc := range []struct {
		color, query string
		want         bool
	}{{"red", "v=1", true}, {"blue", "v=2", true}, {"green", "v=1", false}, {"red", "v=3", false}, {"red", "v=%31", true}} {
		assert.Equal(t, tc.want, c.Matches(&Request{Header: map[string][]string{"Color": {tc.color}}, Query: tc.query}), "%+v", tc)
	}
}

// FuzzFiniteMatches: where a pattern is matched as its strings, the regex
// engine agrees on the input and on every one of the strings.
func FuzzFiniteMatches(f *testing.F) {
	for _, seed := range [][2]string{{`^(red|blue)$`, "red"}, {`^a(b|c)?d$`, "ad"}, {`^[a-c]x$`, "bx"}, {`\Av[12]{2}\z`, "v12"}, {`^(a|ab)(c|bcd)$`, "abcd"}, {`^x*$`, ""}} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, pattern, value string) {
		lits := finiteMatches(pattern)
		if lits == nil {
			return
		}
		re, err := regexp.Compile(pattern)
		if err != nil {
			t.Fatalf("%q: strings %q for a pattern that does not compile: %v", pattern, lits, err)
		}
		if len(lits) > maxFiniteMatches {
			t.Fatalf("%q: %d strings", pattern, len(lits))
		}
		if got, want := slices.Contains(lits, value), re.MatchString(value); got != want {
			t.Fatalf("%q on %q: strings say %v, the regex %v (strings %q)", pattern, value, got, want, lits)
		}
		for _, s := range lits {
			if !re.MatchString(s) {
				t.Fatalf("%q does not match its own string %q", pattern, s)
			}
		}
	})
}

// FuzzChainChecks: the conditions a lookup checks in a route's chain
// entry (compiled, cheapest first) decide as Conditions.Matches does, for
// a route alone on its key and for one ahead of an unconditional route.
func FuzzChainChecks(f *testing.F) {
	f.Add("GET", "version", "two", false, "tenant", "blue", false, "GET", "two", "", "tenant=blue&x=1")
	f.Add("", "color", "^(red|blue)$", true, "v", "^[12]$", true, "POST", "red", "blue", "v=2")
	f.Add("", "x-a", "1", false, "", "", false, "HEAD", "1", "2", "")
	f.Add("PUT", "", "", false, "q", "a b", false, "PUT", "", "", "q=a+b")
	f.Add("", "v", "^a", true, "n", "%zz", false, "GET", "abc", "", "n=%25zz&n=1")
	f.Add("GET", "version", "two", false, "tenant", "blue", false, "GET", "two", "", "tenant=red&tenant=blue")
	f.Fuzz(func(t *testing.T, method, hname, hval string, hre bool, qname, qval string, qre bool, reqMethod, h1, h2, query string) {
		var c Conditions
		c.Method = method
		if hname != "" {
			c.Headers = []ValueMatch{{Name: hname, Value: hval, Regex: hre}, {Name: "X-Second", Value: hval}}
		}
		if qname != "" {
			c.Query = []ValueMatch{{Name: qname, Value: qval, Regex: qre}}
		}
		when, err := NewConditions(c)
		if err != nil {
			return
		}
		q := &Request{Method: reqMethod, Header: map[string][]string{}, Query: query}
		if hname != "" {
			name := http.CanonicalHeaderKey(hname)
			for _, v := range []string{h1, h2} {
				if v != "" {
					q.Header[name] = append(q.Header[name], v)
				}
			}
			q.Header["X-Second"] = []string{hval}
		}
		want := when.Matches(q)
		alone := condRoute(Prefix, "/a", 0, when)
		other := condRoute(Prefix, "/a", 1, nil)
		tab, err := New(Spec{VirtualHosts: []*VirtualHost{
			{Name: "alone.test", Routes: []*Route{alone}},
			{Name: "chain.test", Routes: []*Route{other, alone}},
		}})
		if err != nil {
			t.Fatal(err)
		}
		if got := tab.LookupRequest("alone.test", "/a/b", q).Route == alone; got != want {
			t.Fatalf("alone: lookup says %v, Matches %v (%+v, %+v)", got, want, when, q)
		}
		if got := tab.LookupRequest("chain.test", "/a", q).Route == alone; got != want {
			t.Fatalf("chain: lookup says %v, Matches %v (%+v, %+v)", got, want, when, q)
		}
		if got := tab.LookupRequest("alone.test", "/a", nil).Route == alone; got != when.Matches(nil) {
			t.Fatalf("nil request: lookup says %v, Matches %v", got, !got)
		}
	})
}

// refQueryMatches is the query parameter match written plainly, pair by
// pair with strings.Cut: the reference FuzzQueryParam holds the one-pass
// scan to.
func refQueryMatches(query, name, value string, pattern *ValueMatch) bool {
	for query != "" {
		var pair string
		pair, query, _ = strings.Cut(query, "&")
		n, val, _ := strings.Cut(pair, "=")
		if !unescapedEqual(n, name) {
			continue
		}
		if pattern == nil {
			return unescapedEqual(val, value)
		}
		d, err := url.QueryUnescape(val)
		if err != nil {
			return false
		}
		return pattern.matchValue(d)
	}
	return false
}

// FuzzQueryParam: the query scan a lookup does decides as the plain
// reference, for exact values and patterns.
func FuzzQueryParam(f *testing.F) {
	for _, s := range [][3]string{
		{"tenant=blue&page=3", "tenant", "blue"},
		{"a=1&b=2", "b", "2"},
		{"q=a+b", "q", "a b"},
		{"q=a%20b&q=c", "q", "a b"},
		{"q=c&q=a+b", "q", "a b"},
		{"q=a%2", "q", "a%2"},
		{"%71=x", "q", "x"},
		{"q+r=1&q r=2", "q r", "1"},
		{"a%zz=1&a=2", "a", "2"},
		{"&&=&a", "a", ""},
		{"a==b&a=c", "a", "=b"},
		{"n=%25zz&n=1", "n", "%zz"},
		{"x%", "x%", ""},
		{"", "", ""},
		{"a&", "", ""},
		{"a=1&&b", "", ""},
		{"xa=1&a=2", "a", "2"},
		{"a=b&c=1", "a=b", "1"},
		{"a&b=1", "a&b", "1"},
		{"aa=1&a", "a", ""},
		{"a=b&c", "a=b", ""},
		{"a&b", "a&b", ""},
	} {
		f.Add(s[0], s[1], s[2])
	}
	f.Fuzz(func(t *testing.T, query, name, value string) {
		if got, want := queryMatches(query, name, value, nil), refQueryMatches(query, name, value, nil); got != want {
			t.Fatalf("%q %q=%q: scan says %v, the reference %v", query, name, value, got, want)
		}
		re, err := regexp.Compile(regexp.QuoteMeta(value) + "$")
		if err != nil {
			return // not UTF-8
		}
		pattern := &ValueMatch{Name: name, Value: value, Regex: true, re: re}
		if got, want := queryMatches(query, name, value, pattern), refQueryMatches(query, name, value, pattern); got != want {
			t.Fatalf("%q %q~%q: scan says %v, the reference %v", query, name, value, got, want)
		}
	})
}

// A condition on the header Host reads Request.Host: net/http keeps the
// Host line out of Header, and HTTP/2's :authority never is a header.
func TestConditionOnHostHeader(t *testing.T) {
	routes := []*Route{
		condRoute(Prefix, "/h", 1, &Conditions{Headers: []ValueMatch{{Name: "host", Value: "h.test"}}}),
		condRoute(Prefix, "/h/re", 2, &Conditions{Headers: []ValueMatch{{Name: "Host", Value: `^h\.test:8080$`, Regex: true}}}),
		condRoute(Prefix, "", 3, nil),
	}
	tab := mustNew(t, Spec{VirtualHosts: []*VirtualHost{{Name: "h.test", Routes: routes}}})
	for _, c := range []struct {
		path, host string
		want       int
	}{
		{"/h", "h.test", 1},
		{"/h", "h.test:8080", 3},
		{"/h/re", "h.test:8080", 2},
		{"/h/re", "h.test", 1},
	} {
		q := &Request{Method: "GET", Header: map[string][]string{}, Host: c.host}
		res := tab.LookupRequest("h.test", c.path, q)
		require.NotNil(t, res.Route, "%s Host %s", c.path, c.host)
		assert.Equal(t, c.want, int(res.Route.Order), "%s Host %s", c.path, c.host)
		if res.Route.When != nil {
			cond, err := NewConditions(*res.Route.When)
			require.NoError(t, err)
			assert.True(t, cond.Matches(q), "Conditions.Matches agrees: %s Host %s", c.path, c.host)
		}
	}
}
