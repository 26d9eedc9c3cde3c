package h1

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"
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
	host := unsafe.StringData(first.hosts[0])
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
	if h.hosts[0] != "127.0.0.1:18082" || unsafe.StringData(h.hosts[0]) == host {
		t.Errorf("another head read as %q, or with the last one's string", h.hosts)
	}
}

// A client whose heads differ in their request line alone (an API client
// with the same credentials and fields for every path) gets a string for
// the line only: the field lines share the last head's, and a head is
// read as it is without the last one. Fewer bytes allocated is fewer GC
// cycles (issue 41).
func TestPlainHeadRepeatedFields(t *testing.T) {
	fields := "Host: api.test\r\nAuthorization: Bearer " + strings.Repeat("t", 200) + "\r\nAccept: application/json\r\n"
	for i := range 20 { // past the spans parsePlainHead keeps of the first 16 lines
		fields += fmt.Sprintf("X-F%d: v%d\r\n", i, i)
	}
	heads := []string{
		"GET /a HTTP/1.1\r\n" + fields + "\r\n",
		"GET /items/42?x=1 HTTP/1.1\r\n" + fields + "\r\n",
		"POST /b HTTP/1.0\r\n" + fields + "\r\n",
		"POST /b HTTP/1.0\r\n" + fields + "X-Last: 1\r\n\r\n",
		"POST /b HTTP/1.0\r\nHost: api.test\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: api.test\r\n\r\n",
	}
	var s headScratch
	var last plainHead
	for i, head := range heads {
		got, n, ok := parsePlainHead([]byte(head), -1, &s, true)
		want, wn, wok := parsePlainHead([]byte(head), -1, new(headScratch), false)
		if ok != wok || n != wn || !ok {
			t.Fatalf("head %d: ok %v, n %d; alone ok %v, n %d", i, ok, n, wok, wn)
		}
		g := []any{got.method, got.target, got.proto, got.major, got.minor, *got.url, got.header, got.hosts, got.has, got.dupUnique}
		w := []any{want.method, want.target, want.proto, want.major, want.minor, *want.url, want.header, want.hosts, want.has, want.dupUnique}
		if diff := cmp.Diff(w, g); diff != "" {
			t.Errorf("head %d read after the last one (-alone +after):\n%s", i, diff)
		}
		if i == 1 || i == 2 {
			if unsafe.StringData(got.hosts[0]) != unsafe.StringData(last.hosts[0]) {
				t.Errorf("head %d: same field lines as the last head's, but a string of their own", i)
			}
		}
		last = got
		last.hosts = slices.Clone(got.hosts)
	}
	if raceEnabled {
		return
	}
	a, b := []byte(heads[0]), []byte(heads[1])
	k := 0
	if n := testing.AllocsPerRun(100, func() {
		k++
		if k%2 == 0 {
			parsePlainHead(a, -1, &s, true)
		} else {
			parsePlainHead(b, -1, &s, true)
		}
	}); n != 1 {
		t.Errorf("%v allocations per head, want 1", n)
	}
}
