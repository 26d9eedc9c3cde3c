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
)

// Defaults of the client-facing limits (SPEC §13), nginx's and
// ingress-nginx's own.
const (
	// DefaultMaxBodySize is ingress-nginx's proxy-body-size, 1m.
	DefaultMaxBodySize = 1 << 20
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
)

var (
	ansBadBody       = answer{http.StatusBadRequest, ReasonBadBody, "400 Bad Request: malformed request body\n"}
	ansBodyTooLarge  = answer{http.StatusRequestEntityTooLarge, ReasonBodyTooLarge, "413 Content Too Large: the request body is over the limit\n"}
	ansClientGone    = answer{499, ReasonClientClosed, "499 Client Closed Request: the request body ended early\n"}
	ansClientTimeout = answer{http.StatusRequestTimeout, ReasonClientTimeout, "408 Request Timeout: the request body stalled\n"}
)

var errBodyTooLarge = errors.New("request body over the limit")

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
		b.setDeadline(time.Now().Add(b.timeout))
	}
	n, err := b.r.Read(p)
	total += int64(n)
	if b.limit > 0 && total > b.limit {
		n -= int(total - b.limit)
		total = b.limit
		err = errBodyTooLarge
	}
	b.n.Store(total)
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

// clearDeadline lifts the read deadline once the body is over, so it
// cannot cut off the server's own reads on the connection.
func (b *clientBody) clearDeadline() {
	if b.timeout > 0 {
		b.setDeadline(time.Time{})
	}
}

func (b *clientBody) setDeadline(t time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.rc != nil {
		_ = b.rc.SetReadDeadline(t)
	}
}

// detach is called as the handler returns. A transport may still read the
// body on its own goroutine (RoundTrip may close it after returning), but
// the ResponseWriter is off limits from then on: HTTP/2 hands its state to
// the next stream, and an HTTP/1.1 connection is reading its next request.
// The lock makes detach wait for a deadline being set.
func (b *clientBody) detach() {
	if b == nil {
		return
	}
	b.mu.Lock()
	b.rc = nil
	b.mu.Unlock()
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

// buffer reads the whole body before a backend is chosen, as nginx does
// (proxy_request_buffering): a client that sends slowly then holds no
// backend connection at all. At most max bytes are held; a longer body
// (possible only when the limit is raised above max) is streamed after
// the part read. It returns false when the body failed (see answer).
func (b *clientBody) buffer(req *http.Request, max int64) bool {
	var buf bytes.Buffer
	if req.ContentLength > 0 && req.ContentLength <= max {
		buf.Grow(int(req.ContentLength))
	}
	_, err := io.Copy(&buf, io.LimitReader(b, max+1))
	if err != nil || b.failure() != nil {
		return false
	}
	if !b.done && int64(buf.Len()) > max {
		req.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(&buf, b), b}
		return true
	}
	req.Body = &heldBody{b: buf.Bytes()}
	if buf.Len() == 0 {
		req.Body = http.NoBody
	}
	// Sent with its length, like nginx after buffering; a 100-continue
	// was the client's question and has been answered.
	req.ContentLength = int64(buf.Len())
	req.TransferEncoding = nil
	req.Header.Del("Expect")
	return true
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
