package h2

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/textproto"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"ramjet.dev/ramjet/router/h1"
)

type streamState uint8

const (
	stateOpen       streamState = iota
	stateHalfClosed             // the client sent END_STREAM
	stateClosed
)

var errStreamReset = errors.New("h2: stream reset")

// stream is one request and its response. The fields from state on are
// under c.mu; the request, the header parser and the response writer are
// the handler's (the reader's until it dispatches).
type stream struct {
	c   *conn
	id  uint32
	gen uint64 // counts the stream's uses; a late body read sees it moved

	hp   headerParser
	req  *http.Request
	url  url.URL
	hdr  http.Header
	vals []string   // the header values' backing store
	ctx  *streamCtx // the request's own: never reused
	rw   responseWriter

	state       streamState
	aborted     error // the stream was reset, or its connection ended
	handlerDone bool
	sentEnd     bool // our END_STREAM went out
	sendWindow  int64
	recvWindow  int64
	recvCredit  int64 // stream window consumed, not yet given back
	declared    int64 // the request's Content-Length, -1 when none
	received    int64
	body        []byte // request body received, not yet read
	bodyR       int
	bodyEnd     bool  // END_STREAM received
	bodyErr     error // a read deadline passed
	bodyClosed  bool  // the handler is done with the body
	continued   bool  // 100 Continue sent, or not wanted
	timer       *time.Timer
	windowWait  *time.Timer
	windowLate  bool
}

var streamPool sync.Pool

func getStream(c *conn, id uint32) *stream {
	st, _ := streamPool.Get().(*stream)
	if st == nil {
		st = &stream{hdr: make(http.Header)}
		st.req = new(http.Request)
		st.rw.st = st
		st.rw.header = make(http.Header)
	}
	st.c, st.id = c, id
	// Each request has a context of its own, the one allocation of a
	// request without a body: contexts derived from it (WithoutCancel,
	// WithValue) may outlive the request for good, and must keep its
	// values, not see a later request's.
	st.ctx = &streamCtx{Context: c.ctx, c: c}
	st.declared = -1
	return st
}

// release returns st to the pool, unless a timer may still fire on it.
// The request's context stays as it is, cancelled, for whatever holds it.
func (st *stream) release() {
	if st.timer != nil || st.windowWait != nil {
		return
	}
	gen := st.gen + 1
	clear(st.hdr)
	clear(st.vals)
	clear(st.rw.header)
	vals, hdr, header, body := st.vals[:0], st.hdr, st.rw.header, st.body[:0]
	rbuf, hbuf := st.rw.buf[:0], st.rw.hbuf[:0]
	cookies := st.hp.cookies[:0]
	if cap(body) > 64<<10 {
		body = nil
	}
	req := st.req
	*req = http.Request{}
	*st = stream{gen: gen, req: req, hdr: hdr, vals: vals, body: body}
	st.rw = responseWriter{st: st, header: header, buf: rbuf, hbuf: hbuf}
	st.hp.cookies = cookies
	streamPool.Put(st)
}

// abort ends st from the connection's side: the handler's context is
// cancelled, a body read or a write under way fails. Under c.mu.
func (st *stream) abort(err error) {
	if st.aborted != nil {
		return
	}
	st.aborted = err
	st.ctx.cancelLocked()
	st.c.cond.Broadcast()
}

// expireBody ends the body's read: its read deadline passed. Under c.mu.
func (st *stream) expireBody() {
	if !st.bodyEnd && st.bodyErr == nil {
		st.bodyErr = errDeadline
		st.c.cond.Broadcast()
	}
}

// run is the handler's goroutine's part.
func (st *stream) run() {
	c := st.c
	if st.hp.tooLarge {
		start := time.Now()
		headerTooLarge(&st.rw)
		st.rw.finish()
		// Logged as nginx logs the stream it ends (GOAWAY
		// ENHANCE_YOUR_CALM) while reading the list: before any request
		// line ("-").
		st.report(start, http.StatusRequestHeaderFieldsTooLarge, "", len(tooLargeBody))
	} else if st.hp.refused != "" {
		st.refuse()
	} else if st.serve() {
		st.rw.finish()
	} else {
		c.mu.Lock()
		if st.state != stateClosed && !c.closed {
			c.resetLocked(st, codeInternal)
			c.queued()
		}
		c.mu.Unlock()
	}
	c.mu.Lock()
	if st.timer != nil {
		st.timer.Stop()
		st.timer = nil
	}
	if st.windowWait != nil {
		st.windowWait.Stop()
		st.windowWait = nil
	}
	st.ctx.cancelLocked()
	c.mu.Unlock()
	c.handlerDone(st)
}

// serve runs the handler and reports whether it returned (rather than
// panicked).
func (st *stream) serve() (ok bool) {
	defer func() {
		if ok {
			return
		}
		if v := recover(); v != nil && v != http.ErrAbortHandler {
			const size = 64 << 10
			buf := make([]byte, size)
			buf = buf[:runtime.Stack(buf, false)]
			st.c.srv.logf("http2: panic serving %v: %v\n%s", st.c.remote, v, buf)
		}
	}()
	st.c.srv.Handler.ServeHTTP(&st.rw, st.req)
	return true
}

// refuse answers a request nginx refuses once its head is read, 400 (or
// TRACE's 405) as router/h1 answers its own, and tells Server.Refused of
// it.
func (st *stream) refuse() {
	start := time.Now()
	w := &st.rw
	status, body := http.StatusBadRequest, "400 Bad Request: "+st.hp.refused
	if st.hp.refused == refusedTrace {
		status, body = http.StatusMethodNotAllowed, "405 Not Allowed\n" // router/h1's
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
	w.finish()
	req := st.req
	line := req.Method + " " + req.RequestURI + " " + req.Proto
	if req.Method == http.MethodConnect {
		line = "" // nginx built none (headerParser.valid)
	}
	st.report(start, status, line, len(body))
}

// report tells Server.Refused of a request answered without the handler,
// once the answer was written.
func (st *stream) report(start time.Time, status int, line string, body int) {
	if report := st.c.srv.Refused; report != nil {
		report(&h1.Refusal{Request: st.req, RequestLine: line, Status: status,
			Start: start, Duration: time.Since(start), HeadBytes: int64(len(st.rw.hbuf)), BodyBytes: int64(body)})
	}
}

// headerTooLarge answers a request whose header list is over
// SETTINGS_MAX_HEADER_LIST_SIZE, as net/http's HTTP/2 server does.
func headerTooLarge(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(http.StatusRequestHeaderFieldsTooLarge)
	_, _ = io.WriteString(w, tooLargeBody)
}

const tooLargeBody = "<h1>HTTP Error 431</h1><p>Request Header Field(s) Too Large</p>"

// headerParser takes a request's fields from the decoder and checks
// them (RFC 9113 §8.2, §8.3).
type headerParser struct {
	st        *stream
	max, size uint32
	tooLarge  bool // the list is over max: answered 431
	bad       bool // malformed: the stream is reset
	// refused is why nginx answers a request that is not malformed 400
	// (refuse); "" when it does not.
	refused   string
	regular   bool // a regular field was seen
	method    string
	scheme    string
	path      string
	authority string
	host      string
	seen      uint8
	expect100 bool
	cookies   []string
}

const (
	seenMethod = 1 << iota
	seenScheme
	seenPath
	seenAuthority
	seenHost // the Host field
)

func (h *headerParser) reset(st *stream, max uint32) {
	cookies := h.cookies[:0]
	*h = headerParser{st: st, max: max, cookies: cookies}
}

func (h *headerParser) pseudo(bit uint8, dst *string, v string) {
	if h.seen&bit != 0 || h.regular {
		h.bad = true
	}
	h.seen |= bit
	*dst = v
}

func (h *headerParser) field(f field) error {
	h.size += f.size()
	if h.size > h.max {
		h.tooLarge = true
	}
	if h.tooLarge || h.bad {
		return nil // decoding goes on, for HPACK's state
	}
	if !validValue(f.value) {
		// nginx answers CR, LF and NUL 400, and router/h1 every control
		// byte but HTAB. A pseudo-header's is kept for the log.
		h.refuse("invalid header value")
		if f.name == "" || f.name[0] != ':' {
			return nil
		}
	}
	if len(f.name) > 0 && f.name[0] == ':' {
		switch f.name {
		case ":method":
			h.pseudo(seenMethod, &h.method, f.value)
		case ":scheme":
			h.pseudo(seenScheme, &h.scheme, f.value)
		case ":path":
			h.pseudo(seenPath, &h.path, f.value)
		case ":authority":
			if h.seen&seenAuthority != 0 && !h.regular {
				// nginx takes :authority as a Host field.
				h.refuse("duplicate host header")
				return nil
			}
			h.pseudo(seenAuthority, &h.authority, f.value)
		default:
			h.bad = true
		}
		return nil
	}
	h.regular = true
	if !validName(f.name) {
		switch {
		case f.name == "" || hasUpper(f.name):
			// Reset, as h2spec requires of a name in upper case.
			h.bad = true
		case refusedName(f.name):
			// nginx refuses a space, a colon or a control byte in a name
			// (ngx_http_v2_validate_header), as router/h1 does.
			h.refuse("invalid header name")
		}
		// Any other byte no token has ('@', past 0x7f) only marks the
		// field invalid there, and ignore-invalid-headers (on by default)
		// drops it and serves the rest, as router/h1 drops it.
		return nil
	}
	switch f.name {
	case "connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade":
		h.bad = true
		return nil
	case "te":
		if f.value != "trailers" {
			h.bad = true
			return nil
		}
	case "cookie":
		// Cookie fields are joined into one (§8.2.3).
		h.cookies = append(h.cookies, f.value)
		return nil
	case "host":
		if h.seen&seenHost != 0 {
			// Which one the backend would take is anyone's guess.
			h.refuse("duplicate host header")
			return nil
		}
		h.seen |= seenHost
		h.host = f.value
		return nil
	case "content-length":
		// nginx answers a value that is not a number 400, as a second
		// one (below).
		n, err := strconv.ParseUint(f.value, 10, 63)
		if err != nil {
			h.refuse("invalid Content-Length header")
			return nil
		}
		if h.st.declared < 0 {
			h.st.declared = int64(n)
		}
	case "expect":
		h.expect100 = strings.EqualFold(f.value, "100-continue")
	}
	key := h.st.c.canonical(f.name)
	if h.st.add(key, f.value) && h1.UniqueField(key) {
		// A field nginx takes once, sent twice, answers 400 (router/h1's
		// errDuplicate): a backend may take the other value than the
		// router, say the other Authorization.
		h.refuse("duplicate header line")
	}
	return nil
}

// refuse notes the first reason nginx answers the request 400 for.
func (h *headerParser) refuse(why string) {
	if h.refused == "" {
		h.refused = why
	}
}

func (h *headerParser) valid() bool {
	if h.tooLarge {
		return true
	}
	if h.seen&seenMethod == 0 {
		return false
	}
	// A method nginx's parser does not read answers 400, as nginx and
	// router/h1 answer it: one holding a space would write the client's
	// words into an HTTP/1 backend's request line.
	if !h1.NginxMethod(h.method) {
		h.refuse("invalid method")
	}
	// A Host naming another host than :authority makes the request
	// malformed (RFC 9113 §8.3.1): it is routed by one, and a server
	// behind may take the other. nginx answers it 400, as two Hosts.
	if h.seen&seenAuthority != 0 && h.seen&seenHost != 0 && !strings.EqualFold(h.host, h.authority) {
		h.refuse("duplicate host header")
	}
	if h.method == http.MethodConnect {
		if h.seen&(seenScheme|seenPath) != 0 || h.authority == "" {
			return false
		}
		// Well formed, but nginx builds no request line without :scheme
		// and :path, and answers it 400 (ngx_http_v2_construct_request_line):
		// the handler would take the authority for a path.
		h.refuse("no :scheme header")
		return true
	}
	// Missing or empty, they are reset, as h2spec requires.
	if h.seen&seenScheme == 0 || h.seen&seenPath == 0 || h.path == "" || h.scheme == "" {
		return false
	}
	// The path is absolute (RFC 9113 §8.3.1): nginx answers any other
	// 400, "*" included, as router/h1 does; an absolute URI, which
	// net/http's parser would take, is not a path.
	if h.path[0] != '/' {
		h.refuse("invalid request target")
	}
	if !validScheme(h.scheme) {
		h.refuse("invalid :scheme header")
	}
	if h.method == "TRACE" {
		// nginx answers it 405 once the head is read, as router/h1 does,
		// after a path its parser refuses: a handler other than the
		// router would serve it, and a backend may echo the client's
		// credentials back.
		if h1.BadTargetPath(h.path) {
			h.refuse("malformed request path")
		}
		h.refuse(refusedTrace)
	}
	return true
}

// refusedTrace is headerParser.refused for TRACE, answered 405.
const refusedTrace = "TRACE"

// validScheme: a scheme as nginx reads one (ngx_http_v2_parse_scheme), a
// letter then letters, digits, '+', '-' and '.'.
func validScheme(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c|0x20 >= 'a' && c|0x20 <= 'z' || i > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.') {
			continue
		}
		return false
	}
	return true
}

// add appends a header value, its slice carved from one backing array,
// and reports whether the field had one already.
func (st *stream) add(key, value string) (again bool) {
	if vs, ok := st.hdr[key]; ok {
		st.hdr[key] = append(vs, value)
		return true
	}
	i := len(st.vals)
	st.vals = append(st.vals, value)
	st.hdr[key] = st.vals[i : i+1 : i+1]
	return false
}

// build makes the request from the parsed fields; what nginx refuses in
// them is marked for a 400 (hp.refuse), not an error.
func (st *stream) build(endStream bool) {
	c, h := st.c, &st.hp
	req := st.req
	// WithContext is the one way to set a request's context; the copy it
	// makes does not escape, and stays on the stack.
	var zero http.Request
	*req = *zero.WithContext(st.ctx)
	req.Proto, req.ProtoMajor, req.ProtoMinor = "HTTP/2.0", 2, 0
	req.Header = st.hdr
	req.RemoteAddr = c.remote
	req.TLS = c.tls
	if h.tooLarge {
		req.Method, req.URL = http.MethodGet, &st.url
		return
	}
	if len(h.cookies) > 0 {
		st.add("Cookie", strings.Join(h.cookies, "; "))
	}
	req.Method = h.method
	req.Host = h.authority
	if req.Host == "" {
		req.Host = h.host
	}
	if h.method == http.MethodConnect {
		st.url = url.URL{Host: h.authority}
		req.RequestURI = h.authority
	} else {
		if err := parsePath(&st.url, h.path); err != nil {
			// A path net/http's parser refuses (a malformed escape): nginx
			// answers it 400, as router/h1 does.
			h.refuse("invalid request target")
			st.url = url.URL{}
		}
		req.RequestURI = h.path
	}
	req.URL = &st.url
	switch {
	case endStream:
		if st.declared > 0 {
			// nginx answers it 400 ("client prematurely closed stream").
			h.refuse("Content-Length without a body")
		}
		req.ContentLength = 0
		req.Body = http.NoBody
		st.continued = true
	default:
		req.ContentLength = st.declared
		req.Body = &requestBody{st: st, c: c, gen: st.gen}
		st.continued = !h.expect100
	}
}

// parsePath sets u from a request's :path as url.ParseRequestURI does,
// without its allocations for a path of plain characters.
func parsePath(u *url.URL, p string) error {
	path, query, hasQuery := strings.Cut(p, "?")
	if len(path) > 0 && path[0] == '/' && (!hasQuery || query != "") && plainPath(path) && !strings.ContainsRune(query, '#') && !hasCTL(query) {
		*u = url.URL{Path: path, RawQuery: query}
		return nil
	}
	v, err := url.ParseRequestURI(p)
	if err != nil {
		return err
	}
	*u = *v
	return nil
}

// plainPath: bytes url.URL keeps as they are in a path (no RawPath).
func plainPath(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("-_.~$&+,/:;=@", c) >= 0:
		default:
			return false
		}
	}
	return true
}

func hasCTL(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] == 0x7f {
			return true
		}
	}
	return false
}

// validName: a field name of token characters in lower case.
func validName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x80 || !tokenChar[c] || 'A' <= c && c <= 'Z' {
			return false
		}
	}
	return true
}

// refusedName: a field name with a byte nginx refuses the request for,
// rather than dropping the field: a space, a colon, a control byte or DEL.
func refusedName(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c == ':' || c == 0x7f {
			return true
		}
	}
	return false
}

func hasUpper(s string) bool {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			return true
		}
	}
	return false
}

// validValue: no NUL, CR, LF or other control bytes but HTAB (RFC 9113
// §8.2.1).
func validValue(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}

var tokenChar = func() (t [128]bool) {
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c] = true
		t[c-'a'+'A'] = true
	}
	for _, c := range "!#$%&'*+-.^_`|~" {
		t[c] = true
	}
	return t
}()

// canonical is a lower-case field name in net/http's canonical form,
// kept per connection for the names its requests repeat.
func (c *conn) canonical(name string) string { return canonicalIn(&c.canon, name) }

// canonicalIn is name in canonical form, from net/http's common names or
// the cache, which it adds to (up to 128 names).
func canonicalIn(cache *map[string]string, name string) string {
	if k, ok := commonCanonical[name]; ok {
		return k
	}
	if k, ok := (*cache)[name]; ok {
		return k
	}
	k := textproto.CanonicalMIMEHeaderKey(name)
	if *cache == nil {
		*cache = make(map[string]string)
	}
	if len(*cache) < 128 {
		(*cache)[name] = k
	}
	return k
}

var commonCanonical = func() map[string]string {
	m := make(map[string]string)
	for _, k := range []string{
		"Accept", "Accept-Charset", "Accept-Encoding", "Accept-Language", "Accept-Ranges",
		"Authorization", "Cache-Control", "Content-Encoding", "Content-Language", "Content-Length",
		"Content-Type", "Cookie", "Date", "Etag", "Expect", "From", "Grpc-Accept-Encoding",
		"Grpc-Encoding", "Grpc-Timeout", "If-Match", "If-Modified-Since", "If-None-Match",
		"If-Range", "If-Unmodified-Since", "Origin", "Pragma", "Range", "Referer", "Te",
		"Traceparent", "Tracestate", "User-Agent", "Via", "X-Forwarded-For", "X-Forwarded-Host",
		"X-Forwarded-Proto", "X-Real-Ip", "X-Request-Id", "Sec-Fetch-Dest", "Sec-Fetch-Mode",
		"Sec-Fetch-Site", "Sec-Ch-Ua", "Sec-Ch-Ua-Mobile", "Sec-Ch-Ua-Platform", "Priority",
		"Upgrade-Insecure-Requests", "Dnt", "Content-Disposition", "Content-Range",
	} {
		m[strings.ToLower(k)] = k
	}
	return m
}()

// requestBody is a request's body: what the reader received for the
// stream. It is the one allocation of a request with a body, so that a
// read after the handler returned fails rather than read a later
// request's.
type requestBody struct {
	st  *stream
	c   *conn // st's when the body was made: st may serve another since
	gen uint64
}

func (b *requestBody) Read(p []byte) (int, error) {
	st, c := b.st, b.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if st.gen != b.gen || st.bodyClosed {
		return 0, http.ErrBodyReadAfterClose
	}
	if !st.continued {
		st.continued = true
		if !st.rw.sentHeader && st.aborted == nil && !c.closed {
			id := st.id
			c.waitRoom()
			// waitRoom let go of mu: the stream may have been reset, or
			// answered, or (its handler done) released meanwhile.
			if c.streams[id] == st && !st.rw.sentHeader && st.aborted == nil && !c.closed {
				c.appendHeaders(id, []byte{0x08, 3, '1', '0', '0'}, false)
				c.queued()
			}
		}
	}
	for {
		if st.gen != b.gen {
			return 0, http.ErrBodyReadAfterClose
		}
		if st.bodyR < len(st.body) {
			n := takeBuffered(p, &st.body, &st.bodyR)
			c.unbuffered(int64(n))
			st.credit(int64(n))
			if st.bodyEnd && st.bodyR == len(st.body) {
				return n, io.EOF
			}
			return n, nil
		}
		switch {
		case st.bodyEnd:
			return 0, io.EOF
		case st.bodyErr != nil:
			return 0, st.bodyErr
		case st.aborted != nil:
			return 0, st.aborted
		case st.bodyClosed:
			return 0, http.ErrBodyReadAfterClose
		}
		c.cond.Wait()
	}
}

// takeBuffered copies into p what body holds past *r, and empties body
// (keeping its array) once all of it was taken.
func takeBuffered(p []byte, body *[]byte, r *int) int {
	n := copy(p, (*body)[*r:])
	*r += n
	if *r == len(*body) {
		*body, *r = (*body)[:0], 0
	}
	return n
}

// credit gives n bytes the handler read back to the stream's window, and
// sends what is owed to the connection's (conn.unbuffered). Under c.mu.
func (st *stream) credit(n int64) {
	c := st.c
	if c.closed {
		return
	}
	before := len(c.wbuf)
	if !st.bodyEnd && st.state == stateOpen {
		st.recvCredit += n
		if st.recvCredit >= streamWindow/2 {
			id := st.id
			c.waitRoom()
			// As for the connection's: nothing to send once the wait is
			// over and the credit was sent, or the stream closed (and,
			// were the body read after its handler returned, released).
			if c.streams[id] == st && st.recvCredit > 0 && st.state == stateOpen && !c.closed {
				c.wbuf = appendWindowUpdate(c.wbuf, st.id, uint32(st.recvCredit))
				st.recvWindow += st.recvCredit
				st.recvCredit = 0
			}
		}
	}
	if c.recvCredit >= connWindow/2 {
		c.creditLocked(0)
	}
	if len(c.wbuf) != before {
		c.queued()
	}
}

func (b *requestBody) Close() error {
	st, c := b.st, b.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if st.gen != b.gen || st.bodyClosed {
		return nil
	}
	st.bodyClosed = true
	c.unbuffered(int64(len(st.body) - st.bodyR))
	st.body, st.bodyR = st.body[:0], 0
	c.cond.Broadcast()
	if before := len(c.wbuf); !c.closed {
		c.creditLocked(0)
		if len(c.wbuf) != before {
			c.queued()
		}
	}
	return nil
}

// streamCtx is a request's context: the connection's values, cancelled
// when the stream or the connection ends or the handler returns. Its Done
// channel is made only when asked for. It is never reused: what the
// handler derives from it may outlive the request.
type streamCtx struct {
	context.Context
	c        *conn
	done     chan struct{}
	canceled bool // its error is context.Canceled
	after    []func()
}

func (x *streamCtx) Done() <-chan struct{} {
	c := x.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if x.done == nil {
		x.done = make(chan struct{})
		if x.canceled {
			close(x.done)
		}
	}
	return x.done
}

func (x *streamCtx) Err() error {
	c := x.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if x.canceled {
		return context.Canceled
	}
	return nil
}

// AfterFunc lets context.AfterFunc and WithCancel children wait on the
// stream without a goroutine each.
func (x *streamCtx) AfterFunc(f func()) func() bool {
	c := x.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if x.canceled {
		go f()
		return func() bool { return false }
	}
	i := len(x.after)
	x.after = append(x.after, f)
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		if x.canceled || i >= len(x.after) || x.after[i] == nil {
			return false
		}
		x.after[i] = nil
		return true
	}
}

func (x *streamCtx) cancelLocked() {
	if x.canceled {
		return
	}
	x.canceled = true
	if x.done != nil {
		close(x.done)
	}
	for _, f := range x.after {
		if f != nil {
			go f()
		}
	}
	x.after = nil
}
