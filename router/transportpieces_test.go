package router

import (
	"bufio"
	"crypto/tls"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"ramjet.dev/ramjet/match"
	"ramjet.dev/ramjet/router/h1"
)

// h1Front serves r over router/h1's server until the test ends and
// returns its address.
func h1Front(t *testing.T, r *Router) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &h1.Server{Handler: r, ReadHeaderTimeout: 5 * time.Second, IdleTimeout: 5 * time.Second, ErrorLog: log.New(io.Discard, "", 0)}
	go s.Serve(ln)
	t.Cleanup(func() { s.Close() })
	t.Cleanup(r.CloseIdleConnections)
	return ln.Addr().String()
}

// piecesBackend answers every HTTP/1.1 request (over TLS with cert) with
// a Content-Length of 10, "hello" with the head, and "world" only once
// release is closed (or after 5 s).
func piecesBackend(t *testing.T, cert *tls.Certificate, release <-chan struct{}) string {
	return rawServer(t, func(c net.Conn) {
		if cert != nil {
			c = tls.Server(c, &tls.Config{Certificates: []tls.Certificate{*cert}})
		}
		if _, err := http.ReadRequest(bufio.NewReader(c)); err != nil {
			return
		}
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 10\r\nContent-Type: text/plain\r\n\r\nhello")
		select {
		case <-release:
		case <-time.After(5 * time.Second):
		}
		io.WriteString(c, "world")
	})
}

// TestTransportKnownLengthBodySentAsItComes: on the net/http way out
// (Options.Transport, backend TLS settings, gRPC over router/h2's client
// or net/http's), a backend's response with a Content-Length whose body
// comes in pieces reaches the client as it comes, as on the router's own
// HTTP/1.1 pool and as nginx sends it under ingress-nginx's
// proxy-buffering "off": the first piece is not held while the router
// waits for the rest. The backend sends the rest only once the client
// has the first piece.
func TestTransportKnownLengthBodySentAsItComes(t *testing.T) {
	cert := testCert(t, "backend.test")
	for _, tc := range netHTTPWaysOut() {
		t.Run(tc.name, func(t *testing.T) {
			release := make(chan struct{})
			var c *tls.Certificate
			if tc.tls {
				c = cert
			}
			addr := piecesBackend(t, c, release)
			r := newTestRouter(tc.o)
			rt := route(match.Prefix, "/", backend("prod/web:80", tc.proto, match.Serving, addr))
			if tc.tls {
				rt.BackendTLS = match.NewBackendTLS(match.BackendTLS{Secret: "prod/up"})
			}
			r.Publish(table("p", vhost("", nil, rt)))
			conn, br := h1EdgeDial(t, h1Front(t, r))
			readInPieces(t, conn, br, release, 3*time.Second)
		})
	}
}

// TestGRPCKnownLengthBodySentAsItComes: a gRPC answer with a
// Content-Length whose body comes in pieces reaches the client as it
// comes, over router/h2's client and net/http's.
func TestGRPCKnownLengthBodySentAsItComes(t *testing.T) {
	for _, netHTTP2 := range []bool{false, true} {
		t.Run(map[bool]string{false: "router/h2", true: "net/http"}[netHTTP2], func(t *testing.T) {
			release := make(chan struct{})
			s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/grpc")
				w.Header().Set("Content-Length", "10")
				_, _ = io.WriteString(w, "hello")
				w.(http.Flusher).Flush()
				select {
				case <-release:
				case <-time.After(5 * time.Second):
				}
				_, _ = io.WriteString(w, "world")
			}))
			s.Config.Protocols = new(http.Protocols)
			s.Config.Protocols.SetUnencryptedHTTP2(true)
			s.Start()
			t.Cleanup(s.Close)
			r := newTestRouter(Options{NetHTTP2Client: netHTTP2})
			t.Cleanup(r.CloseIdleConnections)
			r.Publish(table("g", vhost("", nil,
				route(match.Prefix, "/pkg.Svc", backend("prod/grpc:50051", match.GRPC, match.Serving, s.Listener.Addr().String())))))
			front := h1AndH2CServer(t, r)
			client := &http.Client{Transport: h2cTransport(t), Timeout: 8 * time.Second}
			req, err := http.NewRequest(http.MethodPost, front.URL+"/pkg.Svc/Get", http.NoBody)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/grpc")
			type first struct {
				res *http.Response
				b   string
				err error
			}
			got := make(chan first, 1)
			go func() {
				res, err := client.Do(req)
				if err != nil {
					got <- first{err: err}
					return
				}
				b := make([]byte, 5)
				n, err := io.ReadFull(res.Body, b)
				got <- first{res, string(b[:n]), err}
			}()
			var res *http.Response
			select {
			case f := <-got:
				if f.res != nil {
					res = f.res
					defer res.Body.Close()
				}
				if f.err != nil || f.b != "hello" {
					t.Fatalf("the first piece: %q, %v", f.b, f.err)
				}
			case <-time.After(3 * time.Second):
				t.Fatal("the head and the first piece did not come before the rest")
			}
			close(release)
			rest, err := io.ReadAll(res.Body)
			if err != nil || string(rest) != "world" {
				t.Fatalf("the rest: %q, %v", rest, err)
			}
		})
	}
}

// wayOut is one of the router's net/http ways out to an HTTP/1.1 backend.
type wayOut struct {
	name  string
	o     Options
	proto match.Protocol
	tls   bool
}

// netHTTPWaysOut: a Transport of the embedder's, DefaultTransport, and the
// router's own for backend TLS settings (proxy-ssl-*).
func netHTTPWaysOut() []wayOut {
	return []wayOut{
		{"Options.Transport", Options{Transport: &http.Transport{}}, match.HTTP, false},
		{"DefaultTransport", Options{Transport: DefaultTransport(Options{})}, match.HTTP, false},
		{"proxy-ssl", Options{}, match.HTTPS, true},
	}
}

// readInPieces sends a GET on c and wants the answer's head and its first
// piece, "hello", within wait, before it closes release (the backend
// then sends the rest), and then the rest, "world".
func readInPieces(t *testing.T, c net.Conn, br *bufio.Reader, release chan struct{}, wait time.Duration) {
	t.Helper()
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: a\r\n\r\n")
	_ = c.SetReadDeadline(time.Now().Add(wait))
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("the head did not come before the rest of the body: %v", err)
	}
	first := make([]byte, 5)
	if _, err := io.ReadFull(res.Body, first); err != nil || string(first) != "hello" {
		t.Fatalf("the first piece did not come before the rest: %q, %v", first, err)
	}
	close(release)
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	rest, err := io.ReadAll(res.Body)
	if err != nil || string(rest) != "world" {
		t.Fatalf("the rest: %q, %v", rest, err)
	}
}
