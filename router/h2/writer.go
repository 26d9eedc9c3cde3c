package h2

import (
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// responseWriter is a stream's http.ResponseWriter. It holds up to
// responseBuffer bytes of body, so that a response written whole leaves
// as HEADERS and DATA in one write, with its Content-Length.
type responseWriter struct {
	st          *stream
	header      http.Header
	status      int
	wroteHeader bool
	sentHeader  bool
	declared    int64 // the handler's Content-Length, -1 when none
	written     int64
	buf         []byte // body not yet sent
	hbuf        []byte // header blocks being encoded
	trailers    []string
	length      int // a Content-Length to add to the head, -1: none
}

func (w *responseWriter) Header() http.Header { return w.header }

func (w *responseWriter) WriteHeader(code int) {
	if w.wroteHeader {
		return
	}
	if code < 100 || code > 999 {
		panic("invalid WriteHeader code " + strconv.Itoa(code))
	}
	if code < 200 && code != http.StatusSwitchingProtocols {
		// An informational response goes out at once; the final one follows.
		w.hbuf = w.encodeHead(w.hbuf[:0], code, nil)
		c := w.st.c
		c.mu.Lock()
		if w.st.aborted == nil && !c.closed {
			c.waitRoom()
			c.appendHeaders(w.st.id, w.hbuf, false)
			c.queued()
		}
		c.mu.Unlock()
		return
	}
	w.wroteHeader = true
	w.status = code
	w.declared, w.length = -1, -1
	if v := w.header["Content-Length"]; len(v) > 0 {
		if n, err := strconv.ParseInt(v[0], 10, 64); err == nil && n >= 0 {
			w.declared = n
		} else {
			delete(w.header, "Content-Length")
		}
	}
	for _, v := range w.header["Trailer"] {
		for _, k := range strings.Split(v, ",") {
			if k = strings.TrimSpace(k); k != "" {
				w.trailers = append(w.trailers, http.CanonicalHeaderKey(k))
			}
		}
	}
}

func bodyAllowed(status int) bool {
	return !(status >= 100 && status < 200 || status == http.StatusNoContent || status == http.StatusNotModified)
}

func (w *responseWriter) Write(p []byte) (int, error) {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	if !bodyAllowed(w.status) {
		return 0, http.ErrBodyNotAllowed
	}
	if w.declared >= 0 && w.written+int64(len(p)) > w.declared {
		return 0, http.ErrContentLength
	}
	if err := w.st.writeErr(); err != nil {
		return 0, err
	}
	w.written += int64(len(p))
	if w.st.req.Method == http.MethodHead {
		return len(p), nil
	}
	if len(w.buf)+len(p) <= responseBuffer {
		w.buf = append(w.buf, p...)
		return len(p), nil
	}
	if err := w.send(false, p, false); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (w *responseWriter) WriteString(s string) (int, error) {
	if len(w.buf)+len(s) <= responseBuffer && w.wroteHeader && bodyAllowed(w.status) &&
		(w.declared < 0 || w.written+int64(len(s)) <= w.declared) && w.st.req.Method != http.MethodHead {
		if err := w.st.writeErr(); err != nil {
			return 0, err
		}
		w.written += int64(len(s))
		w.buf = append(w.buf, s...)
		return len(s), nil
	}
	return w.Write([]byte(s))
}

// writeErr is why the stream cannot be written to, nil if it can.
func (st *stream) writeErr() error {
	c := st.c
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case st.aborted != nil:
		return st.aborted
	case c.werr != nil:
		return c.werr
	case c.closed:
		return errConnClosed
	}
	return nil
}

// Flush sends the header and the body held so far.
func (w *responseWriter) Flush() { _ = w.FlushError() }

// FlushError queues the header and the body held so far and has them
// written as soon as the handler lets go of the processor (queuedSoon):
// a proxy flushes each piece it relays, and what it relays next, often
// the end of the response, is then already there to leave in the same
// write.
func (w *responseWriter) FlushError() error {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	return w.send(false, nil, true)
}

// SetReadDeadline bounds the wait for the request body, as net/http's
// HTTP/2 server: once it passes, a read returns os.ErrDeadlineExceeded.
func (w *responseWriter) SetReadDeadline(t time.Time) error {
	st := w.st
	st.c.bodyDeadline(st, st.gen, t)
	return nil
}

// EnableFullDuplex: HTTP/2 always is.
func (w *responseWriter) EnableFullDuplex() error { return nil }

// finish ends the response as the handler returns.
func (w *responseWriter) finish() {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	if !w.sentHeader && w.declared < 0 && len(w.trailers) == 0 && bodyAllowed(w.status) &&
		w.st.req.Method != http.MethodHead && !w.hasPrefixTrailers() {
		// Written whole: its length is known, as net/http sends it.
		w.length = len(w.buf)
	}
	_ = w.send(true, nil, false)
}

func (w *responseWriter) hasPrefixTrailers() bool {
	for k := range w.header {
		if strings.HasPrefix(k, http.TrailerPrefix) {
			return true
		}
	}
	return false
}

// send writes the head if not yet sent, the held body and extra, and
// with final the end: END_STREAM on the last frame, or the trailers.
// With soon the write is left to queuedSoon.
func (w *responseWriter) send(final bool, extra []byte, soon bool) error {
	st := w.st
	c := st.c
	var head []byte
	w.hbuf = w.hbuf[:0]
	if !w.sentHeader {
		first := w.buf
		if len(first) == 0 {
			first = extra
		}
		w.hbuf = w.encodeHead(w.hbuf, w.status, first)
		head = w.hbuf
	}
	var trailers []byte
	if final {
		trailers = w.encodeTrailers(w.hbuf[len(w.hbuf):])
	}
	data, more := w.buf, extra
	if len(data) == 0 {
		data, more = more, nil
	}
	c.mu.Lock()
	// Whatever way out, what was queued goes out (a reset included).
	defer func() {
		if soon {
			c.queuedSoon()
		} else {
			c.queued()
		}
		c.mu.Unlock()
	}()
	if err := st.aborted; err != nil {
		return err
	}
	if c.werr != nil {
		return c.werr
	}
	if c.closed {
		return errConnClosed
	}
	ended := false
	if head != nil {
		c.waitRoom()
		ended = final && len(data) == 0 && len(trailers) == 0
		c.appendHeaders(st.id, head, ended)
		w.sentHeader = true
		if v := w.header["Connection"]; len(v) > 0 && strings.EqualFold(v[0], "close") {
			// Not sent over HTTP/2, but taken as net/http's server takes
			// it: the connection ends once its streams are done.
			c.goAwayLocked()
		}
	}
	for len(data) > 0 {
		if err := c.waitWindow(st); err != nil {
			return err
		}
		n := min(int64(len(data)), c.sendWindow, st.sendWindow, int64(c.peerFrame))
		var flags uint8
		if final && len(trailers) == 0 && int(n) == len(data) && len(more) == 0 {
			flags, ended = flagEndStream, true
		}
		c.wbuf = appendFrameHeader(c.wbuf, int(n), frameData, flags, st.id)
		c.wbuf = append(c.wbuf, data[:n]...)
		c.sendWindow -= n
		st.sendWindow -= n
		if data = data[n:]; len(data) == 0 {
			data, more = more, nil
		}
	}
	w.buf = w.buf[:0]
	if final {
		c.waitRoom()
		switch {
		case len(trailers) > 0:
			c.appendHeaders(st.id, trailers, true)
		case !ended:
			// The head went earlier and nothing followed: an empty DATA
			// frame ends the stream.
			c.wbuf = appendFrameHeader(c.wbuf, 0, frameData, flagEndStream, st.id)
		}
		st.sentEnd = true
		c.answered++
		if st.state == stateHalfClosed {
			c.closeStream(st)
		}
	}
	return nil
}

// waitWindow waits, under mu, until st may send a byte: both windows
// open and room in wbuf. A window shut for WriteTimeout resets the
// stream.
func (c *conn) waitWindow(st *stream) error {
	for {
		if st.aborted != nil {
			return st.aborted
		}
		if c.werr != nil {
			return c.werr
		}
		if c.sendWindow > 0 && st.sendWindow > 0 && !(len(c.wbuf) > wbufLimit && c.flushing) {
			if st.windowWait != nil {
				st.windowWait.Stop()
				st.windowWait = nil
			}
			return nil
		}
		if st.windowLate {
			c.resetLocked(st, codeCancel)
			return st.aborted
		}
		if c.sendWindow <= 0 || st.sendWindow <= 0 {
			// The client must see what is queued before it opens the window.
			c.queued()
			if st.windowWait == nil && c.writeTimeout > 0 {
				gen := st.gen
				st.windowWait = time.AfterFunc(c.writeTimeout, func() {
					c.mu.Lock()
					defer c.mu.Unlock()
					if st.gen == gen {
						st.windowLate = true
						c.cond.Broadcast()
					}
				})
			}
			if c.sendWindow > 0 && st.sendWindow > 0 {
				continue
			}
		}
		c.cond.Wait()
	}
}

// appendHeaders appends a header block as HEADERS and CONTINUATION
// frames no larger than the client's SETTINGS_MAX_FRAME_SIZE, led by a
// dynamic table size update when the client lowered the table's size
// since the last block (RFC 7541 §4.2). Under mu: blocks go out in the
// order they are appended here.
func (c *conn) appendHeaders(id uint32, block []byte, endStream bool) {
	flags := uint8(0)
	if endStream {
		flags = flagEndStream
	}
	var lead []byte
	var update [6]byte
	if c.tableCut {
		c.tableCut = false
		lead = appendInt(update[:0], 0x20, 5, uint64(c.tableSize))
	}
	typ := uint8(frameHeaders)
	for {
		n := min(len(lead)+len(block), c.peerFrame) - len(lead)
		f := flags
		if n == len(block) {
			f |= flagEndHeaders
		}
		c.wbuf = appendFrameHeader(c.wbuf, len(lead)+n, typ, f, id)
		c.wbuf = append(c.wbuf, lead...)
		c.wbuf = append(c.wbuf, block[:n]...)
		block, lead = block[n:], nil
		if len(block) == 0 {
			return
		}
		typ, flags = frameContinuation, 0
	}
}

// encodeHead appends the response head's block: :status, the handler's
// fields, and Date, a sniffed Content-Type when the body allows one.
func (w *responseWriter) encodeHead(b []byte, status int, first []byte) []byte {
	b = appendStatus(b, status)
	var name [64]byte
	h := w.header
	for k, vs := range h {
		switch k {
		case "Connection", "Keep-Alive", "Proxy-Connection", "Transfer-Encoding", "Upgrade":
			continue // connection-specific: not in HTTP/2 (§8.2.2)
		}
		if strings.HasPrefix(k, http.TrailerPrefix) || !validHeaderName(k) {
			continue
		}
		ln := lowerName(name[:0], k)
		for _, v := range vs {
			if !validValue(v) {
				continue
			}
			b = appendField(b, ln, v)
		}
	}
	if status >= 200 {
		if w.length >= 0 {
			var n [20]byte
			b = appendField(b, "content-length", strconv.AppendInt(n[:0], int64(w.length), 10))
		}
		if _, ok := h["Date"]; !ok {
			b = appendField(b, "date", httpDate())
		}
		if _, ok := h["Content-Type"]; !ok && bodyAllowed(status) && len(first) > 0 && len(h["Content-Encoding"]) == 0 {
			b = appendField(b, "content-type", http.DetectContentType(first))
		}
	}
	return b
}

// encodeTrailers appends the trailers' block, none when there are none.
func (w *responseWriter) encodeTrailers(b []byte) []byte {
	start := len(b)
	var name [64]byte
	for _, k := range w.trailers {
		for _, v := range w.header[k] {
			if validHeaderName(k) && validValue(v) {
				b = appendField(b, lowerName(name[:0], k), v)
			}
		}
	}
	for k, vs := range w.header {
		if !strings.HasPrefix(k, http.TrailerPrefix) {
			continue
		}
		k = k[len(http.TrailerPrefix):]
		if !validHeaderName(k) {
			continue
		}
		for _, v := range vs {
			if validValue(v) {
				b = appendField(b, lowerName(name[:0], k), v)
			}
		}
	}
	return b[start:]
}

// validHeaderName: a response field name the encoder may send.
func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 0x80 || !tokenChar[c] {
			return false
		}
	}
	return true
}

// The Date header is made at most once a second.
var dateCache struct {
	mu   sync.Mutex
	sec  int64
	text string
}

func httpDate() string {
	now := time.Now()
	dateCache.mu.Lock()
	defer dateCache.mu.Unlock()
	if s := now.Unix(); s != dateCache.sec {
		dateCache.sec = s
		dateCache.text = now.UTC().Format(http.TimeFormat)
	}
	return dateCache.text
}
