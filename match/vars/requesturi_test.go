package vars

import "testing"

// TestRequestURIOf: the values nginx 1.22 gives $request_uri for these
// request lines (return 200 "$request_uri" on loopback).
func TestRequestURIOf(t *testing.T) {
	for in, want := range map[string]string{
		"/a/b?x=1":                "/a/b?x=1",
		"http://h.test/a?x=1":     "/a?x=1",
		"HTTP://h.test:80/a/../b": "/a/../b",
		"https://h.test":          "/",
		"http://h.test?x":         "?x",
		"http://h.test:8080?x":    "?x",
		"http://h.test/x#f":       "/x#f",
		"*":                       "*",
		"/redirect?to=http://":    "/redirect?to=http://",
	} {
		if got := RequestURIOf(in); got != want {
			t.Errorf("RequestURIOf(%q) = %q, want %q", in, got, want)
		}
	}
}
