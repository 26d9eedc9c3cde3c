package h2

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"ramjet.dev/ramjet/router/h1"
)

// conn is one HTTP/2 connection. The fields above mu are the reader's
// (the goroutine running serve); those below are under mu.
type conn struct {
	srv    *Server
	nc     net.Conn
	tls    *tls.ConnectionState
	remote string
	ctx    context.Context // the requests' parent
	cancel context.CancelFunc
	br     *bufio.Reader

	dec        *decoder
	maxHeader  uint32 // SETTINGS_MAX_HEADER_LIST_SIZE advertised
	maxStreams uint32
	recvWindow int64 // what the client may still send on the connection
	// The header block being read: its stream, flags and fragments.
	hdrStream    uint32
	hdrFlags     uint8
	hdrBlock     []byte
	hdrSelfDep   bool
	rdl          time.Time // read deadline set
	writeTimeout time.Duration
	canon        map[string]string // canonical field names seen
	started      bool              // the client's first SETTINGS came
	pending      []*stream         // requests of this pass, handlers not started
	ready        []*stream
	// resets counts the client's resets of streams not yet answered,
	// answered the streams answered whole (rapid reset, onRST).
	resets, answered int
	opened           int          // streams served (Server.MaxRequests)
	born             time.Time    // when it began (Server.MaxConnAge)
	stat             h1.ConnEntry // Server.Conns's

	mu sync.Mutex
	// cond wakes writers waiting for window or for room in wbuf, and body
	// readers waiting for data; Broadcast, as several streams may wait.
	cond       sync.Cond
	streams    map[uint32]*stream
	active     int // open and half-closed streams
	running    int // handlers running
	waiting    []*stream
	sendWindow int64 // the connection's send window
	peerWindow int64 // the client's SETTINGS_INITIAL_WINDOW_SIZE
	peerFrame  int   // the client's SETTINGS_MAX_FRAME_SIZE
	// The encoder's dynamic table size: the HPACK default until the client
	// lowers SETTINGS_HEADER_TABLE_SIZE below it; tableCut, the next header
	// block must say so first (appendHeaders).
	tableSize  uint32
	tableCut   bool
	recvCredit int64 // connection window consumed, not yet given back
	// Request body bytes queued and not yet read, across streams, and the
	// part of them whose connection window is held back until read: the
	// window comes back as data is queued up to bufferedBound only.
	buffered  int64
	owed      int64
	wbuf      []byte
	spare     []byte
	flushing  bool
	flushSoon bool // flushLater is on its way (queuedSoon)
	werr      error
	wdl       time.Time // write deadline set
	closed    bool
	goingAway bool   // GOAWAY sent: no new streams past goAwayID
	goAwayID  uint32 // the last stream served
	// maxStreamID is the highest stream the client opened: set once its
	// header block is decoded, so that a GOAWAY naming it (goAwayLocked,
	// from any goroutine) names a stream that is then served.
	maxStreamID uint32
	idleSince   time.Time
}

func newConn(s *Server, nc net.Conn) *conn {
	c := &conn{
		srv:          s,
		nc:           nc,
		tls:          tlsState(nc),
		remote:       nc.RemoteAddr().String(),
		br:           bufio.NewReaderSize(nc, defaultFrameSize+frameHeaderLen+4096),
		maxHeader:    s.maxHeaderList(),
		maxStreams:   s.maxStreams(),
		recvWindow:   connWindow,
		writeTimeout: s.writeTimeout(),
		streams:      make(map[uint32]*stream),
		sendWindow:   defaultWindow,
		peerWindow:   defaultWindow,
		peerFrame:    defaultFrameSize,
		tableSize:    4096,
		wbuf:         make([]byte, 0, 16<<10),
		spare:        make([]byte, 0, 16<<10),
		idleSince:    time.Now(),
	}
	c.born = c.idleSince
	c.cond.L = &c.mu
	// A string literal is bounded by what a block of the longest length
	// taken could decode to, Huffman's expansion included: a field over
	// the list's size is decoded (HPACK's state must be kept) and answered
	// 431.
	c.dec = newDecoder(4096, 2*(int(c.maxHeader)+maxBlockSlack))
	ctx := context.WithValue(context.Background(), http.LocalAddrContextKey, nc.LocalAddr())
	if s.ConnContext != nil {
		ctx = s.ConnContext(ctx, nc)
	}
	c.ctx, c.cancel = context.WithCancel(ctx)
	return c
}

var errConnClosed = errors.New("h2: connection closed")

func (c *conn) serve(sawPreface bool) {
	defer c.close(errConnClosed)
	first := c.srv.ReadHeaderTimeout
	if first <= 0 {
		first = c.srv.IdleTimeout
	}
	if first > 0 {
		_ = c.nc.SetReadDeadline(time.Now().Add(first))
	}
	// The server's preface: SETTINGS, then the connection window.
	c.mu.Lock()
	b := appendFrameHeader(c.wbuf, 4*6, frameSettings, 0, 0)
	b = appendSetting(b, settingMaxConcurrentStreams, c.maxStreams)
	b = appendSetting(b, settingInitialWindowSize, streamWindow)
	b = appendSetting(b, settingMaxHeaderListSize, c.maxHeader)
	b = appendSetting(b, settingEnablePush, 0)
	c.wbuf = appendWindowUpdate(b, 0, connWindow-defaultWindow)
	c.flushLocked()
	c.mu.Unlock()

	if !sawPreface {
		pre, err := c.br.Peek(prefaceLen)
		if err != nil || string(pre) != clientPreface {
			if err == nil {
				c.fail(connError{codeProtocol, "bad preface"})
			}
			return
		}
		_, _ = c.br.Discard(prefaceLen)
	}
	c.rdl = time.Time{}
	if first > 0 {
		c.rdl = time.Now().Add(first)
	}
	settings := false
	for {
		fh, payload, err := c.readFrame()
		if err != nil {
			var ce connError
			if errors.As(err, &ce) {
				c.fail(ce)
			}
			return
		}
		if !settings {
			if fh.typ != frameSettings || fh.flags&flagAck != 0 {
				c.fail(connError{codeProtocol, "the first frame is not SETTINGS"})
				return
			}
			settings, c.started = true, true
			c.moveReadDeadline()
		}
		if err := c.process(fh, payload); err != nil {
			var ce connError
			if errors.As(err, &ce) {
				c.fail(ce)
			}
			return
		}
		_, _ = c.br.Discard(int(fh.length))
		if c.br.Buffered() < frameHeaderLen {
			// The end of what one read brought: start the handlers of the
			// requests it completed, then send what the pass queued.
			c.mu.Lock()
			if c.closed {
				c.mu.Unlock()
				return
			}
			ready := c.startable()
			if !c.flushing && len(c.wbuf) > 0 {
				c.flushLocked()
			}
			c.mu.Unlock()
			for i, st := range ready {
				dispatch(st)
				ready[i] = nil
			}
		}
	}
}

// readFrame reads the next frame; its payload stays in the reader's
// buffer until the caller discards it. A read that times out is the idle
// timeout only when no stream has been active for IdleTimeout.
func (c *conn) readFrame() (frameHeader, []byte, error) {
	for {
		h, err := c.br.Peek(frameHeaderLen)
		if err == nil {
			fh := parseFrameHeader(h)
			if fh.length > defaultFrameSize {
				return fh, nil, connError{codeFrameSize, "frame too large"}
			}
			var p []byte
			p, err = c.br.Peek(frameHeaderLen + int(fh.length))
			if err == nil {
				_, _ = c.br.Discard(frameHeaderLen)
				return fh, p[frameHeaderLen:], nil
			}
		}
		if ne, ok := err.(net.Error); !ok || !ne.Timeout() || !c.stillWanted() {
			return frameHeader{}, nil, err
		}
	}
}

// stillWanted is asked when a read timed out: whether the connection
// has a stream, or has had one within the idle timeout; then the
// deadline moves on.
func (c *conn) stillWanted() bool {
	idle := c.srv.IdleTimeout
	c.mu.Lock()
	active, since, closed := c.active, c.idleSince, c.closed
	c.mu.Unlock()
	if closed || idle <= 0 || c.rdl.IsZero() || !c.started {
		return false
	}
	now := time.Now()
	if active == 0 && now.Sub(since) >= idle {
		c.goAway()
		return false
	}
	c.rdl = now.Add(idle)
	if active == 0 {
		c.rdl = since.Add(idle)
	}
	_ = c.nc.SetReadDeadline(c.rdl)
	return true
}

// moveReadDeadline sets the idle deadline once the preface is in.
func (c *conn) moveReadDeadline() {
	if idle := c.srv.IdleTimeout; idle > 0 {
		c.rdl = time.Now().Add(idle)
		_ = c.nc.SetReadDeadline(c.rdl)
	} else {
		c.rdl = time.Time{}
		_ = c.nc.SetReadDeadline(time.Time{})
	}
}

// fail ends the connection with GOAWAY and e's code, then reads what
// the client still sends for a second before closing, so that it sees the
// GOAWAY rather than a reset.
func (c *conn) fail(e connError) {
	c.mu.Lock()
	if !c.closed {
		// A GOAWAY's last stream never grows (§6.8): streams past a
		// graceful one's were ignored.
		last := c.maxStreamID
		if c.goingAway {
			last = min(last, c.goAwayID)
		}
		c.wbuf = appendGoAway(c.wbuf, last, e.code)
		c.goingAway = true
		if !c.flushing {
			c.flushLocked()
		}
		for _, st := range c.streams {
			st.abort(errConnClosed)
		}
	}
	c.mu.Unlock()
	_ = c.nc.SetReadDeadline(time.Now().Add(time.Second))
	_, _ = io.Copy(io.Discard, c.nc)
	c.close(e)
}

// close ends every stream and closes the connection.
func (c *conn) close(err error) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.closed = true
	if c.werr == nil {
		c.werr = err
	}
	for _, st := range c.streams {
		st.abort(errConnClosed)
	}
	c.waiting = nil
	c.cond.Broadcast()
	flushing := c.flushing
	c.mu.Unlock()
	c.cancel()
	if !flushing {
		c.nc.Close()
	} else {
		// The write under way closes it when it returns (flushLocked).
		_ = c.nc.SetWriteDeadline(time.Unix(1, 0))
	}
}

// goAway starts a graceful end: GOAWAY naming the last stream taken, and
// the connection closes when its streams are done.
func (c *conn) goAway() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.goAwayLocked()
}

func (c *conn) goAwayLocked() {
	if c.goingAway || c.closed {
		return
	}
	c.goingAway = true
	c.goAwayID = c.maxStreamID
	c.wbuf = appendGoAway(c.wbuf, c.maxStreamID, codeNo)
	if c.active == 0 {
		if !c.flushing {
			c.flushLocked()
		}
		c.closeLocked()
		return
	}
	if !c.flushing {
		c.flushLocked()
	}
}

// closeLocked closes the connection from under mu, once what is queued
// has been written.
func (c *conn) closeLocked() {
	if c.closed {
		return
	}
	c.closed = true
	c.cond.Broadcast()
	if !c.flushing {
		c.nc.Close()
	}
	// Otherwise the write under way writes what is queued, then closes.
	go c.cancel()
}

// flushLocked writes wbuf out, and whatever is queued while it writes,
// with mu held except during the writes.
func (c *conn) flushLocked() {
	c.flushing = true
	for len(c.wbuf) > 0 && c.werr == nil {
		buf := c.wbuf
		c.wbuf = c.spare[:0]
		c.spare = nil
		if c.writeTimeout > 0 {
			// The deadline moves at most once per quarter of the timeout.
			if now := time.Now(); c.wdl.Sub(now) < c.writeTimeout*3/4 {
				c.wdl = now.Add(c.writeTimeout)
				_ = c.nc.SetWriteDeadline(c.wdl)
			}
		}
		c.mu.Unlock()
		_, err := c.nc.Write(buf)
		c.mu.Lock()
		if cap(buf) <= 64<<10 {
			c.spare = buf[:0]
		} else {
			c.spare = make([]byte, 0, 16<<10)
		}
		if err != nil && c.werr == nil {
			c.werr = err
		}
		c.cond.Broadcast()
	}
	if c.werr != nil {
		c.wbuf = c.wbuf[:0]
	}
	c.flushing = false
	if c.closed || c.werr != nil {
		if c.werr == nil {
			c.werr = errConnClosed
		}
		c.nc.Close()
		if !c.closed {
			c.closed = true
			for _, st := range c.streams {
				st.abort(errConnClosed)
			}
			go c.cancel()
		}
	}
}

// queued is called after frames were appended to wbuf: it writes them
// unless a write is under way, which takes them along.
func (c *conn) queued() {
	if !c.flushing && len(c.wbuf) > 0 {
		c.flushLocked()
	}
}

// queuedSoon is queued for a flush: the write is left to a goroutine of
// its own, which runs once the flushing handler blocks or another
// processor is free, so that frames the handler queues before then (its
// next piece, its trailers) leave in the same write. Go's scheduler runs
// a goroutine just started next on its processor.
func (c *conn) queuedSoon() {
	if c.flushing || c.flushSoon || len(c.wbuf) == 0 {
		// A write under way takes the frames along; so does the one
		// scheduled.
		return
	}
	if len(c.wbuf) > wbufLimit {
		// A handler flushing faster than it blocks writes as it goes.
		c.flushLocked()
		return
	}
	c.flushSoon = true
	go c.flushLater()
}

func (c *conn) flushLater() {
	c.mu.Lock()
	c.flushSoon = false
	c.queued()
	c.mu.Unlock()
}

// waitRoom waits, under mu, while wbuf is over its bound: for the write
// under way, or, with none, writing wbuf out itself. A caller that queues
// without writing, as the reader does until the end of its pass, would
// otherwise grow wbuf without bound: a client's SETTINGS or PING flood,
// sent faster than it reads the acknowledgements, in frames that never
// leave a read ending on a frame boundary, made one pass last as long as
// the flood.
func (c *conn) waitRoom() {
	for len(c.wbuf) > wbufLimit && c.werr == nil {
		if !c.flushing {
			c.flushLocked()
			continue
		}
		c.cond.Wait()
	}
}

// process handles one frame, on the reader.
func (c *conn) process(fh frameHeader, p []byte) error {
	if c.hdrStream != 0 && (fh.typ != frameContinuation || fh.stream != c.hdrStream) {
		return connError{codeProtocol, "a header block interrupted"}
	}
	switch fh.typ {
	case frameData:
		return c.onData(fh, p)
	case frameHeaders:
		return c.onHeaders(fh, p)
	case frameContinuation:
		if c.hdrStream == 0 {
			return connError{codeProtocol, "CONTINUATION without HEADERS"}
		}
		return c.addFragment(fh.flags, p)
	case framePriority:
		if fh.stream == 0 {
			return connError{codeProtocol, "PRIORITY on stream 0"}
		}
		if len(p) != 5 {
			return c.streamError(fh.stream, codeFrameSize)
		}
		if binary.BigEndian.Uint32(p)&(1<<31-1) == fh.stream {
			return c.streamError(fh.stream, codeProtocol)
		}
		return nil
	case frameRSTStream:
		return c.onRST(fh, p)
	case frameSettings:
		return c.onSettings(fh, p)
	case framePushPromise:
		return connError{codeProtocol, "PUSH_PROMISE from a client"}
	case framePing:
		if fh.stream != 0 {
			return connError{codeProtocol, "PING on a stream"}
		}
		if len(p) != 8 {
			return connError{codeFrameSize, "PING not 8 bytes"}
		}
		if fh.flags&flagAck != 0 {
			return nil
		}
		c.mu.Lock()
		c.waitRoom()
		c.wbuf = appendFrameHeader(c.wbuf, 8, framePing, flagAck, 0)
		c.wbuf = append(c.wbuf, p...)
		c.mu.Unlock()
		return nil
	case frameGoAway:
		if fh.stream != 0 {
			return connError{codeProtocol, "GOAWAY on a stream"}
		}
		if len(p) < 8 {
			return connError{codeFrameSize, "GOAWAY too short"}
		}
		// The client opens nothing more: end when the streams are done.
		c.goAway()
		return nil
	case frameWindowUpdate:
		return c.onWindowUpdate(fh, p)
	}
	return nil // unknown frame types are ignored (§5.5)
}

func (c *conn) onSettings(fh frameHeader, p []byte) error {
	if fh.stream != 0 {
		return connError{codeProtocol, "SETTINGS on a stream"}
	}
	if fh.flags&flagAck != 0 {
		if len(p) != 0 {
			return connError{codeFrameSize, "SETTINGS ACK with a payload"}
		}
		return nil
	}
	if len(p)%6 != 0 {
		return connError{codeFrameSize, "SETTINGS not a multiple of 6"}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for ; len(p) > 0; p = p[6:] {
		id, v := binary.BigEndian.Uint16(p), binary.BigEndian.Uint32(p[2:])
		switch id {
		case settingEnablePush:
			if v > 1 {
				return connError{codeProtocol, "SETTINGS_ENABLE_PUSH not 0 or 1"}
			}
		case settingInitialWindowSize:
			if v > maxWindow {
				return connError{codeFlowControl, "SETTINGS_INITIAL_WINDOW_SIZE too large"}
			}
			delta := int64(v) - c.peerWindow
			c.peerWindow = int64(v)
			for _, st := range c.streams {
				st.sendWindow += delta
				if st.sendWindow > maxWindow {
					return connError{codeFlowControl, "a stream window past 2^31-1"}
				}
			}
			c.cond.Broadcast()
		case settingMaxFrameSize:
			if v < defaultFrameSize || v > maxFrameSizeMax {
				return connError{codeProtocol, "SETTINGS_MAX_FRAME_SIZE out of range"}
			}
			c.peerFrame = int(v)
		case settingHeaderTableSize:
			// The encoder indexes nothing, but a table size lowered
			// below its own must be acknowledged with a dynamic table
			// size update (RFC 7541 §4.2), which nghttp2 requires. A size
			// raised is left unused (an encoder may use less).
			if v < c.tableSize {
				c.tableSize, c.tableCut = v, true
			}
		}
		// The rest are advisory or unknown.
	}
	c.waitRoom()
	c.wbuf = appendFrameHeader(c.wbuf, 0, frameSettings, flagAck, 0)
	return nil
}

func (c *conn) onWindowUpdate(fh frameHeader, p []byte) error {
	if len(p) != 4 {
		return connError{codeFrameSize, "WINDOW_UPDATE not 4 bytes"}
	}
	incr := int64(binary.BigEndian.Uint32(p) & (1<<31 - 1))
	c.mu.Lock()
	defer c.mu.Unlock()
	if fh.stream == 0 {
		if incr == 0 {
			return connError{codeProtocol, "WINDOW_UPDATE of 0"}
		}
		c.sendWindow += incr
		if c.sendWindow > maxWindow {
			return connError{codeFlowControl, "connection window past 2^31-1"}
		}
		c.cond.Broadcast()
		return nil
	}
	st := c.streams[fh.stream]
	if st == nil {
		if fh.stream > c.maxStreamID {
			return connError{codeProtocol, "WINDOW_UPDATE on an idle stream"}
		}
		return nil
	}
	if incr == 0 {
		c.resetLocked(st, codeProtocol)
		return nil
	}
	st.sendWindow += incr
	if st.sendWindow > maxWindow {
		c.resetLocked(st, codeFlowControl)
		return nil
	}
	c.cond.Broadcast()
	return nil
}

func (c *conn) onRST(fh frameHeader, p []byte) error {
	if fh.stream == 0 {
		return connError{codeProtocol, "RST_STREAM on stream 0"}
	}
	if len(p) != 4 {
		return connError{codeFrameSize, "RST_STREAM not 4 bytes"}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.streams[fh.stream]
	if st == nil {
		if fh.stream > c.maxStreamID {
			return connError{codeProtocol, "RST_STREAM on an idle stream"}
		}
		return nil
	}
	// Rapid reset: streams reset before their answer are counted against
	// those answered; a client whose resets run far ahead is cut.
	if !st.sentEnd {
		c.resets++
		if c.resets > resetAllowance && c.resets > 4*c.answered {
			return connError{codeEnhanceYourCalm, "too many streams reset"}
		}
	}
	st.abort(errStreamReset)
	c.closeStream(st)
	return nil
}

// streamError resets a stream the reader found at fault.
func (c *conn) streamError(id uint32, code errCode) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if st := c.streams[id]; st != nil {
		c.resetLocked(st, code)
		return nil
	}
	c.waitRoom()
	c.wbuf = appendRSTStream(c.wbuf, id, code)
	return nil
}

// resetLocked sends RST_STREAM for st, a stream of c.streams, and closes
// it. The caller must not use st afterwards: closing it may release it.
func (c *conn) resetLocked(st *stream, code errCode) {
	id := st.id
	c.waitRoom()
	if c.streams[id] != st {
		// Closed while waitRoom let go of mu, and maybe released to the
		// pool already (zeroed, or serving another request): only a
		// stream still registered under its id is st's to reset.
		return
	}
	c.wbuf = appendRSTStream(c.wbuf, st.id, code)
	st.abort(errStreamReset)
	c.closeStream(st)
}

// closeStream removes st from the connection (both ends done, or reset).
// A stream whose handler is done goes back to the pool here: the caller
// must not use st afterwards.
func (c *conn) closeStream(st *stream) {
	if st.state == stateClosed {
		return
	}
	st.state = stateClosed
	delete(c.streams, st.id)
	c.active--
	c.stat.Add(-h1.ConnWriting)
	// Request body the handler did not read is dropped.
	c.unbuffered(int64(len(st.body) - st.bodyR))
	st.body, st.bodyR = st.body[:0], 0
	// Released before what follows may let go of mu (creditLocked,
	// flushLocked): once it is closed, handlerDone may release it too, and
	// a stream released twice would serve two requests at once.
	if st.handlerDone {
		st.release()
	}
	c.creditLocked(0)
	if c.active == 0 {
		c.idleSince = time.Now()
		if c.goingAway {
			if !c.flushing {
				c.flushLocked()
			}
			c.closeLocked()
		}
	}
}

// creditLocked gives n bytes read by a handler back to the connection's
// window, sending WINDOW_UPDATE once half of it is owed.
func (c *conn) creditLocked(n int64) {
	c.recvCredit += n
	if c.recvCredit >= connWindow/2 && !c.closed {
		c.waitRoom()
		// waitRoom lets go of mu: another credit may have sent what is
		// owed, and a WINDOW_UPDATE of 0 on the connection is a
		// connection error (RFC 9113 section 6.9).
		if c.recvCredit == 0 || c.closed {
			return
		}
		c.wbuf = appendWindowUpdate(c.wbuf, 0, uint32(c.recvCredit))
		c.recvWindow += c.recvCredit
		c.recvCredit = 0
	}
}

// bufferedMore counts n bytes of request body queued. The connection's
// window comes back at once while the connection's unread bodies stay
// within bufferedBound: a handler that stops reading then holds back its
// own stream alone (bounded by the stream's window), not every other on
// the connection, as nginx gives the connection's window back on receipt.
// Past the bound the window comes back only as bodies are read or
// dropped, so a connection's memory stays bounded however many streams
// hold their bodies. Under c.mu; the caller sends the credit.
func (c *conn) bufferedMore(n int64) {
	c.buffered += n
	over := min(max(c.buffered-bufferedBound, 0), n)
	c.recvCredit += n - over
	c.owed += over
}

// unbuffered counts n bytes of request body read or dropped, giving back
// the connection window held for them. Under c.mu; the caller sends the
// credit.
func (c *conn) unbuffered(n int64) {
	if n <= 0 {
		return
	}
	c.buffered -= n
	pay := min(n, c.owed)
	c.owed -= pay
	c.recvCredit += pay
}

func (c *conn) onData(fh frameHeader, p []byte) error {
	if fh.stream == 0 {
		return connError{codeProtocol, "DATA on stream 0"}
	}
	data, err := unpad(p, fh.flags)
	if err != nil {
		return err
	}
	n := int64(fh.length)
	c.mu.Lock()
	defer c.mu.Unlock()
	if n > c.recvWindow {
		return connError{codeFlowControl, "DATA past the connection window"}
	}
	c.recvWindow -= n
	st := c.streams[fh.stream]
	if st == nil || st.state != stateOpen {
		if st == nil && fh.stream > c.maxStreamID {
			return connError{codeProtocol, "DATA on an idle stream"}
		}
		if st == nil && c.goingAway && fh.stream > c.goAwayID {
			// A stream past GOAWAY's last one, not served: its frames are
			// ignored (§6.8), its DATA counted for flow control.
			c.creditLocked(n)
			return nil
		}
		// Flow control counts it all the same (§6.9).
		c.resetCredited(st, fh.stream, n, codeStreamClosed)
		return nil
	}
	if n > st.recvWindow {
		c.resetCredited(st, fh.stream, n, codeFlowControl)
		return nil
	}
	st.recvWindow -= n
	// What goes back to the connection window at once (padding, a body
	// the handler is done with) is counted here and sent at the end:
	// sending it may let go of mu, and st may not outlive that. Padding
	// goes back to the stream with the credit of the body read (credit),
	// whose WINDOW_UPDATE adds it to recvWindow as it tells the client.
	if pad := n - int64(len(data)); pad > 0 {
		c.recvCredit += pad
		if !st.bodyEnd && fh.flags&flagEndStream == 0 {
			st.recvCredit += pad
		}
	}
	st.received += int64(len(data))
	if st.declared >= 0 && st.received > st.declared {
		c.resetCredited(st, fh.stream, int64(len(data)), codeProtocol)
		return nil
	}
	// A body the handler is done with is dropped, its window given back.
	if !st.bodyClosed && len(data) > 0 {
		if st.bodyR > 0 && st.bodyR == len(st.body) {
			st.body, st.bodyR = st.body[:0], 0
		}
		st.body = append(st.body, data...)
		c.bufferedMore(int64(len(data)))
		c.cond.Broadcast()
	} else {
		c.recvCredit += int64(len(data))
	}
	if fh.flags&flagEndStream != 0 {
		_ = c.endRemote(st) // which may release st
	}
	c.creditLocked(0)
	return nil
}

// resetCredited resets stream id (st, nil when it is closed) for a DATA
// frame refused, whose n bytes go back to the connection window. The
// credit is counted before the reset and sent after it: sending it may
// let go of mu, and st may not outlive that.
func (c *conn) resetCredited(st *stream, id uint32, n int64, code errCode) {
	c.recvCredit += n
	if st != nil {
		c.resetLocked(st, code)
	} else {
		c.waitRoom()
		c.wbuf = appendRSTStream(c.wbuf, id, code)
	}
	c.creditLocked(0)
}

// endRemote is the client's END_STREAM on st.
func (c *conn) endRemote(st *stream) error {
	if st.declared >= 0 && st.received != st.declared {
		c.resetLocked(st, codeProtocol)
		return nil
	}
	st.bodyEnd = true
	st.state = stateHalfClosed
	c.cond.Broadcast()
	if st.sentEnd {
		c.closeStream(st)
	}
	return nil
}

func (c *conn) onHeaders(fh frameHeader, p []byte) error {
	if fh.stream == 0 {
		return connError{codeProtocol, "HEADERS on stream 0"}
	}
	if fh.stream%2 == 0 {
		return connError{codeProtocol, "HEADERS on an even stream"}
	}
	p, err := unpad(p, fh.flags)
	if err != nil {
		return err
	}
	c.hdrSelfDep = false
	if fh.flags&flagPriority != 0 {
		if len(p) < 5 {
			return connError{codeFrameSize, "HEADERS too short for its priority"}
		}
		c.hdrSelfDep = binary.BigEndian.Uint32(p)&(1<<31-1) == fh.stream
		p = p[5:]
	}
	c.hdrStream, c.hdrFlags = fh.stream, fh.flags
	c.hdrBlock = c.hdrBlock[:0]
	if fh.flags&flagEndHeaders == 0 {
		c.stat.Add(h1.ConnReading) // until the block's last CONTINUATION
	}
	return c.addFragment(fh.flags, p)
}

func (c *conn) addFragment(flags uint8, p []byte) error {
	if len(c.hdrBlock)+len(p) > int(c.maxHeader)+maxBlockSlack {
		return connError{codeEnhanceYourCalm, "header block too long"}
	}
	c.hdrBlock = append(c.hdrBlock, p...)
	if flags&flagEndHeaders == 0 {
		return nil
	}
	id := c.hdrStream
	c.hdrStream = 0
	if c.hdrFlags&flagEndHeaders == 0 {
		c.stat.Add(-h1.ConnReading)
	}
	return c.endHeaders(id, c.hdrFlags&flagEndStream != 0)
}

// discard is the sink of a block decoded only to keep HPACK's state.
type discard struct{}

func (discard) field(field) error { return nil }

// endHeaders handles a whole header block: a new request, or trailers.
func (c *conn) endHeaders(id uint32, endStream bool) error {
	c.mu.Lock()
	st := c.streams[id]
	closedStream := st == nil && id <= c.maxStreamID
	going := c.goingAway && id > c.goAwayID
	c.mu.Unlock()
	if st != nil || closedStream || going {
		if st == nil {
			if err := c.dec.decode(c.hdrBlock, discard{}); err != nil {
				return connError{codeCompression, err.Error()}
			}
			if going {
				// Past GOAWAY's last stream: not served, but seen, so that
				// the frames that follow on it are ignored rather than
				// taken for frames on an idle stream (§6.8).
				c.mu.Lock()
				c.maxStreamID = max(c.maxStreamID, id)
				c.mu.Unlock()
				return nil
			}
			return connError{codeStreamClosed, "HEADERS on a closed stream"}
		}
		return c.trailers(id, endStream)
	}
	st = getStream(c, id)
	st.hp.reset(st, c.maxHeader)
	if err := c.dec.decode(c.hdrBlock, &st.hp); err != nil {
		st.release()
		return connError{codeCompression, err.Error()}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		// A GOAWAY sent while the block was decoded did not name the
		// stream: the client may send it again.
		st.release()
		return errConnClosed
	}
	// The stream is opened from here: a GOAWAY names it from now on, and
	// it is served. One sent while its block was decoded did not name it:
	// it is not served.
	c.maxStreamID = id
	if c.goingAway && id > c.goAwayID {
		st.release()
		return nil
	}
	if c.hdrSelfDep || st.hp.bad || !st.hp.valid() {
		st.release()
		c.waitRoom()
		c.wbuf = appendRSTStream(c.wbuf, id, codeProtocol)
		return nil
	}
	if uint32(c.active) >= c.maxStreams {
		st.release()
		c.waitRoom()
		c.wbuf = appendRSTStream(c.wbuf, id, codeRefusedStream)
		return nil
	}
	st.build(endStream)
	c.streams[id] = st
	c.active++
	c.opened++
	c.stat.Add(h1.ConnWriting)
	c.stat.Request()
	if m := c.srv.MaxRequests; m > 0 && c.opened >= m {
		// nginx's keepalive_requests: this stream is the connection's last.
		c.goAwayLocked()
	}
	if a := c.srv.MaxConnAge; a > 0 && time.Since(c.born) > a {
		// nginx's keepalive_time, as it checks it on a new stream.
		c.goAwayLocked()
	}
	st.sendWindow = c.peerWindow
	st.recvWindow = streamWindow
	if endStream {
		st.bodyEnd = true
		st.state = stateHalfClosed
	}
	// Handlers of streams the client reset may still run: no more than
	// the stream limit run at once, and a client that keeps four times as
	// many waiting is resetting streams to get around it.
	if uint32(c.running) >= c.maxStreams {
		if len(c.waiting) >= 4*int(c.maxStreams) {
			return connError{codeEnhanceYourCalm, "too many handlers waiting"}
		}
		c.waiting = append(c.waiting, st)
		return nil
	}
	// The handler starts at the end of the pass (serve), so that a body
	// that came with the head is checked first, and a stream the same
	// pass reset never runs.
	c.running++
	c.pending = append(c.pending, st)
	if c.srv.keepAlivesOff.Load() || c.srv.shutdown.Load() {
		// Draining: this request is the connection's last.
		c.goAwayLocked()
	}
	return nil
}

// startable takes the streams of the pass whose handlers may start; those
// reset meanwhile are let go. Under mu.
func (c *conn) startable() []*stream {
	ready := c.ready[:0]
	for i, st := range c.pending {
		c.pending[i] = nil
		if st.aborted != nil {
			c.running--
			st.handlerDone = true
			if st.state == stateClosed {
				st.release()
			}
			continue
		}
		ready = append(ready, st)
	}
	c.pending = c.pending[:0]
	c.ready = ready
	return ready
}

// trailers handles a second header block on stream id: its trailers,
// which end the stream.
func (c *conn) trailers(id uint32, endStream bool) error {
	var tp trailerSink
	if err := c.dec.decode(c.hdrBlock, &tp); err != nil {
		return connError{codeCompression, err.Error()}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	// The block was decoded without mu: the stream is looked up again, as
	// its handler's side may have reset it meanwhile and released it.
	st := c.streams[id]
	if st == nil {
		// Closed meanwhile by the handler's side (reset, or answered after
		// the client's END_STREAM): the block is ignored, as frames on a
		// stream this end reset are (§5.1).
		return nil
	}
	if st.state != stateOpen {
		c.resetLocked(st, codeStreamClosed)
		return nil
	}
	if !endStream || tp.bad {
		c.resetLocked(st, codeProtocol)
		return nil
	}
	return c.endRemote(st)
}

// trailerSink checks trailers: no pseudo-header fields, names in lower
// case. The router forwards no request trailers (SPEC §13).
type trailerSink struct{ bad bool }

func (t *trailerSink) field(f field) error {
	if len(f.name) == 0 || f.name[0] == ':' || !validName(f.name) {
		t.bad = true
	}
	return nil
}

// handlerDone is called as st's handler returns.
func (c *conn) handlerDone(st *stream) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.running--
	st.handlerDone = true
	st.bodyClosed = true
	if st.state == stateOpen && !c.closed {
		// The answer is whole but the request is not: the rest is not
		// wanted (§8.1).
		c.resetLocked(st, codeNo)
		c.queued()
	} else if st.state == stateClosed {
		st.release()
	}
	for len(c.waiting) > 0 && uint32(c.running) < c.maxStreams {
		next := c.waiting[0]
		c.waiting = c.waiting[1:]
		if next.state == stateClosed && next.aborted != nil {
			// Reset before it ran.
			next.handlerDone = true
			next.release()
			continue
		}
		c.running++
		dispatch(next)
	}
}

// readDeadlineTimer is a stream body's read deadline set in the future.
func (c *conn) bodyDeadline(st *stream, gen uint64, t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if st.timer != nil {
		st.timer.Stop()
		st.timer = nil
	}
	if t.IsZero() {
		return
	}
	d := time.Until(t)
	if d <= 0 {
		st.expireBody()
		return
	}
	st.timer = time.AfterFunc(d, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if st.gen == gen {
			st.expireBody()
		}
	})
}

var errDeadline = os.ErrDeadlineExceeded
