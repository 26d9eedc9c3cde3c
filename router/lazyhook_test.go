package router

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"ramjet.dev/ramjet/router/h1"
)

// TestClientGoneEndsLazyExchange: a request without a body sets its
// client-cancellation hook only after h1.HookAfter without a response head,
// or when the body is not read with the head (h1proxy.go). Either way a
// client that goes away still ends the exchange with the backend: the
// backend's connection is closed. (Once the status is sent, the record
// names the failed read of the closed connection, upstream-error, as it
// did when the hook was always set.)
func TestClientGoneEndsLazyExchange(t *testing.T) {
	tests := []struct {
		name   string
		head   string // what the backend answers before it stalls
		reason string
	}{
		{"waiting for the head", "", ReasonClientClosed},
		{"in a body of known length", "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\npartial", ReasonUpstreamError},
		{"in a chunked body", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n7\r\npartial\r\n", ReasonUpstreamError},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			arrived, closed := make(chan struct{}), make(chan struct{})
			conns := make(chan net.Conn, 1)
			addr := rawServer(t, func(c net.Conn) {
				conns <- c
				br := bufio.NewReader(c)
				for {
					line, err := br.ReadSlice('\n')
					if err != nil {
						return
					}
					if len(bytes.TrimRight(line, "\r\n")) == 0 {
						break
					}
				}
				_, _ = io.WriteString(c, tt.head)
				close(arrived)
				_, _ = io.Copy(io.Discard, br) // until the router closes it
				close(closed)
			})
			r, rs := singleBackendRouter(t, addr, Options{})
			front := httptest.NewServer(r)
			defer front.Close()
			defer func() {
				// A router that failed to close it would hold front.Close.
				(<-conns).Close()
			}()

			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, front.URL+"/", nil)
			require.NoError(t, err)
			done := make(chan struct{})
			go func() {
				defer close(done)
				res, err := front.Client().Do(req)
				if err != nil {
					return
				}
				_, _ = io.ReadAll(res.Body)
				res.Body.Close()
			}()
			waitFor(t, arrived)
			time.Sleep(10 * time.Millisecond) // the router is reading
			start := time.Now()
			cancel()
			waitFor(t, closed)
			assert.Less(t, time.Since(start), h1.HookAfter+time.Second, "the backend connection is closed soon after the client left")
			waitFor(t, done)
			select {
			case rec := <-rs.ch:
				assert.Equal(t, tt.reason, rec.Reason)
			case <-time.After(5 * time.Second):
				t.Fatal("no record")
			}
		})
	}
}

// TestLazyHookSlowHead: a response head that starts within h1.HookAfter and
// ends after it is read whole, under the read timeout and not the hook's
// deadline; so is one that starts after h1.HookAfter.
func TestLazyHookSlowHead(t *testing.T) {
	for _, wait := range []struct{ before, within time.Duration }{{0, 3 * h1.HookAfter}, {2 * h1.HookAfter, 0}} {
		addr := rawServer(t, func(c net.Conn) {
			br := bufio.NewReader(c)
			for {
				line, err := br.ReadSlice('\n')
				if err != nil {
					return
				}
				if len(bytes.TrimRight(line, "\r\n")) > 0 {
					continue
				}
				time.Sleep(wait.before)
				_, _ = io.WriteString(c, "HTTP/1.1 200 OK\r\n")
				time.Sleep(wait.within)
				_, _ = io.WriteString(c, "Content-Length: 3\r\n\r\nok\n")
			}
		})
		r, _ := singleBackendRouter(t, addr, Options{})
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		req.Host = "web"
		rec := httptest.NewRecorder()
		r.ServeHTTP(rec, req.WithContext(t.Context())) // a context that can end: the lazy hook's case
		assert.Equal(t, http.StatusOK, rec.Code, "%+v", wait)
		assert.Equal(t, "ok\n", rec.Body.String())
	}
}
