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

// validHost is validHostStates on every input class: each byte class at
// each place of short Hosts, and whatever the fuzzer finds.
func TestValidHostFast(t *testing.T) {
	alphabet := []string{"a", "0", ".", ":", "[", "]", "/", " ", "\xe9", "_"}
	var walk func(h string, n int)
	walk = func(h string, n int) {
		if got, want := validHost(h), validHostStates(h); got != want {
			t.Errorf("validHost(%q) = %v, validHostStates %v", h, got, want)
		}
		if n == 0 {
			return
		}
		for _, c := range alphabet {
			walk(h+c, n-1)
		}
	}
	walk("", 6)
	for _, h := range validHostSeeds {
		if got, want := validHost(h), validHostStates(h); got != want {
			t.Errorf("validHost(%q) = %v, validHostStates %v", h, got, want)
		}
	}
}

var validHostSeeds = []string{
	"example.com", "example.com.", "example.com:8080", "127.0.0.1:19801", "[::1]", "[::1]:80", "a.:80", ".:80",
	".:1.2", "a.:1.2", "a:1..2", "a:b:c", "::1", "[::1].", "x[y]:80", "h.test..", "abcd.efgh.ijkl.mnop:1234",
}

func FuzzValidHost(f *testing.F) {
	for _, h := range validHostSeeds {
		f.Add(h)
	}
	f.Fuzz(func(t *testing.T, h string) {
		if got, want := validHost(h), validHostStates(h); got != want {
			t.Fatalf("validHost(%q) = %v, validHostStates %v", h, got, want)
		}
	})
}
