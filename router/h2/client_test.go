package h2

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// h2cBackend serves h on net/http's cleartext HTTP/2 server (a backend
// other than this package's), and counts the connections it accepted.
func h2cBackend(t *testing.T, h http.HandlerFunc, conf func(*http.Server)) (addr string, conns *atomic.Int32, srv *httptest.Server) {
	t.Helper()
	s := httptest.NewUnstartedServer(h)
	s.Config.Protocols = new(http.Protocols)
	s.Config.Protocols.SetUnencryptedHTTP2(true)
	conns = new(atomic.Int32)
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			conns.Add(1)
		}
	}
	if conf != nil {
		conf(s.Config)
	}
	s.Start()
	t.Cleanup(s.Close)
	return strings.TrimPrefix(s.URL, "http://"), conns, s
}

func newTestClient(t *testing.T) *Client {
	c := &Client{}
	t.Cleanup(c.CloseIdleConnections)
	return c
}

func grpcRequest(t *testing.T, ctx context.Context, addr, path string, body io.Reader) *http.Request {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addr+path, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/grpc")
	req.Header.Set("Te", "trailers")
	req.ContentLength = -1
	return req
}

// echoUnary answers a unary call: its body back, and grpc-status as a
// trailer.
func echoUnary(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	w.Header().Set("Content-Type", "application/grpc")
	w.Header().Set("X-Seen-Te", r.Header.Get("Te"))
	w.Header().Set("X-Seen-Custom", strings.Join(r.Header.Values("X-Custom"), ","))
	w.Header().Set("Trailer", "Grpc-Status")
	_, _ = w.Write(b)
	w.Header().Set("Grpc-Status", "0")
	w.Header().Set(http.TrailerPrefix+"Grpc-Message", "ok")
}

func TestClientUnary(t *testing.T) {
	addr, conns, _ := h2cBackend(t, echoUnary, nil)
	c := newTestClient(t)
	for i := range 20 {
		req := grpcRequest(t, context.Background(), addr, "/pkg.Svc/Get", strings.NewReader("\x00\x00\x00\x00\x02hi"))
		req.Header["X-Custom"] = []string{"a", "b"}
		res, err := c.RoundTrip(req)
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		body, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil || string(body) != "\x00\x00\x00\x00\x02hi" {
			t.Fatalf("call %d: body %q, %v", i, body, err)
		}
		if res.StatusCode != 200 || res.Proto != "HTTP/2.0" || res.Header.Get("Content-Type") != "application/grpc" {
			t.Fatalf("call %d: %d %s %v", i, res.StatusCode, res.Proto, res.Header)
		}
		if res.Header.Get("X-Seen-Te") != "trailers" || res.Header.Get("X-Seen-Custom") != "a,b" {
			t.Fatalf("call %d: the backend saw Te %q, X-Custom %q", i, res.Header.Get("X-Seen-Te"), res.Header.Get("X-Seen-Custom"))
		}
		if res.Trailer.Get("Grpc-Status") != "0" || res.Trailer.Get("Grpc-Message") != "ok" {
			t.Fatalf("call %d: trailers %v", i, res.Trailer)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Fatalf("%d connections for 20 calls in turn, want 1", n)
	}
}

// TestClientConcurrency: calls past the server's stream limit wait for a
// connection of their own, none refused, none lost.
func TestClientConcurrency(t *testing.T) {
	addr, conns, _ := h2cBackend(t, echoUnary, func(s *http.Server) {
		s.HTTP2 = &http.HTTP2Config{MaxConcurrentStreams: 8}
	})
	c := newTestClient(t)
	// One call first, so that the server's SETTINGS are known.
	res, err := c.RoundTrip(grpcRequest(t, context.Background(), addr, "/", strings.NewReader("x")))
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	var wg sync.WaitGroup
	errs := make(chan error, 200)
	for i := range 200 {
		wg.Go(func() {
			msg := strings.Repeat("m", i)
			res, err := c.RoundTrip(grpcRequest(t, context.Background(), addr, "/", strings.NewReader(msg)))
			if err != nil {
				errs <- err
				return
			}
			defer res.Body.Close()
			b, err := io.ReadAll(res.Body)
			if err != nil || string(b) != msg || res.Trailer.Get("Grpc-Status") != "0" {
				errs <- errors.New("call " + msg + ": body or trailers wrong")
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := conns.Load(); n < 2 || n > 200/8+1 {
		t.Errorf("%d connections for 200 calls at 8 streams each", n)
	}
}

// TestClientStreamsBothWays: a bidirectional stream, each message
// answered before the next is sent.
func TestClientStreamsBothWays(t *testing.T) {
	addr, _, _ := h2cBackend(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/grpc")
		w.WriteHeader(200)
		w.(http.Flusher).Flush()
		buf := make([]byte, 64)
		for {
			n, err := r.Body.Read(buf)
			if n > 0 {
				_, _ = w.Write(bytes.ToUpper(buf[:n]))
				w.(http.Flusher).Flush()
			}
			if err != nil {
				break
			}
		}
		w.Header().Set(http.TrailerPrefix+"Grpc-Status", "0")
	}, nil)
	c := newTestClient(t)
	pr, pw := io.Pipe()
	res, err := c.RoundTrip(grpcRequest(t, context.Background(), addr, "/chat", pr))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	buf := make([]byte, 64)
	for _, m := range []string{"one", "two", "three"} {
		if _, err := pw.Write([]byte(m)); err != nil {
			t.Fatal(err)
		}
		n, err := io.ReadAtLeast(res.Body, buf, len(m))
		if err != nil || string(buf[:n]) != strings.ToUpper(m) {
			t.Fatalf("answer to %q: %q, %v", m, buf[:n], err)
		}
	}
	pw.Close()
	if rest, err := io.ReadAll(res.Body); err != nil || len(rest) != 0 {
		t.Fatalf("after the request ended: %q, %v", rest, err)
	}
	if res.Trailer.Get("Grpc-Status") != "0" {
		t.Fatalf("trailers %v", res.Trailer)
	}
}

// TestClientLargeBodies: bodies past every flow-control window, both
// ways, arrive whole.
func TestClientLargeBodies(t *testing.T) {
	addr, _, _ := h2cBackend(t, func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			return
		}
		_, _ = w.Write(b)
		_, _ = w.Write(b)
	}, nil)
	c := newTestClient(t)
	up := make([]byte, 5<<20)
	_, _ = rand.Read(up)
	for range 2 {
		res, err := c.RoundTrip(grpcRequest(t, context.Background(), addr, "/big", bytes.NewReader(up)))
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil || !bytes.Equal(got, append(append([]byte(nil), up...), up...)) {
			t.Fatalf("%d bytes back of %d, %v", len(got), 2*len(up), err)
		}
	}
}

// TestClientServerReset: a stream the server resets fails the call, or
// its body, and the connection goes on serving.
func TestClientServerReset(t *testing.T) {
	addr, conns, _ := h2cBackend(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/abort-head" {
			panic(http.ErrAbortHandler)
		}
		if r.URL.Path == "/abort-body" {
			w.WriteHeader(200)
			_, _ = w.Write([]byte("partial"))
			w.(http.Flusher).Flush()
			panic(http.ErrAbortHandler)
		}
		echoUnary(w, r)
	}, nil)
	c := newTestClient(t)
	if res, err := c.RoundTrip(grpcRequest(t, context.Background(), addr, "/abort-head", strings.NewReader("x"))); err == nil {
		res.Body.Close()
		t.Fatal("a reset before the head: no error")
	} else if !errors.As(err, new(StreamError)) {
		t.Fatalf("a reset before the head: %v", err)
	}
	res, err := c.RoundTrip(grpcRequest(t, context.Background(), addr, "/abort-body", strings.NewReader("x")))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadAll(res.Body); err == nil {
		t.Fatal("a body reset: read to its end without error")
	}
	res.Body.Close()
	res, err = c.RoundTrip(grpcRequest(t, context.Background(), addr, "/ok", strings.NewReader("x")))
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.ReadAll(res.Body)
	res.Body.Close()
	if n := conns.Load(); n != 1 {
		t.Fatalf("%d connections: a stream's reset closed the connection", n)
	}
}

// TestClientCancelAndTimeout: a call whose context ends, or whose answer
// takes past ResponseHeaderTimeout, returns at once, and the server's
// handler sees the stream cancelled.
func TestClientCancelAndTimeout(t *testing.T) {
	cancelled := make(chan struct{}, 4)
	addr, _, _ := h2cBackend(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
			cancelled <- struct{}{}
		case <-time.After(10 * time.Second):
		}
	}, nil)
	c := newTestClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := c.RoundTrip(grpcRequest(t, ctx, addr, "/slow", strings.NewReader("x")))
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 5*time.Second {
		t.Fatalf("cancelled call: %v after %v", err, time.Since(start))
	}
	waitSignal(t, cancelled, "the server's handler saw no cancel")

	c.ResponseHeaderTimeout = 100 * time.Millisecond
	_, err = c.RoundTrip(grpcRequest(t, context.Background(), addr, "/slow", strings.NewReader("x")))
	var te interface{ Timeout() bool }
	if !errors.As(err, &te) || !te.Timeout() {
		t.Fatalf("call past ResponseHeaderTimeout: %v", err)
	}
	waitSignal(t, cancelled, "the server's handler saw no cancel after the timeout")
}

func waitSignal(t *testing.T, ch chan struct{}, msg string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(5 * time.Second):
		t.Fatal(msg)
	}
}

// TestClientBodyClosedEarly: closing a response body not read to its end
// resets the stream, so the server stops.
func TestClientBodyClosedEarly(t *testing.T) {
	stopped := make(chan struct{}, 1)
	addr, _, _ := h2cBackend(t, func(w http.ResponseWriter, r *http.Request) {
		chunk := make([]byte, 16<<10)
		for range 10000 {
			if _, err := w.Write(chunk); err != nil {
				stopped <- struct{}{}
				return
			}
			w.(http.Flusher).Flush()
		}
	}, nil)
	c := newTestClient(t)
	res, err := c.RoundTrip(grpcRequest(t, context.Background(), addr, "/stream", strings.NewReader("x")))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(res.Body, make([]byte, 100)); err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if _, err := res.Body.Read(make([]byte, 1)); !errors.Is(err, http.ErrBodyReadAfterClose) {
		t.Fatalf("read after close: %v", err)
	}
	waitSignal(t, stopped, "the server kept writing to a stream whose body was closed")
}

// TestClientServerGoesAway: after the server's graceful close, calls go
// out on a new connection.
func TestClientServerGoesAway(t *testing.T) {
	addr, conns, srv := h2cBackend(t, echoUnary, nil)
	c := newTestClient(t)
	call := func() error {
		res, err := c.RoundTrip(grpcRequest(t, context.Background(), addr, "/", strings.NewReader("x")))
		if err != nil {
			return err
		}
		defer res.Body.Close()
		_, err = io.ReadAll(res.Body)
		return err
	}
	if err := call(); err != nil {
		t.Fatal(err)
	}
	// Closing the server's connections (not the listener) sends GOAWAY.
	srv.CloseClientConnections()
	deadline := time.Now().Add(5 * time.Second)
	for {
		err := call()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no call succeeded after the server closed its connections: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n := conns.Load(); n != 2 {
		t.Fatalf("%d connections, want 2", n)
	}
}

// TestClientDialError: an address nothing listens on fails as a dial
// error (the router tries another endpoint on it).
func TestClientDialError(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	_, err = newTestClient(t).RoundTrip(grpcRequest(t, context.Background(), addr, "/", strings.NewReader("x")))
	var op *net.OpError
	if !errors.As(err, &op) || op.Op != "dial" {
		t.Fatalf("call to a closed port: %v", err)
	}
}

// TestClientIdleClose: a connection with no call for IdleConnTimeout is
// closed, and the next call dials again.
func TestClientIdleClose(t *testing.T) {
	addr, conns, _ := h2cBackend(t, echoUnary, nil)
	c := newTestClient(t)
	c.IdleConnTimeout = 50 * time.Millisecond
	for range 2 {
		res, err := c.RoundTrip(grpcRequest(t, context.Background(), addr, "/", strings.NewReader("x")))
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.ReadAll(res.Body)
		res.Body.Close()
		time.Sleep(300 * time.Millisecond)
	}
	if n := conns.Load(); n != 2 {
		t.Fatalf("%d connections, want 2 (the first closed as idle)", n)
	}
}

// TestClientRefusesBadHeaders: a header value HTTP/2 forbids fails the
// call before anything is sent.
func TestClientRefusesBadHeaders(t *testing.T) {
	addr, _, _ := h2cBackend(t, echoUnary, nil)
	c := newTestClient(t)
	req := grpcRequest(t, context.Background(), addr, "/", strings.NewReader("x"))
	req.Header["X-Bad"] = []string{"a\r\nInjected: yes"}
	if _, err := c.RoundTrip(req); err == nil {
		t.Fatal("a value with CR LF went out")
	}
	res, err := c.RoundTrip(grpcRequest(t, context.Background(), addr, "/", strings.NewReader("x")))
	if err != nil {
		t.Fatalf("the next call: %v", err)
	}
	res.Body.Close()
}

// closeRecorder is a request body that reports its Close.
type closeRecorder struct {
	io.Reader
	closed chan struct{}
}

func (c *closeRecorder) Close() error {
	select {
	case <-c.closed:
	default:
		close(c.closed)
	}
	return nil
}

// TestClientAnswerBeforeRequestEnds: a server that answers without
// reading the body (its window shut) ends the call; the body writer
// stops rather than wait for window for good.
func TestClientAnswerBeforeRequestEnds(t *testing.T) {
	addr, _, _ := h2cBackend(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/grpc")
		w.Header().Set("Grpc-Status", "12") // trailers-only, as gRPC's "unimplemented"
	}, nil)
	c := newTestClient(t)
	for range 2 {
		body := &closeRecorder{Reader: bytes.NewReader(make([]byte, 10<<20)), closed: make(chan struct{})}
		req := grpcRequest(t, context.Background(), addr, "/pkg.Svc/Missing", nil)
		req.Body = body
		res, err := c.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadAll(res.Body); err != nil || res.Header.Get("Grpc-Status") != "12" {
			t.Fatalf("trailers-only answer: %v, %v", res.Header, err)
		}
		res.Body.Close()
		waitSignal(t, body.closed, "the request body was never let go")
	}
}

// frame is one HTTP/2 frame's bytes.
func frame(typ, flags uint8, stream uint32, payload []byte) []byte {
	return append(appendFrameHeader(nil, len(payload), typ, flags, stream), payload...)
}

// FuzzClientResponse: whatever a backend sends after its SETTINGS, a call
// ends (a response read to its end, or an error) and nothing panics.
func FuzzClientResponse(f *testing.F) {
	head := []byte{0x88}
	head = appendField(head, "content-type", "application/grpc")
	ok := frame(frameHeaders, flagEndHeaders, 1, head)
	ok = append(ok, frame(frameData, 0, 1, []byte("\x00\x00\x00\x00\x00"))...)
	ok = append(ok, frame(frameHeaders, flagEndHeaders|flagEndStream, 1, appendField(nil, "grpc-status", "0"))...)
	f.Add(ok)
	f.Add(frame(frameHeaders, flagEndStream, 1, head)) // CONTINUATION missing
	f.Add(append(frame(frameHeaders, 0, 1, head[:1]), frame(frameContinuation, flagEndHeaders, 1, head[1:])...))
	f.Add(frame(frameRSTStream, 0, 1, []byte{0, 0, 0, 7}))                // refused
	f.Add(frame(frameGoAway, 0, 0, []byte{0, 0, 0, 0, 0, 0, 0, 0}))       // goes away
	f.Add(frame(frameData, 0, 1, []byte("early")))                        // data before the head
	f.Add(frame(frameWindowUpdate, 0, 0, []byte{0x7f, 0xff, 0xff, 0xff})) // window overflow
	f.Add(frame(frameSettings, 0, 0, []byte{0, 4, 0x80, 0, 0, 0}))        // initial window too large
	f.Add(frame(framePushPromise, flagEndHeaders, 1, []byte{0, 0, 0, 2, 0x82}))
	f.Fuzz(func(t *testing.T, data []byte) {
		c := &Client{ResponseHeaderTimeout: 2 * time.Second, DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			cl, sv := net.Pipe()
			go func() {
				go func() { _, _ = io.Copy(io.Discard, sv) }()
				_, _ = sv.Write(frame(frameSettings, 0, 0, nil))
				_, _ = sv.Write(data)
				time.Sleep(10 * time.Millisecond)
				sv.Close()
			}()
			return cl, nil
		}}
		defer c.CloseIdleConnections()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://backend.test:50051/pkg.Svc/Get", strings.NewReader("\x00\x00\x00\x00\x00"))
		res, err := c.RoundTrip(req)
		if err != nil {
			return
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if ctx.Err() != nil {
			t.Fatal("the call outlived its backend's connection")
		}
	})
}

// TestClientTLS: with TLSClientConfig the client speaks TLS, "h2" by
// ALPN, and refuses a server that will not negotiate it.
func TestClientTLS(t *testing.T) {
	s := httptest.NewUnstartedServer(http.HandlerFunc(echoUnary))
	s.EnableHTTP2 = true
	s.StartTLS()
	t.Cleanup(s.Close)
	c := &Client{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}
	t.Cleanup(c.CloseIdleConnections)
	addr := strings.TrimPrefix(s.URL, "https://")
	req, _ := http.NewRequest(http.MethodPost, "https://"+addr+"/pkg.Svc/Get", strings.NewReader("hi"))
	res, err := c.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil || string(b) != "hi" || res.Trailer.Get("Grpc-Status") != "0" {
		t.Fatalf("over TLS: %q, %v, trailers %v", b, err, res.Trailer)
	}
	if _, err := c.RoundTrip(grpcRequest(t, context.Background(), addr, "/", strings.NewReader("x"))); err == nil {
		t.Fatal("an http call went out on a TLS client")
	}

	h1 := httptest.NewTLSServer(http.HandlerFunc(echoUnary)) // HTTP/1.1 only
	t.Cleanup(h1.Close)
	req, _ = http.NewRequest(http.MethodPost, h1.URL+"/pkg.Svc/Get", strings.NewReader("hi"))
	if _, err := c.RoundTrip(req); err == nil || !strings.Contains(err.Error(), "not h2") && !strings.Contains(err.Error(), "no application protocol") {
		t.Fatalf("a server without h2: %v", err)
	}
}

// TestClientLeavesNoGoroutines: once calls of every ending (answered,
// reset, cancelled, body closed early) are over and the idle connections
// closed, no goroutine of the client's is left.
func TestClientLeavesNoGoroutines(t *testing.T) {
	addr, _, srv := h2cBackend(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/reset":
			panic(http.ErrAbortHandler)
		case "/slow":
			<-r.Context().Done()
			return
		case "/stream":
			for range 100 {
				if _, err := w.Write(make([]byte, 16<<10)); err != nil {
					return
				}
				w.(http.Flusher).Flush()
			}
			return
		}
		echoUnary(w, r)
	}, nil)
	c := newTestClient(t)
	before := runtime.NumGoroutine()
	for i := range 50 {
		for _, path := range []string{"/ok", "/reset", "/slow", "/stream"} {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
			if path != "/slow" {
				ctx, cancel = context.WithCancel(context.Background())
			}
			res, err := c.RoundTrip(grpcRequest(t, ctx, addr, path, strings.NewReader(strings.Repeat("x", i))))
			if err == nil {
				if path == "/stream" {
					_, _ = io.ReadFull(res.Body, make([]byte, 1000))
				} else {
					_, _ = io.ReadAll(res.Body)
				}
				res.Body.Close()
			}
			cancel()
		}
	}
	c.CloseIdleConnections()
	srv.CloseClientConnections()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		buf := make([]byte, 1<<16)
		t.Fatalf("%d goroutines, %d before:\n%s", n, before, buf[:runtime.Stack(buf, true)])
	}
}

// TestClientSharedDialOutlivesItsCaller: a call that waits for another's
// dial does not fail because that other call gave up.
func TestClientSharedDialOutlivesItsCaller(t *testing.T) {
	addr, _, _ := h2cBackend(t, echoUnary, nil)
	var d net.Dialer
	c := &Client{DialContext: func(ctx context.Context, network, a string) (net.Conn, error) {
		select {
		case <-time.After(100 * time.Millisecond):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return d.DialContext(ctx, network, a)
	}}
	t.Cleanup(c.CloseIdleConnections)
	impatient, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	first := make(chan error, 1)
	go func() {
		_, err := c.RoundTrip(grpcRequest(t, impatient, addr, "/", strings.NewReader("x")))
		first <- err
	}()
	time.Sleep(5 * time.Millisecond) // the first call's dial is under way
	res, err := c.RoundTrip(grpcRequest(t, context.Background(), addr, "/", strings.NewReader("x")))
	if err != nil {
		t.Fatalf("the patient call failed with the impatient one's dial: %v", err)
	}
	res.Body.Close()
	if err := <-first; !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("the impatient call: %v", err)
	}
}

// TestClientLargeHeaderBlock: a request header block over one frame goes
// as HEADERS and CONTINUATION frames, and a response's long one comes back.
func TestClientLargeHeaderBlock(t *testing.T) {
	addr, _, _ := h2cBackend(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Echo", r.Header.Get("X-Big"))
	}, func(s *http.Server) {
		s.HTTP2 = &http.HTTP2Config{MaxReadFrameSize: 16 << 10} // frames of 16 KiB at most
	})
	c := newTestClient(t)
	big := strings.Repeat("b", 40<<10)
	req := grpcRequest(t, context.Background(), addr, "/", strings.NewReader("x"))
	req.Header.Set("X-Big", big)
	res, err := c.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.Header.Get("X-Echo") != big {
		t.Fatalf("the backend saw %d bytes of a %d-byte header", len(res.Header.Get("X-Echo")), len(big))
	}
}

// TestClientConnBounds: MaxConnRequests and MaxConnAge bound what one
// connection carries, as nginx's keepalive_requests and keepalive_time
// bound an upstream connection; a spent connection takes no new call and
// closes once its calls end. MaxConnRequests 1 is nginx's upstream
// without keepalive: a connection per call, closed after it. Unbounded,
// the pool kept reusing one connection.
func TestClientConnBounds(t *testing.T) {
	for _, tt := range []struct {
		name          string
		requests      int
		age           time.Duration
		calls         int
		conns, closed int32
	}{
		{"requests 3", 3, 0, 7, 3, 2},
		{"requests 1", 1, 0, 3, 3, 3},
		// Two calls, a pause past the age, two calls.
		{"age", 0, 200 * time.Millisecond, 4, 2, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var closed atomic.Int32
			addr, conns, _ := h2cBackend(t, echoUnary, func(s *http.Server) {
				count := s.ConnState
				s.ConnState = func(c net.Conn, st http.ConnState) {
					count(c, st)
					if st == http.StateClosed {
						closed.Add(1)
					}
				}
			})
			c := newTestClient(t)
			c.MaxConnRequests, c.MaxConnAge = tt.requests, tt.age
			for i := range tt.calls {
				if tt.age > 0 && i == tt.calls/2 {
					time.Sleep(tt.age + 50*time.Millisecond)
				}
				res, err := c.RoundTrip(grpcRequest(t, context.Background(), addr, "/", strings.NewReader("x")))
				if err != nil {
					t.Fatalf("call %d: %v", i, err)
				}
				_, _ = io.ReadAll(res.Body)
				res.Body.Close()
			}
			if n := conns.Load(); n != tt.conns {
				t.Fatalf("%d connections for %d calls, want %d", n, tt.calls, tt.conns)
			}
			// The spent ones close without waiting for the idle timeout.
			deadline := time.Now().Add(2 * time.Second)
			for closed.Load() < tt.closed && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			if n := closed.Load(); n != tt.closed {
				t.Fatalf("%d of %d connections closed, want %d", n, tt.conns, tt.closed)
			}
		})
	}
}

// TestClientMaxIdleConns: past a burst, the connections left idle beyond
// MaxIdleConnsPerHost close at once, as nginx's keepalive cache keeps at
// most its size; they stayed open until the idle timeout.
func TestClientMaxIdleConns(t *testing.T) {
	var closed atomic.Int32
	release := make(chan struct{})
	var arrived sync.WaitGroup
	arrived.Add(3)
	addr, conns, _ := h2cBackend(t, func(w http.ResponseWriter, r *http.Request) {
		arrived.Done()
		<-release
		echoUnary(w, r)
	}, func(s *http.Server) {
		s.HTTP2 = &http.HTTP2Config{MaxConcurrentStreams: 1}
		count := s.ConnState
		s.ConnState = func(c net.Conn, st http.ConnState) {
			count(c, st)
			if st == http.StateClosed {
				closed.Add(1)
			}
		}
	})
	c := newTestClient(t)
	c.MaxIdleConnsPerHost = 1
	go func() { arrived.Wait(); close(release) }()
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			res, err := c.RoundTrip(grpcRequest(t, context.Background(), addr, "/", strings.NewReader("x")))
			if err != nil {
				t.Error(err)
				return
			}
			_, _ = io.ReadAll(res.Body)
			res.Body.Close()
		})
	}
	wg.Wait()
	if n := conns.Load(); n != 3 {
		t.Fatalf("%d connections for 3 calls at once, 1 stream each; want 3", n)
	}
	deadline := time.Now().Add(2 * time.Second)
	for closed.Load() < 2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := closed.Load(); n != 2 {
		t.Fatalf("%d of 3 idle connections closed, want 2", n)
	}
}
