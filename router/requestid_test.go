package router

import (
	"crypto/rand"
	"encoding/hex"
	"strings"
	"testing"
)

// appendRequestID appends 32 lower-case hex digits after what dst holds,
// the hex of the random bytes it took, whatever room dst has.
func TestAppendRequestID(t *testing.T) {
	for _, prefix := range []string{"", "X-Request-Id: ", strings.Repeat("a", 100)} {
		for _, room := range []int{0, 32, 200} {
			dst := append(make([]byte, 0, len(prefix)+room), prefix...)
			out := appendRequestID(dst)
			if len(out) != len(prefix)+32 || string(out[:len(prefix)]) != prefix {
				t.Fatalf("appendRequestID(%q) = %q", prefix, out)
			}
			raw, err := hex.DecodeString(string(out[len(prefix):]))
			if err != nil || hex.EncodeToString(raw) != string(out[len(prefix):]) {
				t.Fatalf("appendRequestID(%q) = %q: not lower-case hex", prefix, out)
			}
		}
	}
}

// hexID is encoding/hex on every byte value at every place, and on
// random IDs.
func TestHexID(t *testing.T) {
	check := func(src [16]byte) {
		var out [32]byte
		hexID(&out, &src)
		if want := hex.EncodeToString(src[:]); string(out[:]) != want {
			t.Fatalf("hexID(%x) = %q, want %q", src, out, want)
		}
	}
	for c := range 256 {
		for i := range 16 {
			var src [16]byte
			src[i] = byte(c)
			check(src)
			for j := range src {
				src[j] = byte(c + j*17)
			}
			check(src)
		}
	}
	for range 10000 {
		var src [16]byte
		_, _ = rand.Read(src[:])
		check(src)
	}
}
