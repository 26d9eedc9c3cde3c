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

// TestLoopAllocs holds BenchmarkLoop's path, router/h1's server in front
// of the router and its pool, at no allocation per keep-alive request
// when the client repeats its head and the backend its answer, as wrk and
// the load harness's backend do (issue 41): every allocation there is GC
// work that stalls all the connections of a one-CPU controller, and lands
// in its p99. The count is over the whole process, client and backend
// included, which allocate nothing per exchange either.
func TestLoopAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	r := benchRouter(nil, nil, cannedBackend(t))
	defer r.CloseIdleConnections()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &h1.Server{Handler: r, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 75 * time.Second, ErrorLog: log.New(io.Discard, "", 0)}
	go func() { _ = s.Serve(ln) }()
	defer s.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	req := []byte("GET /api/v1/items?id=42 HTTP/1.1\r\nHost: shop.example.com\r\n\r\n")
	br := bufio.NewReaderSize(c, 4096)
	if _, err := c.Write(req); err != nil {
		t.Fatal(err)
	}
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, res.Body)
	// The response's length, learnt once: its head is fixed but for the
	// request ID and the date, which have fixed lengths.
	if _, err := c.Write(req); err != nil {
		t.Fatal(err)
	}
	var buf []byte
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			t.Fatal(err)
		}
		buf = append(buf, line...)
		if len(line) == 2 {
			break
		}
	}
	buf = append(buf, make([]byte, res.ContentLength)...)
	if _, err := io.ReadFull(br, buf[len(buf)-int(res.ContentLength):]); err != nil {
		t.Fatal(err)
	}
	exchange := func() {
		if _, err := c.Write(req); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(br, buf); err != nil {
			t.Fatal(err)
		}
	}
	exchange()
	if !bytes.HasPrefix(buf, []byte("HTTP/1.1 200 OK\r\n")) || !bytes.HasSuffix(buf, []byte("\r\n\r\nok\n")) {
		t.Fatalf("response %q", buf)
	}
	if n := testing.AllocsPerRun(1000, exchange); n != 0 {
		t.Errorf("%v allocations per keep-alive request, want 0", n)
	}
}
