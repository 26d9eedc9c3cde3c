package h1_test

import (
	"bufio"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"ramjet.dev/ramjet/router"
	"ramjet.dev/ramjet/router/h1"
)

// rawBackend answers every request with head and body as they are
// written, from the hijacked connection, which it then closes.
func rawBackend(head, body string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, brw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer c.Close()
		brw.WriteString(head + body)
		brw.Flush()
	})
}

// headLines reads a response head and returns its field lines in order.
func headLines(t *testing.T, br *bufio.Reader) (status string, fields []string) {
	t.Helper()
	for {
		l, err := br.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		l = strings.TrimSuffix(l, "\r\n")
		if l == "" {
			return status, fields
		}
		if status == "" {
			status = l
		} else {
			fields = append(fields, l)
		}
	}
}

const orderedHead = "HTTP/1.1 200 OK\r\nX-B: 1\r\nSet-Cookie: a=1\r\nX-A: 2\r\nServer: backend\r\nContent-Type: text/plain\r\n" +
	"Set-Cookie: b=2\r\nKeep-Alive: timeout=5\r\nConnection: keep-alive, X-Secret\r\nX-Secret: s\r\n" +
	"Date: Mon, 02 Jan 2006 15:04:05 GMT\r\nContent-Length: 2\r\n\r\n"

// TestRouterRelaysFieldsInOrder: a backend's response head reaches the
// client with its fields in the order the backend sent them (as nginx
// passes them on), without the hop-by-hop fields, those Connection names,
// Server and the backend's Date: the server writes its own, as nginx
// hides the backend's (ngx_http_proxy_hide_headers).
func TestRouterRelaysFieldsInOrder(t *testing.T) {
	expectOrderedRelay(t, serveRouter(t, rawBackend(orderedHead, "ok"), router.Options{}))
}

// expectOrderedRelay sends two requests to a router over rawBackend's
// orderedHead and checks that each answer has its fields in that order.
func expectOrderedRelay(t *testing.T, addr string) {
	t.Helper()
	c, br := h1.Dial(t, addr)
	for range 2 {
		io.WriteString(c, "GET / HTTP/1.1\r\nHost: a.test\r\n\r\n")
		status, fields := headLines(t, br)
		dates := 0
		fields = slices.DeleteFunc(fields, func(f string) bool {
			if !strings.HasPrefix(f, "Date: ") {
				return false
			}
			dates++
			if strings.Contains(f, "2006") {
				t.Errorf("the backend's %s reached the client", f)
			}
			return true
		})
		if dates != 1 {
			t.Errorf("%d Date fields, want the server's one", dates)
		}
		want := []string{"X-B: 1", "Set-Cookie: a=1", "X-A: 2", "Content-Type: text/plain", "Set-Cookie: b=2", "Content-Length: 2"}
		if status != "HTTP/1.1 200 OK" || !slices.Equal(fields, want) {
			t.Fatalf("%s\n%q\nwant the fields\n%q", status, fields, want)
		}
		if b, err := io.ReadAll(io.LimitReader(br, 2)); err != nil || string(b) != "ok" {
			t.Fatalf("body %q, %v", b, err)
		}
	}
}

// statusTracer is a router.Tracer whose spans note the status they end
// with.
type statusTracer struct {
	mu     sync.Mutex
	status []int
}

type statusSpan struct{ tr *statusTracer }

func (tr *statusTracer) StartSpan(router.TraceContext, string, time.Time) router.Span {
	return statusSpan{tr}
}

func (s statusSpan) Context() router.TraceContext {
	return router.TraceContext{TraceID: [16]byte{15: 1}, SpanID: [8]byte{7: 1}, Flags: 1}
}

func (s statusSpan) End(e *router.SpanEnd) {
	s.tr.mu.Lock()
	s.tr.status = append(s.tr.status, e.Status)
	s.tr.mu.Unlock()
}

// TestRouterRelaysTracedInOrder: a traced request's response head is
// relayed as an untraced one's (the fields in the backend's order, which
// the header map would not keep), and its span still ends with the
// status.
func TestRouterRelaysTracedInOrder(t *testing.T) {
	tr := new(statusTracer)
	expectOrderedRelay(t, serveRouter(t, rawBackend(orderedHead, "ok"), router.Options{Tracer: tr},
		`ramjet.dev/enable-opentelemetry: "true"`))
	deadline := time.Now().Add(5 * time.Second)
	for {
		tr.mu.Lock()
		got := slices.Clone(tr.status)
		tr.mu.Unlock()
		if slices.Equal(got, []int{200, 200}) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("spans ended with %v, want [200 200]", got)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestRouterHeadersOverRelayed: when the route puts headers of its own on
// the answer (here CORS), the head goes through the header map, with the
// same fields.
func TestRouterHeadersOverRelayed(t *testing.T) {
	addr := serveRouter(t, rawBackend(orderedHead, "ok"), router.Options{},
		`nginx.ingress.kubernetes.io/enable-cors: "true"`)
	c, br := h1.Dial(t, addr)
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: a.test\r\nOrigin: https://o.test\r\n\r\n")
	res, body := h1.ReadResponse(t, br, "GET")
	if res.StatusCode != 200 || body != "ok" {
		t.Fatalf("status %d body %q", res.StatusCode, body)
	}
	h := res.Header
	if got := h.Values("Set-Cookie"); !slices.Equal(got, []string{"a=1", "b=2"}) || h.Get("X-A") != "2" || h.Get("X-B") != "1" {
		t.Errorf("backend fields: %v", h)
	}
	for _, k := range []string{"Server", "X-Secret", "Keep-Alive", "Connection"} {
		if _, ok := h[k]; ok {
			t.Errorf("%s passed on: %v", k, h)
		}
	}
	if h.Get("Access-Control-Allow-Origin") == "" {
		t.Errorf("no CORS headers: %v", h)
	}
}

// TestRouterRelaysEventStreamFlushed: server-sent events of a declared
// length are flushed as they come, like those of unknown length.
func TestRouterRelaysEventStreamFlushed(t *testing.T) {
	next := make(chan struct{})
	addr := serveRouter(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Content-Length", "18")
		io.WriteString(w, "data: 1\n\n")
		http.NewResponseController(w).Flush()
		select {
		case <-next:
		case <-r.Context().Done():
			return
		}
		io.WriteString(w, "data: 2\n\n")
	}), router.Options{})
	c, br := h1.Dial(t, addr)
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: a.test\r\n\r\n")
	status, _ := headLines(t, br)
	if status != "HTTP/1.1 200 OK" {
		t.Fatal(status)
	}
	got := make(chan string, 1)
	go func() {
		b := make([]byte, 9)
		_, err := io.ReadFull(br, b)
		if err != nil {
			got <- err.Error()
		}
		got <- string(b)
	}()
	select {
	case s := <-got:
		if s != "data: 1\n\n" {
			t.Fatalf("first event %q", s)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the first event did not arrive while the backend waited")
	}
	close(next)
}

// TestRouterRefusesAmbiguousResponseFraming: a backend response with
// Content-Length beside Transfer-Encoding, or Content-Length twice (equal
// values too), answers 502, as nginx's ngx_http_upstream_process_content_length
// and _transfer_encoding refuse it ("upstream sent duplicate header
// line", "… headers at the same time"): two parsers may frame it apart.
func TestRouterRefusesAmbiguousResponseFraming(t *testing.T) {
	for _, head := range []string{
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 2\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n",
		"HTTP/1.0 200 OK\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n",
		"HTTP/1.1 204 No Content\r\nContent-Length: 0\r\nContent-Length: 0\r\n\r\n",
	} {
		addr := serveRouter(t, rawBackend(head, "2\r\nok\r\n0\r\n\r\n"), router.Options{})
		c, br := h1.Dial(t, addr)
		io.WriteString(c, "GET / HTTP/1.1\r\nHost: a.test\r\n\r\n")
		if res, _ := h1.ReadResponse(t, br, "GET"); res.StatusCode != http.StatusBadGateway {
			t.Errorf("%q: %d, want 502", head, res.StatusCode)
		}
	}
}

// TestRouterCutsTruncatedHTTPSBody: an HTTPS backend's chunked body
// broken off before its last chunk reaches the client as a broken-off
// answer (the connection closed without a last chunk), as nginx ends it
// and as HTTP backends' already do. Under router/h1's server, which sets
// no http.ServerContextKey, ReverseProxy returned quietly instead of
// aborting, and the server ended the answer with a well-formed last
// chunk: the client took "hel" for the whole body and kept the
// connection.
func TestRouterCutsTruncatedHTTPSBody(t *testing.T) {
	be := httptest.NewTLSServer(rawBackend("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", "5\r\nhel"))
	t.Cleanup(be.Close)
	// Through ReverseProxy, as backend TLS settings or Options.Transport
	// send HTTPS backends.
	o := router.Options{}
	o.Transport = router.DefaultTransport(o)
	rt := catchAllTo(t, be, o, "nginx.ingress.kubernetes.io/backend-protocol: HTTPS")
	addr := h1.ServeOn(t, &h1.Server{Handler: rt, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 10 * time.Second})
	c, br := h1.Dial(t, addr)
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: a.test\r\n\r\n")
	c.SetDeadline(time.Now().Add(5 * time.Second))
	res, err := http.ReadResponse(br, nil)
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("%v, %v; want the backend's 200", res, err)
	}
	b, err := io.ReadAll(res.Body)
	if err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("the client read %q, %v: a complete answer; want it broken off", b, err)
	}
}

// TestRouterReadsHTTP10Chunks: an HTTP/1.0 backend response with
// Transfer-Encoding: chunked is read chunked, as nginx reads it
// (ngx_http_upstream_process_transfer_encoding does not look at the
// version): the client gets the data, not the chunk framing, and the
// connection is not kept (an HTTP/1.0 response closes it for nginx).
func TestRouterReadsHTTP10Chunks(t *testing.T) {
	addr := serveRouter(t, rawBackend("HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", "5\r\nhello\r\n0\r\n\r\n"), router.Options{})
	c, br := h1.Dial(t, addr)
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: a.test\r\n\r\n")
	if res, body := h1.ReadResponse(t, br, "GET"); res.StatusCode != http.StatusOK || body != "hello" {
		t.Errorf("%d %q, want 200 \"hello\"", res.StatusCode, body)
	}
}

// TestRouterHTTPSResponseFraming: an HTTPS backend's response is read as
// an HTTP one's (router/h1's client over TLS), as nginx reads both alike:
// Content-Length beside Transfer-Encoding, or twice, answers 502; an
// HTTP/1.0 response's chunks are read; a field name with a byte no token
// has is dropped. They went through net/http's transport, which read the
// first two, passed the chunk framing on as data and answered the last
// 502.
func TestRouterHTTPSResponseFraming(t *testing.T) {
	for _, c := range []struct {
		head, body string
		status     int
		want       string
	}{
		{"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 2\r\n\r\n", "2\r\nok\r\n0\r\n\r\n", 502, ""},
		{"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\n", "ok", 502, ""},
		{"HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", "5\r\nhello\r\n0\r\n\r\n", 200, "hello"},
		{"HTTP/1.1 200 OK\r\nX@Y: 1\r\nX-A: a\r\nContent-Length: 2\r\n\r\n", "ok", 200, "ok"},
	} {
		be := httptest.NewTLSServer(rawBackend(c.head, c.body))
		t.Cleanup(be.Close)
		rt := catchAllTo(t, be, router.Options{}, "nginx.ingress.kubernetes.io/backend-protocol: HTTPS")
		addr := h1.ServeOn(t, &h1.Server{Handler: rt, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 10 * time.Second})
		conn, br := h1.Dial(t, addr)
		io.WriteString(conn, "GET / HTTP/1.1\r\nHost: a.test\r\n\r\n")
		res, body := h1.ReadResponse(t, br, "GET")
		if res.StatusCode != c.status || c.status == 200 && (body != c.want || res.Header["X@Y"] != nil) {
			t.Errorf("%q: %d %q %v; want %d %q", c.head, res.StatusCode, body, res.Header, c.status, c.want)
		}
	}
}

// TestRouterServesResponseWithNonTokenName: a backend field whose name has
// a byte no token has (but no space, control byte or DEL) is read by
// nginx and passed on; the router served 502 for the whole response.
// It now serves the response without that field (net/http's writers drop
// such names, as does the router's).
func TestRouterServesResponseWithNonTokenName(t *testing.T) {
	addr := serveRouter(t, rawBackend("HTTP/1.1 200 OK\r\nX@Y: 1\r\nX-A: a\r\nContent-Length: 2\r\n\r\n", "ok"), router.Options{})
	c, br := h1.Dial(t, addr)
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: a.test\r\n\r\n")
	res, body := h1.ReadResponse(t, br, "GET")
	if res.StatusCode != http.StatusOK || body != "ok" || res.Header.Get("X-A") != "a" {
		t.Errorf("%d %q %v, want 200 \"ok\" with X-A", res.StatusCode, body, res.Header)
	}
}

// TestRouterHTTPSResumesSessions: nginx reuses an HTTPS backend's TLS
// session on its next connection (proxy_ssl_session_reuse, on by
// default); the router's HTTPS pool resumes it too. The backend closes
// every connection, so each request opens a new one.
func TestRouterHTTPSResumesSessions(t *testing.T) {
	be := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Connection", "close")
		io.WriteString(w, strconv.FormatBool(r.TLS.DidResume))
	}))
	t.Cleanup(be.Close)
	rt := catchAllTo(t, be, router.Options{}, "nginx.ingress.kubernetes.io/backend-protocol: HTTPS")
	addr := h1.ServeOn(t, &h1.Server{Handler: rt, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 10 * time.Second})
	conn, br := h1.Dial(t, addr)
	var got []string
	for range 3 {
		io.WriteString(conn, "GET / HTTP/1.1\r\nHost: a.test\r\n\r\n")
		res, body := h1.ReadResponse(t, br, "GET")
		if res.StatusCode != http.StatusOK {
			t.Fatalf("status %d %q", res.StatusCode, body)
		}
		got = append(got, body)
	}
	if want := []string{"false", "true", "true"}; !slices.Equal(got, want) {
		t.Errorf("backend connections resumed %v, want %v", got, want)
	}
}
