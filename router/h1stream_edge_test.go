package router

import (
	"bufio"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"ramjet.dev/ramjet/match"
	"ramjet.dev/ramjet/router/h1"
)

// h1EdgeRouter serves a router with one catch-all route to the backend at
// backendAddr over router/h1's server, its handler wrapped by wrap when
// not nil, and returns the router's address.
func h1EdgeRouter(t *testing.T, backendAddr string, pol *match.Policy, wrap func(http.Handler) http.Handler) string {
	return h1EdgeRouterWith(t, Options{}, backendAddr, pol, wrap)
}

func h1EdgeRouterWith(t *testing.T, o Options, backendAddr string, pol *match.Policy, wrap func(http.Handler) http.Handler) string {
	t.Helper()
	r := newTestRouter(o)
	b := httpBackend("prod/web:80", backendAddr)
	rt := route(match.Prefix, "/", b)
	if pol != nil {
		rt = policyRoute("/", b, pol)
	}
	r.Publish(table("edge", vhost("", nil, rt)))
	t.Cleanup(r.CloseIdleConnections)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var h http.Handler = r
	if wrap != nil {
		h = wrap(r)
	}
	s := &h1.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second, IdleTimeout: 5 * time.Second, ErrorLog: log.New(io.Discard, "", 0)}
	go s.Serve(ln)
	t.Cleanup(func() { s.Close() })
	return ln.Addr().String()
}

func h1EdgeDial(t *testing.T, addr string) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	return c, bufio.NewReader(c)
}

// TestStreamedBodyReachesEchoingBackendWhole: with request buffering
// off, a backend that answers while it still reads the request body (an
// echo, a bidirectional stream) gets the whole body. The response's
// first flush sends the client its head as the body sender still
// forwards the body: the server leaves the body to it (full duplex)
// rather than draining it then, as it would for a handler that did not
// read it.
func TestStreamedBodyReachesEchoingBackendWhole(t *testing.T) {
	got := make(chan string, 1)
	backend := rawServer(t, func(c net.Conn) {
		br := bufio.NewReader(c)
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		first := make([]byte, 4)
		if _, err := io.ReadFull(req.Body, first); err != nil {
			got <- "error: " + err.Error()
			return
		}
		// Answer at once with what came so far, as an echo would.
		io.WriteString(c, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\n"+string(first)+"\r\n")
		rest, err := io.ReadAll(req.Body)
		io.WriteString(c, "0\r\n\r\n")
		if err != nil {
			got <- "error: " + err.Error()
			return
		}
		got <- string(first) + string(rest)
	})
	addr := h1EdgeRouter(t, backend, &match.Policy{StreamRequestBody: true}, nil)
	c, br := h1EdgeDial(t, addr)
	io.WriteString(c, "POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n4\r\naaaa\r\n")
	time.Sleep(100 * time.Millisecond)
	io.WriteString(c, "4\r\nbbbb\r\n")
	time.Sleep(100 * time.Millisecond)
	io.WriteString(c, "4\r\ncccc\r\n")
	time.Sleep(100 * time.Millisecond)
	io.WriteString(c, "4\r\ndddd\r\n0\r\n\r\n")
	res, err := http.ReadResponse(br, &http.Request{Method: "POST"})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	if string(b) != "aaaa" {
		t.Errorf("the client got %q, want the echo's \"aaaa\"", b)
	}
	select {
	case body := <-got:
		if body != "aaaabbbbccccdddd" {
			t.Fatalf("the backend got the request body %q; the client sent \"aaaabbbbccccdddd\"", body)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("the backend never got the body's end")
	}
}

// earlyAnswerBackend answers every request at once, before it reads the
// body, which it reads after.
func earlyAnswerBackend(t *testing.T) string {
	return rawServer(t, func(c net.Conn) {
		br := bufio.NewReader(c)
		for {
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
			io.Copy(io.Discard, req.Body)
		}
	})
}

// lateReads wraps a handler and counts the reads of a request body that
// end after the handler returned.
type lateReads struct {
	n atomic.Int32
}

func (l *lateReads) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Body == nil || req.Body == http.NoBody {
			next.ServeHTTP(w, req)
			return
		}
		b := &lateBody{ReadCloser: req.Body, l: l}
		req.Body = b
		next.ServeHTTP(w, req)
		b.returned.Store(true)
	})
}

type lateBody struct {
	io.ReadCloser
	l        *lateReads
	returned atomic.Bool
}

func (b *lateBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if b.returned.Load() {
		b.l.n.Add(1)
	}
	return n, err
}

// TestStreamedBodyNotReadAfterHandler: with request buffering off, a
// backend that answers before it read the body ends the exchange while
// the router's body sender still waits on the client's body. The
// router's handler returns only once the sender is done with that body:
// no read of it ends after the handler returned, when the server's loop
// has moved on to the client's next request, and the process lives on
// when the client then closes its connection. The exchanges run in a
// child process, whose death the test reports.
func TestStreamedBodyNotReadAfterHandler(t *testing.T) {
	if os.Getenv("H1_EDGE_LATE_READ_CHILD") == "1" {
		lateReadChild(t)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestStreamedBodyNotReadAfterHandler$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), "H1_EDGE_LATE_READ_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		if i := strings.Index(string(out), "goroutine "); i > 0 {
			if j := strings.Index(string(out[i:]), "\n\n"); j > 0 {
				out = out[:i+j]
			}
		}
		t.Fatalf("the router's process failed: %v\n%s", err, out)
	}
}

func lateReadChild(t *testing.T) {
	var late lateReads
	addr := h1EdgeRouter(t, earlyAnswerBackend(t), &match.Policy{StreamRequestBody: true}, late.wrap)
	for range 20 {
		c, br := h1EdgeDial(t, addr)
		io.WriteString(c, "POST /up HTTP/1.1\r\nHost: a\r\nContent-Length: 4\r\n\r\n")
		time.Sleep(30 * time.Millisecond) // the backend answered; the sender waits for the body
		io.WriteString(c, "abcd")
		res, err := http.ReadResponse(br, &http.Request{Method: "POST"})
		if err != nil {
			t.Fatal(err)
		}
		io.ReadAll(res.Body)
		c.Close()
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond)
	if n := late.n.Load(); n != 0 {
		t.Fatalf("%d reads of a request body ended after the router's handler returned", n)
	}
}

// TestStreamedBodyEarlyAnswerReachesClient: with request buffering off,
// a backend's answer that came before the body is the client's before
// the body is: a client that sends its body only once it has the answer
// gets it. With a client body timeout, the router waits under it for the
// body's end, and the connection then carries the next request; without
// one, the body's read is cut short and the connection closes after the
// answer.
func TestStreamedBodyEarlyAnswerReachesClient(t *testing.T) {
	for _, tc := range []struct {
		name    string
		timeout time.Duration
	}{
		{"body timeout", 0}, // the router's default
		{"no body timeout", -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr := h1EdgeRouterWith(t, Options{ClientBodyTimeout: tc.timeout}, earlyAnswerBackend(t), &match.Policy{StreamRequestBody: true}, nil)
			c, br := h1EdgeDial(t, addr)
			_ = c.SetDeadline(time.Now().Add(3 * time.Second))
			io.WriteString(c, "POST /up HTTP/1.1\r\nHost: a\r\nContent-Length: 4\r\n\r\n")
			res, err := http.ReadResponse(br, &http.Request{Method: "POST"})
			if err != nil {
				t.Fatalf("no answer while the client holds back its body: %v", err)
			}
			if b, err := io.ReadAll(res.Body); err != nil || string(b) != "ok" {
				t.Fatalf("answer %q, %v", b, err)
			}
			if tc.timeout < 0 {
				if !res.Close {
					t.Fatal("the connection stays open with the body unread")
				}
				return
			}
			if res.Close {
				t.Fatal("the connection closes, though the body's end is to come")
			}
			io.WriteString(c, "abcd")
			io.WriteString(c, "GET /next HTTP/1.1\r\nHost: a\r\n\r\n")
			res, err = http.ReadResponse(br, &http.Request{Method: "GET"})
			if err != nil {
				t.Fatalf("the next request on the connection: %v", err)
			}
			if b, err := io.ReadAll(res.Body); err != nil || string(b) != "ok" {
				t.Fatalf("next answer %q, %v", b, err)
			}
		})
	}
}

// TestUpgradeBodyPrecedesTunnel: an Upgrade request that declares a body,
// which the backend answers with 101 before the body came. The client
// gets the 101, then sends its body and the new protocol's bytes: the
// backend gets the body whole, then the tunnelled bytes, in the order the
// client sent them, as the tunnel starts only once the body sender is
// done with the client's connection and the backend's.
func TestUpgradeBodyPrecedesTunnel(t *testing.T) {
	got := make(chan string, 1)
	backend := rawServer(t, func(c net.Conn) {
		br := bufio.NewReader(c)
		if _, err := http.ReadRequest(br); err != nil {
			return
		}
		io.WriteString(c, "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n")
		_ = c.SetReadDeadline(time.Now().Add(3 * time.Second))
		// The body's 10 bytes, as the request framed them, then the
		// tunnel's, to the client's half-close.
		b, _ := io.ReadAll(br)
		got <- string(b)
	})
	addr := h1EdgeRouter(t, backend, &match.Policy{StreamRequestBody: true}, nil)
	c, br := h1EdgeDial(t, addr)
	io.WriteString(c, "GET /ws HTTP/1.1\r\nHost: a\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nContent-Length: 10\r\n\r\n")
	line, err := br.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(line, "HTTP/1.1 101") {
		t.Fatalf("status line %q, want a 101", line)
	}
	// The 101 came before the body: its 10 bytes, then 190 of the tunnel.
	for range 20 {
		io.WriteString(c, "0123456789")
		time.Sleep(5 * time.Millisecond)
	}
	c.(*net.TCPConn).CloseWrite()
	want := strings.Repeat("0123456789", 20)
	select {
	case b := <-got:
		if b != want {
			t.Fatalf("the backend got %d bytes after the request head: %q\nwant the client's 10-byte body then its 190 tunnelled bytes, in order", len(b), b)
		}
	case <-time.After(4 * time.Second):
		t.Fatal("the backend never got the tunnel's end")
	}
}

// TestUpgradeTunnelOutlivesReadTimeout: the read timeout the body sender
// of an Upgrade's body sets as it ends (the wait for a response) is not
// left on the tunnel: while the client keeps it busy (the tunnel's idle
// bound, TestTunnelIdleTimeout), the backend's bytes sent after it passed
// still reach the client.
func TestUpgradeTunnelOutlivesReadTimeout(t *testing.T) {
	const read = 200 * time.Millisecond
	backend := rawServer(t, func(c net.Conn) {
		br := bufio.NewReader(c)
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		io.WriteString(c, "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n")
		if _, err := io.Copy(io.Discard, req.Body); err != nil {
			return
		}
		time.Sleep(3 * read)
		io.WriteString(c, "hello")
	})
	addr := h1EdgeRouter(t, backend, &match.Policy{StreamRequestBody: true, ReadTimeout: read}, nil)
	c, br := h1EdgeDial(t, addr)
	io.WriteString(c, "GET /ws HTTP/1.1\r\nHost: a\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nContent-Length: 4\r\n\r\n")
	res, err := http.ReadResponse(br, &http.Request{Method: "GET"})
	if err != nil || res.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("%v %v, want a 101", res, err)
	}
	io.WriteString(c, "abcd")
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(read / 4):
				io.WriteString(c, ".")
			}
		}
	}()
	b := make([]byte, 5)
	if _, err := io.ReadFull(br, b); err != nil || string(b) != "hello" {
		t.Fatalf("the client got %q, %v from the tunnel; want \"hello\"", b, err)
	}
}
