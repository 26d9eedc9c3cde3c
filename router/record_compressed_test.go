package router

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/match"
)

// TestRecordCountsCompressedBytes: with the answer compressed, BytesOut is
// the bytes the client got, as nginx's $body_bytes_sent counts them after
// its gzip filter, and UpstreamBytes the backend's body as it came
// ($upstream_response_length); on both upstream paths and for an answer
// the router made itself.
func TestRecordCountsCompressedBytes(t *testing.T) {
	body := strings.Repeat("compressible ", 1000)
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(backend.Close)
	for _, tr := range proxyPaths() {
		t.Run(tr.name, func(t *testing.T) {
			rs := newRecords()
			r := newTestRouter(Options{Observer: rs.observe, Transport: tr.rt, Gzip: &Gzip{Level: 1, MinLength: 1, Types: []string{"text/plain"}}})
			t.Cleanup(r.CloseIdleConnections)
			r.Publish(table("gz", vhost("shop.example.com", nil, route(match.Prefix, "/", httpBackend("prod/api:80", backend.Listener.Addr().String())))))

			for _, target := range []string{"/", "/missing"} {
				req := httptest.NewRequest(http.MethodGet, target, nil)
				req.Host = "shop.example.com"
				if target == "/missing" {
					req.Host = "other.example.com" // the router's own 404
				}
				req.Header.Set("Accept-Encoding", "gzip")
				w := httptest.NewRecorder()
				r.ServeHTTP(w, req)
				require.Equal(t, "gzip", w.Header().Get("Content-Encoding"), target)
				rec := rs.raw[len(rs.raw)-1]
				assert.Equal(t, int64(w.Body.Len()), rec.BytesOut, "%s: the compressed bytes sent", target)
				if target == "/" {
					assert.Equal(t, int64(len(body)), rec.UpstreamBytes, "the backend's body as it came")
				} else {
					assert.Zero(t, rec.UpstreamBytes, "not proxied")
				}
			}
		})
	}
}
