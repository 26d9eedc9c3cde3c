package h2

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// rawBackend and rawServer: an HTTP/2 server on loopback written frame by
// frame, for what net/http's server would never send.

type rawFrame struct {
	fh frameHeader
	p  []byte
}

type rawServer struct {
	t      *testing.T
	nc     net.Conn
	frames chan rawFrame // every frame the client sent, in order
	gone   chan struct{} // closed once the client's side of the connection ended
	wmu    sync.Mutex
	dec    *decoder
}

// write sends raw bytes to the client.
func (s *rawServer) write(b []byte) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	_ = s.nc.SetWriteDeadline(time.Now().Add(5 * time.Second))
	_, _ = s.nc.Write(b)
}

// next is the next frame of type typ the client sent (others skipped), or
// ok false after d.
func (s *rawServer) next(typ uint8, d time.Duration) (rawFrame, bool) {
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		select {
		case f, ok := <-s.frames:
			if !ok {
				return rawFrame{}, false
			}
			if f.fh.typ == typ {
				return f, true
			}
		case <-t.C:
			return rawFrame{}, false
		}
	}
}

type rawSink struct{ fields []field }

func (k *rawSink) field(f field) error { k.fields = append(k.fields, f); return nil }

// headers decodes a request's header block (one HEADERS frame, no CONTINUATION).
func (s *rawServer) headers(f rawFrame) map[string]string {
	q, err := unpad(f.p, f.fh.flags)
	if err != nil {
		s.t.Errorf("bad HEADERS: %v", err)
		return nil
	}
	var k rawSink
	if err := s.dec.decode(q, &k); err != nil {
		s.t.Errorf("bad header block: %v", err)
	}
	m := map[string]string{}
	for _, f := range k.fields {
		m[f.name] = f.value
	}
	return m
}

// rawBackend starts a loopback listener whose every connection is served by
// serve, after the preface was read and the server's SETTINGS (settings,
// id/value pairs) sent. It returns a Client dialling it. tlsConf, when set,
// has the server speak TLS.
func rawBackend(t *testing.T, tlsConf *tls.Config, settings []uint32, serve func(s *rawServer)) (*Client, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			if tlsConf != nil {
				nc = tls.Server(nc, tlsConf)
			}
			mu.Lock()
			conns = append(conns, nc)
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer nc.Close()
				_ = nc.SetReadDeadline(time.Now().Add(20 * time.Second))
				pre := make([]byte, len(clientPreface))
				if _, err := io.ReadFull(nc, pre); err != nil || string(pre) != clientPreface {
					return
				}
				s := &rawServer{t: t, nc: nc, frames: make(chan rawFrame, 1<<16), gone: make(chan struct{}), dec: newDecoder(4096, 1<<20)}
				go func() {
					defer close(s.gone)
					defer close(s.frames)
					var hdr [frameHeaderLen]byte
					for {
						if _, err := io.ReadFull(nc, hdr[:]); err != nil {
							return
						}
						fh := parseFrameHeader(hdr[:])
						p := make([]byte, fh.length)
						if _, err := io.ReadFull(nc, p); err != nil {
							return
						}
						if fh.typ == frameSettings && fh.flags&flagAck == 0 {
							s.write(frame(frameSettings, flagAck, 0, nil))
						}
						select {
						case s.frames <- rawFrame{fh, p}:
						default:
						}
					}
				}()
				var sp []byte
				for i := 0; i+1 < len(settings); i += 2 {
					sp = appendSetting(sp, uint16(settings[i]), settings[i+1])
				}
				s.write(frame(frameSettings, 0, 0, sp))
				serve(s)
			}()
		}
	}()
	addr := ln.Addr().String()
	c := &Client{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}}
	if tlsConf != nil {
		c.TLSClientConfig = &tls.Config{InsecureSkipVerify: true}
	}
	t.Cleanup(c.CloseIdleConnections)
	return c, addr
}

// literalIndexed is a literal header field with incremental indexing, new
// name (RFC 7541 §6.2.1).
func literalIndexed(dst []byte, name, value string) []byte {
	dst = append(dst, 0x40)
	dst = appendInt(dst, 0, 7, uint64(len(name)))
	dst = append(dst, name...)
	dst = appendInt(dst, 0, 7, uint64(len(value)))
	return append(dst, value...)
}

// literalPlain is a literal header field without indexing, new name.
func literalPlain(dst []byte, name, value string) []byte {
	dst = append(dst, 0x00)
	dst = appendInt(dst, 0, 7, uint64(len(name)))
	dst = append(dst, name...)
	dst = appendInt(dst, 0, 7, uint64(len(value)))
	return append(dst, value...)
}

// TestClientPaddingReturnsStreamWindow: a DATA frame's padding counts
// against the stream's window as well as the connection's (RFC 9113
// §6.1), and is never read, so the client gives it back to both. Else a
// server that pads its frames would see a long stream's window shrink by
// every frame's padding until the stream stalled, its body read as fast
// as it came.
func TestClientPaddingReturnsStreamWindow(t *testing.T) {
	const (
		padLen   = 254            // padding bytes per frame
		frameLen = 1 + 1 + padLen // pad length byte, one data byte, padding
		total    = 6 << 20        // payload bytes to send: past the 4 MiB stream window
		frames   = total / frameLen
	)
	result := make(chan error, 1)
	c, addr := rawBackend(t, nil, nil, func(s *rawServer) {
		h, ok := s.next(frameHeaders, 3*time.Second)
		if !ok {
			result <- errors.New("no request HEADERS")
			return
		}
		id := h.fh.stream
		s.write(frame(frameHeaders, flagEndHeaders, id, []byte{0x88}))
		window := int64(clientStreamWindow) // the client's SETTINGS_INITIAL_WINDOW_SIZE
		payload := make([]byte, frameLen)
		payload[0] = padLen
		payload[1] = 'x'
		var batch []byte
		for i := 0; i < frames; i++ {
			for window < frameLen {
				if len(batch) > 0 {
					s.write(batch)
					batch = batch[:0]
				}
				f, ok := s.next(frameWindowUpdate, 3*time.Second)
				if !ok {
					result <- errors.New("stream window exhausted after " +
						strconv.Itoa(i) + " frames of " + strconv.Itoa(frames) + " (" + strconv.Itoa(i*frameLen) +
						" payload bytes, " + strconv.Itoa(i) + " of them data): no WINDOW_UPDATE for the stream came")
					return
				}
				if f.fh.stream == id {
					window += int64(uint32(f.p[0])<<24&0x7f000000 | uint32(f.p[1])<<16 | uint32(f.p[2])<<8 | uint32(f.p[3]))
				}
			}
			batch = append(batch, frame(frameData, flagPadded, id, payload)...)
			window -= frameLen
			if len(batch) > 64<<10 {
				s.write(batch)
				batch = batch[:0]
			}
		}
		batch = append(batch, frame(frameData, flagEndStream, id, nil)...)
		s.write(batch)
		result <- nil
		<-s.gone // closing first could reset data the client has yet to read
	})
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/pkg.Svc/Watch", nil)
	res, err := c.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	n, err := io.Copy(io.Discard, res.Body) // read as fast as it comes
	if err != nil {
		t.Fatalf("body: %v after %d bytes", err, n)
	}
	if err := <-result; err != nil {
		t.Fatalf("%v (client read %d body bytes)", err, n)
	}
	if n != frames {
		t.Fatalf("read %d body bytes, want %d", n, frames)
	}
}

// TestClientMalformedFieldKeepsHPACKInStep: a response header block with
// a field the client refuses ("connection", forbidden by RFC 9113 §8.2.2)
// fails that stream, and the rest of the block is still decoded: its
// later fields with incremental indexing enter the dynamic table as they
// entered the server's, so the next response that refers to them decodes
// rather than ending the connection and every call on it.
func TestClientMalformedFieldKeepsHPACKInStep(t *testing.T) {
	c, addr := rawBackend(t, nil, nil, func(s *rawServer) {
		h, ok := s.next(frameHeaders, 3*time.Second)
		if !ok {
			return
		}
		blk := []byte{0x88} // :status 200
		blk = literalPlain(blk, "connection", "keep-alive")
		blk = literalIndexed(blk, "x-backend", "pod-1") // dynamic index 62 from here on
		s.write(frame(frameHeaders, flagEndHeaders|flagEndStream, h.fh.stream, blk))

		h, ok = s.next(frameHeaders, 3*time.Second)
		if !ok {
			return
		}
		s.write(frame(frameHeaders, flagEndHeaders|flagEndStream, h.fh.stream, []byte{0x88, 0x80 | 62}))
		<-s.gone
	})
	c.ResponseHeaderTimeout = 3 * time.Second
	get := func() (*http.Response, error) {
		req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/", nil)
		return c.RoundTrip(req)
	}
	if res, err := get(); err == nil {
		res.Body.Close()
		t.Log("first response (with a connection header) accepted")
	} else {
		t.Logf("first response refused as malformed, as it may be: %v", err)
	}
	res, err := get()
	if err != nil {
		t.Fatalf("second response, valid against the server's HPACK state, failed: %v", err)
	}
	res.Body.Close()
	if got := res.Header.Get("X-Backend"); got != "pod-1" {
		t.Fatalf("X-Backend %q, want pod-1", got)
	}
}

// TestClientSchemeHTTPSOverTLS: calls over TLS say :scheme https.
func TestClientSchemeHTTPSOverTLS(t *testing.T) {
	hs := httptest.NewUnstartedServer(http.NotFoundHandler())
	hs.StartTLS() // for its certificate
	certs := hs.TLS.Certificates
	hs.Close()
	got := make(chan string, 1)
	c, addr := rawBackend(t, &tls.Config{Certificates: certs, NextProtos: []string{"h2"}}, nil, func(s *rawServer) {
		h, ok := s.next(frameHeaders, 3*time.Second)
		if !ok {
			got <- "(no HEADERS)"
			return
		}
		got <- s.headers(h)[":scheme"]
		s.write(frame(frameHeaders, flagEndHeaders|flagEndStream, h.fh.stream, []byte{0x88}))
		<-s.gone
	})
	c.ResponseHeaderTimeout = 3 * time.Second
	req, _ := http.NewRequest(http.MethodGet, "https://"+addr+"/pkg.Svc/Get", nil)
	res, err := c.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if s := <-got; s != "https" {
		t.Fatalf("an https call went out with :scheme %q", s)
	}
}

// TestClientUnusedConnIdles: a connection dialled for a call that then
// fails before its stream opens (here a header value HTTP/2 forbids) is
// closed after IdleConnTimeout like any other idle one.
func TestClientUnusedConnIdles(t *testing.T) {
	gone := make(chan struct{})
	c, addr := rawBackend(t, nil, nil, func(s *rawServer) {
		<-s.gone
		close(gone)
	})
	c.IdleConnTimeout = 100 * time.Millisecond
	req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/", nil)
	req.Header["X-Bad"] = []string{"a\x01b"}
	if _, err := c.RoundTrip(req); err == nil {
		t.Fatal("a header value with a control byte went out")
	}
	select {
	case <-gone:
	case <-time.After(2 * time.Second):
		t.Fatal("the connection dialled for the failed call is still open 2 s past a 100 ms IdleConnTimeout")
	}
}

// blockingBody is a request body whose Read blocks until Close, as a
// client's streaming upload that waits for the answer does.
type blockingBody struct {
	once   sync.Once
	closed chan struct{}
}

func (b *blockingBody) Read(p []byte) (int, error) {
	<-b.closed
	return 0, io.ErrClosedPipe
}

func (b *blockingBody) Close() error {
	b.once.Do(func() { close(b.closed) })
	return nil
}

// TestClientRequestBodyClosedOnReset: a RoundTripper closes the request
// body, on errors too. A call that ends (here the server resets the
// stream before the head) while its body writer is blocked in the body's
// Read closes the body, so that the Read returns and neither the writer
// nor the body outlives the call.
func TestClientRequestBodyClosedOnReset(t *testing.T) {
	c, addr := rawBackend(t, nil, nil, func(s *rawServer) {
		h, ok := s.next(frameHeaders, 3*time.Second)
		if !ok {
			return
		}
		s.write(frame(frameRSTStream, 0, h.fh.stream, []byte{0, 0, 0, byte(codeInternal)}))
		<-s.gone
	})
	body := &blockingBody{closed: make(chan struct{})}
	t.Cleanup(func() { body.Close() })
	req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/pkg.Svc/Upload", body)
	req.ContentLength = -1
	_, err := c.RoundTrip(req)
	if !errors.As(err, new(StreamError)) {
		t.Fatalf("call: %v, want the server's reset", err)
	}
	select {
	case <-body.closed:
	case <-time.After(2 * time.Second):
		t.Fatal("the request body was not closed 2 s after RoundTrip failed")
	}
}

// TestClientServerAllowingNoStreams: a server whose SETTINGS allow no
// stream (SETTINGS_MAX_CONCURRENT_STREAMS 0, as one shedding load may
// send) fails each call with that reason after one dial, and the
// connections are not kept.
func TestClientServerAllowingNoStreams(t *testing.T) {
	var mu sync.Mutex
	open, dialled := 0, 0
	c, addr := rawBackend(t, nil, []uint32{settingMaxConcurrentStreams, 0}, func(s *rawServer) {
		mu.Lock()
		open++
		dialled++
		mu.Unlock()
		<-s.gone
		mu.Lock()
		open--
		mu.Unlock()
	})
	for range 3 {
		req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/", nil)
		_, err := c.RoundTrip(req)
		if err == nil || !strings.Contains(err.Error(), "allows no streams") {
			t.Fatalf("call: %v, want the server's stream limit named", err)
		}
	}
	deadline := time.Now().Add(2 * time.Second)
	for {
		mu.Lock()
		n, d := open, dialled
		mu.Unlock()
		if d > 3 {
			t.Fatalf("%d connections dialled for three calls, want one each", d)
		}
		if n == 0 && d == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d connections dialled, %d still open 2 s after the calls failed", d, n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestClientRequestBodyClosedWhenAnswered: a call whose whole answer (a
// gRPC status, say) comes while its body writer waits in the body's Read
// is over, and its body is closed: the stream's reset tells the server,
// the Close tells the body's source.
func TestClientRequestBodyClosedWhenAnswered(t *testing.T) {
	c, addr := rawBackend(t, nil, nil, func(s *rawServer) {
		h, ok := s.next(frameHeaders, 3*time.Second)
		if !ok {
			return
		}
		s.write(frame(frameHeaders, flagEndHeaders|flagEndStream, h.fh.stream, []byte{0x88}))
		<-s.gone
	})
	body := &blockingBody{closed: make(chan struct{})}
	t.Cleanup(func() { body.Close() })
	req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/pkg.Svc/Upload", body)
	req.ContentLength = -1
	res, err := c.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(io.Discard, res.Body); err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	select {
	case <-body.closed:
	case <-time.After(2 * time.Second):
		t.Fatal("the request body was not closed 2 s after its call was answered")
	}
}
