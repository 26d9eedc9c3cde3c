package h1

import (
	"testing"
	"unsafe"
)

// A client on a keep-alive connection that sends the same head again (a
// load generator, a health check, a poller) costs no allocation for it:
// the head shares the last one's string, which no one can change (issue
// 41). Another head still gets a string of its own.
func TestPlainHeadRepeatedAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	head := []byte("GET / HTTP/1.1\r\nHost: 127.0.0.1:18081\r\n\r\n")
	var s headScratch
	first, _, ok := parsePlainHead(head, -1, &s, false)
	if !ok {
		t.Fatal("not plain")
	}
	if n := testing.AllocsPerRun(100, func() { parsePlainHead(head, -1, &s, true) }); n != 0 {
		t.Errorf("%v allocations per repeated head, want 0", n)
	}
	again, _, _ := parsePlainHead(head, -1, &s, true)
	if unsafe.StringData(again.target) != unsafe.StringData(first.target) {
		t.Error("a repeated head has a string of its own")
	}
	if again.method != "GET" || again.target != "/" || again.hosts[0] != "127.0.0.1:18081" {
		t.Errorf("repeated head read as %q %q %q", again.method, again.target, again.hosts)
	}
	other := []byte("GET / HTTP/1.1\r\nHost: 127.0.0.1:18082\r\n\r\n")
	h, _, _ := parsePlainHead(other, -1, &s, true)
	if h.hosts[0] != "127.0.0.1:18082" || unsafe.StringData(h.target) == unsafe.StringData(first.target) {
		t.Errorf("another head read as %q, or with the last one's string", h.hosts)
	}
}
