package router

import (
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
