package match

import (
	"regexp/syntax"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestCompileRegexEngine(t *testing.T) {
	tests := []struct {
		pattern string
		linear  bool
		match   []string
		noMatch []string
	}{
		{`/api/(.*)`, true, []string{"/api/", "/API/x", "/api/v1/users"}, []string{"/ap", "/x/api/"}},
		{`/a|/b`, true, []string{"/a", "/b/c"}, []string{"/x/b", "/c"}},
		{`/v[0-9]+$`, true, []string{"/v1", "/V22"}, []string{"/v1/", "/va"}},
		{`/(?<name>x)`, true, []string{"/x"}, []string{"/y"}},
		{`/(?!admin).*`, false, []string{"/user", "/Adm"}, []string{"/admin", "/ADMIN/x"}},
		{`/(?<=/)x`, false, []string{"/x"}, []string{"/y"}},
		{`/(a)\1`, false, []string{"/aa", "/aA"}, []string{"/ab"}},
		{`/(?>a+)b`, false, []string{"/aab"}, []string{"/aac"}},
		// Go refuses nested counts over 1000; regexp2 runs them as loops,
		// so the program stays small and the timeout bounds the matching.
		{`/(x{1000}){1000}`, false, nil, []string{"/xx"}},
		{`/x{2000}`, false, []string{"/" + strings.Repeat("x", 2000)}, []string{"/" + strings.Repeat("x", 1999)}},
		{`/x\Z`, false, []string{"/x"}, []string{"/xy"}},
	}
	for _, tt := range tests {
		t.Run(tt.pattern, func(t *testing.T) {
			re, err := CompileRegex(tt.pattern, 0)
			require.NoError(t, err)
			require.Equal(t, tt.linear, re.Linear(), "engine")
			require.Equal(t, tt.pattern, re.String())
			for _, p := range tt.match {
				require.True(t, re.MatchString(p), "should match %q", p)
			}
			for _, p := range tt.noMatch {
				require.False(t, re.MatchString(p), "should not match %q", p)
			}
			require.Zero(t, re.Timeouts())
		})
	}
}

func TestCompileRegexRejects(t *testing.T) {
	tests := []struct{ name, pattern, errContains string }{
		{"does not compile", `/api/(`, "missing"},
		{"possessive quantifier", `/a++`, "nested repetition"},
		{"linear program over 1 MiB", strings.Repeat("x{1000}", 30), "over the 1048576-byte limit"},
		{"linear program far over 1 MiB, rejected before compiling", strings.Repeat("[a-z]{1000}", 2900), "over the 1048576-byte limit"},
		{"long literal", "/" + strings.Repeat("a", 30000), "over the 1048576-byte limit"},
		{"pattern text over 32 KiB, rejected before parsing", "/x" + strings.Repeat("(a|b)", 1<<20/5), "over the 32768-byte limit"},
		{"long backtracking pattern", strings.Repeat(`(a)\1`, 7000), "over the 32768-byte limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := CompileRegex(tt.pattern, 0)
			require.Error(t, err)
			require.Contains(t, err.Error(), tt.errContains)
			require.Less(t, len(err.Error()), 300, "error quotes a truncated pattern")
		})
	}
}

// BenchmarkCompileRegexRejects measures what rejecting an oversized pattern
// costs: it must stay cheap (milliseconds), since expanding the largest case
// would cost seconds in every replica.
func BenchmarkCompileRegexRejects(b *testing.B) {
	for name, pattern := range map[string]string{
		"far over 1 MiB":   strings.Repeat("[a-z]{1000}", 2900),
		"long literal":     "/" + strings.Repeat("a", 30000),
		"1 MiB of pattern": "/x" + strings.Repeat("(a|b)", 1<<20/5),
	} {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if _, err := CompileRegex(pattern, 0); err == nil {
					b.Fatal("accepted")
				}
			}
		})
	}
}

func TestCompileRegexAcceptsUnderLimit(t *testing.T) {
	// 25,000 instructions of 40 bytes: under 1 MiB.
	re, err := CompileRegex(strings.Repeat("x{1000}", 25), 0)
	require.NoError(t, err)
	require.True(t, re.Linear())
}

func TestRegexTimeoutCountsAsNoMatch(t *testing.T) {
	re, err := CompileRegex(`/(?=.)(a+)+$`, 10*time.Millisecond)
	require.NoError(t, err)
	require.False(t, re.Linear())
	require.True(t, re.MatchString("/aaaa"))

	start := time.Now()
	require.False(t, re.MatchString("/"+strings.Repeat("a", 64)+"!"))
	require.Equal(t, uint64(1), re.Timeouts())
	// regexp2's clock ticks every 100 ms, which bounds the overshoot.
	require.Less(t, time.Since(start), 2*time.Second)

	require.True(t, re.MatchString("/aaaa"), "a timeout does not poison later matches")
	require.Equal(t, uint64(1), re.Timeouts())
}

func TestEstimateInsts(t *testing.T) {
	for _, p := range []string{
		`/api/(.*)`, `x{1000}`, `(ab){3,7}`, `[a-z]{2,}`, `(a|b|c)+`, `/foo|/bar(baz)?`,
		`(?:(?:a{10}){10}){10}`, `a{0}b`, `(a*)*`, `(?:(?:a{10,}){10}){10}`, `(?:a{1,10}){1,10}`,
		strings.Repeat("x{1000}", 30),
	} {
		re, err := syntax.Parse("(?i)^(?:"+p+")", syntax.Perl)
		require.NoError(t, err)
		est := estimateInsts(re, maxEstimatedInsts)
		prog, err := syntax.Compile(re.Simplify())
		require.NoError(t, err)
		// Within 2x either way, so the 2 MiB early rejection never refuses
		// a program under 1 MiB and never lets one far over it compile.
		ratio := float64(est) / float64(len(prog.Inst))
		if ratio < 0.5 || ratio > 2 {
			t.Errorf("%q: estimate %d, actual %d", p, est, len(prog.Inst))
		}
	}
	// Go's parser refuses nested counts this large, so build the tree: the
	// estimate must saturate instead of overflowing.
	huge := &syntax.Regexp{Op: syntax.OpLiteral, Rune: []rune("ab")}
	for range 8 {
		huge = &syntax.Regexp{Op: syntax.OpRepeat, Min: 1000, Max: 1000, Sub: []*syntax.Regexp{huge}}
	}
	require.Equal(t, maxEstimatedInsts, estimateInsts(huge, maxEstimatedInsts))
}

// Perl's $ matches at the end or before a final newline; a pattern on the
// linear engine must mean the same for a path ending in a decoded %0A.
func TestRegexDollarBeforeFinalNewline(t *testing.T) {
	for _, tt := range []struct {
		pattern, path string
		want          bool
	}{
		{`/foo$`, "/foo", true},
		{`/foo$`, "/foo\n", true},
		{`/foo$`, "/foo\n\n", false},
		{`/foo$`, "/foo/bar", false},
		{`/foo\z`, "/foo\n", false},
		{`/a|/foo$`, "/FOO\n", true},
		{`/foo(?=x)|/foo$`, "/foo\n", true}, // backtracking only: same answer
	} {
		re, err := CompileRegex(tt.pattern, 0)
		if err != nil {
			t.Fatalf("%q: %v", tt.pattern, err)
		}
		if got := re.MatchString(tt.path); got != tt.want {
			t.Errorf("%q on %q: got %v, want %v", tt.pattern, tt.path, got, tt.want)
		}
	}
	re, err := CompileRegex(`/foo$`, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !re.Linear() {
		t.Error("a pattern with $ still runs on the linear engine for ordinary paths")
	}
}
