package router

import "testing"

// validHost as its comment states it: hostByte bytes only, no empty label,
// a host before the port that is not empty once a trailing dot is dropped.
func TestValidHost(t *testing.T) {
	for _, tc := range []struct {
		host string
		ok   bool
	}{
		{"example.com", true}, {"example.com.", true}, {"example.com:8080", true},
		{"127.0.0.1:19801", true}, {"[::1]", true}, {"[::1]:80", true}, {"a_b~c", true},
		{"h.test..", false}, {"a..b", false}, {":80", false}, {".", false}, {"", false},
		{"::1", false}, {"[", true}, {"exa mple", false}, {"a/b", false}, {"a?b", false},
		{"a#b", false}, {"a\\b", false}, {"a\tb", false}, {"é.test", false}, {".a", true},
		{"a.:80", true}, {".:80", false}, {"[::1].", true},
	} {
		if got := validHost(tc.host); got != tc.ok {
			t.Errorf("validHost(%q) = %v, want %v", tc.host, got, tc.ok)
		}
	}
	for c := 0; c < 256; c++ {
		h := "a" + string(rune(c)) + "b"
		if c >= 0x80 {
			h = "a" + string([]byte{byte(c)}) + "b"
		}
		if got := validHost(h); got != hostByte[c] {
			t.Errorf("validHost(%q) = %v, want %v", h, got, hostByte[c])
		}
	}
}
