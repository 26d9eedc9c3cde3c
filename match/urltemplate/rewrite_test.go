package urltemplate

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A template written from the captures of "/c/(.*)" on "/c/a b?", the
// request's scheme and host; match.Rewrite.Apply's tests cover how a
// route's rewrite uses it.
func TestRewriteWrite(t *testing.T) {
	const path = "/c/a b?"
	caps := []int{0, len(path), 3, len(path)}
	tests := []struct {
		tmpl, host          string
		native, header      bool
		path, query         string
		absolute, dropArgs  bool
		literal, references bool
	}{
		{tmpl: "/x/$1", path: "/x/a%20b%3F", references: true},
		{tmpl: "https://$host:8080/$1?id=$1", host: "shop.example.com", path: "https://shop.example.com:8080/a%20b%3F", query: "id=a%20b?", absolute: true, references: true},
		{tmpl: "${scheme}://www.${host}/p?", native: true, host: "::1", path: "https://www.--1/p", absolute: true, dropArgs: true},
		{tmpl: "http://$host/", path: "http://localhost/", absolute: true},
		{tmpl: "/p", header: true, path: "/p", literal: true},
		{tmpl: "/${0}", native: true, header: true, path: "//c/a%20b%3F", references: true},
	}
	for _, tt := range tests {
		parse := ParseRewrite
		if tt.header {
			parse = ParseHeader
		}
		rw, err := parse(tt.tmpl, tt.native)
		require.NoError(t, err, tt.tmpl)
		var b strings.Builder
		require.True(t, rw.Write(&b, path, caps, "https", tt.host, 1<<10), tt.tmpl)
		assert.Equal(t, tt.path, b.String(), tt.tmpl)
		b.Reset()
		require.True(t, rw.WriteQuery(&b, path, caps, "https", tt.host, 1<<10), tt.tmpl)
		assert.Equal(t, tt.query, b.String(), tt.tmpl)
		assert.Equal(t, tt.absolute, rw.Absolute(), tt.tmpl)
		assert.Equal(t, tt.query != "" || tt.dropArgs, rw.HasQuery(), tt.tmpl)
		assert.Equal(t, tt.dropArgs, rw.DropArgs(), tt.tmpl)
		assert.Equal(t, tt.literal, rw.Literal(), tt.tmpl)
		assert.Equal(t, tt.references, rw.Captures(), tt.tmpl)
	}
}

// Write stops at the first part that would take the text past the limit.
func TestRewriteWriteLimit(t *testing.T) {
	rw, err := ParseRewrite("/$1/$1/$1", false)
	require.NoError(t, err)
	path := "/" + strings.Repeat("x", 10)
	caps := []int{0, len(path), 1, len(path)}
	var b strings.Builder
	assert.True(t, rw.Write(&b, path, caps, "http", "h", 33))
	assert.Equal(t, 33, b.Len())
	b.Reset()
	assert.False(t, rw.Write(&b, path, caps, "http", "h", 32))
	assert.LessOrEqual(t, b.Len(), 32)
}

func TestParseRewriteRejects(t *testing.T) {
	for tmpl, want := range map[string]string{
		"/$request_uri":            "$request_uri is not a variable ramjet expands in a rewrite target",
		"/a$":                      `a "$" names no variable`,
		"https://$1.example.com/":  "may not come from a capture",
		"http:///x":                "no host",
		"http://a_b.example.com/":  "a host name may not have",
		"/a b":                     "not what a request path may carry",
		"http://$host:a/x":         "not a host with an optional port",
		"/a?b c":                   "not what a query may carry",
		"https://example.com/%zz/": "not what a request path may carry",
	} {
		_, err := ParseRewrite(tmpl, false)
		require.Error(t, err, tmpl)
		assert.Contains(t, err.Error(), want, tmpl)
	}
	_, err := ParseRewrite("/$1", true)
	assert.ErrorContains(t, err, "${0} to ${9}")
	_, err = ParseHeader("/a\nb", false)
	assert.ErrorContains(t, err, "control character")
}

func TestValidHostHeader(t *testing.T) {
	for h, want := range map[string]bool{
		"a.example.com": true, "a.example.com:8080": true, "[fd00::1]:443": true, "10.0.0.1": true, "under_score.local": true,
		"a.example.com/x": false, "a.example.com:0": false, "a..example.com": false, "-a.example.com": false, "[fd00::1": false, "": false,
	} {
		assert.Equal(t, want, ValidHostHeader(h), h)
	}
}

// nginx reads ${host} and ${1} as $host and $1 in a rewrite target too.
func TestParseRewriteBraces(t *testing.T) {
	r, err := ParseRewrite("/${host}/${1}x", false)
	require.NoError(t, err)
	var b strings.Builder
	require.True(t, r.Write(&b, "/ab", []int{0, 3, 1, 3}, "http", "a.example", 100))
	assert.Equal(t, "/a.example/abx", b.String())
}
