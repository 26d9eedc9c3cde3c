package router

import (
	"compress/gzip"
	"io"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"

	"ramjet.dev/ramjet/match"
)

// Gzip compresses answers as ingress-nginx's use-gzip does (nginx.tmpl:
// gzip on, gzip_comp_level, gzip_min_length, gzip_types, gzip_proxied any,
// gzip_vary on, gzip_http_version 1.1): an answer to an HTTP/1.1 or later
// request that accepts gzip, with status 200, 403 or 404, no
// Content-Encoding of its own, a type among Types (text/html always) and
// no Content-Length below MinLength.
type Gzip struct {
	// Level is the compression level, 1 (fastest) to 9; 0: 1.
	Level int
	// MinLength: an answer whose Content-Length is below it is sent as is.
	MinLength int64
	// Types are the media types compressed besides text/html; "*" is any.
	Types []string
}

// gzipConfig is Options.Gzip (or Options.Brotli, brotli.go) prepared,
// with a pool of writers.
type gzipConfig struct {
	Gzip
	coding string // the Content-Encoding: "gzip", "br"
	pool   sync.Pool
}

func newGzipConfig(g *Gzip) *gzipConfig {
	if g == nil {
		return nil
	}
	c := &gzipConfig{Gzip: *g, coding: "gzip"}
	c.Types = lowerTypes(g.Types)
	c.Level = min(max(c.Level, 1), gzip.BestCompression)
	c.pool.New = func() any {
		zw, _ := gzip.NewWriterLevel(io.Discard, c.Level)
		return zw
	}
	return c
}

// lowerTypes is types lower-cased, as nginx's gzip_types and brotli_types
// hash them and the Content-Type is compared.
func lowerTypes(types []string) []string {
	out := make([]string, len(types))
	for i, t := range types {
		out[i] = strings.ToLower(t)
	}
	return out
}

// acceptsGzip reports whether req takes a gzip answer, as nginx's
// ngx_http_gzip_ok decides: HTTP/1.1 or later (gzip_http_version 1.1) and
// the first Accept-Encoding line accepting gzip.
func acceptsGzip(req *http.Request) bool {
	ae := req.Header["Accept-Encoding"]
	if !req.ProtoAtLeast(1, 1) || len(ae) == 0 {
		return false
	}
	return strings.HasPrefix(ae[0], "gzip,") || gzipAccepted(ae[0])
}

// gzipAccepted is ngx_http_gzip_accept_encoding: the first "gzip", in any
// case, that starts an entry decides; after it only spaces, then ',', the
// end, or ";q=" with a q that ngx_http_gzip_quantity reads as above zero.
// Anything else (another parameter, "q=abc") declines, where RFC 9110
// would ignore it: clients that send it get what nginx sent them.
func gzipAccepted(ae string) bool {
	p := 0
	for {
		i := indexFoldASCII(ae[p:], "gzip")
		if i < 0 {
			return false
		}
		i += p
		p = i + len("gzip")
		if i == 0 || ae[i-1] == ',' || ae[i-1] == ' ' {
			break
		}
	}
	for ; p < len(ae) && ae[p] == ' '; p++ {
	}
	switch {
	case p == len(ae) || ae[p] == ',':
		return true
	case ae[p] != ';':
		return false
	}
	for p++; p < len(ae) && ae[p] == ' '; p++ {
	}
	switch {
	case p == len(ae):
		return true
	case ae[p] != 'q' && ae[p] != 'Q':
		return false
	}
	p++
	if p+2 > len(ae) || ae[p] != '=' {
		return false
	}
	return gzipQuantity(ae[p+1:]) > 0
}

// gzipQuantity is ngx_http_gzip_quantity: 0 for a q of zero, for one that
// is not "0" or "1" with at most three decimals, and for one above 1 (it
// adds up the decimals: only zero or not means anything).
func gzipQuantity(s string) int {
	if s[0] != '0' && s[0] != '1' {
		return 0
	}
	q := int(s[0]-'0') * 100
	if len(s) == 1 || s[1] == ',' || s[1] == ' ' {
		return q
	}
	if s[1] != '.' {
		return 0
	}
	n := 0
	for _, c := range []byte(s[2:]) {
		if c == ',' || c == ' ' {
			break
		}
		if c < '0' || c > '9' {
			return 0
		}
		q += int(c - '0')
		n++
	}
	if q > 100 || n > 3 {
		return 0
	}
	return q
}

// indexFoldASCII is the index of the first sub in s in any ASCII case,
// as nginx's ngx_strcasestrn finds it; -1 when there is none.
func indexFoldASCII(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if match.EqualFoldASCII(s[i:i+len(sub)], sub) {
			return i
		}
	}
	return -1
}

// compress decides for an answer with status and headers h.
func (c *gzipConfig) compress(status int, h http.Header) bool {
	if status != http.StatusOK && status != http.StatusForbidden && status != http.StatusNotFound {
		return false
	}
	if len(h["Content-Encoding"]) > 0 {
		return false
	}
	if cl := h.Get("Content-Length"); cl != "" {
		if n, err := strconv.ParseInt(cl, 10, 64); err == nil && n < c.MinLength {
			return false
		}
	}
	if slices.Contains(c.Types, "*") {
		// nginx's "*" takes any answer, one without a Content-Type too.
		return true
	}
	// nginx compares only the type before the parameters, however
	// malformed they are: ParseMediaType returns it with that error.
	mt, _, err := mime.ParseMediaType(h.Get("Content-Type"))
	if err != nil && err != mime.ErrInvalidMediaParameter {
		return false
	}
	return mt == "text/html" || slices.Contains(c.Types, mt)
}

// gzipWriter compresses an answer when compress says so, deciding at its
// final status.
type gzipWriter struct {
	http.ResponseWriter
	c *gzipConfig
	// br is brotli's, tried first as ngx_brotli's filter runs before
	// gzip's (which then finds a Content-Encoding); nil: not accepted.
	br      *gzipConfig
	used    *gzipConfig // the one that compresses
	zw      Encoder
	decided bool

	// varyGz and varyBr are use-gzip's and enable-brotli's when use-gzip
	// is on: an answer either could compress carries Vary: Accept-Encoding
	// even when this client gets it as is, as gzip_vary on (which
	// ingress-nginx sets with use-gzip) sends it.
	varyGz, varyBr *gzipConfig
	// sent counts the compressed bytes written on (gzipSink), for the
	// record's BytesOut.
	sent int64
}

// gzipSink is the gzipWriter as the encoder's destination: it counts what
// the encoder sends, which is what the client gets.
type gzipSink gzipWriter

func (s *gzipSink) Write(p []byte) (int, error) {
	n, err := s.ResponseWriter.Write(p)
	s.sent += int64(n)
	return n, err
}

func (w *gzipWriter) WriteHeader(code int) {
	if w.decided || code < 200 {
		w.ResponseWriter.WriteHeader(code)
		return
	}
	w.decided = true
	h := w.Header()
	switch {
	case w.br != nil && w.br.compress(code, h):
		w.used = w.br
	case w.c != nil && w.c.compress(code, h):
		w.used = w.c
	}
	if w.used == nil && w.varyGz != nil && (w.varyGz.compress(code, h) || w.varyBr != nil && w.varyBr.compress(code, h)) {
		h.Add("Vary", "Accept-Encoding")
	}
	if w.used != nil {
		delete(h, "Content-Length")
		// Ranges would be of the identity body, which a Range request
		// gets uncompressed (206 is never compressed): nginx clears it.
		delete(h, "Accept-Ranges")
		h["Content-Encoding"] = []string{w.used.coding}
		h.Add("Vary", "Accept-Encoding")
		// nginx weakens a strong ETag it compresses, and drops one that is
		// neither weak nor quoted (ngx_http_weak_etag).
		switch et := h.Get("Etag"); {
		case et == "", len(et) > 2 && strings.HasPrefix(et, "W/"):
		case strings.HasPrefix(et, `"`):
			h.Set("Etag", "W/"+et)
		default:
			delete(h, "Etag")
		}
		w.zw = w.used.pool.Get().(Encoder)
		w.zw.Reset((*gzipSink)(w))
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *gzipWriter) Write(p []byte) (int, error) {
	if !w.decided {
		w.WriteHeader(http.StatusOK)
	}
	if w.zw != nil {
		return w.zw.Write(p)
	}
	return w.ResponseWriter.Write(p)
}

// FlushError sends what is compressed so far, so a streamed answer keeps
// streaming.
func (w *gzipWriter) FlushError() error {
	if w.zw != nil {
		if err := w.zw.Flush(); err != nil {
			return err
		}
	}
	return http.NewResponseController(w.ResponseWriter).Flush()
}

// Unwrap lets http.ResponseController reach the connection (Hijack).
func (w *gzipWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// finish ends the compressed stream and returns the writer to the pool.
func (w *gzipWriter) finish() {
	if w.zw != nil {
		_ = w.zw.Close()
		w.zw.Reset(io.Discard)
		w.used.pool.Put(w.zw)
		w.zw = nil
	}
}

// compressed is the gzipWriter compressing the answer written to w, found
// down the writers' Unwrap chain; nil when the answer is not compressed.
func compressed(w http.ResponseWriter) *gzipWriter {
	if gw, ok := underneath[*gzipWriter](w); ok && gw.used != nil {
		return gw
	}
	return nil
}
