package router

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"ramjet.dev/ramjet/match"
)

// Defaults of the client-facing limits (SPEC §13), nginx's and
// ingress-nginx's own.
const (
	// DefaultMaxBodySize is ingress-nginx's proxy-body-size, 1m.
	DefaultMaxBodySize = 1 << 20
	// DefaultClientBodyBufferSize is ingress-nginx's
	// client-body-buffer-size, 8k: the part of a request body held in
	// memory before the rest goes to a temporary file.
	DefaultClientBodyBufferSize = 8 << 10
	// DefaultClientBodyTimeout is nginx's client_body_timeout: the
	// longest wait between two reads of a request body.
	DefaultClientBodyTimeout = 60 * time.Second
	// DefaultIdleTimeout is nginx's keepalive_timeout.
	DefaultIdleTimeout = 75 * time.Second
	// DefaultClientHeaderTimeout is nginx's client_header_timeout.
	DefaultClientHeaderTimeout = 60 * time.Second
)

// Reasons for request bodies the router refuses.
const (
	ReasonBadBody       = "bad-body"       // 400: malformed body framing (a bad chunk)
	ReasonBodyTooLarge  = "body-too-large" // 413: over Options.MaxBodySize
	ReasonClientTimeout = "client-timeout" // 408: the body stalled past Options.ClientBodyTimeout
	ReasonBodyTempFile  = "body-temp-file" // 500: a request body could not be held in a temporary file
)

// stepBodySize refuses a declared Content-Length over the location's
// limit (checkBodySize) as soon as the location is known, as nginx checks
// client_max_body_size when it finds the location
// (ngx_http_core_find_config_phase): before the location's rewrite phase
// (its CORS preflight and headers, its redirects) and its access phase
// (rate limits, source ranges, authentication), so such a request spends
// no rate and asks no auth service.
var stepBodySize = step{name: "declared body size", kind: kindBodySize, reasons: []string{ReasonBodyTooLarge}}

// stepBody limits, times and buffers the request body (checkBody). A body
// streamed to the backend can fail the same ways while it is proxied. It
// answers ReasonBodyTooLarge too, for a body that grows past the limit;
// stepBodySize declares it.
var stepBody = step{name: "body", kind: kindBody, reasons: []string{ReasonBadBody, ReasonClientTimeout, ReasonBodyTempFile}}

var (
	ansBadBody       = answer{http.StatusBadRequest, ReasonBadBody, "400 Bad Request: malformed request body\n"}
	ansBodyTooLarge  = answer{http.StatusRequestEntityTooLarge, ReasonBodyTooLarge, "413 Content Too Large: the request body is over the limit\n"}
	ansClientGone    = answer{499, ReasonClientClosed, "499 Client Closed Request: the request body ended early\n"}
	ansClientTimeout = answer{http.StatusRequestTimeout, ReasonClientTimeout, "408 Request Timeout: the request body stalled\n"}
	ansBodyTempFile  = answer{http.StatusInternalServerError, ReasonBodyTempFile, "500 Internal Server Error: the request body could not be buffered\n"}
)

var errBodyTooLarge = errors.New("request body over the limit")

// checkBodySize answers 413 to a request whose declared Content-Length is
// over the body limit (the location's proxy-body-size, else the
// router's), before a byte of the body is read, and reports whether it
// answered.
func (r *Router) checkBodySize(s *requestState) bool {
	p := s.loc.Policy
	if s.d.at == &stepDenied {
		// nginx.tmpl sets client_max_body_size only in a location it
		// allows: a denied one has nginx's default, the router's limit.
		p = nil
	}
	maxBody, _, _ := r.bodyLimits(p)
	if maxBody <= 0 || s.req.ContentLength <= maxBody {
		return false
	}
	if s.d.backend == nil {
		s.d.backend = s.d.res.Backend
	}
	closeAfter(s.w, s.req)
	r.refuse(s, ansBodyTooLarge)
	return true
}

// checkBody applies the body limit to a body as it is read (a declared
// length over it was refused by checkBodySize) and the client body
// timeout, and reads the body whole before a backend is picked (see
// clientBody.buffer) unless the location streams it
// (proxy-request-buffering: "off"). A gRPC body is a stream
// that may never end while the call lasts, so it is only limited and
// timed, never buffered. It leaves the body's wrapper in s.body, which
// both upstream paths consult when the exchange fails (nil when there is
// no body), and reports whether it answered, refusing the body.
func (r *Router) checkBody(s *requestState) bool {
	if s.req.Body == nil || s.req.Body == http.NoBody {
		return false
	}
	return r.wrapBody(s)
}

// wrapBody is checkBody for a request with a body.
func (r *Router) wrapBody(s *requestState) bool {
	w, req := s.w, s.req
	maxBody, memory, stream := r.bodyLimits(s.d.pol)
	if stream && (s.loc.Response.MirrorsBody() || s.alt.MirrorsBody()) {
		// nginx's mirror_request_body reads the body whole first,
		// whatever proxy_request_buffering says.
		stream = false
	}
	if stream && s.req.ContentLength > 0 {
		// A body that came whole with the head is held as buffered, as
		// nginx clears request_body_no_buffering for a body it pre-read
		// whole: a failed try sends it again.
		if b, ok := req.Body.(interface{ Buffered() bool }); ok && b.Buffered() {
			stream = false
		}
	}
	// A 100-continue is answered here, by the server as the body is first
	// read, whether it is buffered or streams: the backend is never asked
	// (nginx clears Expect, ngx_http_proxy_headers), so the pool's client
	// must not wait for its 100 either.
	delete(req.Header, "Expect")
	cb := &clientBody{r: req.Body, timeout: r.bodyTimeout, limit: maxBody}
	if r.bodyTimeout > 0 {
		cb.rc = http.NewResponseController(w)
		cb.timed = req.ProtoMajor == 2
	}
	req.Body = cb
	if s.grpc || stream {
		// The body is read on as the response goes out (a backend may
		// answer before it has it all): the server must leave it to its
		// reader, not drain it as the response begins, which would take
		// bytes from under the body's sender and end what it forwards
		// short (net/http's rule for a handler that did not read it).
		rc := cb.rc
		if rc == nil {
			rc = http.NewResponseController(w)
		}
		_ = rc.EnableFullDuplex()
	}
	if !s.grpc && !stream {
		if a, failed := cb.buffer(req, memory, r.bodyTempDir); failed {
			// The rest of the body is unread: the connection cannot carry
			// another request.
			closeAfter(w, req)
			r.refuse(s, a)
			return true
		}
	}
	s.body = cb
	return false
}

// clientBody wraps the client's request body. It enforces the size limit
// and the wait between reads, and it records its own failures, so that a
// client's bad or stalled body is answered as the client's (400, 408, 413)
// rather than as a backend failure: a transport sees only that writing
// the request failed.
type clientBody struct {
	r io.ReadCloser
	// rc sets the read deadlines; nil when there are none, and from the
	// moment the handler returns (see detach), under mu.
	mu      sync.Mutex
	rc      *http.ResponseController
	timeout time.Duration
	limit   int64 // 0: none
	// n counts the bytes read. Only one goroutine reads at a time, but
	// an HTTP/2 sender may still be reading when the handler logs it.
	n atomic.Int64
	// err is the first error other than io.EOF. It is written by whoever
	// reads the body, which may be a sender goroutine still running when
	// the handler asks (see answer).
	err  atomic.Pointer[error]
	done bool // io.EOF seen
	// timed: the wait between reads is kept by timer, which ends the
	// stream's body through rc only when it fires (HTTP/2). An HTTP/2
	// read deadline is a message to the connection's serve loop and a
	// timer of its own: moving it before every read cost three such
	// messages per gRPC call. Under mu.
	timed bool
	timer *time.Timer
	// spill is the temporary file holding the body, nil when none (see
	// buffer); closed as the request ends.
	spill *spillBody
	// whole is the body buffer read, in memory or spill, nil when the
	// body is streamed: a Gateway API retry sends it again (anew).
	whole io.ReadCloser
	// tees are the mirrored copies of a gRPC call, fed what is read
	// (grpcTee); set before the first read.
	tees []*grpcTee
}

// failure is the first error other than io.EOF; nil if none (yet).
func (b *clientBody) failure() error {
	if p := b.err.Load(); p != nil {
		return *p
	}
	return nil
}

func (b *clientBody) Read(p []byte) (int, error) {
	if err := b.failure(); err != nil {
		return 0, err
	}
	total := b.n.Load()
	if b.limit > 0 && int64(len(p)) > b.limit-total+1 {
		// One byte past the limit is enough to know it is over.
		p = p[:b.limit-total+1]
	}
	if b.timeout > 0 {
		b.arm()
	}
	n, err := b.r.Read(p)
	total += int64(n)
	if b.limit > 0 && total > b.limit {
		n -= int(total - b.limit)
		total = b.limit
		err = errBodyTooLarge
	}
	b.n.Store(total)
	for _, t := range b.tees {
		t.feed(p[:n], err)
	}
	switch {
	case err == io.EOF:
		b.done = true
		b.clearDeadline()
	case err != nil && b.failure() == nil:
		// The deadline stays: net/http would otherwise wait for the rest
		// of a stalled body before sending the answer.
		b.err.Store(&err)
	}
	return n, err
}

// arm starts the wait for the next read: a read deadline, or timer.
func (b *clientBody) arm() {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case b.rc == nil:
	case !b.timed:
		_ = b.rc.SetReadDeadline(time.Now().Add(b.timeout))
	case b.timer == nil:
		b.timer = time.AfterFunc(b.timeout, b.expire)
	default:
		b.timer.Reset(b.timeout)
	}
}

// expire ends a timed body that waited too long for its next read: a
// deadline already past makes the HTTP/2 server end the stream's body
// with os.ErrDeadlineExceeded at once, which the read under way returns.
func (b *clientBody) expire() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.rc != nil {
		_ = b.rc.SetReadDeadline(time.Unix(1, 0))
	}
}

// clearDeadline lifts the read deadline once the body is over, so it
// cannot cut off the server's own reads on the connection.
func (b *clientBody) clearDeadline() {
	if b.timeout <= 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case b.timed:
		if b.timer != nil {
			b.timer.Stop()
		}
	case b.rc != nil:
		_ = b.rc.SetReadDeadline(time.Time{})
	}
}

// detach is called as the handler returns. A transport may still read the
// body on its own goroutine (RoundTrip may close it after returning), but
// the ResponseWriter is off limits from then on: HTTP/2 hands its state to
// the next stream, and an HTTP/1.1 connection is reading its next request.
// The lock makes detach wait for a deadline being set. detach also
// closes a temporary file holding the body: the request is over, and a
// sender still reading it only fails sooner.
func (b *clientBody) detach() {
	if b == nil {
		return
	}
	b.mu.Lock()
	b.rc = nil
	if b.timer != nil {
		b.timer.Stop()
	}
	b.mu.Unlock()
	if b.spill != nil {
		b.spill.Close()
	}
	for _, t := range b.tees {
		t.cut()
	}
}

func (b *clientBody) Close() error { return b.r.Close() }

// answer is the router's answer for a request whose body failed, and
// whether it failed.
func (b *clientBody) answer() (answer, bool) {
	if b == nil {
		return answer{}, false
	}
	err := b.failure()
	switch {
	case err == nil:
		return answer{}, false
	case errors.Is(err, io.ErrUnexpectedEOF):
		return ansClientGone, true
	case errors.Is(err, errBodyTooLarge):
		return ansBodyTooLarge, true
	case errors.Is(err, os.ErrDeadlineExceeded):
		return ansClientTimeout, true
	}
	return ansBadBody, true
}

// bodyLimits are a location's body limit (0: none), the part of a body
// held in memory, and whether the body streams to the backend as it
// arrives instead: its policy's settings where it has them, else the
// router's.
func (r *Router) bodyLimits(p *match.Policy) (limit, memory int64, stream bool) {
	limit, memory = r.maxBody, r.bodyBuffer
	if p == nil {
		return limit, memory, false
	}
	switch {
	case p.MaxBodySize < 0:
		limit = 0
	case p.MaxBodySize > 0:
		limit = p.MaxBodySize
	}
	if p.BodyBufferSize > 0 {
		memory = p.BodyBufferSize
	}
	// HTTP/1.0 has no chunked bodies: as nginx, a body goes to an
	// HTTP/1.0 backend read whole, with its length (proxying.go).
	return limit, memory, p.StreamRequestBody && (p.Proxy == nil || !p.Proxy.HTTP10)
}

// buffer reads the whole body before a backend is chosen, as nginx does
// (proxy_request_buffering on): a client that sends slowly holds no
// backend connection at all, whatever the size of its body. At most
// memory bytes are held in memory (client_body_buffer_size); a longer
// body goes to a temporary file in dir (client_body_temp_path), which
// is sent from there and goes when the request ends (see detach). It
// returns the answer when the body failed.
func (b *clientBody) buffer(req *http.Request, memory int64, dir string) (answer, bool) {
	var buf bytes.Buffer
	if req.ContentLength <= memory {
		if req.ContentLength > 0 {
			buf.Grow(int(req.ContentLength))
		}
		_, err := io.Copy(&buf, io.LimitReader(b, memory+1))
		if err != nil || b.failure() != nil {
			return b.refusal()
		}
		if int64(buf.Len()) <= memory {
			req.Body = &heldBody{b: buf.Bytes()}
			b.whole = req.Body
			if buf.Len() == 0 {
				req.Body, b.whole = http.NoBody, nil
			}
			setHeld(req, int64(buf.Len()))
			return answer{}, false
		}
	}
	// Longer than the memory allows (or declared so): the rest goes to
	// a file, after what was read so far.
	f, err := newSpill(dir)
	if err != nil {
		return ansBodyTempFile, true
	}
	n, err := f.fill(buf.Bytes(), b)
	if err != nil {
		f.Close()
		if b.failure() != nil {
			return b.refusal()
		}
		return ansBodyTempFile, true
	}
	b.spill = f
	req.Body, b.whole = f, f
	setHeld(req, n)
	return answer{}, false
}

// refusal is the answer for a body that failed while it was read.
func (b *clientBody) refusal() (answer, bool) {
	if a, failed := b.answer(); failed {
		return a, true
	}
	return ansBadBody, true
}

// setHeld describes a body read whole: sent with its length, like nginx
// after buffering.
func setHeld(req *http.Request, n int64) {
	req.ContentLength = n
	req.TransferEncoding = nil
}

// spillBody is a request body held in a temporary file. The file is
// unlinked as soon as it is made, so nothing is left on disk however the
// request ends, even when the process dies; where an open file cannot be
// unlinked, Close removes it by name.
type spillBody struct {
	f    *os.File
	name string // still to remove on Close; "" once unlinked
	once sync.Once
	// refs counts who holds the file open: the request, and each
	// mirrored copy still sending it (share), which outlives the request.
	refs atomic.Int32
	size int64 // once filled
}

func newSpill(dir string) (*spillBody, error) {
	f, err := os.CreateTemp(dir, "ramjet-body-")
	if err != nil {
		return nil, err
	}
	s := &spillBody{f: f, name: f.Name()}
	s.refs.Store(1)
	if os.Remove(s.name) == nil {
		s.name = ""
	}
	return s, nil
}

// fill writes head and then the rest of the client's body to the file,
// and rewinds it; it returns the body's length.
func (s *spillBody) fill(head []byte, body io.Reader) (int64, error) {
	if _, err := s.f.Write(head); err != nil {
		return 0, err
	}
	cb := copyBuffers.Get().(*[copyBufferSize]byte)
	defer copyBuffers.Put(cb)
	// The file is hidden behind a plain Writer so that io.CopyBuffer uses
	// the pooled buffer rather than File.ReadFrom's own.
	n, err := io.CopyBuffer(struct{ io.Writer }{s.f}, body, cb[:])
	if err != nil {
		return 0, err
	}
	if _, err := s.f.Seek(0, io.SeekStart); err != nil {
		return 0, err
	}
	s.size = int64(len(head)) + n
	return s.size, nil
}

func (s *spillBody) Read(p []byte) (int, error) { return s.f.Read(p) }

// Close gives up the request's hold on the file, once: both the transport
// and the handler's way out (clientBody.release) close it. The file is
// closed and removed when no mirrored copy still reads it.
func (s *spillBody) Close() error {
	s.once.Do(s.release)
	return nil
}

func (s *spillBody) release() {
	if s.refs.Add(-1) > 0 {
		return
	}
	_ = s.f.Close()
	if s.name != "" {
		_ = os.Remove(s.name)
	}
}

// hold keeps the file open for a mirrored copy, which reads it with ReadAt
// (leaving the request's reading where it is) and calls release when
// done; false once the file is closed.
func (s *spillBody) hold() bool {
	for {
		n := s.refs.Load()
		if n <= 0 {
			return false
		}
		if s.refs.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// heldBody is a request body read whole before a backend was chosen. The
// HTTP/1.1 upstream path sends a small one with the request head in one
// write, so a backend that answers before reading it still leaves a clean
// connection, and no goroutine is needed to send it.
type heldBody struct {
	b   []byte
	off int
}

func (h *heldBody) Read(p []byte) (int, error) {
	if h.off >= len(h.b) {
		return 0, io.EOF
	}
	n := copy(p, h.b[h.off:])
	h.off += n
	return n, nil
}

func (h *heldBody) Close() error { return nil }

// closeAfter ends an HTTP/1 connection after the answer: the rest of the
// request body is unread, so the connection cannot carry another request
// (net/http would otherwise try to read past it first). An HTTP/2 stream
// is reset on its own.
func closeAfter(w http.ResponseWriter, req *http.Request) {
	if req.ProtoMajor == 1 {
		w.Header().Set("Connection", "close")
	}
}
