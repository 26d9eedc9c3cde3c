package router

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"ramjet.dev/ramjet/match"
)

// TestPolicyReadTimeoutWrappedGRPC: through a wrapped DefaultTransport, a
// gRPC location's proxy-read-timeout bounds the wait for the call's
// response head, as it does for HTTP backends: the router starts it when
// the transport reports the request written (httptrace's WroteRequest),
// which the project's HTTP/2 client reports as net/http's does. The
// transport's own bound is Options.ReadTimeout, a minute here.
func TestPolicyReadTimeoutWrappedGRPC(t *testing.T) {
	release := make(chan struct{})
	slow := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
		w.Header().Set("Content-Type", "application/grpc")
		w.Header().Set("Grpc-Status", "0")
	}))
	slow.Config.Protocols = new(http.Protocols)
	slow.Config.Protocols.SetUnencryptedHTTP2(true)
	slow.Start()
	t.Cleanup(slow.Close)
	t.Cleanup(func() { close(release) })

	o := Options{ReadTimeout: time.Minute, Logger: quietLogger()}
	o.Transport = &tracing{next: DefaultTransport(o)}
	r := New(o)
	t.Cleanup(r.CloseIdleConnections)
	r.Publish(table("t", vhost("", nil,
		policyRoute("/pkg.Svc", backend("prod/grpc:50051", match.GRPC, match.Serving, slow.Listener.Addr().String()),
			&match.Policy{ReadTimeout: 300 * time.Millisecond}))))

	for _, withBody := range []bool{false, true} {
		var req *http.Request
		if withBody {
			req = httptest.NewRequest(http.MethodPost, "/pkg.Svc/Get", strings.NewReader("\x00\x00\x00\x00\x00"))
		} else {
			req = httptest.NewRequest(http.MethodPost, "/pkg.Svc/Get", http.NoBody)
		}
		req.Host = "a.example.com"
		req.Header.Set("Content-Type", "application/grpc")
		w := httptest.NewRecorder()
		start := time.Now()
		r.ServeHTTP(w, req)
		assert.Less(t, time.Since(start), 5*time.Second, "with a body: %v: the location's read timeout, not the transport's minute", withBody)
		assert.Equal(t, http.StatusGatewayTimeout, w.Code, "with a body: %v", withBody)
	}
}
