package compile

import (
	"testing"

	"ramjet.dev/ramjet/match"
)

// FuzzSnippet: any snippet compiles without panicking, every directive is
// either translated or warned once, and what translated runs on a request
// without panicking.
func FuzzSnippet(f *testing.F) {
	for _, s := range []string{
		"more_set_headers -s '200 404' -t text/html 'X-A: $host';\nadd_header B c always;",
		"if ($request_uri ~* \"^/(a|b)/(.*)\") { rewrite ^ /x/$2?q=$1 last; }",
		"location ~ \\.php$ { return 403; }\nlocation = /p { deny all; }",
		"return 301 $scheme://example.com$request_uri;",
		"rewrite ^/(.*)$ /$1? permanent;\nexpires -1h;\nproxy_read_timeout 1m;",
		"access_by_lua_block { ngx.exit(403) }\nallow 10.0.0.0/8;\ndeny all;",
		"more_set_input_headers -r 'X: $http_x_y';\nmore_clear_input_headers 'X-*';",
	} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, src string, server bool) {
		ds := ReadSnippet(src, server)
		// Compile drops exact repeats of a warning.
		distinct := map[SnippetDirective]bool{}
		for _, d := range ds {
			if !d.Translated {
				distinct[d] = true
				if d.Reason == "" || d.Note == "" {
					t.Fatalf("directive %s (line %d) neither translated nor explained", d.Name, d.Line)
				}
			}
		}
		key := "configuration-snippet"
		if server {
			key = "server-snippet"
		}
		tab, ws := compileOK(t, protocolSnapshot(NginxPrefix+key, src), snippetsOn)
		snippetWarnings := 0
		for _, w := range ws {
			switch w.Reason {
			case SnippetIgnored, SnippetAnswerIgnored, SnippetNoEffect:
				snippetWarnings++
			}
		}
		if snippetWarnings != len(distinct) {
			t.Fatalf("%d directives not translated, %d warnings:\n%s", len(distinct), snippetWarnings, warningText(ws))
		}
		res := tab.Lookup("shop.example.com", "/a/b")
		for _, sn := range []*match.Snippet{res.Location().Snippet, res.Host.FallbackLocation.Snippet} {
			if sn == nil {
				continue
			}
			out := sn.Run(&match.SnippetRequest{Host: "shop.example.com", URI: "/a/b", RequestURI: "/a/b?x=1", Args: "x=1",
				Scheme: "http", RemoteAddr: "192.0.2.1", Method: "GET", Header: map[string][]string{"X-Y": {"z"}}})
			h := map[string][]string{"Content-Type": {"text/html"}}
			match.ApplyResponse(out.Response, h, 200)
			match.ApplyRequest(out.Request, map[string][]string{})
		}
		for _, l := range res.Host.SnippetLocations {
			match.SnippetLocationFor(res.Host, res, "/a/b")
			_ = l
		}
	})
}
