package router

import (
	"bufio"
	"bytes"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
)

// BenchmarkHandler's backend is a net/http server in the same process, and
// its allocations count: of the router's 40 per request (issue 26), 37 are
// that server's reading the request head the router sends. Here the
// backend reads request heads and answers from constants, allocating
// nothing per request, so allocs/op is what the router itself allocates.

// cannedBackend answers every request head read from a connection with
// the same 3-byte response. It takes requests without bodies only.
func cannedBackend(tb testing.TB) string {
	res := []byte("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 3\r\n\r\nok\n")
	return rawServer(tb, func(c net.Conn) {
		br := bufio.NewReader(c)
		for {
			line, err := br.ReadSlice('\n')
			if err != nil {
				return
			}
			if len(bytes.TrimRight(line, "\r\n")) > 0 {
				continue // the request line or a header field
			}
			if _, err := c.Write(res); err != nil {
				return
			}
		}
	})
}

func BenchmarkHandlerAlone(b *testing.B) {
	r := benchRouter(b, nil, cannedBackend(b))
	b.Cleanup(r.CloseIdleConnections)
	benchHandler(b, r)
}

// TestHandlerAllocs holds the router's own allocations for a plain proxied
// request (no annotations) at what they are today: a feature a location
// does not use must not add any. With a context that can be cancelled, as
// net/http's server gives every request, the client-cancellation hook is
// not set for a quick response (hookAfter) and costs nothing either.
func TestHandlerAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	r := benchRouter(nil, nil, cannedBackend(t))
	defer r.CloseIdleConnections()
	req := httptest.NewRequest(http.MethodGet, "/api/v1/items?id=42", nil)
	req.Host = "shop.example.com"
	req.Header.Set("User-Agent", "bench")
	w := &discardWriter{h: make(http.Header)}
	w.serveOK(t, r, req) // dials
	const budget = 2     // the response head's text, its header values (the exchange is pooled)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for name, req := range map[string]*http.Request{"never cancelled": req, "cancellable": req.WithContext(ctx)} {
		if n := testing.AllocsPerRun(200, func() { w.serveOK(t, r, req) }); n > budget {
			t.Errorf("context %s: %.1f allocations per request, budget %d", name, n, budget)
		}
	}
}

// TestHookAllocs: a Hook that passes requests on costs no allocation, with
// an Observer too (the example controller's ModSecurity on a location
// without a WAF): the writer that counts a hook's answer is pooled.
func TestHookAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	addr := cannedBackend(t)
	req := httptest.NewRequest(http.MethodGet, "/api/v1/items?id=42", nil)
	req.Host = "shop.example.com"
	w := &discardWriter{h: make(http.Header)}
	allocs := func(o Options) float64 {
		r := benchRouterWith(nil, o, addr)
		defer r.CloseIdleConnections()
		w.serveOK(t, r, req) // dials
		return testing.AllocsPerRun(200, func() { w.serveOK(t, r, req) })
	}
	observe := func(Record) {}
	pass := func(http.ResponseWriter, *http.Request, Match) bool { return false }
	without, with := allocs(Options{Observer: observe}), allocs(Options{Observer: observe, Hook: pass})
	if with > without {
		t.Errorf("a Hook that passes costs %.1f allocations per request more", with-without)
	}
}
