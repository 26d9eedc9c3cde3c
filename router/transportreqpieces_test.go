package router

import (
	"bufio"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"ramjet.dev/ramjet/match"
)

// TestTransportStreamedBodySentAsItComes: with proxy-request-buffering
// "off", a request body of known length reaches the backend as the
// client sends it on the net/http way out too (Options.Transport,
// backend TLS settings), as nginx sends it and the router's own pool
// does: the backend has the first piece while the client waits before
// sending the rest.
func TestTransportStreamedBodySentAsItComes(t *testing.T) {
	cert := testCert(t, "backend.test")
	for _, tc := range netHTTPWaysOut() {
		t.Run(tc.name, func(t *testing.T) {
			first := make(chan string, 1)
			addr := rawServer(t, func(c net.Conn) {
				if tc.tls {
					c = tls.Server(c, &tls.Config{Certificates: []tls.Certificate{*cert}})
				}
				req, err := http.ReadRequest(bufio.NewReader(c))
				if err != nil {
					return
				}
				b := make([]byte, 5)
				n, _ := io.ReadFull(req.Body, b)
				first <- string(b[:n])
				rest, _ := io.ReadAll(req.Body)
				io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n"+string(rest))
			})
			r := newTestRouter(tc.o)
			rt := policyRoute("/", backend("prod/web:80", tc.proto, match.Serving, addr), &match.Policy{StreamRequestBody: true})
			if tc.tls {
				rt.BackendTLS = match.NewBackendTLS(match.BackendTLS{Secret: "prod/up"})
			}
			r.Publish(table("p", vhost("", nil, rt)))
			conn, br := h1EdgeDial(t, h1Front(t, r))
			io.WriteString(conn, "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\nhello")
			select {
			case got := <-first:
				if got != "hello" {
					t.Fatalf("the backend's first piece: %q", got)
				}
			case <-time.After(3 * time.Second):
				t.Fatal("the backend did not get the first piece before the rest")
			}
			io.WriteString(conn, "world")
			res, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatal(err)
			}
			if b, _ := io.ReadAll(res.Body); string(b) != "world" {
				t.Fatalf("the backend got the rest %q", b)
			}
		})
	}
}

// TestGRPCStreamedBodySentAsItComes: a gRPC call's body of known length
// reaches the backend as the client sends it, over router/h2's client
// and net/http's.
func TestGRPCStreamedBodySentAsItComes(t *testing.T) {
	for _, netHTTP2 := range []bool{false, true} {
		t.Run(map[bool]string{false: "router/h2", true: "net/http"}[netHTTP2], func(t *testing.T) {
			first := make(chan string, 1)
			s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				b := make([]byte, 5)
				n, _ := io.ReadFull(r.Body, b)
				first <- string(b[:n])
				rest, _ := io.ReadAll(r.Body)
				w.Header().Set("Content-Type", "application/grpc")
				_, _ = w.Write(rest)
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
			pr, pw := io.Pipe()
			t.Cleanup(func() { pw.Close() })
			req, err := http.NewRequest(http.MethodPost, front.URL+"/pkg.Svc/Get", pr)
			if err != nil {
				t.Fatal(err)
			}
			req.ContentLength = 10
			req.Header.Set("Content-Type", "application/grpc")
			done := make(chan string, 1)
			go func() {
				res, err := client.Do(req)
				if err != nil {
					done <- err.Error()
					return
				}
				b, _ := io.ReadAll(res.Body)
				res.Body.Close()
				done <- string(b)
			}()
			_, _ = pw.Write([]byte("hello"))
			select {
			case got := <-first:
				if got != "hello" {
					t.Fatalf("the backend's first piece: %q", got)
				}
			case <-time.After(3 * time.Second):
				t.Fatal("the backend did not get the first piece before the rest")
			}
			_, _ = pw.Write([]byte("world"))
			pw.Close()
			if got := <-done; got != "world" {
				t.Fatalf("the answer: %q", got)
			}
		})
	}
}
