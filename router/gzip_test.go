package router

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGzipWriter: what nginx's gzip filter compresses (status, type,
// Content-Length against the minimum, an encoding of its own), and that
// the stream decompresses to what was written, flushes included.
func TestGzipWriter(t *testing.T) {
	c := newGzipConfig(&Gzip{Level: 0, MinLength: 100, Types: []string{"application/json"}})
	for _, tc := range []struct {
		name   string
		status int
		header http.Header
		want   bool
	}{
		{"json", 200, http.Header{"Content-Type": {"application/json"}}, true},
		{"html always", 404, http.Header{"Content-Type": {"text/html; charset=utf-8"}}, true},
		{"forbidden", 403, http.Header{"Content-Type": {"text/html"}}, true},
		{"other status", 500, http.Header{"Content-Type": {"text/html"}}, false},
		{"other type", 200, http.Header{"Content-Type": {"image/png"}}, false},
		{"short", 200, http.Header{"Content-Type": {"application/json"}, "Content-Length": {"99"}}, false},
		{"long enough", 200, http.Header{"Content-Type": {"application/json"}, "Content-Length": {"100"}}, true},
		{"encoded", 200, http.Header{"Content-Type": {"application/json"}, "Content-Encoding": {"br"}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			w := &gzipWriter{ResponseWriter: rec, c: c}
			for k, v := range tc.header {
				w.Header()[k] = v
			}
			w.Header().Set("Etag", `"v1"`)
			w.WriteHeader(tc.status)
			_, err := w.Write([]byte("hello, "))
			require.NoError(t, err)
			require.NoError(t, http.NewResponseController(w).Flush())
			_, err = w.Write([]byte("world"))
			require.NoError(t, err)
			w.finish()
			res := rec.Result()
			body, _ := io.ReadAll(res.Body)
			if !tc.want {
				assert.Empty(t, res.Header.Get("Vary"))
				assert.Equal(t, "hello, world", string(body))
				return
			}
			assert.Equal(t, "gzip", res.Header.Get("Content-Encoding"))
			assert.Equal(t, "Accept-Encoding", res.Header.Get("Vary"))
			assert.Empty(t, res.Header.Get("Content-Length"))
			assert.Equal(t, `W/"v1"`, res.Header.Get("Etag"))
			zr, err := gzip.NewReader(bytes.NewReader(body))
			require.NoError(t, err)
			plain, err := io.ReadAll(zr)
			require.NoError(t, err)
			assert.Equal(t, "hello, world", string(plain))
		})
	}
}

// TestAcceptsGzip: the first Accept-Encoding line as nginx's
// ngx_http_gzip_accept_encoding reads it: the first "gzip" that starts an
// entry decides, and a q that is not a number from 0.001 to 1 with at most
// three decimals declines.
func TestAcceptsGzip(t *testing.T) {
	for v, want := range map[string]bool{
		"gzip": true, "deflate, GZIP;q=0.5": true, "br": false, "gzip;q=0": false, "gzip; q=0.000": false, "": false,
		"gzip,deflate": true, "gzip ;q=1.0": true, "gzip;Q=0.001": true, "deflate,gzip": true, "x-gzip, gzip": true,
		"gzip;Q=0": false, "gzip;q=abc": false, "gzip;q=": false, "gzip;q=1.5": false, "gzip;q=0.0001": false,
		"gzip;level=1": false, "gzipx": false, "gzip;q=0, gzip": false, "x-gzip": false, "gzip;q=0.": false,
		"gzip;q=1 ": true, "gzip;q=0.5,br": true,
	} {
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		req.Header.Set("Accept-Encoding", v)
		assert.Equal(t, want, acceptsGzip(req), v)
	}
	req := httptest.NewRequest(http.MethodGet, "/", nil)
	req.Header.Set("Accept-Encoding", "gzip")
	req.ProtoMinor = 0
	assert.False(t, acceptsGzip(req), "gzip_http_version 1.1")
	req = httptest.NewRequest(http.MethodGet, "/", nil)
	req.Header["Accept-Encoding"] = []string{"deflate", "gzip"}
	assert.False(t, acceptsGzip(req), "nginx reads the first Accept-Encoding line")
}

// TestAcceptsBrotli: ngx_brotli's check_accept_encoding: a "br" entry is
// declined only by a q of zero written "q=0", "q=0.", "q=0.0" ... in lower
// case; any other parameter accepts. It has no HTTP version test.
func TestAcceptsBrotli(t *testing.T) {
	for v, want := range map[string]bool{
		"br": true, "gzip, br": true, "BR": true, "br;q=0": false, "br; q = 0.000": false, "br;q=0.": false,
		"br;q=0.5": true, "br;q=0.001": true, "br;Q=0": true, "br;q=abc": true, "br;level=1": true,
		"brotli": false, "xbr, br": true, "br;q=0, br": false, "gzip": false, "": false,
	} {
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		req.Header.Set("Accept-Encoding", v)
		assert.Equal(t, want, acceptsBrotli(req), v)
	}
	req := httptest.NewRequest(http.MethodGet, "/", nil)
	req.Header.Set("Accept-Encoding", "br")
	req.ProtoMinor = 0
	assert.True(t, acceptsBrotli(req), "no HTTP version test")
	req = httptest.NewRequest(http.MethodGet, "/", nil)
	req.Header["Accept-Encoding"] = []string{"gzip", "br"}
	assert.False(t, acceptsBrotli(req), "nginx reads the first Accept-Encoding line")
}

// TestGzipTypeAsNginxReadsIt: nginx matches gzip_types, lower-cased,
// against the Content-Type up to its first ';', whatever the parameters
// after it, and "*" against every answer, one without a Content-Type
// included (ngx_http_test_content_type).
func TestGzipTypeAsNginxReadsIt(t *testing.T) {
	json := newGzipConfig(&Gzip{Types: []string{"application/json"}})
	any := newGzipConfig(&Gzip{Types: []string{"*"}})
	upper := newGzipConfig(&Gzip{Types: []string{"Application/JSON"}})
	for _, tc := range []struct {
		name string
		c    *gzipConfig
		ct   []string
		want bool
	}{
		{"malformed parameter", json, []string{"application/json; charset=utf-8; v"}, true},
		{"empty parameters", json, []string{"text/html;;"}, true},
		{"unterminated quote", json, []string{`application/json; charset="utf-8`}, true},
		{"other type, malformed", json, []string{"image/png; x"}, false},
		{"star, no type", any, nil, true},
		{"star, malformed", any, []string{"image/png;;"}, true},
		{"no type", json, nil, false},
		{"types compare without case", upper, []string{"application/json"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{}
			if tc.ct != nil {
				h["Content-Type"] = tc.ct
			}
			assert.Equal(t, tc.want, tc.c.compress(http.StatusOK, h))
		})
	}
}

// TestGzipWeakensETag: nginx's ngx_http_weak_etag on a compressed answer
// keeps a weak ETag, prefixes W/ to a strong one, and drops one that is
// neither, as it cannot name the compressed body.
func TestGzipWeakensETag(t *testing.T) {
	c := newGzipConfig(&Gzip{Types: []string{"text/plain"}})
	for etag, want := range map[string][]string{
		`"v1"`:   {`W/"v1"`},
		`W/"v1"`: {`W/"v1"`},
		`v1`:     nil,
		`W/`:     nil,
	} {
		rec := httptest.NewRecorder()
		w := &gzipWriter{ResponseWriter: rec, c: c}
		w.Header().Set("Content-Type", "text/plain")
		w.Header().Set("Etag", etag)
		w.WriteHeader(http.StatusOK)
		w.finish()
		assert.Equal(t, "gzip", rec.Result().Header.Get("Content-Encoding"))
		assert.Equal(t, want, rec.Result().Header.Values("Etag"), etag)
	}
}

// TestGzipVary: with use-gzip, ingress-nginx's gzip_vary on sends "Vary:
// Accept-Encoding" on every answer gzip could compress (status, type,
// length), whether or not this client accepts gzip, so a shared cache
// never hands the identity answer to a client that asked for gzip, or
// the reverse. brotli's eligible answers set it too, but only gzip_vary
// turns it on.
func TestGzipVary(t *testing.T) {
	gz := &Gzip{Level: 1, MinLength: 1, Types: []string{"text/plain"}}
	br := &Brotli{Level: 5, MinLength: 1, Types: []string{"text/plain"}, NewEncoder: func(int) Encoder {
		zw, _ := gzip.NewWriterLevel(io.Discard, 1)
		return zw
	}}
	get := func(r *Router, accept string) *http.Response {
		t.Helper()
		h := http.Header{}
		if accept != "" {
			h.Set("Accept-Encoding", accept)
		}
		res := serve(r, http.MethodGet, "shop.example.com", "/x", h)
		require.Equal(t, http.StatusNotFound, res.StatusCode)
		return res
	}
	r := newTestRouter(Options{Gzip: gz})
	r.Publish(table("vary", vhost("shop.example.com", nil)))
	for _, accept := range []string{"", "identity", "gzip;q=0", "gzip"} {
		assert.Equal(t, []string{"Accept-Encoding"}, get(r, accept).Header.Values("Vary"), accept)
	}
	r.SetConfigMapOptions(Options{Gzip: &Gzip{Level: 1, MinLength: 1 << 20}})
	assert.Empty(t, get(r, "").Header.Values("Vary"), "an answer below gzip-min-length")

	r.SetConfigMapOptions(Options{Gzip: &Gzip{Level: 1, MinLength: 1 << 20}, Brotli: br})
	assert.Equal(t, []string{"Accept-Encoding"}, get(r, "").Header.Values("Vary"), "brotli could compress it")

	r.SetConfigMapOptions(Options{Brotli: br})
	assert.Empty(t, get(r, "").Header.Values("Vary"), "without use-gzip, no gzip_vary")
	assert.Equal(t, []string{"Accept-Encoding"}, get(r, "br").Header.Values("Vary"), "a compressed answer")
}
