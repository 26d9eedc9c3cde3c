package h1

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/textproto"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// framingBackend answers every request with its method, target and body,
const smuggled = "GET /smuggled HTTP/1.1\r\nHost: h\r\n\r\n"

// refusedHeads are requests nginx answers 400, each with a body that
// carries a smuggled request under one of its two framings.
var refusedHeads = []struct{ Name, Req string }{
	{"Content-Length and Transfer-Encoding", "POST /a HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n" + smuggled},
	{"Transfer-Encoding first, names in other cases", "POST /a HTTP/1.1\r\nHost: h\r\ntransfer-ENCODING: chunked\r\nCONTENT-length: 40\r\n\r\n0\r\n\r\n" + smuggled},
	{"Transfer-Encoding on HTTP/1.0", "POST /a HTTP/1.0\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n" + smuggled},
	{"Transfer-Encoding on HTTP/1.0 with Content-Length", "POST /a HTTP/1.0\r\nHost: h\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\nConnection: keep-alive\r\n\r\n0\r\n\r\n" + smuggled},
	{"bare LF line ends", "POST /a HTTP/1.1\nHost: h\nContent-Length: 5\nTransfer-Encoding: chunked\n\n0\r\n\r\n" + smuggled},
	// net/http merges equal ones into one; nginx refuses any repeat
	// ("client sent duplicate header line").
	{"two equal Content-Lengths", "POST /a HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\ncontent-length: 0\r\n\r\n" + smuggled},
}

// TestGuardFramingRefuses: a request with both Content-Length and
// Transfer-Encoding, or Transfer-Encoding on HTTP/1.0, answers 400 and
// closes, as nginx does; no byte of it, or after it, reaches the backend.
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
	bad := refusedHeads[0].Req
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

// guardFoldedHeads hold an obs-folded field line (RFC 9112 section 5.2: a
// line that begins with a space or tab continues the one before), each
// with a smuggled request after it. net/http's server joins the line to
// the value before; nginx answers 400 ("client sent invalid header
// line"): a field two parsers read differently is how requests get
// smuggled (a folded Transfer-Encoding, say, that one parser does not see).
var guardFoldedHeads = []struct{ Name, Req string }{
	{"space", "GET /a HTTP/1.1\r\nHost: h\r\nX-A: 1\r\n 2\r\n\r\n" + smuggled},
	{"tab", "GET /a HTTP/1.1\r\nHost: h\r\nX-A: 1\r\n\t2\r\n\r\n" + smuggled},
	{"folded Transfer-Encoding", "POST /a HTTP/1.1\r\nHost: h\r\nTransfer-Encoding:\r\n chunked\r\n\r\n0\r\n\r\n" + smuggled},
	{"folded Content-Length", "POST /a HTTP/1.1\r\nHost: h\r\nContent-Length:\r\n 0\r\n\r\n" + smuggled},
	{"bare LF line ends", "GET /a HTTP/1.1\nHost: h\nX-A: 1\n 2\n\n" + smuggled},
	{"an Upgrade request", "GET /a HTTP/1.1\r\nHost: h\r\nConnection: Upgrade\r\nUpgrade: test\r\nX-A: 1\r\n 2\r\n\r\n"},
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
		f.Add([]byte(r.Req), []byte{3, 0})
	}
	for _, r := range guardFoldedHeads {
		f.Add([]byte(r.Req), []byte{4, 1})
	}
	f.Add([]byte("GET / HTTP/1.1\r\nHost: h\r\n\r\nPOST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3;x\r\nabc\r\n0\r\nT: v\r\n\r\n"+refusedHeads[0].Req), []byte{1})
	f.Add([]byte("POST / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nabc"+refusedHeads[1].Req), []byte{})
	f.Add([]byte("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"+refusedHeads[0].Req), []byte{5})
	f.Add([]byte("CONNECT h:1 HTTP/1.1\r\n\r\n"+refusedHeads[0].Req), []byte{5})
	f.Add([]byte("POST / HTTP/1.1\r\nContent-Length:\r\n 3\r\nTransfer-Encoding: x\r\n\r\n"), []byte{5})
	f.Add([]byte("POST / HTTP/1.1\r\nTransfer-Encoding:  Chunked \r\nContent-Length: 3\r\n\r\nabc"+refusedHeads[0].Req), []byte{2})
	f.Add([]byte("POST / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\nContent-Length: 3\r\n\r\nabc"), []byte{2})
	f.Add([]byte("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n8000000000000000\r\nabc"), []byte{3})
	f.Fuzz(func(t *testing.T, in, sizes []byte) {
		whole, refused := guardRead(t, in, nil, len(in)+len(rejectLine)+1)
		cut := len(whole)
		if refused {
			cut -= len(rejectLine)
			if string(whole[cut:]) != rejectLine {
				t.Fatalf("refused without the refusal line: %q", whole)
			}
			if !chunkPastBound(in, cut) {
				checkRefusedHead(t, in[cut:])
			}
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

// chunkPastBound reports whether in[cut] is the digit at which a chunk
// size, hex digits from the start of a line, passes nginx's bound.
func chunkPastBound(in []byte, cut int) bool {
	j := cut
	for j > 0 && cut-j < 16 {
		if _, ok := hexDigit(in[j-1]); !ok {
			break
		}
		j--
	}
	if cut >= len(in) || j > 0 && in[j-1] != '\n' {
		return false
	}
	if _, ok := hexDigit(in[cut]); !ok {
		return false
	}
	var n uint64
	for _, c := range in[j:cut] {
		d, _ := hexDigit(c)
		n = n<<4 | uint64(d)
	}
	return n > maxChunkSize>>4
}

// checkRefusedHead fails unless head has a field line that begins with a
// space or tab, or, read as net/http reads a head (where it can), has
// Transfer-Encoding on HTTP/1.0, or chunked (or twice) with Content-Length,
// or two Content-Lengths.
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
	tes, te := hdr["Transfer-Encoding"]
	_, cl := hdr["Content-Length"]
	if len(hdr["Content-Length"]) > 1 {
		return
	}
	unknown := len(tes) == 1 && !strings.EqualFold(tes[0], "chunked")
	if !te || (!cl || unknown) && !strings.HasSuffix(line, " HTTP/1.0") {
		t.Fatalf("refused %q: Transfer-Encoding %q, Content-Length %v", head, tes, cl)
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

// discardConn takes writes, for a guard driven by hand.
type discardConn struct{ feedConn }

func (c *discardConn) Write(p []byte) (int, error) { return len(p), nil }

// TestGuardFramingSwitch: the guard stops looking only once the response
// to an Upgrade head was a 101, or to a CONNECT head a 2xx: a response to
// an earlier request, an informational one, or a refusal to switch leaves
// what follows read as requests, and a head refused there refused.
func TestGuardFramingSwitch(t *testing.T) {
	const (
		get     = "GET / HTTP/1.1\r\nHost: h\r\n\r\n"
		upgrade = "GET /ws HTTP/1.1\r\nHost: h\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n"
		connect = "CONNECT h:443 HTTP/1.1\r\nHost: h:443\r\n\r\n"
	)
	bad := refusedHeads[0].Req
	for _, tc := range []struct {
		name    string
		heads   string
		written []string // the responses written once heads were read
		refused bool
	}{
		{"Upgrade, no answer yet", upgrade, nil, true},
		{"Upgrade, 101", upgrade, []string{"HTTP/1.1 101 Switching Protocols\r\n\r\n"}, false},
		{"Upgrade, 101 after 100 and 103", upgrade, []string{"HTTP/1.1 100 Continue\r\n\r\n", "HTTP/1.1 103 Early Hints\r\n\r\n", "HTTP/1.1 101 Switching Protocols\r\n\r\n"}, false},
		{"Upgrade, answered 200", upgrade, []string{"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"}, true},
		{"Upgrade, answered 400", upgrade, []string{"HTTP/1.1 400 Bad Request\r\n\r\n"}, true},
		{"Upgrade after a GET, the GET answered", get + upgrade, []string{"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"}, true},
		{"Upgrade after a GET, both answered", get + upgrade, []string{"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", "HTTP/1.1 101 Switching Protocols\r\n\r\n"}, false},
		{"CONNECT, no answer yet", connect, nil, true},
		{"CONNECT, 200", connect, []string{"HTTP/1.1 200 Connection Established\r\n\r\n"}, false},
		{"CONNECT, answered 400", connect, []string{"HTTP/1.1 400 Bad Request\r\n\r\n"}, true},
		{"CONNECT after a GET, the GET answered", get + connect, []string{"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"}, true},
		{"CONNECT, 101", connect, []string{"HTTP/1.1 101 Switching Protocols\r\n\r\n"}, true},
		{"GET, 101", get, []string{"HTTP/1.1 101 Switching Protocols\r\n\r\n"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := GuardFramingConn(&discardConn{feedConn{in: []byte(tc.heads + bad)}}).(*framingGuard)
			n, err := g.Read(make([]byte, len(tc.heads)))
			require.NoError(t, err)
			require.Equal(t, len(tc.heads), n)
			for _, w := range tc.written {
				_, err := g.Write([]byte(w))
				require.NoError(t, err)
			}
			got, err := io.ReadAll(g)
			require.NoError(t, err)
			if tc.refused {
				assert.Equal(t, rejectLine, string(got))
			} else {
				assert.Equal(t, bad, string(got), "the new protocol's bytes pass")
			}
		})
	}
}
