package h2

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/textproto"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Client is an HTTP/2 client for a proxy's gRPC backends: cleartext with
// prior knowledge (h2c), or over TLS, on the connections DialContext
// opens. It is an http.RoundTripper meant to sit behind
// httputil.ReverseProxy, in place of net/http's HTTP/2 transport, whose
// per-call work (a goroutine and a select per call, each request header
// validated and lower-cased, HEADERS flushed apart from DATA) is most of
// a proxied unary call's CPU.
//
// Calls to one address share its connections, up to the server's
// SETTINGS_MAX_CONCURRENT_STREAMS each; a request body is sent by a
// goroutine of its own while the response is read, so streaming calls in
// both directions work. Header fields go out as literals never indexed,
// as nginx's grpc_pass sends them. A response's trailers are the
// Response's Trailer once its body has returned io.EOF. A request's
// httptrace.ClientTrace hears what net/http's HTTP/2 transport reports:
// GetConn, GotConn, Got1xxResponse, and WroteHeaders and WroteRequest
// once the call's HEADERS and its END_STREAM were written (the latter is
// where a Router's proxy-read-timeout starts through Options.Transport).
type Client struct {
	// DialContext opens a connection to addr; nil: net.Dialer's.
	DialContext func(ctx context.Context, network, addr string) (net.Conn, error)
	// ResponseHeaderTimeout bounds the wait for a response's head once the
	// whole request was queued (its END_STREAM), as nginx's
	// grpc_read_timeout starts once the request was sent; past it the call
	// fails with an error whose Timeout() is true. Zero: no bound.
	ResponseHeaderTimeout time.Duration
	// IdleConnTimeout closes a connection that has had no call for this
	// long; zero: 90 s.
	IdleConnTimeout time.Duration
	// TLSClientConfig, when set, has every connection speak TLS ("h2"
	// negotiated by ALPN) and calls be https: the config's ServerName, or
	// the address's host, names the server. Nil: cleartext, calls http.
	TLSClientConfig *tls.Config
	// TLSHandshakeTimeout bounds a TLS handshake; zero: 10 s.
	TLSHandshakeTimeout time.Duration
	// MaxConnRequests bounds the calls one connection carries, as nginx's
	// keepalive_requests bounds an upstream connection's requests: a
	// connection that has had as many takes no new call and closes once
	// its calls end. 1: a connection per call, as nginx's upstream without
	// keepalive. Zero: no bound.
	MaxConnRequests int
	// MaxConnAge bounds how long after its dial a connection takes new
	// calls, as nginx's keepalive_time; it closes once its calls end.
	// Zero: no bound.
	MaxConnAge time.Duration
	// MaxIdleConnsPerHost bounds the connections to one address left with
	// no call, as nginx's keepalive bounds its cache: those idle longest
	// close first. Zero: no bound.
	MaxIdleConnsPerHost int

	mu    sync.Mutex
	conns map[string][]*clientConn
	dials map[string]*dialing
	// pooled counts conns[addr], for a connection that goes idle to see
	// without mu whether its address may have too many (trimIdle).
	pooled map[string]*atomic.Int32
}

type dialing struct {
	done chan struct{}
	cc   *clientConn
	err  error
}

const (
	clientStreamWindow = 4 << 20 // each stream's receive window
	clientConnWindow   = 1 << 30 // the connection's
	// clientMaxHeader bounds a response's header block, decoded.
	clientMaxHeader = 1 << 20
	// defaultPeerStreams is the concurrency assumed until the server's
	// SETTINGS say otherwise (RFC 9113 §6.5.2 advises at least 100).
	defaultPeerStreams = 100
)

// errRefused is a call the server did not process (REFUSED_STREAM, or a
// stream past a GOAWAY's last): it may go out again on a new stream.
var errRefused = errors.New("h2: stream refused by the server")

// errConnGone is a connection that could take no new stream after all.
var errConnGone = errors.New("h2: connection closing")

type timeoutError struct{ what string }

func (e timeoutError) Error() string { return "h2: timeout awaiting " + e.what }
func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return true }

// NotSentError is a call that failed before its HEADERS were written to
// the server: the connection ended, after it was opened, before they
// went out, and nothing of the request's body was read. The server never
// saw the call, so it may go out again, to another server too, as nginx
// passes a request it has not sent to the next upstream. Err is why.
type NotSentError struct{ Err error }

func (e *NotSentError) Error() string { return "h2: call not sent: " + e.Err.Error() }
func (e *NotSentError) Unwrap() error { return e.Err }

// StreamError is a stream the server reset.
type StreamError struct{ Code uint32 }

func (e StreamError) Error() string {
	return "h2: stream reset by the server, error code " + strconv.FormatUint(uint64(e.Code), 10)
}

// RoundTrip sends req on a stream of a connection to req.URL.Host and
// returns the response once its head has come.
func (c *Client) RoundTrip(req *http.Request) (*http.Response, error) {
	scheme, port := "http", "80"
	if c.TLSClientConfig != nil {
		scheme, port = "https", "443"
	}
	addr := req.URL.Host
	if _, _, err := net.SplitHostPort(addr); err != nil {
		addr = net.JoinHostPort(addr, port)
	}
	hasBody := req.Body != nil && req.Body != http.NoBody
	closeBody := func() {
		if hasBody {
			req.Body.Close()
		}
	}
	if req.URL.Scheme != scheme && !(req.URL.Scheme == "" && scheme == "http") {
		closeBody()
		return nil, fmt.Errorf("h2: scheme %q: this client speaks %s", req.URL.Scheme, scheme)
	}
	ctx := req.Context()
	trace := httptrace.ContextClientTrace(ctx)
	for tries := 0; ; tries++ {
		if trace != nil && trace.GetConn != nil {
			trace.GetConn(addr)
		}
		cc, dialled, err := c.conn(ctx, addr)
		if err == errConnGone && tries < 3 {
			continue
		}
		if err != nil {
			closeBody()
			return nil, err
		}
		if trace != nil && trace.GotConn != nil {
			// As net/http's HTTP/2 reports it: a connection this call did
			// not open is reused.
			trace.GotConn(httptrace.GotConnInfo{Conn: cc.nc, Reused: !dialled})
		}
		st, err := cc.open(req, hasBody, trace)
		if err == errConnGone && tries < 3 {
			continue
		}
		if err != nil {
			closeBody()
			return nil, err
		}
		res, err := st.await(ctx, c.ResponseHeaderTimeout)
		if err == errRefused && tries < 3 && st.claimRetry() {
			// Nothing of the call was processed nor of its body read.
			continue
		}
		if err != nil {
			if ctx.Err() == nil && st.unsent() {
				err = &NotSentError{Err: err}
			}
			st.abandonBody()
		}
		return res, err
	}
}

// CloseIdleConnections closes the connections with no call in flight.
func (c *Client) CloseIdleConnections() {
	c.mu.Lock()
	var idle []*clientConn
	for _, l := range c.conns {
		idle = append(idle, l...)
	}
	c.mu.Unlock()
	for _, cc := range idle {
		cc.closeIfIdle()
	}
}

// conn is a connection to addr with room for a stream: one of the pool's,
// or a new one (a dial under way for addr is waited for, not repeated).
// dialled says this call opened it.
func (c *Client) conn(ctx context.Context, addr string) (cc *clientConn, dialled bool, err error) {
	for {
		c.mu.Lock()
		for _, cc := range c.conns[addr] {
			if cc.reserve() {
				c.mu.Unlock()
				return cc, false, nil
			}
		}
		// A connection per call is never shared: calls do not wait for
		// each other's dials, and the pool does not keep it.
		shared := c.MaxConnRequests != 1
		if d := c.dials[addr]; d != nil && shared {
			c.mu.Unlock()
			select {
			case <-d.done:
			case <-ctx.Done():
				return nil, false, ctx.Err()
			}
			if d.err != nil && !errors.Is(d.err, context.Canceled) && !errors.Is(d.err, context.DeadlineExceeded) {
				return nil, false, d.err
			}
			// Dialled, or the dial's own caller gave up (its context is
			// not this call's): look again.
			continue
		}
		d := &dialing{done: make(chan struct{})}
		if c.dials == nil {
			c.dials = make(map[string]*dialing)
			c.conns = make(map[string][]*clientConn)
			c.pooled = make(map[string]*atomic.Int32)
		}
		if shared {
			c.dials[addr] = d
		}
		c.mu.Unlock()
		d.cc, d.err = c.dial(ctx, addr)
		room := false
		c.mu.Lock()
		if shared {
			delete(c.dials, addr)
		}
		if d.err == nil {
			if shared {
				c.conns[addr] = append(c.conns[addr], d.cc)
				n := c.pooled[addr]
				if n == nil {
					n = new(atomic.Int32)
					c.pooled[addr] = n
				}
				n.Add(1)
				d.cc.pooled.Store(n)
			}
			room = d.cc.reserve()
		}
		c.mu.Unlock()
		close(d.done)
		if d.err != nil {
			return nil, false, d.err
		}
		if !room {
			// Gone already, or a server that allows no stream: that one
			// fails the call rather than being dialled again and again.
			d.cc.mu.Lock()
			none := d.cc.maxStreams == 0 && !d.cc.closed && !d.cc.goingAway
			d.cc.mu.Unlock()
			d.cc.closeIfIdle()
			// One closed before it joined the pool missed its drop.
			c.drop(d.cc)
			if none {
				return nil, false, fmt.Errorf("h2: backend %s allows no streams (SETTINGS_MAX_CONCURRENT_STREAMS 0)", addr)
			}
			return nil, false, errConnGone
		}
		return d.cc, true, nil
	}
}

func (c *Client) dial(ctx context.Context, addr string) (*clientConn, error) {
	dial := c.DialContext
	if dial == nil {
		var d net.Dialer
		dial = d.DialContext
	}
	nc, err := dial(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	if c.TLSClientConfig != nil {
		if nc, err = c.handshake(ctx, nc, addr); err != nil {
			return nil, err
		}
	}
	cc := &clientConn{
		cl:         c,
		nc:         nc,
		addr:       addr,
		born:       time.Now(),
		br:         bufio.NewReaderSize(nc, defaultFrameSize+frameHeaderLen+4096),
		dec:        newDecoder(4096, 2*clientMaxHeader),
		streams:    make(map[uint32]*clientStream),
		nextID:     1,
		maxStreams: defaultPeerStreams,
		sendWindow: defaultWindow,
		peerWindow: defaultWindow,
		peerFrame:  defaultFrameSize,
		wbuf:       make([]byte, 0, 4096),
		settled:    make(chan struct{}),
	}
	cc.cond.L = &cc.mu
	b := append(cc.wbuf, clientPreface...)
	b = appendFrameHeader(b, 3*6, frameSettings, 0, 0)
	b = appendSetting(b, settingEnablePush, 0)
	b = appendSetting(b, settingInitialWindowSize, clientStreamWindow)
	b = appendSetting(b, settingMaxHeaderListSize, clientMaxHeader)
	cc.wbuf = appendWindowUpdate(b, 0, clientConnWindow-defaultWindow)
	cc.recvWindow = clientConnWindow
	cc.mu.Lock()
	cc.flushLocked()
	err = cc.werr
	cc.mu.Unlock()
	if err != nil {
		nc.Close()
		return nil, &NotSentError{Err: err}
	}
	go cc.readLoop()
	// The server's SETTINGS come first: its stream limit is known before
	// the connection takes more calls than it may allow.
	wait := c.ResponseHeaderTimeout
	if wait <= 0 {
		wait = 10 * time.Second
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-cc.settled:
	case <-ctx.Done():
		err = ctx.Err()
	case <-t.C:
		err = timeoutError{"the backend's HTTP/2 SETTINGS"}
	}
	cc.mu.Lock()
	if err == nil && cc.closed {
		// Lost before the server's SETTINGS: no call went out on it.
		err = &NotSentError{Err: cc.werr}
	}
	if err != nil {
		cc.closeLocked(err)
	} else {
		// Idle from the start: a connection whose first call fails
		// before its stream opens is closed in time like any other.
		cc.idleCheck()
	}
	cc.mu.Unlock()
	if err != nil {
		return nil, err
	}
	return cc, nil
}

// handshake runs TLS on nc, "h2" required of ALPN.
func (c *Client) handshake(ctx context.Context, nc net.Conn, addr string) (net.Conn, error) {
	cfg := c.TLSClientConfig.Clone()
	cfg.NextProtos = []string{"h2"}
	if cfg.ServerName == "" {
		cfg.ServerName, _, _ = net.SplitHostPort(addr)
	}
	d := c.TLSHandshakeTimeout
	if d <= 0 {
		d = 10 * time.Second
	}
	hctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	tc := tls.Client(nc, cfg)
	if err := tc.HandshakeContext(hctx); err != nil {
		nc.Close()
		return nil, err
	}
	if p := tc.ConnectionState().NegotiatedProtocol; p != "h2" {
		tc.Close()
		return nil, fmt.Errorf("h2: backend %s negotiated %q over TLS, not h2", addr, p)
	}
	return tc, nil
}

// Clone is a Client of c's settings and no connections.
func (c *Client) Clone() *Client {
	return &Client{
		DialContext:           c.DialContext,
		ResponseHeaderTimeout: c.ResponseHeaderTimeout,
		IdleConnTimeout:       c.IdleConnTimeout,
		TLSClientConfig:       c.TLSClientConfig.Clone(),
		TLSHandshakeTimeout:   c.TLSHandshakeTimeout,
		MaxConnRequests:       c.MaxConnRequests,
		MaxConnAge:            c.MaxConnAge,
		MaxIdleConnsPerHost:   c.MaxIdleConnsPerHost,
	}
}

func (c *Client) drop(cc *clientConn) {
	c.mu.Lock()
	defer c.mu.Unlock()
	l := c.conns[cc.addr]
	for i, x := range l {
		if x == cc {
			l = append(l[:i:i], l[i+1:]...)
			break
		}
	}
	if n := c.pooled[cc.addr]; n != nil {
		n.Store(int32(len(l)))
	}
	if len(l) == 0 {
		delete(c.conns, cc.addr)
		delete(c.pooled, cc.addr)
	} else {
		c.conns[cc.addr] = l
	}
}

// trimIdle retires addr's connections with no call past
// MaxIdleConnsPerHost, those idle longest first, as nginx's keepalive
// cache drops its oldest.
func (c *Client) trimIdle(addr string) {
	type idleConn struct {
		cc *clientConn
		at time.Time
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var idle []idleConn
	for _, cc := range c.conns[addr] {
		cc.mu.Lock()
		if cc.idleNow() {
			idle = append(idle, idleConn{cc, cc.idleAt})
		}
		cc.mu.Unlock()
	}
	extra := len(idle) - c.MaxIdleConnsPerHost
	if extra <= 0 {
		return
	}
	slices.SortFunc(idle, func(a, b idleConn) int { return a.at.Compare(b.at) })
	for _, x := range idle[:extra] {
		x.cc.mu.Lock()
		if x.cc.idleNow() {
			x.cc.retire()
		}
		x.cc.mu.Unlock()
	}
}

// clientConn is one connection. The reader (readLoop) owns br, dec and
// the header block being read; the rest is under mu.
type clientConn struct {
	cl   *Client
	nc   net.Conn
	addr string
	br   *bufio.Reader
	dec  *decoder
	// The header block being read: its stream and fragments.
	hdrStream uint32
	hdrEnd    bool
	hdrBlock  []byte
	canon     map[string]string

	mu         sync.Mutex
	cond       sync.Cond // body writers waiting for window or room
	streams    map[uint32]*clientStream
	reserved   int                          // slots taken by calls about to open (reserve)
	pooled     atomic.Pointer[atomic.Int32] // Client.pooled[addr], once in the pool
	nextID     uint32
	opened     int       // streams opened, for MaxConnRequests
	born       time.Time // for MaxConnAge
	maxStreams uint32    // the server's SETTINGS_MAX_CONCURRENT_STREAMS
	sendWindow int64
	peerWindow int64 // the server's SETTINGS_INITIAL_WINDOW_SIZE
	peerFrame  int
	recvWindow int64 // what the server may still send on the connection
	recvCredit int64 // read by bodies, not yet given back
	wbuf       []byte
	spare      []byte
	flushing   bool
	flushSoon  bool
	werr       error
	closed     bool
	goingAway  bool
	idle       *time.Timer
	idleAt     time.Time     // when the last stream went
	settled    chan struct{} // closed once the server's first SETTINGS came, or the connection closed
	sawSets    bool

	// wrote are the httptrace reports due once what wbuf holds is
	// written, in the order it was queued. Under mu.
	wrote []wroteReport
	// taken and written count the bytes of the connection handed to a
	// write and written (flushLocked): whether a call's HEADERS were
	// written (clientStream.unsent). Under mu.
	taken, written int64
}

// reserve takes a stream slot of cc for a call about to open, if it has
// one; open gives the reservation back. Under Client.mu.
func (cc *clientConn) reserve() bool {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if cc.closed || cc.goingAway || cc.werr != nil || cc.nextID+2*uint32(cc.reserved) >= 1<<31-2 ||
		uint32(len(cc.streams)+cc.reserved) >= cc.maxStreams {
		return false
	}
	if cc.spent() {
		if len(cc.streams) == 0 && cc.reserved == 0 {
			cc.retire()
		}
		return false
	}
	cc.reserved++
	return true
}

// spent reports whether cc has had its MaxConnRequests, those reserved
// counted, or is past its MaxConnAge: it takes no new call. Under mu.
func (cc *clientConn) spent() bool {
	if n := cc.cl.MaxConnRequests; n > 0 && cc.opened+cc.reserved >= n {
		return true
	}
	d := cc.cl.MaxConnAge
	return d > 0 && time.Since(cc.born) >= d
}

// idleNow reports whether cc has no call and may take one. Under mu.
func (cc *clientConn) idleNow() bool {
	return len(cc.streams) == 0 && cc.reserved == 0 && !cc.closed && !cc.goingAway && cc.werr == nil
}

// retire closes a spent connection with no call: it takes none from now
// on, and a GOAWAY goes before the close (closeIfIdle, which writes, is
// not for a caller holding mu). Under mu.
func (cc *clientConn) retire() {
	cc.goingAway = true
	go cc.closeIfIdle()
}

// clientStream is one call.
type clientStream struct {
	cc  *clientConn
	id  uint32
	req *http.Request
	// wake is signalled whenever the stream's state moves: head, data,
	// end, failure.
	wake chan struct{}

	// Under cc.mu.
	res        *http.Response
	err        error // the stream's failure, nil while it goes on
	body       []byte
	bodyR      int
	ended      bool // the server's END_STREAM came
	trailer    http.Header
	sendWindow int64
	recvWindow int64
	recvCredit int64
	sentEnd    bool // END_STREAM or RST_STREAM sent
	taken      bool // the body writer has begun
	retired    bool // refused before that: the call went out again
	closedBody bool // the response body was closed
	removed    bool
	// headersEnd is the connection's taken count once its HEADERS are
	// written (unsent).
	headersEnd int64

	reqBody  io.ReadCloser // the request's body, nil without one
	bodyOnce sync.Once
	// trace has the hooks that want the request reported written
	// (WroteHeaders, WroteRequest), nil when none does.
	trace *httptrace.ClientTrace
}

// wroteReport is a stream's HEADERS (end: its END_STREAM too) or its
// END_STREAM queued, to be reported to its trace once written.
type wroteReport struct {
	st           *clientStream
	headers, end bool
}

// queueWrote has st's trace told once what is queued now is written.
// Under mu.
func (cc *clientConn) queueWrote(st *clientStream, headers, end bool) {
	if st.trace != nil {
		cc.wrote = append(cc.wrote, wroteReport{st, headers, end})
	}
}

// reportWrote tells the traces of ws that their frames were written, or
// that writing them failed with err (WroteRequest's Err, as net/http's
// transports report it). Not under mu: the hooks are the caller's.
func reportWrote(ws []wroteReport, err error) {
	for _, w := range ws {
		t := w.st.trace
		if w.headers && err == nil && t.WroteHeaders != nil {
			t.WroteHeaders()
		}
		if w.end && t.WroteRequest != nil {
			t.WroteRequest(httptrace.WroteRequestInfo{Err: err})
		}
	}
}

func (st *clientStream) signal() {
	select {
	case st.wake <- struct{}{}:
	default:
	}
}

// unsent reports whether a failed call never reached the server, and so
// may go out again: its connection ended before a write took its HEADERS
// whole (a write under way may yet take them), and its body writer has
// not begun, and now never will.
func (st *clientStream) unsent() bool {
	cc := st.cc
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if !cc.closed || cc.written >= st.headersEnd || cc.flushing && cc.taken >= st.headersEnd || st.taken {
		return false
	}
	st.retired = true
	return true
}

// claimRetry reports whether a refused call may go out again: its body
// writer has not begun, and now never will.
func (st *clientStream) claimRetry() bool {
	st.cc.mu.Lock()
	defer st.cc.mu.Unlock()
	if st.taken {
		return false
	}
	st.retired = true
	return true
}

// open starts a stream for req: its HEADERS are queued, and its body
// handed to a writer of its own.
func (cc *clientConn) open(req *http.Request, hasBody bool, trace *httptrace.ClientTrace) (*clientStream, error) {
	st := &clientStream{cc: cc, req: req, wake: make(chan struct{}, 1), recvWindow: clientStreamWindow}
	if trace != nil && (trace.WroteHeaders != nil || trace.WroteRequest != nil) {
		st.trace = trace
	}
	if hasBody {
		// Set before the stream is registered: the read loop may abandon
		// the body as soon as it finds the stream.
		st.reqBody = req.Body
	}
	cc.mu.Lock()
	reserved := cc.reserved > 0
	if reserved {
		cc.reserved--
	}
	if !reserved || cc.closed || cc.goingAway || cc.werr != nil {
		cc.mu.Unlock()
		return nil, errConnGone
	}
	start := len(cc.wbuf)
	// On an error nothing was queued: the block is built past wbuf's
	// length and wbuf set to it only once whole.
	if err := cc.appendRequestHeaders(req, hasBody); err != nil {
		cc.mu.Unlock()
		return nil, err
	}
	st.id = cc.nextID
	cc.nextID += 2
	// The stream's ID goes into its frames now that it is known.
	fixStreamIDs(cc.wbuf[start:], st.id)
	st.headersEnd = cc.taken + int64(len(cc.wbuf))
	cc.opened++
	st.sendWindow = cc.peerWindow
	st.sentEnd = !hasBody
	cc.streams[st.id] = st
	cc.queueWrote(st, true, !hasBody)
	if cc.idle != nil {
		cc.idle.Stop()
	}
	cc.queueSoon()
	cc.mu.Unlock()
	if hasBody {
		go st.writeBody(req.Body)
	}
	return st, nil
}

// fixStreamIDs sets the stream of the frames in b.
func fixStreamIDs(b []byte, id uint32) {
	for len(b) >= frameHeaderLen {
		n := int(b[0])<<16 | int(b[1])<<8 | int(b[2])
		b[5], b[6], b[7], b[8] = byte(id>>24), byte(id>>16), byte(id>>8), byte(id)
		b = b[frameHeaderLen+n:]
	}
}

// appendRequestHeaders appends req's header block as HEADERS and
// CONTINUATION frames of stream 0 (open sets the stream). Under mu.
func (cc *clientConn) appendRequestHeaders(req *http.Request, hasBody bool) error {
	method := req.Method
	if method == "" {
		method = http.MethodGet
	}
	if method == http.MethodConnect {
		return errors.New("h2: CONNECT is not proxied over HTTP/2")
	}
	host := req.Host
	if host == "" {
		host = req.URL.Host
	}
	path := req.URL.RequestURI()
	if path == "" || path[0] != '/' && path != "*" {
		return fmt.Errorf("h2: request target %q is not a path", path)
	}
	if !validValue(host) || !validValue(path) || strings.ContainsAny(host, " ") {
		return errors.New("h2: request authority or path holds a byte HTTP/2 forbids")
	}
	// The block is built after the frame header it will sit behind; a
	// block over one frame is cut into CONTINUATIONs afterwards.
	at := len(cc.wbuf)
	b := appendFrameHeader(cc.wbuf, 0, frameHeaders, 0, 0)
	switch method {
	case http.MethodGet:
		b = append(b, 0x82)
	case http.MethodPost:
		b = append(b, 0x83)
	default:
		b = appendField(b, ":method", method)
	}
	if req.URL.Scheme == "https" {
		b = append(b, 0x87) // :scheme https; RoundTrip let it through only over TLS
	} else {
		b = append(b, 0x86) // :scheme http
	}
	if path == "/" {
		b = append(b, 0x84)
	} else {
		b = appendRawField(b, ":path", path)
	}
	b = appendRawField(b, ":authority", host)
	var lower [64]byte
	for k, vv := range req.Header {
		switch k {
		case "Host", "Connection", "Proxy-Connection", "Keep-Alive", "Transfer-Encoding", "Upgrade",
			"connection", "proxy-connection", "keep-alive", "transfer-encoding", "upgrade", "host":
			continue
		case "Te", "te":
			// Only "trailers" may pass (§8.2.2).
			if len(vv) == 0 || vv[0] != "trailers" {
				continue
			}
			b = appendRawField(b, "te", "trailers")
			continue
		case "Content-Length", "content-length":
			continue // from req.ContentLength
		}
		if !validHeaderName(k) {
			return fmt.Errorf("h2: request header name %q is not valid", k)
		}
		name := lowerName(lower[:], k)
		for _, v := range vv {
			if !validValue(v) {
				return fmt.Errorf("h2: request header %q has a value HTTP/2 forbids", k)
			}
			b = appendRawField(b, name, v)
		}
	}
	if req.ContentLength > 0 && hasBody {
		b = appendRawField(b, "content-length", strconv.FormatInt(req.ContentLength, 10))
	}
	block := len(b) - at - frameHeaderLen
	var flags uint8 = flagEndHeaders
	if !hasBody {
		flags |= flagEndStream
	}
	if block <= cc.peerFrame {
		b[at], b[at+1], b[at+2], b[at+4] = byte(block>>16), byte(block>>8), byte(block), flags
		cc.wbuf = b
		return nil
	}
	// Too large for one frame: copy the block out and frame it again.
	blk := append([]byte(nil), b[at+frameHeaderLen:]...)
	b = b[:at]
	first := true
	for len(blk) > 0 {
		n := min(len(blk), cc.peerFrame)
		typ, fl := uint8(frameContinuation), uint8(0)
		if first {
			typ, fl = frameHeaders, flags&flagEndStream
		}
		if n == len(blk) {
			fl |= flagEndHeaders
		}
		b = appendFrameHeader(b, n, typ, fl, 0)
		b = append(b, blk[:n]...)
		blk = blk[n:]
		first = false
	}
	cc.wbuf = b
	return nil
}

// await waits for the response's head.
// The timeout starts once the request was sent whole, as nginx's
// grpc_read_timeout does: a streaming call's backend may answer only once
// the last message came.
func (st *clientStream) await(ctx context.Context, timeout time.Duration) (*http.Response, error) {
	var (
		tc    <-chan time.Time
		timer *time.Timer
	)
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	done := ctx.Done()
	cc := st.cc
	for {
		cc.mu.Lock()
		res, err, sent := st.res, st.err, st.sentEnd
		cc.mu.Unlock()
		if res != nil {
			return res, nil
		}
		if err != nil {
			return nil, err
		}
		if timeout > 0 && sent && timer == nil {
			timer = time.NewTimer(timeout)
			tc = timer.C
		}
		select {
		case <-st.wake:
		case <-done:
			st.fail(ctx.Err(), codeCancel)
		case <-tc:
			st.fail(timeoutError{"response headers"}, codeCancel)
		}
	}
}

// fail ends st with err and resets it with code (noReset: the server
// reset it) unless both sides had ended.
func (st *clientStream) fail(err error, code errCode) {
	cc := st.cc
	cc.mu.Lock()
	defer cc.mu.Unlock()
	st.failLocked(err, code)
}

// failBody fails st with the error reading its request body, unless the
// request's half had ended already: a body abandoned once the answer was
// whole fails its reads, which say nothing of the call.
func (st *clientStream) failBody(err error) {
	cc := st.cc
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if !st.sentEnd {
		st.failLocked(err, codeCancel)
	}
}

// noReset is a failure that sends no RST_STREAM.
const noReset errCode = 1<<32 - 1

func (st *clientStream) failLocked(err error, code errCode) {
	cc := st.cc
	if st.err == nil && !(st.ended && st.bodyR == len(st.body)) {
		st.err = err
	}
	if st.res != nil {
		// RoundTrip has its answer: no retry will want the body.
		st.abandonBody()
	}
	if st.removed || st.sentEnd && st.ended {
		st.signal()
		return
	}
	if code != noReset && !cc.closed && cc.werr == nil {
		cc.wbuf = appendRSTStream(cc.wbuf, st.id, code)
		cc.queueSoon()
	}
	st.sentEnd, st.ended = true, true
	cc.cond.Broadcast()
	st.signal()
	cc.release(st)
}

// release forgets st once both sides are done: its slot is free, and
// frames for it are no longer expected. Data it buffered stays for its
// body to read. Under mu.
func (cc *clientConn) release(st *clientStream) {
	if st.removed || !st.sentEnd || !st.ended {
		return
	}
	st.removed = true
	delete(cc.streams, st.id)
	cc.idleCheck()
}

// idleCheck arms the idle timer once no stream is left, or closes a
// connection going away. Under mu.
func (cc *clientConn) idleCheck() {
	if len(cc.streams) > 0 {
		return
	}
	if cc.goingAway {
		cc.closeLocked(errConnGone)
		return
	}
	if cc.reserved == 0 && cc.spent() {
		cc.retire()
		return
	}
	d := cc.cl.IdleConnTimeout
	if d <= 0 {
		d = 90 * time.Second
	}
	cc.idleAt = time.Now()
	if n := cc.cl.MaxIdleConnsPerHost; n > 0 {
		if p := cc.pooled.Load(); p != nil && p.Load() > int32(n) {
			go cc.cl.trimIdle(cc.addr)
		}
	}
	if cc.idle == nil {
		cc.idle = time.AfterFunc(d, func() {
			cc.mu.Lock()
			stale := len(cc.streams) == 0 && time.Since(cc.idleAt) >= d
			cc.mu.Unlock()
			if stale {
				cc.closeIfIdle()
			}
		})
		return
	}
	cc.idle.Reset(d)
}

func (cc *clientConn) closeIfIdle() {
	cc.mu.Lock()
	if len(cc.streams) > 0 || cc.closed {
		cc.mu.Unlock()
		return
	}
	cc.goingAway = true
	cc.wbuf = appendGoAway(cc.wbuf, 0, codeNo)
	if !cc.flushing {
		cc.flushLocked()
	}
	cc.closeLocked(errConnGone)
	cc.mu.Unlock()
}

// closeLocked closes the connection and fails its streams with err.
func (cc *clientConn) closeLocked(err error) {
	if cc.closed {
		return
	}
	cc.closed = true
	if cc.werr == nil {
		cc.werr = err
	}
	for _, st := range cc.streams {
		if st.err == nil && !(st.ended && st.res != nil) {
			st.err = err
		}
		st.ended, st.sentEnd, st.removed = true, true, true
		st.signal()
	}
	clear(cc.streams)
	cc.cond.Broadcast()
	if !cc.sawSets {
		cc.sawSets = true
		close(cc.settled)
	}
	if cc.idle != nil {
		cc.idle.Stop()
	}
	if !cc.flushing {
		cc.nc.Close()
	}
	go cc.cl.drop(cc)
}

// writeBody sends the request body as DATA frames as the windows allow.
func (st *clientStream) writeBody(body io.ReadCloser) {
	cc := st.cc
	cc.mu.Lock()
	if st.retired {
		// The call went out again on another stream, with the body.
		cc.mu.Unlock()
		return
	}
	// From here the body may be partly read: a refused call cannot go out
	// again.
	st.taken = true
	cc.mu.Unlock()
	defer st.closeReqBody()
	bp := bodyBuffers.Get().(*[]byte)
	defer bodyBuffers.Put(bp)
	buf := *bp
	for {
		n, err := body.Read(buf)
		end := err == io.EOF
		if err != nil && !end {
			st.failBody(err)
			return
		}
		if werr := st.sendData(buf[:n], end); werr != nil || end {
			return
		}
	}
}

var bodyBuffers = sync.Pool{New: func() any { b := make([]byte, defaultFrameSize); return &b }}

// closeReqBody closes the request body once, whoever comes first: the
// body writer as it ends, or abandonBody.
func (st *clientStream) closeReqBody() {
	st.bodyOnce.Do(func() { st.reqBody.Close() })
}

// abandonBody closes the request body of a call that stops sending it,
// so that a body writer blocked in its Read returns: a RoundTripper
// closes the body, on errors too. In a goroutine, as mu may be held and
// an inbound body's Close may wait on its connection.
func (st *clientStream) abandonBody() {
	if st.reqBody != nil {
		go st.closeReqBody()
	}
}

// errStreamDone stops a body writer whose stream ended or was reset.
var errStreamDone = errors.New("h2: stream done")

// sendData queues p as DATA frames, the last with END_STREAM when end.
func (st *clientStream) sendData(p []byte, end bool) error {
	cc := st.cc
	cc.mu.Lock()
	defer cc.mu.Unlock()
	for {
		if st.sentEnd || cc.closed || cc.werr != nil {
			return errStreamDone
		}
		if len(p) == 0 {
			if end {
				cc.wbuf = appendFrameHeader(cc.wbuf, 0, frameData, flagEndStream, st.id)
				st.sentEnd = true
				cc.queueWrote(st, false, true)
				st.signal() // the head's timeout starts (await)
				cc.queueSoon()
				cc.release(st)
			}
			return nil
		}
		if cc.sendWindow <= 0 || st.sendWindow <= 0 || len(cc.wbuf) > wbufLimit && cc.flushing {
			cc.cond.Wait()
			continue
		}
		n := min(int64(len(p)), cc.sendWindow, st.sendWindow, int64(cc.peerFrame))
		var flags uint8
		if end && int(n) == len(p) {
			flags = flagEndStream
		}
		cc.wbuf = appendFrameHeader(cc.wbuf, int(n), frameData, flags, st.id)
		cc.wbuf = append(cc.wbuf, p[:n]...)
		cc.sendWindow -= n
		st.sendWindow -= n
		p = p[n:]
		if flags != 0 {
			st.sentEnd = true
			cc.queueWrote(st, false, true)
			st.signal() // the head's timeout starts (await)
			cc.queueSoon()
			cc.release(st)
			return nil
		}
		cc.queueSoon()
	}
}

// queueSoon has what is queued written by a goroutine of its own, which
// runs once the goroutine queueing blocks: a call's HEADERS and DATA, and
// other calls' frames queued meanwhile, leave in one write. Under mu.
func (cc *clientConn) queueSoon() {
	if cc.flushing || cc.flushSoon || len(cc.wbuf) == 0 {
		return
	}
	if len(cc.wbuf) > wbufLimit {
		cc.flushLocked()
		return
	}
	cc.flushSoon = true
	go func() {
		cc.mu.Lock()
		cc.flushSoon = false
		if !cc.flushing && len(cc.wbuf) > 0 {
			cc.flushLocked()
		}
		cc.mu.Unlock()
	}()
}

// flushLocked writes wbuf out, and what is queued while it writes, with
// mu held except during the writes.
func (cc *clientConn) flushLocked() {
	cc.flushing = true
	for len(cc.wbuf) > 0 && cc.werr == nil {
		buf, wrote := cc.wbuf, cc.wrote
		cc.wbuf, cc.spare, cc.wrote = cc.spare[:0], nil, nil
		cc.taken += int64(len(buf))
		cc.mu.Unlock()
		n, err := cc.nc.Write(buf)
		if wrote != nil {
			reportWrote(wrote, err)
		}
		cc.mu.Lock()
		cc.written += int64(n)
		if cap(buf) <= 64<<10 {
			cc.spare = buf[:0]
		}
		if err != nil && cc.werr == nil {
			cc.werr = err
		}
		cc.cond.Broadcast()
	}
	cc.flushing = false
	if cc.werr != nil {
		cc.wbuf, cc.wrote = cc.wbuf[:0], nil
		if !cc.closed {
			cc.closeLocked(cc.werr)
		}
	}
	if cc.closed {
		cc.nc.Close()
	}
}

// credit gives n bytes read (or dropped) back to the connection window.
// Under mu.
func (cc *clientConn) credit(n int64) {
	cc.recvCredit += n
	if cc.recvCredit >= clientConnWindow/2 && !cc.closed {
		cc.wbuf = appendWindowUpdate(cc.wbuf, 0, uint32(cc.recvCredit))
		cc.recvWindow += cc.recvCredit
		cc.recvCredit = 0
		cc.queueSoon()
	}
}

// clientBody is a response's body.
type clientBody struct {
	st   *clientStream
	done <-chan struct{}
	ctx  context.Context
}

func (b *clientBody) Read(p []byte) (int, error) {
	st := b.st
	cc := st.cc
	for {
		cc.mu.Lock()
		if st.closedBody {
			cc.mu.Unlock()
			return 0, http.ErrBodyReadAfterClose
		}
		if st.bodyR < len(st.body) {
			n := takeBuffered(p, &st.body, &st.bodyR)
			st.giveBack(int64(n))
			var err error
			if st.ended && len(st.body) == 0 {
				err = st.endErr()
			}
			cc.mu.Unlock()
			return n, err
		}
		if st.ended || st.err != nil {
			err := st.endErr()
			cc.mu.Unlock()
			return 0, err
		}
		cc.mu.Unlock()
		select {
		case <-st.wake:
		case <-b.done:
			st.fail(b.ctx.Err(), codeCancel)
		}
	}
}

// Waits reports whether the next Read may wait for the server: nothing
// of the body is buffered and more may come. A proxy flushes what it
// relayed before such a read.
func (b *clientBody) Waits() bool {
	st := b.st
	st.cc.mu.Lock()
	defer st.cc.mu.Unlock()
	return st.bodyR >= len(st.body) && !st.ended && st.err == nil && !st.closedBody
}

// endErr is what a read past the body's data returns. Under mu.
func (st *clientStream) endErr() error {
	if st.err != nil {
		return st.err
	}
	if st.trailer != nil {
		st.res.Trailer = st.trailer
	}
	st.stopRequest()
	return io.EOF
}

// stopRequest ends a request still being sent once its response has
// ended: the call is over (a gRPC server's status ends it), and a body
// writer waiting for window would otherwise wait for good. Under mu.
func (st *clientStream) stopRequest() {
	cc := st.cc
	if st.sentEnd || st.removed {
		return
	}
	if !cc.closed && cc.werr == nil {
		cc.wbuf = appendRSTStream(cc.wbuf, st.id, codeCancel)
		cc.queueSoon()
	}
	st.abandonBody()
	st.sentEnd = true
	cc.cond.Broadcast()
	cc.release(st)
}

// giveBack credits n bytes read to the stream's and the connection's
// windows. Under mu.
func (st *clientStream) giveBack(n int64) {
	cc := st.cc
	if !st.ended {
		st.recvCredit += n
		if st.recvCredit >= clientStreamWindow/2 && !cc.closed {
			cc.wbuf = appendWindowUpdate(cc.wbuf, st.id, uint32(st.recvCredit))
			st.recvWindow += st.recvCredit
			st.recvCredit = 0
			cc.queueSoon()
		}
	}
	cc.credit(n)
}

func (b *clientBody) Close() error {
	st := b.st
	cc := st.cc
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if st.closedBody {
		return nil
	}
	st.closedBody = true
	if n := len(st.body) - st.bodyR; n > 0 {
		st.body, st.bodyR = nil, 0
		cc.credit(int64(n))
	}
	if !st.ended {
		// Not read to its end: the server stops sending.
		st.failLocked(errBodyClosed, codeCancel)
		return nil
	}
	st.stopRequest()
	cc.release(st)
	return nil
}

var errBodyClosed = errors.New("h2: response body closed")

// readLoop reads the server's frames until the connection ends.
func (cc *clientConn) readLoop() {
	err := cc.readFrames()
	cc.mu.Lock()
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	cc.closeLocked(fmt.Errorf("h2: connection to backend lost: %w", err))
	cc.mu.Unlock()
}

func (cc *clientConn) readFrames() error {
	var hdr [frameHeaderLen]byte
	sawSettings := false
	for {
		if _, err := io.ReadFull(cc.br, hdr[:]); err != nil {
			return err
		}
		fh := parseFrameHeader(hdr[:])
		if fh.length > defaultFrameSize {
			cc.connError(codeFrameSize)
			return errors.New("h2: frame over the size advertised")
		}
		p, err := cc.br.Peek(int(fh.length))
		if err != nil {
			return err
		}
		if !sawSettings && fh.typ != frameSettings {
			cc.connError(codeProtocol)
			return errors.New("h2: server preface is not SETTINGS")
		}
		sawSettings = true
		if err := cc.process(fh, p); err != nil {
			return err
		}
		_, _ = cc.br.Discard(int(fh.length))
	}
}

// connError sends GOAWAY with code before the connection closes.
func (cc *clientConn) connError(code errCode) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if !cc.closed && cc.werr == nil {
		cc.wbuf = appendGoAway(cc.wbuf, 0, code)
		if !cc.flushing {
			cc.flushLocked()
		}
	}
}

func (cc *clientConn) process(fh frameHeader, p []byte) error {
	if cc.hdrStream != 0 && fh.typ != frameContinuation {
		cc.connError(codeProtocol)
		return errors.New("h2: header block interrupted")
	}
	switch fh.typ {
	case frameSettings:
		return cc.onSettings(fh, p)
	case framePing:
		if fh.length != 8 || fh.stream != 0 {
			cc.connError(codeFrameSize)
			return errors.New("h2: malformed PING")
		}
		if fh.flags&flagAck == 0 {
			cc.mu.Lock()
			cc.wbuf = appendFrameHeader(cc.wbuf, 8, framePing, flagAck, 0)
			cc.wbuf = append(cc.wbuf, p...)
			cc.queueSoon()
			cc.mu.Unlock()
		}
	case frameWindowUpdate:
		return cc.onWindowUpdate(fh, p)
	case frameGoAway:
		if len(p) < 8 {
			cc.connError(codeFrameSize)
			return errors.New("h2: malformed GOAWAY")
		}
		last := uint32(p[0])<<24&0x7f000000 | uint32(p[1])<<16 | uint32(p[2])<<8 | uint32(p[3])
		cc.mu.Lock()
		cc.goingAway = true
		for id, st := range cc.streams {
			if id > last {
				st.failLocked(errRefused, codeCancel)
			}
		}
		cc.idleCheck()
		cc.mu.Unlock()
		go cc.cl.drop(cc)
	case frameRSTStream:
		if len(p) != 4 || fh.stream == 0 {
			cc.connError(codeProtocol)
			return errors.New("h2: malformed RST_STREAM")
		}
		code := errCode(uint32(p[0])<<24 | uint32(p[1])<<16 | uint32(p[2])<<8 | uint32(p[3]))
		cc.mu.Lock()
		if st := cc.streams[fh.stream]; st != nil {
			st.sentEnd = true // nothing more may be sent on it
			switch {
			case code == codeRefusedStream && st.res == nil:
				st.failLocked(errRefused, noReset)
			case st.ended:
				// The answer is whole (its END_STREAM came): the server
				// wants no more body, NO_ERROR or not (STREAM_CLOSED
				// answers DATA that crossed its END_STREAM), and the
				// answer stands, as net/http's client reads it.
				st.abandonBody()
				cc.cond.Broadcast()
				cc.release(st)
			default:
				st.failLocked(StreamError{uint32(code)}, noReset)
			}
		}
		cc.mu.Unlock()
	case frameHeaders:
		if fh.stream == 0 {
			cc.connError(codeProtocol)
			return errors.New("h2: HEADERS on stream 0")
		}
		q, err := unpad(p, fh.flags)
		if err == nil && fh.flags&flagPriority != 0 {
			if len(q) < 5 {
				err = errors.New("short")
			} else {
				q = q[5:]
			}
		}
		if err != nil {
			cc.connError(codeProtocol)
			return errors.New("h2: malformed HEADERS")
		}
		cc.hdrStream, cc.hdrEnd = fh.stream, fh.flags&flagEndStream != 0
		cc.hdrBlock = append(cc.hdrBlock[:0], q...)
		if fh.flags&flagEndHeaders != 0 {
			return cc.endHeaders()
		}
	case frameContinuation:
		if cc.hdrStream == 0 || fh.stream != cc.hdrStream {
			cc.connError(codeProtocol)
			return errors.New("h2: CONTINUATION out of place")
		}
		if len(cc.hdrBlock)+len(p) > clientMaxHeader+maxBlockSlack {
			cc.connError(codeEnhanceYourCalm)
			return errors.New("h2: response header block too large")
		}
		cc.hdrBlock = append(cc.hdrBlock, p...)
		if fh.flags&flagEndHeaders != 0 {
			return cc.endHeaders()
		}
	case frameData:
		return cc.onData(fh, p)
	case framePushPromise:
		cc.connError(codeProtocol)
		return errors.New("h2: PUSH_PROMISE, which the client disabled")
	}
	return nil
}

func (cc *clientConn) onSettings(fh frameHeader, p []byte) error {
	if fh.stream != 0 || fh.length%6 != 0 || fh.flags&flagAck != 0 && fh.length != 0 {
		cc.connError(codeFrameSize)
		return errors.New("h2: malformed SETTINGS")
	}
	if fh.flags&flagAck != 0 {
		return nil
	}
	cc.mu.Lock()
	defer cc.mu.Unlock()
	for ; len(p) >= 6; p = p[6:] {
		id := uint16(p[0])<<8 | uint16(p[1])
		v := uint32(p[2])<<24 | uint32(p[3])<<16 | uint32(p[4])<<8 | uint32(p[5])
		switch id {
		case settingMaxConcurrentStreams:
			cc.maxStreams = v
		case settingInitialWindowSize:
			if v > 1<<31-1 {
				cc.closeLocked(errors.New("h2: server's initial window too large"))
				return errors.New("h2: flow control")
			}
			delta := int64(v) - cc.peerWindow
			cc.peerWindow = int64(v)
			for _, st := range cc.streams {
				st.sendWindow += delta
			}
		case settingMaxFrameSize:
			if v < defaultFrameSize || v > 1<<24-1 {
				return errors.New("h2: server's SETTINGS_MAX_FRAME_SIZE out of range")
			}
			cc.peerFrame = int(v)
		}
	}
	cc.wbuf = appendFrameHeader(cc.wbuf, 0, frameSettings, flagAck, 0)
	cc.queueSoon()
	cc.cond.Broadcast()
	if !cc.sawSets {
		cc.sawSets = true
		close(cc.settled)
	}
	return nil
}

func (cc *clientConn) onWindowUpdate(fh frameHeader, p []byte) error {
	if len(p) != 4 {
		cc.connError(codeFrameSize)
		return errors.New("h2: malformed WINDOW_UPDATE")
	}
	n := int64(uint32(p[0])<<24&0x7f000000 | uint32(p[1])<<16 | uint32(p[2])<<8 | uint32(p[3]))
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if fh.stream == 0 {
		if n == 0 || cc.sendWindow+n > 1<<31-1 {
			cc.closeLocked(errors.New("h2: connection window update out of range"))
			return errors.New("h2: flow control")
		}
		cc.sendWindow += n
	} else if st := cc.streams[fh.stream]; st != nil {
		switch {
		case n == 0: // §6.9: PROTOCOL_ERROR, where an overflow is FLOW_CONTROL_ERROR
			st.failLocked(errors.New("h2: stream window update of 0"), codeProtocol)
			return nil
		case st.sendWindow+n > 1<<31-1:
			st.failLocked(errors.New("h2: stream window update out of range"), codeFlowControl)
			return nil
		}
		st.sendWindow += n
	}
	cc.cond.Broadcast()
	return nil
}

func (cc *clientConn) onData(fh frameHeader, p []byte) error {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	size := int64(fh.length)
	if size > cc.recvWindow {
		cc.closeLocked(errors.New("h2: server sent past the connection window"))
		return errors.New("h2: flow control")
	}
	cc.recvWindow -= size
	st := cc.streams[fh.stream]
	q, err := unpad(p, fh.flags)
	if err != nil {
		cc.closeLocked(errors.New("h2: malformed DATA"))
		return err
	}
	if st == nil || st.ended || st.res == nil {
		// A stream reset or ended here, whose data still came: its window
		// is given back. DATA before the head is malformed (§8.1).
		if st != nil && st.res == nil {
			st.failLocked(errors.New("h2: DATA before the response head"), codeProtocol)
		}
		cc.credit(size)
		return nil
	}
	if size > st.recvWindow {
		st.failLocked(errors.New("h2: server sent past the stream window"), codeFlowControl)
		cc.credit(size)
		return nil
	}
	st.recvWindow -= size
	if pad := size - int64(len(q)); pad > 0 {
		st.giveBack(pad) // padding is never read; it counted against both windows
	}
	if st.closedBody {
		cc.credit(int64(len(q)))
	} else {
		st.body = append(st.body, q...)
	}
	if fh.flags&flagEndStream != 0 {
		st.ended = true
		cc.release(st)
	}
	st.signal()
	return nil
}

// endHeaders decodes a whole header block: a response's head, an
// informational head (skipped), or its trailers.
func (cc *clientConn) endHeaders() error {
	id, end, block := cc.hdrStream, cc.hdrEnd, cc.hdrBlock
	cc.hdrStream = 0
	var rs respSink
	rs.cc = cc
	if err := cc.dec.decode(block, &rs); err != nil {
		cc.connError(codeCompression)
		return errors.New("h2: malformed response header block")
	}
	cc.mu.Lock()
	defer cc.mu.Unlock()
	st := cc.streams[id]
	if st == nil || st.err != nil {
		return nil
	}
	switch {
	case rs.bad || rs.size > clientMaxHeader:
		st.failLocked(fmt.Errorf("h2: malformed or too large response header from the backend"), codeProtocol)
	case st.res == nil:
		if rs.status == 0 {
			st.failLocked(errors.New("h2: response without :status"), codeProtocol)
			return nil
		}
		if rs.status < 200 {
			if end || rs.status == http.StatusSwitchingProtocols {
				st.failLocked(errors.New("h2: malformed informational response"), codeProtocol)
				return nil
			}
			// Passed on as net/http's transport passes it, to the
			// request's httptrace (ReverseProxy relays it from there),
			// with mu let go: the callback writes to the client.
			if trace := httptrace.ContextClientTrace(st.req.Context()); trace != nil && trace.Got1xxResponse != nil {
				h := rs.header()
				cc.mu.Unlock()
				err := trace.Got1xxResponse(rs.status, textproto.MIMEHeader(h))
				cc.mu.Lock()
				if err != nil {
					st.failLocked(err, codeCancel)
				}
			}
			return nil
		}
		st.res = rs.response(st, end)
		if end {
			st.ended = true
			st.stopRequest()
			cc.release(st)
		}
		st.signal()
	default:
		if !end || rs.status != 0 {
			st.failLocked(errors.New("h2: trailers without END_STREAM, or with :status"), codeProtocol)
			return nil
		}
		st.trailer = rs.header()
		st.ended = true
		cc.release(st)
		st.signal()
	}
	return nil
}

// respSink collects a response header block's fields.
type respSink struct {
	cc     *clientConn
	status int
	size   uint32
	fields []field
	sawReg bool
	bad    bool // a malformed field: the stream fails, the block is still decoded
}

// field never stops the decoder: the rest of a block it refuses still
// updates the dynamic table the server's later blocks refer to.
func (s *respSink) field(f field) error {
	s.size += f.size()
	if s.size > clientMaxHeader || s.bad {
		return nil // endHeaders refuses it
	}
	if len(f.name) > 0 && f.name[0] == ':' {
		if f.name != ":status" || s.status != 0 || s.sawReg || len(f.value) != 3 {
			s.bad = true
			return nil
		}
		n, err := strconv.Atoi(f.value)
		if err != nil || n < 100 {
			s.bad = true
			return nil
		}
		s.status = n
		return nil
	}
	s.sawReg = true
	if !validName(f.name) || !validValue(f.value) {
		s.bad = true
		return nil
	}
	switch f.name {
	case "connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade":
		s.bad = true
		return nil
	}
	s.fields = append(s.fields, f)
	return nil
}

// header is the fields as an http.Header, values on one backing array.
func (s *respSink) header() http.Header {
	h := make(http.Header, len(s.fields))
	vals := make([]string, len(s.fields))
	for i, f := range s.fields {
		k := s.cc.canonicalName(f.name)
		if v, ok := h[k]; ok {
			h[k] = append(v, f.value)
			continue
		}
		vals[i] = f.value
		h[k] = vals[i : i+1 : i+1]
	}
	return h
}

func (s *respSink) response(st *clientStream, end bool) *http.Response {
	h := s.header()
	status := "200 OK"
	if s.status != http.StatusOK {
		status = strconv.Itoa(s.status) + " " + http.StatusText(s.status)
	}
	res := &http.Response{
		Status:        status,
		StatusCode:    s.status,
		Proto:         "HTTP/2.0",
		ProtoMajor:    2,
		Header:        h,
		ContentLength: -1,
		Request:       st.req,
	}
	if v := h["Content-Length"]; len(v) == 1 {
		if n, err := strconv.ParseInt(v[0], 10, 64); err == nil && n >= 0 {
			res.ContentLength = n
		}
	}
	if end {
		res.ContentLength = 0
		res.Body = http.NoBody
		st.closedBody = true
		return res
	}
	// Announced trailers are known by name before they come, as net/http
	// has them.
	for _, v := range h["Trailer"] {
		for _, k := range strings.Split(v, ",") {
			if k = strings.TrimSpace(k); k != "" {
				if st.trailer == nil {
					st.trailer = make(http.Header)
				}
				st.trailer[http.CanonicalHeaderKey(k)] = nil
			}
		}
	}
	if st.trailer != nil {
		res.Trailer = st.trailer
		st.trailer = nil
	}
	ctx := st.req.Context()
	res.Body = &clientBody{st: st, done: ctx.Done(), ctx: ctx}
	return res
}

// canonicalName is a lower-case field name in net/http's canonical form,
// kept per connection for the names its responses repeat. On the reader.
func (cc *clientConn) canonicalName(name string) string {
	return canonicalIn(&cc.canon, name)
}

// appendRawField appends name: value as a literal never indexed, naming a
// static entry when one has the name, with both strings as they are: the
// backend link is loopback or a cluster's network, where Huffman's bytes
// saved cost more CPU than they spare. name must be lower case.
func appendRawField[N ~string | ~[]byte](dst []byte, name N, value string) []byte {
	if i, ok := staticName[string(name)]; ok {
		dst = appendInt(dst, 0, 4, uint64(i))
	} else {
		dst = append(dst, 0)
		dst = appendInt(dst, 0, 7, uint64(len(name)))
		dst = append(dst, name...)
	}
	dst = appendInt(dst, 0, 7, uint64(len(value)))
	return append(dst, value...)
}
