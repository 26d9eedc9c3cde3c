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
	r := benchRouter(b, nil, cannedBackend(b))
	b.Cleanup(r.CloseIdleConnections)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	s := &h1.Server{Handler: r, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 75 * time.Second, ErrorLog: log.New(io.Discard, "", 0)}
	go func() { _ = s.Serve(ln) }()
	b.Cleanup(func() { _ = s.Close() })
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	req := []byte("GET /api/v1/items?id=42 HTTP/1.1\r\nHost: shop.example.com\r\n\r\n")
	br := bufio.NewReaderSize(c, 4096)
	// The response's length, learnt once: its head is fixed but for the
	// request ID and the date, which have fixed lengths.
	if _, err := c.Write(req); err != nil {
		b.Fatal(err)
	}
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		b.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, res.Body)
	if res.StatusCode != http.StatusOK {
		b.Fatalf("status %d", res.StatusCode)
	}
	if _, err := c.Write(req); err != nil {
		b.Fatal(err)
	}
	n := 0
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			b.Fatal(err)
		}
		n += len(line)
		if len(line) == 2 {
			break
		}
	}
	n += 3
	_, _ = br.Discard(3)
	buf := make([]byte, n)
	b.ReportAllocs()
	b.ResetTimer()
	// cpu-ns/op: the whole process's, client and backend included, which
	// a loaded machine inflates less than the wall time.
	start := cpuTime()
	for range b.N {
		if _, err := c.Write(req); err != nil {
			b.Fatal(err)
		}
		if _, err := io.ReadFull(br, buf); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
	if !bytes.HasPrefix(buf, []byte("HTTP/1.1 200 OK\r\n")) || !bytes.HasSuffix(buf, []byte("\r\n\r\nok\n")) {
		b.Fatalf("response %q", buf)
	}
}
