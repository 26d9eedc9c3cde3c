package nginxconf

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      []*Directive
	}{
		{"words and comments", "more_set_headers \"X-A: b\";  # a comment ; {\nexpires 1h;",
			[]*Directive{{Name: "more_set_headers", Args: []string{"X-A: b"}, Line: 1}, {Name: "expires", Args: []string{"1h"}, Line: 2}}},
		{"single quotes and escapes", `add_header 'X-Q' 'it\'s "x"' always;`,
			[]*Directive{{Name: "add_header", Args: []string{"X-Q", `it's "x"`, "always"}, Line: 1}}},
		{"regex escapes stay", `rewrite ^/a/(\d+)$ /b/$1 break;`,
			[]*Directive{{Name: "rewrite", Args: []string{`^/a/(\d+)$`, "/b/$1", "break"}, Line: 1}}},
		{"escaped space joins a word, the backslash kept as nginx keeps it", `return 200 a\ b;`,
			[]*Directive{{Name: "return", Args: []string{"200", `a\ b`}, Line: 1}}},
		{"variable braces are no block", "return 302 https://${host}/x;",
			[]*Directive{{Name: "return", Args: []string{"302", "https://${host}/x"}, Line: 1}}},
		{"if block", "\nif ($host = \"a.example\") {\n  return 301 https://b.example$request_uri;\n}\n",
			[]*Directive{{Name: "if", Args: []string{"($host", "=", "a.example", ")"}, Line: 2, HasBlock: true,
				Block: []*Directive{{Name: "return", Args: []string{"301", "https://b.example$request_uri"}, Line: 3}}}}},
		{"location and empty block", "location = /x { }\nlocation ~* \\.php$ { deny all; }",
			[]*Directive{
				{Name: "location", Args: []string{"=", "/x"}, Line: 1, HasBlock: true},
				{Name: "location", Args: []string{"~*", `\.php$`}, Line: 2, HasBlock: true, Block: []*Directive{{Name: "deny", Args: []string{"all"}, Line: 2}}}}},
		{"quoted newline counts lines", "add_header X \"a\nb\";\nexpires off;",
			[]*Directive{{Name: "add_header", Args: []string{"X", "a\nb"}, Line: 1}, {Name: "expires", Args: []string{"off"}, Line: 3}}},
		{"empty", "  # nothing\n", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse(tc.src)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Error(d)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"expires 1h", `line 1: unexpected end of file, expecting ";" or "}"`},
		{"return 200 \"x", "line 1: unexpected end of file in a quoted string"},
		{"add_header \"a\"b;", `line 1: unexpected 'b' after a quoted string`},
		{"\n}", `line 2: unexpected "}"`},
		{"a {\n b;", `line 2: unexpected end of file, expecting "}"`},
		{";", `line 1: unexpected ";"`},
		{"{", `line 1: unexpected "{"`},
		{strings.Repeat("a {", MaxDepth) + strings.Repeat("}", MaxDepth), "line 1: blocks nested too deep"},
	} {
		_, err := Parse(tc.src)
		if err == nil || err.Error() != tc.want {
			t.Errorf("Parse(%q) = %v, want %s", tc.src, err, tc.want)
		}
	}
	if _, err := Parse(strings.Repeat(" ", MaxSize+1)); err != ErrTooLarge {
		t.Errorf("oversized source: %v", err)
	}
}

// stripLines drops line numbers, which Format does not keep.
func stripLines(ds []*Directive) {
	for _, d := range ds {
		d.Line = 0
		stripLines(d.Block)
	}
}

func TestFormatRoundTrip(t *testing.T) {
	src := "a \"x\\\\y\" 'q\\'' \\t;\nif ($http_x ~* \"^a b$\") { return 403 \"no\\n\"; }\nlocation /x {}\n"
	ds, err := Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Parse(Format(ds))
	if err != nil {
		t.Fatal(err)
	}
	stripLines(ds)
	stripLines(again)
	if d := cmp.Diff(ds, again); d != "" {
		t.Error(d)
	}
}

func TestLuaBlock(t *testing.T) {
	src := "access_by_lua_block {\n  if ngx.var.x == \"}\" then -- a } in a comment\n    ngx.exit(403) end\n}\nadd_header A b;"
	got, err := Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	want := []*Directive{
		{Name: "access_by_lua_block", Line: 1, HasBlock: true, Lua: "\n  if ngx.var.x == \"}\" then -- a } in a comment\n    ngx.exit(403) end\n"},
		{Name: "add_header", Args: []string{"A", "b"}, Line: 5},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Error(d)
	}
}
