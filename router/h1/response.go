package h1

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"
)

// Response is the head of a backend's HTTP/1.1 response, read straight from
// the connection's buffer in place of http.ReadResponse. The bytes of all
// fields become one string, and the fields go into the client's header map
// without a Response, a map or a string per value of their own: two
// allocations per response instead of about nine.
//
// It reads what http.ReadResponse reads, with the same framing decisions
// (Content-Length, chunked, until close, bodies HEAD, 1xx, 204 and 304 do
// not have), except where it reads as nginx does: a field name with a
// space before its colon is refused rather than passed on, so is a
// field folded over lines (obs-fold, RFC 9112 §5.2), a Content-Length
// repeated (equal values too) or beside Transfer-Encoding; a field
// whose name has another byte no token has is dropped rather than the
// head refused; Transfer-Encoding frames an HTTP/1.0 response's body too;
// chunk sizes are read as chunkSize reads them. Besides, the head is
// bounded (MaxResponseHead), and a Pragma is never turned into a
// Cache-Control the backend did not send. FuzzH1Head holds it to
// http.ReadResponse.
type Response struct {
	Status       int
	Reason       string // the reason phrase, passed on by a 101
	major, minor int
	Fields       []Field // in the order received, names canonical
	// Length of the body: 0 none, -1 chunked or until the connection closes.
	Length  int64
	Chunked bool
	Close   bool     // the connection ends with this response
	Trailer []string // the announced trailer names, canonical

	scratch []byte     // the fields' lines before they become one string
	spans   []headSpan // where each field lies in scratch
	text    string     // scratch as that string
	last    string     // the last head's text, shared by a head that repeats it
	kinds   fieldKind  // of all the fields
	long    []byte     // a line longer than the reader's buffer
}

// Field is one field line; names of common fields are the constants
// of commonResponseFields, others share the head's one string.
type Field struct{ Key, Value string }

// headSpan is where a field lies in scratch: its name, its value, and its
// line "Name: value\r\n" from ks to ve+2.
type headSpan struct {
	key    string // the interned name, "" when not a common one
	ks, ke int32
	vs, ve int32
	kind   fieldKind
}

// fieldKind marks the fields framing and forwarding look for, so that they
// are found without comparing names: read knows them as it interns them.
type fieldKind uint8

const (
	kindHop        fieldKind = 1 << iota // hop-by-hop (HopByHop)
	kindLength                           // Content-Length
	kindTE                               // Transfer-Encoding
	kindConnection                       // Connection
	kindTrailer                          // Trailer
	kindType                             // Content-Type
	kindEncoding                         // Content-Encoding
	kindDate                             // Date
)

// kindOf is the kind of the canonical name k.
func kindOf(k string) fieldKind {
	var kind fieldKind
	if HopByHop(k) {
		kind = kindHop
	}
	switch k {
	case "Content-Length":
		kind |= kindLength
	case "Transfer-Encoding":
		kind |= kindTE
	case "Connection":
		kind |= kindConnection
	case "Trailer":
		kind |= kindTrailer
	case "Content-Type":
		kind |= kindType
	case "Content-Encoding":
		kind |= kindEncoding
	case "Date":
		kind |= kindDate
	}
	return kind
}

// MaxResponseHead bounds a response head, status line and fields, with
// the heads of every informational response before it, as net/http's
// Transport counts them toward its own bound (10 MB). nginx refuses more
// than its proxy_buffer_size (4k in ingress-nginx). A head past it
// answers 502.
const MaxResponseHead = 1 << 20

// maxTrailer bounds the trailer of a chunked response, as net/http bounds
// it by its buffer.
const maxTrailer = bufferSize

var (
	errHeadTooLarge     = errors.New("backend response heads larger than 1 MiB")
	errTrailerTooLarge  = errors.New("backend response trailer larger than 4 KiB")
	errMalformedStatus  = errors.New("malformed backend status line")
	errMalformedField   = errors.New("malformed backend response header field")
	errFoldedResponse   = errors.New("backend response header folded over lines (obs-fold)")
	errContentLength    = errors.New("malformed or repeated Content-Length from the backend")
	errLengthAndChunked = errors.New("Content-Length and Transfer-Encoding from the backend")
	errTransferEncoding = errors.New("unsupported Transfer-Encoding from the backend")
	errTrailerName      = errors.New("backend announced a trailer that cannot be one")
)

// read reads the status line and the fields of one response to a request
// with the given method, and decides how its body is framed. The head's
// bytes are taken from budget, which the informational responses before
// a final one share with it (see MaxResponseHead).
func (h *Response) read(br *bufio.Reader, method string, budget *int) error {
	if done, err := h.readBuffered(br, method, budget); done {
		return err
	}
	return h.readLines(br, method, budget)
}

// readBuffered is read when the head lies whole in br's buffer, as it
// mostly does: the lines are taken from the buffer, not read one by one.
// Otherwise it reads nothing, leaves budget alone and reports false:
// reading the head would wait for the connection.
func (h *Response) readBuffered(br *bufio.Reader, method string, budget *int) (done bool, err error) {
	n := br.Buffered()
	if n == 0 {
		return false, nil
	}
	b, _ := br.Peek(n)
	lr := headReader{buf: b}
	left := *budget
	if err = h.readFrom(&lr, method, &left); err == errIncomplete {
		return false, nil
	}
	*budget = left
	_, _ = br.Discard(lr.off) // what read would have taken
	return true, err
}

// readLines is read, a line at a time from br.
func (h *Response) readLines(br *bufio.Reader, method string, budget *int) error {
	return h.readFrom(&headReader{br: br}, method, budget)
}

func (h *Response) readFrom(lr *headReader, method string, budget *int) error {
	h.reset()
	line, err := lr.line(budget, &h.long)
	if err != nil {
		return err
	}
	if err := h.statusLine(line); err != nil {
		return err
	}
	// The reason phrase is the first thing in scratch: it shares the
	// fields' string.
	reasonEnd := len(h.scratch)
	if err := h.readFields(lr, budget); err != nil {
		return err
	}
	// One string for every field, unless the head is the last one's byte
	// for byte (a backend answering alike within the second of its Date):
	// then it shares that string, which no one can change.
	text := h.last
	if string(h.scratch) != text {
		text = string(h.scratch)
		h.last = text
	}
	h.text = text
	h.Reason = text[:reasonEnd]
	h.Fields = h.Fields[:0]
	for _, s := range h.spans {
		k := s.key
		if k == "" {
			k = text[s.ks:s.ke]
		}
		h.Fields = append(h.Fields, Field{Key: k, Value: text[s.vs:s.ve]})
	}
	return h.frame(method)
}

// headReader gives a head's lines: from buf, a window on a reader's
// buffer, when it is set (errIncomplete once a line runs past it), from
// br otherwise.
type headReader struct {
	br  *bufio.Reader
	buf []byte
	off int // bytes of buf taken
}

// errIncomplete: the head runs past the buffered bytes.
var errIncomplete = errors.New("h1: head not buffered whole")

// line is readHeadLine's, from buf or br.
func (lr *headReader) line(budget *int, long *[]byte) ([]byte, error) {
	if lr.buf == nil {
		return readHeadLine(lr.br, budget, long)
	}
	rest := lr.buf[lr.off:]
	i := bytes.IndexByte(rest, '\n')
	if i < 0 {
		return nil, errIncomplete
	}
	lr.off += i + 1
	*budget -= i + 1
	if *budget < 0 {
		return nil, errHeadTooLarge
	}
	line := rest[:i]
	if i > 0 && line[i-1] == '\r' {
		line = line[:i-1]
	}
	return line, nil
}

// reset readies h for the next head on the connection. The strings of the
// last one may stay in Fields' spare room until release drops them.
func (h *Response) reset() {
	h.Fields = h.Fields[:0]
	h.spans = h.spans[:0]
	h.scratch = h.scratch[:0]
	h.text, h.Reason = "", ""
	h.Trailer = nil
	h.Length, h.Chunked, h.Close = 0, false, false
	h.kinds = 0
}

// release drops what the head holds of its last response, and its
// buffers if a large head grew them.
func (h *Response) release() {
	clear(h.Fields[:cap(h.Fields)]) // the strings of the last response
	h.reset()
	if cap(h.scratch) > 16<<10 {
		h.scratch = nil
	}
	if cap(h.spans) > 256 {
		h.spans, h.Fields = nil, nil
	}
	if cap(h.long) > 16<<10 {
		h.long = nil
	}
	if len(h.last) > maxLastHead {
		h.last = ""
	}
}

// maxLastHead bounds the last head's text an idle connection keeps for
// the next response to share: no more than its read buffer again.
const maxLastHead = bufferSize

// readHeadLine reads one line without its LF or CRLF. The line is valid
// until the next read; only a line longer than the reader's buffer is
// copied, into long.
func readHeadLine(br *bufio.Reader, budget *int, long *[]byte) ([]byte, error) {
	line, err := br.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		// A long line: gathered in long, which the next line may reuse.
		*long = append((*long)[:0], line...)
		for err == bufio.ErrBufferFull {
			if len(*long) > *budget {
				return nil, errHeadTooLarge
			}
			line, err = br.ReadSlice('\n')
			*long = append(*long, line...)
		}
		line = *long
	}
	if err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	*budget -= len(line)
	if *budget < 0 {
		return nil, errHeadTooLarge
	}
	line = line[:len(line)-1]
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	return line, nil
}

// statusLine parses "HTTP/1.1 200 OK" as http.ReadResponse does, and
// keeps the reason phrase in scratch. The status must be three digits
// from 100: no ResponseWriter takes anything else.
func (h *Response) statusLine(line []byte) error {
	sp := bytes.IndexByte(line, ' ')
	if sp < 0 {
		return errMalformedStatus
	}
	proto, rest := line[:sp], line[sp+1:]
	for len(rest) > 0 && rest[0] == ' ' {
		rest = rest[1:]
	}
	code := rest
	var reason []byte
	if i := bytes.IndexByte(rest, ' '); i >= 0 {
		code, reason = rest[:i], rest[i+1:]
	}
	if len(code) != 3 || code[0] < '1' || code[0] > '9' || !isDigit(code[1]) || !isDigit(code[2]) {
		return errMalformedStatus
	}
	h.Status = int(code[0]-'0')*100 + int(code[1]-'0')*10 + int(code[2]-'0')
	switch string(proto) {
	case "HTTP/1.1":
		h.major, h.minor = 1, 1
	case "HTTP/1.0":
		h.major, h.minor = 1, 0
	default:
		if len(proto) != len("HTTP/X.Y") || string(proto[:5]) != "HTTP/" || !isDigit(proto[5]) || proto[6] != '.' || !isDigit(proto[7]) {
			return errMalformedStatus
		}
		h.major, h.minor = int(proto[5]-'0'), int(proto[7]-'0')
	}
	if validValue(reason) {
		// Only a 101 passes it on, in its own status line.
		h.scratch = append(h.scratch, reason...)
	}
	return nil
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// readFields reads field lines up to the empty line that ends them,
// appending their canonical names and values to scratch and their places
// to spans. A continuation line (obs-fold) is refused: net/textproto
// would join it to the value before, nginx answers 502, and a field read
// differently by two parsers is how responses get smuggled.
func (h *Response) readFields(lr *headReader, budget *int) error {
	for {
		line, err := lr.line(budget, &h.long)
		if err != nil {
			return err
		}
		if len(line) == 0 {
			return nil
		}
		if line[0] == ' ' || line[0] == '\t' {
			return errFoldedResponse
		}
		line = trimOWS(line)
		colon := bytes.IndexByte(line, ':')
		if colon <= 0 {
			return errMalformedField
		}
		name, value := line[:colon], line[colon+1:]
		if !validValue(value) {
			return errMalformedField
		}
		value = trimLeftOWS(value)
		// The field goes to scratch as the line a proxy writes of it,
		// "Name: value\r\n", name canonical: a line that came so is
		// copied whole.
		s := headSpan{ks: int32(len(h.scratch))}
		slot, k := commonResponseField(name)
		if k != "" && colon+1 < len(line) && line[colon+1] == ' ' && len(line)-len(value) == colon+2 {
			h.scratch = append(h.scratch, line...)
			s.key, s.kind = k, commonFieldKinds[slot]
			s.ke = s.ks + int32(colon)
			s.vs = s.ke + 2
		} else {
			h.scratch = append(h.scratch, name...)
			if k == "" {
				canon := h.scratch[s.ks:]
				if !canonicalizeName(canon) {
					if !nginxFieldName(name) {
						return errMalformedField
					}
					// nginx reads a name with a byte no token has (but a
					// space, control byte or DEL) and passes it on
					// (ngx_http_parse_header_line); net/http's writers
					// drop it, so the response is served without it
					// rather than refused.
					h.scratch = h.scratch[:s.ks]
					continue
				}
				slot, k = commonResponseField(canon)
			}
			if k != "" {
				s.kind = commonFieldKinds[slot]
			} else {
				s.kind = kindOf(string(h.scratch[s.ks:]))
			}
			s.key = k
			s.ke = int32(len(h.scratch))
			h.scratch = append(h.scratch, ": "...)
			s.vs = int32(len(h.scratch))
			h.scratch = append(h.scratch, value...)
		}
		s.ve = int32(len(h.scratch))
		h.scratch = append(h.scratch, "\r\n"...)
		h.kinds |= s.kind
		h.spans = append(h.spans, s)
	}
}

// nginxFieldName reports a field name nginx's parser reads: no space,
// control byte or DEL (a colon ends it).
func nginxFieldName(name []byte) bool {
	for _, c := range name {
		if c <= ' ' || c == 0x7f {
			return false
		}
	}
	return len(name) > 0
}

// canonicalizeName turns a field name into its canonical form in place
// (content-type → Content-Type) and reports whether it is a token.
func canonicalizeName(a []byte) bool {
	upper := true
	for i, c := range a {
		if !isTokenByte(c) {
			return false
		}
		if upper && 'a' <= c && c <= 'z' {
			c -= 'a' - 'A'
		} else if !upper && 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		a[i] = c
		upper = c == '-'
	}
	return len(a) > 0
}

// frame decides, from the fields, how the body is delimited and whether
// the connection may carry another request, as net/http's readTransfer
// does for a response.
func (h *Response) frame(method string) error {
	var te, cl string
	teCount, clCount := 0, 0
	hasClose, hasKeepAlive := false, false
	var trailer []string
	for i := 0; i < len(h.Fields) && h.kinds&(kindTE|kindLength|kindConnection|kindTrailer) != 0; i++ {
		f := &h.Fields[i]
		switch h.spans[i].kind &^ kindHop {
		case kindTE:
			te = f.Value
			teCount++
		case kindLength:
			// A repeat, even of the same value, is refused, as nginx
			// refuses it ("upstream sent duplicate header line").
			if clCount > 0 {
				return errContentLength
			}
			cl = trimOWS(f.Value)
			clCount++
		case kindConnection:
			v := []string{f.Value}
			hasClose = hasClose || ListsToken(v, "close")
			hasKeepAlive = hasKeepAlive || ListsToken(v, "keep-alive")
		case kindTrailer:
			trailer = append(trailer, f.Value)
		}
	}
	// Both framings: nginx refuses it, whatever the version ("upstream
	// sent \"Content-Length\" and \"Transfer-Encoding\" headers at the
	// same time"), where net/http reads chunks: a proxy that chooses one
	// framing of an ambiguous message is how responses get smuggled.
	if teCount > 0 && clCount > 0 {
		return errLengthAndChunked
	}
	switch {
	case h.major < 1:
		h.Close = true
	case h.major == 1 && h.minor == 0:
		h.Close = hasClose || !hasKeepAlive
	default:
		h.Close = hasClose
	}
	// Transfer-Encoding frames the body whatever the version, as nginx
	// reads it (ngx_http_upstream_process_transfer_encoding), where
	// net/http ignores it in an HTTP/1.0 response and would pass the
	// chunks on as data. Such a response's framing is faulty (RFC 9112
	// §6.1): its connection is not kept.
	if teCount > 0 && h.major == 1 && h.minor == 0 {
		h.Close = true
	}
	if teCount > 0 {
		if teCount != 1 || !strings.EqualFold(te, "chunked") {
			return errTransferEncoding
		}
		h.Chunked = true
	}
	var n int64
	if clCount > 0 {
		var err error
		if n, err = parseContentLength(cl); err != nil {
			return errContentLength
		}
	}
	if h.Chunked && len(trailer) > 0 {
		for _, v := range trailer {
			for v != "" {
				var name string
				name, v, _ = strings.Cut(v, ",")
				name = trimOWS(name)
				if name == "" {
					continue
				}
				name = http.CanonicalHeaderKey(name)
				if forbiddenTrailer(name) {
					return errTrailerName
				}
				if !slices.Contains(h.Trailer, name) {
					h.Trailer = append(h.Trailer, name)
				}
			}
		}
	}
	switch {
	case method == http.MethodHead, h.Status < 200, h.Status == http.StatusNoContent, h.Status == http.StatusNotModified:
		h.Length = 0
	case h.Chunked:
		h.Length = -1
	case clCount > 0:
		h.Length = n
	default:
		// Neither length nor chunks: the body ends when the connection
		// does.
		h.Length = -1
		h.Close = true
	}
	return nil
}

// forwarded reports that field i goes to the client: not hop-by-hop, not
// hidden, not named by the response's Connection field. (frame refused a
// Content-Length repeated or beside Transfer-Encoding.)
func (h *Response) forwarded(i int, connection []string, hide func(string) bool) bool {
	f := h.Fields[i]
	if HopByHop(f.Key) || hide(f.Key) || len(connection) > 0 && ListsToken(connection, f.Key) {
		return false
	}
	return true
}

// connection gathers the values of the Connection fields; nil when there
// are none, without allocating for one.
func (h *Response) connection(one *[1]string) []string {
	var l []string
	for _, f := range h.Fields {
		if f.Key == "Connection" {
			if l == nil {
				one[0] = f.Value
				l = one[:]
			} else {
				l = append(l[:len(l):len(l)], f.Value)
			}
		}
	}
	return l
}

// CopyTo adds the fields a proxy passes on to the client's header map,
// after any values already there, with one slice for all values: neither
// hop-by-hop fields nor those hide reports (the proxy's own policy).
func (h *Response) CopyTo(dst http.Header, hide func(key string) bool) {
	var one [1]string
	conn := h.connection(&one)
	var vals []string
	// Into an empty map, the names of a short head are looked up only
	// when an earlier field had them too (a scan of the fields before is
	// cheaper than a lookup up to about this many).
	fresh := len(dst) == 0 && len(h.Fields) <= 16
	for i, f := range h.Fields {
		if !h.forwarded(i, conn, hide) {
			continue
		}
		v := f.Value
		if !fresh || h.repeated(i) {
			if old := dst[f.Key]; old != nil {
				// Never into the spare capacity of a slice another map
				// may share.
				dst[f.Key] = append(old[:len(old):len(old)], v)
				continue
			}
		}
		if vals == nil {
			vals = make([]string, len(h.Fields)-i)
		}
		vals[0] = v
		dst[f.Key], vals = vals[:1:1], vals[1:]
	}
}

// appendForwarded appends to dst the fields CopyTo would add to an empty
// map, in the order they came, with their lines in h.text. It decides as
// forwarded does, in one pass.
func (h *Response) appendForwarded(dst []relayedField, hide Hider) []relayedField {
	var one [1]string
	var conn []string
	if h.kinds&kindConnection != 0 {
		conn = h.connection(&one)
	}
	for i := range h.Fields {
		f, s := &h.Fields[i], &h.spans[i]
		if s.kind&kindHop != 0 || hide.Hidden(f.Key) || len(conn) > 0 && ListsToken(conn, f.Key) {
			continue
		}
		dst = append(dst, relayedField{Field: *f, kind: s.kind, ls: s.ks, le: s.ve + 2})
	}
	return dst
}

// ForwardedValue is the first value of the named field among those
// CopyTo passes on, "" if none: what the client's header map would hold
// first under key.
func (h *Response) ForwardedValue(key string, hide func(key string) bool) string {
	var one [1]string
	conn := h.connection(&one)
	for i, f := range h.Fields {
		if f.Key == key && h.forwarded(i, conn, hide) {
			return f.Value
		}
	}
	return ""
}

// repeated reports whether a field before the i-th has its name.
func (h *Response) repeated(i int) bool {
	k := h.Fields[i].Key
	for _, f := range h.Fields[:i] {
		if f.Key == k {
			return true
		}
	}
	return false
}

// Get is the first value of the named field, "" if none.
func (h *Response) Get(key string) string {
	for _, f := range h.Fields {
		if f.Key == key {
			return f.Value
		}
	}
	return ""
}

// readTrailer reads the trailer after a chunked body's last chunk.
func (h *Response) readTrailer(br *bufio.Reader) (http.Header, error) {
	h.spans = h.spans[:0]
	h.scratch = h.scratch[:0]
	budget := maxTrailer
	if err := h.readFields(&headReader{br: br}, &budget); err != nil {
		if err == errHeadTooLarge {
			err = errTrailerTooLarge
		}
		return nil, err
	}
	if len(h.spans) == 0 {
		return nil, nil
	}
	text := string(h.scratch)
	t := make(http.Header, len(h.spans))
	for _, s := range h.spans {
		k := s.key
		if k == "" {
			k = text[s.ks:s.ke]
		}
		t[k] = append(t[k], text[s.vs:s.ve])
	}
	return t, nil
}

// commonResponseFields are the names most responses carry, so that they
// need no string of their own.
var commonResponseFields = func() (t [256]string) {
	for _, k := range []string{
		"Accept-Ranges", "Access-Control-Allow-Credentials", "Access-Control-Allow-Headers",
		"Access-Control-Allow-Methods", "Access-Control-Allow-Origin", "Access-Control-Expose-Headers",
		"Access-Control-Max-Age", "Age", "Allow", "Alt-Svc", "Cache-Control", "Connection",
		"Content-Disposition", "Content-Encoding", "Content-Language", "Content-Length",
		"Content-Location", "Content-Range", "Content-Security-Policy", "Content-Type", "Date",
		"Etag", "Expires", "Grpc-Message", "Grpc-Status", "Keep-Alive", "Last-Modified", "Link",
		"Location", "Pragma", "Proxy-Authenticate", "Referrer-Policy", "Retry-After", "Server",
		"Set-Cookie", "Strict-Transport-Security", "Te", "Trailer", "Transfer-Encoding", "Upgrade",
		"Vary", "Via", "Www-Authenticate", "X-Content-Type-Options", "X-Frame-Options",
		"X-Powered-By", "X-Request-Id", "X-Xss-Protection",
	} {
		i := fieldSlot(k)
		if t[i] != "" {
			panic("h1: common response fields " + t[i] + " and " + k + " share a slot")
		}
		t[i] = k
	}
	return t
}()

// fieldSlot is the slot in commonResponseFields of a canonical field name
// of two bytes or more: a hash of its length and first and last two
// bytes, with a multiplier found to give the table's names a slot each
// (its initialization checks it). It costs a fifth of a map lookup.
func fieldSlot[S string | []byte](k S) byte {
	n := len(k)
	x := uint32(n&0xff) | uint32(k[0])<<8 | uint32(k[n-1])<<16 | uint32(k[n-2])<<24
	return byte(x * 0x8611a141 >> 24)
}

// commonFieldKinds are the kinds of commonResponseFields, slot by slot.
var commonFieldKinds = func() (t [256]fieldKind) {
	for i, k := range commonResponseFields {
		if k != "" {
			t[i] = kindOf(k)
		}
	}
	return t
}()

// commonResponseField is the interned copy of the canonical field name k
// and its slot, "" when k is not one of commonResponseFields.
func commonResponseField(k []byte) (byte, string) {
	if len(k) < 2 {
		return 0, ""
	}
	slot := fieldSlot(k)
	if c := commonResponseFields[slot]; c == string(k) {
		return slot, c
	}
	return 0, ""
}

// HopByHop reports a response field a proxy must not pass on (RFC 9110
// §7.6.1).
func HopByHop(k string) bool {
	switch k {
	case "Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate", "Proxy-Authorization",
		"Te", "Trailer", "Transfer-Encoding", "Upgrade":
		return true
	}
	return false
}

// responseBody reads a response body as its head frames it: chunks, a
// length, or up to the end of the connection (remaining < 0 without
// chunks).
type responseBody struct {
	br        *bufio.Reader
	chunks    io.Reader
	remaining int64
	// pc and read bound the wait between two reads of the backend's body
	// (proxy-read-timeout, SPEC §13), when read > 0.
	pc   *Conn
	read time.Duration
}

func (b *responseBody) Read(p []byte) (int, error) {
	if b.read > 0 && b.br.Buffered() == 0 && (b.chunks != nil || b.remaining != 0) {
		b.pc.awaitBody(b.read)
	}
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
