package match

import (
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestHeaderRewriteLocation(t *testing.T) {
	lit := &HeaderRewrite{From: "http://backend:8080/", To: "https://shop.example.com/app/"}
	re := &HeaderRewrite{Pattern: regexp.MustCompile(`^http://([^/:]+):\d+(/.*)$`), To: "https://$1$2$9"}
	for _, c := range []struct {
		rw       *HeaderRewrite
		in, want string
		changed  bool
	}{
		{lit, "http://backend:8080/login?x=1", "https://shop.example.com/app/login?x=1", true},
		{lit, "HTTP://backend:8080/login", "HTTP://backend:8080/login", false}, // the prefix's case counts
		{lit, "/login", "/login", false},
		{lit, "http://backend:8080", "http://backend:8080", false},
		{re, "http://inner:81/a", "https://inner/a", true},
		{re, "/a", "/a", false},
		// Unanchored: the whole value is replaced wherever the match is.
		{&HeaderRewrite{Pattern: regexp.MustCompile(`inner`), To: "/x$"}, "http://inner/a", "/x$", true},
	} {
		got, changed := c.rw.RewriteLocation(c.in)
		assert.Equal(t, c.want, got, c.in)
		assert.Equal(t, c.changed, changed, c.in)
	}
}

func TestHeaderRewriteRefresh(t *testing.T) {
	rw := &HeaderRewrite{From: "http://backend/", To: "/"}
	for in, want := range map[string]string{
		"5; URL=http://backend/next": "5; URL=/next",
		"5;url=http://backend/":      "5;url=/",
		"5; url=http://other/":       "5; url=http://other/",
		"5":                          "5",
	} {
		got, _ := rw.RewriteRefresh(in)
		assert.Equal(t, want, got, in)
	}
}

func TestRewriteSetCookie(t *testing.T) {
	domain := &HeaderRewrite{From: "backend.internal", To: "example.com"}
	path := &HeaderRewrite{From: "/two/", To: "/"}
	for _, c := range []struct {
		in, want string
		changed  bool
	}{
		{"id=1; Domain=backend.internal; Path=/two/x; HttpOnly", "id=1; Domain=example.com; Path=/x; HttpOnly", true},
		// A leading dot is kept, the domain compared in any case, and the
		// attributes written again with nginx's spacing.
		{"id = 1 ;domain = .Backend.Internal;secure", "id=1; domain=.example.com; secure", true},
		{"id=1; Domain=sub.backend.internal; Path=/other", "id=1; Domain=sub.backend.internal; Path=/other", false},
		{"id; Domain=backend.internal", "id; Domain=backend.internal", false}, // no '=' in the first pair
		{"id=1", "id=1", false},
		{"id=1; Path=/two/x/two/", "id=1; Path=/x/two/", true}, // the prefix only
		{"id=1; Path=/Two/", "id=1; Path=/Two/", false},
		{"id=1;; Path=/two/", "id=1; ; Path=/", true},
	} {
		got, changed := RewriteSetCookie(c.in, domain, path)
		assert.Equal(t, c.want, got, c.in)
		assert.Equal(t, c.changed, changed, c.in)
	}
	got, _ := RewriteSetCookie("id=1; Domain=x.backend.internal", &HeaderRewrite{Pattern: regexp.MustCompile(`(?i)\.BACKEND\.internal$`), To: "example.com"}, nil)
	assert.Equal(t, "id=1; Domain=example.com", got)
}
