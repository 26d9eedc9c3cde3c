package h1

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// serve runs h under the loop on a loopback listener.
func serve(t *testing.T, s *Server) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if s.ErrorLog == nil {
		s.ErrorLog = log.New(io.Discard, "", 0)
	}
	go s.Serve(ln)
	t.Cleanup(func() { s.Close() })
	return ln.Addr().String()
}

func dial(t *testing.T, addr string) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	return c, bufio.NewReader(c)
}

func readResponse(t *testing.T, br *bufio.Reader, method string) (*http.Response, string) {
	t.Helper()
	res, err := http.ReadResponse(br, &http.Request{Method: method})
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, string(b)
}

func TestContextCancelledWhenClientGoes(t *testing.T) {
	cancelled := make(chan error, 1)
	addr := serve(t, &Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
			cancelled <- r.Context().Err()
		case <-time.After(5 * time.Second):
			cancelled <- nil
		}
	})})
	c, _ := dial(t, addr)
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: a\r\n\r\n")
	time.Sleep(50 * time.Millisecond)
	c.Close()
	if err := <-cancelled; !errors.Is(err, context.Canceled) {
		t.Fatalf("context: %v, want cancelled when the client closed", err)
	}
}

func TestContextCancelledAfterBody(t *testing.T) {
	// A watch asked for while the body is unread starts at its end.
	cancelled := make(chan error, 1)
	addr := serve(t, &Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		done := r.Context().Done()
		io.ReadAll(r.Body)
		select {
		case <-done:
			cancelled <- r.Context().Err()
		case <-time.After(5 * time.Second):
			cancelled <- nil
		}
	})})
	c, _ := dial(t, addr)
	io.WriteString(c, "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\nabc")
	time.Sleep(50 * time.Millisecond)
	c.Close()
	if err := <-cancelled; !errors.Is(err, context.Canceled) {
		t.Fatalf("context: %v, want cancelled", err)
	}
}

func TestRequestReusedUnlessContextObserved(t *testing.T) {
	var reqs []*http.Request
	addr := serve(t, &Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reqs = append(reqs, r)
		if r.URL.Path == "/wait" {
			_ = r.Context().Done()
		}
	})})
	c, br := dial(t, addr)
	io.WriteString(c, "GET /a HTTP/1.1\r\nHost: a\r\n\r\nGET /wait HTTP/1.1\r\nHost: a\r\n\r\nGET /b HTTP/1.1\r\nHost: a\r\n\r\n")
	for range 3 {
		readResponse(t, br, "GET")
	}
	if len(reqs) != 3 || reqs[0] != reqs[1] || reqs[1] == reqs[2] {
		t.Fatalf("requests %p: want the first reused for the second, a new one after a context was waited on", reqs)
	}
}

func TestPipelinedPipelineServedInOrder(t *testing.T) {
	var active atomic.Int32
	addr := serve(t, &Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if active.Add(1) != 1 {
			t.Error("two requests of one connection at once")
		}
		time.Sleep(5 * time.Millisecond)
		io.WriteString(w, r.URL.Path)
		active.Add(-1)
	})})
	c, br := dial(t, addr)
	io.WriteString(c, strings.Repeat("GET /1 HTTP/1.1\r\nHost: a\r\n\r\nGET /2 HTTP/1.1\r\nHost: a\r\n\r\n", 3))
	for i := range 6 {
		_, body := readResponse(t, br, "GET")
		if want := []string{"/1", "/2"}[i%2]; body != want {
			t.Fatalf("response %d: %q, want %q", i, body, want)
		}
	}
}

func TestFlushSendsBeforeHandlerEnds(t *testing.T) {
	release := make(chan struct{})
	addr := serve(t, &Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "first")
		http.NewResponseController(w).Flush()
		<-release
		io.WriteString(w, "second")
	})})
	c, br := dial(t, addr)
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: a\r\n\r\n")
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 5)
	if _, err := io.ReadFull(res.Body, buf); err != nil || string(buf) != "first" {
		t.Fatalf("before the handler ended: %q %v", buf, err)
	}
	close(release)
	rest, _ := io.ReadAll(res.Body)
	if string(rest) != "second" || res.TransferEncoding[0] != "chunked" {
		t.Fatalf("rest %q, framing %v", rest, res.TransferEncoding)
	}
}

func TestExpectContinueSentOnFirstRead(t *testing.T) {
	addr := serve(t, &Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Write(b)
	})})
	c, br := dial(t, addr)
	io.WriteString(c, "PUT / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 4\r\n\r\n")
	line, err := br.ReadString('\n')
	if err != nil || line != "HTTP/1.1 100 Continue\r\n" {
		t.Fatalf("got %q %v before sending the body, want 100 Continue", line, err)
	}
	br.ReadString('\n')
	io.WriteString(c, "body")
	if _, body := readResponse(t, br, "PUT"); body != "body" {
		t.Fatalf("body %q", body)
	}
}

func TestExpectContinueNotSentWhenRefused(t *testing.T) {
	addr := serve(t, &Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "too large", http.StatusRequestEntityTooLarge)
	})})
	c, br := dial(t, addr)
	io.WriteString(c, "PUT / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 4\r\n\r\n")
	res, _ := readResponse(t, br, "PUT")
	if res.StatusCode != 413 || !res.Close {
		t.Fatalf("status %d close %v, want 413 and the connection closed (the body never came)", res.StatusCode, res.Close)
	}
}

// An expectation other than 100-continue is ignored and the request
// served, as nginx's ngx_http_test_expect ignores it (net/http answers
// 417): no client behind ingress-nginx was refused for one.
func TestExpectOtherServed(t *testing.T) {
	addr := serve(t, &Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Write(b)
	})})
	c, br := dial(t, addr)
	for range 2 {
		io.WriteString(c, "PUT / HTTP/1.1\r\nHost: a\r\nExpect: something-else\r\nContent-Length: 4\r\n\r\nbody")
		if res, body := readResponse(t, br, "PUT"); res.StatusCode != 200 || body != "body" || res.Close {
			t.Fatalf("%d %q close %v, want the body echoed on a kept connection", res.StatusCode, body, res.Close)
		}
	}
}

// A field nginx takes once, sent twice, is refused with 400 and the
// connection closed, as nginx refuses it ("client sent duplicate header
// line"), whether the head is read by the plain parse or textproto's
// (the %7e target), even two equal Content-Lengths.
func TestDuplicateUniqueFieldRefused(t *testing.T) {
	var served atomic.Int32
	addr := serve(t, &Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { served.Add(1) })})
	for _, target := range []string{"/", "/%7e"} {
		for _, f := range []string{"Content-Length: 1", "Transfer-Encoding: chunked", "Expect: 100-continue", "Authorization: a",
			"Content-Range: bytes 0-0/1", "If-Modified-Since: a", "If-Unmodified-Since: a", "If-Match: a", "If-None-Match: a", "If-Range: a"} {
			c, br := dial(t, addr)
			io.WriteString(c, "POST "+target+" HTTP/1.1\r\nHost: a\r\n"+f+"\r\n"+strings.ToLower(f)+"\r\n\r\nx")
			if res, _ := readResponse(t, br, "POST"); res.StatusCode != 400 || !res.Close {
				t.Errorf("%s twice to %s: %d, close %v", f, target, res.StatusCode, res.Close)
			}
		}
	}
	// Others may repeat.
	c, br := dial(t, addr)
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: a\r\nAccept: a\r\nAccept: b\r\nCookie: a\r\nCookie: b\r\n\r\n")
	if res, _ := readResponse(t, br, "GET"); res.StatusCode != 200 || served.Load() != 1 {
		t.Fatalf("%d, served %d", res.StatusCode, served.Load())
	}
}

// A method is what nginx's request line parser reads as one: upper-case
// letters, '_' and '-'; any other token answers 400 and the handler never
// sees it.
func TestMethodAsNginxReadsIt(t *testing.T) {
	addr := serve(t, &Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, r.Method) })})
	for _, m := range []string{"get", "Get", "G.T", "GET1", "M!"} {
		for _, target := range []string{"/", "/%7e"} {
			c, br := dial(t, addr)
			io.WriteString(c, m+" "+target+" HTTP/1.1\r\nHost: a\r\n\r\n")
			if res, _ := readResponse(t, br, "GET"); res.StatusCode != 400 || !res.Close {
				t.Errorf("%s %s: %d, close %v", m, target, res.StatusCode, res.Close)
			}
		}
	}
	for _, m := range []string{"GET", "PROPFIND", "VERSION-CONTROL", "X_Y"} {
		c, br := dial(t, addr)
		io.WriteString(c, m+" / HTTP/1.1\r\nHost: a\r\n\r\n")
		if res, body := readResponse(t, br, m); res.StatusCode != 200 || body != m {
			t.Errorf("%s: %d %q", m, res.StatusCode, body)
		}
	}
}

// "OPTIONS *" answers 400, as nginx's request line parser refuses a
// target that is neither a path nor an absolute URI; net/http answers it
// 200 itself.
func TestAsteriskTargetRefused(t *testing.T) {
	var served atomic.Int32
	addr := serve(t, &Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { served.Add(1) })})
	for _, m := range []string{"OPTIONS", "GET"} {
		c, br := dial(t, addr)
		io.WriteString(c, m+" * HTTP/1.1\r\nHost: a\r\n\r\n")
		if res, _ := readResponse(t, br, m); res.StatusCode != 400 || !res.Close || served.Load() != 0 {
			t.Errorf("%s *: %d, close %v, served %d", m, res.StatusCode, res.Close, served.Load())
		}
	}
}

// MaxRequests closes a connection with the response to its last request,
// as nginx's keepalive_requests: "Connection: close", and a request
// pipelined after it is not served.
func TestMaxRequests(t *testing.T) {
	var served atomic.Int32
	addr := serve(t, &Server{MaxRequests: 3, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		io.WriteString(w, "ok")
	})})
	c, br := dial(t, addr)
	for i := 1; i <= 3; i++ {
		io.WriteString(c, "GET / HTTP/1.1\r\nHost: a\r\n\r\n")
		res, _ := readResponse(t, br, "GET")
		if res.Close != (i == 3) {
			t.Fatalf("request %d: close %v", i, res.Close)
		}
	}
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: a\r\n\r\n")
	if _, err := br.ReadByte(); err == nil || served.Load() != 3 {
		t.Fatalf("a fourth request was answered (%v), served %d", err, served.Load())
	}
}

// TestKeepAliveHTTP10Refused: an HTTP/1.0 client that asks for
// keep-alive is told "Connection: close" on a response after which the
// connection closes (keepalive_requests reached, keep-alive turned off),
// as nginx tells it (ngx_http_header_filter writes "Connection: close"
// whenever keep-alive is off), never "keep-alive".
func TestKeepAliveHTTP10Refused(t *testing.T) {
	const req = "GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })
	addr := serve(t, &Server{MaxRequests: 2, Handler: handler})
	c, br := dial(t, addr)
	for i := 1; i <= 2; i++ {
		io.WriteString(c, req)
		res, _ := readResponse(t, br, "GET")
		want := "keep-alive"
		if i == 2 {
			want = "close"
		}
		if got := res.Header.Get("Connection"); got != want || res.Close != (i == 2) {
			t.Fatalf("request %d: Connection %q, close %v", i, got, res.Close)
		}
	}
	if _, err := br.ReadByte(); err == nil {
		t.Fatal("the connection stayed open")
	}

	off := &Server{Handler: handler}
	off.SetKeepAlivesEnabled(false)
	c, br = dial(t, serve(t, off))
	io.WriteString(c, req)
	if res, _ := readResponse(t, br, "GET"); res.Header.Get("Connection") != "close" {
		t.Fatalf("keep-alive off: Connection %q", res.Header.Get("Connection"))
	}
}

// TestMaxConnAge: a connection older than MaxConnAge closes after the
// response of the request under way, as nginx's keepalive_time closes it.
func TestMaxConnAge(t *testing.T) {
	addr := serve(t, &Server{MaxConnAge: 200 * time.Millisecond, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "ok")
	})})
	c, br := dial(t, addr)
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: a\r\n\r\n")
	if res, _ := readResponse(t, br, "GET"); res.Close {
		t.Fatal("a young connection closed")
	}
	time.Sleep(250 * time.Millisecond)
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: a\r\n\r\n")
	if res, body := readResponse(t, br, "GET"); !res.Close || body != "ok" {
		t.Fatalf("close %v %q", res.Close, body)
	}
	if _, err := br.ReadByte(); err == nil {
		t.Fatal("the connection stayed open")
	}
}

// A field whose name nginx reads but calls invalid (a byte that is no
// token byte) is dropped and the request served, as ingress-nginx's
// ignore-invalid-headers default drops it; net/http refuses the head. A
// name with a space or a control byte is still refused, as nginx refuses
// it.
func TestInvalidFieldNameDropped(t *testing.T) {
	addr := serve(t, &Server{
		HeaderBuffers: HeaderBuffers{Number: 4, Size: 8192},
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var names []string
			for k := range r.Header {
				names = append(names, k)
			}
			slices.Sort(names)
			io.WriteString(w, strings.Join(names, ","))
		})})
	for _, tc := range []struct{ fields, want string }{
		{"X@Y: 1\r\nX-A: a\r\n", "X-A"},
		{"X-A: a\r\nContent/Type: x\r\n(b): 2\r\nX-B: b\r\n", "X-A,X-B"},
		{"X-\xffA: 1\r\nX-A: a\r\n", "X-A"},
	} {
		c, br := dial(t, addr)
		io.WriteString(c, "GET / HTTP/1.1\r\nHost: a\r\n"+tc.fields+"\r\n")
		if res, body := readResponse(t, br, "GET"); res.StatusCode != 200 || body != tc.want {
			t.Errorf("%.40q: %d %q, want %q", tc.fields, res.StatusCode, body, tc.want)
		}
	}
	for _, f := range []string{"Bad Name: x\r\n", "X\x01: x\r\n", ": x\r\n"} {
		c, br := dial(t, addr)
		io.WriteString(c, "GET / HTTP/1.1\r\nHost: a\r\n"+f+"\r\n")
		if res, _ := readResponse(t, br, "GET"); res.StatusCode != 400 {
			t.Errorf("%q: %d, want 400", f, res.StatusCode)
		}
	}
}

func TestHijackUpgrade(t *testing.T) {
	addr := serve(t, &Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, brw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		defer c.Close()
		brw.WriteString("HTTP/1.1 101 Switching Protocols\r\nUpgrade: echo\r\nConnection: Upgrade\r\n\r\n")
		brw.Flush()
		// Bytes the client sent with the head are in brw's reader.
		line, _ := brw.ReadString('\n')
		c.Write([]byte("echo " + line))
	})})
	c, br := dial(t, addr)
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: a\r\nUpgrade: echo\r\nConnection: Upgrade\r\n\r\nhello\n")
	res, err := http.ReadResponse(br, nil)
	if err != nil || res.StatusCode != 101 {
		t.Fatalf("%v %v", res, err)
	}
	got, _ := io.ReadAll(br)
	if string(got) != "echo hello\n" {
		t.Fatalf("tunnel: %q", got)
	}
}

func TestHeaderTimeout(t *testing.T) {
	addr := serve(t, &Server{Handler: http.NotFoundHandler(), ReadHeaderTimeout: 100 * time.Millisecond, IdleTimeout: time.Minute})
	c, br := dial(t, addr)
	start := time.Now()
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: a\r\n")
	if _, err := br.ReadByte(); err != io.EOF || time.Since(start) > 5*time.Second {
		t.Fatalf("after an incomplete head: %v after %v, want the connection closed", err, time.Since(start))
	}
}

func TestIdleTimeout(t *testing.T) {
	addr := serve(t, &Server{Handler: http.NotFoundHandler(), ReadHeaderTimeout: time.Minute, IdleTimeout: 100 * time.Millisecond})
	c, br := dial(t, addr)
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: a\r\n\r\n")
	readResponse(t, br, "GET")
	start := time.Now()
	if _, err := br.ReadByte(); err != io.EOF || time.Since(start) > 5*time.Second {
		t.Fatalf("idle: %v after %v, want closed", err, time.Since(start))
	}
}

func TestReadDeadlineFromHandler(t *testing.T) {
	// http.ResponseController's read deadline bounds a body read, as
	// the router's client body timeout uses it.
	got := make(chan error, 1)
	addr := serve(t, &Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.NewResponseController(w).SetReadDeadline(time.Now().Add(50 * time.Millisecond))
		_, err := io.ReadAll(r.Body)
		got <- err
	})})
	c, _ := dial(t, addr)
	io.WriteString(c, "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\nabc")
	if err := <-got; !errors.Is(err, context.DeadlineExceeded) && !isTimeout(err) {
		t.Fatalf("body read: %v, want a timeout", err)
	}
}

func TestPanicClosesConnection(t *testing.T) {
	addr := serve(t, &Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/abort" {
			panic(http.ErrAbortHandler)
		}
		panic("boom")
	})})
	for _, path := range []string{"/abort", "/boom"} {
		c, br := dial(t, addr)
		io.WriteString(c, "GET "+path+" HTTP/1.1\r\nHost: a\r\n\r\n")
		if b, err := io.ReadAll(br); len(b) != 0 || err != nil {
			t.Fatalf("%s: %q %v, want the connection closed without an answer", path, b, err)
		}
	}
}

func TestH2CPriorKnowledgeHandedOver(t *testing.T) {
	protos := new(http.Protocols)
	protos.SetHTTP1(true)
	protos.SetUnencryptedHTTP2(true)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, r.Proto) })
	addr := serve(t, &Server{Handler: h, Fallback: &http.Server{Handler: h, Protocols: protos}})
	cp := new(http.Protocols)
	cp.SetUnencryptedHTTP2(true)
	client := &http.Client{Transport: &http.Transport{Protocols: cp}}
	res, err := client.Get("http://" + addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if string(b) != "HTTP/2.0" {
		t.Fatalf("prior-knowledge client served as %q", b)
	}
	// HTTP/1.1 on the same listener stays the loop's.
	res, err = http.Get("http://" + addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(res.Body)
	res.Body.Close()
	if string(b) != "HTTP/1.1" {
		t.Fatalf("HTTP/1.1 client served as %q", b)
	}
}

func TestTLSH2HandedOver(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.TLS == nil {
			t.Error("no TLS state")
		}
		io.WriteString(w, r.Proto)
	})
	ts := httptest.NewUnstartedServer(h) // for its certificate
	ts.EnableHTTP2 = true
	ts.StartTLS()
	cfg := ts.TLS.Clone()
	ts.Close()
	cfg.NextProtos = []string{"h2", "http/1.1"}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{Handler: h, Fallback: &http.Server{Handler: h, TLSConfig: cfg}, ErrorLog: log.New(io.Discard, "", 0)}
	go s.Serve(handshakeListener{ln, cfg})
	t.Cleanup(func() { s.Close() })
	for _, proto := range []string{"h2", "http/1.1"} {
		cc := &tls.Config{InsecureSkipVerify: true, NextProtos: []string{proto}}
		tr := &http.Transport{TLSClientConfig: cc, ForceAttemptHTTP2: proto == "h2"}
		res, err := (&http.Client{Transport: tr}).Get("https://" + ln.Addr().String() + "/")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		tr.CloseIdleConnections()
		if want := map[string]string{"h2": "HTTP/2.0", "http/1.1": "HTTP/1.1"}[proto]; string(b) != want {
			t.Fatalf("ALPN %s served as %q", proto, b)
		}
	}
}

// handshakeListener hands over TLS connections with the handshake done,
// as the controller's tlsListener does.
type handshakeListener struct {
	net.Listener
	cfg *tls.Config
}

func (l handshakeListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	tc := tls.Server(c, l.cfg)
	if err := tc.Handshake(); err != nil {
		c.Close()
		return l.Accept()
	}
	return tc, nil
}

func TestShutdownFinishesInFlightClosesIdle(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	s := &Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			close(started)
			<-release
		}
		io.WriteString(w, "done")
	})}
	addr := serve(t, s)
	idle, idleBR := dial(t, addr)
	io.WriteString(idle, "GET / HTTP/1.1\r\nHost: a\r\n\r\n")
	readResponse(t, idleBR, "GET")
	busy, busyBR := dial(t, addr)
	io.WriteString(busy, "GET /slow HTTP/1.1\r\nHost: a\r\n\r\n")
	<-started
	shut := make(chan error, 1)
	go func() { shut <- s.Shutdown(context.Background()) }()
	if _, err := idleBR.ReadByte(); err != io.EOF {
		t.Fatalf("idle connection: %v, want closed by Shutdown", err)
	}
	if _, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		t.Fatal("the listener still accepts after Shutdown")
	}
	select {
	case err := <-shut:
		t.Fatalf("Shutdown returned %v with a request in flight", err)
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	res, body := readResponse(t, busyBR, "GET")
	if body != "done" || !res.Close {
		t.Fatalf("in-flight request: %q close=%v, want finished with Connection: close", body, res.Close)
	}
	if err := <-shut; err != nil {
		t.Fatal(err)
	}
}

func TestShutdownTimeout(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	s := &Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-release })}
	addr := serve(t, s)
	c, _ := dial(t, addr)
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: a\r\n\r\n")
	time.Sleep(50 * time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if err := s.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Shutdown: %v, want the context's error", err)
	}
}

func TestKeepAlivesDisabled(t *testing.T) {
	s := &Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})}
	addr := serve(t, s)
	idle, idleBR := dial(t, addr)
	io.WriteString(idle, "GET / HTTP/1.1\r\nHost: a\r\n\r\n")
	readResponse(t, idleBR, "GET")
	s.SetKeepAlivesEnabled(false)
	if _, err := idleBR.ReadByte(); err != io.EOF {
		t.Fatalf("idle connection: %v, want closed", err)
	}
	c, br := dial(t, addr)
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: a\r\n\r\n")
	if res, _ := readResponse(t, br, "GET"); !res.Close {
		t.Fatal("a response with keep-alives off does not close")
	}
}

func TestServeAfterCloseAndErrServerClosed(t *testing.T) {
	s := &Server{Handler: http.NotFoundHandler()}
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	done := make(chan error, 1)
	go func() { done <- s.Serve(ln) }()
	time.Sleep(20 * time.Millisecond)
	s.Shutdown(context.Background())
	if err := <-done; err != http.ErrServerClosed {
		t.Fatalf("Serve: %v", err)
	}
}

func TestHijackOutlivesHeaderTimeout(t *testing.T) {
	// The head's read deadline, left in place for a request without a
	// body, must not reach the hijacker.
	got := make(chan string, 1)
	addr := serve(t, &Server{ReadHeaderTimeout: 100 * time.Millisecond, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, brw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			got <- err.Error()
			return
		}
		defer c.Close()
		line, err := brw.ReadString('\n')
		if err != nil {
			line = err.Error()
		}
		got <- line
	})})
	c, _ := dial(t, addr)
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: a\r\nUpgrade: x\r\nConnection: Upgrade\r\n\r\n")
	time.Sleep(300 * time.Millisecond)
	io.WriteString(c, "late\n")
	if line := <-got; line != "late\n" {
		t.Fatalf("the hijacker read %q", line)
	}
}

func TestBodyReadOutlivesHeaderTimeout(t *testing.T) {
	got := make(chan string, 1)
	addr := serve(t, &Server{ReadHeaderTimeout: 100 * time.Millisecond, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			got <- err.Error()
			return
		}
		got <- string(b)
	})})
	c, _ := dial(t, addr)
	io.WriteString(c, "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 4\r\n\r\n")
	time.Sleep(300 * time.Millisecond)
	io.WriteString(c, "late")
	if body := <-got; body != "late" {
		t.Fatalf("the handler read %q", body)
	}
}

func TestContextAfterFunc(t *testing.T) {
	// context.AfterFunc on the request's context runs when the client
	// goes, and a stopped one never runs, even when the handler ends.
	ran, stoppedRan := make(chan struct{}), make(chan struct{}, 1)
	addr := serve(t, &Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		stop := context.AfterFunc(r.Context(), func() { stoppedRan <- struct{}{} })
		if !stop() {
			t.Error("stop reported the function ran")
		}
		context.AfterFunc(r.Context(), func() { close(ran) })
		select {
		case <-ran:
		case <-time.After(5 * time.Second):
			t.Error("AfterFunc did not run when the client went")
		}
	})})
	c, _ := dial(t, addr)
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: a\r\n\r\n")
	time.Sleep(50 * time.Millisecond)
	c.Close()
	<-ran
	time.Sleep(50 * time.Millisecond)
	select {
	case <-stoppedRan:
		t.Fatal("a stopped AfterFunc ran")
	default:
	}
}

// A head that does not come whole with its first bytes is bounded by
// ReadHeaderTimeout on a kept-alive connection too, not by IdleTimeout.
func TestHeaderTimeoutAfterFirstRequest(t *testing.T) {
	addr := serve(t, &Server{Handler: http.NotFoundHandler(), ReadHeaderTimeout: 100 * time.Millisecond, IdleTimeout: time.Minute})
	c, br := dial(t, addr)
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: a\r\n\r\n")
	readResponse(t, br, "GET")
	start := time.Now()
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: a\r\n")
	if _, err := br.ReadByte(); err != io.EOF || time.Since(start) > 5*time.Second {
		t.Fatalf("after an incomplete second head: %v after %v, want the connection closed", err, time.Since(start))
	}
}

// A busy connection moves its idle deadline once per slack, not once per
// request, but each wait still gets at least IdleTimeout.
func TestIdleTimeoutBusyConnection(t *testing.T) {
	const idle = 400 * time.Millisecond
	addr := serve(t, &Server{Handler: http.NotFoundHandler(), ReadHeaderTimeout: time.Minute, IdleTimeout: idle})
	c, br := dial(t, addr)
	for end := time.Now().Add(2 * idle); time.Now().Before(end); {
		io.WriteString(c, "GET / HTTP/1.1\r\nHost: a\r\n\r\n")
		readResponse(t, br, "GET")
		time.Sleep(idle / 20)
	}
	time.Sleep(idle / 2)
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: a\r\n\r\n")
	readResponse(t, br, "GET")
	start := time.Now()
	if _, err := br.ReadByte(); err != io.EOF || time.Since(start) > 5*time.Second {
		t.Fatalf("idle: %v after %v, want closed", err, time.Since(start))
	}
	if d := time.Since(start); d < idle-50*time.Millisecond {
		t.Fatalf("closed %v after the last response, before IdleTimeout %v", d, idle)
	}
}

// A body handed to a goroutine that reads it after the handler returned
// reads nothing more, whatever the connection's next request carries: the
// body object is the connection's, reused for that request.
func TestBodyReadAfterHandlerReturned(t *testing.T) {
	late := make(chan io.Reader, 1)
	second, proceed := make(chan struct{}), make(chan struct{})
	got := make(chan string, 1)
	addr := serve(t, &Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/first" {
			late <- r.Body
			return
		}
		close(second)
		<-proceed
		b, _ := io.ReadAll(r.Body)
		got <- string(b)
	})})
	c, br := dial(t, addr)
	io.WriteString(c, "POST /first HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\nabc")
	readResponse(t, br, "POST")
	body := <-late
	io.WriteString(c, "POST /second HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello")
	<-second
	buf := make([]byte, 16)
	n, err := body.Read(buf)
	close(proceed)
	if n > 0 || err == nil {
		t.Errorf("a read of the first request's body after its handler returned: %q, %v; want nothing and an error", buf[:n], err)
	}
	readResponse(t, br, "POST")
	if s := <-got; s != "hello" {
		t.Fatalf("the second request's body: %q, want \"hello\"", s)
	}
}

// foldedHeads hold an obs-folded line (RFC 9112 section 5.2: a line that
// begins with a space or tab, continuing the one before). net/http's
// server joins it to the value before; nginx answers 400 ("client sent
// invalid header line"), and so does the loop: two parsers reading one
// field differently is how requests get smuggled.
var foldedHeads = []struct{ name, head string }{
	{"space", "GET / HTTP/1.1\r\nHost: a\r\nX-A: 1\r\n 2\r\n\r\n"},
	{"tab", "GET / HTTP/1.1\r\nHost: a\r\nX-A: 1\r\n\t2\r\n\r\n"},
	{"first field line", "GET / HTTP/1.1\r\n X-A: 1\r\nHost: a\r\n\r\n"},
	{"folded Content-Length", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length:\r\n 3\r\n\r\nabc"},
	{"folded Transfer-Encoding", "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding:\r\n chunked\r\n\r\n0\r\n\r\n"},
	{"bare LF lines", "GET / HTTP/1.1\nHost: a\nX-A: 1\n 2\n\n"},
	{"after a line longer than the read buffer", "GET / HTTP/1.1\r\nHost: a\r\nX-Long: " + strings.Repeat("x", 3*bufSize) + "\r\n 2\r\n\r\n"},
	{"a fold of a long line", "GET /%7e HTTP/1.1\r\nHost: a\r\nX-A: 1\r\n " + strings.Repeat("y", 3*bufSize) + "\r\n\r\n"},
}

func TestFoldedHeadRefused(t *testing.T) {
	var served atomic.Int32
	addr := serve(t, &Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		io.WriteString(w, r.Header.Get("X-A"))
	})})
	for _, tc := range foldedHeads {
		t.Run(tc.name, func(t *testing.T) {
			before := served.Load()
			c, br := dial(t, addr)
			// A request before it on the connection is served.
			io.WriteString(c, "GET / HTTP/1.1\r\nHost: a\r\nX-A: first\r\n\r\n"+tc.head)
			res, body := readResponse(t, br, "GET")
			if res.StatusCode != 200 || body != "first" {
				t.Fatalf("first request: %d %q", res.StatusCode, body)
			}
			res, body = readResponse(t, br, "GET")
			if res.StatusCode != 400 || !res.Close {
				t.Fatalf("status %d close %v body %.40q, want 400 and the connection closed", res.StatusCode, res.Close, body)
			}
			if n := served.Load() - before; n != 1 {
				t.Fatalf("the handler ran %d times, want once", n)
			}
		})
	}
	// A head that is not plain, with no fold, is served as before, and
	// one that comes in pieces too.
	c, br := dial(t, addr)
	io.WriteString(c, "GET /%7e HTTP/1.1\r\nHost: a\r\nX-A: a\tb\r\nX-Long: "+strings.Repeat("z", 3*bufSize))
	time.Sleep(10 * time.Millisecond)
	io.WriteString(c, "\r\n\r\n")
	if res, body := readResponse(t, br, "GET"); res.StatusCode != 200 || body != "a\tb" {
		t.Fatalf("%d %q", res.StatusCode, body)
	}
}

// A head over MaxHeaderBytes (with net/http's slack: 4 KiB, and on a
// kept-alive connection what was read ahead before the head) is answered
// 431 as net/http answers it.
func TestHeadTooLarge(t *testing.T) {
	const limit = 8 << 10
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "served") })
	addr := serve(t, &Server{Handler: ok, MaxHeaderBytes: limit})
	c, br := dial(t, addr)
	go io.WriteString(c, "GET / HTTP/1.1\r\nHost: a\r\nCookie: "+strings.Repeat("c", limit+10000)+"\r\n\r\n")
	res, body := readResponse(t, br, "GET")
	if res.StatusCode != 431 || body != "431 Request Header Fields Too Large" || !res.Close {
		t.Fatalf("got %d %q, close %v", res.StatusCode, body, res.Close)
	}
}

// A request's context answers http.LocalAddrContextKey with the
// connection's local address, or with what ConnContext put there instead,
// on every request of a connection; other keys from ConnContext's chain.
func TestRequestContextLocalAddr(t *testing.T) {
	type otherKey struct{}
	for _, override := range []bool{false, true} {
		s := &Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, "%v %v", r.Context().Value(http.LocalAddrContextKey), r.Context().Value(otherKey{}))
		})}
		s.ConnContext = func(ctx context.Context, _ net.Conn) context.Context {
			if override {
				ctx = context.WithValue(ctx, http.LocalAddrContextKey, "elsewhere")
			}
			return context.WithValue(ctx, otherKey{}, "other")
		}
		addr := serve(t, s)
		c, br := dial(t, addr)
		want := addr + " other"
		if override {
			want = "elsewhere other"
		}
		for range 3 {
			io.WriteString(c, "GET / HTTP/1.1\r\nHost: a\r\n\r\n")
			if _, body := readResponse(t, br, "GET"); body != want {
				t.Fatalf("override %v: context values %q, want %q", override, body, want)
			}
		}
	}
}

// A connection closed on a refused body lingers as nginx's does
// (lingering_time 30 s, lingering_timeout 5 s between reads): a client
// still sending its body for seconds gets the answer, not a reset that
// takes it away.
func TestLingerWhileClientSends(t *testing.T) {
	addr := serve(t, &Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Connection", "close")
		http.Error(w, "too large", http.StatusRequestEntityTooLarge)
	})})
	c, br := dial(t, addr)
	io.WriteString(c, "PUT / HTTP/1.1\r\nHost: a\r\nContent-Length: 100000000\r\n\r\n")
	chunk := strings.Repeat("x", 16<<10)
	for end := time.Now().Add(1500 * time.Millisecond); time.Now().Before(end); {
		if _, err := io.WriteString(c, chunk); err != nil {
			t.Fatalf("the connection closed under the body: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	res, body := readResponse(t, br, "PUT")
	if res.StatusCode != 413 {
		t.Fatalf("%d %q", res.StatusCode, body)
	}
}

// Empty lines before a request line are skipped, as nginx's parser skips
// them: at the start of a connection and between requests, whatever the
// method before (net/http skips a few only after a POST).
func TestEmptyLinesBeforeRequestLine(t *testing.T) {
	addr := serve(t, &Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, r.URL.Path) })})
	c, br := dial(t, addr)
	io.WriteString(c, "\r\n\n\r\nGET /one HTTP/1.1\r\nHost: a\r\n\r\n\r\n\r\n\r\nGET /two HTTP/1.1\r\nHost: a\r\n\r\n")
	for _, want := range []string{"/one", "/two"} {
		if res, body := readResponse(t, br, "GET"); res.StatusCode != 200 || body != want {
			t.Fatalf("%d %q, want %q", res.StatusCode, body, want)
		}
	}
}
