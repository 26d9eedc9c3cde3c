package router

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/match"
)

// tracing is what an embedder wraps the default transport with: it sees
// every request and the backend the router chose for it.
type tracing struct {
	next http.RoundTripper
	mu   sync.Mutex
	seen []string // "backend proto"
}

func (t *tracing) RoundTrip(req *http.Request) (*http.Response, error) {
	id, _, _ := EndpointFromContext(req.Context())
	res, err := t.next.RoundTrip(req)
	t.mu.Lock()
	defer t.mu.Unlock()
	if err != nil {
		t.seen = append(t.seen, id+" error")
	} else {
		t.seen = append(t.seen, id+" "+res.Proto)
	}
	return res, err
}

// TestWrappedDefaultTransport: wrapping DefaultTransport keeps h2c for
// gRPC backends, HTTP/1.1 for HTTP ones and the read timeout's 504.
func TestWrappedDefaultTransport(t *testing.T) {
	_, web := echoBackend(t, "web")
	grpcBackend := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/grpc")
		w.Header().Set("Trailer", "Grpc-Status")
		_, _ = w.Write([]byte{0, 0, 0, 0, 0})
		w.Header().Set("Grpc-Status", "0")
	}))
	grpcBackend.Config.Protocols = new(http.Protocols)
	grpcBackend.Config.Protocols.SetUnencryptedHTTP2(true)
	grpcBackend.Start()
	t.Cleanup(grpcBackend.Close)
	hang := make(chan struct{})
	stalled := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { <-hang }))
	t.Cleanup(stalled.Close)
	t.Cleanup(func() { close(hang) })

	// A listener that accepts and never speaks: a TLS handshake with it
	// lasts until the connect timeout.
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { silent.Close() })
	go func() {
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { c.Close() })
		}
	}()

	o := Options{ReadTimeout: 200 * time.Millisecond, ConnectTimeout: 300 * time.Millisecond, Logger: quietLogger()}
	tr := &tracing{next: DefaultTransport(o)}
	o.Transport = tr
	rs := newRecords()
	o.Observer = rs.observe
	r := New(o)
	t.Cleanup(r.CloseIdleConnections)
	r.Publish(table("t", vhost("", nil,
		route(match.Prefix, "/", httpBackend("prod/web:80", web)),
		route(match.Prefix, "/slow", httpBackend("prod/slow:80", stalled.Listener.Addr().String())),
		route(match.Prefix, "/silent", backend("prod/silent:443", match.HTTPS, match.Serving, silent.Addr().String())),
		route(match.Prefix, "/pkg.Svc", backend("prod/grpc:50051", match.GRPC, match.Serving, grpcBackend.Listener.Addr().String())))))

	res := serve(r, http.MethodGet, "a.example.com", "/page", nil)
	assert.Equal(t, "web\n", body(t, res))

	req := httptest.NewRequest(http.MethodPost, "/pkg.Svc/Get", strings.NewReader("\x00\x00\x00\x00\x00"))
	req.Host = "a.example.com"
	req.Header.Set("Content-Type", "application/grpc")
	w := httptest.NewRecorder()
	r.ServeHTTP(w, req)
	require.Equal(t, http.StatusOK, w.Code)
	assert.Equal(t, "0", w.Result().Trailer.Get("Grpc-Status"))

	start := time.Now()
	res = serve(r, http.MethodGet, "a.example.com", "/slow", nil)
	assert.Equal(t, http.StatusGatewayTimeout, res.StatusCode)
	assert.Less(t, time.Since(start), 5*time.Second, "Options.ReadTimeout, not the 60 s default")
	assert.Equal(t, ReasonUpstreamTimeout, rs.last(t).Reason)

	start = time.Now()
	res = serve(r, http.MethodGet, "a.example.com", "/silent", nil)
	// A handshake that times out is a timeout, as nginx's upstream SSL
	// handshake under proxy_connect_timeout is: 504.
	assert.Equal(t, http.StatusGatewayTimeout, res.StatusCode)
	assert.Less(t, time.Since(start), 3*time.Second, "Options.ConnectTimeout bounds the handshake, not the 5 s default")

	assert.Equal(t, []string{"prod/web:80 HTTP/1.1", "prod/grpc:50051 HTTP/2.0", "prod/slow:80 error", "prod/silent:443 error"}, tr.seen)
}
