package balance

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCookie: $cookie_<name> as nginx 1.27 (ingress-nginx v1.15) reads it,
// for every caller but session affinity (StickyCookie): canary-by-cookie, upstream-hash-by,
// snippets and the auth cache key.
func TestCookie(t *testing.T) {
	tests := []struct {
		name  string
		lines []string
		want  string
		found bool
	}{
		{"among several", []string{"theme=dark; session=abc; lang=en"}, "abc", true},
		{"later line", []string{"theme=dark", "lang=en;session=xyz"}, "xyz", true},
		{"name in any case", []string{"SESSION=1; session=2"}, "1", true},
		{"spaces around '='", []string{"session =  abc"}, "abc", true},
		{"trailing space kept", []string{"session=abc ;x=1"}, "abc ", true},
		{"comma ends a skipped pair", []string{"a=1, session=abc"}, "abc", true},
		{"comma does not end the value", []string{"session=a, b=2; c=3"}, "a, b=2", true},
		{"tab is not skipped", []string{"a=1;\tsession=abc"}, "", false},
		{"prefix is not a match", []string{"session_id=1; xsession=2"}, "", false},
		{"no '='", []string{"session; a=b"}, "", false},
		{"nginx steps over the byte after a bare name", []string{"session;session=2"}, "", false},
		{"bare name then another pair", []string{"session x=1; session=2"}, "2", true},
		{"empty value", []string{"session=; a=b"}, "", true},
		{"quoted value as sent", []string{`session="a\054b"`}, `"a\054b"`, true},
		{"empty pairs", []string{";;, ;session=1"}, "1", true},
		{"no header", nil, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &http.Request{Header: http.Header{"Cookie": tt.lines}}
			v, ok := Cookie(r, "session")
			require.Equal(t, tt.want, v)
			require.Equal(t, tt.found, ok)
			v, ok = CookieValue(tt.lines, "session")
			require.Equal(t, tt.want, v)
			require.Equal(t, tt.found, ok)
			require.Zero(t, testing.AllocsPerRun(20, func() { Cookie(r, "session") }))
		})
	}
}

// FuzzCookie: on any line, a value found is part of it and holds no ';'.
func FuzzCookie(f *testing.F) {
	f.Add("a=1; session=abc; b=2", "session")
	f.Add(";;=;session", "session")
	f.Add("SESSION = x ", "session")
	f.Add("a=1,session=2", "session")
	f.Fuzz(func(t *testing.T, line, name string) {
		v, ok := CookieValue([]string{line}, name)
		require.True(t, ok || v == "")
		require.True(t, strings.Contains(line, v))
		require.NotContains(t, v, ";")
	})
}

// TestStickyCookie: the affinity cookie as lua-resty-cookie reads
// $http_cookie for ingress-nginx's sticky balancers.
func TestStickyCookie(t *testing.T) {
	for _, tc := range []struct {
		lines []string
		want  string
		found bool
	}{
		{nil, "", false},
		{[]string{"route=a|t"}, "a|t", true},
		{[]string{"x=1; route=a|t; y=2"}, "a|t", true},
		{[]string{"Route=a|t"}, "", false},               // the name matches exactly
		{[]string{"route=a; route=b"}, "b", true},        // the last pair wins
		{[]string{"route=a", "x=1; route=b"}, "b", true}, // over the lines joined
		{[]string{"route=a b; x=1"}, "a b", true},        // a space stays in the value
		{[]string{"route=a\tb"}, "a", true},              // a tab ends it
		{[]string{"route=a, x=1"}, "a, x=1", true},       // a ',' does not
		{[]string{"flag; route=a"}, "", false},           // the name runs to '='
		{[]string{"flag", "route=a"}, "", false},         // across lines too
		{[]string{" \troute=a"}, "a", true},              // spaces and tabs before a pair
		{[]string{"route="}, "", true},                   // empty
		{[]string{"route=a;"}, "a", true},
	} {
		got, found := StickyCookie(tc.lines, "route")
		assert.Equal(t, tc.found, found, "%q", tc.lines)
		assert.Equal(t, tc.want, got, "%q", tc.lines)
	}
	assert.Zero(t, testing.AllocsPerRun(100, func() { StickyCookie([]string{"a=1; route=x|y"}, "route") }))
}
