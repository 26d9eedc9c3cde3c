package match

import (
	"errors"
	"strings"
	"testing"
)

func TestNormalizeHost(t *testing.T) {
	tests := []struct{ in, want string }{
		{"shop.example.com", "shop.example.com"},
		{"Shop.Example.COM", "shop.example.com"},
		{"shop.example.com:8080", "shop.example.com"},
		{"shop.example.com:", "shop.example.com"},
		{"shop.example.com.", "shop.example.com"},
		{"shop.example.com.:443", "shop.example.com"},
		{"shop.example.com..", "shop.example.com."}, // one dot only
		{"[::1]:8080", "[::1]"},
		{"[::1]", "[::1]"},
		{"[FD00::1]:80", "[fd00::1]"},
		{"10.0.0.1:80", "10.0.0.1"},
		{"", ""},
		{":80", ""},
		{".", ""},
		{"ÄB.test", "Äb.test"}, // only ASCII folds; other bytes pass through
		{"\xffA", "\xffa"},
	}
	for _, tt := range tests {
		if got := NormalizeHost(tt.in); got != tt.want {
			t.Errorf("NormalizeHost(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestNormalizeHostAllocations(t *testing.T) {
	for _, in := range []string{"shop.example.com", "shop.example.com:8080", "[::1]:80", "shop.example.com."} {
		if n := testing.AllocsPerRun(100, func() { NormalizeHost(in) }); n != 0 {
			t.Errorf("NormalizeHost(%q) allocates %v times", in, n)
		}
	}
}

func TestNormalizePath(t *testing.T) {
	tests := []struct {
		in, want string
		err      error
	}{
		{"/", "/", nil},
		{"", "/", nil},
		{"/a/b", "/a/b", nil},
		{"/a/b/", "/a/b/", nil},
		{"/.well-known/acme-challenge/x", "/.well-known/acme-challenge/x", nil},
		{"/a..b/..c/c..", "/a..b/..c/c..", nil},
		{"//a///b//", "/a/b/", nil},
		{"/a/./b", "/a/b", nil},
		{"/a/.", "/a/", nil},
		{"/a/b/..", "/a/", nil},
		{"/a/b/../", "/a/", nil},
		{"/a/b/../c", "/a/c", nil},
		{"/a/..", "/", nil},
		{"/.", "/", nil},
		{"/./", "/", nil},
		{"/a/b/../../c/", "/c/", nil},
		{"/%61%62c", "/abc", nil},
		{"/a%2Fb", "/a/b", nil},
		{"/a%2fb", "/a/b", nil},
		{"/a%2F%2Fb", "/a/b", nil},
		{"/a%2F..%2Fb", "/b", nil},
		{"/a/%2e/b", "/a/b", nil},
		{"/a/%2e%2e/b", "/b", nil},
		{"/a/%2E%2E", "/", nil},
		{"/a%20b", "/a b", nil},
		{"/100%25", "/100%", nil},
		{"/%25%32%35", "/%25", nil}, // decoded once only
		{"/caf%C3%A9", "/café", nil},
		{"/A/B", "/A/B", nil},
		{"/..", "", ErrPathClimbs},
		{"/../x", "", ErrPathClimbs},
		{"/a/../../x", "", ErrPathClimbs},
		{"/%2e%2e/x", "", ErrPathClimbs},
		{"/a/%2E%2e/%2e./x", "", ErrPathClimbs},
		{"/..%2Fetc", "", ErrPathClimbs},
		{"/%", "", ErrBadEscape},
		{"/%2", "", ErrBadEscape},
		{"/%zz", "", ErrBadEscape},
		{"/%2g", "", ErrBadEscape},
		{"/a%", "", ErrBadEscape},
		{"/admin%00", "", ErrNUL},
		{"/%00/../x", "", ErrNUL},
		{"a/b", "", ErrNotAbsolute},
		{"*", "", ErrNotAbsolute},
		{"%2Fa", "", ErrNotAbsolute},
	}
	for _, tt := range tests {
		got, err := NormalizePath(tt.in)
		if !errors.Is(err, tt.err) || got != tt.want {
			t.Errorf("NormalizePath(%q) = %q, %v; want %q, %v", tt.in, got, err, tt.want, tt.err)
		}
	}
}

func TestNormalizePathFastPathDoesNotAllocate(t *testing.T) {
	for _, in := range []string{"/", "/a/b/c", "/a/b/", "/.well-known/acme-challenge/token", "/a.b/c..d"} {
		n := testing.AllocsPerRun(100, func() {
			out, err := NormalizePath(in)
			if err != nil || out != in {
				t.Fatalf("NormalizePath(%q) = %q, %v", in, out, err)
			}
		})
		if n != 0 {
			t.Errorf("NormalizePath(%q) allocates %v times", in, n)
		}
	}
}

func TestNormalizePathLong(t *testing.T) {
	in := "/" + strings.Repeat("a/./", 10000) + strings.Repeat("../", 9999)
	got, err := NormalizePath(in)
	if err != nil || got != "/a/" {
		t.Fatalf("NormalizePath(long) = %q, %v; want /a/", got, err)
	}
}
