package h2

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

// rawClient speaks HTTP/2 frames by hand to a Server over cleartext
// loopback (prior knowledge).
type rawClient struct {
	t  *testing.T
	c  net.Conn
	br *bufio.Reader
}

func dialRaw(t *testing.T, s *Server) *rawClient {
	t.Helper()
	return dialRawVia(t, s, nil)
}

// dialRawVia is dialRaw with the server's side of the connection given to
// wrap first (nil: as it is).
func dialRawVia(t *testing.T, s *Server, wrap func(net.Conn) net.Conn) *rawClient {
	t.Helper()
	if s.ErrorLog == nil {
		s.ErrorLog = log.New(io.Discard, "", 0)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		c, err := ln.Accept()
		ln.Close()
		if err == nil {
			if wrap != nil {
				c = wrap(c)
			}
			s.ServeConn(c)
		}
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	t.Cleanup(func() { c.Close(); s.Close(); <-done })
	rc := &rawClient{t: t, c: c, br: bufio.NewReader(c)}
	rc.write([]byte(clientPreface))
	rc.frame(frameSettings, 0, 0, nil)
	return rc
}

func (rc *rawClient) write(b []byte) {
	rc.t.Helper()
	if _, err := rc.c.Write(b); err != nil {
		rc.t.Fatal(err)
	}
}

func (rc *rawClient) frame(typ, flags uint8, stream uint32, payload []byte) {
	rc.t.Helper()
	rc.write(append(appendFrameHeader(nil, len(payload), typ, flags, stream), payload...))
}

// request is a GET's header block.
func request(path string) []byte {
	b := []byte{0x82, 0x86} // :method GET, :scheme http
	b = appendField(b, ":path", path)
	return appendField(b, ":authority", "h2.test")
}

// next reads frames until one of type typ, and returns it; io.EOF when
// the connection ends first.
func (rc *rawClient) next(typ uint8) (frameHeader, []byte, error) {
	for {
		var h [frameHeaderLen]byte
		if _, err := io.ReadFull(rc.br, h[:]); err != nil {
			return frameHeader{}, nil, err
		}
		fh := parseFrameHeader(h[:])
		p := make([]byte, fh.length)
		if _, err := io.ReadFull(rc.br, p); err != nil {
			return fh, nil, err
		}
		if fh.typ == typ {
			return fh, p, nil
		}
	}
}

func (rc *rawClient) goAway() errCode {
	rc.t.Helper()
	_, p, err := rc.next(frameGoAway)
	if err != nil {
		rc.t.Fatalf("no GOAWAY: %v", err)
	}
	return errCode(binary.BigEndian.Uint32(p[4:]))
}

// TestRapidReset: streams reset as soon as they are opened, whose
// handlers keep running, queue behind the stream limit; a client that
// keeps four times the limit waiting gets GOAWAY ENHANCE_YOUR_CALM.
func TestRapidReset(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	s := &Server{MaxConcurrentStreams: 4, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-release // ignores its context, as a slow handler may
	})}
	rc := dialRaw(t, s)
	rst := binary.BigEndian.AppendUint32(nil, uint32(codeCancel))
	for id := uint32(1); id < 2*(4+4*4+2); id += 2 {
		rc.frame(frameHeaders, flagEndHeaders|flagEndStream, id, request("/"))
		// One stream per read: each handler starts before its reset.
		time.Sleep(5 * time.Millisecond)
		rc.frame(frameRSTStream, 0, id, rst)
	}
	if code := rc.goAway(); code != codeEnhanceYourCalm {
		t.Fatalf("GOAWAY %d", code)
	}
}

// TestRapidResetCounted: a client that resets its streams before their
// answer, faster than any handler starts, is cut once its resets run far
// ahead of the streams answered; streams reset within the read that
// opened them run no handler at all.
func TestRapidResetCounted(t *testing.T) {
	ran := make(chan struct{}, 1000)
	s := &Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ran <- struct{}{}
		<-r.Context().Done()
	})}
	rc := dialRaw(t, s)
	rst := binary.BigEndian.AppendUint32(nil, uint32(codeCancel))
	var burst []byte
	for id := uint32(1); id < 2*(resetAllowance+10); id += 2 {
		block := request("/")
		burst = append(appendFrameHeader(burst, len(block), frameHeaders, flagEndHeaders|flagEndStream, id), block...)
		burst = append(appendFrameHeader(burst, 4, frameRSTStream, 0, id), rst...)
	}
	rc.write(burst)
	if code := rc.goAway(); code != codeEnhanceYourCalm {
		t.Fatalf("GOAWAY %d", code)
	}
	if len(ran) > resetAllowance/2 {
		t.Errorf("%d handlers ran for streams reset in the read that opened them", len(ran))
	}
}

// TestContinuationFlood: a header block that never ends is cut once it
// passes the list limit by 64 KiB.
func TestContinuationFlood(t *testing.T) {
	s := &Server{MaxHeaderBytes: 1000, Handler: http.NotFoundHandler()}
	rc := dialRaw(t, s)
	rc.frame(frameHeaders, 0, 1, request("/"))
	junk := make([]byte, defaultFrameSize)
	for i := 0; i < 8; i++ {
		if _, err := rc.c.Write(append(appendFrameHeader(nil, len(junk), frameContinuation, 0, 1), junk...)); err != nil {
			break // the server has already ended it
		}
	}
	if code := rc.goAway(); code != codeEnhanceYourCalm {
		t.Fatalf("GOAWAY %d", code)
	}
}

// TestIdleTimeout: a connection without streams ends with GOAWAY
// NO_ERROR once IdleTimeout passes.
func TestIdleTimeout(t *testing.T) {
	s := &Server{IdleTimeout: 200 * time.Millisecond, Handler: http.NotFoundHandler()}
	rc := dialRaw(t, s)
	start := time.Now()
	rc.frame(frameHeaders, flagEndHeaders|flagEndStream, 1, request("/"))
	if _, _, err := rc.next(frameHeaders); err != nil {
		t.Fatal(err)
	}
	if code := rc.goAway(); code != codeNo {
		t.Fatalf("GOAWAY %d", code)
	}
	if d := time.Since(start); d < 200*time.Millisecond || d > 3*time.Second {
		t.Errorf("closed after %v", d)
	}
	if _, _, err := rc.next(frameData); err == nil {
		t.Error("the connection stayed open")
	}
}

// TestShutdownLetsStreamsFinish: Shutdown sends GOAWAY naming the last
// stream, the stream under way is answered, then the connection closes.
func TestShutdownLetsStreamsFinish(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	s := &Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(started)
		<-release
		_, _ = io.WriteString(w, "done")
	})}
	rc := dialRaw(t, s)
	rc.frame(frameHeaders, flagEndHeaders|flagEndStream, 1, request("/"))
	<-started
	shut := make(chan error, 1)
	go func() { shut <- s.Shutdown(context.Background()) }()
	_, p, err := rc.next(frameGoAway)
	if err != nil || binary.BigEndian.Uint32(p) != 1 || binary.BigEndian.Uint32(p[4:]) != 0 {
		t.Fatalf("GOAWAY %x, %v", p, err)
	}
	close(release)
	fh, p, err := rc.next(frameData)
	if err != nil || string(p) != "done" || fh.flags&flagEndStream == 0 {
		t.Fatalf("DATA %q %v", p, err)
	}
	if err := <-shut; err != nil {
		t.Fatal(err)
	}
	if _, _, err := rc.next(frameData); err == nil {
		t.Error("the connection stayed open")
	}
}

// TestWindowKeptShut: a client that opens no window for the response
// gets the stream reset after WriteTimeout, and the handler's write fails.
func TestWindowKeptShut(t *testing.T) {
	werr := make(chan error, 1)
	s := &Server{WriteTimeout: 200 * time.Millisecond, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, err := w.Write(make([]byte, 64<<10))
		werr <- err
	})}
	rc := dialRaw(t, s)
	rc.frame(frameSettings, 0, 0, appendSetting(nil, settingInitialWindowSize, 0))
	rc.frame(frameHeaders, flagEndHeaders|flagEndStream, 1, request("/"))
	fh, p, err := rc.next(frameRSTStream)
	if err != nil || fh.stream != 1 || errCode(binary.BigEndian.Uint32(p)) != codeCancel {
		t.Fatalf("RST_STREAM %v %x %v", fh, p, err)
	}
	if err := <-werr; err == nil {
		t.Error("the write succeeded")
	}
}

// TestBodyReadDeadline: a read deadline set through
// http.ResponseController ends a body that stalls with
// os.ErrDeadlineExceeded (the router's client body timeout relies on it).
func TestBodyReadDeadline(t *testing.T) {
	got := make(chan error, 1)
	s := &Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		_, err := io.ReadAll(r.Body)
		got <- err
		w.WriteHeader(408)
	})}
	rc := dialRaw(t, s)
	rc.frame(frameHeaders, flagEndHeaders, 1, request("/"))
	rc.frame(frameData, 0, 1, []byte("partial"))
	select {
	case err := <-got:
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("read: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the read did not end")
	}
	if _, _, err := rc.next(frameHeaders); err != nil {
		t.Fatal(err)
	}
	// The request was not read whole: the stream is reset once answered.
	if fh, _, err := rc.next(frameRSTStream); err != nil || fh.stream != 1 {
		t.Fatalf("%v %v", fh, err)
	}
}

// TestFlowControlAccounting: DATA past the connection's window is a
// connection error, and what a handler reads is given back.
func TestFlowControlAccounting(t *testing.T) {
	hold := make(chan struct{})
	defer close(hold)
	s := &Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hold" {
			<-hold // reads nothing
			return
		}
		_, _ = io.Copy(io.Discard, r.Body)
	})}
	rc := dialRaw(t, s)
	rc.frame(frameHeaders, flagEndHeaders, 1, request("/"))
	chunk := make([]byte, defaultFrameSize)
	sent := 0
	for sent+len(chunk) <= connWindow {
		rc.frame(frameData, 0, 1, chunk)
		sent += len(chunk)
	}
	// The handler read it: the window came back, on the connection and
	// on the stream.
	var conn, stream uint32
	for conn < connWindow/2 || stream < streamWindow/2 {
		fh, p, err := rc.next(frameWindowUpdate)
		if err != nil {
			t.Fatalf("after %d, %d: %v", conn, stream, err)
		}
		if fh.stream == 0 {
			conn += binary.BigEndian.Uint32(p)
		} else {
			stream += binary.BigEndian.Uint32(p)
		}
	}
	rc.frame(frameData, flagEndStream, 1, nil)
	if _, _, err := rc.next(frameHeaders); err != nil {
		t.Fatal(err)
	}
	// A frame past what the stream's window allows, its body unread: the
	// connection's window came back as the data was queued, so it is the
	// stream that is reset.
	rc.frame(frameHeaders, flagEndHeaders, 3, request("/hold"))
	big := strings.Repeat("x", defaultFrameSize)
	for i := 0; i < streamWindow/defaultFrameSize+8; i++ {
		if _, err := rc.c.Write(append(appendFrameHeader(nil, len(big), frameData, 0, 3), big...)); err != nil {
			break
		}
	}
	fh, p, err := rc.next(frameRSTStream)
	if err != nil || fh.stream != 3 || errCode(binary.BigEndian.Uint32(p)) != codeFlowControl {
		t.Fatalf("RST_STREAM %d %x: %v", fh.stream, p, err)
	}
}

// TestPrefaceTimeout: a client that sends no preface is cut after
// ReadHeaderTimeout, not IdleTimeout.
func TestPrefaceTimeout(t *testing.T) {
	s := &Server{ReadHeaderTimeout: 100 * time.Millisecond, IdleTimeout: time.Minute,
		Handler: http.NotFoundHandler(), ErrorLog: log.New(io.Discard, "", 0)}
	cc, sc := net.Pipe()
	defer cc.Close()
	go func() { _, _ = io.Copy(io.Discard, cc) }()
	done := make(chan struct{})
	go func() { s.ServeConn(sc); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("still open")
	}
}

// TestConnectionCloseGoesAway: a handler's "Connection: close" is not
// sent, but ends the connection gracefully, as net/http's server does.
func TestConnectionCloseGoesAway(t *testing.T) {
	s := &Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Connection", "close")
		_, _ = io.WriteString(w, "bye")
	})}
	rc := dialRaw(t, s)
	rc.frame(frameHeaders, flagEndHeaders|flagEndStream, 1, request("/"))
	_, p, err := rc.next(frameHeaders)
	if err != nil {
		t.Fatal(err)
	}
	var fields []field
	if err := newDecoder(4096, 1<<10).decode(p, sinkFunc(func(f field) error { fields = append(fields, f); return nil })); err != nil {
		t.Fatal(err)
	}
	for _, f := range fields {
		if f.name == "connection" {
			t.Errorf("sent %v", f)
		}
	}
	if code := rc.goAway(); code != codeNo {
		t.Fatalf("GOAWAY %d", code)
	}
}

// TestBodyReadAfterReturn: a body read after the handler returned fails,
// even once its stream serves another request.
func TestBodyReadAfterReturn(t *testing.T) {
	bodies := make(chan io.Reader, 1)
	s := &Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/keep" {
			bodies <- r.Body
		}
		_, _ = io.WriteString(w, "ok")
	})}
	rc := dialRaw(t, s)
	rc.frame(frameHeaders, flagEndHeaders, 1, request("/keep"))
	body := <-bodies
	if _, _, err := rc.next(frameData); err != nil {
		t.Fatal(err)
	}
	// Later requests, whose streams may reuse the first's, with bodies.
	for id := uint32(3); id < 13; id += 2 {
		rc.frame(frameHeaders, flagEndHeaders, id, request("/"))
		rc.frame(frameData, flagEndStream, id, []byte("later"))
		if _, _, err := rc.next(frameData); err != nil {
			t.Fatal(err)
		}
	}
	rc.frame(frameData, flagEndStream, 1, []byte("first"))
	if n, err := body.Read(make([]byte, 10)); err == nil || n != 0 {
		t.Fatalf("read %d, %v", n, err)
	}
}

// TestNoZeroWindowUpdate: handlers that read bodies while the write buffer
// is over its bound wait for room before they give the connection's window
// back; once one of them sent what was owed, the others send nothing: a
// WINDOW_UPDATE of 0 on the connection is a connection error (RFC 9113
// §6.9), which Go's client answers by closing the connection.
func TestNoZeroWindowUpdate(t *testing.T) {
	s := &Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/write" {
			chunk := make([]byte, 64<<10)
			for range 128 { // 8 MiB each: one blocks in the write, the other fills the buffer
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
			return
		}
		_, _ = io.Copy(io.Discard, r.Body)
	})}
	rc := dialRaw(t, s)
	if tc, ok := rc.c.(*net.TCPConn); ok {
		_ = tc.SetReadBuffer(16 << 10) // the server's writes block soon
	}
	rc.frame(frameSettings, 0, 0, appendSetting(nil, settingInitialWindowSize, 1<<30))
	rc.frame(frameWindowUpdate, 0, 0, binary.BigEndian.AppendUint32(nil, 1<<30))
	rc.frame(frameHeaders, flagEndHeaders|flagEndStream, 1, request("/write"))
	rc.frame(frameHeaders, flagEndHeaders|flagEndStream, 3, request("/write"))
	time.Sleep(100 * time.Millisecond) // the write buffer is over its bound
	post := func(path string) []byte {
		b := []byte{0x83, 0x86} // :method POST, :scheme http
		b = appendField(b, ":path", path)
		return appendField(b, ":authority", "h2.test")
	}
	const writers, readers, body = 2, 8, 120 << 10 // 960 KiB: past half the connection's window
	chunk := make([]byte, defaultFrameSize)
	for i := range readers {
		id := uint32(5 + 2*i)
		rc.frame(frameHeaders, flagEndHeaders, id, post("/read"))
		for sent := 0; sent < body; sent += len(chunk) {
			flags := uint8(0)
			if sent+len(chunk) >= body {
				flags = flagEndStream
			}
			rc.frame(frameData, flags, id, chunk)
		}
	}
	time.Sleep(100 * time.Millisecond) // the readers' credits wait for room
	ended, updates := 0, 0
	for ended < writers+readers {
		var h [frameHeaderLen]byte
		if _, err := io.ReadFull(rc.br, h[:]); err != nil {
			t.Fatalf("after %d streams ended: %v", ended, err)
		}
		fh := parseFrameHeader(h[:])
		p := make([]byte, fh.length)
		if _, err := io.ReadFull(rc.br, p); err != nil {
			t.Fatal(err)
		}
		switch fh.typ {
		case frameWindowUpdate:
			updates++
			if inc := binary.BigEndian.Uint32(p) & (1<<31 - 1); inc == 0 {
				t.Fatalf("WINDOW_UPDATE of 0 on stream %d", fh.stream)
			}
		case frameGoAway, frameRSTStream:
			t.Fatalf("frame type %d on stream %d", fh.typ, fh.stream)
		case frameHeaders, frameData:
			if fh.flags&flagEndStream != 0 {
				ended++
			}
		}
	}
	if updates < 2 {
		t.Fatalf("%d WINDOW_UPDATEs: the window read was not given back", updates)
	}
}

// TestMaxRequests: after MaxRequests streams, nginx's keepalive_requests
// (1000 under ingress-nginx), the connection says GOAWAY naming the last
// one, serves it, and closes, so that long-lived clients reconnect and
// spread over the replicas as nginx's do.
func TestMaxRequests(t *testing.T) {
	s := &Server{MaxRequests: 3, Handler: http.NotFoundHandler()}
	rc := dialRaw(t, s)
	var goAways []string
	answered := map[uint32]bool{}
	read := func(until func() bool) error {
		for !until() {
			var h [frameHeaderLen]byte
			if _, err := io.ReadFull(rc.br, h[:]); err != nil {
				return err
			}
			fh := parseFrameHeader(h[:])
			p := make([]byte, fh.length)
			if _, err := io.ReadFull(rc.br, p); err != nil {
				return err
			}
			switch fh.typ {
			case frameHeaders:
				answered[fh.stream] = true
			case frameGoAway:
				goAways = append(goAways, fmt.Sprintf("last %d code %d", binary.BigEndian.Uint32(p)&(1<<31-1), binary.BigEndian.Uint32(p[4:])))
			}
		}
		return nil
	}
	for _, id := range []uint32{1, 3} {
		rc.frame(frameHeaders, flagEndHeaders|flagEndStream, id, request("/"))
		if err := read(func() bool { return answered[id] }); err != nil {
			t.Fatal(err)
		}
	}
	if len(goAways) != 0 {
		t.Fatalf("GOAWAY before the last request: %v", goAways)
	}
	rc.frame(frameHeaders, flagEndHeaders|flagEndStream, 5, request("/"))
	if err := read(func() bool { return false }); err == nil || !errors.Is(err, io.EOF) {
		t.Fatalf("the connection did not close: %v", err)
	}
	if !answered[5] || len(goAways) != 1 || goAways[0] != "last 5 code 0" {
		t.Fatalf("the last stream answered %v, GOAWAY %v", answered[5], goAways)
	}
}

// TestMaxConnAge: the first stream opened past MaxConnAge, nginx's
// keepalive_time, gets GOAWAY naming it, is served, and the connection
// closes.
func TestMaxConnAge(t *testing.T) {
	s := &Server{MaxConnAge: 200 * time.Millisecond, Handler: http.NotFoundHandler()}
	rc := dialRaw(t, s)
	rc.frame(frameHeaders, flagEndHeaders|flagEndStream, 1, request("/"))
	if _, _, err := rc.next(frameHeaders); err != nil {
		t.Fatal(err)
	}
	time.Sleep(250 * time.Millisecond)
	rc.frame(frameHeaders, flagEndHeaders|flagEndStream, 3, request("/"))
	var answered bool
	var goAway string
	for {
		fh, p, err := rc.nextAny()
		if err != nil {
			break
		}
		switch fh.typ {
		case frameHeaders:
			answered = answered || fh.stream == 3
		case frameGoAway:
			goAway = fmt.Sprintf("last %d code %d", binary.BigEndian.Uint32(p)&(1<<31-1), binary.BigEndian.Uint32(p[4:]))
		}
	}
	if !answered || goAway != "last 3 code 0" {
		t.Fatalf("stream 3 answered %v, GOAWAY %q", answered, goAway)
	}
}
