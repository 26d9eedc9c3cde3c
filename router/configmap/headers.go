package configmap

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
)

// Headers are the header keys (SPEC §1), with ingress-nginx v1.15's
// defaults (config.go NewDefault) and nginx.tmpl's use of them.
type Headers struct {
	// Hide: hide-headers, comma-separated (template/configmap.go
	// splitAndTrimSpace), nginx.tmpl's proxy_hide_header lines: backend
	// response headers never passed to the client. Canonical names.
	Hide []string
	// LargeBufferNumber and LargeBufferSize: large-client-header-buffers
	// ("4 8k"), nginx's large_client_header_buffers: a request line longer
	// than one buffer is answered 414, a header field longer than one 400,
	// a head its lines do not pack into them 400. For the listeners
	// (router/h1.HeaderBuffers).
	LargeBufferNumber, LargeBufferSize int
	// FirstBufferSize: client-header-buffer-size ("1k"),
	// client_header_buffer_size, the buffer a head is read into before
	// any of the large ones. For the listeners.
	FirstBufferSize int
	// Underscores: enable-underscores-in-headers ("false"),
	// underscores_in_headers: request header names with '_' are passed on.
	Underscores bool
	// IgnoreInvalid: ignore-invalid-headers ("true"),
	// ignore_invalid_headers: request header names other than letters,
	// digits, '-' (and '_' with Underscores) are dropped.
	IgnoreInvalid bool
	// GenerateRequestID: generate-request-id ("true"), nginx.tmpl's map of
	// $req_id: without it a request that brings no X-Request-ID gets none.
	GenerateRequestID bool
	// UseHTTP2: use-http2 ("true"): "http2 on" on the HTTPS listener. For
	// the listeners.
	UseHTTP2 bool
	// HTTP2MaxConcurrentStreams: http2-max-concurrent-streams ("128"),
	// nginx's http2_max_concurrent_streams: the HTTP/2 servers'
	// SETTINGS_MAX_CONCURRENT_STREAMS, past which a client's streams are
	// refused. For the listeners.
	HTTP2MaxConcurrentStreams int
	// OriginalURI: proxy-add-original-uri-header ("false"): X-Original-URI
	// with the request's URI goes to the backend.
	OriginalURI bool
}

// DefaultHeaders are ingress-nginx's defaults of the header keys.
func DefaultHeaders() Headers {
	return Headers{LargeBufferNumber: 4, LargeBufferSize: 8 << 10, FirstBufferSize: 1 << 10, IgnoreInvalid: true, GenerateRequestID: true, UseHTTP2: true,
		HTTP2MaxConcurrentStreams: 128}
}

func init() {
	boolKey := func(field func(h *Headers) *bool) Key {
		return Key{Live: true, read: func(p *parse, v string) (err error) { *field(&p.s.Headers), err = ParseBool(v); return err }}
	}
	Keys["hide-headers"] = Key{Live: true, read: func(p *parse, v string) error {
		var names []string
		for f := range strings.SplitSeq(v, ",") {
			f = strings.TrimSpace(f)
			if f == "" {
				continue
			}
			if !headerName(f) {
				return errors.New("want header names separated by commas")
			}
			names = append(names, http.CanonicalHeaderKey(f))
		}
		p.s.Headers.Hide = names
		return nil
	}}
	Keys["large-client-header-buffers"] = Key{read: func(p *parse, v string) error {
		n, size, err := ParseHeaderBuffers(v)
		p.s.Headers.LargeBufferNumber, p.s.Headers.LargeBufferSize = n, size
		return err
	}}
	Keys["client-header-buffer-size"] = Key{read: func(p *parse, v string) error {
		n, err := parseNginxSize(strings.TrimSpace(v))
		if err != nil || n < 1 || n > 1<<20 {
			return errors.New("want a size from 1 to 1m, such as 1k")
		}
		p.s.Headers.FirstBufferSize = int(n)
		return nil
	}}
	Keys["enable-underscores-in-headers"] = boolKey(func(h *Headers) *bool { return &h.Underscores })
	Keys["ignore-invalid-headers"] = Key{Live: true, read: func(p *parse, v string) (err error) {
		if p.s.Headers.IgnoreInvalid, err = ParseBool(v); err == nil && !p.s.Headers.IgnoreInvalid {
			// nginx passes such a field on; Go's header parsers (and
			// the backends' transports) take token names only.
			p.note("names nginx calls invalid but made of token bytes (with '.', '~', '!', ...) are passed on; " +
				"a name with a byte no HTTP token has ('@', '/', '(', a byte past 0x7f, ...) is still dropped by " +
				"ramjet's HTTP/1 server, and refused with 400 over HTTP/2 and by net/http's server")
		}
		return err
	}}
	Keys["generate-request-id"] = boolKey(func(h *Headers) *bool { return &h.GenerateRequestID })
	Keys["proxy-add-original-uri-header"] = boolKey(func(h *Headers) *bool { return &h.OriginalURI })
	Keys["use-http2"] = Key{read: func(p *parse, v string) (err error) { p.s.Headers.UseHTTP2, err = ParseBool(v); return err }}
	Keys["http2-max-concurrent-streams"] = Key{read: func(p *parse, v string) error {
		n, err := strconv.ParseInt(v, 0, 32)
		if err != nil || n < 1 {
			return errors.New("want a number of streams, at least 1")
		}
		p.s.Headers.HTTP2MaxConcurrentStreams = int(n)
		return nil
	}}
}

// ParseHeaderBuffers reads large_client_header_buffers' "number size"
// ("4 8k"): nginx takes a number of at least one and a size of at least
// one connection buffer (1k here, client-header-buffer-size's default).
func ParseHeaderBuffers(v string) (number, size int, err error) {
	f := strings.Fields(v)
	bad := errors.New(`want "number size", such as "4 8k"`)
	if len(f) != 2 {
		return 0, 0, bad
	}
	n, err := strconv.Atoi(f[0])
	if err != nil || n < 1 || n > 1024 {
		return 0, 0, bad
	}
	s, err := parseNginxSize(f[1])
	if err != nil || s < 1<<10 || s > 1<<20 {
		return 0, 0, errors.New("want a buffer size from 1k to 1m")
	}
	return n, int(s), nil
}
