package router

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBrotli: with Brotli and Gzip, a client accepting br gets br (the
// stand-in encoder here writes gzip, so the body can be checked), one
// accepting gzip alone gets gzip, and an answer below brotli's minimum
// length but not gzip's falls back to gzip, as nginx's gzip filter runs
// after ngx_brotli's.
func TestBrotli(t *testing.T) {
	var levels []int
	r := newTestRouter(Options{
		Gzip: &Gzip{Level: 1, MinLength: 1, Types: []string{"text/plain"}},
		Brotli: &Brotli{Level: 5, MinLength: 1, Types: []string{"text/plain"}, NewEncoder: func(level int) Encoder {
			levels = append(levels, level)
			zw, _ := gzip.NewWriterLevel(io.Discard, 1)
			return zw
		}},
	})
	r.Publish(table("br", vhost("shop.example.com", nil)))
	get := func(accept string) *http.Response {
		t.Helper()
		return serve(r, http.MethodGet, "shop.example.com", "/x", http.Header{"Accept-Encoding": {accept}})
	}
	body := func(res *http.Response) string {
		t.Helper()
		zr, err := gzip.NewReader(res.Body)
		require.NoError(t, err)
		b, err := io.ReadAll(zr)
		require.NoError(t, err)
		return string(b)
	}
	res := get("gzip, deflate, br")
	require.Equal(t, http.StatusNotFound, res.StatusCode)
	assert.Equal(t, "br", res.Header.Get("Content-Encoding"))
	assert.Equal(t, "Accept-Encoding", res.Header.Get("Vary"))
	assert.Contains(t, body(res), "404")
	assert.Equal(t, []int{5}, levels)

	res = get("gzip, br;q=0")
	assert.Equal(t, "gzip", res.Header.Get("Content-Encoding"))
	res = get("identity")
	assert.Empty(t, res.Header.Get("Content-Encoding"))

	// brotli's minimum is above the 404 page's length, gzip's is not.
	r.SetConfigMapOptions(Options{
		Gzip:   &Gzip{Level: 1, MinLength: 1, Types: []string{"text/plain"}},
		Brotli: &Brotli{Level: 5, MinLength: 1 << 20, NewEncoder: func(int) Encoder { return nil }},
	})
	res = get("br, gzip")
	assert.Equal(t, "gzip", res.Header.Get("Content-Encoding"), "the 404 page has a Content-Length below brotli's minimum")
	var buf bytes.Buffer
	_, _ = io.Copy(&buf, res.Body)
	assert.NotZero(t, buf.Len())

	// Without an encoder there is no br.
	r.SetConfigMapOptions(Options{Brotli: &Brotli{MinLength: 1}})
	res = get("br")
	assert.Empty(t, res.Header.Get("Content-Encoding"))
}
