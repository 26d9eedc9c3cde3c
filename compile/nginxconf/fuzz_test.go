package nginxconf

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// FuzzParse: any source parses or fails without panicking; a tree Parse
// returns formats to a source that parses back to the same tree; and the
// tree is no bigger than the source (no word comes from nothing).
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`more_set_headers "X-A: b" -s 200 -t text/html;`,
		"if ($request_uri ~* \"^/old/(.*)\") { rewrite ^ /new/$1 permanent; }",
		"location = /x { return 200 'ok\\n'; }\n# c\n",
		`return 302 https://${host}$request_uri;`,
		"a\\ b\\\n{;}",
		`add_header X "y" always;deny 10.0.0.0/8;allow all;`,
		"content_by_lua_block { ngx.say(\"}\") -- }\n }",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		ds, err := Parse(src)
		if err != nil {
			return
		}
		if n := count(ds); n > len(src) {
			t.Fatalf("%d directives and words from %d bytes", n, len(src))
		}
		out := Format(ds)
		again, err := Parse(out)
		if err != nil {
			t.Fatalf("Format's %q does not parse: %v", out, err)
		}
		stripLines(ds)
		stripLines(again)
		if d := cmp.Diff(ds, again); d != "" {
			t.Fatalf("round trip of %q changed the tree:\n%s", src, d)
		}
	})
}

func count(ds []*Directive) int {
	n := 0
	for _, d := range ds {
		n += 1 + len(d.Args) + count(d.Block)
	}
	return n
}
