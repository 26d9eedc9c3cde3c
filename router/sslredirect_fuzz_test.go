package router

import (
	"net/url"
	"strings"
	"testing"

	"ramjet.dev/ramjet/match"
)

// FuzzHTTPSLocation: whatever the Host header and request-target, a
// redirect target is either refused or an https URL for exactly the host
// that was sent (minus its port), with nothing that could smuggle another
// authority or a header line into the Location.
func FuzzHTTPSLocation(f *testing.F) {
	for _, s := range []string{"shop.example.com", "shop.example.com:8080", "[fd00::1]:80", "", "a b", "evil.com/x", "user@host", "[::1]x", "h:1:2"} {
		f.Add(s, "/a/", "q=1", true, false)
	}
	f.Fuzz(func(t *testing.T, host, path, query string, hasQuery, preserve bool) {
		if !strings.HasPrefix(path, "/") || strings.ContainsAny(path, "?#") || strings.Contains(query, "#") {
			return // requestTarget hands over an absolute path, split at the first '?'
		}
		if _, err := match.NormalizePath(path); err != nil {
			return // answered 400 before any redirect
		}
		loc, ok := httpsLocation(host, "", path, query, hasQuery, preserve)
		if !ok {
			return
		}
		if strings.ContainsAny(loc, "\r\n\x00 ") {
			t.Fatalf("Location %q holds a byte that could split a header", loc)
		}
		name, _ := hostWithoutPort(host)
		authority := strings.TrimPrefix(loc, "https://")
		if i := strings.IndexAny(authority, "/?"); i >= 0 {
			authority = authority[:i]
		}
		if authority != name {
			t.Fatalf("Location %q: authority %q, want %q", loc, authority, name)
		}
		u, err := url.Parse(loc)
		if err != nil {
			t.Fatalf("Location %q does not parse: %v", loc, err)
		}
		if u.Scheme != "https" || u.Host != name || u.User != nil {
			t.Fatalf("Location %q: scheme %q host %q, want https and %q", loc, u.Scheme, u.Host, name)
		}
		if !strings.HasPrefix(host, name) {
			t.Fatalf("host %q became %q", host, name)
		}
	})
}
