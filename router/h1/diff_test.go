package h1

import (
	"bufio"
	"bytes"
	"io"
	"log"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// seen is what the handler saw of one request.
type seen struct {
	Method, RequestURI, Path, RawQuery, Host, Proto string
	Header                                          http.Header
	ContentLength                                   int64
	TransferEncoding                                []string
	Close                                           bool
	Body                                            string
	BodyErr                                         string
	Trailer                                         http.Header
}

// recorder is a handler that records each request and answers as its
// query asks: s status, cl a declared Content-Length, n body bytes in
// writes of w bytes, f flush after each write, tr a declared trailer,
// te a Transfer-Encoding, c Connection: close, ct Content-Type, skip
// not reading the body.
type recorder struct {
	mu   sync.Mutex
	seen []seen
}

func (rec *recorder) take() []seen {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	s := rec.seen
	rec.seen = nil
	return s
}

func (rec *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	s := seen{Method: r.Method, RequestURI: r.RequestURI, Path: r.URL.Path, RawQuery: r.URL.RawQuery, Host: r.Host,
		Proto: r.Proto, Header: r.Header.Clone(), ContentLength: r.ContentLength, TransferEncoding: slices.Clone(r.TransferEncoding), Close: r.Close}
	if q.Get("skip") == "" {
		b, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		s.Body = string(b)
		if err != nil {
			s.BodyErr = "error" // the texts may differ
		}
		s.Trailer = r.Trailer.Clone()
	}
	rec.mu.Lock()
	rec.seen = append(rec.seen, s)
	rec.mu.Unlock()
	h := w.Header()
	if v := q.Get("cl"); v != "" {
		h.Set("Content-Length", v)
	}
	if v := q.Get("tr"); v != "" {
		h.Set("Trailer", "X-Tr")
	}
	if v := q.Get("te"); v != "" {
		h.Set("Transfer-Encoding", v)
	}
	if q.Get("c") != "" {
		h.Set("Connection", "close")
	}
	if v := q.Get("ct"); v != "" {
		h.Set("Content-Type", v)
	}
	status, _ := strconv.Atoi(q.Get("s"))
	if status >= 100 && status <= 999 {
		w.WriteHeader(status)
	}
	n, _ := strconv.Atoi(q.Get("n"))
	chunk, _ := strconv.Atoi(q.Get("w"))
	n, chunk = min(n, 1<<16), max(chunk, 1)
	for i := 0; i < n; i += chunk {
		_, _ = w.Write(bytes.Repeat([]byte{'a' + byte(i%26)}, min(chunk, n-i)))
		if q.Get("f") != "" {
			http.NewResponseController(w).Flush()
		}
	}
	if q.Get("tr") != "" {
		h.Set("X-Tr", "t")
		h.Set(http.TrailerPrefix+"X-Late", "l")
	}
}

// pair is net/http's server and the loop, each on its own loopback
// listener, serving the same kind of handler with the controller's
// settings (net/http behind GuardFraming, as the controller runs it).
type pair struct {
	std, loop       string
	stdRec, loopRec *recorder
}

func newPair(t testing.TB) *pair {
	p := &pair{stdRec: new(recorder), loopRec: new(recorder)}
	quiet := log.New(io.Discard, "", 0)
	ln1, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	std := &http.Server{Handler: p.stdRec, ReadHeaderTimeout: 5 * time.Second, IdleTimeout: 5 * time.Second, ErrorLog: quiet}
	go std.Serve(GuardFraming(ln1))
	ln2, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	loop := &Server{Handler: p.loopRec, ReadHeaderTimeout: 5 * time.Second, IdleTimeout: 5 * time.Second, ErrorLog: quiet}
	go loop.Serve(ln2)
	t.Cleanup(func() { std.Close(); loop.Close() })
	p.std, p.loop = ln1.Addr().String(), ln2.Addr().String()
	return p
}

// exchange sends raw on a new connection, half-closes it, and returns
// everything the server sent until it closed.
func exchange(t testing.TB, addr string, raw []byte) []byte {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	go func() {
		_, _ = c.Write(raw)
		_ = c.(*net.TCPConn).CloseWrite()
	}()
	out, err := io.ReadAll(c)
	if err != nil && !isReset(err) {
		t.Fatalf("reading from %s: %v", addr, err)
	}
	return out
}

func isReset(err error) bool {
	return err != nil && (strings.Contains(err.Error(), "connection reset") || strings.Contains(err.Error(), "broken pipe"))
}

// answer is what a client can tell of one response.
type answer struct {
	Status           int
	Header           http.Header
	ContentLength    int64
	TransferEncoding []string
	Close            bool
	Body             string
	BodyErr          bool
	Trailer          http.Header
}

// answers parses the responses in out, methods being the requests' (for
// HEAD); what cannot be parsed is returned raw.
func answers(out []byte, methods []string) ([]answer, string) {
	br := bufio.NewReader(bytes.NewReader(out))
	var as []answer
	for i := 0; ; i++ {
		if _, err := br.Peek(1); err != nil {
			return as, ""
		}
		method := "GET"
		if i < len(methods) {
			method = methods[i]
		}
		res, err := http.ReadResponse(br, &http.Request{Method: method})
		if err != nil {
			rest, _ := io.ReadAll(br)
			return as, "unparsable: " + err.Error() + ": " + string(rest)
		}
		b, err := io.ReadAll(res.Body)
		h := res.Header.Clone()
		h.Del("Date")
		as = append(as, answer{Status: res.StatusCode, Header: h, ContentLength: res.ContentLength,
			TransferEncoding: res.TransferEncoding, Close: res.Close, Body: string(b), BodyErr: err != nil, Trailer: res.Trailer})
		if res.StatusCode == http.StatusSwitchingProtocols || err != nil {
			rest, _ := io.ReadAll(br)
			return as, string(rest)
		}
	}
}

// compare sends raw to both servers and reports any difference in what
// the handler saw (method, target, host, headers, framing, body and its
// failure, trailers) and in what the client got (status, headers but
// Date, framing, body, trailers, and after which response the
// connection closed). The loop's deliberate differences from net/http's
// server (Server's doc, doc.go §13) are outside what this compares or
// arranged away: net/http runs behind GuardFraming, as the
// controller runs it, so both refuse ambiguous framing; the handler does
// not wait on the request's context (the loop watches the connection only
// once something does: TestContextCancelledWhenClientGoes); header order,
// chunk sizes and reuse of the request objects are not observable here
// (TestRequestReusedUnlessContextObserved).
func (p *pair) compare(t testing.TB, raw []byte) {
	if followsNginx(raw) {
		return
	}
	outStd := exchange(t, p.std, raw)
	outLoop := exchange(t, p.loop, raw)
	seenStd, seenLoop := p.stdRec.take(), p.loopRec.take()
	if d := cmp.Diff(seenStd, seenLoop); d != "" {
		t.Fatalf("the handler saw different requests (-net/http +loop):\n%s\ninput %q", d, raw)
	}
	methods := make([]string, len(seenStd))
	for i, s := range seenStd {
		methods[i] = s.Method
	}
	// Refusals come before a handler runs: the rest are GETs or the
	// method of the request line; good enough for HEAD.
	if len(methods) == 0 && bytes.HasPrefix(raw, []byte("HEAD ")) {
		methods = []string{"HEAD"}
	}
	aStd, restStd := answers(outStd, methods)
	aLoop, restLoop := answers(outLoop, methods)
	if d := cmp.Diff(aStd, aLoop); d != "" {
		t.Fatalf("different responses (-net/http +loop):\n%s\ninput %q\nnet/http %q\nloop     %q", d, raw, outStd, outLoop)
	}
	if restStd != restLoop {
		t.Fatalf("different unparsed rest: net/http %q, loop %q (input %q)", restStd, restLoop, raw)
	}
}

// followsNginx reports an input the loop serves as nginx does where
// net/http does not (Server's doc), each tested on its own: one with an
// Expect field other than 100-continue, or a field nginx takes once
// (uniqueFields) twice, in any of its requests (a line of a body may
// count), TRACE, a method nginx does not read as one (in any line that
// may be a request line), a "*" target, a field name that is no token
// but that nginx reads (invalidName), a line that would be a chunk-size
// line nginx and net/http read differently (nginxChunkLine), and empty
// lines before a request line (at the start, or after a head).
func followsNginx(raw []byte) bool {
	if len(raw) > 0 && (raw[0] == '\r' || raw[0] == '\n') {
		return true
	}
	for _, gap := range []string{"\r\n\r\n\r\n", "\r\n\r\n\n", "\n\n\n", "\n\n\r\n"} {
		if bytes.Contains(raw, []byte(gap)) {
			return true
		}
	}
	seen := map[string]int{}
	for line := range bytes.Lines(raw) {
		if m, rest, ok := bytes.Cut(bytes.TrimLeft(line, "\r\n"), []byte(" ")); ok && len(m) > 0 && !NginxMethod(string(m)) && bytes.Contains(rest, []byte(" HTTP/")) {
			return true
		}
		if bytes.HasPrefix(line, []byte("TRACE ")) || bytes.Contains(line, []byte(" * HTTP/")) || invalidName(line) || nginxChunkLine(line) {
			return true
		}
		name, v, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			continue
		}
		key := http.CanonicalHeaderKey(string(name))
		if key == "Expect" && !strings.EqualFold(strings.TrimSpace(string(v)), "100-continue") {
			return true
		}
		if seen[key]++; seen[key] > 1 && uniqueField(key) {
			return true
		}
	}
	return false
}

// diffSeeds are requests for the differential test: each is also a
// regression case.
var diffSeeds = []string{
	"GET / HTTP/1.1\r\nHost: a\r\n\r\n",
	"GET /?n=10 HTTP/1.1\r\nHost: a\r\n\r\nGET /?n=3000&w=1000 HTTP/1.1\r\nHost: a\r\n\r\n",
	"GET /x?n=5&cl=5 HTTP/1.1\r\nHost: a\r\n\r\nHEAD /?n=5 HTTP/1.1\r\nHost: a\r\n\r\n",
	"HEAD /?n=5&cl=5 HTTP/1.1\r\nHost: a\r\n\r\n",
	"HEAD / HTTP/1.1\r\nHost: a\r\n\r\n",
	"GET /?s=204&n=3 HTTP/1.1\r\nHost: a\r\n\r\nGET /?s=304&ct=x/y&cl=9 HTTP/1.1\r\nHost: a\r\n\r\n",
	"GET /?s=404&n=3000&f=1&w=700 HTTP/1.1\r\nHost: a\r\n\r\n",
	"GET /?tr=1&n=20&w=7 HTTP/1.1\r\nHost: a\r\n\r\n",
	"GET /?tr=1&n=5&f=1 HTTP/1.1\r\nHost: a\r\n\r\n",
	"GET /?te=identity&n=5 HTTP/1.1\r\nHost: a\r\n\r\n",
	"GET /?te=chunked&n=5 HTTP/1.1\r\nHost: a\r\n\r\n",
	"GET /?te=gzip&n=5&cl=5 HTTP/1.1\r\nHost: a\r\n\r\n",
	"GET /?c=1&n=2 HTTP/1.1\r\nHost: a\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n",
	"GET /?n=2 HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n",
	"GET /?n=2 HTTP/1.0\r\n\r\nGET / HTTP/1.0\r\n\r\n",
	"GET /?n=2 HTTP/1.0\r\nConnection: keep-alive\r\n\r\nGET /?n=3000 HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
	"GET /?cl=2&n=2 HTTP/1.0\r\nConnection: keep-alive\r\n\r\nGET / HTTP/1.0\r\n\r\n",
	"POST /p HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhelloGET / HTTP/1.1\r\nHost: b\r\n\r\n",
	"POST /p HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello\r\nGET / HTTP/1.1\r\nHost: b\r\n\r\n",
	"POST /p?skip=1 HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhelloGET / HTTP/1.1\r\nHost: b\r\n\r\n",
	"POST /p HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\nhello",
	"POST /p HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n",
	"POST /p HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nTrailer: X-T\r\n\r\n5\r\nhello\r\n0\r\nX-T: v\r\n\r\n",
	"POST /p?skip=1 HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n",
	"POST /p HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n",
	"POST /p HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\n\r\n",
	"POST /p HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\nContent-Length: 5\r\n\r\nhello",
	"POST /p HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
	"POST /p HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
	"POST /p HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\nhello",
	"POST /p HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello",
	"POST /p HTTP/1.1\r\nHost: a\r\nContent-Length: +5\r\n\r\nhello",
	"POST /p HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\nhello",
	"POST /p?skip=1 HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\nhelloGET / HTTP/1.1\r\nHost: a\r\n\r\n",
	"POST /p HTTP/1.1\r\nHost: a\r\nExpect: something\r\nContent-Length: 5\r\n\r\nhello",
	"GET / HTTP/1.1\r\n\r\n",
	"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
	"GET / HTTP/1.1\r\nHost: a b\r\n\r\n",
	"GET / HTTP/1.1\r\nHost:\r\n\r\n",
	"GET http://h.test/x?y HTTP/1.1\r\nHost: a\r\n\r\n",
	"GET http://h.test/x HTTP/1.1\r\n\r\n",
	"GET / HTTP/1.0\r\n\r\n",
	"GET / HTTP/2.0\r\nHost: a\r\n\r\n",
	"GET / HTTP/0.9\r\nHost: a\r\n\r\n",
	"GET / HTTP/1.2\r\nHost: a\r\n\r\n",
	"G@T / HTTP/1.1\r\nHost: a\r\n\r\n",
	"GET /\r\nHost: a\r\n\r\n",
	"GET  / HTTP/1.1\r\nHost: a\r\n\r\n",
	"\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n",
	"GET / HTTP/1.1\r\nHost: a\r\nBad Header: x\r\n\r\n",
	"GET / HTTP/1.1\r\nHost: a\r\nX: a\r\n  folded\r\n\r\n",
	"GET / HTTP/1.1\r\nHost: a\r\nX: \x01\r\n\r\n",
	"GET / HTTP/1.1\nHost: a\n\n",
	"OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n",
	"CONNECT h.test:443 HTTP/1.1\r\nHost: h.test:443\r\n\r\n",
	"GET /?n=3 HTTP/1.1\r\nHost: a\r\nPragma: no-cache\r\n\r\n",
	"GET /?s=101 HTTP/1.1\r\nHost: a\r\n\r\n",
	"GET /?s=103&n=2 HTTP/1.1\r\nHost: a\r\n\r\n",
	"GET /?s=999&n=2 HTTP/1.1\r\nHost: a\r\n\r\n",
	"GET /?ct=&n=5 HTTP/1.1\r\nHost: a\r\n\r\n",
	"GET /?cl=3&n=5 HTTP/1.1\r\nHost: a\r\n\r\n",
	"GET /?cl=9&n=5 HTTP/1.1\r\nHost: a\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n",
	"GET /?cl=x&n=5 HTTP/1.1\r\nHost: a\r\n\r\n",
	"GET / HTTP/1.1\r\nHost: a\r\nX-Long: " + strings.Repeat("x", 1<<20+5000) + "\r\n\r\n",
}

func TestDifferential(t *testing.T) {
	p := newPair(t)
	for _, s := range diffSeeds {
		p.compare(t, []byte(s))
	}
}

func FuzzDifferential(f *testing.F) {
	for _, s := range diffSeeds {
		if len(s) < 4096 {
			f.Add([]byte(s))
		}
	}
	p := newPair(f)
	f.Fuzz(func(t *testing.T, raw []byte) {
		p.compare(t, raw)
	})
}

// nginxChunkLine reports a line that, as a chunk-size line, chunkSize
// (nginx's reading) and net/http's chunked reader read differently: one
// reads a size the other refuses.
func nginxChunkLine(line []byte) bool {
	line = bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
	_, err := chunkSize(line)
	return (err == nil) != netHTTPChunkSize(line)
}

// netHTTPChunkSize reports whether net/http's chunked reader reads a size
// from line: trailing spaces and tabs trimmed, an extension cut at ';',
// then 1 to 16 hex digits.
func netHTTPChunkSize(line []byte) bool {
	line = bytes.TrimRight(line, " \t")
	line, _, _ = bytes.Cut(line, []byte(";"))
	if len(line) == 0 || len(line) > 16 {
		return false
	}
	for _, c := range line {
		if _, ok := hexDigit(c); !ok {
			return false
		}
	}
	return true
}
