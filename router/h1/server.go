// Package h1 is ramjet's HTTP/1: the server that serves the router, the
// framing guard for net/http's server (GuardFraming), the client the
// router proxies to HTTP backends with, and the message rules (rules.go)
// all three share.
//
// The client is the wire half of a proxied exchange; what goes on the
// wire and what is done with the answer stay the caller's. A Pool keeps
// keep-alive connections per endpoint address, dialled with the caller's
// connect timeout. One request on a Conn:
//
//	pc, err := pool.Get(ctx, addr, fresh, connect)
//	bw := pc.Begin(h1.Request{Ctx: ..., Method: ..., Body: ..., Length: ..., Send: ..., Read: ..., MaxHead: ...})
//	// the caller writes its request head into bw, up to the empty line
//	res, err := pc.Next()  // each informational head, then the final one
//	io.Copy(dst, pc.Body()); trailer, err := pc.Trailer()
//	pc.End(complete)       // back to the pool, or closed
//
// Conn owns the rest: holding a short request for one write, sending the
// body on its own goroutine (chunked when its length is unknown, after
// 100 Continue when asked), the deadlines of send and read timeouts,
// closing the connection when the client goes away (watched only once a
// wait outlasts HookAfter), reading response heads with their framing
// (Response), and refusing an idle connection that received anything
// while it waited (idle.go). NoResponse, Reused and BodyStarted tell the
// caller whether a failed try may be sent again; Detach and Tunnel hand
// the connection over after a 101.
//
// The server is an HTTP/1.1 server loop that serves an http.Handler
// with one goroutine per connection and nothing per request but the
// request's own parse: the response writer, buffers and request context
// are the connection's and are reused from one request to the next, and no
// goroutine watches the connection unless the handler waits on the
// request's context (issue 26: net/http's server side was about a third
// of the router's CPU).
//
// It keeps net/http's server semantics for what it serves (parsing,
// keep-alive, one request at a time, bodies and their limits, 100-continue,
// response framing, trailers, Flush, Hijack, deadlines) and hands what it
// does not serve, TLS connections that negotiated h2 and cleartext HTTP/2
// with prior knowledge, to router/h2's server (Server.HTTP2) or an
// http.Server (Server.Fallback). The deliberate differences
// from net/http's server are listed on Server and tested.
package h1

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Server serves HTTP/1.x connections with Handler.
//
// Where it differs from net/http's server on purpose:
//   - A request with both Content-Length and Transfer-Encoding: chunked,
//     with Transfer-Encoding on HTTP/1.0, or with a folded field line
//     (obs-fold: one that begins with a space or tab, which net/http joins
//     to the line before) answers 400 and closes the connection (as nginx,
//     and as net/http behind GuardFraming). Another transfer coding
//     answers 501 on HTTP/1.1, Content-Length or not, as nginx.
//   - A field nginx takes once (Content-Length, Transfer-Encoding,
//     Expect, Authorization, Content-Range, the If- fields) sent twice
//     answers 400 and closes the connection, as nginx.
//   - A method other than upper-case letters, '_' and '-' answers 400,
//     as nginx's parser refuses it; TRACE answers 405 without the
//     handler, as nginx answers it, past the 400 of a path nginx's
//     parser refuses. A "*" target (OPTIONS *) answers 400, as nginx's
//     parser refuses it.
//   - A field whose name holds a byte that is no token byte (but no
//     space, control byte or DEL) is dropped, as nginx drops it under
//     ingress-nginx's ignore-invalid-headers default, where net/http
//     refuses the head; unless the name is longer than 4 KiB.
//   - An HTTP/1.0 request that asked for keep-alive, answered when keep-alive
//     is off or the connection's last request was served (MaxRequests,
//     MaxConnAge), is told "Connection: close", as nginx tells it, where
//     net/http says "keep-alive" and closes.
//   - Empty lines before a request line are skipped, as nginx skips
//     them, where net/http skips a few after a POST only.
//   - A chunk-size line is read as nginx reads it (chunkSize): a size
//     past 2^59-1 is a malformed body, leading zeros are not counted
//     against a length, and a space or tab, as well as ';', starts an
//     extension.
//   - An Expect field other than 100-continue is ignored, as nginx
//     ignores it, where net/http answers 417.
//   - The request's context is cancelled when the client goes only from
//     the moment the handler first asks for its Done channel (context
//     AfterFunc, WithCancel and select all do); Err alone does not start
//     the watch. It is cancelled when the handler returns, as net/http's.
//   - Header fields are written in the handler's map order, not sorted;
//     changes to the header map after WriteHeader reach the client when
//     the head was not sent yet, unless the handler declared trailers.
//   - Chunks follow the handler's writes, not a 2 KiB buffer.
//   - The request (its Header map and URL too), its context and the
//     ResponseWriter must not be used after ServeHTTP returns (net/http's
//     documented rule): they are reused for the connection's next
//     request, unless the handler waited on the context (then they are
//     new for the next one). A handler that hands any of them to a
//     goroutine that outlives it copies what it needs first; its Body,
//     taken before it returned, answers http.ErrBodyReadAfterClose once
//     the next request began.
//   - The idle wait may last up to a tenth longer than IdleTimeout (one
//     second at most), and 50 ms more after a response written with the
//     wait for the next request (a client that sends its next request
//     once it has the answer, on a plain TCP connection or a TLS one
//     over rawsock.NetConn); a head that came whole is not timed.
//     Shutdown counts a connection as idle only once that wait ended,
//     50 ms at most after its response.
//   - No http.ServerContextKey value; http.LocalAddrContextKey is set.
type Server struct {
	Handler http.Handler
	// ReadHeaderTimeout bounds the wait for a request's head from its
	// first byte (for the first request, from the accept), unless the
	// whole head came with that byte; IdleTimeout the wait for the first
	// byte of the next one (0: ReadHeaderTimeout), which may last a tenth
	// longer, one second at most, and 50 ms more: a busy connection moves
	// its idle deadline that often, not once per request.
	ReadHeaderTimeout, IdleTimeout time.Duration
	// MaxRequests is the most requests a connection serves (nginx's
	// keepalive_requests, 1000 under ingress-nginx's keep-alive-requests):
	// the last one's response closes it, so that long-lived clients
	// reconnect and spread over the replicas. 0: no limit.
	MaxRequests int
	// MaxConnAge is how long a connection takes requests (nginx's
	// keepalive_time, 1 h by default): the response of a request that
	// began later closes it. 0: no limit.
	MaxConnAge time.Duration
	// MaxHeaderBytes bounds a request head (0: http.DefaultMaxHeaderBytes),
	// with net/http's 4 KiB of slack; over it: 431. HeaderBuffers, when
	// set, bound heads in its place.
	MaxHeaderBytes int
	// HeaderBuffers bound request heads as nginx's buffers do (ingress-nginx's
	// large-client-header-buffers): a request line that does not fit one
	// buffer answers 414, a header line or a head that does not fit them
	// 400 "Request Header Or Cookie Too Large", and the connection closes.
	// They bound HTTP/1 only: the HTTP/2 connections handed to Fallback
	// are bounded by its MaxHeaderBytes, as net/http bounds them.
	HeaderBuffers HeaderBuffers
	ErrorLog      *log.Logger
	// ConnContext modifies the context of each connection, as
	// http.Server's.
	ConnContext func(ctx context.Context, c net.Conn) context.Context
	// Fallback serves the connections this loop hands over: TLS
	// connections that negotiated "h2" (bare *tls.Conn), and, when its
	// Protocols allow unencrypted HTTP/2, connections that start with the
	// HTTP/2 preface. Nil: such connections are served as HTTP/1 (and
	// fail as net/http's HTTP/1-only server fails them).
	Fallback *http.Server
	// HTTP2, if set, serves the connections Fallback would (router/h2's
	// Server), each on the goroutine that accepted it; Fallback then
	// serves none, but its Protocols still say whether cleartext HTTP/2
	// is taken.
	HTTP2 ConnServer
	// Refused, if set, is told of each request whose head the server ends
	// without Handler, so that an embedder logs it as nginx logs it (every
	// request a byte of which was read): one it refuses (400, 414, 431,
	// 501, 505; 405 for TRACE, on a connection that stays open), one the
	// client broke off (400) and one that timed out (408, unanswered). It
	// runs on the connection's goroutine once the answer was written.
	Refused func(*Refusal)
	// Conns, if set, counts the connections served, as nginx's
	// stub_status; those handed over (HTTP2, Fallback) leave it, for their
	// server to count.
	Conns *ConnStats

	mu        sync.Mutex
	listeners map[*net.Listener]struct{}
	conns     map[*conn]struct{}
	handoff   *chanListener
	fallback  sync.Once
	fbDone    chan struct{}

	shutdown      atomic.Bool
	keepAlivesOff atomic.Bool
}

// Refusal is a request the server ended itself (Server.Refused). It and
// its Request are valid only during the call.
type Refusal struct {
	// Request is what the head gave of the request: RemoteAddr, TLS and
	// the connection's context always; Method, RequestURI, URL, Proto,
	// Host and Header once the whole head was read, else empty.
	Request *http.Request
	// RequestLine is the request line as far as it was read (nginx's
	// $request), without its line ending.
	RequestLine string
	// Status is what nginx logs: the status answered, 400 for a head the
	// client broke off, 408 for one that timed out.
	Status int
	// Start is when the server began to refuse it, or for a head that
	// timed out, when its wait began; Duration runs from there until the
	// answer was written.
	Start    time.Time
	Duration time.Duration
	// HeadBytes and BodyBytes are the sizes of the answer's head and
	// body; 0 when none was written.
	HeadBytes, BodyBytes int64
}

// ConnServer serves connections handed over whole (router/h2.Server).
type ConnServer interface {
	// ServeConn serves c until it ends, and closes it.
	ServeConn(c net.Conn)
	Shutdown(ctx context.Context) error
	Close() error
	SetKeepAlivesEnabled(v bool)
}

// Serve accepts connections on ln and serves each on its own goroutine
// until ln fails or the server is shut down (http.ErrServerClosed).
func (s *Server) Serve(ln net.Listener) error {
	if s.shutdown.Load() {
		return http.ErrServerClosed
	}
	s.mu.Lock()
	if s.listeners == nil {
		s.listeners = make(map[*net.Listener]struct{})
		s.conns = make(map[*conn]struct{})
	}
	s.listeners[&ln] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.listeners, &ln)
		s.mu.Unlock()
	}()
	if s.Fallback != nil && s.HTTP2 == nil {
		s.startFallback(ln.Addr())
	}
	base := context.Background()
	var delay time.Duration
	for {
		rw, err := ln.Accept()
		if err != nil {
			if s.shutdown.Load() {
				return http.ErrServerClosed
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				// As net/http: back off on temporary accept errors.
				delay = min(max(2*delay, 5*time.Millisecond), time.Second)
				s.logf("h1: Accept error: %v; retrying in %v", err, delay)
				time.Sleep(delay)
				continue
			}
			return err
		}
		delay = 0
		s.Conns.Accepted()
		c := newConn(s, rw)
		if !s.track(c) {
			rw.Close()
			return http.ErrServerClosed
		}
		go c.serve(base)
	}
}

func (s *Server) track(c *conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.shutdown.Load() {
		return false
	}
	s.conns[c] = struct{}{}
	return true
}

func (s *Server) untrack(c *conn) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
}

func (s *Server) startFallback(addr net.Addr) {
	s.fallback.Do(func() {
		s.handoff = &chanListener{addr: addr, conns: make(chan net.Conn), done: make(chan struct{})}
		s.fbDone = make(chan struct{})
		go func() {
			defer close(s.fbDone)
			_ = s.Fallback.Serve(s.handoff)
		}()
	})
}

// handOver gives c to the fallback server; it reports false when there is
// none or it is closed.
func (s *Server) handOver(c net.Conn) bool {
	if s.HTTP2 != nil {
		s.HTTP2.ServeConn(c)
		return true
	}
	if s.handoff == nil {
		return false
	}
	select {
	case s.handoff.conns <- c:
		return true
	case <-s.handoff.done:
		return false
	}
}

// SetKeepAlivesEnabled(false) makes every response close its connection
// and closes idle ones, as http.Server's; the fallback's too.
func (s *Server) SetKeepAlivesEnabled(v bool) {
	s.keepAlivesOff.Store(!v)
	if s.Fallback != nil {
		s.Fallback.SetKeepAlivesEnabled(v)
	}
	if s.HTTP2 != nil {
		s.HTTP2.SetKeepAlivesEnabled(v)
	}
	if !v {
		s.closeIdle(false)
	}
}

func (s *Server) keepAlives() bool { return !s.keepAlivesOff.Load() && !s.shutdown.Load() }

// Shutdown stops accepting, closes idle connections, and waits for the
// others to finish their request, until ctx is done (then ctx's error),
// as http.Server's Shutdown; the fallback server is shut down with it.
func (s *Server) Shutdown(ctx context.Context) error {
	s.shutdown.Store(true)
	lnErr := s.closeListeners()
	var fbErr chan error
	if s.Fallback != nil || s.HTTP2 != nil {
		fbErr = make(chan error, 1)
		go func() {
			var err error
			if s.Fallback != nil {
				err = s.Fallback.Shutdown(ctx)
			}
			if s.HTTP2 != nil {
				if err2 := s.HTTP2.Shutdown(ctx); err == nil {
					err = err2
				}
			}
			fbErr <- err
		}()
	}
	wait := time.Millisecond
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		if s.closeIdle(true) {
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-timer.C:
			wait = min(2*wait, 500*time.Millisecond)
			timer.Reset(wait)
		}
	}
	if fbErr != nil {
		if err := <-fbErr; err != nil {
			return err
		}
	}
	return lnErr
}

// Close closes the listeners and every connection, the fallback's too.
func (s *Server) Close() error {
	s.shutdown.Store(true)
	err := s.closeListeners()
	s.mu.Lock()
	for c := range s.conns {
		c.rwc.Close()
		delete(s.conns, c)
	}
	s.mu.Unlock()
	if s.Fallback != nil {
		if ferr := s.Fallback.Close(); err == nil {
			err = ferr
		}
	}
	if s.HTTP2 != nil {
		if ferr := s.HTTP2.Close(); err == nil {
			err = ferr
		}
	}
	return err
}

func (s *Server) closeListeners() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var err error
	for ln := range s.listeners {
		if cerr := (*ln).Close(); cerr != nil && err == nil {
			err = cerr
		}
	}
	return err
}

// closeIdle closes the connections waiting for a request (with
// shuttingDown, also those accepted over 5 s ago that sent nothing, as
// net/http) and reports whether none is left.
func (s *Server) closeIdle(shuttingDown bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	quiet := true
	for c := range s.conns {
		st := c.state.Load()
		if st == stateNew && shuttingDown && time.Since(c.accepted) > 5*time.Second {
			st = stateIdle
			c.state.CompareAndSwap(stateNew, stateIdle)
		}
		if st == stateIdle && c.state.CompareAndSwap(stateIdle, stateClosed) {
			c.rwc.Close()
			delete(s.conns, c)
			continue
		}
		quiet = false
	}
	return quiet
}

func (s *Server) logf(format string, args ...any) {
	if s.ErrorLog != nil {
		s.ErrorLog.Printf(format, args...)
	} else {
		log.Printf(format, args...)
	}
}

// chanListener is the fallback server's listener: connections the loop
// hands over.
type chanListener struct {
	addr  net.Addr
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func (l *chanListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *chanListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *chanListener) Addr() net.Addr { return l.addr }

// replayConn is a connection whose first bytes were read into r already.
type replayConn struct {
	net.Conn
	r io.Reader
}

func (c *replayConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// h2Preface starts every HTTP/2 connection with prior knowledge.
const h2Preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

// isH2TLS reports whether rwc is a TLS connection that negotiated h2.
func isH2TLS(rwc net.Conn) (*tls.ConnectionState, bool) {
	cs, ok := rwc.(interface{ ConnectionState() tls.ConnectionState })
	if !ok {
		return nil, false
	}
	st := cs.ConnectionState()
	return &st, st.NegotiatedProtocol == "h2"
}

// startsWithPreface reports whether the buffered start of a connection
// is the HTTP/2 preface, reading no further than it must: net/http reads
// exactly so far too.
func startsWithPreface(b []byte) bool {
	n := min(len(b), len(h2Preface))
	return bytes.Equal(b[:n], []byte(h2Preface[:n]))
}

// ConnStats counts the client connections of the servers that share it
// (Server.Conns, router/h2's Server.Conns, and an embedder's own for the
// listeners and servers it runs) as nginx's stub_status counts them, for
// ingress-nginx's nginx_process_connections metrics. Each connection keeps
// its state and request count in its own ConnEntry, so that serving a
// request updates nothing shared: a connection is added once and removed
// once, and Counts sums the entries.
type ConnStats struct {
	accepted atomic.Uint64
	mu       sync.Mutex
	live     map[*ConnEntry]struct{}
	requests uint64 // of the connections removed
}

// A ConnEntry's state: the requests reading their head (ConnReading each)
// plus those being served (ConnWriting each), or ConnHandshake; 0 is a
// connection waiting for a request (nginx's idle keep-alive, and a new
// one before its first byte).
const (
	ConnWriting int64 = 1
	ConnReading int64 = 1 << 32
	// ConnHandshake is a TLS handshake under way, which nginx counts as
	// active only: no request yet, and not waiting.
	ConnHandshake int64 = 1 << 62
)

// ConnEntry is one connection's part of a ConnStats.
type ConnEntry struct {
	state    atomic.Int64
	requests atomic.Uint64
}

// Set sets the state (see ConnWriting).
func (e *ConnEntry) Set(state int64) { e.state.Store(state) }

// Add adds to the state, from several goroutines of one connection.
func (e *ConnEntry) Add(delta int64) { e.state.Add(delta) }

// Request counts a request (nginx counts one from its first byte; each
// HTTP/2 stream is one).
func (e *ConnEntry) Request() { e.requests.Add(1) }

// Accepted counts a connection accepted (nginx's accepts and handled).
// A connection handed from one server to another is counted once.
func (s *ConnStats) Accepted() {
	if s != nil {
		s.accepted.Add(1)
	}
}

// Open adds e, in state, to the connections open.
func (s *ConnStats) Open(e *ConnEntry, state int64) {
	if s == nil {
		return
	}
	e.state.Store(state)
	e.requests.Store(0)
	s.mu.Lock()
	if s.live == nil {
		s.live = make(map[*ConnEntry]struct{})
	}
	s.live[e] = struct{}{}
	s.mu.Unlock()
}

// Close removes e, keeping its requests in the total; closing it again
// does nothing.
func (s *ConnStats) Close(e *ConnEntry) {
	if s == nil {
		return
	}
	s.mu.Lock()
	if _, ok := s.live[e]; ok {
		delete(s.live, e)
		s.requests += e.requests.Load()
	}
	s.mu.Unlock()
}

// ConnCounts are nginx's stub_status numbers.
type ConnCounts struct {
	// Active, Reading, Writing and Waiting are now; Reading and Writing
	// count requests (an HTTP/2 connection's streams each), and a TLS
	// handshake under way is only active.
	Active, Reading, Writing, Waiting uint64
	// Accepted (equal to nginx's handled: no connection is refused for
	// a limit) and Requests are totals.
	Accepted, Requests uint64
}

// Counts sums the connections' entries.
func (s *ConnStats) Counts() ConnCounts {
	var n ConnCounts
	if s == nil {
		return n
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n.Requests = s.requests
	for e := range s.live {
		n.Active++
		n.Requests += e.requests.Load()
		switch st := e.state.Load(); {
		case st == 0:
			n.Waiting++
		case st&ConnHandshake == 0:
			n.Reading += uint64(st >> 32)
			n.Writing += uint64(st & (1<<32 - 1))
		}
	}
	// Loaded last, so that it is never below Active.
	n.Accepted = s.accepted.Load()
	return n
}
