package match

import (
	"strings"
	"time"

	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRegexFoldsASCIIOnly: nginx's PCRE without UTF mode folds ASCII
// letters only under ~* (SPEC §13): "é" and "É" are different bytes to it.
// Each pattern runs on Go's engine and, with a look-ahead appended, on
// regexp2; both must agree with PCRE.
func TestRegexFoldsASCIIOnly(t *testing.T) {
	tests := []struct {
		pattern string
		match   []string
		noMatch []string
	}{
		{`/café`, []string{"/café", "/CAFé", "/Café/x"}, []string{"/CAFÉ", "/cafÉ"}},
		{`/straße`, []string{"/STRAßE"}, []string{"/STRASSE", "/strasse"}},
		{`/[é]x`, []string{"/éx", "/éX"}, []string{"/Éx"}},
		{`/[a-c]+$`, []string{"/abc", "/ABC", "/aBc"}, []string{"/abd", "/D"}},
		{`/[^a]`, []string{"/b", "/é"}, []string{"/a", "/A"}},
		{`/[^a-cé]$`, []string{"/d", "/É"}, []string{"/B", "/é"}},
		{`/[X-c]$`, []string{"/x", "/Y", "/_", "/B", "/c"}, []string{"/d", "/W"}},
		{`/kube`, []string{"/KUBE"}, []string{"/\u212aube"}},
		{`/users`, []string{"/Users"}, []string{"/u\u017fers"}},
		{`/id`, []string{"/ID"}, []string{"/\u0130d"}},
		{`/\w+$`, []string{"/aZ_9"}, []string{"/é"}},
		{`/\p{Lu}`, []string{"/É"}, []string{"/1"}},
		{`/(?<name>ab)`, []string{"/AB"}, []string{"/ac"}},
	}
	for _, tt := range tests {
		for _, engine := range []struct {
			name, suffix string
			linear       bool
		}{{"linear", "", true}, {"backtracking", "(?=.*)", false}} {
			t.Run(engine.name+" "+tt.pattern, func(t *testing.T) {
				re, err := CompileRegex(tt.pattern+engine.suffix, time.Second) // a loaded machine must not time out
				require.NoError(t, err)
				require.Equal(t, engine.linear, re.Linear(), "engine")
				for _, p := range tt.match {
					assert.True(t, re.MatchString(p), "should match %q", p)
				}
				for _, p := range tt.noMatch {
					assert.False(t, re.MatchString(p), "should not match %q", p)
				}
			})
		}
	}
}

func TestFoldASCIIText(t *testing.T) {
	tests := []struct{ in, want string }{
		{`ab`, `[aA][bB]`},
		{`é`, `é`},
		{`[a-cé]`, `[a-cA-Cé]`},
		{`[^x]`, `[^xX]`},
		{`[]a]`, `[]aA]`},
		{`\d\p{Lu}\k<n>\x41\u0041\cA`, `\d\p{Lu}\k<n>\x41\u0041\cA`},
		{`(?<name>a)(?'q'b)(?P<r>c)`, `(?<name>[aA])(?'q'[bB])(?P<r>[cC])`},
		{`(?<=a)(?<!b)(?=c)(?!d)(?>e)(?:f)`, `(?<=[aA])(?<![bB])(?=[cC])(?![dD])(?>[eE])(?:[fF])`},
		{`(?i)a(?-i:b)`, `(?i)[aA](?-i:[bB])`},
		{`a{2,3}`, `[aA]{2,3}`},
		{`[A-z]`, `[A-za-zA-Z]`},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, foldASCIIText(tt.in), tt.in)
	}
}

// TestRegexInlineCaseOff: under nginx's ~*, a pattern that turns caseless
// matching off with an inline flag ("(?-i)", "(?-i:...)", "(?s-i)") matches
// those letters only as written, on either engine.
func TestRegexInlineCaseOff(t *testing.T) {
	tests := []struct {
		pattern string
		match   []string
		noMatch []string
	}{
		{`/shop/(?-i:Cart)`, []string{"/shop/Cart", "/SHOP/Cart"}, []string{"/shop/cart", "/shop/CART"}},
		{`/a(?-i)B`, []string{"/aB", "/AB"}, []string{"/ab", "/Ab"}},
		{`/a(?s-i)B`, []string{"/AB"}, []string{"/Ab"}},
		{`/a(?-i:B)c`, []string{"/ABC", "/aBc"}, []string{"/abc"}},
		// Not flags: a class, an escaped parenthesis; ASCII folding only.
		{`/[(?\-i)]é`, []string{"/-é", "/Ié"}, []string{"/-É"}},
		{`/\(?-ié`, []string{"/(-Ié", "/-ié"}, []string{"/-IÉ"}},
	}
	for _, tt := range tests {
		for _, engine := range []struct {
			name, suffix string
			linear       bool
		}{{"linear", "", true}, {"backtracking", "(?=.*)", false}} {
			t.Run(engine.name+" "+tt.pattern, func(t *testing.T) {
				re, err := CompileRegex(tt.pattern+engine.suffix, time.Second)
				require.NoError(t, err)
				require.Equal(t, engine.linear, re.Linear(), "engine")
				for _, p := range tt.match {
					assert.True(t, re.MatchString(p), "should match %q", p)
				}
				for _, p := range tt.noMatch {
					assert.False(t, re.MatchString(p), "should not match %q", p)
				}
			})
		}
	}
}

// TestRegexSpaceClassHasVT: PCRE's \s (nginx's regex engine, PCRE 8.34 on
// and PCRE2) is [\t\n\x0B\f\r ], vertical tab included; Go's \s leaves it
// out. Both engines must mean PCRE's.
func TestRegexSpaceClassHasVT(t *testing.T) {
	tests := []struct {
		pattern string
		match   []string
		noMatch []string
	}{
		{`/a\sb`, []string{"/a b", "/a\x0bb", "/A\tB"}, []string{"/a_b"}},
		{`/a[\s]b`, []string{"/a\x0bb"}, []string{"/a_b"}},
		{`/a\Sb`, []string{"/a_b"}, []string{"/a\x0bb", "/a b"}},
		{`/\Q\s\E`, []string{`/\s`, `/\S`}, []string{"/ "}},
	}
	for _, tt := range tests {
		for _, engine := range []struct {
			name, suffix string
			linear       bool
		}{{"linear", "", true}, {"backtracking", "(?=.*)", false}} {
			if engine.suffix != "" && strings.Contains(tt.pattern, `\Q`) {
				continue // regexp2 has no \Q...\E
			}
			t.Run(engine.name+" "+tt.pattern, func(t *testing.T) {
				re, err := CompileRegex(tt.pattern+engine.suffix, time.Second)
				require.NoError(t, err)
				require.Equal(t, engine.linear, re.Linear(), "engine")
				for _, p := range tt.match {
					assert.True(t, re.MatchString(p), "should match %q", p)
				}
				for _, p := range tt.noMatch {
					assert.False(t, re.MatchString(p), "should not match %q", p)
				}
			})
		}
	}
}

// TestRegexPOSIXClasses: PCRE reads a POSIX class ("[[:digit:]]") inside a
// bracket; regexp2 does not, so on the backtracking engine the class must
// be spelled out (ASCII, as PCRE without UTF mode has it).
func TestRegexPOSIXClasses(t *testing.T) {
	tests := []struct {
		pattern string
		match   []string
		noMatch []string
	}{
		{`/[[:digit:]]+$`, []string{"/123"}, []string{"/12a", "/:d]"}},
		{`/[[:alpha:]_]+$`, []string{"/aB_c"}, []string{"/a1"}},
		{`/[^[:alnum:]]`, []string{"/-"}, []string{"/a", "/Z", "/0"}},
		{`/x[[:space:]]`, []string{"/x ", "/x\x0b"}, []string{"/xa"}},
		{`/[[:upper:]]`, []string{"/A", "/a"}, []string{"/1"}},
		{`/[[:xdigit:][:punct:]]+$`, []string{"/fF09.!~"}, []string{"/g"}},
	}
	for _, tt := range tests {
		for _, engine := range []struct {
			name, suffix string
			linear       bool
		}{{"linear", "", true}, {"backtracking", "(?=.*)", false}} {
			t.Run(engine.name+" "+tt.pattern, func(t *testing.T) {
				re, err := CompileRegex(tt.pattern+engine.suffix, time.Second)
				require.NoError(t, err)
				require.Equal(t, engine.linear, re.Linear(), "engine")
				for _, p := range tt.match {
					assert.True(t, re.MatchString(p), "should match %q", p)
				}
				for _, p := range tt.noMatch {
					assert.False(t, re.MatchString(p), "should not match %q", p)
				}
			})
		}
	}
}
