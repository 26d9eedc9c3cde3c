package router

import (
	"bufio"
	"bytes"
	"io"
	"log"
	"net"
	"net/http"
	"testing"
	"time"

	"ramjet.dev/ramjet/router/h1"
)

// BenchmarkLoop is the plain-HTTP path as the example controller serves it
// (issue 41): router/h1's server in front of the router, the router's own
// pool to a backend that answers from constants (cannedBackend), and a
// client on one keep-alive connection sending what wrk sends. Everything
// it allocates is the server's, the router's and the pool's; ns/op is a
// whole exchange on loopback, both hops, with the client and backend in
// the same process.
func BenchmarkLoop(b *testing.B) {
	exchange, buf := loopConn(b)
	b.ReportAllocs()
	b.ResetTimer()
	// cpu-ns/op: the whole process's, client and backend included, which
	// a loaded machine inflates less than the wall time.
	start := cpuTime()
	for range b.N {
		exchange()
	}
	b.StopTimer()
	b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
	if !bytes.HasPrefix(buf, []byte("HTTP/1.1 200 OK\r\n")) || !bytes.HasSuffix(buf, []byte("\r\n\r\nok\n")) {
		b.Fatalf("response %q", buf)
	}
}

// loopConn serves the router with router/h1's server in front of a
// canned backend and opens one keep-alive connection to it: exchange
// sends wrk's request on it and reads the answer whole into buf. The
// answer's length is learnt once: its head is fixed but for the request
// ID and the date, which have fixed lengths.
func loopConn(tb testing.TB) (exchange func(), buf []byte) {
	r := benchRouter(nil, nil, cannedBackend(tb))
	tb.Cleanup(r.CloseIdleConnections)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	s := &h1.Server{Handler: r, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 75 * time.Second, ErrorLog: log.New(io.Discard, "", 0)}
	go func() { _ = s.Serve(ln) }()
	tb.Cleanup(func() { _ = s.Close() })
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.Close() })
	req := []byte("GET /api/v1/items?id=42 HTTP/1.1\r\nHost: shop.example.com\r\n\r\n")
	br := bufio.NewReaderSize(c, 4096)
	if _, err := c.Write(req); err != nil {
		tb.Fatal(err)
	}
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		tb.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, res.Body)
	if res.StatusCode != http.StatusOK || res.ContentLength < 0 {
		tb.Fatalf("status %d, length %d", res.StatusCode, res.ContentLength)
	}
	if _, err := c.Write(req); err != nil {
		tb.Fatal(err)
	}
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			tb.Fatal(err)
		}
		buf = append(buf, line...)
		if len(line) == 2 {
			break
		}
	}
	buf = append(buf, make([]byte, res.ContentLength)...)
	if _, err := io.ReadFull(br, buf[len(buf)-int(res.ContentLength):]); err != nil {
		tb.Fatal(err)
	}
	exchange = func() {
		if _, err := c.Write(req); err != nil {
			tb.Fatal(err)
		}
		if _, err := io.ReadFull(br, buf); err != nil {
			tb.Fatal(err)
		}
	}
	return exchange, buf
}
