package match

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/match/htpasswd"
	"ramjet.dev/ramjet/match/urltemplate"
)

func TestCORSAllows(t *testing.T) {
	c := NewCORS(CORS{Origins: []string{"https://App.example.com", "https://*.example.org:8443", "null", "myapp://*.local",
		"http://localhost", "https://*.kube.test", "https://café.example"}})
	for origin, want := range map[string]bool{
		// ASCII case only: U+017F and U+212A fold to "s" and "k" under
		// Unicode rules; É is not É's case partner for PCRE without UTF.
		"http://LOCALHOST":                 true,
		"http://localhoſt":                 false,
		"httpſ://app.example.com":          false,
		"https://a.kube.test":              true,
		"https://a.\u212Aube.test":         false,
		"https://a.kube.teſt":              false,
		"https://café.example":             true,
		"https://CAFé.example":             true,
		"https://cafÉ.example":             false,
		"http://local\u212Aost":            false,
		"https://app.example.com":          true,
		"HTTPS://APP.EXAMPLE.COM":          true,
		"https://app.example.com:443":      false,
		"http://app.example.com":           false,
		"https://app.example.com.evil.net": false,
		"xhttps://app.example.com":         false,
		"https://a.example.org:8443":       true,
		"https://a-1.example.org:8443":     true,
		"https://a.b.example.org:8443":     false,
		"https://.example.org:8443":        false,
		"https://example.org:8443":         false,
		"https://a_b.example.org:8443":     false,
		"https://a.example.org":            false,
		"null":                             true,
		"NULL":                             true,
		"myapp://dev.local":                true,
		"":                                 false,
	} {
		assert.Equal(t, want, c.Allows(origin), "origin %q", origin)
	}
	assert.True(t, NewCORS(CORS{AnyOrigin: true}).Allows(""))
	assert.False(t, NewCORS(CORS{Closed: "x"}).Allows("null"))
}

// The text shows every policy but never a hash; the digest changes with
// a password, a CORS setting or the auth URL.
func TestAccessTextAndDigest(t *testing.T) {
	build := func(pw string, maxAge int, url string) *Table {
		users, _ := htpasswd.ParseHtpasswd([]byte("alice:{PLAIN}" + pw + "\n"))
		u, err := urltemplate.ParseAuthURL(url, false)
		require.NoError(t, err)
		be := &Backend{ID: "prod/web:80", Namespace: "prod", Name: "web", Port: 80}
		r := &Route{Type: Prefix, Path: "/admin", Backend: be, Location: Location{
			CORS: NewCORS(CORS{Origins: []string{"https://a.example"}, Methods: "GET", Headers: "X-A", MaxAge: maxAge}),
			Auth: &Auth{
				Basic:    NewBasicAuth(BasicAuth{Realm: "staff", Secret: "prod/pw", SecretType: "auth-file", Users: users}),
				External: &ExternalAuth{URL: u, ResponseHeaders: []string{"X-User"}},
			}}}
		return mustNew(t, Spec{VirtualHosts: []*VirtualHost{{Name: "a.example", Routes: []*Route{r}}}, Backends: []*Backend{be}})
	}
	base := build("secret-pw", 60, "http://auth/check")
	text := base.String()
	for _, want := range []string{
		`    cors origin https://a.example methods "GET" headers "X-A" max-age 60` + "\n",
		`    auth basic realm "staff" secret prod/pw auth-file 1 users` + "\n",
		`    auth external http://auth/check response-headers X-User` + "\n",
	} {
		assert.Contains(t, text, want)
	}
	assert.NotContains(t, text, "secret-pw")
	assert.Equal(t, base.Digest(), build("secret-pw", 60, "http://auth/check").Digest())
	assert.NotEqual(t, base.Digest(), build("other", 60, "http://auth/check").Digest(), "password")
	assert.NotEqual(t, base.Digest(), build("secret-pw", 61, "http://auth/check").Digest(), "max-age")
	assert.NotEqual(t, base.Digest(), build("secret-pw", 60, "http://auth/verify").Digest(), "auth-url")
}
