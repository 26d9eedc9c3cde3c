package h1

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// nginx's answers to heads that outgrow large_client_header_buffers, over
// loopback connections. nginx docs (ngx_http_core_module,
// large_client_header_buffers): "A request line cannot exceed the size of
// one buffer, or the 414 (Request-URI Too Large) error is returned to the
// client. A request header field cannot exceed the size of one buffer as
// well, or the 400 (Bad Request) error is returned"; ingress-nginx's
// default is "4 8k" (config.go NewDefault, nginx.tmpl's
// large_client_header_buffers), after client_header_buffer_size "1k".
// ngx_http_request.c answers a head that needs more buffers than there
// are 494, which ngx_http_special_response.c sends as 400 with "Request
// Header Or Cookie Too Large".
func TestHeaderBuffers(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "served") })
	ingress := HeaderBuffers{Number: 4, Size: 8 << 10}
	small := HeaderBuffers{First: 1 << 10, Number: 2, Size: 1 << 10}
	// line is a request line of n bytes with CRLF (LF with bare).
	line := func(n int, bare bool) string {
		end := " HTTP/1.1\r\n"
		if bare {
			end = " HTTP/1.1\n"
		}
		return "GET /" + strings.Repeat("a", n-len("GET /")-len(end)) + end
	}
	// field is a header line of n bytes with CRLF.
	field := func(name string, n int) string {
		return name + ": " + strings.Repeat("v", n-len(name)-4) + "\r\n"
	}
	host := "Host: a\r\n"
	fields := func(n, size int) string { return strings.Repeat(field("X-A", size), n) }
	const lineTooLarge, headTooLarge = "414 Request-URI Too Large\n", "400 Request Header Or Cookie Too Large\n"
	for _, tc := range []struct {
		name   string
		bufs   HeaderBuffers
		head   string
		second bool // a request served before it on the connection
		code   int
		body   string
	}{
		{"request line of one buffer", ingress, line(8192, false) + host + "\r\n", false, 200, "served"},
		{"request line over one buffer", ingress, line(8193, false) + host + "\r\n", false, 414, lineTooLarge},
		{"request line of one buffer, LF", ingress, line(8192, true) + "Host: a\n\n", false, 200, "served"},
		{"request line over one buffer, LF", ingress, line(8193, true) + "Host: a\n\n", false, 414, lineTooLarge},
		{"request line over every buffer", ingress, line(50000, false) + host + "\r\n", false, 414, lineTooLarge},
		{"request line over one buffer, second request", ingress, line(8193, false) + host + "\r\n", true, 414, lineTooLarge},
		{"field of one buffer", ingress, "GET / HTTP/1.1\r\n" + host + field("Cookie", 8192) + "\r\n", false, 200, "served"},
		{"field over one buffer", ingress, "GET / HTTP/1.1\r\n" + host + field("Cookie", 8193) + "\r\n", false, 400, headTooLarge},
		{"field over every buffer", ingress, "GET / HTTP/1.1\r\n" + host + field("Cookie", 50000) + "\r\n", false, 400, headTooLarge},
		{"field over one buffer, second request", ingress, "GET / HTTP/1.1\r\n" + host + field("Cookie", 8193) + "\r\n", true, 400, headTooLarge},
		// 4,100-byte lines take a buffer each: the fifth finds none,
		// though 5 × 4,100 is far below 4 × 8k.
		{"four lines of half a buffer", ingress, "GET / HTTP/1.1\r\n" + host + fields(4, 4100) + "\r\n", false, 200, "served"},
		{"five lines of half a buffer", ingress, "GET / HTTP/1.1\r\n" + host + fields(5, 4100) + "\r\n", false, 400, headTooLarge},
		// 2,000-byte lines, four to a buffer: sixteen fit.
		{"sixteen lines of a quarter buffer", ingress, "GET / HTTP/1.1\r\n" + host + fields(16, 2000) + "\r\n", false, 200, "served"},
		{"seventeen lines of a quarter buffer", ingress, "GET / HTTP/1.1\r\n" + host + fields(17, 2000) + "\r\n", false, 400, headTooLarge},
		// Heads that come whole in one read (the loop's plain parse).
		{"small buffers, three lines", small, "GET / HTTP/1.1\r\n" + host + fields(3, 900) + "\r\n", false, 200, "served"},
		{"small buffers, four lines", small, "GET / HTTP/1.1\r\n" + host + fields(4, 900) + "\r\n", false, 400, headTooLarge},
		{"small buffers, request line", small, line(1025, false) + host + "\r\n", false, 414, lineTooLarge},
		{"small buffers, head within the first", small, line(1000, false) + "Host: a\r\n\r\n", false, 200, "served"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr := serve(t, &Server{Handler: ok, HeaderBuffers: tc.bufs})
			c, br := dial(t, addr)
			if tc.second {
				io.WriteString(c, "GET / HTTP/1.1\r\nHost: a\r\n\r\n")
				if res, body := readResponse(t, br, "GET"); res.StatusCode != 200 || body != "served" {
					t.Fatalf("first request: %d %q", res.StatusCode, body)
				}
			}
			go io.WriteString(c, tc.head)
			res, body := readResponse(t, br, "GET")
			if res.StatusCode != tc.code || body != tc.body {
				t.Fatalf("head of %d bytes: got %d %q, want %d %q", len(tc.head), res.StatusCode, body, tc.code, tc.body)
			}
			if tc.code != 200 && !res.Close {
				t.Fatal("the connection stays open")
			}
		})
	}
}

// nginxHead follows ngx_http_request.c byte by byte: a head read into
// its first buffer, and each time a buffer is full,
// ngx_http_alloc_large_header_buffer (decline a line whose part read is a
// buffer long, or when Number buffers are taken; else copy that part to a
// new buffer). It answers 0, 414 or 400.
func nginxHead(b HeaderBuffers, lines []int) int {
	size, pos := b.first(), 0 // of the buffer being filled
	busy := 0
	for i, n := range lines {
		start := pos // the line's start, nginx's request_start or header_name_start
		for read := 0; read < n; read++ {
			if pos == size {
				partial := pos - start // mid-line: nginx's state != 0
				if partial > 0 && partial >= b.Size || busy == b.Number {
					if i == 0 {
						return 414
					}
					return 400
				}
				busy++
				size, pos, start = b.Size, partial, 0
			}
			pos++
		}
	}
	return 0
}

// The packer that judges a head line by line agrees with nginx's
// byte-by-byte reading.
func FuzzHeaderBuffers(f *testing.F) {
	f.Add(uint16(1024), uint8(4), uint16(8192), []byte{16, 9, 2})
	f.Add(uint16(1024), uint8(2), uint16(1024), []byte{200, 255, 255, 255, 2})
	f.Add(uint16(4096), uint8(1), uint16(1024), []byte{255, 255, 100, 255, 2})
	f.Fuzz(func(t *testing.T, first uint16, number uint8, size uint16, raw []byte) {
		b := HeaderBuffers{First: int(first%4096) + 1, Number: int(number%8) + 1, Size: int(size%2048) + 1}
		var lines []int
		var lens []int32
		var fieldBytes []byte
		for i, x := range raw {
			n := int(x)*8 + 1
			lines = append(lines, n)
			if i > 0 {
				lens = append(lens, int32(n))
				fieldBytes = append(fieldBytes, strings.Repeat("a", n-1)+"\n"...)
			}
		}
		if len(lines) == 0 {
			return
		}
		want := nginxHead(b, lines)
		code := func(err error) int {
			if err == nil {
				return 0
			}
			return err.(*badRequest).code
		}
		if got := code(b.judgeLines(lines[0], lens)); got != want {
			t.Fatalf("%+v %v: judgeLines %d, nginx %d", b, lines, got, want)
		}
		if got := code(b.judge(lines[0], fieldBytes)); got != want {
			t.Fatalf("%+v %v: judge %d, nginx %d", b, lines, got, want)
		}
		total := 0
		for _, n := range lines {
			total += n
		}
		if b.fits(total) && want != 0 || int64(total) > b.limit() && want == 0 {
			t.Fatalf("%+v %v (%d bytes): nginx %d, fits %v, limit %d", b, lines, total, want, b.fits(total), b.limit())
		}
	})
}
