package router

import (
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A compressed answer does not keep the backend's Accept-Ranges: bytes,
// as nginx's gzip filter clears it: the ranges a client would ask for
// are of the identity body, which the backend answers with 206
// uncompressed bytes.
func TestGzipClearsAcceptRanges(t *testing.T) {
	page := strings.Repeat("<p>hello</p>", 200)
	be := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("Accept-Ranges", "bytes")
		w.Header().Set("Etag", `"v1"`)
		http.ServeContent(w, r, "", time.Unix(1700000000, 0), strings.NewReader(page))
	}))
	t.Cleanup(be.Close)
	r := newTestRouter(Options{Gzip: &Gzip{Level: 1, MinLength: 1}})
	r.Publish(table("gz", vhost("shop.example.com", httpBackend("b", be.Listener.Addr().String()))))
	res := serve(r, http.MethodGet, "shop.example.com", "/x", http.Header{"Accept-Encoding": {"gzip"}})
	require.Equal(t, 200, res.StatusCode)
	require.Equal(t, "gzip", res.Header.Get("Content-Encoding"))
	zr, err := gzip.NewReader(res.Body)
	require.NoError(t, err)
	b, _ := io.ReadAll(zr)
	require.Equal(t, page, string(b))
	assert.Empty(t, res.Header.Get("Accept-Ranges"), "a gzip-encoded answer advertises byte ranges of a representation the backend does not serve")
}
