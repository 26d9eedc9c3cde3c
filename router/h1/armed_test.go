package h1

import (
	"bufio"
	"io"
	"net/http"
	"testing"
	"time"
)

// A client that sends its next request while the previous one is being
// served, after the server's last read of it, is answered: the wait that
// writes the end of a response together with the wait for the next
// request (flushAndAwait) may not see bytes that came before it began,
// and must end within armWait, not at the idle timeout. Once and again
// after the connection was armed by quick requests.
func TestRequestSentDuringResponseIsServed(t *testing.T) {
	requestSentDuringResponse(t, false)
}

// requestSentDuringResponse runs TestRequestSentDuringResponseIsServed on
// plain TCP, or over TLS on rawsock.NetConn.
func requestSentDuringResponse(t *testing.T, overTLS bool) {
	started := make(chan struct{}, 1)
	release := make(chan struct{})
	s := &Server{
		ReadHeaderTimeout: time.Minute, IdleTimeout: time.Minute,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if overTLS && r.TLS == nil {
				t.Error("no TLS state")
			}
			if r.URL.Path == "/slow" {
				started <- struct{}{}
				<-release
			}
			io.WriteString(w, r.URL.Path)
		}),
	}
	var c io.Writer
	var br *bufio.Reader
	if overTLS {
		c, _, br = dialTLS(t, serveTLS(t, s, true))
	} else {
		c, br = dial(t, serve(t, s))
	}
	get := func(path string) {
		t.Helper()
		if _, err := io.WriteString(c, "GET "+path+" HTTP/1.1\r\nHost: a\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
	}
	for round := range 3 {
		// Quick requests, one at a time: the connection is armed.
		for range 5 {
			get("/quick")
			if _, body := readResponse(t, br, "GET"); body != "/quick" {
				t.Fatalf("round %d: body %q", round, body)
			}
		}
		get("/slow")
		<-started
		get("/next")
		// Let the server's poller see the early request before the
		// response is written.
		time.Sleep(20 * time.Millisecond)
		release <- struct{}{}
		if _, body := readResponse(t, br, "GET"); body != "/slow" {
			t.Fatalf("round %d: body %q", round, body)
		}
		start := time.Now()
		if _, body := readResponse(t, br, "GET"); body != "/next" {
			t.Fatalf("round %d: body %q", round, body)
		}
		if d := time.Since(start); d > 10*armWait {
			t.Fatalf("round %d: the early request was answered after %v", round, d)
		}
	}
}

// A client slower than armWait between its requests is served as an idle
// one, and one that turns quick again is armed again.
func TestSlowThenQuickClient(t *testing.T) {
	addr := serve(t, &Server{
		ReadHeaderTimeout: time.Minute, IdleTimeout: time.Minute,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, r.URL.Path)
		}),
	})
	c, br := dial(t, addr)
	for i, pause := range []time.Duration{0, armWait + 20*time.Millisecond, 0, 0, 2 * armWait, 0, 0, 0} {
		time.Sleep(pause)
		if _, err := io.WriteString(c, "GET /x HTTP/1.1\r\nHost: a\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		if _, body := readResponse(t, br, "GET"); body != "/x" {
			t.Fatalf("request %d: body %q", i, body)
		}
		if d := time.Since(start); d > armWait {
			t.Fatalf("request %d after a pause of %v answered after %v", i, pause, d)
		}
	}
}
