package router

import (
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"ramjet.dev/ramjet/match"
)

// rewrite turns the inbound request into the one sent to the chosen
// endpoint: the same request-target byte for byte, the same Host header,
// and the forwarded headers of SPEC §13. ReverseProxy has already removed
// hop-by-hop headers and the client's X-Forwarded-For/-Host/-Proto.
func rewrite(pr *httputil.ProxyRequest) {
	in, out := pr.In, pr.Out
	x := in.Context().Value(exchangeKey{}).(*exchange)

	u := out.URL
	u.Scheme = "http"
	if x.backend.Protocol == match.HTTPS || x.backend.Protocol == match.GRPCS {
		u.Scheme = "https"
	}
	u.Host = x.endpoint.Addr
	u.User = nil
	u.Fragment, u.RawFragment = "", ""
	// Opaque is written to the wire verbatim; Path and RawPath describe the
	// same target for RoundTrippers that read them. Opaque cannot start
	// with "//" (URL.RequestURI would turn it into a scheme-relative URL),
	// so such paths go through RawPath, which is kept whenever it is a
	// valid encoding of Path.
	p, err := url.PathUnescape(x.path)
	if err != nil {
		p = x.path
	}
	u.Path, u.RawPath = p, x.path
	if strings.HasPrefix(x.path, "//") {
		u.Opaque = ""
	} else {
		u.Opaque = x.path
	}
	// ReverseProxy drops query parameters it cannot parse; restore the
	// query exactly as sent.
	u.RawQuery = x.query
	u.ForceQuery = x.hasQuery && x.query == ""

	setForwarded(in, out.Header, x.proto, x.forwarded[:0])
}

// setForwarded sets X-Forwarded-For (appended), -Host, -Port, -Proto (the
// scheme the client used, see Router.clientProto), X-Real-IP, and
// X-Request-ID when the client sent none. The values share
// the backing array of v (capacity 6), each capped so appending to one
// cannot touch another.
func setForwarded(in *http.Request, h http.Header, proto string, v []string) {
	set := func(key, value string) {
		v = append(v, value)
		h[key] = v[len(v)-1 : len(v) : len(v)]
	}
	clientIP, _, err := net.SplitHostPort(in.RemoteAddr)
	if err != nil {
		clientIP = in.RemoteAddr
	}
	if prior := in.Header["X-Forwarded-For"]; len(prior) > 0 {
		if clientIP != "" {
			set("X-Forwarded-For", strings.Join(prior, ", ")+", "+clientIP)
		} else {
			set("X-Forwarded-For", strings.Join(prior, ", "))
		}
	} else if clientIP != "" {
		set("X-Forwarded-For", clientIP)
	}
	if clientIP != "" {
		set("X-Real-Ip", clientIP)
	}
	if in.Host != "" {
		set("X-Forwarded-Host", in.Host)
	}
	set("X-Forwarded-Port", serverPort(in))
	set("X-Forwarded-Proto", proto)
	// Some frameworks also read the scheme from these; X-Forwarded-Proto
	// carries it, and a client's own values must not reach a backend that
	// trusts them. Removing them costs less than sending two more headers.
	delete(h, "X-Forwarded-Scheme")
	delete(h, "X-Scheme")
	if id := h["X-Request-Id"]; len(id) == 0 || id[0] == "" {
		set("X-Request-Id", newRequestID())
	}
}

// serverPort is the port the client connected to: the listener's, as
// nginx's $server_port; the Host header's or the scheme's default when the
// handler runs without a listener.
func serverPort(req *http.Request) string {
	if a, ok := req.Context().Value(http.LocalAddrContextKey).(*net.TCPAddr); ok {
		return strconv.Itoa(a.Port)
	}
	// The Host header's port, if any, without SplitHostPort's error
	// allocation for the common portless Host.
	if i := strings.LastIndexByte(req.Host, ':'); i >= 0 && i+1 < len(req.Host) && !strings.Contains(req.Host[i:], "]") {
		return req.Host[i+1:]
	}
	if req.TLS != nil {
		return "443"
	}
	return "80"
}

// upstream carries an outgoing request with the transport its backend's
// protocol needs, and retries it on another endpoint when the connection
// could not be opened (see retry.go).
type upstream struct {
	h1  http.RoundTripper // HTTP and HTTPS backends
	h2c http.RoundTripper // GRPC: cleartext HTTP/2 with prior knowledge
	h2  http.RoundTripper // GRPCS: HTTP/2 over TLS
}

func (u *upstream) RoundTrip(req *http.Request) (*http.Response, error) {
	x, _ := req.Context().Value(exchangeKey{}).(*exchange)
	if x == nil {
		return u.h1.RoundTrip(req)
	}
	rt := u.h1
	switch x.backend.Protocol {
	case match.GRPC:
		rt = u.h2c
	case match.GRPCS:
		rt = u.h2
	}
	return x.roundTrip(rt, req)
}

// modifyResponse watches the backend's response body so that a body the
// backend breaks off is reported. A 101's body is the tunnel's connection
// and is left as it is: ReverseProxy needs it to be writable.
func modifyResponse(res *http.Response) error {
	if res.StatusCode == http.StatusSwitchingProtocols || res.Body == nil || res.Body == http.NoBody {
		return nil
	}
	if x, _ := res.Request.Context().Value(exchangeKey{}).(*exchange); x != nil {
		x.body = watchedBody{ReadCloser: res.Body, x: x}
		res.Body = &x.body
	}
	return nil
}

// watchedBody records the first error other than io.EOF that reading the
// backend's response body returns.
type watchedBody struct {
	io.ReadCloser
	x *exchange
}

func (b *watchedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && err != io.EOF && b.x.readErr == nil {
		b.x.readErr = err
	}
	return n, err
}

// proxyError answers a request whose exchange with the backend failed
// before a response arrived.
func (r *Router) proxyError(_ http.ResponseWriter, req *http.Request, err error) {
	r.exchangeFailed(req.Context().Value(exchangeKey{}).(*exchange), req, err)
}

// exchangeFailed answers through the exchange itself (it is the
// ResponseWriter ReverseProxy was given).
func (r *Router) exchangeFailed(x *exchange, req *http.Request, err error) {
	if req.Context().Err() != nil {
		// The client went away; nobody is left to read an answer.
		x.status, x.reason = 499, ReasonClientClosed
		r.logger.Debug("client closed the request before the backend answered",
			"backend", x.backend.ID, "endpoint", x.endpoint.Addr)
		return
	}
	a := ansUpstreamError
	switch {
	case unreachable(err):
		a = ansUnreachable
	case timedOut(err):
		a = ansUpstreamTimeout
	}
	x.reason = a.reason
	r.logger.Warn("backend request failed",
		"backend", x.backend.ID, "endpoint", x.endpoint.Addr, "reason", a.reason, "error", err)
	if x.status != 0 {
		return // a 101 or other answer is already on its way
	}
	a.write(x, x.grpc)
}

// unreachable reports a failure to open the connection (dial or TLS
// handshake): nothing of the request reached the backend.
func unreachable(err error) bool {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	var rh tls.RecordHeaderError
	var alert tls.AlertError
	var verify *tls.CertificateVerificationError
	return errors.As(err, &rh) || errors.As(err, &alert) || errors.As(err, &verify)
}

func timedOut(err error) bool {
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout()
}

// bufferPool recycles ReverseProxy's copy buffers.
type bufferPool struct{}

const copyBufferSize = 32 << 10

var copyBuffers = sync.Pool{New: func() any { return new([copyBufferSize]byte) }}

func (bufferPool) Get() []byte { return copyBuffers.Get().(*[copyBufferSize]byte)[:] }

func (bufferPool) Put(b []byte) {
	if len(b) == copyBufferSize {
		copyBuffers.Put((*[copyBufferSize]byte)(b))
	}
}

// Request IDs are 16 random bytes in hex. Random bytes are read from
// crypto/rand in blocks and handed out 16 at a time, each exactly once.
type idBlock struct {
	buf [1024]byte
	off int
}

var idBlocks = sync.Pool{New: func() any { return &idBlock{off: len(idBlock{}.buf)} }}

func newRequestID() string {
	var out [32]byte
	return string(appendRequestID(out[:0]))
}

// appendRequestID appends a new request ID to dst.
func appendRequestID(dst []byte) []byte {
	b := idBlocks.Get().(*idBlock)
	if b.off+16 > len(b.buf) {
		_, _ = rand.Read(b.buf[:]) // never fails (crypto/rand crashes the program instead)
		b.off = 0
	}
	dst = hex.AppendEncode(dst, b.buf[b.off:b.off+16])
	b.off += 16
	idBlocks.Put(b)
	return dst
}
