package h1

import (
	"bufio"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// response is the connection's http.ResponseWriter, reused per request.
// It implements http.Flusher, http.Hijacker and the deadlines of
// http.ResponseController.
type response struct {
	c      *conn
	req    *http.Request
	header http.Header
	// snapshot is the header as of WriteHeader when the handler declared
	// trailers (it sets their values in header later); else nil.
	snapshot http.Header

	status        int
	wroteHeader   bool // WriteHeader was called (or implied)
	committed     bool // the head is in c.bw
	handlerDone   bool
	contentLength int64 // declared or computed; -1: none
	written       int64
	headBytes     int64 // the head's size, once committed
	chunking      bool
	closeAfter    bool
	isHEAD        bool
	badCL         bool
	wants10KA     bool
	wantsClose    bool
	trailers      []string // declared trailer keys
	pending       []byte   // body held before the head is sent
	// relayed are a backend's fields given to Relay, in the order they
	// came, while relaying: the head is written from them rather than
	// from header, which stays empty until Header is called (relay.go).
	relayed   []relayedField
	relayText string // the relayed fields' lines lie in it
	relaying  bool
	rf        headFacts // relayed's, gathered as Relay took them

	wroteWriteDeadline bool
	wroteReadDeadline  bool // the handler moved the read deadline

	// dateAt is the idleClock reading the head's Date was written for (0:
	// none was), and dateFlushed c.flushed once the head was written:
	// while it stays so, nothing reached the socket since, and the wait
	// that ends the response (flushAndAwait) takes its time from dateAt.
	dateAt      time.Duration
	dateFlushed int64

	// fullDuplex: the handler reads the request body while it writes the
	// response (EnableFullDuplex), so the head is sent without draining
	// the body; drainLater: the drain is left to finish, after the
	// handler returned.
	fullDuplex, drainLater bool

	continueMu  sync.Mutex
	canContinue atomic.Bool

	statusBuf [3]byte
	clenBuf   [20]byte
}

func (w *response) reset(req *http.Request) {
	clear(w.header)
	w.req, w.snapshot = req, nil
	w.status, w.wroteHeader, w.committed, w.handlerDone = 0, false, false, false
	w.contentLength, w.written, w.chunking, w.closeAfter, w.badCL = -1, 0, false, false, false
	w.headBytes, w.dateAt = 0, 0
	w.isHEAD = req.Method == "HEAD"
	conn := headerGet(req.Header, "Connection")
	w.wants10KA = req.ProtoMajor == 1 && req.ProtoMinor == 0 && hasToken(conn, "keep-alive")
	w.wantsClose = req.Close || hasToken(conn, "close")
	w.trailers = w.trailers[:0]
	w.pending = w.pending[:0]
	if len(w.relayed) > 0 {
		clear(w.relayed) // the strings of the last response
		w.relayed = w.relayed[:0]
		w.rf = headFacts{}
	}
	w.relayText = ""
	w.relaying = false
	w.wroteWriteDeadline, w.wroteReadDeadline = false, false
	w.fullDuplex, w.drainLater = false, false
	w.canContinue.Store(false)
}

func (w *response) Header() http.Header {
	if w.relaying {
		w.unrelay()
	}
	return w.header
}

// sendContinue writes 100 Continue before the body's first read, unless
// the response has begun.
func (w *response) sendContinue() {
	c := w.c
	c.b.expect = false
	if !w.canContinue.Load() {
		return
	}
	w.continueMu.Lock()
	defer w.continueMu.Unlock()
	if w.canContinue.Load() {
		c.bw.WriteString("HTTP/1.1 100 Continue\r\n\r\n")
		c.bw.Flush()
		w.canContinue.Store(false)
	}
}

// noContinue is for a response that begins: no 100 Continue any more.
// Only the server sets canContinue, before the handler runs: once false
// it stays so, and needs no lock to be left so.
func (w *response) noContinue() {
	if w.canContinue.Load() {
		w.continueMu.Lock()
		w.canContinue.Store(false)
		w.continueMu.Unlock()
	}
}

func (w *response) WriteHeader(code int) {
	if w.c.state.Load() == stateHijacked {
		w.c.srv.logf("http: response.WriteHeader on hijacked connection")
		return
	}
	if w.wroteHeader {
		w.c.srv.logf("http: superfluous response.WriteHeader call")
		return
	}
	if code < 100 || code > 999 {
		panic("invalid WriteHeader code " + strconv.Itoa(code))
	}
	if code < 101 || code > 199 {
		w.noContinue()
	}
	if code >= 100 && code <= 199 && code != http.StatusSwitchingProtocols {
		w.continueMu.Lock()
		w.writeStatusLine(code)
		w.writeFields(w.header, func(k string) bool { return k == "Content-Length" || k == "Transfer-Encoding" })
		w.c.bw.WriteString("\r\n")
		w.c.bw.Flush()
		w.continueMu.Unlock()
		return
	}
	w.wroteHeader, w.status = true, code
	if _, ok := w.header["Trailer"]; ok {
		w.snapshot = w.header.Clone()
	}
	w.declaredLength(headerGet(w.header, "Content-Length"))
}

// declaredLength takes the Content-Length the head declares ("" when
// none) as the body's length.
func (w *response) declaredLength(cl string) {
	if cl == "" {
		return
	}
	v, err := parseDecimal(cl)
	if err == nil && v >= 0 {
		w.contentLength = v
	} else {
		w.c.srv.logf("http: invalid Content-Length of %q", cl)
		// As net/http: it deletes it from the handler's header, but
		// writes the snapshot it took when the handler first asked
		// for the header, which still has it; no Content-Length is
		// computed either.
		w.badCL = true
	}
}

func bodyAllowedForStatus(status int) bool {
	switch {
	case status >= 100 && status <= 199, status == 204, status == 304:
		return false
	}
	return true
}

func (w *response) Write(p []byte) (int, error) { return w.write(p, "") }

func (w *response) WriteString(s string) (int, error) { return w.write(nil, s) }

func (w *response) write(p []byte, s string) (int, error) {
	if w.c.state.Load() == stateHijacked {
		return 0, http.ErrHijacked
	}
	if w.c.werr != nil {
		return 0, w.c.werr
	}
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	n := len(p) + len(s)
	if n == 0 {
		return 0, nil
	}
	if !bodyAllowedForStatus(w.status) {
		return 0, http.ErrBodyNotAllowed
	}
	w.written += int64(n)
	if w.contentLength != -1 && w.written > w.contentLength {
		return 0, http.ErrContentLength
	}
	if !w.committed {
		if len(w.pending)+n <= preCommit {
			w.pending = append(w.pending, p...)
			w.pending = append(w.pending, s...)
			return n, nil
		}
		w.commit(w.pending)
		w.writeBody(w.pending, "")
		w.pending = w.pending[:0]
	}
	w.writeBody(p, s)
	if w.c.werr != nil {
		return 0, w.c.werr
	}
	return n, nil
}

// writeBody writes body bytes after the head, framed.
func (w *response) writeBody(p []byte, s string) {
	n := len(p) + len(s)
	if n == 0 || w.isHEAD || !bodyAllowedForStatus(w.status) {
		return
	}
	bw := w.c.bw
	if w.chunking {
		bw.Write(strconv.AppendInt(w.clenBuf[:0], int64(n), 16))
		bw.WriteString("\r\n")
	}
	bw.Write(p)
	bw.WriteString(s)
	if w.chunking {
		bw.WriteString("\r\n")
	}
}

// Flush sends the head and what the handler wrote.
func (w *response) Flush() { _ = w.FlushError() }

func (w *response) FlushError() error {
	if w.c.state.Load() == stateHijacked {
		return http.ErrHijacked
	}
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	if !w.committed {
		w.commit(w.pending)
		w.writeBody(w.pending, "")
		w.pending = w.pending[:0]
	}
	return w.c.bw.Flush()
}

// finish ends the response after the handler returned; with flush it
// writes what is left of it too.
func (w *response) finish(flush bool) {
	w.handlerDone = true
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	if !w.committed {
		w.commit(w.pending)
		w.writeBody(w.pending, "")
		w.pending = w.pending[:0]
	} else if w.drainLater && !w.closeAfter && !w.c.b.drain() {
		// The head went out as the handler still read the body: what it
		// left unread is dropped now, and unless that ends it the
		// connection closes after the response.
		w.closeAfter = true
	}
	bw := w.c.bw
	if w.chunking {
		bw.WriteString("0\r\n")
		w.writeTrailers()
		bw.WriteString("\r\n")
	}
	if flush {
		bw.Flush()
	}
}

// reuse reports whether the connection may carry another request.
func (w *response) reuse() bool {
	if w.closeAfter || w.c.werr != nil || w.c.b.closedEarly() {
		return false
	}
	return w.isHEAD || w.contentLength == -1 || !bodyAllowedForStatus(w.status) || w.contentLength == w.written
}

func (w *response) writeTrailers() {
	bw := w.c.bw
	write := func(k string, vv []string) {
		for _, v := range vv {
			if !isToken(k) {
				continue
			}
			bw.WriteString(k)
			bw.WriteString(": ")
			bw.WriteString(cleanValue(v))
			bw.WriteString("\r\n")
		}
	}
	for _, k := range w.trailers {
		write(k, w.header[k])
	}
	for k, vv := range w.header {
		if key, ok := strings.CutPrefix(k, http.TrailerPrefix); ok {
			write(key, vv)
		}
	}
}

// commit writes the head, as net/http's chunkWriter.writeHeader decides
// it; p is the body held so far. The fields it decides from are gathered
// in one pass over the header (or taken from the relayed fields), not
// looked up one by one.
func (w *response) commit(p []byte) {
	w.committed = true
	c := w.c
	keepAlives := c.srv.keepAlives() && (c.srv.MaxRequests <= 0 || c.served < c.srv.MaxRequests) && !c.old
	header := w.header
	if w.snapshot != nil {
		header = w.snapshot
	}
	var f headFacts
	if w.relaying {
		f = w.rf
	} else {
		f.gather(header)
	}
	var exclude [6]string
	nx := 0
	del := func(k string, present bool) {
		if present && nx < len(exclude) {
			exclude[nx] = k
			nx++
		}
	}
	hasTrailers := false
	for _, v := range f.trailer {
		hasTrailers = true
		for name := range strings.SplitSeq(v, ",") {
			if name = strings.TrimSpace(name); name != "" {
				k := http.CanonicalHeaderKey(name)
				switch k {
				case "Transfer-Encoding", "Trailer", "Content-Length":
				default:
					w.trailers = append(w.trailers, k)
				}
			}
		}
	}
	te := f.te
	hasTE := te != ""
	var setCL, setConn, setTE, setCT string
	if w.handlerDone && !hasTrailers && !hasTE && bodyAllowedForStatus(w.status) && f.cl == "" && !w.badCL && (!w.isHEAD || len(p) > 0) && !f.prefixTrailer {
		w.contentLength = int64(len(p))
		setCL = "set"
	}
	if w.wants10KA && keepAlives {
		if f.cl != "" && f.conn == "keep-alive" {
			w.closeAfter = false
		}
	}
	hasCL := w.contentLength != -1
	if w.wants10KA && (w.isHEAD || hasCL || !bodyAllowedForStatus(w.status)) {
		if !f.hasConn {
			setConn = "keep-alive"
		}
	} else if !w.req.ProtoAtLeast(1, 1) || w.wantsClose {
		w.closeAfter = true
	}
	if f.conn == "close" || !keepAlives {
		w.closeAfter = true
	}
	if w.req.ContentLength != 0 && !w.closeAfter {
		if w.fullDuplex && !w.handlerDone {
			// The body is the handler's to read on: draining it here
			// would take bytes from under its reader.
			w.drainLater = true
		} else if !c.b.drain() {
			w.closeAfter = true
			if c.b.limitHit {
				del("Connection", f.hasConn)
				setConn = "close"
			}
		}
	}
	code := w.status
	if bodyAllowedForStatus(code) {
		if !f.hasCT && !hasTE && len(p) > 0 && f.ce == "" {
			setCT = http.DetectContentType(p)
		}
	} else {
		if code == http.StatusNotModified {
			del("Content-Type", f.hasCT)
		}
		del("Content-Length", f.hasCL)
		del("Transfer-Encoding", f.hasTE)
	}
	if hasCL && hasTE && te != "identity" {
		c.srv.logf("http: WriteHeader called with both Transfer-Encoding of %q and a Content-Length of %d", te, w.contentLength)
		del("Content-Length", f.hasCL)
		hasCL = false
	}
	switch {
	case w.isHEAD || !bodyAllowedForStatus(code) || code == http.StatusNoContent:
		del("Transfer-Encoding", f.hasTE)
	case hasCL:
		del("Transfer-Encoding", f.hasTE)
	case w.req.ProtoAtLeast(1, 1):
		if hasTE && te == "identity" {
			w.chunking = false
			w.closeAfter = true
			del("Transfer-Encoding", f.hasTE)
		} else {
			w.chunking = true
			setTE = "chunked"
			if hasTE && te == "chunked" {
				del("Transfer-Encoding", f.hasTE)
			}
		}
	default:
		w.closeAfter = true
		del("Transfer-Encoding", f.hasTE)
	}
	if w.chunking {
		del("Content-Length", f.hasCL)
	}
	if w.closeAfter && (!keepAlives || !hasCloseToken(f.conn)) && !isProtocolSwitch(code, header) {
		del("Connection", f.hasConn)
		if w.req.ProtoAtLeast(1, 1) || setConn == "keep-alive" {
			// An HTTP/1.0 client told above that it is kept is told it
			// is not, as nginx tells it.
			setConn = "close"
		}
	}
	bw := c.bw
	headStart := c.flushed + int64(bw.Buffered())
	w.writeStatusLine(code)
	excluded := exclude[:nx]
	if w.relaying {
		w.writeRelayed(excluded)
	} else {
		w.writeFields(header, func(k string) bool {
			if strings.HasPrefix(k, http.TrailerPrefix) {
				return true
			}
			for _, x := range excluded {
				if x == k {
					return true
				}
			}
			return false
		})
	}
	if setCL != "" {
		bw.WriteString("Content-Length: ")
		bw.Write(strconv.AppendInt(w.clenBuf[:0], w.contentLength, 10))
		bw.WriteString("\r\n")
	}
	if setCT != "" {
		bw.WriteString("Content-Type: " + setCT + "\r\n")
	}
	if setConn != "" {
		bw.WriteString("Connection: ")
		bw.WriteString(setConn)
		bw.WriteString("\r\n")
	}
	if setTE != "" {
		bw.WriteString("Transfer-Encoding: chunked\r\n")
	}
	if !f.hasDate {
		w.dateAt = idleClock()
		bw.Write(dateFieldAt(w.dateAt))
	}
	bw.WriteString("\r\n")
	w.headBytes = c.flushed + int64(bw.Buffered()) - headStart
	w.dateFlushed = c.flushed
}

// HeadBytes is the size of the response head (status line, fields, empty
// line), for the router's record, as nginx's $bytes_sent counts it: as sent
// once committed; before, while relaying, as the relayed lines and the
// status line and Date that go with them (the Connection and framing
// fields commit may add are not known yet); else 0, the header map then
// being the caller's to size.
func (w *response) HeadBytes() int64 {
	if w.committed {
		return w.headBytes
	}
	if !w.relaying {
		return 0
	}
	n := len("HTTP/1.1 000 ") + len(http.StatusText(w.status)) + len("\r\n\r\n")
	for i := range w.relayed {
		n += int(w.relayed[i].le - w.relayed[i].ls)
	}
	if !w.rf.hasDate {
		n += len("Date: Mon, 02 Jan 2006 15:04:05 GMT\r\n")
	}
	return int64(n)
}

// headFacts are the fields of a head commit decides its framing from.
type headFacts struct {
	te, cl, conn, ce                      string // the first values, "" when none
	hasTE, hasCL, hasConn, hasCT, hasDate bool   // present, with a value or not
	trailer                               []string
	prefixTrailer                         bool // a field under http.TrailerPrefix
}

// gather takes the facts from a header map in one pass: for the few
// fields a response has, cheaper than a lookup of each.
func (f *headFacts) gather(h http.Header) {
	for k, vv := range h {
		first := ""
		if len(vv) > 0 {
			first = vv[0]
		}
		switch k {
		case "Transfer-Encoding":
			f.hasTE, f.te = true, first
		case "Content-Length":
			f.hasCL, f.cl = true, first
		case "Connection":
			f.hasConn, f.conn = true, first
		case "Content-Type":
			f.hasCT = true
		case "Content-Encoding":
			f.ce = first
		case "Date":
			f.hasDate = true
		case "Trailer":
			f.trailer = vv
		default:
			if strings.HasPrefix(k, http.TrailerPrefix) {
				f.prefixTrailer = true
			}
		}
	}
}

func hasCloseToken(v string) bool { return hasToken(v, "close") }

func isProtocolSwitch(code int, h http.Header) bool {
	return code == http.StatusSwitchingProtocols && headerGet(h, "Upgrade") != "" && ListsToken(h["Connection"], "Upgrade")
}

func (w *response) writeStatusLine(code int) {
	bw := w.c.bw
	if w.req.ProtoAtLeast(1, 1) {
		if code == http.StatusOK {
			bw.WriteString("HTTP/1.1 200 OK\r\n")
			return
		}
		bw.WriteString("HTTP/1.1 ")
	} else {
		bw.WriteString("HTTP/1.0 ")
	}
	if text := http.StatusText(code); text != "" {
		bw.Write(strconv.AppendInt(w.statusBuf[:0], int64(code), 10))
		bw.WriteByte(' ')
		bw.WriteString(text)
	} else {
		bw.Write(strconv.AppendInt(w.statusBuf[:0], int64(code), 10))
		bw.WriteString(" status code ")
		bw.Write(strconv.AppendInt(w.statusBuf[:0], int64(code), 10))
	}
	bw.WriteString("\r\n")
}

// writeFields writes header's fields but those skip names, as
// http.Header.WriteSubset does (values with CR or LF have them as
// spaces, and are trimmed), in map order.
func (w *response) writeFields(header http.Header, skip func(string) bool) {
	bw := w.c.bw
	for k, vv := range header {
		if !isToken(k) || skip(k) {
			continue
		}
		for _, v := range vv {
			WriteField(bw, k, cleanValue(v))
		}
	}
}

var newlineToSpace = strings.NewReplacer("\n", " ", "\r", " ")

func cleanValue(v string) string {
	if strings.IndexByte(v, '\n') >= 0 || strings.IndexByte(v, '\r') >= 0 {
		v = newlineToSpace.Replace(v)
	}
	return trimOWS(v)
}

// dateLine is the Date field line ("Date: ...\r\n") for the wall-clock
// second that ends when idleClock reaches until. It is never changed once
// published.
type dateLine struct {
	until time.Duration
	line  [len("Date: Mon, 02 Jan 2006 15:04:05 GMT\r\n")]byte
}

// dateNow is the current dateLine, made at most once a second: a request
// reads the monotonic clock alone, as nginx's cached time spares a clock
// read per request.
var dateNow atomic.Pointer[dateLine]

// dateField is the Date field line for now, to be written as it is.
func dateField() []byte { return dateFieldAt(idleClock()) }

// dateFieldAt is dateField for the idleClock reading d, just taken.
func dateFieldAt(d time.Duration) []byte {
	if l := dateNow.Load(); l != nil && d < l.until {
		return l.line[:]
	}
	// Read after d, so until falls at the second's end or just before it:
	// a line is never served past its second.
	now := time.Now()
	l := &dateLine{until: d + time.Second - time.Duration(now.Nanosecond())}
	b := append(l.line[:0], "Date: "...)
	b = now.UTC().AppendFormat(b, http.TimeFormat)
	_ = append(b, "\r\n"...)
	dateNow.Store(l)
	return l.line[:]
}

// Hijack hands the connection to the handler, as net/http's: the head,
// if written, is flushed first; the reader holds what was read ahead.
func (w *response) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	c := w.c
	if c.state.Load() == stateHijacked {
		return nil, nil, http.ErrHijacked
	}
	if w.wroteHeader && !w.committed {
		w.commit(w.pending)
		w.writeBody(w.pending, "")
		w.pending = w.pending[:0]
	}
	// As net/http's: no 100 Continue once hijacked. A body reader still
	// at its first read (the sender of an Upgrade's body) would write it
	// to bw under the hijacker, whose bytes these are; noContinue waits
	// for one being written.
	w.noContinue()
	c.cr.abortPendingRead()
	if err := c.bw.Flush(); err != nil {
		return nil, nil, err
	}
	if c.headDeadline {
		// As under net/http, the hijacker gets no read deadline.
		_ = c.rwc.SetReadDeadline(time.Time{})
	}
	c.state.Store(stateHijacked)
	c.srv.untrack(c)
	return c.rwc, bufio.NewReadWriter(c.br, bufio.NewWriter(c.rwc)), nil
}

// EnableFullDuplex is http.ResponseController's, as net/http's: the
// handler goes on reading the request body after the response began, so
// the head is sent without draining the body (net/http's rule for a
// handler that does not read it); what is left unread when the handler
// returns is drained then.
func (w *response) EnableFullDuplex() error {
	w.fullDuplex = true
	return nil
}

// SetReadDeadline and SetWriteDeadline are http.ResponseController's.
func (w *response) SetReadDeadline(t time.Time) error {
	w.wroteReadDeadline = true
	return w.c.rwc.SetReadDeadline(t)
}

func (w *response) SetWriteDeadline(t time.Time) error {
	w.wroteWriteDeadline = true
	return w.c.rwc.SetWriteDeadline(t)
}

// headerGet is Header.Get for a key already in canonical form, the constants
// above: a map lookup without canonicalizing the key on every call
// (issue 41: Header.Get in commit was ~1% of the loop's CPU).
func headerGet(h http.Header, key string) string {
	if v := h[key]; len(v) > 0 {
		return v[0]
	}
	return ""
}
