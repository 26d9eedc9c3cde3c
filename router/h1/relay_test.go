package h1

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// hideFunc is a Hider made of a function.
type hideFunc func(string) bool

func (f hideFunc) Hidden(k string) bool { return f(k) }

// relayCase is one backend response head passed on to a client, and how
// the client asked and the handler answers.
type relayCase struct {
	head   string // the backend's status line and fields, with the empty line
	method string
	proto  string // the client's request line's
	conn   string // the client's Connection field, if any
	body   int    // body bytes the handler writes after the head
	flush  bool   // it flushes after the head: committed before it is done
	touch  bool   // it edits the header after the head
	hide   string // a field the proxy hides beside Server
}

func (tc relayCase) String() string {
	return fmt.Sprintf("%s %s conn=%q body=%d flush=%v touch=%v hide=%q head=%q",
		tc.method, tc.proto, tc.conn, tc.body, tc.flush, tc.touch, tc.hide, tc.head)
}

// request is the client's raw request.
func (tc relayCase) request(path string) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s %s\r\nHost: relay.test\r\n", tc.method, path, tc.proto)
	if tc.conn != "" {
		fmt.Fprintf(&b, "Connection: %s\r\n", tc.conn)
	}
	if tc.method == "POST" {
		b.WriteString("Content-Length: 4\r\n\r\nbody")
	} else {
		b.WriteString("\r\n")
	}
	return []byte(b.String())
}

func (tc relayCase) hidden(k string) bool { return k == "Server" || k == tc.hide }

// relayServer serves the case in cur: at /map by CopyTo, a Content-Type
// without a value when the head has none, and WriteHeader, at /relay by
// Relay.
type relayServer struct {
	addr string
	mu   sync.Mutex
	cur  relayCase
	// refused: Relay reported false (it must, exactly for 1xx heads).
	refused bool
}

func newRelayServer(t testing.TB) *relayServer {
	rs := new(relayServer)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{Handler: rs, ReadHeaderTimeout: 5 * time.Second, IdleTimeout: 5 * time.Second, ErrorLog: log.New(io.Discard, "", 0)}
	go s.Serve(ln)
	t.Cleanup(func() { s.Close() })
	rs.addr = ln.Addr().String()
	return rs
}

func (rs *relayServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rs.mu.Lock()
	tc := rs.cur
	rs.mu.Unlock()
	res := new(Response)
	budget := MaxResponseHead
	if err := res.read(bufioReader(tc.head), r.Method, &budget); err != nil {
		panic(err)
	}
	relayed := false
	if r.URL.Path == "/relay" {
		relayed = w.(Relayer).Relay(res, hideFunc(tc.hidden))
		if !relayed {
			rs.mu.Lock()
			rs.refused = true
			rs.mu.Unlock()
		}
	}
	if !relayed {
		res.CopyTo(w.Header(), tc.hidden)
		if _, ok := w.Header()["Content-Type"]; !ok {
			w.Header()["Content-Type"] = nil // as Relay: none is sniffed
		}
		w.WriteHeader(res.Status)
	}
	// The response's strings outlive it, as when the backend's
	// connection goes back to its pool before the head is written.
	res.release()
	if tc.touch {
		h := w.Header()
		h.Add("X-Added", "after")
		h.Add("Set-Cookie", "late=1")
		h.Del("Content-Type")
	}
	if tc.flush {
		w.(http.Flusher).Flush()
	}
	body := make([]byte, tc.body)
	for i := range body {
		body[i] = 'a' + byte(i%26)
	}
	_, _ = w.Write(body)
}

// normalized is out with each head's fields in a stable order by name (a
// map's order is random; each name's values keep theirs) and the Date
// the server makes replaced, since the two exchanges may fall in
// different seconds.
func normalized(out []byte, head string) string {
	var b strings.Builder
	for len(out) > 0 {
		// Bodies are lowercase letters and chunk framing: a status line
		// is where "HTTP/1." starts.
		i := bytes.Index(out, []byte("HTTP/1."))
		if i < 0 {
			b.Write(out)
			break
		}
		b.Write(out[:i])
		out = out[i:]
		end := bytes.Index(out, []byte("\r\n\r\n"))
		if end < 0 {
			b.Write(out)
			break
		}
		lines := strings.Split(string(out[:end]), "\r\n")
		out = out[end+4:]
		fields := lines[1:]
		for j, l := range fields {
			if v, ok := strings.CutPrefix(l, "Date: "); ok && !strings.Contains(head, v) {
				fields[j] = "Date: (now)"
			}
		}
		slices.SortStableFunc(fields, func(a, b string) int {
			ka, _, _ := strings.Cut(a, ":")
			kb, _, _ := strings.Cut(b, ":")
			return strings.Compare(ka, kb)
		})
		b.WriteString(lines[0] + "\r\n" + strings.Join(fields, "\r\n") + "\r\n\r\n")
	}
	return b.String()
}

// check sends tc through both paths and compares what the client got.
func (rs *relayServer) check(t testing.TB, tc relayCase) {
	t.Helper()
	rs.mu.Lock()
	rs.cur, rs.refused = tc, false
	rs.mu.Unlock()
	viaMap := exchange(t, rs.addr, tc.request("/map"))
	viaRelay := exchange(t, rs.addr, tc.request("/relay"))
	rs.mu.Lock()
	refused := rs.refused
	rs.mu.Unlock()
	res := new(Response)
	budget := MaxResponseHead
	_ = res.read(bufioReader(tc.head), tc.method, &budget)
	if want := res.Status < 200; refused != want {
		t.Fatalf("%v: Relay reported %v for status %d", tc, !refused, res.Status)
	}
	if m, r := normalized(viaMap, tc.head), normalized(viaRelay, tc.head); m != r {
		t.Fatalf("%v:\nthrough the map:\n%q\nrelayed:\n%q", tc, m, r)
	}
}

func bufioReader(s string) *bufio.Reader {
	return bufio.NewReaderSize(strings.NewReader(s), bufferSize)
}

// relayHeads are backend response heads the router passes on.
var relayHeads = []string{
	"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nDate: Mon, 02 Jan 2006 15:04:05 GMT\r\nContent-Length: 5\r\n\r\n",
	"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 3000\r\n\r\n",
	"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-A: 1\r\n\r\n",
	"HTTP/1.1 200 OK\r\nContent-Length:  5 \r\n\r\n",
	"HTTP/1.1 200 OK\r\nX-Only: 1\r\n\r\n",
	"HTTP/1.1 200 OK\r\n\r\n",
	"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTrailer: X-Sum\r\n\r\n",
	"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Type: text/event-stream\r\n\r\n",
	"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 5\r\n\r\n",
	"HTTP/1.1 200 OK\r\nConnection: keep-alive, X-Private\r\nX-Private: secret\r\nKeep-Alive: timeout=5\r\nContent-Length: 5\r\n\r\n",
	"HTTP/1.1 200 OK\r\nConnection: Content-Type\r\nContent-Type: text/html\r\nContent-Length: 5\r\n\r\n",
	"HTTP/1.1 200 OK\r\nSet-Cookie: a=1\r\nX-A: 1\r\nSet-Cookie: b=2\r\nx-a: 2\r\nSet-Cookie: c=3\r\n\r\n",
	"HTTP/1.1 200 OK\r\nServer: backend/1.0\r\nProxy-Connection: keep-alive\r\nUpgrade: h2c\r\nTe: trailers\r\nProxy-Authenticate: Basic\r\n\r\n",
	"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Encoding: br\r\n\r\n",
	"HTTP/1.1 200 OK\r\ncontent-type: text/html\r\nCONTENT-LENGTH: 007\r\nx-lower-case: v\r\n\r\n",
	"HTTP/1.1 200 OK\r\nContent-Type:\r\nX-Empty:\r\nX-Tab: a\tb\r\nX-Obs: caf\xc3\xa9\r\n\r\n",
	"HTTP/1.1 204 No Content\r\nContent-Length: 0\r\nContent-Type: text/plain\r\n\r\n",
	"HTTP/1.1 304 Not Modified\r\nContent-Type: text/plain\r\nContent-Length: 20\r\nEtag: \"x\"\r\n\r\n",
	"HTTP/1.1 404 Not Found\r\nContent-Length: 5\r\nDate: Tue, 03 Jan 2006 15:04:05 GMT\r\nDate: Wed, 04 Jan 2006 15:04:05 GMT\r\n\r\n",
	"HTTP/1.1 599 Custom\r\nContent-Length: 5\r\n\r\n",
	"HTTP/1.1 999 \r\n\r\n",
	"HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\n",
	"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 5\r\n\r\n",
	"HTTP/1.1 206 Partial Content\r\nContent-Range: bytes 0-4/10\r\nContent-Length: 5\r\nAccept-Ranges: bytes\r\n\r\n",
	"HTTP/1.1 103 Early Hints\r\nLink: </s.css>; rel=preload\r\n\r\n",
	"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n",
}

// TestRelayLikeMap sends backend heads to clients through Relay and
// through CopyTo and WriteHeader, and requires the same bytes (fields in
// a stable order) for every way a client asks and a handler writes.
func TestRelayLikeMap(t *testing.T) {
	rs := newRelayServer(t)
	type client struct{ method, proto, conn string }
	clients := []client{
		{"GET", "HTTP/1.1", ""}, {"GET", "HTTP/1.1", "close"}, {"HEAD", "HTTP/1.1", ""},
		{"POST", "HTTP/1.1", ""}, {"GET", "HTTP/1.0", ""}, {"GET", "HTTP/1.0", "keep-alive"},
		{"HEAD", "HTTP/1.0", "keep-alive"}, {"POST", "HTTP/1.0", "keep-alive"},
	}
	type writes struct {
		body         int
		flush, touch bool
		hide         string
	}
	ways := []writes{{}, {body: 5}, {body: 5, flush: true}, {body: 3000}, {body: 5, touch: true},
		{body: 5, hide: "Content-Type"}, {body: 0, hide: "Date"}, {body: 5, hide: "Content-Length"}}
	for _, head := range relayHeads {
		for _, c := range clients {
			for _, wr := range ways {
				rs.check(t, relayCase{head: head, method: c.method, proto: c.proto, conn: c.conn,
					body: wr.body, flush: wr.flush, touch: wr.touch, hide: wr.hide})
			}
		}
	}
}

// FuzzRelay is TestRelayLikeMap for any head Response reads.
func FuzzRelay(f *testing.F) {
	for i, h := range relayHeads {
		f.Add(h, byte(i), uint16(i*37%3100), byte(i))
	}
	rs := newRelayServer(f)
	f.Fuzz(func(t *testing.T, head string, client byte, body uint16, ways byte) {
		parses := func(method string) bool {
			budget := MaxResponseHead
			return new(Response).read(bufioReader(head), method, &budget) == nil
		}
		if len(head) > 8<<10 || !parses("GET") || !parses("HEAD") {
			return
		}
		methods := []string{"GET", "HEAD", "POST"}
		protos := []string{"HTTP/1.1", "HTTP/1.0"}
		conns := []string{"", "close", "keep-alive"}
		hides := []string{"", "Content-Type", "Content-Length", "Date", "X-A"}
		rs.check(t, relayCase{
			head: head, method: methods[int(client)%3], proto: protos[int(client/3)%2], conn: conns[int(client/6)%3],
			body: int(body) % 4000, flush: ways&1 != 0, touch: ways&2 != 0, hide: hides[int(ways>>2)%len(hides)],
		})
	})
}
