package h1

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"ramjet.dev/ramjet/router/rawsock"
)

// Pool holds keep-alive connections to HTTP/1.1 backends, per endpoint
// address. A request takes a connection, writes its request and reads the
// response on its own goroutine, and returns the connection only once the
// response was read to its end; net/http's Transport instead runs two
// goroutines per connection and hands every request and response across
// channels, which costs more than the proxying itself.
type Pool struct {
	dialer  net.Dialer
	maxIdle int           // per address
	idleFor time.Duration // an idle connection older than this is closed
	// maxRequests and maxAge: a connection that has served this many
	// requests, or is this old, closes after its response (0: no bound).
	maxRequests int
	maxAge      time.Duration
	// tls, when set, is the configuration every connection is opened
	// with (HTTPS backends).
	tls *tls.Config

	mu sync.Mutex
	// idle holds each address's idle connections behind a pointer, which
	// a connection keeps, so that putting it back costs no lookup; last
	// is the list taken from last, which spares the lookup of a take
	// while requests go to one address.
	idle     map[string]*idleList
	last     *idleList
	lastAddr string
}

// idleList is one address's idle connections, the most recently used
// last.
type idleList struct {
	conns []*Conn
	// dropped: CloseIdle took it out of the pool; a connection that
	// still points to it looks its address up again.
	dropped bool
}

// Conn is one connection to a backend with its buffers, and the exchange
// it carries: one at a time, by the goroutine that took it from the pool.
type Conn struct {
	pool   *Pool
	c      net.Conn
	raw    *rawsock.Conn // c's socket read and written raw, nil if not a plain TCP one (see rawsock)
	br     *bufio.Reader
	bw     *bufio.Writer
	addr   string
	list   *idleList     // addr's in pool.idle
	idleAt time.Duration // idleClock when it was put back
	// takenAt is idleClock when Get handed it out, the time the exchange's
	// read deadline counts from.
	takenAt time.Duration
	reused  bool // it served a request before this one
	// requests it served and dialedAt (idleClock), for Pool.maxRequests
	// and maxAge.
	requests int
	dialedAt time.Duration
	// writeDeadline: a send timeout left a write deadline set.
	writeDeadline bool
	// rdl is the read deadline this connection's exchanges set last, kept
	// from one exchange to the next (see setReadDeadline); zero when there
	// is none or a body sender may have moved it.
	rdl   time.Time
	peek  peeker   // looks at it as it is taken from the pool (see idle.go)
	sock  *tlsSock // the socket beneath c under TLS, nil otherwise
	abort func()   // closes c; made once so that hooking it to a request does not allocate
	head  Response // the response being read, its buffers kept for the next one
	ex    clientExchange
}

// NewPool makes a pool whose dials give up after connect.
func NewPool(connect time.Duration) *Pool {
	return &Pool{
		dialer:  net.Dialer{Timeout: connect, KeepAlive: 30 * time.Second},
		maxIdle: 64,
		idleFor: 60 * time.Second,
		idle:    map[string]*idleList{},
	}
}

// SetKeepalive bounds what the pool keeps, as nginx's upstream keepalive,
// keepalive_timeout, keepalive_requests and keepalive_time: idle
// connections per address (0 keeps none, each request has a connection
// of its own), how long one waits idle, and how many requests and how
// long one serves (0: no bound). Call it before the pool is used.
func (p *Pool) SetKeepalive(idle int, idleFor time.Duration, requests int, age time.Duration) {
	p.maxIdle, p.idleFor, p.maxRequests, p.maxAge = idle, idleFor, requests, age
}

// SetTLS has the pool open every connection with TLS under cfg, its
// handshake bounded by the connect timeout, as nginx's
// proxy_connect_timeout bounds the SSL handshake too. Call it before the
// pool is used.
func (p *Pool) SetTLS(cfg *tls.Config) { p.tls = cfg }

// listOf is addr's idle list, made if it has none; mu is held.
func (p *Pool) listOf(addr string) *idleList {
	l := p.idle[addr]
	if l == nil {
		l = new(idleList)
		p.idle[addr] = l
	}
	return l
}

const bufferSize = 4 << 10

// clockBase starts the clock that times idle connections: idleClock reads
// the monotonic clock only, at about half the cost of time.Now, twice per
// pooled exchange.
var clockBase = time.Now()

func idleClock() time.Duration { return time.Since(clockBase) }

// monoNow is the time from the monotonic clock alone: one clock read where
// time.Now makes two (the wall clock's too), for deadlines, which go by
// the monotonic reading.
func monoNow() time.Time { return clockBase.Add(idleClock()) }

var (
	clientReaders = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, bufferSize) }}
	clientWriters = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, bufferSize) }}
)

// Get returns an idle connection to addr, the most recently used first,
// or dials a new one (always with fresh). An idle connection on which
// anything arrived while it waited, bytes or the backend's close, is
// closed instead of used (see idle.go). A connect timeout other than the
// pool's bounds the dial instead.
func (p *Pool) Get(ctx context.Context, addr string, fresh bool, connect time.Duration) (*Conn, error) {
	for !fresh {
		now := idleClock()
		pc := p.takeIdle(addr, now)
		if pc == nil {
			break
		}
		if pc.idleClean() {
			pc.reused, pc.takenAt = true, now
			return pc, nil
		}
		pc.Close()
	}
	d := &p.dialer
	if connect > 0 && connect != d.Timeout {
		own := p.dialer
		own.Timeout = connect
		d = &own
	}
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	tcp := c
	var sock *tlsSock
	if p.tls != nil {
		sock = &tlsSock{Conn: c, limit: -1}
		if c, err = handshake(ctx, sock, p.tls, d.Timeout); err != nil {
			return nil, err
		}
	}
	raw := rawsock.New(c)
	var rw io.ReadWriter = c
	if raw != nil {
		rw = raw
	}
	br := clientReaders.Get().(*bufio.Reader)
	br.Reset(rw)
	bw := clientWriters.Get().(*bufio.Writer)
	bw.Reset(rw)
	pc := &Conn{pool: p, c: c, raw: raw, br: br, bw: bw, addr: addr, sock: sock}
	if raw == nil {
		// Under TLS the socket beneath is looked at: a record that came
		// while the connection was idle is as unasked for as bytes.
		pc.peek.init(tcp)
	}
	pc.abort = func() { _ = c.Close() }
	p.mu.Lock()
	pc.list = p.listOf(addr)
	p.mu.Unlock()
	pc.takenAt = idleClock()
	pc.dialedAt = pc.takenAt
	return pc, nil
}

// ErrHandshakeTimeout is a TLS handshake with a backend that did not end
// within the connect timeout: the connection never opened.
var ErrHandshakeTimeout error = handshakeTimeout{}

type handshakeTimeout struct{}

func (handshakeTimeout) Error() string { return "h1: TLS handshake timeout" }
func (handshakeTimeout) Timeout() bool { return true }

// handshake opens TLS over c under cfg within timeout. A failure closes
// c; but for ErrHandshakeTimeout and the end of ctx it is a dial's
// error, as the connection never opened.
func handshake(ctx context.Context, c net.Conn, cfg *tls.Config, timeout time.Duration) (net.Conn, error) {
	tc := tls.Client(c, cfg)
	hctx := ctx
	if timeout > 0 {
		var cancel context.CancelFunc
		hctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	if err := tc.HandshakeContext(hctx); err != nil {
		_ = c.Close()
		switch {
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case hctx.Err() != nil:
			return nil, ErrHandshakeTimeout
		}
		return nil, &net.OpError{Op: "dial", Net: "tcp", Addr: c.RemoteAddr(), Err: err}
	}
	return tc, nil
}

// takeIdle takes the most recently used idle connection to addr that has
// not been idle too long, closing the ones that have.
func (p *Pool) takeIdle(addr string, now time.Duration) *Conn {
	p.mu.Lock()
	defer p.mu.Unlock()
	l := p.last
	if l == nil || p.lastAddr != addr {
		if l = p.idle[addr]; l == nil {
			return nil
		}
		p.last, p.lastAddr = l, addr
	}
	for len(l.conns) > 0 {
		pc := l.conns[len(l.conns)-1]
		l.conns[len(l.conns)-1] = nil
		l.conns = l.conns[:len(l.conns)-1]
		if now-pc.idleAt < p.idleFor {
			return pc
		}
		pc.Close()
	}
	return nil
}

// put returns a connection whose response was read to its end. Bytes the
// backend sent past that end belong to no request: a connection with any
// already read is closed, and one where they come later is found out when
// it is next taken (see idle.go).
func (p *Pool) put(pc *Conn) {
	if pc.br.Buffered() > 0 {
		pc.Close()
		return
	}
	pc.requests++
	pc.idleAt = idleClock()
	if p.maxRequests > 0 && pc.requests >= p.maxRequests || p.maxAge > 0 && pc.idleAt-pc.dialedAt >= p.maxAge {
		pc.Close()
		return
	}
	pc.head.release()
	pc.ex = clientExchange{}
	p.mu.Lock()
	l := pc.list
	if l == nil || l.dropped {
		l = p.listOf(pc.addr)
		pc.list = l
	}
	if len(l.conns) < p.maxIdle {
		l.conns = append(l.conns, pc)
		p.mu.Unlock()
		return
	}
	p.mu.Unlock()
	pc.Close()
}

// CloseIdle closes every idle connection.
func (p *Pool) CloseIdle() {
	p.mu.Lock()
	idle := p.idle
	p.idle = map[string]*idleList{}
	p.last, p.lastAddr = nil, ""
	for _, l := range idle {
		l.dropped = true
	}
	p.mu.Unlock()
	for _, l := range idle {
		for _, pc := range l.conns {
			pc.Close()
		}
	}
}

// Close closes the connection and recycles its buffers. Only the goroutine
// that owns the connection may call it.
func (pc *Conn) Close() {
	_ = pc.c.Close()
	pc.recycle()
}

func (pc *Conn) recycle() {
	if pc.br != nil {
		pc.br.Reset(nil)
		clientReaders.Put(pc.br)
		pc.br = nil
	}
	if pc.bw != nil {
		pc.bw.Reset(nil)
		clientWriters.Put(pc.bw)
		pc.bw = nil
	}
}

// Reused reports a connection that served a request before this one.
func (pc *Conn) Reused() bool { return pc.reused }

// Request is what the client needs of a request beside its head, which
// the caller writes itself (see Begin).
type Request struct {
	// Ctx is the client's: once something waits on the backend, a Ctx
	// that ends closes the connection under the exchange.
	Ctx    context.Context
	Method string
	Header http.Header // the client's; read for Expect: 100-continue
	// Body is sent after the head: Length bytes, chunked when Length is
	// -1, none when 0. The sender may outlive the caller's handler.
	Body   io.Reader
	Length int64
	// Inline, when set, is the whole body (Length bytes, held in memory),
	// written with the head instead of from Body.
	Inline  []byte
	Upgrade bool // the head asks to switch protocols
	// Send bounds each write of the request (0: none); Read the wait for
	// the response head, from when the body was sent.
	Send, Read time.Duration
	MaxHead    int // bytes of all response heads together
}

// clientExchange is the state of one request on a connection.
type clientExchange struct {
	req  Request
	stop func() bool // stops the client-cancellation hook; nil when none
	// lazy: the hook is not set yet, and is set only if the response head
	// takes longer than HookAfter or its body is not all read with it
	// (see HookAfter).
	lazy     bool
	held     bool // the head waits in rawsock until the first read
	started  bool // the head is flushed
	waiting  bool // for 100 Continue before sending the body
	deadline time.Time
	budget   int
	body     *bodySender // nil until a body is sent
	// received: some of the response arrived; bodyUnsent: the request
	// declared a body that was never sent (the backend answered first).
	received, bodyUnsent bool
	resBody              responseBody
}

// HookAfter is how long a request without a body or Upgrade waits for
// the response head before the client-cancellation hook is set. Setting
// it costs a request five allocations and ~2.5% of the router's CPU under
// net/http's server (context.AfterFunc on the request's context, issue
// 26), while most heads arrive well within it; a client that goes away
// before is noticed once the wait passes HookAfter, not at once. The
// deadline that times it is kept from one exchange to the next on a busy
// connection (issue 41), so the hook may be set up to twice HookAfter in,
// never later than the read timeout.
const HookAfter = 50 * time.Millisecond

// hook makes a client that goes away end the exchange with the backend,
// whatever it is waiting for: the connection is closed under it.
func (pc *Conn) hook() {
	pc.ex.lazy = false
	if ctx := pc.ex.req.Ctx; ctx.Done() != nil {
		pc.ex.stop = context.AfterFunc(ctx, pc.abort)
	}
}

// noResponse is a failure before any byte of the response arrived.
type noResponse struct{ err error }

func (e noResponse) Error() string { return e.err.Error() }
func (e noResponse) Unwrap() error { return e.err }

// NoResponse reports a failure before any byte of the response arrived.
func NoResponse(err error) bool {
	var nr noResponse
	return errors.As(err, &nr)
}

// InlineMax is the largest Request.Inline: well under the socket
// buffers, so the write cannot wait on a backend that answers without
// reading.
const InlineMax = 64 << 10

// Begin starts an exchange of r on the connection and returns the writer
// the caller writes the request head to, up to and with its empty line;
// Next sends it.
func (pc *Conn) Begin(r Request) *bufio.Writer {
	pc.ex = clientExchange{req: r, lazy: !r.Upgrade && r.Length == 0, budget: r.MaxHead}
	if !pc.ex.lazy {
		pc.hook()
	}
	// held: the request is written whole by rawsock's Send, which then
	// waits for the answer without a read that finds nothing yet; a held
	// body larger than the write buffer is written from where it is
	// instead of copied.
	pc.ex.held = pc.raw != nil && !r.Upgrade && (r.Length == 0 || r.Inline != nil && len(r.Inline) <= bufferSize)
	if pc.ex.held {
		pc.raw.Hold()
	}
	return pc.bw
}

// Next sends what is left of the request and returns the next response
// head: an informational one (1xx but 100 Continue and 101, which
// the caller may pass on; Next again reads on) or the final one, 101
// included. The backend's 100 Continue is not returned: it lets the body
// go. All heads share Request.MaxHead. A failure before anything of the
// response arrived answers true to NoResponse. The head is valid until
// the connection is ended.
func (pc *Conn) Next() (*Response, error) {
	ex := &pc.ex
	req := &ex.req
	length := req.Length
	if !ex.started {
		ex.started = true
		switch {
		case req.Send > 0:
			_ = pc.c.SetWriteDeadline(time.Now().Add(req.Send))
			pc.writeDeadline = true
		case pc.writeDeadline:
			// Left by an earlier request's send timeout.
			_ = pc.c.SetWriteDeadline(time.Time{})
			pc.writeDeadline = false
		}
		if req.Inline != nil {
			// Written from the held bytes, not read: a retry sends them again.
			pc.bw.Write(req.Inline)
			length = 0
			req.Length = 0
		}
		if ex.held {
			// The flush is the hold's last write, of bw's own buffer:
			// Send writes it from there.
			pc.raw.Borrow()
		}
		if err := pc.bw.Flush(); err != nil {
			return nil, noResponse{err}
		}
		// From when Get handed the connection out, microseconds ago:
		// no clock read of its own.
		ex.deadline = clockBase.Add(pc.takenAt + req.Read)
		ex.waiting = length != 0 && expectsContinue(req.Header)
		if length != 0 && !ex.waiting {
			ex.body = startBody(pc, req.Body, length, req.Read, req.Send)
		}
	}
	read, deadline := req.Read, ex.deadline
	for {
		dl := deadline
		if ex.waiting {
			// As net/http: wait a second for the backend's 100 Continue or
			// its refusal, then send the body anyway.
			if c := time.Now().Add(time.Second); c.Before(dl) {
				dl = c
			}
		}
		tick := false // dl is the lazy hook's, not the read timeout's
		if ex.lazy && HookAfter < read {
			// deadline is now + read: this is now + HookAfter.
			if c := deadline.Add(HookAfter - read); c.Before(dl) {
				dl, tick = c, true
			}
		}
		switch {
		case ex.body != nil:
			pc.rdl = time.Time{} // the sender's to move from now on
			ex.body.setHeaderDeadline(pc)
		case tick:
			// The tick only decides when the client-cancellation hook is
			// set: one set less than HookAfter ago still falls within
			// HookAfter after dl, and is kept, so that a busy connection
			// moves its deadline once per HookAfter instead of twice per
			// request (with the lift below).
			late := dl.Add(HookAfter)
			if late.After(deadline) {
				late = deadline
			}
			if pc.rdl.Before(dl) || pc.rdl.After(late) {
				pc.setReadDeadline(late)
			}
		default:
			pc.setReadDeadline(dl)
		}
		if ex.held {
			ex.held = false
			if err := pc.raw.Send(); err != nil {
				return nil, noResponse{err}
			}
		}
		if _, err := pc.br.Peek(1); err != nil {
			if ex.lazy && isTimeout(err) && time.Now().Before(deadline) {
				pc.hook()
				continue
			}
			if ex.waiting && isTimeout(err) && time.Now().Before(deadline) && req.Ctx.Err() == nil {
				ex.waiting = false
				ex.body = startBody(pc, req.Body, req.Length, read, req.Send)
				continue
			}
			if !ex.received {
				return nil, noResponse{err}
			}
			return nil, err
		}
		ex.received = true
		res := &pc.head
		done, err := res.readBuffered(pc.br, req.Method, &ex.budget)
		if !done {
			if tick {
				// The rest of the head is read under the read timeout.
				pc.setReadDeadline(deadline)
			}
			err = res.readLines(pc.br, req.Method, &ex.budget)
		}
		if err != nil {
			return nil, err
		}
		if res.Status >= 200 || res.Status == http.StatusSwitchingProtocols {
			switch {
			case ex.body != nil:
				ex.body.headReceived(pc)
				pc.rdl = time.Time{} // cleared under the sender's lock
			case res.Status != http.StatusSwitchingProtocols && !res.Chunked && res.Length >= 0 && int64(pc.br.Buffered()) >= res.Length:
				// The whole body came with the head: nothing reads the
				// socket before the next exchange sets its own deadline,
				// and the look at a pooled connection minds none (idle.go).
			default:
				// The body's reads move it on (awaitBody).
				pc.setReadDeadline(time.Time{})
			}
			if ex.waiting {
				ex.bodyUnsent = true
			}
			return res, nil
		}
		if res.Status == http.StatusContinue {
			if ex.waiting {
				ex.waiting = false
				ex.body = startBody(pc, req.Body, req.Length, read, req.Send)
			}
			continue
		}
		return res, nil
	}
}

// awaitBody bounds the wait for the next piece of the response body by
// read, as nginx's proxy_read_timeout bounds the wait between two reads:
// the deadline is moved to now+read when less than three quarters of read
// is left, so a stall ends the exchange between 3/4·read and read after
// the read began, with one deadline call per quarter of read at most.
func (pc *Conn) awaitBody(read time.Duration) {
	if s := pc.ex.body; s != nil {
		s.bodyDeadline(pc)
		return
	}
	now := time.Now()
	if pc.rdl.IsZero() || pc.rdl.Sub(now) < read-read/4 {
		pc.setReadDeadline(now.Add(read))
	}
}

// setReadDeadline sets the connection's read deadline and remembers it.
func (pc *Conn) setReadDeadline(t time.Time) {
	pc.rdl = t
	_ = pc.c.SetReadDeadline(t)
}

// BodyStarted reports that a sender started on the request body: it may
// be blocked reading it, so the body cannot be handed to another try even
// if nothing of it has been read yet.
func (pc *Conn) BodyStarted() bool { return pc.ex.body != nil }

// BodySender is closed when the exchange's body sender has ended, nil
// when no sender started. It stays valid after End: a sender may outlive
// the exchange, still reading the request body, and whoever owns that
// body waits on it before letting the body go.
func (pc *Conn) BodySender() <-chan struct{} {
	if s := pc.ex.body; s != nil {
		return s.done
	}
	return nil
}

// AwaitBody waits for the body sender to end and returns what broke it
// off, nil when the body was sent whole or none was sent.
func (pc *Conn) AwaitBody() error {
	s := pc.ex.body
	if s == nil {
		return nil
	}
	<-s.done
	return s.err
}

// BodyUnsent reports a request that declared a body it never sent: the
// backend answered before its 100 Continue.
func (pc *Conn) BodyUnsent() bool { return pc.ex.bodyUnsent }

// ClientError is the error reading the client's body failed with, nil if
// none. A failed read of the client's body cancels Request.Ctx before the
// sender sees the error; once Ctx ended, ClientError waits for the sender,
// which ends at once, to tell a failed body from a client gone.
func (pc *Conn) ClientError() error {
	s := pc.ex.body
	if s == nil {
		return nil
	}
	if pc.ex.req.Ctx.Err() != nil {
		<-s.done
	}
	return s.clientError()
}

// WriteError is the error that broke off sending the body to the
// backend, nil if none.
func (pc *Conn) WriteError() error { return pc.ex.body.writeFailure() }

// WatchClient sets the client-cancellation hook if the response body has
// yet to arrive: from then on a client that goes away closes the
// connection.
func (pc *Conn) WatchClient() {
	res := &pc.head
	if pc.ex.lazy && (res.Chunked || res.Length < 0 || int64(pc.br.Buffered()) < res.Length) {
		pc.hook()
	}
}

// Body reads the final response's body as its head frames it; at its end
// Trailer reads what follows a chunked one.
func (pc *Conn) Body() io.Reader {
	res := &pc.head
	pc.ex.resBody = responseBody{br: pc.br, remaining: res.Length, pc: pc, read: pc.ex.req.Read}
	if res.Chunked && res.Length != 0 {
		pc.ex.resBody.chunks = newChunkedReader(pc.br)
	}
	return &pc.ex.resBody
}

// BodyWaits reports whether the next Read of Body may wait for the
// backend: nothing of the body is in the connection's buffer, and some of
// it is still to come. A proxy sends what it relayed before such a read.
func (pc *Conn) BodyWaits() bool {
	b := &pc.ex.resBody
	return pc.br.Buffered() == 0 && (b.chunks != nil || b.remaining != 0)
}

// WholeBody takes the final response's body when it came whole with the
// head: a length, all of it in the connection's buffer. The bytes are
// valid until the connection is ended; false when the body is to be read
// with Body.
func (pc *Conn) WholeBody() ([]byte, bool) {
	res := &pc.head
	if res.Chunked || res.Length < 0 || int64(pc.br.Buffered()) < res.Length {
		return nil, false
	}
	n := int(res.Length)
	b, _ := pc.br.Peek(n)
	_, _ = pc.br.Discard(n)
	return b, true
}

// Trailer reads the trailer after a chunked body's last chunk; nil when
// the body is not chunked.
func (pc *Conn) Trailer() (http.Header, error) {
	if pc.ex.resBody.chunks == nil {
		return nil, nil
	}
	return pc.head.readTrailer(pc.br)
}

// End releases the connection: back to the pool when the exchange left it
// clean (complete: the response read to its end and the connection
// reusable; and the request body sent in full, the client still there),
// closed otherwise.
func (pc *Conn) End(complete bool) {
	ex := &pc.ex
	if ex.stop != nil && !ex.stop() {
		complete = false // the client went away: the hook closed the connection
	}
	if ex.body != nil {
		select {
		case <-ex.body.done:
			if ex.body.err != nil {
				complete = false
			}
		default:
			// Still sending the body: the connection is closed under the
			// sender, which may yet touch its buffers, so they are left to
			// the collector.
			_ = pc.c.Close()
			return
		}
	}
	if complete && !ex.bodyUnsent {
		pc.pool.put(pc)
		return
	}
	pc.Close()
}

// Detach stops watching the client, before its connection is taken over
// for a tunnel; false if it went away already, when the hook closed the
// connection (End it).
func (pc *Conn) Detach() bool {
	stop := pc.ex.stop
	pc.ex.stop = nil
	return stop == nil || stop()
}

// Tunnel hands over the connection after a 101, with what was read of it
// past the response head; the caller closes it with Close, and waits
// first for a body sender (AwaitBody), which writes the connection until
// it ends. A tunnel is bounded by its two ends, not by the request's send
// timeout nor by the read timeout the sender set as it ended.
func (pc *Conn) Tunnel() (net.Conn, *bufio.Reader) {
	_ = pc.c.SetWriteDeadline(time.Time{})
	if pc.ex.body != nil {
		_ = pc.c.SetReadDeadline(time.Time{})
	}
	return pc.c, pc.br
}
