package match

import (
	"net/netip"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func mustSnippet(t *testing.T, s Snippet) *Snippet {
	t.Helper()
	out, err := NewSnippet(s)
	require.NoError(t, err)
	return out
}

func TestSnippetRun(t *testing.T) {
	req := func(uri, args string) *SnippetRequest {
		ru := uri
		if args != "" {
			ru += "?" + args
		}
		return &SnippetRequest{Host: "a.example", URI: uri, RequestURI: ru, Args: args, Scheme: "https",
			RemoteAddr: "192.0.2.1", Method: "GET", Header: map[string][]string{"X-Team": {"blue"}}}
	}
	for _, tc := range []struct {
		name string
		ops  []SnippetOp
		req  *SnippetRequest
		want SnippetResult
	}{
		{"return text with variables", []SnippetOp{{Kind: OpReturn, Code: 200, Value: "$host $http_x_team $args"}},
			req("/p", "q=1"), SnippetResult{Status: 200, Body: "a.example blue q=1"}},
		{"relative redirect made absolute", []SnippetOp{{Kind: OpReturn, Code: 308, Value: "/n$uri"}},
			req("/p", ""), SnippetResult{Status: 308, Location: "https://a.example/n/p"}},
		{"rewrite keeps the query", []SnippetOp{{Kind: OpRewrite, Pattern: "^/a/(.*)$", Value: "/b/$1", Flag: "break"}},
			req("/a/x y", "k=v"), SnippetResult{Target: "/b/x%20y?k=v"}},
		{"rewrite with new args appends the old", []SnippetOp{{Kind: OpRewrite, Pattern: "^/s/(\\w+)", Value: "/find?q=$1"}},
			req("/s/tea", "p=2"), SnippetResult{Target: "/find?q=tea&p=2", Relocate: true}},
		{"rewrite ending in ? drops the args", []SnippetOp{{Kind: OpRewrite, Pattern: "^", Value: "/x?", Flag: "break"}},
			req("/s", "p=2"), SnippetResult{Target: "/x"}},
		{"a captured ? stays in the URI, escaped", []SnippetOp{{Kind: OpRewrite, Pattern: "^/s/(.*)$", Value: "/f/$1.txt", Flag: "break"}},
			req("/s/k?", ""), SnippetResult{Target: "/f/k%3F.txt"}},
		{"a capture in the arguments is escaped", []SnippetOp{{Kind: OpRewrite, Pattern: "^/s/(.*)$", Value: "/f?q=$1", Flag: "break"}},
			req("/s/a&b=c", ""), SnippetResult{Target: "/f?q=a%26b%3Dc"}},
		{"a capture in a redirect is escaped", []SnippetOp{{Kind: OpRewrite, Pattern: "^/r/(.*)$", Value: "/n/$1", Flag: "redirect"}},
			req("/r/a b%\x7f", ""), SnippetResult{Status: 302, Location: "https://a.example/n/a%20b%25%7F"}},
		{"without a flag the location is searched again for the new URI", []SnippetOp{
			{Kind: OpRewrite, Pattern: "^/a$", Value: "/b"},
			{Kind: OpAddHeader, Name: "X", Value: "1"},
		}, req("/a", "k=v"), SnippetResult{Target: "/b?k=v", Relocate: true}},
		{"last searches again", []SnippetOp{{Kind: OpRewrite, Pattern: "^/a$", Value: "/b", Flag: "last"}},
			req("/a", ""), SnippetResult{Target: "/b", Relocate: true}},
		{"a later break keeps the location", []SnippetOp{
			{Kind: OpRewrite, Pattern: "^/a$", Value: "/b"},
			{Kind: OpRewrite, Pattern: "^/b$", Value: "/c", Flag: "break"},
		}, req("/a", ""), SnippetResult{Target: "/c"}},
		{"break stops later rewrites, headers still collected", []SnippetOp{
			{Kind: OpRewrite, Pattern: "^/a$", Value: "/b", Flag: "break"},
			{Kind: OpRewrite, Pattern: "^/b$", Value: "/c"},
			{Kind: OpAddHeader, Name: "X", Value: "$uri"},
		}, req("/a", ""), SnippetResult{Target: "/b", Response: []HeaderEdit{{Kind: OpAddHeader, Name: "X", Value: "/a"}}}},
		{"if that fails skips its block", []SnippetOp{{Kind: OpIf, Cond: &SnippetCond{Var: "http_x_team", Op: "=", Operand: "red"},
			Then: []SnippetOp{{Kind: OpReturn, Code: 403}, {Kind: OpSetInput, Name: "X", Value: "1", Always: true}}}},
			req("/", ""), SnippetResult{}},
		{"if that holds: captures, headers of its block", []SnippetOp{{Kind: OpIf, Cond: &SnippetCond{Var: "request_uri", Op: "~*", Operand: "^/V(\\d)"},
			Then: []SnippetOp{{Kind: OpSetInput, Name: "X-V", Value: "$1", Always: true}}}},
			req("/v2/x", ""), SnippetResult{Request: []HeaderEdit{{Kind: OpSetInput, Name: "X-V", Value: "2", Always: true}}}},
		{"an if's add_header replaces the location's; more_set_headers adds", []SnippetOp{
			{Kind: OpAddHeader, Name: "A", Value: "outer"},
			{Kind: OpSetHeader, Name: "M", Value: "outer"},
			{Kind: OpIf, Cond: &SnippetCond{Var: "host"}, Then: []SnippetOp{{Kind: OpAddHeader, Name: "B", Value: "inner"}}},
		}, req("/", ""), SnippetResult{ownAdds: true, Response: []HeaderEdit{
			{Kind: OpSetHeader, Name: "M", Value: "outer"}, {Kind: OpAddHeader, Name: "B", Value: "inner", inIf: true}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := mustSnippet(t, Snippet{Ops: tc.ops}).Run(tc.req)
			if d := cmp.Diff(tc.want, got, cmp.AllowUnexported(SnippetResult{}, HeaderEdit{})); d != "" {
				t.Error(d)
			}
		})
	}
}

// TestSnippetRunServerPhase: a server-snippet's steps run before the
// location is chosen, so a URI they change is routed again; once it has
// been, only their header declarations apply.
func TestSnippetRunServerPhase(t *testing.T) {
	s := mustSnippet(t, Snippet{Server: 2, Ops: []SnippetOp{
		{Kind: OpRewrite, Pattern: "^/old/(.*)$", Value: "/new/$1", Flag: "break"},
		{Kind: OpSetHeader, Name: "S", Value: "server"},
		{Kind: OpRewrite, Pattern: "^/new/(.*)$", Value: "/kept/$1", Flag: "break"},
		{Kind: OpSetHeader, Name: "L", Value: "location"},
	}})
	r := &SnippetRequest{URI: "/old/x", RequestURI: "/old/x"}
	assert.Equal(t, SnippetResult{Relocate: true, Target: "/new/x", ServerPhase: true}, s.Run(r))

	// In the location /new/x landed in, the server's rewrite does not run again.
	r = &SnippetRequest{URI: "/new/x", RequestURI: "/old/x", Relocated: true}
	want := SnippetResult{Target: "/kept/x", Response: []HeaderEdit{{Kind: OpSetHeader, Name: "S", Value: "server"}, {Kind: OpSetHeader, Name: "L", Value: "location"}}}
	assert.Equal(t, want, s.Run(r))

	// A server-level break ends the server's phase, not the location's.
	r = &SnippetRequest{URI: "/new/y", RequestURI: "/new/y"}
	want.Target = "/kept/y"
	assert.Equal(t, want, s.Run(r))
}

// TestSnippetRunServerReturn: a server-level return answers before a
// location is chosen, so it carries the server's header declarations
// (ServerOnly ones included) and none of the location's; an answer of the
// location leaves the ServerOnly ones out.
func TestSnippetRunServerReturn(t *testing.T) {
	s := mustSnippet(t, Snippet{Server: 3, Ops: []SnippetOp{
		{Kind: OpSetHeader, Name: "S", Value: "server"},
		{Kind: OpAddHeader, Name: "SA", Value: "1", Always: true, ServerOnly: true},
		{Kind: OpIf, Cond: &SnippetCond{Var: "http_x_block"}, Then: []SnippetOp{{Kind: OpReturn, Code: 403}}},
		{Kind: OpSetHeader, Name: "L", Value: "location"},
		{Kind: OpAddHeader, Name: "LA", Value: "1", Always: true},
		{Kind: OpReturn, Code: 200, Value: "loc"},
	}})
	blocked := &SnippetRequest{URI: "/x", RequestURI: "/x", Header: map[string][]string{"X-Block": {"1"}}}
	want := SnippetResult{Status: 403, Response: []HeaderEdit{
		{Kind: OpSetHeader, Name: "S", Value: "server"},
		{Kind: OpAddHeader, Name: "SA", Value: "1", Always: true},
	}}
	assert.Equal(t, want, s.RunServer(blocked))
	assert.Equal(t, want, s.Run(blocked))

	plain := &SnippetRequest{URI: "/x", RequestURI: "/x"}
	assert.Zero(t, s.RunServer(plain))
	want = SnippetResult{Status: 200, Body: "loc", Response: []HeaderEdit{
		{Kind: OpSetHeader, Name: "S", Value: "server"},
		{Kind: OpSetHeader, Name: "L", Value: "location"},
		{Kind: OpAddHeader, Name: "LA", Value: "1", Always: true},
	}}
	assert.Equal(t, want, s.Run(plain))
	// Past the server's phase the blocked request is the location's.
	blocked.Relocated = true
	assert.Equal(t, want, s.Run(blocked))
}

func TestSnippetHeaders(t *testing.T) {
	edits := []HeaderEdit{
		{Kind: OpSetHeader, Name: "x-a", Value: "1"},
		{Kind: OpSetHeader, Name: "X-Only-404", Value: "1", Statuses: []int{404}},
		{Kind: OpSetHeader, Name: "X-Html", Value: "1", Types: []string{"text/html"}},
		{Kind: OpClearHeader, Name: "X-Drop-*"},
		{Kind: OpAddHeader, Name: "X-Add", Value: "2"},
		{Kind: OpAddHeader, Name: "X-Add-Always", Value: "3", Always: true},
		{Kind: OpHideHeader, Name: "server"},
	}
	h := map[string][]string{"Content-Type": {"text/html; charset=utf-8"}, "X-Drop-One": {"1"}, "X-Drop-Two": {"2"}, "Server": {"b"}, "X-Add": {"0"}}
	ApplyResponse(edits, h, 200)
	assert.Equal(t, map[string][]string{"Content-Type": {"text/html; charset=utf-8"}, "X-A": {"1"}, "X-Html": {"1"},
		"X-Add": {"0", "2"}, "X-Add-Always": {"3"}}, h)
	h = map[string][]string{"Content-Type": {"text/plain"}}
	ApplyResponse(edits, h, 404)
	assert.Equal(t, map[string][]string{"Content-Type": {"text/plain"}, "X-A": {"1"}, "X-Only-404": {"1"}, "X-Add-Always": {"3"}}, h)

	in := map[string][]string{"X-Keep": {"k"}, "X-Old": {"o"}, "Cookie": {"c"}}
	host, dropped := ApplyRequest([]HeaderEdit{
		{Kind: OpSetInput, Name: "host", Value: "b.internal", Always: true},
		{Kind: OpSetInput, Name: "X-Old", Value: "new"},
		{Kind: OpSetInput, Name: "X-Absent", Value: "never"},
		{Kind: OpSetInput, Name: "cookie", Value: "", Always: true},
		{Kind: OpClearInput, Name: "X-Keep"},
	}, in)
	assert.Equal(t, "b.internal", host)
	assert.Zero(t, dropped)
	assert.Equal(t, map[string][]string{"X-Old": {"new"}}, in)
}

func TestSnippetAccessAndLocations(t *testing.T) {
	s := mustSnippet(t, Snippet{Access: []AccessRule{
		{Deny: true, Prefix: netip.MustParsePrefix("10.0.0.9/32")},
		{Prefix: netip.MustParsePrefix("10.0.0.0/8")},
		{Deny: true, All: true},
	}})
	assert.False(t, s.Allows(netip.MustParseAddr("10.0.0.9")))
	assert.True(t, s.Allows(netip.MustParseAddr("::ffff:10.1.2.3")), "a v4-mapped address is its v4 one")
	assert.False(t, s.Allows(netip.MustParseAddr("192.0.2.1")))

	loc := func(m, p string) *SnippetLocation {
		l, err := NewSnippetLocation(SnippetLocation{Match: m, Path: p})
		require.NoError(t, err)
		return l
	}
	exact, stop, re, pre := loc("=", "/x"), loc("^~", "/static/"), loc("~*", `\.PHP$`), loc("", "/api/v2")
	vh := &VirtualHost{SnippetLocations: []*SnippetLocation{exact, stop, re, pre}}
	prefix := Result{Host: vh, Route: &Route{Type: Prefix, Path: "/api"}}
	assert.Same(t, exact, SnippetLocationFor(vh, prefix, "/x"))
	assert.Same(t, stop, SnippetLocationFor(vh, prefix, "/static/a.php"))
	assert.Same(t, re, SnippetLocationFor(vh, prefix, "/api/a.php"))
	assert.Same(t, pre, SnippetLocationFor(vh, prefix, "/api/v2/users"))
	assert.Nil(t, SnippetLocationFor(vh, prefix, "/api/v1"))
	assert.Nil(t, SnippetLocationFor(vh, Result{Host: vh, Route: &Route{Type: Exact, Path: "/a.php"}}, "/a.php"))
	assert.Nil(t, SnippetLocationFor(vh, Result{Host: vh, Route: &Route{Type: Regex, Path: "/api"}}, "/api/v2/x"))
}

func TestSnippetLocationMayAnswer(t *testing.T) {
	re, err := CompileRegex("^/r/[0-9]+", 0)
	require.NoError(t, err)
	routes := map[string]*Route{
		"prefix /b": {Type: Prefix, Path: "/b"},
		"prefix /":  {Type: Prefix, Path: ""},
		"exact /e":  {Type: Exact, Path: "/e"},
		"regex":     {Type: Regex, Path: "/r/[0-9]+", Regexp: re},
	}
	for _, tc := range []struct {
		match, path string
		want        []string // the routes it may answer for
	}{
		{"", "/b/admin", []string{"prefix /", "prefix /b"}},
		{"", "/b", []string{"prefix /"}},
		{"", "/bb", []string{"prefix /"}},
		{"^~", "/r/1", []string{"prefix /", "regex"}},
		{"=", "/e", []string{"exact /e", "prefix /"}},
		{"=", "/r/7", []string{"prefix /", "regex"}},
		{"=", "/b/x", []string{"prefix /", "prefix /b"}},
		{"~", `\.php$`, []string{"prefix /", "prefix /b", "regex"}},
		{"~", `^/b/`, []string{"prefix /", "prefix /b", "regex"}},
		{"~", `^/c/`, []string{"prefix /", "regex"}},
		{"~*", `^/E$`, []string{"exact /e", "prefix /", "prefix /b", "regex"}},
	} {
		l, err := NewSnippetLocation(SnippetLocation{Match: tc.match, Path: tc.path})
		require.NoError(t, err)
		var got []string
		for name, r := range routes {
			if l.MayAnswer(r) {
				got = append(got, name)
			}
		}
		assert.ElementsMatch(t, tc.want, got, "location %s %s", tc.match, tc.path)
	}
}

// TestApplyRequestDropsControlBytes: an expanded value with CR, LF, NUL or
// another control byte is dropped and counted: the header is not sent,
// the client's of that name included, and a Host keeps the client's.
func TestApplyRequestDropsControlBytes(t *testing.T) {
	in := map[string][]string{"X-Present": {"client"}, "X-Set": {"client"}}
	host, dropped := ApplyRequest([]HeaderEdit{
		{Kind: OpSetInput, Name: "X-Set", Value: "/a\r\nX-Injected: 1", Always: true},
		{Kind: OpSetInput, Name: "X-Present", Value: "a\x00b"},
		{Kind: OpSetInput, Name: "X-Lf", Value: "a\nb", Always: true},
		{Kind: OpSetInput, Name: "X-Tab", Value: "a\tb é", Always: true},
		{Kind: OpSetInput, Name: "Host", Value: "b.internal", Always: true},
		{Kind: OpSetInput, Name: "Host", Value: "b\r\n", Always: true},
	}, in)
	assert.Equal(t, "", host)
	assert.Equal(t, 4, dropped)
	assert.Equal(t, map[string][]string{"X-Tab": {"a\tb é"}}, in)
	assert.False(t, ValidHeaderValue("\x7f"))
	assert.True(t, ValidHeaderValue(""))
}

// $cookie_<name> is expanded in a snippet and a ConfigMap header value as
// in the auth cache key and the access log (it was refused here).
func TestSnippetCookie(t *testing.T) {
	s := mustSnippet(t, Snippet{Ops: []SnippetOp{{Kind: OpIf, Cond: &SnippetCond{Var: "cookie_beta", Op: "=", Operand: "1"},
		Then: []SnippetOp{{Kind: OpReturn, Code: 200, Value: "beta $cookie_team"}}}}})
	r := &SnippetRequest{Host: "a.example", URI: "/", RequestURI: "/", Scheme: "http", Method: "GET",
		Header: map[string][]string{"Cookie": {"team=blue; beta=1"}}}
	assert.Equal(t, SnippetResult{Status: 200, Body: "beta blue"}, s.Run(r))
	r.Header = map[string][]string{"Cookie": {"beta=0"}}
	assert.Zero(t, s.Run(r).Status)
	v, err := ParseHeaderValue("$cookie_team")
	require.NoError(t, err)
	r.Header = map[string][]string{"Cookie": {"team=red"}}
	assert.Equal(t, "red", v.Expand(r))
	// nginx's reading: names in any case, a ',' ends a pair before the one sought.
	r.Header = map[string][]string{"Cookie": {"a=1, BETA=1; Team=green"}}
	assert.Equal(t, SnippetResult{Status: 200, Body: "beta green"}, s.Run(r))
}

// $http_<name> as nginx's variable reads a header: a header sent on
// several lines is every line, joined with ", ", or "; " for Cookie
// (ngx_http_variable_headers_internal); $http_host is the Host line.
func TestSnippetHTTPHeaders(t *testing.T) {
	v, err := ParseHeaderValue("$http_host|$http_x_team|$http_cookie")
	require.NoError(t, err)
	r := &SnippetRequest{Host: "a.example", HTTPHost: "A.example:8080",
		Header: map[string][]string{"X-Team": {"blue", "red"}, "Cookie": {"a=1", "b=2"}}}
	assert.Equal(t, "A.example:8080|blue, red|a=1; b=2", v.Expand(r))
}

// An address's zone does not take it out of a snippet's deny.
func TestSnippetAllowsIgnoresZone(t *testing.T) {
	s := &Snippet{Access: []AccessRule{{Deny: true, Prefix: netip.MustParsePrefix("fe80::/10")}, {All: true}}}
	require.False(t, s.Allows(netip.MustParseAddr("fe80::1%eth0")))
	require.True(t, s.Allows(netip.MustParseAddr("2001:db8::1")))
}

// TestArgValue: $arg_<name> as ngx_http_arg reads it; an argument without
// '=' is skipped, not read as empty.
func TestArgValue(t *testing.T) {
	assert.Equal(t, "d", ArgValue("tenant&tenant=d", "tenant"))
	assert.Equal(t, "b", ArgValue("x=1&Tenant=b&tenant=c", "tenant"))
	assert.Equal(t, "", ArgValue("xtenant=1", "tenant"))
	assert.Equal(t, "", ArgValue("", "tenant"))
}
