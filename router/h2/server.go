// Package h2 is ramjet's HTTP/2 server (RFC 9113, with HPACK, RFC 7541,
// written here): it serves an http.Handler on connections that negotiated
// "h2" over TLS, or that began with the HTTP/2 preface (h2c with prior
// knowledge), handed over by router/h1's loop (h1.Server.HTTP2). Client
// is its counterpart toward gRPC backends: an http.RoundTripper over
// cleartext HTTP/2 (client.go).
//
// It is built to spend little per request (issue 41: net/http's HTTP/2
// server cost the router 1.8× nginx's CPU per request). One goroutine per
// connection reads the frames; each request's handler runs on a pooled
// worker goroutine, which keeps its grown stack from one request to the
// next; a handler writes its response's frames itself into the
// connection's write buffer, and whoever finds no write under way writes
// the buffer out, so that frames queued while a write is in flight go out
// in one write (and the reader's own frames, acknowledgements and window
// updates, go out once per pass over what one read brought). A short
// response is one HEADERS and one DATA frame in one write. Streams, their
// requests, header maps and buffers are reused.
//
// What it keeps of net/http's HTTP/2 server: the request as net/http
// builds it (Proto "HTTP/2.0", Host from :authority, RequestURI, TLS,
// RemoteAddr, a context cancelled when the stream or connection ends),
// http.ResponseController's Flush and SetReadDeadline, trailers
// (declared, or with http.TrailerPrefix), 1xx responses, 100-continue,
// Content-Length added to a response written whole, Date and sniffed
// Content-Type; its bounds: SETTINGS_MAX_HEADER_LIST_SIZE (MaxHeaderBytes
// plus 320, over it 431), max concurrent streams, no more handlers
// running than that with at most four times as many waiting, a bounded
// header block (CONTINUATION floods), a bounded write queue (SETTINGS and
// PING floods make the reader wait for the client to read), the idle
// timeout. Against rapid reset it also counts the client's resets of
// streams not yet answered: past 200 and four times the streams answered,
// GOAWAY ENHANCE_YOUR_CALM; and handlers start at the end of the pass
// over what one read brought, so a stream reset (or found malformed) in
// the read that opened it runs no handler.
//
// Where it differs from net/http's: no server push and no extended
// CONNECT; streams are not prioritised (RFC 9113 deprecates the scheme);
// a :method nginx's parser does not read (h1.NginxMethod), two Host
// fields (a second :authority, a Host disagreeing with it), another field
// nginx takes once sent twice (h1.UniqueField: two Content-Lengths, equal
// ones too), a Content-Length that is no number, or that promises a
// body to a request its head ends, a :path that is no absolute path ("*"
// included), a :scheme nginx does not read, a CONNECT (no :path), and a
// field name or value router/h1 refuses (a name in upper case aside:
// reset, as h2spec requires) answer 400 without the handler, and TRACE 405, as nginx
// answers them (Server.Refused); a field whose name has another byte no
// token has ('@', past 0x7f) is dropped, as nginx and router/h1 drop it;
// a write to the client that makes no progress for WriteTimeout (60 s,
// nginx's send_timeout), a flow-control window kept shut included, ends
// the connection (the stream's), where net/http waits for the peer.
package h2

import (
	"context"
	"crypto/tls"
	"log"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"ramjet.dev/ramjet/router/h1"
)

// Server serves HTTP/2 connections with Handler.
type Server struct {
	Handler http.Handler
	// IdleTimeout closes a connection without streams after this long
	// (GOAWAY NO_ERROR); ReadHeaderTimeout bounds the wait for the
	// client's preface and first SETTINGS (0: IdleTimeout). 0: none.
	IdleTimeout, ReadHeaderTimeout time.Duration
	// WriteTimeout ends a connection whose writes make no progress this
	// long, or a stream whose flow-control window stays shut this long.
	// 0: 60 s (nginx's send_timeout); negative: none.
	WriteTimeout time.Duration
	// MaxHeaderBytes bounds a request's header list as net/http does:
	// SETTINGS_MAX_HEADER_LIST_SIZE is MaxHeaderBytes+320, and a request
	// over it answers 431. 0: http.DefaultMaxHeaderBytes.
	MaxHeaderBytes int
	// MaxConcurrentStreams is SETTINGS_MAX_CONCURRENT_STREAMS. 0: 250, as
	// net/http's.
	MaxConcurrentStreams uint32
	// MaxRequests is the most streams a connection serves (nginx's
	// keepalive_requests, 1000 under ingress-nginx's keep-alive-requests):
	// the last one opened sends GOAWAY naming it, and the connection
	// closes once it is answered, so that long-lived clients reconnect
	// and spread over the replicas. 0: no limit.
	MaxRequests int
	// MaxConnAge is how long a connection takes new streams (nginx's
	// keepalive_time, 1 h by default): the first opened later sends
	// GOAWAY naming it, and the connection closes once it is answered.
	// 0: no limit.
	MaxConnAge time.Duration
	// Refused, if set, is told of each request the server answers
	// without Handler because nginx refuses it once its head is read
	// (400: a :method nginx's parser does not read, two Host fields or
	// :authority disagreeing with Host, a field nginx takes once sent
	// twice, a bad Content-Length, :path or :scheme, a field name or
	// value router/h1 refuses, a CONNECT, with no request line; 405:
	// TRACE; 431: a header list over the limit, with no request line), so
	// that an embedder logs it as nginx does, as router/h1's
	// Server.Refused. It runs on the stream's goroutine once the answer
	// was written.
	Refused func(*h1.Refusal)
	// ErrorLog receives handler panics. Nil: the log package's.
	ErrorLog *log.Logger
	// ConnContext modifies each connection's context, as http.Server's.
	ConnContext func(ctx context.Context, c net.Conn) context.Context
	// Conns, if set, counts the connections served, as nginx's
	// stub_status: waiting without streams, each stream one request
	// being served (reading while a header block spans frames). They are
	// not counted as accepted: the server that handed them over did.
	Conns *h1.ConnStats

	mu            sync.Mutex
	conns         map[*conn]struct{}
	shutdown      atomic.Bool
	keepAlivesOff atomic.Bool
}

const (
	// resetAllowance is how many streams a client may reset before their
	// answer beyond four times those answered (rapid reset, conn.onRST).
	resetAllowance = 200
	// The windows this server grants: per stream and for the connection
	// (net/http's sizes). The connection's comes back as DATA is queued
	// while the connection holds at most bufferedBound of request bodies
	// not yet read (conn.bufferedMore), so a connection holds at most
	// bufferedBound+connWindow of them.
	streamWindow  = 1 << 20
	connWindow    = 1 << 20
	bufferedBound = 4 << 20
	// A header block over this many bytes, compressed, ends the connection
	// (a CONTINUATION flood); one up to it is decoded whole, so that a
	// list over the advertised size answers 431 with HPACK's state intact.
	maxBlockSlack = 64 << 10
	// wbufLimit bounds the bytes queued for the client while a write is
	// under way: past it, writers wait.
	wbufLimit = 256 << 10
	// responseBuffer is how much of a response body a stream holds before
	// sending it, so that a short response goes out whole.
	responseBuffer = 8 << 10
)

func (s *Server) maxHeaderList() uint32 {
	n := s.MaxHeaderBytes
	if n <= 0 {
		n = http.DefaultMaxHeaderBytes
	}
	return uint32(n) + 320
}

func (s *Server) maxStreams() uint32 {
	if s.MaxConcurrentStreams == 0 {
		return 250
	}
	return s.MaxConcurrentStreams
}

func (s *Server) writeTimeout() time.Duration {
	switch {
	case s.WriteTimeout == 0:
		return 60 * time.Second
	case s.WriteTimeout < 0:
		return 0
	}
	return s.WriteTimeout
}

func (s *Server) logf(format string, args ...any) {
	if s.ErrorLog != nil {
		s.ErrorLog.Printf(format, args...)
	} else {
		log.Printf(format, args...)
	}
}

// ServeConn serves c, a connection whose next bytes are the client's
// preface, until it ends; it closes c. A TLS connection's state comes
// from its ConnectionState method.
func (s *Server) ServeConn(c net.Conn) { s.serveConn(c, false) }

// serveConn serves c; sawPreface: the client's preface was read from it
// already.
func (s *Server) serveConn(c net.Conn, sawPreface bool) {
	if s.shutdown.Load() {
		c.Close()
		return
	}
	sc := newConn(s, c)
	s.mu.Lock()
	if s.conns == nil {
		s.conns = make(map[*conn]struct{})
	}
	s.conns[sc] = struct{}{}
	s.mu.Unlock()
	s.Conns.Open(&sc.stat, 0)
	defer func() {
		s.Conns.Close(&sc.stat)
		s.mu.Lock()
		delete(s.conns, sc)
		s.mu.Unlock()
	}()
	if s.shutdown.Load() {
		// Shutdown began while this one was being added.
		sc.goAway()
	}
	sc.serve(sawPreface)
}

// Shutdown sends every connection GOAWAY, lets the streams under way
// finish, closes each connection as its last stream ends, and waits for
// that until ctx is done (then ctx's error).
func (s *Server) Shutdown(ctx context.Context) error {
	s.shutdown.Store(true)
	wait := time.Millisecond
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		s.mu.Lock()
		n := len(s.conns)
		for c := range s.conns {
			c.goAway()
		}
		s.mu.Unlock()
		if n == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-timer.C:
			wait = min(2*wait, 500*time.Millisecond)
			timer.Reset(wait)
		}
	}
}

// Close closes every connection at once.
func (s *Server) Close() error {
	s.shutdown.Store(true)
	s.mu.Lock()
	for c := range s.conns {
		c.nc.Close()
	}
	s.mu.Unlock()
	return nil
}

// SetKeepAlivesEnabled(false) sends every connection GOAWAY, as
// http.Server's does for HTTP/2; connections then end with their streams,
// and a new connection serves one request.
func (s *Server) SetKeepAlivesEnabled(v bool) {
	s.keepAlivesOff.Store(!v)
	if v {
		return
	}
	s.mu.Lock()
	for c := range s.conns {
		c.goAway()
	}
	s.mu.Unlock()
}

// tlsState is c's TLS state, nil for a cleartext connection.
func tlsState(c net.Conn) *tls.ConnectionState {
	cs, ok := c.(interface{ ConnectionState() tls.ConnectionState })
	if !ok {
		return nil
	}
	st := cs.ConnectionState()
	return &st
}

// Workers: handlers run on pooled goroutines that keep their stacks
// between requests. At most maxIdleWorkers wait for work.
const maxIdleWorkers = 256

var workers struct {
	mu   sync.Mutex
	idle []chan *stream
}

func dispatch(st *stream) {
	workers.mu.Lock()
	if n := len(workers.idle); n > 0 {
		ch := workers.idle[n-1]
		workers.idle = workers.idle[:n-1]
		workers.mu.Unlock()
		ch <- st
		return
	}
	workers.mu.Unlock()
	go work(st)
}

func work(st *stream) {
	var ch chan *stream
	for {
		st.run()
		workers.mu.Lock()
		if len(workers.idle) >= maxIdleWorkers {
			workers.mu.Unlock()
			return
		}
		if ch == nil {
			ch = make(chan *stream)
		}
		workers.idle = append(workers.idle, ch)
		workers.mu.Unlock()
		st = <-ch
	}
}

// ConfigureServer makes hs hand its HTTP/2 connections to s, as
// golang.org/x/net/http2's ConfigureServer does for that package: those
// that negotiated "h2" over TLS and, when hs.Protocols allow cleartext
// HTTP/2, those with prior knowledge. s.Handler nil: hs.Handler (or
// http.DefaultServeMux). hs's Shutdown sends s's connections GOAWAY and
// waits for them as for its own.
func ConfigureServer(hs *http.Server, s *Server) {
	if hs.TLSNextProto == nil {
		hs.TLSNextProto = make(map[string]func(*http.Server, *tls.Conn, http.Handler))
	}
	if s.Handler == nil {
		s.Handler = hs.Handler
		if s.Handler == nil {
			s.Handler = http.DefaultServeMux
		}
	}
	hs.TLSNextProto["h2"] = func(_ *http.Server, c *tls.Conn, _ http.Handler) { s.ServeConn(c) }
	// net/http's key for cleartext HTTP/2 with prior knowledge: the
	// tls.Conn it passes wraps the plain connection, whose preface net/http
	// has read.
	hs.TLSNextProto["unencrypted_http2"] = func(_ *http.Server, c *tls.Conn, _ http.Handler) {
		u, ok := c.NetConn().(interface{ UnencryptedNetConn() net.Conn })
		if !ok {
			c.Close()
			return
		}
		s.serveConn(u.UnencryptedNetConn(), true)
	}
	hs.RegisterOnShutdown(func() {
		s.shutdown.Store(true)
		s.SetKeepAlivesEnabled(false)
	})
}
