package router

import (
	"io"
	"net/http"
)

// Encoder is a compressing writer the router reuses from answer to answer:
// Reset starts a new stream into w, Flush sends what is compressed so
// far, Close ends the stream. *gzip.Writer is one, and so is the writer
// of github.com/andybalholm/brotli.
type Encoder interface {
	io.Writer
	Flush() error
	Close() error
	Reset(w io.Writer)
}

// Brotli compresses answers in brotli ("br") as ingress-nginx's
// enable-brotli does (nginx.tmpl: brotli on, brotli_comp_level,
// brotli_min_length, brotli_types; the ngx_brotli filter): the answers
// Gzip would compress, to a client that accepts br, with Level,
// MinLength and Types of its own; preferred over gzip where both apply,
// as ngx_brotli's filter runs first. The library has no brotli encoder:
// NewEncoder makes one (the example controller's uses
// github.com/andybalholm/brotli); without it nothing is compressed in br.
type Brotli struct {
	// Level is the compression level, 0 to 11.
	Level int
	// MinLength: an answer whose Content-Length is below it is sent as is.
	MinLength int64
	// Types are the media types compressed besides text/html; "*" is any.
	Types []string
	// NewEncoder returns an encoder at level writing to io.Discard until
	// Reset.
	NewEncoder func(level int) Encoder
}

// newBrotliConfig is Options.Brotli prepared; nil without an encoder.
func newBrotliConfig(b *Brotli) *gzipConfig {
	if b == nil || b.NewEncoder == nil {
		return nil
	}
	c := &gzipConfig{Gzip: Gzip{Level: min(max(b.Level, 0), 11), MinLength: b.MinLength, Types: lowerTypes(b.Types)}, coding: "br"}
	c.pool.New = func() any { return b.NewEncoder(c.Level) }
	return c
}

// decorCompress compresses the answer with gzip or brotli (use-gzip,
// enable-brotli); it sets Content-Encoding and Vary as the answer is
// written, not before.
var decorCompress = decoration{name: "compression"}

// compressing wraps w when req accepts a coding live compresses in; the
// caller calls finish on the writer returned, when it is not w.
func compressing(w http.ResponseWriter, req *http.Request, live *liveSettings) (http.ResponseWriter, *gzipWriter) {
	if live.gzip == nil && live.brotli == nil {
		return w, nil
	}
	var gz, br *gzipConfig
	if live.gzip != nil && acceptsGzip(req) {
		gz = live.gzip
	}
	if live.brotli != nil && acceptsBrotli(req) {
		br = live.brotli
	}
	if gz == nil && br == nil && live.gzip == nil {
		return w, nil
	}
	gw := &gzipWriter{ResponseWriter: w, c: gz, br: br}
	if live.gzip != nil {
		gw.varyGz, gw.varyBr = live.gzip, live.brotli
	}
	return gw, gw
}

// acceptsBrotli reports whether req takes a br answer, as ngx_brotli's
// check_accept_encoding reads the first Accept-Encoding line: the first
// "br", in any case, between ' ' or ',' and ' ', ',' or ';', is declined
// only by a zero q written in lower case ("q=0", "q = 0.00"); any other
// parameter accepts. Unlike gzip it has no HTTP version test.
func acceptsBrotli(req *http.Request) bool {
	ae := req.Header["Accept-Encoding"]
	if len(ae) == 0 {
		return false
	}
	s := ae[0]
	// at reads past the end as nginx reads the NUL after a header value.
	at := func(i int) byte {
		if i < len(s) {
			return s[i]
		}
		return 0
	}
	p := 0
	for {
		i := indexFoldASCII(s[p:], "br")
		if i < 0 {
			return false
		}
		i += p
		p = i + len("br")
		if (i == 0 || s[i-1] == ' ' || s[i-1] == ',') && (p == len(s) || s[p] == ' ' || s[p] == ',' || s[p] == ';') {
			break
		}
	}
	skip := func() {
		for at(p) == ' ' {
			p++
		}
	}
	for _, want := range []byte(";q=") {
		skip()
		if at(p) != want {
			return true
		}
		p++
	}
	skip()
	if at(p) != '0' {
		return true
	}
	if at(p+1) != '.' {
		return false
	}
	p += 2
	for range 3 {
		switch c := at(p); {
		case c < '0' || c > '9':
			return false
		case c > '0':
			return true
		}
		p++
	}
	return false
}
