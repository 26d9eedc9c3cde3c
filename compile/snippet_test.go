package compile

import (
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/match"
)

var snippetsOn = Options{AllowSnippetAnnotations: true, AnnotationsRiskLevel: "Critical"}

// snippetRoute compiles one Ingress with the snippet and returns its
// route for shop.example.com/ and the warnings.
func snippetRoute(t *testing.T, key, snippet string) (*match.Route, []Warning) {
	t.Helper()
	tab, ws := compileOK(t, protocolSnapshot(key, snippet), snippetsOn)
	res := tab.Lookup("shop.example.com", "/")
	require.NotNil(t, res.Route)
	return res.Route, ws
}

// TestHostileSnippets feeds the directives that would reach beyond what
// annotations can (Lua, files, other upstreams, modules) and shows each
// warned, naming itself and its line, and ignored: the route keeps its
// backend, gets no policy, and its snippet holds only what translated.
func TestHostileSnippets(t *testing.T) {
	for _, tc := range []struct{ name, directive string }{
		{"access_by_lua_block", "access_by_lua_block {\n  ngx.exit(403)\n}"},
		{"access_by_lua", `access_by_lua 'ngx.exit(403)';`},
		{"content_by_lua", `content_by_lua 'ngx.say("x")';`},
		{"content_by_lua_block", `content_by_lua_block { ngx.say("}") }`},
		{"include", "include /etc/nginx/secrets.conf;"},
		{"proxy_pass", "proxy_pass http://elsewhere.example.net;"},
		{"alias", "alias /etc/;"},
		{"root", "root /;"},
		{"set_by_lua", `set_by_lua $x 'return os.getenv("HOME")';`},
		{"load_module", "load_module /tmp/evil.so;"},
		{"location", "location /x { proxy_pass http://elsewhere.example.net; }"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "add_header X-Before 1;\n" + tc.directive + "\nadd_header X-After 1;\n"
			r, ws := snippetRoute(t, NginxPrefix+"configuration-snippet", src)
			require.Len(t, ws, 1, warningText(ws))
			w := ws[0]
			assert.Equal(t, SnippetAnswerIgnored, w.Reason)
			assert.Equal(t, TrafficMoves, w.Severity())
			assert.Equal(t, annotationField(NginxPrefix+"configuration-snippet"), w.Field)
			assert.True(t, strings.HasPrefix(w.Message, "line 2: "+tc.name+": "), w.Message)
			assert.Contains(t, w.Message, "does nothing instead")
			assert.Equal(t, "prod/api:80", r.Backend.ID, "the backend stays the Ingress's")
			assert.Nil(t, r.Policy)
			require.NotNil(t, r.Snippet)
			var names []string
			for _, op := range r.Snippet.Ops {
				names = append(names, op.Kind.String()+" "+op.Name)
			}
			assert.Equal(t, []string{"add_header X-Before", "add_header X-After"}, names)
			assert.Empty(t, r.Snippet.Access)
		})
	}
}

func TestSnippetWarnings(t *testing.T) {
	for _, tc := range []struct {
		name, key, src string
		want           []string // reason and message prefix
	}{
		{"unknown variable", "configuration-snippet", "more_set_headers \"X: $upstream_addr\";",
			[]string{"SnippetIgnored line 1: more_set_headers: $upstream_addr is not a variable ramjet expands in a snippet (it expands $host, $http_host, $server_name, $scheme, $request_uri, $uri, $document_uri, $args, $query_string, $remote_addr, $request_method, $http_<name>, $cookie_<name>, $arg_<name>, $1 to $9, $namespace, $ingress_name, $service_name, $service_port, $location_path)"}},
		{"file test", "configuration-snippet", "\n\nif (-f /tmp/maintenance) { return 503; }",
			[]string{"SnippetAnswerIgnored line 3: if: the condition tests files"}},
		{"header tuning", "configuration-snippet", "gzip on;\nproxy_cache_valid 200 1m;",
			[]string{"SnippetIgnored line 1: gzip:", "SnippetIgnored line 2: proxy_cache_valid:"}},
		{"allow inside if", "configuration-snippet", "if ($http_x) { deny all; }",
			[]string{"SnippetAnswerIgnored line 1: deny: takes one address"}},
		{"server-level timeout", "server-snippet", "proxy_read_timeout 600s;",
			[]string{"SnippetNoEffect line 1: proxy_read_timeout: ingress-nginx sets it again"}},
		{"syntax", "configuration-snippet", "more_set_headers \"X: 1;\n",
			[]string{"SnippetAnswerIgnored line 1: (syntax): the snippet is not nginx configuration"}},
		{"pcre only", "configuration-snippet", "rewrite ^/(?=a)b /c;",
			[]string{"SnippetAnswerIgnored line 1: rewrite: its regular expression is not one ramjet's RE2 engine reads"}},
		{"return 444 is translated", "configuration-snippet", "return 444;", nil},
		// nginx allows the header directives in an if of a location only
		// (add_header: "if in location"; headers-more: "location if"):
		// in a server's if its configuration test fails.
		{"add_header inside a server's if", "server-snippet", "if ($host = a.example.com) {\n  add_header X-A 1;\n  more_set_headers \"X-B: 1\";\n  expires 1h;\n}",
			[]string{"SnippetAnswerIgnored line 2: add_header: nginx allows it in an if only inside a location",
				"SnippetAnswerIgnored line 3: more_set_headers: nginx allows it in an if only inside a location",
				"SnippetAnswerIgnored line 4: expires: nginx allows it in an if only inside a location"}},
		{"add_header inside a location's if is translated", "configuration-snippet", "if ($host = a.example.com) { add_header X-A 1; }", nil},
		{"return inside a server's if is translated", "server-snippet", "if ($host = a.example.com) { return 404; }", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, ws := compileOK(t, protocolSnapshot(NginxPrefix+tc.key, tc.src), snippetsOn)
			var got []string
			for _, w := range ws {
				got = append(got, string(w.Reason)+" "+w.Message)
			}
			require.Len(t, got, len(tc.want), strings.Join(got, "\n"))
			for i := range got {
				assert.True(t, strings.HasPrefix(got[i], tc.want[i]), "got %q, want prefix %q", got[i], tc.want[i])
			}
		})
	}
}

func TestReadSnippet(t *testing.T) {
	got := ReadSnippet("more_set_headers 'A: b';\nif ($host = x) {\n  return 301 https://y;\n  lua_code_cache off;\n}\nlocation = /p { return 200; }\n", true)
	want := []SnippetDirective{
		{Line: 1, Name: "more_set_headers", Translated: true},
		{Line: 2, Name: "if", Translated: true},
		{Line: 3, Name: "return", Translated: true},
		{Line: 4, Name: "lua_code_cache", Reason: SnippetAnswerIgnored, Note: "ramjet does not translate this directive and does nothing instead"},
		{Line: 6, Name: "return", Translated: true},
		{Line: 6, Name: "location", Translated: true},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Error(d)
	}
}

func TestNginxSeconds(t *testing.T) {
	for in, want := range map[string]int{"30": 30, "30s": 30, "1m30s": 90, "2h": 7200, "1d": 86400, "500ms": 1, "1w": 604800} {
		got, ok := nginxSeconds(in, false)
		assert.True(t, ok, in)
		assert.Equal(t, want, got, in)
	}
	got, ok := nginxSeconds("-1h", true)
	assert.True(t, ok)
	assert.Equal(t, -3600, got)
	for _, bad := range []string{"", "x", "1x", "-5", "s"} {
		_, ok := nginxSeconds(bad, false)
		assert.False(t, ok, bad)
	}
}

// TestReadSnippetKnobs: the reader refuses a proxy directive's value
// exactly where the compile does, with the same note, since both apply it
// as its annotation.
func TestReadSnippetKnobs(t *testing.T) {
	for _, src := range []string{
		"proxy_read_timeout 0;", "proxy_read_timeout 00;", "proxy_connect_timeout 0ms;",
		"proxy_next_upstream_tries x;", "client_max_body_size 1q;", "proxy_buffering maybe;",
		"proxy_read_timeout 1m;", "client_max_body_size 8m;",
	} {
		var notes []string
		for _, d := range ReadSnippet(src, false) {
			if !d.Translated {
				notes = append(notes, string(d.Reason)+" line "+strconv.Itoa(d.Line)+": "+d.Name+": "+d.Note)
			}
		}
		_, ws := compileOK(t, protocolSnapshot(NginxPrefix+"configuration-snippet", src), snippetsOn)
		var warned []string
		for _, w := range ws {
			warned = append(warned, string(w.Reason)+" "+w.Message)
		}
		assert.Equal(t, warned, notes, src)
	}
}

// TestNginxSecondsOverflow: a time too long for a duration is no time,
// not one wrapped around to another.
func TestNginxSecondsOverflow(t *testing.T) {
	for _, s := range []string{"1073741824y", "1073741824M", "300000000y", "1073741824m", "9223372037", "-9223372037"} {
		n, ok := nginxSeconds(s, true)
		assert.False(t, ok, "%s read as %d", s, n)
	}
}

// proxy_redirect and proxy_cookie_* in a configuration-snippet sit beside
// the "off" ingress-nginx's template writes in every location by default,
// which nginx refuses ("is duplicate"); the warning says so and names the
// annotation that serves the rewrite.
func TestReadSnippetResponseRewrites(t *testing.T) {
	for name, annotation := range map[string]string{
		"proxy_redirect":      "proxy-redirect-from",
		"proxy_cookie_domain": "proxy-cookie-domain",
		"proxy_cookie_path":   "proxy-cookie-path",
	} {
		got := ReadSnippet(name+" http://a/ /b/;\n", false)
		require.Len(t, got, 1, name)
		assert.False(t, got[0].Translated, name)
		assert.Contains(t, got[0].Note, "is duplicate", name)
		assert.Contains(t, got[0].Note, annotation, name)
	}
}
