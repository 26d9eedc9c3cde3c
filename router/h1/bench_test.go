package h1

import (
	"bufio"
	"bytes"
	"io"
	"log"
	"net"
	"net/http"
	"strconv"
	"testing"
	"time"
)

// BenchmarkServer compares the loop with net/http's server on loopback:
// one keep-alive connection, a GET with the headers wrk sends plus a few,
// and a handler that answers 100 bytes with a Content-Length, as the
// router answers for a backend. The client is a raw connection reading a
// response of known length, so allocations are the server's.
func BenchmarkServer(b *testing.B) {
	h, body, req := benchExchange()
	for _, server := range []string{"net/http", "h1"} {
		b.Run("server="+server, func(b *testing.B) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				b.Fatal(err)
			}
			quiet := log.New(io.Discard, "", 0)
			if server == "net/http" {
				s := &http.Server{Handler: h, ReadHeaderTimeout: time.Minute, IdleTimeout: time.Minute, ErrorLog: quiet}
				go s.Serve(ln)
				defer s.Close()
			} else {
				s := &Server{Handler: h, ReadHeaderTimeout: time.Minute, IdleTimeout: time.Minute, ErrorLog: quiet}
				go s.Serve(ln)
				defer s.Close()
			}
			c, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			br := bufio.NewReaderSize(c, 4096)
			benchRoundTrips(b, c, br, req, len(body))
		})
	}
}

// benchRoundTrips times b.N requests req on c, each read back whole as a
// response of the length the first one had (its head is fixed but for the
// date, which has a fixed length), and reports the whole process's CPU
// time per request (client included), which a loaded machine inflates less
// than the wall time.
func benchRoundTrips(b *testing.B, c net.Conn, br *bufio.Reader, req []byte, bodyLen int) {
	b.Helper()
	c.Write(req)
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		b.Fatal(err)
	}
	io.Copy(io.Discard, res.Body)
	c.Write(req)
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
	n += bodyLen
	br.Discard(bodyLen)
	buf := make([]byte, n)
	b.ReportAllocs()
	b.ResetTimer()
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
	if cpu := cpuTime(); cpu > 0 {
		b.ReportMetric(float64(cpu-start)/float64(b.N), "cpu-ns/op")
	}
	if !bytes.HasPrefix(buf, []byte("HTTP/1.1 200 OK\r\n")) || !bytes.Contains(buf, []byte("Content-Length: "+strconv.Itoa(bodyLen))) {
		b.Fatalf("response %q", buf)
	}
}

// benchExchange is the server benchmarks' exchange: a handler answering
// 100 bytes with a Content-Length, as the router answers for a backend,
// and a GET with the headers wrk sends plus a few.
func benchExchange() (h http.Handler, body, req []byte) {
	body = bytes.Repeat([]byte("a"), 100)
	h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Header().Set("Content-Length", "100")
		w.Write(body)
	})
	return h, body, []byte("GET /bench?x=1 HTTP/1.1\r\nHost: bench.test\r\nUser-Agent: wrk\r\nAccept: */*\r\nX-Request-Id: 123\r\n\r\n")
}
