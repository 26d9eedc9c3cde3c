package h1

import (
	"bytes"
	"crypto/tls"
	"io"
	"net"
	"sync/atomic"
	"time"
)

// GuardFraming wraps every connection l accepts with GuardFramingConn.
// Callers who bring their own plain-HTTP listener serve the Router with
// http.Server.Serve(GuardFraming(l)).
func GuardFraming(l net.Listener) net.Listener { return guardListener{l} }

type guardListener struct{ net.Listener }

func (l guardListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return GuardFramingConn(c), nil
}

// GuardFramingConn wraps a client connection so that an HTTP/1.x request
// whose body framing nginx refuses is refused here too: a request with both
// Content-Length and Transfer-Encoding: chunked, or with Transfer-Encoding
// on HTTP/1.0 (SPEC §13); another coding it leaves to net/http, which
// answers 501, as nginx does. net/http's server would serve the first as chunked
// and the second by Content-Length, having deleted the evidence before any
// handler runs, so the check has to be made on the bytes. So is a head
// with a folded field line (obs-fold: a line that begins with a space or
// tab), which net/http joins to the line before and nginx answers 400: a
// field two parsers read differently is how requests get smuggled; and so
// is a repeated Content-Length, which net/http merges when the values are
// equal.
//
// The wrapper reads the request stream as the server does (RFC 9112 §6:
// each head, then its body by chunked framing, Content-Length or none) and
// passes every byte through unchanged, copying nothing and holding nothing
// back. At the end of a refused head it delivers, in place of that head (or
// of its last line when the head's start was delivered by an earlier Read),
// a line that net/http rejects with 400 Bad Request and Connection: close,
// and after that line only io.EOF; it never writes to the connection
// itself. Closing a connection after a refusal lingers (refusalLinger),
// so that the 400 reaches a client still sending. It stops looking, and
// passes the rest through, once the server switched protocols: after an
// Upgrade request answered 101, or a CONNECT answered 2xx, which it tells
// from the status lines written to the connection, each response's in one
// Write from its start, as net/http and a hijacker's bufio.Writer write
// them (nginx, too, tunnels only after the 101: an Upgrade answered
// otherwise is an ordinary exchange, and the requests after it are read
// as any). It stops looking as well after the HTTP/2 preface ("PRI *
// HTTP/2.0") and anything it cannot frame (a bad Content-Length,
// malformed chunked framing, a request line net/http refuses): net/http
// answers those itself. A chunk size past nginx's bound (2^59-1), which
// net/http would read, is cut at the digit that passes it and followed
// by the refusal line, which net/http's chunked reader fails on: the
// body fails as router/h1's server fails it.
//
// Wrap the connection the server reads requests from: after a PROXY
// protocol wrapper, and for TLS after the handshake. A wrapped
// *tls.Conn keeps its ConnectionState, which net/http uses to set
// Request.TLS, but net/http serves HTTP/2 only on a bare *tls.Conn: hand it
// connections that negotiated "h2" unwrapped. NetConn returns the wrapped
// connection.
func GuardFramingConn(c net.Conn) net.Conn {
	switch w := c.(type) {
	case connectionStater:
		return &tlsFramingGuard{framingGuard: framingGuard{Conn: c}, cs: w}
	case io.ReaderFrom:
		return &readFromFramingGuard{framingGuard: framingGuard{Conn: c}, rf: w}
	}
	return &framingGuard{Conn: c}
}

type connectionStater interface {
	ConnectionState() tls.ConnectionState
}

// tlsFramingGuard is the guard on a connection with a TLS state.
type tlsFramingGuard struct {
	framingGuard
	cs connectionStater
}

// ConnectionState is the wrapped connection's, for Request.TLS.
func (g *tlsFramingGuard) ConnectionState() tls.ConnectionState { return g.cs.ConnectionState() }

// readFromFramingGuard is the guard on a connection with ReadFrom (a
// *net.TCPConn), which net/http uses to send a response body with
// sendfile or splice, its head written before.
type readFromFramingGuard struct {
	framingGuard
	rf io.ReaderFrom
}

// ReadFrom is the connection's, but while a switch of protocols is
// pending: the status line that tells whether it happened may be in what
// is copied.
func (g *readFromFramingGuard) ReadFrom(r io.Reader) (int64, error) {
	if g.tunnel.Load() != 0 && !g.switched.Load() {
		return io.Copy(writerOnly{&g.framingGuard}, r)
	}
	return g.rf.ReadFrom(r)
}

// writerOnly hides everything of a writer but Write from io.Copy.
type writerOnly struct{ io.Writer }

// rejectLine replaces a refused head: without a space it is no request
// line, without a colon no header line, so net/http answers 400 and closes.
const rejectLine = "ramjet-refused-message-framing\r\n"

// The guard's states.
const (
	gHeadStart   uint8 = iota // before a request line; CR and LF skipped, as net/http does after a POST
	gReqLine                  // in the request line
	gLineStart                // at the start of a header line
	gLineCR                   // a header line began with CR
	gName                     // in a field name
	gCLValue                  // in a Content-Length value
	gTEValue                  // in a Transfer-Encoding value
	gSkipLine                 // in a line whose rest does not matter
	gBody                     // n Content-Length bytes left
	gChunkSize                // in a chunk-size
	gChunkOWS                 // whitespace after a chunk-size
	gChunkExt                 // in a chunk extension
	gChunkLF                  // CR of a chunk-size line seen
	gChunkData                // n chunk bytes left
	gChunkDataCR              // the CRLF after chunk data
	gChunkDataLF
	gTrailerStart // at the start of a trailer line
	gTrailerCR    // a trailer line began with CR
	gTrailerLine  // in a trailer line
	gTransparent  // no longer looking
	gReject       // delivering rejectLine
	gRejected     // rejectLine delivered: EOF
)

// Facts about the head being read.
const (
	hTE        uint8 = 1 << iota // Transfer-Encoding present
	hUpgrade                     // Upgrade present
	hConnect                     // method CONNECT
	hHTTP11                      // HTTP/1.1 or a later 1.x
	hCLBad                       // a Content-Length net/http will refuse
	hFolded                      // a field line began with a space or tab (obs-fold)
	hTEUnknown                   // one Transfer-Encoding, not chunked: net/http answers 501, as nginx
	hTEMany                      // Transfer-Encoding more than once
)

// The field names looked for; framingGuard.cand indexes them.
var guardNames = [...]string{"content-length", "transfer-encoding", "upgrade"}

// framingGuard reads along a connection's request stream. Its state is a
// few words: nothing is buffered.
type framingGuard struct {
	net.Conn
	n       uint64 // Content-Length value, chunk size, or body bytes left
	st      uint8
	head    uint8 // h* facts
	clCount uint8 // Content-Length field lines, saturating
	cand    uint8 // the guardNames entry a field name may be; in the method, whether it may be CONNECT
	pos     uint8 // position in the method or field name, saturating
	part    uint8 // request line: 0 method, 1 target, 2 version
	plen    uint8 // version length, saturating
	clPhase uint8 // Content-Length value: 0 before digits, 1 digits, 2 after, 3 after CR; Transfer-Encoding's likewise, 4 not chunked
	digits  uint8 // chunk-size digits
	proto   [9]byte
	sent    uint8 // bytes of rejectLine delivered
	// refused is set with gReject, for Close, which the server may call
	// from another goroutine.
	refused atomic.Bool
	// heads counts the heads read; tunnel is the number of the last
	// Upgrade or CONNECT one, shifted left once, with tunnelConnect for
	// CONNECT (0: none). Write counts the final responses in answers, and
	// sets switched when the one to that head switched protocols.
	heads    uint64
	tunnel   atomic.Uint64
	answers  atomic.Uint64
	switched atomic.Bool
}

const tunnelConnect = 1

// refusalLinger bounds how long Close reads what a refused client still
// sends, as net/http waits before closing a connection it refused a body
// on.
const refusalLinger = 500 * time.Millisecond

// Close closes the wrapped connection. After a refusal it first
// half-closes it and reads on for up to refusalLinger, as nginx's
// lingering close does: closing with the client's bytes unread would make
// the kernel reset the connection, and the client lose the 400.
func (g *framingGuard) Close() error {
	if g.refused.Load() {
		_ = g.CloseWrite()
		_ = g.Conn.SetReadDeadline(time.Now().Add(refusalLinger))
		buf := make([]byte, 4096)
		for {
			if _, err := g.Conn.Read(buf); err != nil {
				break
			}
		}
	}
	return g.Conn.Close()
}

// NetConn returns the wrapped connection.
func (g *framingGuard) NetConn() net.Conn { return g.Conn }

// CloseWrite half-closes the wrapped connection when it can, which
// net/http does before it closes a connection it refused a body on.
func (g *framingGuard) CloseWrite() error {
	if cw, ok := g.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// Write writes p to the connection, noting a response's status line at
// its start (see GuardFramingConn).
func (g *framingGuard) Write(p []byte) (int, error) {
	if !g.switched.Load() && len(p) >= len("HTTP/1.1 200") && string(p[:7]) == "HTTP/1." && p[8] == ' ' {
		g.statusLine(p[9:12])
	}
	return g.Conn.Write(p)
}

// statusLine counts a final response by its status code, and notes
// whether it switched protocols for the head it answers.
func (g *framingGuard) statusLine(code []byte) {
	if code[0] == '1' && string(code) != "101" {
		return // informational: the final response is still to come
	}
	n := g.answers.Add(1)
	t := g.tunnel.Load()
	if t == 0 || t>>1 != n {
		return
	}
	if t&tunnelConnect != 0 && code[0] == '2' || t&tunnelConnect == 0 && string(code) == "101" {
		g.switched.Store(true)
	}
}

func (g *framingGuard) Read(p []byte) (int, error) {
	switch g.st {
	case gTransparent:
		return g.Conn.Read(p)
	case gReject:
		n := copy(p, rejectLine[g.sent:])
		g.sent += uint8(n)
		if int(g.sent) == len(rejectLine) {
			g.st = gRejected
		}
		return n, nil
	case gRejected:
		return 0, io.EOF
	}
	n, err := g.Conn.Read(p)
	if n == 0 {
		return n, err
	}
	if cut := g.scan(p[:n]); cut >= 0 {
		g.refused.Store(true)
		// The bytes before the refused head go alone: a handler they
		// start may have net/http read in the background, which must
		// find the replacement line and not io.EOF (that would cancel
		// the handler's request).
		if cut > 0 {
			return cut, nil
		}
		return g.Read(p)
	}
	return n, err
}

// scan reads p along the stream. It returns -1, or where to cut p when a
// head ends that must be refused; g is then in gReject.
func (g *framingGuard) scan(p []byte) int {
	headStart, lineStart := -1, 0
	for i := 0; i < len(p); i++ {
		b := p[i]
		switch g.st {
		case gHeadStart:
			if b == '\r' || b == '\n' {
				continue
			}
			if g.switched.Load() {
				g.st = gTransparent // the bytes of the new protocol
				return -1
			}
			headStart = i
			g.head, g.clCount, g.part, g.pos, g.plen, g.cand = 0, 0, 0, 0, 0, 1
			g.st = gReqLine
			g.reqLineByte(b)
		case gReqLine:
			if g.part == 1 {
				// The target: on to the space after it, when no LF comes first.
				if j := bytes.IndexByte(p[i:], ' '); j > 0 && bytes.IndexByte(p[i:i+j], '\n') < 0 {
					i += j
					b = ' '
				}
			}
			if b == '\n' {
				if !g.requestLine() {
					g.st = gTransparent
					return -1
				}
				g.st, lineStart = gLineStart, i+1
				continue
			}
			g.reqLineByte(b)
		case gLineStart:
			switch b {
			case '\n':
				if g.headEnd() {
					if g.switched.Load() {
						// The server switched protocols while these bytes
						// came: they are the new protocol's.
						g.st = gTransparent
						return -1
					}
					g.st = gReject
					if headStart >= 0 {
						return headStart
					}
					return lineStart
				}
				if g.st == gTransparent {
					return -1
				}
			case '\r':
				g.st = gLineCR
			case ' ', '\t':
				// obs-fold, which net/http joins to the line before.
				g.head |= hFolded
				g.st = gSkipLine
			default:
				g.st = gName
				g.nameStart(b)
			}
		case gLineCR:
			if b == '\n' {
				g.st = gLineStart
				i-- // the empty line, read again at its LF
				continue
			}
			g.st = gSkipLine // CR then more: malformed for net/http
		case gName:
			switch b {
			case '\n':
				g.st, lineStart = gLineStart, i+1
			case ':':
				g.fieldName()
			default:
				g.nameByte(b)
			}
		case gCLValue:
			g.clByte(b)
			if b == '\n' {
				g.st, lineStart = gLineStart, i+1
			}
		case gTEValue:
			g.teByte(b)
			if b == '\n' {
				g.st, lineStart = gLineStart, i+1
			}
		case gSkipLine:
			j := bytes.IndexByte(p[i:], '\n')
			if j < 0 {
				return -1
			}
			i += j
			g.st, lineStart = gLineStart, i+1
		case gBody:
			k := uint64(len(p) - i)
			if g.n > k {
				g.n -= k
				return -1
			}
			i += int(g.n) - 1
			g.n = 0
			g.st = gHeadStart
		case gChunkSize:
			if d, ok := hexDigit(b); ok {
				if g.digits++; g.digits > 16 {
					g.st = gTransparent // net/http refuses it
					return -1
				}
				if g.n > maxChunkSize>>4 {
					// Past nginx's bound, where net/http reads on: the
					// refusal line from this digit on fails its chunked
					// reader, and so the body.
					g.st = gReject
					return i
				}
				g.n = g.n<<4 | uint64(d)
				continue
			}
			if g.digits == 0 {
				g.st = gTransparent
				return -1
			}
			switch b {
			case ';':
				g.st = gChunkExt
			case ' ', '\t':
				g.st = gChunkOWS
			case '\r':
				g.st = gChunkLF
			default:
				g.st = gTransparent
				return -1
			}
		case gChunkOWS:
			switch b {
			case ' ', '\t':
			case '\r':
				g.st = gChunkLF
			default:
				g.st = gTransparent
				return -1
			}
		case gChunkExt:
			switch b {
			case '\r':
				g.st = gChunkLF
			case '\n':
				g.st = gTransparent
				return -1
			}
		case gChunkLF:
			if b != '\n' {
				g.st = gTransparent
				return -1
			}
			if g.n == 0 {
				g.st = gTrailerStart
			} else {
				g.st = gChunkData
			}
		case gChunkData:
			k := uint64(len(p) - i)
			if g.n > k {
				g.n -= k
				return -1
			}
			i += int(g.n) - 1
			g.n = 0
			g.st = gChunkDataCR
		case gChunkDataCR, gChunkDataLF:
			if b != "\r\n"[g.st-gChunkDataCR] {
				g.st = gTransparent
				return -1
			}
			if g.st++; g.st > gChunkDataLF {
				g.st, g.n, g.digits = gChunkSize, 0, 0
			}
		case gTrailerStart, gTrailerCR:
			switch {
			case b == '\n':
				g.st = gHeadStart
			case b == '\r' && g.st == gTrailerStart:
				g.st = gTrailerCR
			default:
				g.st = gTrailerLine
			}
		case gTrailerLine:
			j := bytes.IndexByte(p[i:], '\n')
			if j < 0 {
				return -1
			}
			i += j
			g.st = gTrailerStart
		default:
			return -1
		}
	}
	return -1
}

// reqLineByte reads a request-line byte other than LF.
func (g *framingGuard) reqLineByte(b byte) {
	const connect = "CONNECT"
	switch g.part {
	case 0:
		if b == ' ' {
			g.part = 1
			if g.cand != 0 && int(g.pos) == len(connect) {
				g.head |= hConnect
			}
			return
		}
		if int(g.pos) >= len(connect) || connect[g.pos] != b {
			g.cand = 0
		}
		g.pos = min(g.pos+1, 255)
	case 1:
		if b == ' ' {
			g.part = 2
		}
	default:
		if int(g.plen) < len(g.proto) {
			g.proto[g.plen] = b
		}
		g.plen = min(g.plen+1, 255)
	}
}

// requestLine judges the finished request line: false when net/http will
// not read the stream as HTTP/1.x requests from here on.
func (g *framingGuard) requestLine() bool {
	if g.part != 2 || int(g.plen) > len(g.proto) {
		return false
	}
	v := g.proto[:g.plen]
	if len(v) > 0 && v[len(v)-1] == '\r' {
		v = v[:len(v)-1]
	}
	if len(v) != len("HTTP/1.1") || string(v[:7]) != "HTTP/1." || v[7] < '0' || v[7] > '9' {
		return false // HTTP/2.0 (the h2c preface), HTTP/0.9, garbage
	}
	if v[7] != '0' {
		g.head |= hHTTP11
	}
	return true
}

// nameStart begins a field name; only one of guardNames can match, by its
// first letter.
func (g *framingGuard) nameStart(b byte) {
	g.pos = 1
	switch b | 0x20 {
	case 'c':
		g.cand = 0
	case 't':
		g.cand = 1
	case 'u':
		g.cand = 2
	default:
		g.st = gSkipLine
	}
}

// nameByte reads a field-name byte after the first: names compare without
// ASCII case.
func (g *framingGuard) nameByte(b byte) {
	if 'A' <= b && b <= 'Z' {
		b += 'a' - 'A'
	}
	name := guardNames[g.cand]
	if int(g.pos) >= len(name) || name[g.pos] != b {
		g.st = gSkipLine
		return
	}
	g.pos++
}

// fieldName acts on a finished field name.
func (g *framingGuard) fieldName() {
	g.st = gSkipLine
	if int(g.pos) != len(guardNames[g.cand]) {
		return
	}
	switch g.cand {
	case 0:
		g.clCount = min(g.clCount+1, 2)
		g.n, g.clPhase = 0, 0
		g.st = gCLValue
	case 1:
		if g.head&hTE != 0 {
			g.head = g.head&^hTEUnknown | hTEMany
		}
		g.head |= hTE
		g.pos, g.clPhase = 0, 0
		g.st = gTEValue
	case 2:
		g.head |= hUpgrade
	}
}

// clByte reads a Content-Length value byte as net/http does: optional
// whitespace, decimal digits up to 2^63-1, optional whitespace.
func (g *framingGuard) clByte(b byte) {
	switch {
	case b == '\n':
		if g.clPhase == 0 {
			g.head |= hCLBad // empty
		}
	case g.clPhase == 3:
		g.head |= hCLBad // CR inside the value
	case b == '\r':
		g.clPhase = 3
	case b == ' ' || b == '\t':
		if g.clPhase == 1 {
			g.clPhase = 2
		}
	case '0' <= b && b <= '9' && g.clPhase < 2:
		g.clPhase = 1
		if g.n > (1<<63-1)/10 || g.n*10+uint64(b-'0') > 1<<63-1 {
			g.head |= hCLBad
		}
		g.n = g.n*10 + uint64(b-'0')
	default:
		g.head |= hCLBad
	}
}

// teByte reads a Transfer-Encoding value byte: whether the value is
// "chunked" in any case between optional spaces and tabs, as net/http
// and the loop compare it. g.pos counts the letters matched.
func (g *framingGuard) teByte(b byte) {
	const word = "chunked"
	if 'A' <= b && b <= 'Z' {
		b += 'a' - 'A'
	}
	switch {
	case b == '\n':
		if g.head&hTEMany == 0 && (g.clPhase == 4 || int(g.pos) != len(word)) {
			g.head |= hTEUnknown
		}
	case g.clPhase == 4:
	case g.clPhase == 3: // CR inside the value
		g.clPhase = 4
	case b == '\r':
		g.clPhase = 3
	case b == ' ' || b == '\t':
		if g.clPhase == 1 {
			g.clPhase = 2
		}
	case g.clPhase == 2 || int(g.pos) >= len(word) || word[g.pos] != b:
		g.clPhase = 4
	default:
		g.clPhase = 1
		g.pos++
	}
}

// headEnd decides at the end of a head: true to refuse it, else g.st says
// how the body is read.
func (g *framingGuard) headEnd() bool {
	h := g.head
	// A repeated Content-Length, equal ones included, which net/http
	// merges: nginx refuses it, as router/h1's server does.
	if h&hFolded != 0 || g.clCount > 1 || refusedFraming(h&hTE != 0, h&hTEUnknown != 0, g.clCount > 0, h&hHTTP11 == 0) {
		return true
	}
	g.heads++
	if h&(hConnect|hUpgrade) != 0 {
		// The server may switch protocols; until it does, what follows
		// is read as requests, as nginx reads it.
		t := g.heads << 1
		if h&hConnect != 0 {
			t |= tunnelConnect
		}
		g.tunnel.Store(t)
	}
	switch {
	case h&hTEUnknown != 0:
		g.st = gTransparent // net/http answers 501
	case h&hTE != 0:
		g.st, g.n, g.digits = gChunkSize, 0, 0
	case h&hCLBad != 0:
		g.st = gTransparent // net/http's to judge
	case g.clCount == 1 && g.n > 0:
		g.st = gBody
	default:
		g.st = gHeadStart
	}
	return false
}

func hexDigit(b byte) (byte, bool) {
	switch {
	case '0' <= b && b <= '9':
		return b - '0', true
	case 'a' <= b && b <= 'f':
		return b - 'a' + 10, true
	case 'A' <= b && b <= 'F':
		return b - 'A' + 10, true
	}
	return 0, false
}
