package h1

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/textproto"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"ramjet.dev/ramjet/router/rawsock"
)

// Connection states, for Shutdown.
const (
	stateNew    int32 = iota // accepted, nothing read yet
	stateActive              // a request is being read or served
	stateIdle                // waiting for the next request
	stateClosed              // closed by Shutdown while idle
	stateHijacked
)

const (
	bufSize = 4 << 10
	// maxPostHandlerReadBytes is how much of an unread request body is
	// read and dropped after the handler to keep the connection, as
	// net/http.
	maxPostHandlerReadBytes = 256 << 10
	// preCommit is how much of a response body is held before the head
	// is sent, so that a short complete body gets a Content-Length, as
	// net/http's 2 KiB buffer.
	preCommit = 2 << 10
	// lingerTime bounds the write of a refused head's answer.
	lingerTime = 500 * time.Millisecond
	// lingeringTime bounds the read after a half-close of a connection
	// whose request body was left unread, so that the answer is not lost
	// to a reset, and lingeringTimeout each wait for more of it: nginx's
	// lingering_time and lingering_timeout.
	lingeringTime    = 30 * time.Second
	lingeringTimeout = 5 * time.Second
)

// conn is one client connection and everything reused across its
// requests. The pool keeps the buffers between connections.
type conn struct {
	srv      *Server
	rwc      net.Conn
	state    atomic.Int32
	stat     ConnEntry // Server.Conns's
	accepted time.Time
	remote   string
	tls      *tls.ConnectionState

	cr      connReader
	br      *bufio.Reader
	bw      *bufio.Writer
	tp      *textproto.Reader
	scratch headScratch // reused by parsePlainHead
	fields  fieldReader // reused by readHead
	// rd and wr are what br and bw read and write: rwc, or its socket read
	// and written raw (see rawsock)
	rd io.Reader
	wr io.Writer
	// raw is rwc's socket read and written raw, nil when it is not a plain
	// TCP one. With it, the end of a response and the wait for the next
	// request are one call (see flushAndAwait) while arm is set and
	// armSkip, the requests to serve before trying again after a client
	// sent early (armBackoff the next such stretch), is zero.
	raw                 *rawsock.Conn
	arm                 bool
	armSkip, armBackoff uint16
	// layered: raw is the socket under rwc, a TLS connection over
	// rawsock.NetConn, which reads and writes it; the wait is the
	// socket's, the records rwc's.
	layered bool

	ctx *reqCtx // the current request's
	req *http.Request
	w   response
	b   body

	// served counts the requests read on the connection (MaxRequests).
	served int
	// age is set past MaxConnAge (nil without one): a timer per
	// connection, not a clock read per request.
	age *connAge
	// old: the request under way began past MaxConnAge.
	old bool
	// has are the framing fields the current request's head holds (see
	// fieldSet).
	has  fieldSet
	werr error // the first write error on the connection
	// flushed counts the bytes bw has handed to wr, for the size of a
	// response head (response.HeadBytes).
	flushed int64
	// headDeadline: the read deadline is still the request head's.
	headDeadline bool
	// headEnd is where in the buffer the next head's first CRLF CRLF is,
	// when headWhole found it; -1 when not known.
	headEnd int
	// rdl is the read deadline the loop set last; zero when there is none
	// or something else may have moved it.
	rdl time.Time
	// localAddr is the connection context's http.LocalAddrContextKey value.
	localAddr any
	// bad is the head of a request readHeadInto refused, when badSet and
	// the server reports refusals (Server.Refused).
	bad    plainHead
	badSet bool
}

var connPool = sync.Pool{New: func() any {
	c := new(conn)
	c.cr.c = c
	c.cr.cond = sync.NewCond(&c.cr.mu)
	c.cr.remain = -1
	c.br = bufio.NewReaderSize(&c.cr, bufSize)
	c.bw = bufio.NewWriterSize(connWriter{c}, bufSize)
	c.tp = textproto.NewReader(c.br)
	c.w.c = c
	c.w.header = make(http.Header)
	c.w.pending = make([]byte, 0, preCommit)
	c.b.c = c
	return c
}}

func newConn(s *Server, rwc net.Conn) *conn {
	c := connPool.Get().(*conn)
	c.srv, c.rwc, c.accepted = s, rwc, time.Now()
	c.rd, c.wr = rwc, rwc
	if raw := rawsock.New(rwc); raw != nil {
		c.rd, c.wr, c.raw, c.arm = raw, raw, raw, true
	} else if raw := rawsock.Under(rwc); raw != nil {
		c.raw, c.arm, c.layered = raw, true, true
	}
	c.state.Store(stateNew)
	c.headEnd = -1
	return c
}

// connWriter is the writer under bw: it records the first write error.
type connWriter struct{ c *conn }

func (w connWriter) Write(p []byte) (int, error) {
	n, err := w.c.wr.Write(p)
	w.c.flushed += int64(n)
	if err != nil && w.c.werr == nil {
		w.c.werr = err
	}
	return n, err
}

// release returns a connection's state to the pool, unless hijacked (its
// buffers are the hijacker's now).
func (c *conn) release() {
	c.srv.untrack(c)
	if c.age != nil {
		c.age.t.Stop()
		c.age = nil
	}
	if c.state.Load() == stateHijacked {
		return
	}
	// The body first: its reset waits for a read of it still under way
	// (a goroutine the handler left reading), which reads c.br.
	c.b.reset()
	c.br.Reset(&c.cr)
	c.bw.Reset(connWriter{c})
	c.cr.hasByte, c.cr.aborted, c.cr.watch, c.cr.done, c.cr.remain, c.cr.wctx = false, false, false, false, -1, nil
	c.rdl = time.Time{}
	c.rwc, c.rd, c.wr, c.srv, c.tls, c.req, c.ctx, c.werr = nil, nil, nil, nil, nil, nil, nil, nil
	c.served, c.old = 0, false
	c.localAddr = nil
	c.raw, c.arm, c.armSkip, c.armBackoff, c.layered = nil, false, 0, 0, false
	c.cr.full = false
	connPool.Put(c)
}

func (c *conn) serve(base context.Context) {
	s := c.srv
	hijacked := false
	defer func() {
		if v := recover(); v != nil && v != http.ErrAbortHandler {
			const size = 64 << 10
			buf := make([]byte, size)
			buf = buf[:runtime.Stack(buf, false)]
			s.logf("http: panic serving %v: %v\n%s", c.remote, v, buf)
		}
		if c.ctx != nil {
			c.ctx.cancel()
		}
		if !hijacked && c.state.Load() != stateHijacked {
			c.cr.abortPendingRead()
			c.bw.Flush()
			c.rwc.Close()
		}
		// A hijacked connection counts until the handler that took it
		// returns (a proxied Upgrade's tunnel).
		s.Conns.Close(&c.stat)
		c.release()
	}()
	s.Conns.Open(&c.stat, 0)
	c.remote = c.rwc.RemoteAddr().String()
	if s.MaxConnAge > 0 {
		a := new(connAge)
		a.t = time.AfterFunc(s.MaxConnAge, a.expire)
		c.age = a
	}
	headerTimeout := s.ReadHeaderTimeout
	if headerTimeout > 0 {
		c.setReadDeadline(time.Now().Add(headerTimeout))
	}
	if st, h2 := isH2TLS(c.rwc); st != nil {
		if h2 {
			s.Conns.Close(&c.stat)
			if s.handOver(c.rwc) {
				hijacked = true
				c.state.Store(stateHijacked)
			}
			return
		}
		c.tls = st
	}
	ctx := context.WithValue(base, http.LocalAddrContextKey, c.rwc.LocalAddr())
	if s.ConnContext != nil {
		ctx = s.ConnContext(ctx, c.rwc)
	}
	c.localAddr = ctx.Value(http.LocalAddrContextKey)
	// The first head's limit counts from the connection's first byte, as
	// net/http's.
	c.cr.setLimit(c.headLimit())
	if c.tls == nil && s.Fallback != nil && s.Fallback.Protocols != nil && s.Fallback.Protocols.UnencryptedHTTP2() {
		// Cleartext HTTP/2 with prior knowledge: read as far as the
		// bytes match the preface, no further.
		for n := 1; ; {
			b, err := c.br.Peek(n)
			if err != nil || !startsWithPreface(b) {
				break
			}
			if n == len(h2Preface) {
				_ = c.rwc.SetReadDeadline(time.Time{})
				// Everything read ahead goes with it, the preface and
				// whatever frames came in the same reads.
				all, _ := c.br.Peek(c.br.Buffered())
				rc := &replayConn{Conn: c.rwc, r: io.MultiReader(bytes.NewReader(append([]byte(nil), all...)), c.rwc)}
				s.Conns.Close(&c.stat)
				if s.handOver(rc) {
					hijacked = true
					c.state.Store(stateHijacked)
				}
				return
			}
			n = min(max(n+1, c.br.Buffered()), len(h2Preface))
		}
	}
	idleTimeout := s.IdleTimeout
	if idleTimeout == 0 {
		idleTimeout = headerTimeout
	}
	first := true
	// armed: how the wait for this request that wrote the previous
	// response's end ended (flushAndAwait), notArmed if there was none.
	armed := notArmed
	for {
		if !first {
			// Idle until the first byte of the next request.
			if !c.state.CompareAndSwap(stateActive, stateIdle) {
				return
			}
			// As net/http: four bytes, so that a stray CRLF after a body
			// followed by the client's close is no request.
			if c.br.Buffered() < 4 && !c.awaitRequest(idleTimeout, armed) {
				return
			}
			if !c.state.CompareAndSwap(stateIdle, stateActive) {
				return // closed by Shutdown
			}
			c.stat.Set(ConnReading)
			c.stat.Request()
			if headerTimeout > 0 {
				// A head that came whole is read from the buffer: no
				// deadline of its own (one deadline call fewer per request).
				if !c.headWhole() {
					c.setReadDeadline(time.Now().Add(headerTimeout))
				}
			} else if idleTimeout > 0 {
				c.setReadDeadline(time.Time{})
			}
		} else {
			if _, err := c.br.Peek(1); err != nil {
				return
			}
			if !c.state.CompareAndSwap(stateNew, stateActive) && !c.state.CompareAndSwap(stateIdle, stateActive) {
				return
			}
			c.stat.Set(ConnReading)
			c.stat.Request()
		}
		if s.shutdown.Load() {
			return
		}
		req, err := c.readRequest(ctx, first)
		first = false
		if err != nil {
			c.refuse(ctx, err, headerTimeout)
			return
		}
		c.served++
		c.stat.Set(ConnWriting)
		// As nginx decides keepalive_time, when the request begins.
		c.old = c.age != nil && c.age.old.Load()
		c.headDeadline = headerTimeout > 0 && req.Body == http.NoBody
		if headerTimeout > 0 && !c.headDeadline {
			c.setReadDeadline(time.Time{})
		}
		// Without a body, the head's deadline may stay (one deadline call
		// fewer per request): nothing reads the connection before the
		// next wait sets its own, but a watch or a Hijack, which lift it.
		w := &c.w
		w.reset(req)
		// Without an Expect field there is nothing to look up. Another
		// expectation is ignored, as nginx ignores it (not 417).
		if c.has&hasExpect != 0 && expectsContinue(req.Header) {
			if req.ProtoAtLeast(1, 1) && req.ContentLength != 0 {
				c.b.expect, c.b.expectBody = true, true
				w.canContinue.Store(true)
			}
		}
		if req.Body == http.NoBody {
			c.cr.bodyDone()
		}
		var refused time.Time
		if req.Method == "TRACE" {
			refused = time.Now()
			notAllowed(w)
		} else {
			s.Handler.ServeHTTP(w, req)
		}
		c.ctx.cancel()
		if c.state.Load() == stateHijacked {
			hijacked = true
			return
		}
		// The watch ends with the handler, for good: a read of the body's
		// end from here on (finish's drain) does not start it again.
		c.cr.abortPendingRead()
		// The response's end stays in the buffer when the wait for the next
		// request writes it; every way out below flushes it.
		arm := c.armable(w, headerTimeout, idleTimeout)
		w.finish(!arm)
		if !refused.IsZero() && s.Refused != nil {
			s.Refused(&Refusal{Request: req, RequestLine: req.Method + " " + req.RequestURI + " " + req.Proto, Status: http.StatusMethodNotAllowed,
				Start: refused, Duration: time.Since(refused), HeadBytes: w.HeadBytes(), BodyBytes: int64(len(notAllowedBody))})
		}
		if w.wroteWriteDeadline {
			_ = c.rwc.SetWriteDeadline(time.Time{})
		}
		if !w.reuse() {
			if c.b.limitHit || c.b.closedEarly() || c.b.unread() {
				c.lingerClose()
			}
			return
		}
		if !s.keepAlives() {
			return
		}
		if w.wroteReadDeadline || c.ctx.observed() {
			c.rdl = time.Time{} // moved by the handler or the watch
		}
		c.stat.Set(0) // waiting, the response's end written with the wait
		c.next()
		armed = notArmed
		if arm {
			ready, err := c.flushAndAwait()
			if err != nil {
				return
			}
			armed = armedTimeout
			if ready {
				armed = armedReady
			}
		}
	}
}

// connAge turns old once its connection is MaxConnAge old. Each
// connection has its own, so that a timer that fires as its connection
// ends marks nothing another connection reads.
type connAge struct {
	t   *time.Timer
	old atomic.Bool
}

func (a *connAge) expire() { a.old.Store(true) }

// armWait bounds the wait for the next request that writes the end of a
// response (flushAndAwait), which ends between half of it and it after it
// began. Past it the connection waits as an idle one,
// and stays unarmed until a request is there at the first read again. It
// is well above the 10 ms in which the runtime looks at the poller even
// when busy, so that a request that came is seldom taken for none.
const armWait = 50 * time.Millisecond

// maxArmBackoff bounds the requests a connection serves unarmed after its
// client sent early (see earlySend).
const maxArmBackoff = 1024

// armable reports whether the end of the response w is written together
// with the wait for the next request: on a raw socket of a client whose
// last request was there at once and that did not send early, when the
// response leaves no write deadline to honour and the head and idle waits
// are timed (the wait's deadline stays for the next head, as the head's
// own).
func (c *conn) armable(w *response, headerTimeout, idleTimeout time.Duration) bool {
	if c.raw == nil || !c.arm || c.armSkip > 0 || w.wroteWriteDeadline || headerTimeout <= 0 || idleTimeout <= armWait {
		return false
	}
	if c.br.Buffered() > 0 {
		// The client sent more before this response: it pipelines, and
		// a request of it that came after the last read would not wake
		// the wait (see flushAndAwait).
		c.earlySend()
		return false
	}
	// Bytes read from the socket that the loop's buffer has not seen do
	// not wake the wait either: the watch's byte, what the last read could
	// not take (it filled the buffer), and over TLS whatever the TLS layer
	// holds, which it may when the last read of the socket did not end
	// with the one record it completed.
	if c.cr.hasByte || c.cr.full || c.layered && !c.raw.OneRecord() {
		return false
	}
	return true
}

// earlySend notes a client that sent before it had the response: the
// connection is served unarmed for a stretch, doubled each time, so that
// a client that pipelines pays armWait seldom, and one taken for it
// under a passing overload is armed again soon.
func (c *conn) earlySend() {
	c.arm = false
	c.armBackoff = min(max(2*c.armBackoff, 1), maxArmBackoff)
	c.armSkip = c.armBackoff
}

// flushAndAwait writes what is left of the response and waits, in the same
// call, until the client sends something or armWait passes (rawsock.Send):
// a client that sends its next request when it has this response would
// otherwise find the loop's first read of it empty, a system call and a
// park more per request than nginx pays. The wait is armed before the
// write, so a request sent in answer to it is not missed. Bytes that came
// after the last read and before the write may not wake it (the poller's
// readiness is reset when a wait is armed): a client that pipelines is
// not armed (armable), and one that sent early anyway is read once
// armWait passed, and left unarmed for a while (awaitRequest). It reports
// whether the wait ended with something to read; false with an error: the
// write failed.
func (c *conn) flushAndAwait() (ready bool, err error) {
	// The deadline set for an earlier wait is kept while it falls at least
	// half of armWait from now: a busy connection moves it once per half
	// of armWait, not once per request.
	var now time.Time
	if w := &c.w; w.dateAt != 0 && w.dateFlushed == c.flushed {
		// Nothing reached the socket since the head's Date was read from
		// the clock: the response was written whole now, as a rule
		// microseconds later, so that reading serves (one clock read per
		// response). A handler that stalled after its head without a flush
		// makes it early, which can only end the wait sooner: never later
		// than armWait after it begins.
		now = clockBase.Add(w.dateAt)
	} else {
		now = monoNow()
	}
	if left := c.rdl.Sub(now); left < armWait/2 || left > armWait {
		c.setReadDeadline(now.Add(armWait))
	}
	c.raw.Hold()
	if !c.layered {
		// The flush is the hold's one write, of bw's own buffer, which
		// stays as it is until SendAwait returns: sent from there. (A TLS
		// layer writes its records from a buffer it reuses.)
		c.raw.Borrow()
	}
	_ = c.bw.Flush() // into the hold
	ready, err = c.raw.SendAwait()
	if err != nil && c.werr == nil {
		c.werr = err
	}
	return ready, err
}

// Armed waits, and how they ended (awaitRequest).
const (
	notArmed     = iota
	armedReady   // something came to read
	armedTimeout // armWait passed, or the wait failed
)

// awaitRequest waits for the first bytes of the next request, after an
// armed wait (flushAndAwait) that ended as armed says, and reports
// whether they came.
func (c *conn) awaitRequest(idleTimeout time.Duration, armed int) bool {
	if armed == armedReady {
		_, err := c.br.Peek(4)
		if err == nil {
			return true
		}
		if !isTimeout(err) {
			return false
		}
		// Something came, but armWait passed before the loop ran again
		// (a busy process): read it under the idle deadline, armed still.
	} else if armed == armedTimeout {
		c.arm = false // wait as an idle connection
	}
	if idleTimeout > 0 {
		c.idleDeadline(idleTimeout)
	} else {
		c.setReadDeadline(time.Time{})
	}
	if armed == notArmed {
		// Yield first: under load the other connections run, and by
		// the time this one runs again its next request has
		// usually come, read without a wait; a read that finds
		// nothing yet is a system call and a park more per request
		// (issue 26). Idle, the yield costs a scheduler pass.
		runtime.Gosched()
	}
	if c.raw != nil {
		// Over TLS the request may come from the TLS layer's buffer,
		// without a read of the socket.
		c.raw.ResetWaited()
	}
	if _, err := c.br.Peek(4); err != nil {
		return false
	}
	if c.raw == nil {
		return true
	}
	if armed == notArmed && c.armSkip > 0 {
		c.armSkip--
	}
	if !c.raw.Waited() {
		switch {
		case armed == armedTimeout:
			// It was there when the armed wait ran out without waking:
			// sent before the response, most likely (see flushAndAwait).
			c.earlySend()
		case armed == notArmed && c.armSkip == 0:
			// The request was there at once: the client answers quickly.
			c.arm = true
		}
	}
	return true
}

// headWhole is headBuffered for the head the loop reads next, which notes
// in headEnd where its empty line is when the head starts at once with a
// request line, so that parsePlainHead does not search for it again.
func (c *conn) headWhole() bool {
	b, _ := c.br.Peek(c.br.Buffered())
	if len(b) == 0 || b[0] == '\r' || b[0] == '\n' {
		// Empty lines first (skipped), or nothing yet.
		return headBuffered(c.br)
	}
	if i := bytes.Index(b, headEndBytes); i >= 0 {
		c.headEnd = i
		return true
	}
	return headBuffered(c.br) // a head whose lines end in a bare LF
}

// headEndBytes is what ends a head. A variable: with bytes.Index inlined
// (as the controller's profile has it), a []byte conversion in the call
// escaped, an allocation per keep-alive request.
var headEndBytes = []byte("\r\n\r\n")

// idleSlack is how much longer than IdleTimeout the wait for a request may
// last, at most (see idleDeadline).
const idleSlack = time.Second

// idleDeadline sets the read deadline for the wait for the next request to
// now + idle, unless the one set already falls within slack after that
// (slack: idleSlack, or a tenth of idle if less), so that a busy
// connection moves its deadline once per slack, not once per request.
func (c *conn) idleDeadline(idle time.Duration) {
	slack := min(idleSlack, idle/10)
	if want := time.Now().Add(idle); c.rdl.Before(want) || c.rdl.After(want.Add(slack)) {
		c.setReadDeadline(want.Add(slack))
	}
}

func (c *conn) setReadDeadline(t time.Time) {
	c.rdl = t
	_ = c.rwc.SetReadDeadline(t)
}

// next prepares the request objects for the connection's next request:
// reused, unless the handler waited on the context, which someone may
// still hold.
func (c *conn) next() {
	if c.ctx.observed() {
		c.ctx, c.req = nil, nil
	}
	c.b.reset()
	// The drain may have read the last request's body to its end after
	// the watch stopped: that end is not this request's. (No read of the
	// last request's body reaches bodyDone past b.reset, which waits for
	// one under way and makes later ones fail.)
	c.cr.done = false
}

// notAllowedBody answers TRACE.
const notAllowedBody = "405 Not Allowed\n"

// notAllowed refuses a TRACE request as nginx does, once its head was read
// (ngx_http_process_request_header: "client sent TRACE method"): 405, and
// the connection stays open. A backend never sees one, so it cannot echo
// the client's cookies and credentials back to a script.
func notAllowed(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(len(notAllowedBody)))
	w.WriteHeader(http.StatusMethodNotAllowed)
	_, _ = io.WriteString(w, notAllowedBody)
}

// errTargetPath refuses a path nginx's parser refuses (badTargetPath).
var errTargetPath = badRequestError("malformed request path")

// badTargetPath reports a request-target nginx refuses once it has read
// the request line ("client sent invalid request"): userinfo in an
// absolute form, a malformed or NUL escape, or a path that climbs above
// "/" once escapes are decoded (a decoded '/' separates, as the router
// reads it); a '#' ends the path.
func badTargetPath(target string) bool {
	path := target
	if !strings.HasPrefix(path, "/") {
		_, rest, ok := strings.Cut(path, "://")
		if !ok {
			return false
		}
		end := strings.IndexAny(rest, "/?#")
		if end < 0 {
			end = len(rest)
		}
		if strings.IndexByte(rest[:end], '@') >= 0 {
			return true
		}
		path = rest[end:]
	}
	if i := strings.IndexAny(path, "?#"); i >= 0 {
		path = path[:i]
	}
	depth := 0
	for _, seg := range strings.Split(path, "/") {
		if strings.IndexByte(seg, '%') >= 0 {
			dec, err := url.PathUnescape(seg)
			if err != nil || strings.IndexByte(dec, 0) >= 0 {
				return true
			}
			for _, s := range strings.Split(dec, "/") {
				if depth = pathDepth(depth, s); depth < 0 {
					return true
				}
			}
		} else if depth = pathDepth(depth, seg); depth < 0 {
			return true
		}
	}
	return false
}

// BadTargetPath reports a request-target nginx refuses once it has read
// the request line (badTargetPath), for router/h2's TRACE.
func BadTargetPath(target string) bool { return badTargetPath(target) }

// pathDepth is the depth below "/" after the segment seg, -1 above it.
func pathDepth(depth int, seg string) int {
	switch seg {
	case "", ".":
		return depth
	case "..":
		return depth - 1
	}
	return depth + 1
}

// lingerClose half-closes and reads what the client still sends, as
// nginx's lingering close does: until the client stops for
// lingeringTimeout, or lingeringTime passed, so that the answer is not
// lost to a reset while a body is still on its way.
func (c *conn) lingerClose() {
	c.bw.Flush()
	if cw, ok := c.rwc.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	}
	var buf [4096]byte
	end := time.Now().Add(lingeringTime)
	for {
		now := time.Now()
		if !now.Before(end) {
			return
		}
		d := now.Add(lingeringTimeout)
		if d.After(end) {
			d = end
		}
		_ = c.rwc.SetReadDeadline(d)
		if _, err := c.rwc.Read(buf[:]); err != nil {
			return
		}
	}
}

// badRequest is a head the loop refuses, answered with code and, as
// net/http's statusError, text.
type badRequest struct {
	code int
	text string
	// body replaces the answer's body (Server.HeadTooLarge).
	body string
}

func (e *badRequest) Error() string { return e.text }

var (
	errTooLarge     = &badRequest{code: 431}
	errUnsupportedT = &badRequest{code: 501}
	errVersion      = &badRequest{code: 505, text: "unsupported protocol version"}
	errFraming      = &badRequest{code: 400}
)

func badRequestError(text string) error { return &badRequest{code: 400, text: text} }

var errAsteriskTarget = badRequestError("invalid request target")

// errMethod refuses a method nginx does not read as one (NginxMethod).
var errMethod = badRequestError("invalid method")

// NginxMethod reports whether m is a method as nginx's request line
// parser reads one (and its HTTP/2 :method's): upper-case letters, '_'
// and '-' ("client sent invalid method" otherwise, 400). A token nginx
// refuses, say "get", would otherwise reach a backend no client of
// ingress-nginx ever reached with it. The router refuses the same for the
// servers that pass such a method on.
func NginxMethod(m string) bool {
	for i := 0; i < len(m); i++ {
		if c := m[i]; (c < 'A' || c > 'Z') && c != '_' && c != '-' {
			return false
		}
	}
	return m != ""
}

// errDuplicate refuses a head with a field nginx takes once twice
// (uniqueFields): two Content-Lengths, or two Transfer-Encodings, are
// what requests are smuggled with, and nginx refuses them all.
var errDuplicate = badRequestError("duplicate header line")

// answerBadRequest answers a request whose head failed as net/http's
// server does (nothing for a connection that ended or timed out), and
// reports the status and sizes of the answer written (0 when none was) and
// whether the connection lingers before it closes.
func (c *conn) answerBadRequest(err error) (status int, head, body int64, linger bool) {
	if err == io.EOF || isTimeout(err) {
		return 0, 0, 0, false
	}
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Op == "read" {
		return 0, 0, 0, false
	}
	const errorHeaders = "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"
	var br *badRequest
	if !errors.As(err, &br) {
		br = errFraming
	}
	line := strconv.Itoa(br.code) + " " + http.StatusText(br.code)
	if br.text != "" {
		line += ": " + br.text
	}
	text := line
	if br == errUnsupportedT {
		text = "Unsupported transfer encoding"
	}
	if br.body != "" {
		text = br.body
	}
	_ = c.rwc.SetWriteDeadline(time.Now().Add(lingerTime))
	_, _ = io.WriteString(c.rwc, "HTTP/1.1 "+line+errorHeaders+text)
	head = int64(len("HTTP/1.1 ") + len(line) + len(errorHeaders))
	return br.code, head, int64(len(text)), br == errTooLarge || br == errFraming || br.body != ""
}

// refuse answers a request whose head failed with err, and tells
// Server.Refused of it as nginx logs it: with the status answered; 400 for
// a head the client broke off and 408 for one that timed out (unanswered);
// not at all when no request line began.
func (c *conn) refuse(ctx context.Context, err error, headerTimeout time.Duration) {
	report := c.srv.Refused
	var start time.Time
	if report != nil {
		start = time.Now()
	}
	status, head, body, linger := c.answerBadRequest(err)
	if report != nil {
		line, began := c.refusedLine()
		if b := &c.srv.HeaderBuffers; status == http.StatusRequestURITooLong && b.on() && len(line) > b.Size {
			line = line[:b.Size] // what nginx's buffer held of it
		}
		switch {
		case status != 0:
		case !began:
		case isTimeout(err):
			status = http.StatusRequestTimeout
			if !c.rdl.IsZero() && headerTimeout > 0 {
				start = c.rdl.Add(-headerTimeout) // the head's deadline counts from its start
			}
		default:
			status = http.StatusBadRequest
		}
		if status != 0 {
			report(&Refusal{Request: c.refusedRequest(ctx), RequestLine: line, Status: status,
				Start: start, Duration: time.Since(start), HeadBytes: head, BodyBytes: body})
		}
	}
	if linger {
		c.lingerClose()
	}
}

// refusedLine is the request line of a refused head as far as it was
// read, and whether one began (past any empty lines before it).
func (c *conn) refusedLine() (string, bool) {
	if c.badSet {
		ph := &c.bad
		return ph.method + " " + ph.target + " " + ph.proto, true
	}
	line := bytes.TrimLeft(c.fields.line, "\r\n")
	if i := bytes.IndexAny(line, "\r\n"); i >= 0 {
		line = line[:i]
	}
	return string(line), len(line) > 0 || c.fields.reading
}

// refusedRequest is what a refused head gave of its request, for
// Server.Refused.
func (c *conn) refusedRequest(ctx context.Context) *http.Request {
	req := &http.Request{RemoteAddr: c.remote, TLS: c.tls, URL: new(url.URL), Header: make(http.Header)}
	if c.badSet {
		ph := &c.bad
		req.Method, req.RequestURI, req.Proto, req.ProtoMajor, req.ProtoMinor = ph.method, ph.target, ph.proto, ph.major, ph.minor
		if ph.url != nil {
			req.URL = ph.url
		}
		if ph.header != nil {
			req.Header = ph.header
		}
		hosts := ph.hosts
		if ph.hostsInHeader {
			hosts = ph.header["Host"]
		}
		req.Host = req.URL.Host
		if req.Host == "" && len(hosts) > 0 {
			req.Host = hosts[0]
		}
	}
	return req.WithContext(ctx)
}

// isTimeout reports whether err is a net.Error that timed out. The
// deadlines' errors are *net.OpError, tested first without errors.As,
// whose reflection cost about 2,600 instructions a request here: the
// loop and the backend's connection wait on deadlines that pass by design.
func isTimeout(err error) bool {
	if oe, ok := err.(*net.OpError); ok {
		return oe.Timeout()
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// checkFields refuses a head whose field names are not tokens or whose
// values hold control bytes.
func checkFields(h http.Header) error {
	for k, vv := range h {
		if !isToken(k) {
			return badRequestError("invalid header name")
		}
		for _, v := range vv {
			if !validValue(v) {
				return badRequestError("invalid header value")
			}
		}
	}
	return nil
}

// readRequest reads a request head and sets up its body, with the rules
// of net/http's server (readRequest, readTransfer), into the connection's
// request.
func (c *conn) readRequest(connCtx context.Context, first bool) (req *http.Request, err error) {
	if !first {
		c.cr.setLimit(c.headLimit())
	}
	// Empty lines before a request line are skipped, as nginx's parser
	// skips them, not only after a POST (net/http's RFC 7230 tolerance).
	for {
		b, err := c.br.Peek(1)
		if err != nil || b[0] != '\r' && b[0] != '\n' {
			break
		}
		_, _ = c.br.Discard(1)
	}
	c.fields.reading = false
	bufs := &c.srv.HeaderBuffers
	// What follows returns its errors to be judged here rather than through
	// defers: a function with as many ways out as it has is not given
	// open-coded defers, and the runtime's cost more than the rest of it.
	req, err = c.readHeadInto(connCtx, bufs)
	if err != nil && c.cr.remain == 0 {
		err = errTooLarge
		if bufs.on() {
			// The field lines are read only after the request line.
			err = errHeadersTooLarge
			if !c.fields.reading {
				err = errLineTooLarge
			}
		}
	}
	c.cr.setLimit(-1)
	if err != nil {
		return nil, err
	}
	return req, nil
}

// readHeadInto is readRequest past its start: the head read and parsed,
// then the connection's request set up from it (setUpRequest).
func (c *conn) readHeadInto(connCtx context.Context, bufs *HeaderBuffers) (*http.Request, error) {
	c.fields.lens = c.fields.lens[:0]
	c.fields.line = c.fields.line[:0]
	c.fields.track = bufs.on()
	c.badSet = false
	remain, buffered := c.cr.remain, c.br.Buffered()
	buf, _ := c.br.Peek(buffered)
	var err error
	ph, n, plain := parsePlainHead(buf, c.headEnd, &c.scratch, c.req != nil)
	c.headEnd = -1
	if plain {
		if bufs.on() && !bufs.fits(n) {
			line := bytes.IndexByte(buf, '\n') + 1
			if err := bufs.judge(line, buf[line:n]); err != nil {
				return nil, c.keepBad(&ph, err)
			}
		}
		_, _ = c.br.Discard(n)
	} else if ph, err = readHead(c.tp, &c.fields); err != nil {
		return nil, err
	} else if n = int(remain-c.cr.remain) + buffered - c.br.Buffered(); bufs.on() && !bufs.fits(n) {
		// The request line is what the head read before its fields.
		if err := bufs.judgeLines(n-c.fields.n, c.fields.lens); err != nil {
			return nil, c.keepBad(&ph, err)
		}
	}
	req, err := c.setUpRequest(connCtx, &ph, plain)
	if err == io.EOF { // as after the request line (readHead)
		err = io.ErrUnexpectedEOF
	}
	if err != nil {
		return nil, c.keepBad(&ph, err)
	}
	return req, nil
}

// keepBad keeps ph, the head of a request refused with err, for
// Server.Refused, and returns err.
func (c *conn) keepBad(ph *plainHead, err error) error {
	if c.srv.Refused != nil {
		c.bad, c.badSet = *ph, true
	}
	return err
}

// setUpRequest sets the connection's request up from the head ph, read by
// parsePlainHead when plain, else by readHead.
func (c *conn) setUpRequest(connCtx context.Context, ph *plainHead, plain bool) (req *http.Request, err error) {
	method, target, proto, major, minor, u, h := ph.method, ph.target, ph.proto, ph.major, ph.minor, ph.url, ph.header
	if !NginxMethod(method) {
		return nil, errMethod
	}
	if target == "*" && !(method == "PRI" && major == 2) {
		// nginx reads a target as a path or an absolute URI, never "*"
		// ("client sent invalid request"), so OPTIONS * answers 400.
		return nil, errAsteriskTarget
	}
	if method == "TRACE" && badTargetPath(target) {
		// nginx refuses the request line before TRACE's 405, and the
		// handler never sees this one to answer it.
		return nil, errTargetPath
	}
	hosts, haveHost := ph.hosts, ph.hosts != nil
	if ph.hostsInHeader {
		hosts, haveHost = h["Host"]
	}
	c.has = ph.has
	if len(hosts) > 1 {
		return nil, errors.New("too many Host headers")
	}
	if ph.dupUnique {
		return nil, errDuplicate
	}
	if !plain {
		for _, k := range uniqueFields {
			if len(h[k]) > 1 {
				return nil, errDuplicate
			}
		}
	}

	if c.req == nil {
		// The first request of the connection, or the one after a
		// request whose context someone may still hold.
		c.ctx = &reqCtx{c: c}
		c.req = new(http.Request).WithContext(c.ctx)
	}
	req = c.req
	c.ctx.Context, c.ctx.err, c.ctx.localAddr = connCtx, nil, c.localAddr
	// Every exported field is set: the value is reused.
	req.Form, req.PostForm, req.MultipartForm, req.Trailer, req.TransferEncoding = nil, nil, nil, nil, nil
	req.Response, req.GetBody, req.Pattern, req.ContentLength = nil, nil, "", 0
	req.Method, req.URL, req.Proto, req.ProtoMajor, req.ProtoMinor = method, u, proto, major, minor
	req.Header, req.RequestURI, req.RemoteAddr, req.TLS = h, target, c.remote, c.tls
	req.Host = u.Host
	c.ctx.absolute = req.Host != ""
	if c.ctx.absolute {
		c.ctx.abs = absoluteHost{}
		if len(hosts) == 1 {
			c.ctx.abs = absoluteHost{field: hosts[0], present: true}
		}
	} else if len(hosts) == 1 {
		req.Host = hosts[0]
	}
	if ph.has&hasPragma != 0 {
		if hp, ok := h["Pragma"]; ok && len(hp) > 0 && hp[0] == "no-cache" {
			if _, cc := h["Cache-Control"]; !cc {
				h["Cache-Control"] = []string{"no-cache"}
			}
		}
	}
	var conv []string
	if ph.has&hasConnection != 0 {
		conv = h["Connection"]
	}
	req.Close = shouldClose(major, minor, conv)
	if err := c.readTransfer(req, ph.has); err != nil {
		return nil, err
	}
	if major != 1 && !(major == 2 && minor == 0 && method == "PRI" && target == "*") {
		return nil, errVersion
	}
	isH2Upgrade := method == "PRI" && len(h)+len(ph.hosts) == 0 && target == "*" && proto == "HTTP/2.0"
	if isH2Upgrade {
		req.ContentLength = -1
		req.Close = true
	}
	if req.ProtoAtLeast(1, 1) && (!haveHost || len(hosts) == 0) && !isH2Upgrade && method != "CONNECT" {
		return nil, badRequestError("missing required Host header")
	}
	if len(hosts) == 1 && !validHost(hosts[0]) {
		return nil, badRequestError("malformed Host header")
	}
	// parsePlainHead checked every name and value byte before it made
	// the map; a head read by the other path is checked here.
	if !plain {
		if err := checkFields(h); err != nil {
			return nil, err
		}
	}
	if ph.hostsInHeader {
		delete(h, "Host")
	}
	return req, nil
}

// readHead reads a request head with net/textproto, as net/http's server
// does (readRequest), but for an HTTP/1.x head with a folded field line
// (obs-fold: one that begins with a space or tab), which textproto would
// join to the line before: that is refused with 400, as nginx refuses it
// ("client sent invalid header line") and GuardFraming in front of
// net/http does, since a field two parsers read differently is how
// requests get smuggled. The field lines are read whole into fr first,
// then parsed from there.
func readHead(tp *textproto.Reader, fr *fieldReader) (h plainHead, err error) {
	line, err := fr.readLine(tp.R)
	if err != nil {
		return h, err
	}
	defer func() {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
	}()
	method, rest, ok1 := strings.Cut(line, " ")
	target, proto, ok2 := strings.Cut(rest, " ")
	if !ok1 || !ok2 {
		return h, errors.New("malformed HTTP request")
	}
	if !isToken(method) {
		return h, errors.New("invalid method")
	}
	major, minor, ok := http.ParseHTTPVersion(proto)
	if !ok {
		return h, errors.New("malformed HTTP version")
	}
	rawurl := target
	justAuthority := method == "CONNECT" && !strings.HasPrefix(rawurl, "/")
	if justAuthority {
		rawurl = "http://" + rawurl
	}
	u, err := url.ParseRequestURI(rawurl)
	if err != nil {
		return h, err
	}
	if justAuthority {
		u.Scheme = ""
	}
	defer fr.done()
	folded, err := fr.read(tp.R)
	if err != nil {
		return h, err
	}
	if folded && major == 1 {
		// Other versions are refused later, as net/http refuses them.
		return h, errObsFold
	}
	mh, err := fr.tp.ReadMIMEHeader()
	if err != nil {
		return h, err
	}
	return plainHead{method: method, target: target, proto: proto, major: major, minor: minor, url: u, header: http.Header(mh),
		hostsInHeader: true, has: hasAll}, nil
}

// errObsFold is answered as a malformed head: 400 and close.
var errObsFold = errors.New("a folded header line")

// fieldReader holds a head's field lines, read before they are parsed,
// and the reader textproto parses them from; a connection reuses it.
type fieldReader struct {
	// reading: the request line ended and the field lines are read.
	reading bool
	// line is the request line as read, with its line ending; as far as
	// it came when reading it failed (Server.Refused logs that much).
	line []byte
	raw  []byte
	src  bytes.Reader
	tp   *textproto.Reader
	// dropped are the spans of raw whose lines read skips (invalidName).
	dropped [][2]int
	// With track, lens are the lengths of the lines read, for
	// HeaderBuffers; n is their sum.
	track bool
	lens  []int32
	n     int
}

// maxKeptFields bounds the field buffer a connection keeps between heads.
const maxKeptFields = 64 << 10

// read reads field lines from br up to and including the empty line that
// ends them, as they came, and reports whether one of them begins with a
// space or tab. fr.tp then reads them.
func (fr *fieldReader) read(br *bufio.Reader) (folded bool, err error) {
	fr.reading = true
	raw := fr.raw[:0]
	defer func() {
		fr.raw = raw
		if len(fr.dropped) > 0 {
			raw = dropSpans(raw, fr.dropped)
		}
		fr.src.Reset(raw)
		if fr.tp == nil {
			fr.tp = textproto.NewReader(bufio.NewReaderSize(&fr.src, bufSize))
		} else {
			fr.tp.R.Reset(&fr.src)
		}
	}()
	start := true // at the start of a line
	lineStart := 0
	// drop: the line being read is dropped from raw once it ends, from
	// dropFrom; dropped are the spans of raw to drop.
	drop, dropFrom := false, 0
	fr.dropped = fr.dropped[:0]
	for {
		line, err := br.ReadSlice('\n')
		if start && len(line) > 0 && (line[0] == ' ' || line[0] == '\t') {
			folded = true
		}
		if start {
			drop, dropFrom = invalidName(line), len(raw)
		}
		raw = append(raw, line...)
		if err == nil && drop {
			fr.dropped = append(fr.dropped, [2]int{dropFrom, len(raw)})
			drop = false
		}
		if err == nil && fr.track {
			fr.lens = append(fr.lens, int32(len(raw)-lineStart))
			lineStart = len(raw)
		}
		fr.n = len(raw)
		switch {
		case err == bufio.ErrBufferFull:
			start = false // the line goes on
		case err != nil:
			return folded, err
		case start && (len(line) == 1 || len(line) == 2 && line[0] == '\r'):
			return folded, nil // the empty line: "\n" or "\r\n", as bufio.ReadLine ends one
		default:
			start = true
		}
	}
}

// readLine reads a request line into fr.line and returns it without its
// line ending, as textproto's ReadLine: a read that fails after it took
// some bytes ends the line without an error, the next one fails.
func (fr *fieldReader) readLine(br *bufio.Reader) (string, error) {
	fr.line = fr.line[:0]
	for {
		l, err := br.ReadSlice('\n')
		fr.line = append(fr.line, l...)
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil && len(l) == 0 {
			return "", err
		}
		break
	}
	line := fr.line
	if n := len(line); n > 0 && line[n-1] == '\n' {
		line = line[:n-1]
		if n := len(line); n > 0 && line[n-1] == '\r' {
			line = line[:n-1]
		}
	}
	return string(line), nil
}

// invalidName reports whether line, the start of a field line, has a name
// nginx reads but calls invalid, and with ingress-nginx's default
// ignore-invalid-headers drops without a word: one with a byte that is no
// token byte, where net/http refuses the whole head. A name with a space,
// a control byte or DEL stays, and is refused as nginx refuses it.
func invalidName(line []byte) bool {
	colon := bytes.IndexByte(line, ':')
	if colon <= 0 {
		return false
	}
	bad := false
	for _, c := range line[:colon] {
		if c <= ' ' || c == 0x7f {
			return false
		}
		bad = bad || !tokenByte[c]
	}
	return bad
}

// dropSpans removes the spans from raw, in place.
func dropSpans(raw []byte, spans [][2]int) []byte {
	out, at := raw[:0], 0
	for _, sp := range spans {
		out = append(out, raw[at:sp[0]]...)
		at = sp[1]
	}
	return append(out, raw[at:]...)
}

// done lets go of a large head's lines.
func (fr *fieldReader) done() {
	if cap(fr.raw) > maxKeptFields {
		fr.raw = nil
	}
	if cap(fr.line) > maxKeptFields {
		fr.line = nil
	}
	if cap(fr.lens) > maxKeptFields/64 {
		fr.lens = nil
	}
	fr.src.Reset(nil)
}

// headLimit is how much a request head may read from the connection.
func (c *conn) headLimit() int64 {
	if b := &c.srv.HeaderBuffers; b.on() {
		return b.limit()
	}
	maxHeader := c.srv.MaxHeaderBytes
	if maxHeader <= 0 {
		maxHeader = http.DefaultMaxHeaderBytes
	}
	return int64(maxHeader) + 4096
}

// readTransfer sets the request's body framing as net/http's readTransfer
// does for a request, refusing what nginx refuses (see Server).
// has are the framing fields the head holds: the others are not looked up.
func (c *conn) readTransfer(req *http.Request, has fieldSet) error {
	h := req.Header
	chunked := false
	// As net/http, HTTP/0.0 is framed as 1.1 (and then refused).
	http11 := req.ProtoAtLeast(1, 1) || req.ProtoMajor == 0 && req.ProtoMinor == 0
	if has&(hasTransferEncoding|hasContentLength) == 0 {
		req.Body = http.NoBody
		c.b.req = req
		return nil
	}
	if raw, present := h["Transfer-Encoding"]; present {
		unknown := len(raw) == 1 && !strings.EqualFold(raw[0], "chunked")
		unsupported := http11 && (len(raw) != 1 || unknown)
		// The framing refusal stands where GuardFraming stood:
		// before net/http read an HTTP/1.x head, after it read HTTP/0.0,
		// which it refuses first for an encoding it does not serve (501).
		if unsupported && req.ProtoMajor != 1 {
			return errUnsupportedT
		}
		if _, cl := h["Content-Length"]; refusedFraming(true, unknown, cl, req.ProtoMajor == 1 && req.ProtoMinor == 0) {
			return errFraming
		}
		if unsupported {
			return errUnsupportedT
		}
		delete(h, "Transfer-Encoding")
		chunked = http11 // else ignored, as net/http does (and then 505)
	}
	var n int64
	cls, haveCL := h["Content-Length"]
	if len(cls) > 1 {
		first := textproto.TrimString(cls[0])
		for _, ct := range cls[1:] {
			if first != textproto.TrimString(ct) {
				return fmt.Errorf("http: message cannot contain multiple Content-Length headers; got %q", cls)
			}
		}
		h["Content-Length"] = []string{first}
		cls = h["Content-Length"]
	}
	if len(cls) > 0 {
		var err error
		if n, err = parseContentLength(cls[0]); err != nil {
			return err
		}
	} else if !chunked && haveCL {
		delete(h, "Content-Length")
	}
	b := &c.b
	switch {
	case chunked:
		req.ContentLength = -1
		req.TransferEncoding = []string{"chunked"}
		b.chunked = newChunkedReader(c.br)
		b.src = b.chunked
		req.Body = &bodyReader{b, b.gen}
	case n > 0:
		req.ContentLength = n
		b.lr = io.LimitedReader{R: c.br, N: n}
		b.src = &b.lr
		req.Body = &bodyReader{b, b.gen}
	default:
		req.Body = http.NoBody
	}
	var vv []string
	announced := false
	if chunked && has&hasTrailer != 0 { // a Trailer counts only then: not looked up otherwise
		vv, announced = h["Trailer"]
	}
	if announced {
		delete(h, "Trailer")
		trailer := make(http.Header)
		var err error
		for _, v := range vv {
			for f := range strings.SplitSeq(v, ",") {
				f = textproto.TrimString(f)
				if f == "" {
					continue
				}
				key := http.CanonicalHeaderKey(f)
				if forbiddenTrailer(key) && err == nil {
					err = fmt.Errorf("bad trailer key %q", key)
				}
				trailer[key] = nil
			}
		}
		if err != nil {
			return err
		}
		if len(trailer) > 0 {
			req.Trailer = trailer
		}
	}
	b.req = req
	return nil
}

// shouldClose reads the request's Connection field values conv.
func shouldClose(major, minor int, conv []string) bool {
	if major < 1 {
		return true
	}
	hasClose := ListsToken(conv, "close")
	if major == 1 && minor == 0 {
		return hasClose || !ListsToken(conv, "keep-alive")
	}
	return hasClose
}

// connReader is what the connection's bufio.Reader reads from: it bounds
// a request head, and while a handler waits on the request's context with
// the body read, it watches for the client going away with a one-byte
// read of its own, as net/http's connReader does.
type connReader struct {
	c      *conn
	remain int64 // bytes a head may still read; <0: no limit

	mu      sync.Mutex
	cond    *sync.Cond
	inRead  bool // the background read is running
	aborted bool
	hasByte bool
	byteBuf [1]byte
	// watch: the handler asked for the context's Done; done: the body is
	// read to its end (or there is none), so the connection is free.
	// Both are the current request's: abortPendingRead, as the handler
	// returns, clears them, and only a request whose handler runs sets
	// watch again (wantWatch).
	watch, done bool
	// wctx is the context the watch cancels when the client goes away:
	// the one whose handler asked for it, held here so that the
	// background read never looks at c.ctx, which the loop moves on.
	wctx *reqCtx
	// full: the last read filled what it was given, so more may wait
	// where it read from (the socket, or a TLS layer's buffer).
	full bool
}

func (cr *connReader) setLimit(n int64) { cr.remain = n }

func (cr *connReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if cr.remain == 0 {
		return 0, io.EOF
	}
	if cr.remain > 0 && int64(len(p)) > cr.remain {
		p = p[:cr.remain]
	}
	cr.mu.Lock()
	if cr.inRead {
		cr.mu.Unlock()
		panic("h1: read while the connection is being watched")
	}
	if cr.hasByte {
		p[0] = cr.byteBuf[0]
		cr.hasByte, cr.full = false, true // the rest is where it was read from
		cr.mu.Unlock()
		if cr.remain > 0 {
			cr.remain-- // a head's byte too (HeaderBuffers counts them)
		}
		return 1, nil
	}
	cr.mu.Unlock()
	n, err := cr.c.rd.Read(p)
	cr.full = n == len(p)
	if cr.remain > 0 {
		cr.remain -= int64(n)
	}
	return n, err
}

// bodyDone is called when the request body is read to its end (or there
// is none): the watch may start.
func (cr *connReader) bodyDone() {
	cr.mu.Lock()
	defer cr.mu.Unlock()
	cr.done = true
	if cr.watch {
		cr.startLocked()
	}
}

// wantWatch is called when x's Done is first asked for. A context whose
// request is over (canceled as its handler returned) starts nothing: its
// connection has moved on, to its next request or to another client.
func (cr *connReader) wantWatch(x *reqCtx) {
	cr.mu.Lock()
	defer cr.mu.Unlock()
	if x.Err() != nil {
		return
	}
	cr.watch, cr.wctx = true, x
	if cr.done {
		cr.startLocked()
	}
}

func (cr *connReader) startLocked() {
	if cr.inRead || cr.hasByte || cr.c.state.Load() == stateHijacked {
		return
	}
	cr.inRead = true
	_ = cr.c.rwc.SetReadDeadline(time.Time{})
	go cr.backgroundRead()
}

func (cr *connReader) backgroundRead() {
	n, err := cr.c.rwc.Read(cr.byteBuf[:])
	cr.mu.Lock()
	if n == 1 {
		cr.hasByte = true
	}
	if err != nil && !(cr.aborted && isTimeout(err)) && cr.wctx != nil {
		// The client went away (or the connection failed). Canceling a
		// context whose request ended does nothing.
		cr.wctx.cancel()
	}
	cr.aborted, cr.inRead = false, false
	cr.mu.Unlock()
	cr.cond.Broadcast()
}

// abortPendingRead stops the watch before the connection is read again,
// and clears it: until the next request's handler asks for it, nothing
// starts it again, however the body is read to its end meanwhile.
func (cr *connReader) abortPendingRead() {
	cr.mu.Lock()
	cr.done, cr.watch = false, false
	if cr.inRead {
		cr.aborted = true
		_ = cr.c.rwc.SetReadDeadline(aLongTimeAgo)
		for cr.inRead {
			cr.cond.Wait()
		}
		_ = cr.c.rwc.SetReadDeadline(time.Time{})
	}
	cr.wctx = nil // after the read, which may cancel it
	cr.mu.Unlock()
}

var aLongTimeAgo = time.Unix(1, 0)

// reqCtx is a request's context. Its Done channel is made only when
// someone asks for it, and only then does the connection watch for the
// client going away; a context nobody waited on is reset for the next
// request instead of being made anew.
type reqCtx struct {
	context.Context // the connection's, for Value and Deadline
	// localAddr is the connection context's http.LocalAddrContextKey
	// value, which a proxy asks for every request (Value).
	localAddr any
	c         *conn
	mu        sync.Mutex
	done      chan struct{}
	err       error
	asked     atomic.Bool // Done was called (read without mu: observed)
	afters    []*afterFunc
	// absolute: the request-target is in absolute form, and abs is its
	// Host field (HostField).
	absolute bool
	abs      absoluteHost
}

// afterFunc is a function registered with AfterFunc.
type afterFunc struct {
	f    func()
	done bool // ran or stopped
}

// AfterFunc makes the context an afterFuncer for package context, so that
// context.AfterFunc and WithCancel on it register here instead of starting
// a goroutine each to wait on Done.
func (x *reqCtx) AfterFunc(f func()) (stop func() bool) {
	_ = x.Done() // starts the watch
	x.mu.Lock()
	defer x.mu.Unlock()
	a := &afterFunc{f: f}
	if x.err != nil {
		a.done = true
		go f()
	} else {
		x.afters = append(x.afters, a)
	}
	return func() bool {
		x.mu.Lock()
		defer x.mu.Unlock()
		if a.done {
			return false
		}
		a.done = true
		return true
	}
}

func (x *reqCtx) Done() <-chan struct{} {
	x.mu.Lock()
	if x.done == nil {
		x.done = make(chan struct{})
		x.asked.Store(true)
		if x.err != nil {
			close(x.done)
			x.mu.Unlock()
			return x.done
		}
		x.mu.Unlock()
		x.c.cr.wantWatch(x)
		return x.done
	}
	x.mu.Unlock()
	return x.done
}

func (x *reqCtx) Err() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.err
}

func (x *reqCtx) cancel() {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.err == nil {
		x.err = context.Canceled
		if x.done != nil {
			close(x.done)
		}
		for _, a := range x.afters {
			if !a.done {
				a.done = true
				go a.f()
			}
		}
		x.afters = nil
	}
}

// observed reports whether anyone asked for Done, and so may hold the
// context past the request.
func (x *reqCtx) observed() bool { return x.asked.Load() }

func (x *reqCtx) String() string { return "h1 request context" }

// Value answers http.LocalAddrContextKey from localAddr, without a walk
// down the connection context's chain, and HostField's key from abs; any
// other key from that chain.
func (x *reqCtx) Value(key any) any {
	switch key {
	case http.LocalAddrContextKey:
		return x.localAddr
	case hostFieldKey{}:
		if x.absolute {
			return &x.abs
		}
		return nil
	}
	return x.Context.Value(key)
}
