package h1

import (
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestArmedWaitAfterStalledHandler: a handler that stalls after writing
// its response, without a flush, leaves the wait for the next request
// (flushAndAwait, which may take its time from the head's Date) as short
// as ever: the requests that follow are served at once, the connection
// stays open, and the stalled response was whole.
func TestArmedWaitAfterStalledHandler(t *testing.T) {
	addr := serve(t, &Server{ReadHeaderTimeout: time.Second, IdleTimeout: 5 * time.Second,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/stall" {
				io.WriteString(w, "ok")
				return
			}
			// Past what is held before the head is sent, short of what
			// the connection's buffer writes out: the head is committed
			// with its Date, and nothing is on the socket yet.
			io.WriteString(w, strings.Repeat("x", preCommit+100))
			time.Sleep(3 * armWait)
		})})
	c, br := dial(t, addr)
	var took []time.Duration
	for i := range 3 {
		io.WriteString(c, "GET /stall HTTP/1.1\r\nHost: a\r\n\r\n")
		if res, body := readResponse(t, br, "GET"); res.Close || body != strings.Repeat("x", preCommit+100) {
			t.Fatalf("stalled %d: close %v body of %d bytes", i, res.Close, len(body))
		}
		for j := range 5 {
			start := time.Now()
			io.WriteString(c, "GET / HTTP/1.1\r\nHost: a\r\n\r\n")
			if res, body := readResponse(t, br, "GET"); res.Close || body != "ok" {
				t.Fatalf("after stalled %d, request %d: close %v body %q", i, j, res.Close, body)
			}
			took = append(took, time.Since(start))
		}
	}
	slices.Sort(took)
	if m := took[len(took)/2]; m >= armWait {
		t.Errorf("median request after a stalled handler took %v: %v", m, took)
	}
}
