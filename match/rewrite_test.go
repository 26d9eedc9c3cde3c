package match

import (
	"net/url"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/match/urltemplate"
)

func regexRoute(t testing.TB, pattern string) *Route {
	t.Helper()
	re, err := CompileRegex(pattern, 0)
	require.NoError(t, err)
	return &Route{Type: Regex, Path: pattern, Regexp: re}
}

func TestRewriteApply(t *testing.T) {
	tests := []struct {
		name   string
		rw     Rewrite
		route  *Route
		path   string
		query  string
		scheme string
		host   string
		want   Rewritten
	}{
		{name: "nginx docs $2", rw: Rewrite{Target: "/$2"}, route: regexRoute(t, `/something(/|$)(.*)`),
			path: "/something/new", want: Rewritten{Target: "/new"}},
		{name: "query kept", rw: Rewrite{Target: "/$2"}, route: regexRoute(t, `/something(/|$)(.*)`),
			path: "/something", query: "a=1", want: Rewritten{Target: "/?a=1"}},
		{name: "unmatched and missing groups are empty", rw: Rewrite{Target: "/$1-$2-$7"}, route: regexRoute(t, `/g/(a)|/h/(b)`),
			path: "/h/b", want: Rewritten{Target: "/-b-"}},
		{name: "$12 is capture 1 then 2", rw: Rewrite{Target: "/$12"}, route: regexRoute(t, `/(x)`),
			path: "/x", want: Rewritten{Target: "/x2"}},
		{name: "captures escaped", rw: Rewrite{Target: "/$1"}, route: regexRoute(t, `/c/(.*)`),
			path: "/c/a b?#%\x01é", want: Rewritten{Target: "/a%20b%3F%23%25%01%C3%A9"}},
		{name: "leading slash added", rw: Rewrite{Target: "$1"}, route: regexRoute(t, `/c/(.*)`),
			path: "/c/x", want: Rewritten{Target: "/x"}},
		{name: "empty result is /", rw: Rewrite{Target: "$1"}, route: regexRoute(t, `/c/(.*)`),
			path: "/c/", want: Rewritten{Target: "/"}},
		{name: "case-insensitive pattern keeps the client's case", rw: Rewrite{Target: "/v2/$1"}, route: regexRoute(t, `/api/(.*)`),
			path: "/API/Users", want: Rewritten{Target: "/v2/Users"}},
		{name: "backtracking pattern", rw: Rewrite{Target: "/$1"}, route: regexRoute(t, `/(?=x)(x+)é?(\w*)`),
			path: "/xxéyy", want: Rewritten{Target: "/xx"}},
		{name: "absolute URL", rw: Rewrite{Target: "https://new.example.com/$1"}, route: regexRoute(t, `/old/(.*)`),
			path: "/old/a", query: "q=1", want: Rewritten{Target: "https://new.example.com/a?q=1", Redirect: true}},
		{name: "$scheme and $host", rw: Rewrite{Target: "$scheme://$host/x"}, route: regexRoute(t, `/`),
			path: "/", scheme: "https", host: "shop.example.com", want: Rewritten{Target: "https://shop.example.com/x", Redirect: true}},
		{name: "$host of an IPv6 request", rw: Rewrite{Target: "http://$host/x"}, route: regexRoute(t, `/`),
			path: "/", host: "::1", want: Rewritten{Target: "http://[::1]/x", Redirect: true}},
		{name: "$host inside a name, IPv6 request", rw: Rewrite{Target: "http://www.$host:8080/x"}, route: regexRoute(t, `/`),
			path: "/", host: "2001:db8::1", want: Rewritten{Target: "http://www.2001-db8--1:8080/x", Redirect: true}},
		{name: "$host inside a name", rw: Rewrite{Target: "http://www.$host/x"}, route: regexRoute(t, `/`),
			path: "/", host: "shop.example.com", want: Rewritten{Target: "http://www.shop.example.com/x", Redirect: true}},
		{name: "$host with a port after it, IPv6 request", rw: Rewrite{Target: "http://$host:8080/x"}, route: regexRoute(t, `/`),
			path: "/", host: "::1", want: Rewritten{Target: "http://[::1]:8080/x", Redirect: true}},
		{name: "no host", rw: Rewrite{Target: "http://$host"}, route: regexRoute(t, `/`),
			path: "/", want: Rewritten{Target: "http://localhost", Redirect: true}},
		{name: "native prefix splice", rw: Rewrite{Target: "/v2", Syntax: NativeSyntax}, route: &Route{Type: Prefix, Path: "/api"},
			path: "/api/users", query: "x=1", want: Rewritten{Target: "/v2/users?x=1"}},
		{name: "native prefix splice to root", rw: Rewrite{Target: "/", Syntax: NativeSyntax}, route: &Route{Type: Prefix, Path: "/api"},
			path: "/api/users", want: Rewritten{Target: "/users"}},
		{name: "native prefix whole", rw: Rewrite{Target: "/v2/", Syntax: NativeSyntax}, route: &Route{Type: Prefix, Path: "/api"},
			path: "/api", want: Rewritten{Target: "/v2/"}},
		{name: "native root prefix", rw: Rewrite{Target: "/app", Syntax: NativeSyntax}, route: &Route{Type: Prefix, Path: ""},
			path: "/x/y", want: Rewritten{Target: "/app/x/y"}},
		{name: "native exact ${0}", rw: Rewrite{Target: "/from${0}", Syntax: NativeSyntax}, route: &Route{Type: Exact, Path: "/a"},
			path: "/a", want: Rewritten{Target: "/from/a"}},
		{name: "native query in target", rw: Rewrite{Target: "/i?id=${1}", Syntax: NativeSyntax}, route: regexRoute(t, `/i/(.*)`),
			path: "/i/a&b=c d", query: "z=1", want: Rewritten{Target: "/i?id=a%26b%3Dc%20d&z=1"}},
		{name: "trailing ? drops the query", rw: Rewrite{Target: "/i?", Syntax: NativeSyntax}, route: regexRoute(t, `/i`),
			path: "/i", query: "z=1", want: Rewritten{Target: "/i"}},
		{name: "host only", rw: Rewrite{Host: "internal:8080"}, route: &Route{Type: Prefix},
			path: "/x", want: Rewritten{}},
		{name: "literal prefix", rw: Rewrite{Target: "/b", ForwardedPrefix: "/p", ForwardedPrefixSet: true}, route: regexRoute(t, `/a`),
			path: "/a", want: Rewritten{Target: "/b", Prefix: "/p", PrefixSet: true}},
		{name: "prefix with $host", rw: Rewrite{ForwardedPrefix: "/$host/p", ForwardedPrefixSet: true}, route: &Route{Type: Prefix},
			path: "/x", host: "shop.example.com", want: Rewritten{Prefix: "/shop.example.com/p", PrefixSet: true}},
		{name: "prefix with a capture, newline escaped", rw: Rewrite{Target: "/b", ForwardedPrefix: "/$1", ForwardedPrefixSet: true}, route: regexRoute(t, `/([^/]*)`),
			path: "/x\r\ny", want: Rewritten{Target: "/b", Prefix: "/x%0D%0Ay", PrefixSet: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rw, err := NewRewrite(tt.rw)
			require.NoError(t, err)
			got := rw.Apply(tt.route, tt.path, tt.query, tt.scheme, tt.host)
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Fatalf("(-want +got):\n%s", d)
			}
		})
	}
}

func TestNewRewriteRejects(t *testing.T) {
	tests := []struct {
		name string
		rw   Rewrite
		msg  string
	}{
		{"nginx variable", Rewrite{Target: "/$request_uri"}, "$request_uri is not a variable ramjet expands in a rewrite target"},
		{"bare $", Rewrite{Target: "/a$"}, `a "$" names no variable`},
		{"$0 in nginx syntax", Rewrite{Target: "/$0"}, "$0 is not a variable ramjet expands"},
		{"native needs braces", Rewrite{Target: "/$1", Syntax: NativeSyntax}, "${0} to ${9}"},
		{"native unknown name", Rewrite{Target: "/${10}", Syntax: NativeSyntax}, "${10} is not a variable ramjet expands"},
		{"unclosed brace", Rewrite{Target: "/${1", Syntax: NativeSyntax}, `"${" is not closed`},
		{"space", Rewrite{Target: "/a b", Syntax: NativeSyntax}, "not what a request path may carry"},
		{"bad escape", Rewrite{Target: "/a%zz", Syntax: NativeSyntax}, "not what a request path may carry"},
		{"fragment", Rewrite{Target: "/a#b", Syntax: NativeSyntax}, "not what a request path may carry"},
		{"capture in host", Rewrite{Target: "https://$1.example.com/"}, "may not come from a capture"},
		{"empty host", Rewrite{Target: "http:///x"}, "no host"},
		{"bad host byte", Rewrite{Target: "http://a_b.example.com/"}, "a host name may not have"},
		{"bad query", Rewrite{Target: "/a?b c", Syntax: NativeSyntax}, "not what a query may carry"},
		{"prefix control byte", Rewrite{ForwardedPrefix: "/a\nb", ForwardedPrefixSet: true}, "control character"},
		{"host with path", Rewrite{Host: "a.example.com/x"}, "not a host name"},
		{"host with bad port", Rewrite{Host: "a.example.com:0"}, "not a host name"},
		{"host empty label", Rewrite{Host: "a..example.com"}, "not a host name"},
		{"target URL without a host", Rewrite{Target: "http://:8080/x"}, "not a host with an optional port"},
		{"target URL with a port that is no number", Rewrite{Target: "http://$host:a/x"}, "not a host with an optional port"},
		{"target over the template limit", Rewrite{Target: strings.Repeat("/$1", 20000)}, "over the 4096-byte limit"},
		{"prefix over the template limit", Rewrite{ForwardedPrefix: "/" + strings.Repeat("p", MaxRewriteTemplate), ForwardedPrefixSet: true}, "over the 4096-byte limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewRewrite(tt.rw)
			require.Error(t, err)
			require.Contains(t, err.Error(), tt.msg)
		})
	}
	for _, h := range []string{"a.example.com", "a.example.com:8080", "[fd00::1]:443", "10.0.0.1", "under_score.local"} {
		_, err := NewRewrite(Rewrite{Host: h})
		require.NoError(t, err, h)
	}
}

// checkRewritten reports what is wrong with a rewrite's result: a target
// must be an absolute path a request line can carry, a redirect a valid
// absolute http or https URL, and a header value free of control bytes;
// none longer than MaxRewriteTarget, and an Overflow carries nothing else.
func checkRewritten(out Rewritten) string {
	if out.Overflow {
		if out != (Rewritten{Overflow: true}) {
			return "an overflow with a result"
		}
		return ""
	}
	if len(out.Target) > MaxRewriteTarget || len(out.Prefix) > MaxRewriteTarget {
		return "longer than MaxRewriteTarget"
	}
	if out.PrefixSet {
		for i := 0; i < len(out.Prefix); i++ {
			if c := out.Prefix[i]; c < ' ' || c == 0x7f {
				return "control byte in the prefix header"
			}
		}
	}
	if out.Redirect {
		u, err := url.Parse(out.Target)
		switch {
		case err != nil:
			return "redirect is not a URL: " + err.Error()
		case u.Scheme != "http" && u.Scheme != "https":
			return "redirect scheme " + u.Scheme
		case u.Host == "":
			return "redirect without a host"
		}
		auth := out.Target[strings.Index(out.Target, "://")+3:]
		tail := ""
		if i := strings.IndexAny(auth, "/?"); i >= 0 {
			auth, tail = auth[:i], auth[i:]
		}
		if !onlyBytes(auth, hostBytes, false) {
			return "redirect host carries a byte a host may not: " + auth
		}
		return checkTargetBytes(tail)
	}
	if out.Target == "" {
		return ""
	}
	if !strings.HasPrefix(out.Target, "/") {
		return "not an absolute path"
	}
	if _, err := url.ParseRequestURI(out.Target); err != nil {
		return "not a request-target: " + err.Error()
	}
	return checkTargetBytes(out.Target)
}

func checkTargetBytes(s string) string {
	path, query, _ := strings.Cut(s, "?")
	if !onlyBytes(path, pathBytes, true) {
		return "path carries a byte a request-target may not: " + path
	}
	if !onlyBytes(query, queryBytes, true) {
		return "query carries a byte a request-target may not: " + query
	}
	return ""
}

// The bytes a request-target's path, its query and a host may carry
// besides letters and digits (RFC 3986 pchar, query, reg-name with a port
// and brackets), stated here apart from urltemplate's own tables.
const (
	pathBytes  = "-._~!$&'()*+,;=:@/"
	queryBytes = "-._~!$'()*,:@/?&=+;"
	hostBytes  = "-.:[]"
)

// onlyBytes reports whether s holds only letters, digits, bytes of extra
// and, when escapes, well-formed percent escapes.
func onlyBytes(s, extra string, escapes bool) bool {
	hex := func(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', strings.IndexByte(extra, c) >= 0:
		case escapes && c == '%' && i+2 < len(s) && hex(s[i+1]) && hex(s[i+2]):
			i += 2
		default:
			return false
		}
	}
	return true
}

func FuzzRewrite(f *testing.F) {
	f.Add("/$2", false, `/something(/|$)(.*)`, "/something/new", "a=1", "shop.example.com")
	f.Add("/new/backend/$1", false, `/foo/bar/(.+)`, "/foo/bar/x y", "", "h")
	f.Add("https://$host/$1", false, `/(.*)`, "/a%b", "x", "::1")
	f.Add("$scheme://new.example.com/$1/$9", false, `/(.*)`, "/é\n", "", "")
	f.Add("/v2", true, "", "/api/users", "q", "h")
	f.Add("/i?id=${1}&x", true, `/i/(.*)`, "/i/a&b", "z=1", "h")
	f.Add("${1}?", true, `/(\w+)(?=x)`, "/abcx", "z", "h")
	f.Add("http://${host}:8080${0}", true, ``, "/", "", "[::1]")
	f.Add(strings.Repeat("/$1", 1000), false, `/(.*)`, "/"+strings.Repeat("a", 70), "q=1", "h")
	f.Add(strings.Repeat("${host}", 500), true, `/(.*)`, "/", "", strings.Repeat("h", 200))
	f.Fuzz(func(t *testing.T, target string, native bool, pattern, path, query, host string) {
		if !onlyBytes(query, queryBytes, true) {
			// The router hands over a query as received, which has no
			// space or control byte (requestTarget refuses them).
			return
		}
		syntax := NginxSyntax
		if native {
			syntax = NativeSyntax
		}
		rw, err := NewRewrite(Rewrite{Target: target, Syntax: syntax, ForwardedPrefix: target, ForwardedPrefixSet: true})
		if err != nil {
			return
		}
		route := &Route{Type: Prefix, Path: strings.TrimRight(pattern, "/")}
		if pattern != "" {
			if re, err := CompileRegex(pattern, 0); err == nil {
				route = &Route{Type: Regex, Path: pattern, Regexp: re}
			}
		}
		for _, scheme := range []string{"http", "https"} {
			if why := checkRewritten(rw.Apply(route, path, query, scheme, host)); why != "" {
				t.Fatalf("target %q on %q (query %q, host %q): %s", target, path, query, host, why)
			}
		}
	})
}

// What Apply builds is bounded whatever the template: 20,000 "/$1" on a
// 5 KB path (100 MB unbounded, the figure) stop at the first
// capture past MaxRewriteTarget, so a request costs about the bound in
// bytes, and a target just under the bound is built in full.
func TestRewriteApplyBounded(t *testing.T) {
	huge := strings.Repeat("/$1", 20000)
	hugeTmpl, err := urltemplate.ParseRewrite(huge, false)
	require.NoError(t, err)
	// Past NewRewrite's template limit: built by hand, as a Table made
	// without compile could hold it.
	rw := &Rewrite{Target: huge, target: hugeTmpl}
	route := regexRoute(t, `/a/(.*)`)
	path := "/a/" + strings.Repeat("x", 5000)
	require.Equal(t, Rewritten{Overflow: true}, rw.Apply(route, path, "q=1", "http", "h"))

	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	const runs = 20
	for range runs {
		rw.Apply(route, path, "", "http", "h")
	}
	runtime.ReadMemStats(&after)
	perRun := (after.TotalAlloc - before.TotalAlloc) / runs
	require.Less(t, perRun, uint64(4*MaxRewriteTarget), "bytes allocated per Apply")

	// 13,107 references of 4 bytes each: 65,535 bytes with the leading "/".
	short := "/a/" + "yyy"
	want := strings.Repeat("/yyy", (MaxRewriteTarget-1)/4)
	tmpl, err := urltemplate.ParseRewrite(strings.Repeat("/$1", (MaxRewriteTarget-1)/4), false)
	require.NoError(t, err)
	rw = &Rewrite{Target: "set", target: tmpl}
	got := rw.Apply(route, short, "", "http", "h")
	require.Equal(t, want, got.Target)
	require.False(t, got.Overflow)
	// The client's query counts too.
	require.Equal(t, Rewritten{Overflow: true}, rw.Apply(route, short, "q=12", "http", "h"))

	// The same bound holds for X-Forwarded-Prefix.
	rw = &Rewrite{ForwardedPrefix: huge, ForwardedPrefixSet: true, prefix: hugeTmpl}
	require.Equal(t, Rewritten{Overflow: true}, rw.Apply(route, path, "", "http", "h"))
}
