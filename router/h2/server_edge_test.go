package h2

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// Edge cases of the server: streams ending on one side while the other
// side lets go of the connection's lock, graceful shutdown racing the
// client, floods of control frames, flow control and HPACK settings.

// postRequest is a POST's header block (no END_STREAM: a body follows).
func postRequest(path string) []byte {
	b := []byte{0x83, 0x86} // :method POST, :scheme http
	b = appendField(b, ":path", path)
	return appendField(b, ":authority", "h2.test")
}

// inChild runs scenario in a child test process, for scenarios whose
// failure crashes the process: it reports the child's output, and whether
// this is the parent (which checks the output) rather than the child.
func inChild(t *testing.T, scenario func(t *testing.T)) (out string, parent bool) {
	t.Helper()
	if os.Getenv("H2_EDGE_CHILD") == t.Name() {
		scenario(t)
		fmt.Println("SCENARIO DONE")
		return "", false
	}
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^"+t.Name()+"$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), "H2_EDGE_CHILD="+t.Name())
	b, _ := cmd.CombinedOutput()
	return string(b), true
}

// checkChild fails t if the child's output shows a panic, or that its
// scenario did not run through.
func checkChild(t *testing.T, out string) {
	t.Helper()
	if i := strings.Index(out, "panic:"); i >= 0 {
		t.Fatalf("the server process crashed:\n%s", excerpt(out, i))
	}
	if !strings.Contains(out, "SCENARIO DONE") {
		t.Fatalf("the scenario did not run through:\n%s", out)
	}
}

// excerpt is up to 40 lines of out from i.
func excerpt(out string, i int) string {
	lines := strings.SplitAfterN(out[i:], "\n", 41)
	if len(lines) > 40 {
		lines = lines[:40]
	}
	return strings.Join(lines, "")
}

// gateConn is a server connection whose writes block while its gate is
// shut: a client that stopped reading, made deterministic.
type gateConn struct {
	net.Conn
	mu      sync.Mutex
	gate    chan struct{}
	blocked chan struct{}
}

func newGateConn(c net.Conn) *gateConn {
	return &gateConn{Conn: c, blocked: make(chan struct{}, 1)}
}

func (g *gateConn) Write(p []byte) (int, error) {
	g.mu.Lock()
	ch := g.gate
	g.mu.Unlock()
	if ch != nil {
		select {
		case g.blocked <- struct{}{}:
		default:
		}
		<-ch
	}
	return g.Conn.Write(p)
}

func (g *gateConn) shut() {
	g.mu.Lock()
	g.gate = make(chan struct{})
	g.mu.Unlock()
}

func (g *gateConn) open() {
	g.mu.Lock()
	if g.gate != nil {
		close(g.gate)
		g.gate = nil
	}
	g.mu.Unlock()
}

func (g *gateConn) Close() error {
	g.open()
	return g.Conn.Close()
}

// waitFor polls cond under c.mu until it holds, for up to 10 s.
func waitFor(t *testing.T, c *conn, what string, cond func() bool) {
	t.Helper()
	for start := time.Now(); time.Since(start) < 10*time.Second; time.Sleep(time.Millisecond) {
		c.mu.Lock()
		ok := cond()
		c.mu.Unlock()
		if ok {
			return
		}
	}
	buf := make([]byte, 1<<20)
	t.Fatalf("timed out waiting for %s\n%s", what, buf[:runtime.Stack(buf, true)])
}

// inGoroutine reports whether some goroutine is, at the call, within
// every one of funcs (parts of its stack's frames, such as
// "h2.(*conn).trailers(").
func inGoroutine(funcs ...string) bool {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	for _, g := range strings.Split(string(buf), "\n\n") {
		all := true
		for _, f := range funcs {
			if !strings.Contains(g, f) {
				all = false
				break
			}
		}
		if all {
			return true
		}
	}
	return false
}

// waitGoroutine waits up to 10 s for a goroutine within every one of
// funcs (inGoroutine), and reports whether one came.
func waitGoroutine(funcs ...string) bool {
	for start := time.Now(); time.Since(start) < 10*time.Second; time.Sleep(200 * time.Microsecond) {
		if inGoroutine(funcs...) {
			return true
		}
	}
	return false
}

// bigBlock is a header block of about 3 MiB, fields name: 64 KiB values,
// Huffman-coded: one that takes a while to decode (some 25 ms, 300 ms
// under the race detector), after the fields of head.
func bigBlock(head []byte, name string) []byte {
	block := append([]byte(nil), head...)
	value := strings.Repeat("a", 64<<10)
	for len(block) < 3<<20 {
		block = appendField(block, name, value)
	}
	return block
}

// headerFrames is block as HEADERS and CONTINUATION frames on stream id,
// flags (END_STREAM) on the HEADERS frame.
func headerFrames(block []byte, id uint32, flags uint8) []byte {
	var frames []byte
	for rest, typ := block, uint8(frameHeaders); len(rest) > 0; typ = frameContinuation {
		n := min(len(rest), defaultFrameSize)
		f := uint8(0)
		if typ == frameHeaders {
			f = flags
		}
		if n == len(rest) {
			f |= flagEndHeaders
		}
		frames = append(appendFrameHeader(frames, n, typ, f, id), rest[:n]...)
		rest = rest[n:]
	}
	return frames
}

// nextAny reads the next frame.
func (rc *rawClient) nextAny() (frameHeader, []byte, error) {
	var h [frameHeaderLen]byte
	if _, err := io.ReadFull(rc.br, h[:]); err != nil {
		return frameHeader{}, nil, err
	}
	fh := parseFrameHeader(h[:])
	p := make([]byte, fh.length)
	_, err := io.ReadFull(rc.br, p)
	return fh, p, err
}

// TestServerResetAfterClientEndsStreamNoPanic: a handler that answers a
// POST whole without reading it has its stream reset (RST_STREAM
// NO_ERROR) as it returns; that reset waits for room in the write queue,
// letting go of the connection's lock. When the client ends its upload
// meanwhile, the stream closes (and, its handler done, goes back to the
// pool) under the waiting reset, which then finds it closed and does
// nothing more: the process carries on. Run in a child process, as a
// stream used after its release crashes it.
func TestServerResetAfterClientEndsStreamNoPanic(t *testing.T) {
	if out, parent := inChild(t, resetAfterClientEndsStream); parent {
		checkChild(t, out)
	}
}

func resetAfterClientEndsStream(t *testing.T) {
	goA, goB := make(chan struct{}), make(chan struct{})
	bStream := make(chan *stream, 1)
	s := &Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/a": // a large answer: its write is under way when B ends
			<-goA
			_, _ = w.Write(make([]byte, 1<<20))
		case "/b": // answers a POST without reading it, with trailers
			w.Header().Set("Trailer", "X-Big")
			w.WriteHeader(200)
			w.(http.Flusher).Flush()
			bStream <- w.(*responseWriter).st
			<-goB
			// Big trailers put the write queue over wbufLimit as B ends,
			// as other streams' writes do on a busy connection.
			w.Header().Set("X-Big", strings.Repeat("a", 600<<10))
		}
	})}
	gates := make(chan *gateConn, 1)
	rc := dialRawVia(t, s, func(c net.Conn) net.Conn { g := newGateConn(c); gates <- g; return g })
	g := <-gates
	rc.frame(frameSettings, 0, 0, appendSetting(nil, settingInitialWindowSize, 1<<30))
	rc.frame(frameWindowUpdate, 0, 0, binary.BigEndian.AppendUint32(nil, 1<<30))
	rc.frame(frameHeaders, flagEndHeaders|flagEndStream, 1, request("/a"))
	rc.frame(frameHeaders, flagEndHeaders, 3, postRequest("/b"))
	st := <-bStream
	for {
		fh, _, err := rc.next(frameHeaders)
		if err != nil {
			t.Fatal(err)
		}
		if fh.stream == 3 {
			break
		}
	}
	go func() { _, _ = io.Copy(io.Discard, rc.br) }()
	c := st.c
	waitFor(t, c, "nothing queued", func() bool { return !c.flushing && !c.flushSoon && len(c.wbuf) == 0 })

	// The client reads slowly: A's write blocks.
	g.shut()
	close(goA)
	<-g.blocked
	// B returns; its handlerDone waits for room to reset the stream.
	close(goB)
	waitFor(t, c, "B's handlerDone waiting in resetLocked", func() bool {
		return st.handlerDone && st.sentEnd && st.state == stateOpen && len(c.wbuf) > wbufLimit
	})
	// The client ends its upload meanwhile.
	rc.frame(frameData, flagEndStream, 3, nil)
	waitFor(t, c, "stream 3 closed", func() bool { return c.streams[3] == nil })
	// The client reads again: B's reset goes on, and ends.
	g.open()
	for start := time.Now(); inGoroutine("h2.(*conn).handlerDone("); time.Sleep(time.Millisecond) {
		if time.Since(start) > 10*time.Second {
			t.Fatal("handlerDone did not return")
		}
	}
}

// TestServerTrailersOfStreamResetMeanwhileIgnored: trailers are decoded
// without the connection's lock. When the handler returns meanwhile (its
// stream reset, the request not being whole, and released to the pool),
// the trailers are ignored once decoded: the stream is looked up again,
// not taken as it was found before. Malformed trailers (no END_STREAM)
// reset nothing more, and the process carries on; trailers that end the
// stream leave the released stream as the pool has it, for the next
// request to start afresh. Run in a child process, as a stream used after
// its release may crash it.
func TestServerTrailersOfStreamResetMeanwhileIgnored(t *testing.T) {
	if out, parent := inChild(t, trailersOfStreamResetMeanwhile); parent {
		checkChild(t, out)
	}
}

func trailersOfStreamResetMeanwhile(t *testing.T) {
	block := bigBlock(nil, "x-t")
	for _, end := range []uint8{0, flagEndStream} {
		// The trailers' decode and the handler's end are timed against
		// each other by watching the reader's stack: a few attempts, in
		// case the decode ended before the handler did.
		for attempt := 0; ; attempt++ {
			if trailersWhileHandlerReturns(t, headerFrames(block, 1, end), end != 0) {
				break
			}
			t.Logf("attempt %d: the trailers were decoded before the handler returned", attempt)
			if attempt == 4 {
				break
			}
		}
	}
}

// trailersWhileHandlerReturns sends trailers, and has the handler return
// while they are decoded; it reports whether that timing was had.
func trailersWhileHandlerReturns(t *testing.T, trailers []byte, endStream bool) bool {
	started, release := make(chan *stream, 1), make(chan struct{})
	s := &Server{MaxHeaderBytes: 8 << 20, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		started <- w.(*responseWriter).st
		<-release // answers without reading the body
	})}
	rc := dialRaw(t, s)
	defer rc.c.Close()
	rc.frame(frameHeaders, flagEndHeaders, 1, postRequest("/"))
	st := <-started
	c := st.c
	rc.write(trailers)
	if !waitGoroutine("h2.(*conn).trailers(", "h2.(*decoder).decode(") {
		t.Fatal("the trailers were not decoded")
	}
	c.mu.Lock()
	gen := st.gen
	c.mu.Unlock()
	close(release)
	waitFor(t, c, "the stream released", func() bool { return st.gen != gen })
	timed := inGoroutine("h2.(*conn).trailers(", "h2.(*decoder).decode(")
	// The connection serves on, past the trailers.
	rc.frame(framePing, 0, 0, []byte("12345678"))
	for {
		fh, p, err := rc.nextAny()
		if err != nil {
			t.Fatalf("no PING ACK: %v", err)
		}
		if fh.typ == frameGoAway {
			t.Fatalf("GOAWAY %d", binary.BigEndian.Uint32(p[4:]))
		}
		if fh.typ == framePing && fh.flags&flagAck != 0 {
			break
		}
	}
	// Nothing else takes streams from the pool meanwhile.
	c.mu.Lock()
	defer c.mu.Unlock()
	if timed && (st.gen != gen+1 || st.state != stateOpen || st.bodyEnd || st.c != nil) {
		t.Fatalf("trailers (END_STREAM %v) changed the released stream: gen +%d, state %d, bodyEnd %v", endStream, st.gen-gen, st.state, st.bodyEnd)
	}
	return timed
}

// onlyConn is s's one connection, once it has one.
func onlyConn(t *testing.T, s *Server) *conn {
	t.Helper()
	for start := time.Now(); time.Since(start) < 10*time.Second; time.Sleep(time.Millisecond) {
		s.mu.Lock()
		for c := range s.conns {
			s.mu.Unlock()
			return c
		}
		s.mu.Unlock()
	}
	t.Fatal("no connection")
	return nil
}

// TestServerRequestContextOutlivesHandler: a request's context, and those
// derived from it for work that goes on after the answer
// (context.WithoutCancel, context.WithValue), keep the connection's
// values once the handler returned and its stream went back to the pool.
func TestServerRequestContextOutlivesHandler(t *testing.T) {
	type key struct{}
	ctxs := make(chan context.Context, 1)
	s := &Server{
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			return context.WithValue(ctx, key{}, "this connection")
		},
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			// Work that goes on after the answer: an audit log, say.
			ctxs <- context.WithoutCancel(r.Context())
			_, _ = io.WriteString(w, "ok")
		}),
	}
	rc := dialRaw(t, s)
	rc.frame(frameHeaders, flagEndHeaders|flagEndStream, 1, request("/"))
	if _, _, err := rc.next(frameData); err != nil {
		t.Fatal(err)
	}
	bg := <-ctxs
	c := onlyConn(t, s)
	// The handler returned, and its stream was released with it.
	waitFor(t, c, "the handler done", func() bool { return c.running == 0 })
	var v any
	func() {
		defer func() {
			if p := recover(); p != nil {
				t.Fatalf("Value on a context derived from the request's, after the handler returned: panic %v", p)
			}
		}()
		v = bg.Value(key{})
	}()
	if v != "this connection" {
		t.Fatalf("Value = %v", v)
	}
	// A later request on the connection leaves it as it is.
	rc.frame(frameHeaders, flagEndHeaders|flagEndStream, 3, request("/"))
	if _, _, err := rc.next(frameData); err != nil {
		t.Fatal(err)
	}
	if bg2 := <-ctxs; bg2.Value(key{}) != "this connection" || bg.Value(key{}) != "this connection" {
		t.Fatalf("Values %v, %v", bg.Value(key{}), bg2.Value(key{}))
	}
}

// TestServerGoAwayDuringHeaderDecodeLosesNoRequest: a graceful shutdown
// whose GOAWAY goes out while a request's header block is being decoded
// either names the request as taken and serves it, or leaves it out of
// its last stream, so that the client may send it again: a request is
// never named taken, then dropped.
func TestServerGoAwayDuringHeaderDecodeLosesNoRequest(t *testing.T) {
	s := &Server{MaxHeaderBytes: 8 << 20, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "ok")
	})}
	rc := dialRaw(t, s)
	frames := headerFrames(bigBlock(request("/"), "x-h"), 1, flagEndStream)
	go func() { _, _ = rc.c.Write(frames) }()
	if !waitGoroutine("h2.(*conn).endHeaders(", "h2.(*decoder).decode(") {
		t.Fatal("the block was not decoded")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	go func() { _ = s.Shutdown(ctx) }()
	last := uint32(0)
	for {
		fh, p, err := rc.nextAny()
		if err != nil {
			if last >= 1 {
				t.Fatalf("GOAWAY named stream %d as the last taken, then the connection closed without answering stream 1 (%v)", last, err)
			}
			return // not taken: the client may send it again
		}
		switch {
		case fh.typ == frameGoAway:
			last = binary.BigEndian.Uint32(p)
		case fh.typ == frameHeaders && fh.stream == 1:
			return
		}
	}
}

// TestServerIgnoresFramesPastGoAway: during a graceful shutdown, HEADERS
// and DATA the client sent on a stream past GOAWAY's last stream, before
// the GOAWAY reached it, are ignored (RFC 9113 §6.8): the connection
// stays up, and the stream in flight is answered whole.
func TestServerIgnoresFramesPastGoAway(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	werr := make(chan error, 1)
	s := &Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			close(started)
			<-release
			_, err := io.WriteString(w, "done")
			if err == nil {
				err = http.NewResponseController(w).Flush()
			}
			werr <- err
			return
		}
		_, _ = io.Copy(io.Discard, r.Body)
	})}
	rc := dialRaw(t, s)
	rc.frame(frameHeaders, flagEndHeaders|flagEndStream, 1, request("/slow"))
	<-started
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	go func() { _ = s.Shutdown(ctx) }()
	_, p, err := rc.next(frameGoAway)
	if err != nil || binary.BigEndian.Uint32(p) != 1 {
		t.Fatalf("GOAWAY %x %v", p, err)
	}
	// A POST the client sent before the GOAWAY reached it, then a PING,
	// answered once the server has read what came before it.
	rc.frame(frameHeaders, flagEndHeaders, 3, postRequest("/upload"))
	rc.frame(frameData, flagEndStream, 3, []byte("payload"))
	rc.frame(frameWindowUpdate, 0, 3, binary.BigEndian.AppendUint32(nil, 100))
	rc.frame(framePing, 0, 0, []byte("12345678"))
	for pinged := false; !pinged; {
		fh, p, err := rc.nextAny()
		switch {
		case err != nil:
			t.Fatalf("no PING ACK: %v", err)
		case fh.typ == frameGoAway:
			t.Fatalf("second GOAWAY, code %d", binary.BigEndian.Uint32(p[4:]))
		case fh.typ == frameRSTStream:
			t.Errorf("RST_STREAM %d on stream %d, past GOAWAY's last", binary.BigEndian.Uint32(p), fh.stream)
		case fh.typ == framePing && fh.flags&flagAck != 0:
			pinged = true
		}
	}
	close(release)
	if err := <-werr; err != nil {
		t.Errorf("the in-flight handler's write failed: %v", err)
	}
	for {
		fh, p, err := rc.nextAny()
		if err != nil {
			t.Fatalf("stream 1 not answered: %v", err)
		}
		if fh.typ == frameGoAway {
			t.Fatalf("second GOAWAY, code %d: the shutdown aborted stream 1", binary.BigEndian.Uint32(p[4:]))
		}
		if fh.typ == frameData && fh.stream == 1 && fh.flags&flagEndStream != 0 {
			return
		}
	}
}

// TestServerControlFrameFloodBoundsWriteQueue: a client that sends
// SETTINGS frames faster than it reads their ACKs, in frames that never
// leave a read of the server ending on a frame boundary, finds the reader
// waiting for it to read: the write queue stays within its bound. Reads
// are full whenever the client sends faster than the reader processes;
// fullReads makes that so under the race detector too.
func TestServerControlFrameFloodBoundsWriteQueue(t *testing.T) {
	s := &Server{Handler: http.NotFoundHandler()}
	rc := dialRawVia(t, s, func(c net.Conn) net.Conn { return fullReads{c} })
	if tc, ok := rc.c.(*net.TCPConn); ok {
		_ = tc.SetReadBuffer(16 << 10) // the client reads nothing
	}
	c := onlyConn(t, s)
	// 15-byte frames: a full read of the reader's 20,489-byte buffer
	// leaves 14 bytes, short of a frame header.
	one := appendFrameHeader(nil, 6, frameSettings, 0, 0)
	one = appendSetting(one, settingEnablePush, 0)
	burst := make([]byte, 0, len(one)<<16)
	for range 1 << 16 {
		burst = append(burst, one...)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		deadline := time.Now().Add(2 * time.Second)
		_ = rc.c.SetWriteDeadline(deadline)
		for time.Now().Before(deadline) {
			if _, err := rc.c.Write(burst); err != nil {
				return
			}
		}
	}()
	most := 0
	for {
		select {
		case <-done:
			if most > 2*wbufLimit {
				t.Fatalf("the write queue grew to %d bytes (bound %d)", most, wbufLimit)
			}
			return
		case <-time.After(time.Millisecond):
		}
		c.mu.Lock()
		most = max(most, len(c.wbuf))
		c.mu.Unlock()
	}
}

// fullReads is a server connection whose reads fill the buffer given, as
// reads do when the client sends faster than the server reads.
type fullReads struct{ net.Conn }

func (f fullReads) Read(p []byte) (int, error) { return io.ReadFull(f.Conn, p) }

// TestServerPaddingCountsOnceInStreamWindow: DATA padding uses the
// stream's window like data, and comes back to it once, with the
// WINDOW_UPDATE that tells the client: until then, data past what is left
// of the window is a flow-control error.
func TestServerPaddingCountsOnceInStreamWindow(t *testing.T) {
	hold := make(chan struct{})
	defer close(hold)
	s := &Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-hold // reads nothing
	})}
	rc := dialRaw(t, s)
	rc.frame(frameHeaders, flagEndHeaders, 1, postRequest("/"))
	// 2048 frames of padding only: 512 KiB of the stream's 1 MiB window
	// (streamWindow, advertised in SETTINGS_INITIAL_WINDOW_SIZE).
	pad := make([]byte, 256)
	pad[0] = 255
	var b []byte
	for range 2048 {
		b = append(appendFrameHeader(b, len(pad), frameData, flagPadded, 1), pad...)
	}
	rc.write(b)
	// The connection's window comes back for the padding (512 KiB).
	var conn uint32
	for conn < 512<<10 {
		fh, p, err := rc.next(frameWindowUpdate)
		if err != nil {
			t.Fatal(err)
		}
		if fh.stream == 0 {
			conn += binary.BigEndian.Uint32(p)
		}
	}
	// The stream's window is 512 KiB; the connection's 1 MiB. 768 KiB of
	// data on the stream is past its window.
	data := make([]byte, defaultFrameSize)
	b = b[:0]
	for range 48 {
		b = append(appendFrameHeader(b, len(data), frameData, 0, 1), data...)
	}
	rc.write(b)
	rc.frame(framePing, 0, 0, []byte("12345678"))
	for {
		fh, p, err := rc.nextAny()
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case fh.typ == frameRSTStream && fh.stream == 1:
			if code := errCode(binary.BigEndian.Uint32(p)); code != codeFlowControl {
				t.Fatalf("RST_STREAM %d", code)
			}
			return
		case fh.typ == framePing && fh.flags&flagAck != 0:
			t.Fatal("768 KiB of DATA within a 512 KiB stream window were taken without FLOW_CONTROL_ERROR")
		case fh.typ == frameGoAway:
			t.Fatalf("GOAWAY %d", binary.BigEndian.Uint32(p[4:]))
		}
	}
}

// TestServerAcknowledgesLoweredHeaderTableSize: after a client lowers
// SETTINGS_HEADER_TABLE_SIZE below 4096, the server's next header block
// starts with a dynamic table size update (RFC 7541 §4.2), which nghttp2
// (curl's, nginx's and envoy's HTTP/2 library) requires; nghttp -c 0,
// when installed, gets its answer.
func TestServerAcknowledgesLoweredHeaderTableSize(t *testing.T) {
	s := &Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "ok")
	})}
	rc := dialRaw(t, s)
	rc.frame(frameSettings, 0, 0, appendSetting(nil, settingHeaderTableSize, 0))
	rc.frame(frameHeaders, flagEndHeaders|flagEndStream, 1, request("/"))
	_, p, err := rc.next(frameHeaders)
	if err != nil {
		t.Fatal(err)
	}
	if len(p) < 1 || p[0] != 0x20 {
		t.Errorf("the first header block after SETTINGS_HEADER_TABLE_SIZE=0 starts with %x, not a dynamic table size update to 0", p[:min(len(p), 1)])
	}
	// Once said, the update is not repeated.
	rc.frame(frameHeaders, flagEndHeaders|flagEndStream, 3, request("/"))
	if _, p, err = rc.next(frameHeaders); err != nil {
		t.Fatal(err)
	}
	if len(p) > 0 && p[0]&0xe0 == 0x20 {
		t.Errorf("the second header block starts with a dynamic table size update too")
	}
	// nghttp2 itself, when installed.
	nghttp, err := exec.LookPath("nghttp")
	if err != nil {
		return
	}
	run := func(args ...string) (string, error) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		go func() {
			c, err := ln.Accept()
			if err == nil {
				(&Server{Handler: s.Handler, ErrorLog: s.ErrorLog}).ServeConn(c)
			}
		}()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		out, err := exec.CommandContext(ctx, nghttp, append(args, "http://"+ln.Addr().String()+"/")...).CombinedOutput()
		return string(out), err
	}
	if out, err := run(); err != nil || out != "ok" {
		t.Logf("nghttp fails without -c too: %v %s", err, out)
		return
	}
	if out, err := run("-c", "0"); err != nil || out != "ok" {
		verbose, _ := run("-v", "-c", "0")
		lines := strings.Split(strings.TrimSpace(verbose), "\n")
		t.Errorf("nghttp -c 0: %v %q\n%s", err, out, strings.Join(lines[max(0, len(lines)-4):], "\n"))
	}
}
