package router

import (
	"net"
	"testing"
)

var splitPeerSeeds = []string{
	"192.0.2.7:5555", "127.0.0.1:80", "a.test:1", ":80", "1.2.3.4:", ":", "", "1.2.3.4", "host",
	"[::1]:80", "[::1]", "[::1]:", "::1", "::1:80", "[fe80::1%eth0]:443", "[a]b:1", "a]b:1", "a[b:1",
	"1.2.3.4:80:90", "[1.2.3.4]:80", "[]:80", "[:80", "]:80", "x:[80]", "x:8]0",
	"a:bc", "ab:c", "abc:", "abcd:e", "abcde:", "0123456789012345678901234567890123456789012345678901234567890:1",
	"01234567890123456789012345678901234567890123456789012345678901:1", "01234567890123456789012345678901234567890123456789012345678901:[",
}

// splitPeerRef is what splitPeer replaces.
func splitPeerRef(addr string) string {
	ip, _, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	return ip
}

// TestSplitPeer holds splitPeer to net.SplitHostPort on every input class:
// one colon or none or more, brackets anywhere, empty host and port.
func TestSplitPeer(t *testing.T) {
	for _, s := range splitPeerSeeds {
		if got, want := splitPeer(s), splitPeerRef(s); got != want {
			t.Errorf("splitPeer(%q) = %q, SplitHostPort %q", s, got, want)
		}
	}
}

func FuzzSplitPeer(f *testing.F) {
	for _, s := range splitPeerSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := splitPeer(s), splitPeerRef(s); got != want {
			t.Fatalf("splitPeer(%q) = %q, SplitHostPort %q", s, got, want)
		}
	})
}

func BenchmarkSplitPeer(b *testing.B) {
	for _, s := range []string{"127.0.0.1:54321", "[::1]:54321"} {
		b.Run(s, func(b *testing.B) {
			for b.Loop() {
				splitPeer(s)
			}
		})
		b.Run("SplitHostPort/"+s, func(b *testing.B) {
			for b.Loop() {
				splitPeerRef(s)
			}
		})
	}
}
