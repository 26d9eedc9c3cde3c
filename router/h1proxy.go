package router

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"ramjet.dev/ramjet/match"
	"ramjet.dev/ramjet/router/h1"
)

// serveH1 proxies a request to an HTTP/1.1 backend over the router's own
// connection pool, on the handler's goroutine: the request head is written
// straight from the inbound request and the response is copied to the
// client from the connection's buffer. Only a request body is written on a
// second goroutine, so that a backend answering before it read the whole
// body cannot stall the exchange.
func (r *Router) serveH1(x *exchange, req *http.Request) {
	ctx := req.Context()
	upgrade := upgradeType(req.Header)
	length := req.ContentLength
	hasBody := req.Body != nil && req.Body != http.NoBody
	if !hasBody {
		length = 0
	} else if length == 0 {
		length = -1 // a body of unknown length: chunked
	}
	fresh := false // the next try dials a new connection
	if !x.start.IsZero() {
		x.upstreamStart = time.Now()
	}
	p := x.proxying()
	var began time.Time // for proxy-next-upstream-timeout
	if p != nil && p.NextUpstreamTimeout > 0 {
		began = time.Now()
	}
	for {
		pc, err := r.h1.get(ctx, x.endpoint.Addr, fresh, x.timeouts.connect)
		if err != nil {
			if unreachable(err) && x.passOn(req, p, failureClass(err), true, began) {
				fresh = false
				continue
			}
			r.exchangeFailed(x, req, err)
			return
		}
		t := h1Try{pool: r.h1, pc: pc, x: x, req: req, lazy: upgrade == "" && length == 0}
		if !t.lazy {
			t.hook()
		}
		res, err := t.send(upgrade, length)
		if err != nil {
			var nr noResponse
			// Once a sender started on the body it may be blocked reading
			// it, so the body cannot be handed to another try even if
			// nothing of it has been read yet.
			retry := pc.reused && !fresh && errors.As(err, &nr) && !timedOut(err) && ctx.Err() == nil &&
				idempotent(req.Method) && t.body == nil
			if t.body != nil && ctx.Err() != nil {
				// A failed read of the client's body cancels the context
				// before the sender sees the error; it ends at once, and
				// waiting for it tells a failed body from a client gone.
				<-t.body.done
			}
			clientErr := t.body.clientError()
			t.end(false)
			if retry {
				// The backend closed the kept-alive connection before it
				// saw anything of this request: send it again, as
				// net/http does, on a new connection.
				fresh = true
				continue
			}
			if p != nil && p.NextUpstream != 0 && clientErr == nil &&
				x.passOn(req, p, failureClass(err), t.body == nil, began) {
				fresh = false
				continue
			}
			if clientErr != nil {
				// exchangeFailed answers it as the client's (see clientBody).
				err = clientErr
			} else if we := t.body.writeFailure(); we != nil && timedOut(we) {
				// The backend stopped taking the body for the send timeout:
				// 504, as nginx answers a proxy_send_timeout.
				err = we
			}
			r.exchangeFailed(x, req, err)
			return
		}
		if !x.start.IsZero() {
			x.headerAt = time.Now()
		}
		if res.status == http.StatusSwitchingProtocols {
			r.switchProtocols(&t, res, upgrade)
			return
		}
		if p != nil {
			// proxy-next-upstream http_<status>: the response is dropped
			// for another endpoint's, unless none is left to try.
			if c := match.StatusCondition(res.status); c != 0 && p.NextUpstream&c != 0 &&
				x.passOn(req, p, c, t.body == nil && !t.bodyUnsent, began) {
				t.end(false)
				fresh = false
				continue
			}
			if p.Buffering && !t.bodyUnsent {
				r.respondBuffered(&t, res, p, !p.HTTP10)
				if x.readErr != nil {
					panic(http.ErrAbortHandler)
				}
				return
			}
		}
		t.end(t.respond(res) && (p == nil || !p.HTTP10))
		if x.readErr != nil {
			// The status is sent: the only way left to tell the client the
			// response is incomplete is to cut its connection, as
			// ReverseProxy does. Otherwise a chunked response would end
			// with a well-formed last chunk.
			panic(http.ErrAbortHandler)
		}
		return
	}
}

// h1Try is one attempt to exchange a request with a backend over pc.
type h1Try struct {
	pool *h1Pool
	pc   *h1Conn
	x    *exchange
	req  *http.Request
	stop func() bool // stops the client-cancellation hook; nil when none
	// lazy: the hook is not set yet, and is set only if the response head
	// takes longer than hookAfter or its body is not all read with it
	// (see hookAfter).
	lazy bool
	body *bodySender // nil until a body is sent
	// received: some of the response arrived; bodyUnsent: the request
	// declared a body that was never sent (the backend answered first).
	received, bodyUnsent bool
}

// hookAfter is how long a request without a body or Upgrade waits for
// the response head before the client-cancellation hook is set. Setting
// it costs a request five allocations and ~2.5% of the router's CPU under
// net/http's server (context.AfterFunc on the request's context, issue
// 26), while most heads arrive well within it; a client that goes away
// before is noticed at hookAfter, not at once.
const hookAfter = 50 * time.Millisecond

// hook makes a client that goes away end the exchange with the backend,
// whatever it is waiting for: the connection is closed under it.
func (t *h1Try) hook() {
	t.lazy = false
	if ctx := t.req.Context(); ctx.Done() != nil {
		t.stop = context.AfterFunc(ctx, t.pc.abort)
	}
}

// noResponse is a failure before any byte of the response arrived.
type noResponse struct{ err error }

func (e noResponse) Error() string { return e.err.Error() }
func (e noResponse) Unwrap() error { return e.err }

// send writes the request and reads the head of the final response.
// Informational responses are passed on to the client, at most
// maxInformational of them, except the backend's 100 Continue: the
// client's own comes from net/http's server when the body is first read.
// All heads share one budget of maxResponseHead bytes.
func (t *h1Try) send(upgrade string, length int64) (*h1Head, error) {
	pc, req := t.pc, t.req
	inline := inlineBody(req, length)
	// held: the request is written whole by rawsock's Send, which then
	// waits for the answer without a read that finds nothing yet; a held
	// body larger than the write buffer is written from where it is
	// instead of copied.
	held := pc.raw != nil && upgrade == "" && (length == 0 || inline != nil && len(inline) <= h1BufferSize)
	if held {
		pc.raw.Hold()
	}
	writeRequestHead(pc.bw, t.x, req, upgrade, length)
	send := t.x.timeouts.send
	switch {
	case send > 0:
		_ = pc.c.SetWriteDeadline(time.Now().Add(send))
		pc.writeDeadline = true
	case pc.writeDeadline:
		// Left by an earlier request's proxy-send-timeout.
		_ = pc.c.SetWriteDeadline(time.Time{})
		pc.writeDeadline = false
	}
	if inline != nil {
		// Written from the held bytes, not read: a retry sends them again.
		pc.bw.Write(inline)
		length = 0
	}
	if err := pc.bw.Flush(); err != nil {
		return nil, noResponse{err}
	}
	read := t.x.timeouts.read
	deadline := time.Now().Add(read)
	waiting := length != 0 && h1.ExpectsContinue(req.Header)
	budget, informed := headBudget(t.x.proxying()), 0
	if length != 0 && !waiting {
		t.body = startBody(pc, req, length, read, send)
	}
	for {
		dl := deadline
		if waiting {
			// As net/http: wait a second for the backend's 100 Continue or
			// its refusal, then send the body anyway.
			if c := time.Now().Add(time.Second); c.Before(dl) {
				dl = c
			}
		}
		tick := false // dl is the lazy hook's, not the read timeout's
		if t.lazy && hookAfter < read {
			// deadline is now + read: this is now + hookAfter.
			if c := deadline.Add(hookAfter - read); c.Before(dl) {
				dl, tick = c, true
			}
		}
		if t.body != nil {
			t.body.setHeaderDeadline(pc)
		} else {
			_ = pc.c.SetReadDeadline(dl)
		}
		if held {
			held = false
			if err := pc.raw.Send(); err != nil {
				return nil, noResponse{err}
			}
		}
		if _, err := pc.br.Peek(1); err != nil {
			if t.lazy && timedOut(err) && time.Now().Before(deadline) {
				t.hook()
				continue
			}
			if waiting && timedOut(err) && time.Now().Before(deadline) && t.req.Context().Err() == nil {
				waiting = false
				t.body = startBody(pc, req, length, read, send)
				continue
			}
			if !t.received {
				return nil, noResponse{err}
			}
			return nil, err
		}
		t.received = true
		if tick && !h1.HeadBuffered(pc.br) {
			// The rest of the head is read under the read timeout.
			_ = pc.c.SetReadDeadline(deadline)
		}
		res := &pc.head
		if err := res.read(pc.br, req.Method, &budget); err != nil {
			return nil, err
		}
		if res.status >= 200 || res.status == http.StatusSwitchingProtocols {
			if t.body != nil {
				t.body.headReceived(pc)
			} else {
				_ = pc.c.SetReadDeadline(time.Time{})
			}
			if waiting {
				t.bodyUnsent = true
			}
			return res, nil
		}
		if res.status == http.StatusContinue {
			if waiting {
				waiting = false
				t.body = startBody(pc, req, length, read, send)
			}
			continue
		}
		if informed < maxInformational {
			informed++
			t.inform(res)
		}
	}
}

// inlineBodyMax is the largest held body sent with the request head in one
// write: well under the socket buffers, so the write cannot wait on a
// backend that answers without reading.
const inlineBodyMax = 64 << 10

// inlineBody is a held request body small enough to be written with the
// request head (see send), nil for any other.
func inlineBody(req *http.Request, length int64) []byte {
	if hb, ok := req.Body.(*heldBody); ok && len(hb.b) > 0 && len(hb.b) <= inlineBodyMax && length == int64(len(hb.b)) {
		return hb.b
	}
	return nil
}

// inform passes an informational response (103 Early Hints and the like)
// on to the client.
func (t *h1Try) inform(res *h1Head) {
	h := t.x.w.Header()
	var added []string
	for _, f := range res.fields {
		if skipResponseHeader(f.key) || h[f.key] != nil && !contains(added, f.key) {
			continue // hop-by-hop, or the final response's own
		}
		h[f.key] = append(h[f.key], f.value)
		added = append(added, f.key)
	}
	t.x.w.WriteHeader(res.status)
	for _, k := range added {
		delete(h, k)
	}
}

// respond copies the response to the client and reports whether it was
// read to its end.
func (t *h1Try) respond(res *h1Head) bool {
	x := t.x
	h := x.w.Header()
	res.copyTo(h)
	declared := passedTrailers(res.trailer)
	if len(declared) > 0 {
		h["Trailer"] = declared
	}
	x.WriteHeader(res.status)
	// As ReverseProxy: flush every piece of a response of unknown length
	// and of server-sent events, buffer the rest.
	flush := res.length < 0 || isEventStream(h)
	if t.lazy && (res.chunked || res.length < 0 || int64(t.pc.br.Buffered()) < res.length) {
		t.hook() // the body has yet to arrive
	}
	buf := copyBuffers.Get().(*[copyBufferSize]byte)
	defer copyBuffers.Put(buf)
	body := h1Body{br: t.pc.br, remaining: res.length}
	if res.chunked && res.length != 0 {
		body.chunks = httputil.NewChunkedReader(t.pc.br)
	}
	for {
		n, err := body.Read(buf[:])
		if n > 0 {
			if _, werr := x.Write(buf[:n]); werr != nil {
				return false
			}
			if flush && err == nil {
				if ferr := http.NewResponseController(x.w).Flush(); ferr != nil && x.writeErr == nil {
					x.writeErr = ferr
					return false
				}
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			x.readErr = err
			return false
		}
	}
	if body.chunks != nil {
		trailer, err := res.readTrailer(t.pc.br)
		if err != nil {
			x.readErr = err
			return false
		}
		for k, vs := range trailer {
			if contains(declared, k) {
				h[k] = vs
			}
		}
	}
	return !res.close
}

// h1Body reads a response body as its head frames it: chunks, a length,
// or up to the end of the connection (remaining < 0 without chunks).
type h1Body struct {
	br        *bufio.Reader
	chunks    io.Reader
	remaining int64
}

func (b *h1Body) Read(p []byte) (int, error) {
	switch {
	case b.chunks != nil:
		return b.chunks.Read(p)
	case b.remaining == 0:
		return 0, io.EOF
	case b.remaining < 0:
		return b.br.Read(p)
	}
	if int64(len(p)) > b.remaining {
		p = p[:b.remaining]
	}
	n, err := b.br.Read(p)
	b.remaining -= int64(n)
	if err == io.EOF && b.remaining > 0 {
		err = io.ErrUnexpectedEOF
	}
	return n, err
}

func contains(l []string, s string) bool {
	for _, v := range l {
		if v == s {
			return true
		}
	}
	return false
}

func isEventStream(h http.Header) bool {
	ct := h["Content-Type"]
	return len(ct) > 0 && strings.HasPrefix(strings.ToLower(strings.TrimSpace(ct[0])), "text/event-stream")
}

// passedTrailers are the announced trailer fields a client may be given:
// names, a slice of announced when all of them are, a copy otherwise. Only
// an announced field is passed on, as it is announced to the client before
// the body; what was not announced could be meant for a parser that reads
// a trailer as a header (SPEC §13).
func passedTrailers(announced []string) []string {
	for i, k := range announced {
		if !trailerPassed(k) {
			out := append([]string(nil), announced[:i]...)
			for _, k := range announced[i+1:] {
				if trailerPassed(k) {
					out = append(out, k)
				}
			}
			return out
		}
	}
	return announced
}

// trailerPassed reports whether a trailer field may reach the client:
// never one that frames or routes the message, controls caching or
// authentication, or sets a cookie or a location (RFC 9110 §6.5.1; the
// list is net/http's badTrailer, with the cookie, location and hop-by-hop
// fields).
func trailerPassed(k string) bool {
	switch k {
	case "Authorization", "Cache-Control", "Connection", "Content-Encoding", "Content-Length",
		"Content-Range", "Content-Type", "Expect", "Host", "Keep-Alive", "Max-Forwards", "Pragma",
		"Proxy-Authenticate", "Proxy-Authorization", "Proxy-Connection", "Range", "Realm", "Te",
		"Trailer", "Transfer-Encoding", "Www-Authenticate", "Set-Cookie", "Set-Cookie2", "Location",
		"Content-Location", "Refresh", "Upgrade", "Age", "Date", "Expires", "Vary", "Retry-After",
		"Status", "Strict-Transport-Security", "Alt-Svc":
		return false
	}
	return true
}

// Response headers a proxy must not pass on (RFC 9110 §7.6.1).
func skipResponseHeader(k string) bool {
	switch k {
	case "Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate", "Proxy-Authorization",
		"Te", "Trailer", "Transfer-Encoding", "Upgrade":
		return true
	case "Server":
		return true // hidden as nginx's proxy_hide_header does (servertokens.go)
	}
	return false
}

// end releases the connection: back to the pool when the exchange left it
// clean (the response read to its end, the request body sent in full, the
// client still there), closed otherwise.
func (t *h1Try) end(complete bool) {
	if t.stop != nil && !t.stop() {
		complete = false // the client went away: the hook closed the connection
	}
	if t.body != nil {
		select {
		case <-t.body.done:
			if t.body.err != nil {
				complete = false
			}
		default:
			// Still sending the body: the connection is closed under the
			// sender, which may yet touch its buffers, so they are left to
			// the collector.
			_ = t.pc.c.Close()
			return
		}
	}
	if complete && !t.bodyUnsent {
		t.pool.put(t.pc)
		return
	}
	t.pc.close()
}

// switchProtocols tunnels an Upgrade once the backend answered 101: the
// client's connection is taken over from the server and bytes are copied
// both ways until either side closes.
func (r *Router) switchProtocols(t *h1Try, res *h1Head, upgrade string) {
	x, pc := t.x, t.pc
	got := res.get("Upgrade")
	if upgrade == "" || !strings.EqualFold(got, upgrade) {
		t.end(false)
		r.exchangeFailed(x, t.req, errors.New("backend switched protocols to "+got+" when "+upgrade+" was asked for"))
		return
	}
	if t.stop != nil && !t.stop() {
		t.stop = nil
		t.end(false)
		x.status, x.reason = 499, ReasonClientClosed
		return
	}
	t.stop = nil
	cc, brw, err := x.Hijack()
	if err != nil {
		t.end(false)
		r.exchangeFailed(x, t.req, err)
		return
	}
	defer cc.Close()
	defer pc.close()
	// A tunnel is bounded by its two ends, not by the request's send
	// timeout.
	_ = pc.c.SetWriteDeadline(time.Time{})
	brw.WriteString("HTTP/1.1 101")
	if res.reason != "" {
		brw.WriteString(" ")
		brw.WriteString(res.reason)
	}
	brw.WriteString("\r\n")
	for _, f := range res.fields {
		if !skipResponseHeader(f.key) {
			writeHeader(brw.Writer, f.key, f.value)
		}
	}
	writeHeader(brw.Writer, "Connection", "Upgrade")
	writeHeader(brw.Writer, "Upgrade", got)
	brw.WriteString("\r\n")
	if err := brw.Flush(); err != nil {
		return
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = io.Copy(pc.c, brw.Reader)
		closeWrite(pc.c)
	}()
	_, _ = io.Copy(cc, pc.br)
	// One side is finished: closing both ends the other copy.
	_ = cc.Close()
	_ = pc.c.Close()
	<-done
}

func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	}
}

// bodySender writes the request body to the backend on its own goroutine.
type bodySender struct {
	done   chan struct{}
	err    error                 // set before done is closed
	client atomic.Pointer[error] // reading the client's body failed
	// writeErr: writing the body to the backend failed (see failWrite).
	writeErr atomic.Pointer[error]

	// The wait for the response head (Options.ReadTimeout) starts when the
	// body is sent, as net/http's ResponseHeaderTimeout does: a long
	// upload is not a slow backend.
	mu       sync.Mutex
	timeout  time.Duration
	send     time.Duration // between two writes (proxy-send-timeout); 0: none
	sentAt   time.Time     // zero until sent
	headDone bool          // the final response head arrived: no more deadlines
}

func startBody(pc *h1Conn, req *http.Request, length int64, timeout, send time.Duration) *bodySender {
	s := &bodySender{done: make(chan struct{}), timeout: timeout, send: send}
	// The body, not the request: the sender may outlive the handler, and a
	// server may reuse the request (and its Body field) once it returned.
	go s.run(pc, req.Body, length)
	return s
}

// setHeaderDeadline bounds the reader's wait: none while the body is
// still being sent, ReadTimeout from the end of the body after. The
// sender sets the deadline itself when it finishes; the lock keeps the
// two from undoing each other.
func (s *bodySender) setHeaderDeadline(pc *h1Conn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sentAt.IsZero() {
		_ = pc.c.SetReadDeadline(time.Time{})
	} else {
		_ = pc.c.SetReadDeadline(s.sentAt.Add(s.timeout))
	}
}

func (s *bodySender) sent(pc *h1Conn) {
	s.mu.Lock()
	s.sentAt = time.Now()
	if !s.headDone {
		_ = pc.c.SetReadDeadline(s.sentAt.Add(s.timeout))
	}
	s.mu.Unlock()
}

// headReceived lifts the deadline for good: the response body is bounded
// by the client, not by ReadTimeout.
func (s *bodySender) headReceived(pc *h1Conn) {
	s.mu.Lock()
	s.headDone = true
	_ = pc.c.SetReadDeadline(time.Time{})
	s.mu.Unlock()
}

func (s *bodySender) clientError() error {
	if s == nil {
		return nil
	}
	if p := s.client.Load(); p != nil {
		return *p
	}
	return nil
}

func (s *bodySender) run(pc *h1Conn, body io.Reader, length int64) {
	defer close(s.done)
	defer s.sent(pc)
	bw := pc.bw
	chunked := length < 0
	buf := copyBuffers.Get().(*[copyBufferSize]byte)
	defer copyBuffers.Put(buf)
	for {
		n, rerr := body.Read(buf[:])
		if n > 0 {
			if chunked {
				bw.Write(appendHex(bw.AvailableBuffer(), n))
				bw.WriteString("\r\n")
			}
			bw.Write(buf[:n])
			if chunked {
				bw.WriteString("\r\n")
			}
			// Flushed piece by piece: a client streaming its body may be
			// waiting for the backend's answer to each piece.
			if s.send > 0 {
				_ = pc.c.SetWriteDeadline(time.Now().Add(s.send))
			}
			if err := bw.Flush(); err != nil {
				s.failWrite(pc, err)
				return
			}
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			s.err = rerr
			s.client.Store(&rerr)
			// The backend waits for the rest of a body that will never
			// come; closing the connection ends its wait and ours.
			_ = pc.c.Close()
			return
		}
	}
	if chunked {
		// The client's trailer stays here, as nginx passes none on.
		bw.WriteString("0\r\n\r\n")
	}
	if s.send > 0 {
		_ = pc.c.SetWriteDeadline(time.Now().Add(s.send))
	}
	if err := bw.Flush(); err != nil {
		s.failWrite(pc, err)
	}
}

// failWrite ends a body the backend stopped taking (a proxy-send-timeout,
// a reset): the reader waiting for the response head, with no deadline
// while the body is sent, is woken by closing the connection, and learns
// why from writeErr.
func (s *bodySender) failWrite(pc *h1Conn, err error) {
	s.err = err
	s.writeErr.Store(&err)
	_ = pc.c.Close()
}

// writeFailure is the error that broke off sending the body, nil if none.
func (s *bodySender) writeFailure() error {
	if s == nil {
		return nil
	}
	if p := s.writeErr.Load(); p != nil {
		return *p
	}
	return nil
}

func appendHex(b []byte, n int) []byte {
	const digits = "0123456789abcdef"
	var tmp [16]byte
	i := len(tmp)
	for {
		i--
		tmp[i] = digits[n&0xf]
		n >>= 4
		if n == 0 {
			break
		}
	}
	return append(b, tmp[i:]...)
}
