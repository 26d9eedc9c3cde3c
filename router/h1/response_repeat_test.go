package h1

import (
	"bufio"
	"net/http"
	"strings"
	"testing"
	"unsafe"
)

// A backend connection that brings the same response head again (a
// backend answering alike within a second: its Date is the same) reads it
// without a string of its own, also across a stay in the pool (release):
// it shares the last head's, which no one can change (issue 41).
func TestResponseRepeatedHeadAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	const resp = "HTTP/1.1 200 OK\r\nDate: Mon, 07 Dec 2026 22:00:00 GMT\r\nContent-Length: 100\r\nContent-Type: text/plain\r\n\r\n"
	r := strings.NewReader(resp)
	br := bufio.NewReaderSize(r, bufferSize)
	var h Response
	var text string // the last head's, before release
	read := func() {
		r.Reset(resp)
		br.Reset(r)
		budget := MaxResponseHead
		if err := h.read(br, http.MethodGet, &budget); err != nil {
			t.Fatal(err)
		}
		text = h.text
		h.release()
	}
	read()
	first := text
	if n := testing.AllocsPerRun(100, read); n != 0 {
		t.Errorf("%v allocations per repeated head, want 0", n)
	}
	r.Reset(resp)
	br.Reset(r)
	budget := MaxResponseHead
	if err := h.read(br, http.MethodGet, &budget); err != nil {
		t.Fatal(err)
	}
	if unsafe.StringData(h.text) != unsafe.StringData(first) {
		t.Error("a repeated head has a string of its own")
	}
	if h.Status != 200 || h.Reason != "OK" || h.Length != 100 || len(h.Fields) != 3 || h.Fields[0] != (Field{"Date", "Mon, 07 Dec 2026 22:00:00 GMT"}) {
		t.Errorf("repeated head read as %d %q %d %q", h.Status, h.Reason, h.Length, h.Fields)
	}
	other := strings.Replace(resp, "22:00:00", "22:00:01", 1)
	r.Reset(other)
	br.Reset(r)
	budget = MaxResponseHead
	if err := h.read(br, http.MethodGet, &budget); err != nil {
		t.Fatal(err)
	}
	if h.Fields[0].Value != "Mon, 07 Dec 2026 22:00:01 GMT" || unsafe.StringData(h.text) == unsafe.StringData(first) {
		t.Errorf("another head read as %q, or with the last one's string", h.Fields)
	}
}
