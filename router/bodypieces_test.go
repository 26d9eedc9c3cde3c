package router

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"ramjet.dev/ramjet/match"
)

// TestKnownLengthBodySentAsItComes: a backend's response with a
// Content-Length whose body comes in pieces reaches the client as it
// comes, the head with the first piece, as nginx sends it under
// ingress-nginx's proxy-buffering "off": what came is not held while the
// router waits for the rest. The backend sends the rest only once the
// client has the first piece.
func TestKnownLengthBodySentAsItComes(t *testing.T) {
	fronts := map[string]func(t *testing.T, backend string) string{
		"h1": func(t *testing.T, backend string) string { return h1EdgeRouter(t, backend, nil, nil) },
		"net/http": func(t *testing.T, backend string) string {
			r := newTestRouter(Options{})
			r.Publish(table("edge", vhost("", nil, route(match.Prefix, "/", httpBackend("prod/web:80", backend)))))
			t.Cleanup(r.CloseIdleConnections)
			s := httptest.NewServer(r)
			t.Cleanup(s.Close)
			return s.Listener.Addr().String()
		},
	}
	for name, front := range fronts {
		t.Run(name, func(t *testing.T) {
			release := make(chan struct{})
			backend := rawServer(t, func(c net.Conn) {
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
			c, br := h1EdgeDial(t, front(t, backend))
			readInPieces(t, c, br, release, 2*time.Second)
		})
	}
}
