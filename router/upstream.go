package router

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"ramjet.dev/ramjet/router/h1"
	"ramjet.dev/ramjet/router/rawsock"
)

// h1Pool holds keep-alive connections to HTTP/1.1 backends, per endpoint
// address. A request takes a connection, writes its request and reads the
// response on its own goroutine, and returns the connection only once the
// response was read to its end; net/http's Transport instead runs two
// goroutines per connection and hands every request and response across
// channels, which costs more than the proxying itself.
type h1Pool struct {
	dialer  net.Dialer
	read    time.Duration // wait for response headers
	maxIdle int           // per address
	idleFor time.Duration // an idle connection older than this is closed

	mu   sync.Mutex
	idle map[string][]*h1Conn
}

// h1Conn is one connection to a backend with its buffers.
type h1Conn struct {
	c      net.Conn
	raw    *rawsock.Conn // c's socket read and written raw, nil if not a plain TCP one (see rawsock)
	br     *bufio.Reader
	bw     *bufio.Writer
	addr   string
	idleAt time.Time
	reused bool // it served a request before this one
	// writeDeadline: a proxy-send-timeout left a write deadline set.
	writeDeadline bool
	peek          peeker // looks at it as it is taken from the pool (see idle.go)
	abort         func() // closes c; made once so that hooking it to a request does not allocate
	head          h1Head // the response being read, its buffers kept for the next one
}

func newH1Pool(connect, read time.Duration) *h1Pool {
	return &h1Pool{
		dialer:  net.Dialer{Timeout: connect, KeepAlive: 30 * time.Second},
		read:    read,
		maxIdle: 64,
		idleFor: 60 * time.Second,
		idle:    map[string][]*h1Conn{},
	}
}

const h1BufferSize = 4 << 10

var (
	h1Readers = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, h1BufferSize) }}
	h1Writers = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, h1BufferSize) }}
)

// get returns an idle connection to addr, the most recently used first,
// or dials a new one (always with fresh). An idle connection on which
// anything arrived while it waited, bytes or the backend's close, is
// closed instead of used (see idle.go). A connect timeout other than the
// pool's (a location's proxy-connect-timeout) bounds the dial instead.
func (p *h1Pool) get(ctx context.Context, addr string, fresh bool, connect time.Duration) (*h1Conn, error) {
	for !fresh {
		pc := p.takeIdle(addr)
		if pc == nil {
			break
		}
		if pc.idleClean() {
			pc.reused = true
			return pc, nil
		}
		pc.close()
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
	raw := rawsock.New(c)
	var rw io.ReadWriter = c
	if raw != nil {
		rw = raw
	}
	br := h1Readers.Get().(*bufio.Reader)
	br.Reset(rw)
	bw := h1Writers.Get().(*bufio.Writer)
	bw.Reset(rw)
	pc := &h1Conn{c: c, raw: raw, br: br, bw: bw, addr: addr}
	if raw == nil {
		pc.peek.init(c)
	}
	pc.abort = func() { _ = c.Close() }
	return pc, nil
}

// takeIdle takes the most recently used idle connection to addr that has
// not been idle too long, closing the ones that have.
func (p *h1Pool) takeIdle(addr string) *h1Conn {
	now := time.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	for l := p.idle[addr]; len(l) > 0; l = p.idle[addr] {
		pc := l[len(l)-1]
		l[len(l)-1] = nil
		p.idle[addr] = l[:len(l)-1]
		if now.Sub(pc.idleAt) < p.idleFor {
			return pc
		}
		pc.close()
	}
	return nil
}

// put returns a connection whose response was read to its end. Bytes the
// backend sent past that end belong to no request: a connection with any
// already read is closed, and one where they come later is found out when
// it is next taken (see idle.go).
func (p *h1Pool) put(pc *h1Conn) {
	if pc.br.Buffered() > 0 {
		pc.close()
		return
	}
	pc.head.release()
	pc.idleAt = time.Now()
	p.mu.Lock()
	if l := p.idle[pc.addr]; len(l) < p.maxIdle {
		p.idle[pc.addr] = append(l, pc)
		p.mu.Unlock()
		return
	}
	p.mu.Unlock()
	pc.close()
}

// closeIdle closes every idle connection.
func (p *h1Pool) closeIdle() {
	p.mu.Lock()
	idle := p.idle
	p.idle = map[string][]*h1Conn{}
	p.mu.Unlock()
	for _, l := range idle {
		for _, pc := range l {
			pc.close()
		}
	}
}

// close closes the connection and recycles its buffers. Only the goroutine
// that owns the connection may call it.
func (pc *h1Conn) close() {
	_ = pc.c.Close()
	pc.recycle()
}

func (pc *h1Conn) recycle() {
	if pc.br != nil {
		pc.br.Reset(nil)
		h1Readers.Put(pc.br)
		pc.br = nil
	}
	if pc.bw != nil {
		pc.bw.Reset(nil)
		h1Writers.Put(pc.bw)
		pc.bw = nil
	}
}

// Request headers net/http's server leaves in the header map but a proxy
// must not pass on: hop-by-hop headers (RFC 9110 §7.6.1), the framing the
// fast path writes itself, and what no path forwards (see withheld).
func skipRequestHeader(k string) bool {
	switch k {
	case "Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate", "Proxy-Authorization",
		"Te", "Trailer", "Transfer-Encoding", "Upgrade", "Host", "Content-Length":
		return true
	}
	return withheld(k)
}

// upgradeType is the protocol a request asks to switch to ("" when it
// asks for none), as ReverseProxy reads it.
func upgradeType(h http.Header) string {
	if !h1.ListsToken(h["Connection"], "Upgrade") {
		return ""
	}
	return h.Get("Upgrade")
}

// teTrailers reports that the client accepts trailers, the one TE value a
// proxy passes on.
func teTrailers(h http.Header) bool {
	for _, v := range h["Te"] {
		if h1.ListsToken([]string{v}, "trailers") {
			return true
		}
	}
	return false
}

// writeRequestHead writes the request line and headers of the request to
// the backend straight into the connection's buffer: the client's headers
// without hop-by-hop ones, then the forwarded headers of SPEC §13. Nothing
// is copied into a header map first.
func writeRequestHead(bw *bufio.Writer, x *exchange, req *http.Request, upgrade string, length int64) {
	bw.WriteString(req.Method)
	bw.WriteByte(' ')
	bw.WriteString(x.path)
	if x.hasQuery {
		bw.WriteByte('?')
		bw.WriteString(x.query)
	}
	http10 := false
	if p := x.proxying(); p != nil && p.HTTP10 {
		// proxy-http-version 1.0: the connection ends with the response.
		http10 = true
		bw.WriteString(" HTTP/1.0\r\nConnection: close\r\nHost: ")
	} else {
		bw.WriteString(" HTTP/1.1\r\nHost: ")
	}
	bw.WriteString(x.backendHost(req))
	bw.WriteString("\r\n")
	conn := req.Header["Connection"]
	for k, vs := range req.Header {
		if skipRequestHeader(k) || len(conn) > 0 && h1.ListsToken(conn, k) || x.act.replacesHeader(k) {
			continue
		}
		for _, v := range vs {
			writeHeader(bw, k, v)
		}
	}
	if upgrade != "" && !http10 {
		writeHeader(bw, "Connection", "Upgrade")
		writeHeader(bw, "Upgrade", upgrade)
	}
	if teTrailers(req.Header) {
		writeHeader(bw, "Te", "trailers")
	}
	switch {
	case length > 0:
		bw.WriteString("Content-Length: ")
		bw.Write(strconv.AppendInt(bw.AvailableBuffer(), length, 10))
		bw.WriteString("\r\n")
	case length < 0:
		// No Trailer: the client's trailer is not passed on (see bodySender).
		bw.WriteString("Transfer-Encoding: chunked\r\n")
	case req.Method == http.MethodPost || req.Method == http.MethodPut || req.Method == http.MethodPatch:
		bw.WriteString("Content-Length: 0\r\n")
	}
	f := forwardingOf(req, x)
	writeForwarded(bw, &f)
	writeActionHeaders(bw, x)
	bw.WriteString("\r\n")
}

func writeHeader(bw *bufio.Writer, k, v string) {
	bw.WriteString(k)
	bw.WriteString(": ")
	bw.WriteString(v)
	bw.WriteString("\r\n")
}

// writeJoined writes the values of a repeated header as one, comma-separated.
func writeJoined(bw *bufio.Writer, vs []string) {
	for i, v := range vs {
		if i > 0 {
			bw.WriteString(", ")
		}
		bw.WriteString(v)
	}
}

// writeForwarded writes what setForwarded sets, without building strings.
func writeForwarded(bw *bufio.Writer, f *forwarding) {
	switch {
	case !f.full:
		if f.client != "" {
			writeHeader(bw, "X-Forwarded-For", f.client)
		}
	case len(f.prior) > 0 || f.peer != "":
		bw.WriteString("X-Forwarded-For: ")
		writeJoined(bw, f.prior)
		if f.peer != "" {
			if len(f.prior) > 0 {
				bw.WriteString(", ")
			}
			bw.WriteString(f.peer)
		}
		bw.WriteString("\r\n")
	}
	if f.client != "" {
		writeHeader(bw, "X-Real-Ip", f.client)
	}
	if len(f.prior) > 0 {
		bw.WriteString("X-Original-Forwarded-For: ")
		writeJoined(bw, f.prior)
		bw.WriteString("\r\n")
	}
	if f.host != "" {
		writeHeader(bw, "X-Forwarded-Host", f.host)
	}
	bw.WriteString("X-Forwarded-Port: ")
	if f.port != 0 {
		bw.Write(strconv.AppendInt(bw.AvailableBuffer(), int64(f.port), 10))
	} else {
		bw.WriteString(f.portText)
	}
	bw.WriteString("\r\nX-Forwarded-Proto: ")
	bw.WriteString(f.proto)
	bw.WriteString("\r\nX-Scheme: ")
	bw.WriteString(f.proto)
	bw.WriteString("\r\nX-Forwarded-Scheme: ")
	bw.WriteString(f.proto)
	bw.WriteString("\r\nX-Request-Id: ")
	if f.requestID != "" {
		bw.WriteString(f.requestID)
	} else {
		bw.Write(appendRequestID(bw.AvailableBuffer()))
	}
	bw.WriteString("\r\n")
}
