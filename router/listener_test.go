package router

import "testing"

// TestOriginForm: an absolute-form target's $request_uri is its path and
// query, as nginx's.
func TestOriginForm(t *testing.T) {
	for in, want := range map[string]string{
		"/a/b?x=1":             "/a/b?x=1",
		"http://h.test/a?x=1":  "/a?x=1",
		"https://h.test":       "/",
		"http://h.test?x":      "/?x",
		"*":                    "*",
		"/redirect?to=http://": "/redirect?to=http://",
	} {
		if got := originForm(in); got != want {
			t.Errorf("originForm(%q) = %q, want %q", in, got, want)
		}
	}
}
