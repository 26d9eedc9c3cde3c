package router

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/match"
)

// framingBackend answers every request with its method, target and body,
// and keeps the targets it was asked for.
type framingBackend struct {
	mu      sync.Mutex
	targets []string
}

func (b *framingBackend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Upgrade") == "test" {
		// A tunnel that echoes what it gets.
		c, brw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer c.Close()
		_, _ = brw.WriteString("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: test\r\n\r\n")
		_ = brw.Flush()
		buf := make([]byte, 4096)
		for {
			n, err := brw.Read(buf)
			if n > 0 {
				if _, err := c.Write(buf[:n]); err != nil {
					return
				}
			}
			if err != nil {
				return
			}
		}
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	b.mu.Lock()
	b.targets = append(b.targets, r.RequestURI)
	b.mu.Unlock()
	fmt.Fprintf(w, "%s %s %q", r.Method, r.RequestURI, body)
}

func (b *framingBackend) seen() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.targets...)
}

// guardedRouter serves a router in front of a framingBackend on loopback,
// over HTTP/1 and h2c with prior knowledge, its listener guarded or not.
func guardedRouter(t *testing.T, guard bool) (addr string, be *framingBackend) {
	t.Helper()
	be = new(framingBackend)
	back := httptest.NewServer(be)
	t.Cleanup(back.Close)
	r := newTestRouter(Options{})
	t.Cleanup(r.CloseIdleConnections)
	r.Publish(table("framing", vhost("", nil, route(match.Prefix, "/", httpBackend("t/be:80", back.Listener.Addr().String())))))
	front := httptest.NewUnstartedServer(r)
	front.Config.Protocols = new(http.Protocols)
	front.Config.Protocols.SetHTTP1(true)
	front.Config.Protocols.SetUnencryptedHTTP2(true)
	if guard {
		front.Listener = GuardFraming(front.Listener)
	}
	front.Start()
	t.Cleanup(front.Close)
	return front.Listener.Addr().String(), be
}

// rawConn dials addr with a deadline that ends a stuck test.
func rawConn(t *testing.T, addr string) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	require.NoError(t, c.SetDeadline(time.Now().Add(10*time.Second)))
	return c, bufio.NewReader(c)
}

// readAnswer reads one response and its body.
func readAnswer(t *testing.T, br *bufio.Reader) (*http.Response, string) {
	t.Helper()
	res, err := http.ReadResponse(br, nil)
	require.NoError(t, err)
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res, string(b)
}

// requireRefused reads a 400 with Connection: close and then the end of
// the connection.
func requireRefused(t *testing.T, br *bufio.Reader) {
	t.Helper()
	res, body := readAnswer(t, br)
	require.Equal(t, http.StatusBadRequest, res.StatusCode, body)
	assert.True(t, res.Close, "Connection: close")
	rest, err := io.ReadAll(br)
	assert.NoError(t, err)
	assert.Empty(t, string(rest), "nothing after the 400")
}

const smuggled = "GET /smuggled HTTP/1.1\r\nHost: h\r\n\r\n"

// refusedHeads are requests nginx answers 400, each with a body that
// carries a smuggled request under one of its two framings.
var refusedHeads = []struct{ name, req string }{
	{"Content-Length and Transfer-Encoding", "POST /a HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n" + smuggled},
	{"Transfer-Encoding first, names in other cases", "POST /a HTTP/1.1\r\nHost: h\r\ntransfer-ENCODING: chunked\r\nCONTENT-length: 40\r\n\r\n0\r\n\r\n" + smuggled},
	{"Transfer-Encoding on HTTP/1.0", "POST /a HTTP/1.0\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n" + smuggled},
	{"Transfer-Encoding on HTTP/1.0 with Content-Length", "POST /a HTTP/1.0\r\nHost: h\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\nConnection: keep-alive\r\n\r\n0\r\n\r\n" + smuggled},
	{"bare LF line ends", "POST /a HTTP/1.1\nHost: h\nContent-Length: 5\nTransfer-Encoding: chunked\n\n0\r\n\r\n" + smuggled},
}

// TestGuardFramingRefuses: a request with both Content-Length and
// Transfer-Encoding, or Transfer-Encoding on HTTP/1.0, answers 400 and
// closes, as nginx does; no byte of it, or after it, reaches the backend.
// net/http alone serves the same bytes.
func TestGuardFramingRefuses(t *testing.T) {
	addr, be := guardedRouter(t, true)
	plain, _ := guardedRouter(t, false)
	for _, tc := range refusedHeads {
		t.Run(tc.name, func(t *testing.T) {
			c, br := rawConn(t, addr)
			_, err := io.WriteString(c, tc.req)
			require.NoError(t, err)
			requireRefused(t, br)
			assert.Empty(t, be.seen(), "the backend saw nothing")

			c, br = rawConn(t, plain)
			_, err = io.WriteString(c, tc.req)
			require.NoError(t, err)
			res, body := readAnswer(t, br)
			assert.Equal(t, http.StatusOK, res.StatusCode, "net/http alone serves it: %s", body)
		})
	}
	// The client is still sending when the server closes: the 400 must
	// not be lost to a reset.
	t.Run("a body larger than what was read", func(t *testing.T) {
		for range 3 {
			c, br := rawConn(t, addr)
			_, err := io.WriteString(c, "POST /a HTTP/1.1\r\nHost: h\r\nContent-Length: 200000\r\nTransfer-Encoding: chunked\r\n\r\n"+strings.Repeat("x", 200000))
			require.NoError(t, err)
			res, body := readAnswer(t, br)
			require.Equal(t, http.StatusBadRequest, res.StatusCode, body)
		}
	})
}

// foldedHeads hold an obs-folded field line (RFC 9112 section 5.2: a
// line that begins with a space or tab continues the one before), each
// with a smuggled request after it. net/http's server joins the line to
// the value before; nginx answers 400 ("client sent invalid header
// line"): a field two parsers read differently is how requests get
// smuggled (a folded Transfer-Encoding, say, that one parser does not see).
var foldedHeads = []struct{ name, req string }{
	{"space", "GET /a HTTP/1.1\r\nHost: h\r\nX-A: 1\r\n 2\r\n\r\n" + smuggled},
	{"tab", "GET /a HTTP/1.1\r\nHost: h\r\nX-A: 1\r\n\t2\r\n\r\n" + smuggled},
	{"folded Transfer-Encoding", "POST /a HTTP/1.1\r\nHost: h\r\nTransfer-Encoding:\r\n chunked\r\n\r\n0\r\n\r\n" + smuggled},
	{"folded Content-Length", "POST /a HTTP/1.1\r\nHost: h\r\nContent-Length:\r\n 0\r\n\r\n" + smuggled},
	{"bare LF line ends", "GET /a HTTP/1.1\nHost: h\nX-A: 1\n 2\n\n" + smuggled},
	{"an Upgrade request", "GET /a HTTP/1.1\r\nHost: h\r\nConnection: Upgrade\r\nUpgrade: test\r\nX-A: 1\r\n 2\r\n\r\n"},
}

// TestGuardFramingRefusesFolded: a head with a folded line answers 400 and
// closes, as nginx does, and nothing of it or after it reaches the
// backend; net/http alone serves it.
func TestGuardFramingRefusesFolded(t *testing.T) {
	addr, be := guardedRouter(t, true)
	plain, _ := guardedRouter(t, false)
	for _, tc := range foldedHeads {
		t.Run(tc.name, func(t *testing.T) {
			c, br := rawConn(t, addr)
			_, err := io.WriteString(c, tc.req)
			require.NoError(t, err)
			requireRefused(t, br)
			assert.Empty(t, be.seen(), "the backend saw nothing")

			c, br = rawConn(t, plain)
			_, err = io.WriteString(c, tc.req)
			require.NoError(t, err)
			res, err := http.ReadResponse(br, nil)
			require.NoError(t, err)
			res.Body.Close()
			assert.Less(t, res.StatusCode, 400, "net/http alone serves it")
		})
	}
}

// TestGuardFramingPipelined: a good request before a refused one on the
// same connection is answered as usual, then the 400, whether the refused
// head arrives with the good request or after it in pieces.
func TestGuardFramingPipelined(t *testing.T) {
	addr, be := guardedRouter(t, true)
	good := "POST /good HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nabc"
	bad := refusedHeads[0].req
	for _, split := range []int{0, 20, len(bad) - len(smuggled) - 7, len(bad) - len(smuggled) - 6} {
		t.Run(fmt.Sprint("split=", split), func(t *testing.T) {
			before := len(be.seen())
			c, br := rawConn(t, addr)
			_, err := io.WriteString(c, good+bad[:split])
			require.NoError(t, err)
			if split > 0 {
				// The first answer comes before the rest is sent, so the
				// refused head starts in an earlier read than it ends.
				res, body := readAnswer(t, br)
				require.Equal(t, http.StatusOK, res.StatusCode)
				assert.Equal(t, `POST /good "abc"`, body)
				time.Sleep(20 * time.Millisecond)
			}
			_, err = io.WriteString(c, bad[split:])
			require.NoError(t, err)
			if split == 0 {
				res, body := readAnswer(t, br)
				require.Equal(t, http.StatusOK, res.StatusCode)
				assert.Equal(t, `POST /good "abc"`, body)
			}
			requireRefused(t, br)
			assert.Equal(t, []string{"/good"}, be.seen()[before:])
		})
	}
}

// TestGuardFramingPassesThrough: requests net/http serves are served the
// same through the guard: bodies in both framings, chunk extensions and
// trailers, Expect: 100-continue, a long keep-alive sequence, a tunnel
// after Upgrade (whose bytes are not requests) and h2c with prior
// knowledge.
func TestGuardFramingPassesThrough(t *testing.T) {
	addr, be := guardedRouter(t, true)
	exchange := func(t *testing.T, c net.Conn, br *bufio.Reader, req, want string) {
		t.Helper()
		_, err := io.WriteString(c, req)
		require.NoError(t, err)
		res, body := readAnswer(t, br)
		require.Equal(t, http.StatusOK, res.StatusCode, body)
		assert.Equal(t, want, body)
	}
	requests := []struct{ req, want string }{
		{"GET /get HTTP/1.1\r\nHost: h\r\n\r\n", `GET /get ""`},
		{"POST /cl HTTP/1.1\r\nHost: h\r\nContent-Length: 11\r\n\r\nhello world", `POST /cl "hello world"`},
		{"POST /chunked HTTP/1.1\r\nhost: h\r\ntransfer-encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n6 \r\n world\r\nA;a=\"q;x\";b\r\n0123456789\r\n0\r\n\r\n", `POST /chunked "hello world0123456789"`},
		{"POST /trailers HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nTrailer: X-T\r\n\r\n3\r\nabc\r\n0;last\r\nX-T: Content-Length: 9\r\nTransfer-Encoding: chunked\r\n\r\n", `POST /trailers "abc"`},
		{"POST /zero HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n", `POST /zero ""`},
		// After a POST net/http skips a CRLF before the request line.
		{"\r\nGET /crlf HTTP/1.1\r\nHost: h\r\n\r\n", `GET /crlf ""`},
		{"POST /http10 HTTP/1.0\r\nHost: h\r\nContent-Length: 2\r\nConnection: keep-alive\r\n\r\nok", `POST /http10 "ok"`},
		// A body that looks like a refused head is a body.
		{"PUT /body HTTP/1.1\r\nHost: h\r\nContent-Length: 68\r\n\r\n" + refusedHeads[0].req[:68], fmt.Sprintf("PUT /body %q", refusedHeads[0].req[:68])},
	}
	t.Run("one by one", func(t *testing.T) {
		for _, r := range requests {
			if r.req[0] == '\r' {
				continue
			}
			c, br := rawConn(t, addr)
			exchange(t, c, br, r.req, r.want)
		}
	})
	t.Run("keep-alive, 50 requests", func(t *testing.T) {
		c, br := rawConn(t, addr)
		for i := range 50 {
			r := requests[i%len(requests)]
			if strings.Contains(r.req, "HTTP/1.0") {
				r = requests[0]
			}
			exchange(t, c, br, r.req, r.want)
		}
	})
	t.Run("pipelined", func(t *testing.T) {
		c, br := rawConn(t, addr)
		var all strings.Builder
		for _, r := range requests[:6] {
			all.WriteString(r.req)
		}
		_, err := io.WriteString(c, all.String())
		require.NoError(t, err)
		for _, r := range requests[:6] {
			res, body := readAnswer(t, br)
			require.Equal(t, http.StatusOK, res.StatusCode, body)
			assert.Equal(t, r.want, body)
		}
	})
	t.Run("Expect: 100-continue", func(t *testing.T) {
		c, br := rawConn(t, addr)
		_, err := io.WriteString(c, "POST /expect HTTP/1.1\r\nHost: h\r\nContent-Length: 4\r\nExpect: 100-continue\r\n\r\n")
		require.NoError(t, err)
		res, err := http.ReadResponse(br, nil)
		require.NoError(t, err)
		require.Equal(t, http.StatusContinue, res.StatusCode)
		exchange(t, c, br, "body", `POST /expect "body"`)
		exchange(t, c, br, requests[2].req, requests[2].want)
	})
	t.Run("Upgrade", func(t *testing.T) {
		c, br := rawConn(t, addr)
		_, err := io.WriteString(c, "GET /ws HTTP/1.1\r\nHost: h\r\nConnection: Upgrade\r\nUpgrade: test\r\n\r\n")
		require.NoError(t, err)
		res, err := http.ReadResponse(br, nil)
		require.NoError(t, err)
		require.Equal(t, http.StatusSwitchingProtocols, res.StatusCode)
		// The tunnel's bytes are not requests: they pass as they are.
		tunnel := refusedHeads[0].req + refusedHeads[2].req
		_, err = io.WriteString(c, tunnel)
		require.NoError(t, err)
		echoed := make([]byte, len(tunnel))
		_, err = io.ReadFull(br, echoed)
		require.NoError(t, err)
		assert.Equal(t, tunnel, string(echoed))
	})
	t.Run("h2c prior knowledge", func(t *testing.T) {
		client := &http.Client{Transport: h2cTransport(t)}
		res, err := client.Post("http://"+addr+"/h2c", "text/plain", strings.NewReader("two"))
		require.NoError(t, err)
		b, err := io.ReadAll(res.Body)
		res.Body.Close()
		require.NoError(t, err)
		assert.Equal(t, 2, res.ProtoMajor)
		assert.Equal(t, `POST /h2c "two"`, string(b))
	})
	assert.NotContains(t, be.seen(), "/smuggled")
}

// feedConn serves in as a connection that returns at most the given sizes
// per Read, cycling through them.
type feedConn struct {
	net.Conn
	in    []byte
	sizes []byte
	reads int
}

func (c *feedConn) Read(p []byte) (int, error) {
	if len(c.in) == 0 {
		return 0, io.EOF
	}
	n := len(p)
	if len(c.sizes) > 0 {
		n = min(n, int(c.sizes[c.reads%len(c.sizes)])+1)
	}
	c.reads++
	n = copy(p, c.in[:min(n, len(c.in))])
	c.in = c.in[n:]
	return n, nil
}

// guardRead reads in through a guard with the given read sizes (of the
// connection and of the reader) and returns what the guard delivered and
// whether it refused a head.
func guardRead(t testing.TB, in, sizes []byte, bufSize int) (out []byte, refused bool) {
	g := GuardFramingConn(&feedConn{in: in, sizes: sizes}).(*framingGuard)
	buf := make([]byte, bufSize)
	for range len(in) + len(rejectLine) + 2 {
		n, err := g.Read(buf)
		out = append(out, buf[:n]...)
		if err != nil {
			require.ErrorIs(t, err, io.EOF)
			return out, g.st == gRejected
		}
	}
	t.Fatalf("the guard did not end after %d reads of %d bytes", len(in)+len(rejectLine)+2, len(in))
	return nil, false
}

// TestGuardFramingReads: what the guard delivers does not depend on how
// the stream is cut into reads, but for where the refusal line goes: in
// place of the refused head, or of its last line when the head's start was
// delivered by an earlier read.
func TestGuardFramingReads(t *testing.T) {
	ok := "GET / HTTP/1.1\r\nHost: h\r\n\r\nPOST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3;x\r\nabc\r\n0\r\nT: v\r\n\r\n"
	bad := refusedHeads[0].req
	lines := bad[:strings.Index(bad, "\r\n\r\n")+2]
	for _, sizes := range [][]byte{nil, {0}, {2, 0, 6}, {30}} {
		for _, bufSize := range []int{1, 7, 4096} {
			got, refused := guardRead(t, []byte(ok+bad), sizes, bufSize)
			require.True(t, refused)
			// The empty line's CR may have gone out with the lines.
			switch string(got) {
			case ok + rejectLine, ok + lines + rejectLine, ok + lines + "\r" + rejectLine:
			default:
				t.Fatalf("sizes %v, buffer %d: delivered %q", sizes, bufSize, got)
			}
		}
	}
	got, refused := guardRead(t, []byte(ok+ok), []byte{3}, 5)
	require.False(t, refused)
	require.Equal(t, ok+ok, string(got))
}

// FuzzFramingGuard drives arbitrary client bytes through the guard, cut
// into reads of arbitrary sizes. What it delivers is the input itself, or
// a prefix of it followed by the refusal line and nothing more; it refuses
// the same streams however they are cut, and only a head with a folded
// line or that holds Transfer-Encoding with Content-Length or on
// HTTP/1.0. It holds no bytes
// back (its state is fixed-size): every read delivers what it read.
func FuzzFramingGuard(f *testing.F) {
	for _, r := range refusedHeads {
		f.Add([]byte(r.req), []byte{3, 0})
	}
	for _, r := range foldedHeads {
		f.Add([]byte(r.req), []byte{4, 1})
	}
	f.Add([]byte("GET / HTTP/1.1\r\nHost: h\r\n\r\nPOST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3;x\r\nabc\r\n0\r\nT: v\r\n\r\n"+refusedHeads[0].req), []byte{1})
	f.Add([]byte("POST / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nabc"+refusedHeads[1].req), []byte{})
	f.Add([]byte("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"+refusedHeads[0].req), []byte{5})
	f.Add([]byte("CONNECT h:1 HTTP/1.1\r\n\r\n"+refusedHeads[0].req), []byte{5})
	f.Add([]byte("POST / HTTP/1.1\r\nContent-Length:\r\n 3\r\nTransfer-Encoding: x\r\n\r\n"), []byte{5})
	f.Fuzz(func(t *testing.T, in, sizes []byte) {
		whole, refused := guardRead(t, in, nil, len(in)+len(rejectLine)+1)
		cut := len(whole)
		if refused {
			cut -= len(rejectLine)
			if string(whole[cut:]) != rejectLine {
				t.Fatalf("refused without the refusal line: %q", whole)
			}
			checkRefusedHead(t, in[cut:])
		}
		if !bytes.Equal(whole[:cut], in[:cut]) || !refused && cut != len(in) {
			t.Fatalf("delivered %q of %q", whole, in)
		}
		got, again := guardRead(t, in, sizes, 1+len(sizes)%9)
		if again != refused {
			t.Fatalf("refused %v in one read, %v in reads of %v", refused, again, sizes)
		}
		k := len(got)
		if again {
			k -= len(rejectLine)
		}
		if !bytes.Equal(got[:k], in[:k]) || k < cut || !refused && k != len(in) {
			t.Fatalf("reads of %v delivered %q; one read %q", sizes, got, whole)
		}
	})
}

// checkRefusedHead fails unless head has a field line that begins with a
// space or tab, or, read as net/http reads a head (where it can), has
// Transfer-Encoding with Content-Length or on HTTP/1.0.
func checkRefusedHead(t *testing.T, head []byte) {
	t.Helper()
	if foldedField(head) {
		return
	}
	tp := textproto.NewReader(bufio.NewReader(bytes.NewReader(head)))
	line, err := tp.ReadLine()
	if err != nil {
		return
	}
	hdr, err := tp.ReadMIMEHeader()
	if err != nil {
		return // net/http refuses it itself
	}
	_, te := hdr["Transfer-Encoding"]
	_, cl := hdr["Content-Length"]
	if !te || !cl && !strings.HasSuffix(line, " HTTP/1.0") {
		t.Fatalf("refused %q: Transfer-Encoding %v, Content-Length %v", head, te, cl)
	}
}

// foldedField reports whether a field line of the head at the start of b,
// up to the empty line that ends it, begins with a space or tab.
func foldedField(b []byte) bool {
	_, rest, _ := bytes.Cut(b, []byte("\n"))
	for len(rest) > 0 {
		line, next, _ := bytes.Cut(rest, []byte("\n"))
		if len(line) == 0 || string(line) == "\r" {
			return false
		}
		if line[0] == ' ' || line[0] == '\t' {
			return true
		}
		rest = next
	}
	return false
}

// loopConn serves data again and again, one Read at most len(p) bytes.
type loopConn struct {
	net.Conn
	data []byte
	off  int
}

func (c *loopConn) Read(p []byte) (int, error) {
	if c.off == len(c.data) {
		return 0, io.EOF
	}
	n := copy(p, c.data[c.off:])
	c.off += n
	return n, nil
}

// BenchmarkFramingGuard reads a keep-alive stream of 60 requests (GETs
// with browser-sized heads, POSTs with Content-Length and chunked bodies)
// in net/http's 4 KiB reads, with and without the guard.
func BenchmarkFramingGuard(b *testing.B) {
	get := "GET /api/v1/items?id=42 HTTP/1.1\r\nHost: shop.example.com\r\nUser-Agent: Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36\r\n" +
		"Accept: text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8\r\nAccept-Language: en-US,en;q=0.5\r\nAccept-Encoding: gzip, deflate, br\r\nCookie: session=0123456789abcdef; theme=dark\r\nConnection: keep-alive\r\n\r\n"
	post := "POST /api/v1/items HTTP/1.1\r\nHost: shop.example.com\r\nContent-Type: application/json\r\nContent-Length: 1024\r\n\r\n" + strings.Repeat("x", 1024)
	chunked := "POST /upload HTTP/1.1\r\nHost: shop.example.com\r\nTransfer-Encoding: chunked\r\n\r\n400\r\n" + strings.Repeat("y", 1024) + "\r\n10;ext\r\n0123456789abcdef\r\n0\r\n\r\n"
	var stream strings.Builder
	for range 20 {
		stream.WriteString(get + post + chunked)
	}
	data := []byte(stream.String())
	for _, guard := range []bool{false, true} {
		b.Run(fmt.Sprint("guard=", guard), func(b *testing.B) {
			lc := &loopConn{data: data}
			var c net.Conn = lc
			if guard {
				c = GuardFramingConn(lc)
			}
			buf := make([]byte, 4096)
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				lc.off = 0
				for {
					if _, err := c.Read(buf); err != nil {
						break
					}
				}
			}
			if g, ok := c.(*framingGuard); ok && g.st != gHeadStart {
				b.Fatalf("the guard ended in state %d", g.st)
			}
		})
	}
}

// BenchmarkServerGuard is BenchmarkServer's proxy=router through a
// listener with and without the guard.
func BenchmarkServerGuard(b *testing.B) {
	h := proxies(b)["router"]
	for _, guard := range []bool{false, true} {
		b.Run(fmt.Sprint("guard=", guard), func(b *testing.B) {
			front := httptest.NewUnstartedServer(h)
			if guard {
				front.Listener = GuardFraming(front.Listener)
			}
			front.Start()
			defer front.Close()
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256, DisableCompression: true}}
			defer client.CloseIdleConnections()
			u := front.URL + "/api/v1/items?id=42"
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				req, _ := http.NewRequest(http.MethodGet, u, nil)
				req.Host = "shop.example.com"
				for pb.Next() {
					res, err := client.Do(req)
					if err != nil {
						b.Error(err)
						return
					}
					_, _ = io.Copy(io.Discard, res.Body)
					res.Body.Close()
					if res.StatusCode != http.StatusOK {
						b.Errorf("status %d", res.StatusCode)
						return
					}
				}
			})
		})
	}
}

// TestGuardFramingConnInterfaces: the guard keeps what net/http and the
// controller look for on a connection: the TLS state (Request.TLS),
// ReadFrom where the connection has it (sendfile), CloseWrite, and the
// wrapped connection through NetConn, as *tls.Conn offers it.
func TestGuardFramingConnInterfaces(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	go func() {
		if c, err := l.Accept(); err == nil {
			c.Close()
		}
	}()
	tcp, err := net.Dial("tcp", l.Addr().String())
	require.NoError(t, err)
	defer tcp.Close()
	g := GuardFramingConn(tcp)
	assert.Implements(t, (*io.ReaderFrom)(nil), g)
	assert.Implements(t, (*interface{ CloseWrite() error })(nil), g)
	assert.NotImplements(t, (*connectionStater)(nil), g)
	assert.Same(t, tcp, g.(interface{ NetConn() net.Conn }).NetConn())

	tc := tls.Client(tcp, &tls.Config{})
	g = GuardFramingConn(tc)
	assert.Implements(t, (*connectionStater)(nil), g)
	assert.Same(t, tc, g.(interface{ NetConn() net.Conn }).NetConn())

	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	g = GuardFramingConn(a)
	assert.NotImplements(t, (*io.ReaderFrom)(nil), g)
	assert.NotImplements(t, (*connectionStater)(nil), g)
	assert.NoError(t, g.(interface{ CloseWrite() error }).CloseWrite(), "a no-op where the connection has none")
}
