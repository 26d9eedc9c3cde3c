package router

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"net/textproto"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/match"
	"ramjet.dev/ramjet/router/h2"
)

// h2Frame is one HTTP/2 frame as read off the wire.
type h2Frame struct {
	typ, flags byte
	stream     uint32
	payload    []byte
}

func readH2Frame(r io.Reader) (h2Frame, error) {
	var h [9]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return h2Frame{}, err
	}
	f := h2Frame{typ: h[3], flags: h[4], stream: binary.BigEndian.Uint32(h[5:]) &^ (1 << 31)}
	f.payload = make([]byte, int(h[0])<<16|int(h[1])<<8|int(h[2]))
	_, err := io.ReadFull(r, f.payload)
	return f, err
}

// hpackIndexes reports whether a header block (RFC 7541 §6) asks the
// receiver to add any field to its dynamic table (a literal with
// incremental indexing, 01xxxxxx), and how many fields it holds.
func hpackIndexes(block []byte) (indexes bool, fields int, err error) {
	integer := func(prefix uint) (uint64, error) {
		if len(block) == 0 {
			return 0, errors.New("truncated")
		}
		mask := byte(1<<prefix - 1)
		v := uint64(block[0] & mask)
		block = block[1:]
		if v < uint64(mask) {
			return v, nil
		}
		for shift := uint(0); ; shift += 7 {
			if len(block) == 0 || shift > 56 {
				return 0, errors.New("bad integer")
			}
			b := block[0]
			block = block[1:]
			v += uint64(b&0x7f) << shift
			if b&0x80 == 0 {
				return v, nil
			}
		}
	}
	skipString := func() error {
		n, err := integer(7)
		if err != nil || n > uint64(len(block)) {
			return errors.New("bad string")
		}
		block = block[n:]
		return nil
	}
	for len(block) > 0 {
		b := block[0]
		var idx uint64
		literal := true
		switch {
		case b&0x80 != 0: // indexed field
			_, err = integer(7)
			literal = false
			fields++
		case b&0xc0 == 0x40: // literal, incremental indexing
			indexes = true
			idx, err = integer(6)
		case b&0xe0 == 0x20: // dynamic table size update
			_, err = integer(5)
			literal = false
		default: // literal without indexing or never indexed
			idx, err = integer(4)
		}
		if err != nil {
			return indexes, fields, err
		}
		if !literal {
			continue
		}
		if idx == 0 {
			if err := skipString(); err != nil {
				return indexes, fields, err
			}
		}
		if err := skipString(); err != nil {
			return indexes, fields, err
		}
		fields++
	}
	return indexes, fields, nil
}

// TestGRPCUpstreamHeadersNotIndexed: request headers go to an HTTP/2
// backend without HPACK's dynamic table, as nginx's grpc_pass sends them.
// Every call has a new X-Request-ID: indexing it would insert and evict
// a table entry per call on the proxy's CPU for no gain.
func TestGRPCUpstreamHeadersNotIndexed(t *testing.T) {
	type block struct {
		indexes bool
		fields  int
		err     error
	}
	blocks := make(chan block, 8)
	addr := rawServer(t, func(c net.Conn) {
		br := bufio.NewReader(c)
		preface := make([]byte, len("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"))
		if _, err := io.ReadFull(br, preface); err != nil {
			return
		}
		// An empty SETTINGS, then the ACK of the client's.
		_, _ = c.Write([]byte{0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 4, 1, 0, 0, 0, 0})
		for {
			f, err := readH2Frame(br)
			if err != nil {
				return
			}
			if f.typ != 1 { // HEADERS
				continue
			}
			p := f.payload
			if f.flags&0x8 != 0 { // PADDED
				p = p[1 : len(p)-int(p[0])]
			}
			if f.flags&0x20 != 0 { // PRIORITY
				p = p[5:]
			}
			if f.flags&0x4 == 0 {
				blocks <- block{err: errors.New("header block continued: not expected for a small request")}
				return
			}
			ix, n, err := hpackIndexes(p)
			blocks <- block{ix, n, err}
			// RST_STREAM (CANCEL): the router answers the call itself.
			rst := []byte{0, 0, 4, 3, 0, 0, 0, 0, 0, 0, 0, 0, 8}
			binary.BigEndian.PutUint32(rst[5:9], f.stream)
			_, _ = c.Write(rst)
		}
	})
	r := newTestRouter(Options{})
	r.Publish(table("d", vhost("", nil,
		route(match.Prefix, "/pkg.Svc", backend("prod/grpc:50051", match.GRPC, match.Serving, addr)))))
	front := h1AndH2CServer(t, r)
	client := &http.Client{Transport: h2cTransport(t)}
	for i := range 3 {
		req, err := http.NewRequest(http.MethodPost, front.URL+"/pkg.Svc/Get", strings.NewReader("\x00\x00\x00\x00\x00"))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/grpc")
		req.Header.Set("Te", "trailers")
		req.Header.Set("X-Custom", strings.Repeat("v", 40))
		res, err := client.Do(req)
		require.NoError(t, err)
		_ = body(t, res)
		b := <-blocks
		require.NoError(t, b.err, "call %d", i)
		assert.False(t, b.indexes, "call %d: a header was added to the backend's dynamic table", i)
		assert.GreaterOrEqual(t, b.fields, 10, "call %d: the pseudo-headers, the client's and the forwarding ones", i)
	}
}

// TestHTTP2BodyStallEnds: a gRPC body over HTTP/2 that stalls between
// reads for the client body timeout ends the call (SPEC §13), and one
// that keeps coming inside it does not.
func TestHTTP2BodyStallEnds(t *testing.T) {
	grpcBackend := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, err := io.Copy(io.Discard, r.Body)
		if err != nil {
			return
		}
		w.Header().Set("Content-Type", "application/grpc")
		w.Header().Set("Trailer", "Grpc-Status")
		_, _ = w.Write([]byte{0, 0, 0, 0, byte(n)})
		w.Header().Set("Grpc-Status", "0")
	}))
	grpcBackend.Config.Protocols = new(http.Protocols)
	grpcBackend.Config.Protocols.SetUnencryptedHTTP2(true)
	grpcBackend.Start()
	defer grpcBackend.Close()
	addr := grpcBackend.Listener.Addr().String()

	rs := newRecords()
	const bodyTimeout = 300 * time.Millisecond
	r := newTestRouter(Options{Observer: rs.observe, ClientBodyTimeout: bodyTimeout})
	r.Publish(table("d", vhost("", nil,
		route(match.Prefix, "/pkg.Svc", backend("prod/grpc:50051", match.GRPC, match.Serving, addr)))))
	defer r.CloseIdleConnections()
	front := h1AndH2CServer(t, r)
	client := &http.Client{Transport: h2cTransport(t), Timeout: 10 * time.Second}

	call := func(body io.Reader) (*http.Response, time.Duration) {
		req, err := http.NewRequest(http.MethodPost, front.URL+"/pkg.Svc/Get", body)
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/grpc")
		req.Header.Set("Te", "trailers")
		start := time.Now()
		res, err := client.Do(req)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return res, time.Since(start)
	}

	// Five bytes every 100 ms, inside the timeout, then the end.
	pr, pw := io.Pipe()
	go func() {
		for range 5 {
			time.Sleep(100 * time.Millisecond)
			_, _ = pw.Write([]byte{1})
		}
		pw.Close()
	}()
	res, took := call(pr)
	assert.Equal(t, http.StatusOK, res.StatusCode)
	assert.Equal(t, "0", res.Trailer.Get("Grpc-Status"), "a body that keeps coming is proxied")
	assert.Less(t, took, 5*time.Second)

	// Two bytes, then nothing: the call ends after the body timeout.
	pr, pw = io.Pipe()
	defer pw.Close()
	go func() { _, _ = pw.Write([]byte{1, 2}) }()
	res, took = call(pr)
	assert.Equal(t, http.StatusRequestTimeout, res.StatusCode)
	assert.NotEmpty(t, res.Header.Get("Grpc-Status"), "answered as gRPC")
	assert.GreaterOrEqual(t, took, bodyTimeout)
	assert.Less(t, took, 5*time.Second)
	assert.Equal(t, ReasonClientTimeout, rs.last(t).Reason)
	assert.Zero(t, r.InFlight(addr))
}

// TestGRPCForwardedHeadersOnce: over the default transport the forwarding
// headers go to an HTTP/2 backend each once: a client's forged ones and a
// ProxySetHeaders one of the same names are replaced, not sent beside
// them, and Te: trailers passes.
func TestGRPCForwardedHeadersOnce(t *testing.T) {
	seen := make(chan http.Header, 1)
	s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen <- r.Header.Clone()
		w.Header().Set("Content-Type", "application/grpc")
		w.Header().Set("Trailer", "Grpc-Status")
		_, _ = w.Write([]byte("\x00\x00\x00\x00\x00"))
		w.Header().Set("Grpc-Status", "0")
	}))
	s.Config.Protocols = new(http.Protocols)
	s.Config.Protocols.SetUnencryptedHTTP2(true)
	s.Start()
	t.Cleanup(s.Close)
	r := newTestRouter(Options{ProxySetHeaders: http.Header{"X-Forwarded-Host": {"set.by.configmap"}, "X-Team": {"payments"}}})
	r.Publish(table("d", vhost("", nil,
		route(match.Prefix, "/pkg.Svc", backend("prod/grpc:50051", match.GRPC, match.Serving, strings.TrimPrefix(s.URL, "http://"))))))
	front := h1AndH2CServer(t, r)
	client := &http.Client{Transport: h2cTransport(t)}
	req, err := http.NewRequest(http.MethodPost, front.URL+"/pkg.Svc/Get", strings.NewReader("\x00\x00\x00\x00\x00"))
	require.NoError(t, err)
	req.Host = "grpc.test"
	req.Header.Set("Content-Type", "application/grpc")
	req.Header.Set("Te", "trailers")
	req.Header.Set("X-Real-Ip", "203.0.113.9")
	req.Header.Set("X-Forwarded-Port", "1")
	req.Header.Set("Grpc-Timeout", "5S")
	res, err := client.Do(req)
	require.NoError(t, err)
	_ = body(t, res)
	assert.Equal(t, "0", res.Trailer.Get("Grpc-Status"))
	h := <-seen
	for _, k := range []string{"X-Forwarded-For", "X-Real-Ip", "X-Forwarded-Host", "X-Forwarded-Port", "X-Forwarded-Proto",
		"X-Scheme", "X-Forwarded-Scheme", "X-Request-Id", "Te", "Grpc-Timeout", "X-Team"} {
		assert.Len(t, h[k], 1, "%s: %q", k, h[k])
	}
	assert.Equal(t, "127.0.0.1", h.Get("X-Real-Ip"))
	assert.Equal(t, "grpc.test", h.Get("X-Forwarded-Host"))
	assert.NotEqual(t, "1", h.Get("X-Forwarded-Port"))
	assert.Equal(t, "trailers", h.Get("Te"))
	assert.Len(t, h.Get("X-Request-Id"), 32)
}

// TestGRPCStreamsBothWaysThroughRouter: a bidirectional gRPC stream
// through the router, over the router's own HTTP/2 server and client (or
// net/http's client, Options.NetHTTP2Client), each message answered
// before the next is sent, then the status.
func TestGRPCStreamsBothWaysThroughRouter(t *testing.T) {
	for _, netHTTP2 := range []bool{false, true} {
		t.Run(map[bool]string{false: "router/h2", true: "net/http"}[netHTTP2], func(t *testing.T) {
			testGRPCStreamsBothWays(t, netHTTP2)
		})
	}
}

func testGRPCStreamsBothWays(t *testing.T, netHTTP2 bool) {
	s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/grpc")
		w.Header().Set("Trailer", "Grpc-Status")
		w.WriteHeader(200)
		w.(http.Flusher).Flush()
		buf := make([]byte, 64)
		for {
			n, err := r.Body.Read(buf)
			if n > 0 {
				_, _ = w.Write([]byte(strings.ToUpper(string(buf[:n]))))
				w.(http.Flusher).Flush()
			}
			if err != nil {
				break
			}
		}
		w.Header().Set("Grpc-Status", "0")
	}))
	s.Config.Protocols = new(http.Protocols)
	s.Config.Protocols.SetUnencryptedHTTP2(true)
	s.Start()
	t.Cleanup(s.Close)
	r := newTestRouter(Options{NetHTTP2Client: netHTTP2})
	_, own := r.proxy.Transport.(*upstream).h2c.(*h2.Client)
	require.Equal(t, !netHTTP2, own, "the client for GRPC backends")
	r.Publish(table("d", vhost("", nil,
		route(match.Prefix, "/pkg.Chat", backend("prod/grpc:50051", match.GRPC, match.Serving, strings.TrimPrefix(s.URL, "http://"))))))
	front := h1AndH2CServer(t, r)
	client := &http.Client{Transport: h2cTransport(t)}
	pr, pw := io.Pipe()
	req, err := http.NewRequest(http.MethodPost, front.URL+"/pkg.Chat/Talk", pr)
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/grpc")
	req.Header.Set("Te", "trailers")
	res, err := client.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	buf := make([]byte, 64)
	for _, m := range []string{"one", "two", "three"} {
		_, err := pw.Write([]byte(m))
		require.NoError(t, err)
		n, err := io.ReadAtLeast(res.Body, buf, len(m))
		require.NoError(t, err, "answer to %q", m)
		assert.Equal(t, strings.ToUpper(m), string(buf[:n]))
	}
	require.NoError(t, pw.Close())
	rest, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	assert.Empty(t, rest)
	assert.Equal(t, "0", res.Trailer.Get("Grpc-Status"))
}

// TestH2CInformational: an HTTP/2 backend's 103 Early Hints reaches the
// client through router/h2's client, as an HTTP/1 backend's does.
func TestH2CInformational(t *testing.T) {
	s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Link", "</style.css>; rel=preload")
		w.WriteHeader(http.StatusEarlyHints)
		w.Header().Del("Link")
		_, _ = io.WriteString(w, "final\n")
	}))
	s.Config.Protocols = new(http.Protocols)
	s.Config.Protocols.SetUnencryptedHTTP2(true)
	s.Start()
	t.Cleanup(s.Close)
	r := newTestRouter(Options{})
	r.Publish(table("d", vhost("", nil,
		route(match.Prefix, "/", backend("prod/h2c:80", match.H2C, match.Serving, strings.TrimPrefix(s.URL, "http://"))))))
	t.Cleanup(r.CloseIdleConnections)
	front := httptest.NewServer(r)
	t.Cleanup(front.Close)
	var hints []string
	trace := &httptrace.ClientTrace{Got1xxResponse: func(code int, h textproto.MIMEHeader) error {
		hints = append(hints, strconv.Itoa(code)+" "+h.Get("Link"))
		return nil
	}}
	req, err := http.NewRequest(http.MethodGet, front.URL+"/", nil)
	require.NoError(t, err)
	res, err := front.Client().Do(req.WithContext(httptrace.WithClientTrace(req.Context(), trace)))
	require.NoError(t, err)
	assert.Equal(t, "final\n", body(t, res))
	assert.Equal(t, []string{"103 </style.css>; rel=preload"}, hints)
}
