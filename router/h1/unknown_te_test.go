package h1

import (
	"bytes"
	"testing"
)

// TestUnknownTransferEncoding: nginx answers a transfer coding other than
// chunked 501 ("client sent unknown Transfer-Encoding"), with or without
// Content-Length beside it: only chunked with Content-Length, and any
// Transfer-Encoding on HTTP/1.0, are 400 (ngx_http_process_request_header
// checks HTTP/1.0 first, then Content-Length within the chunked case).
// The loop and net/http behind GuardFraming answer alike.
func TestUnknownTransferEncoding(t *testing.T) {
	p := newPair(t)
	for _, c := range []struct{ req, status string }{
		{"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\n\r\n", "501"},
		{"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\nContent-Length: 3\r\n\r\nabc", "501"},
		{"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nTransfer-Encoding: identity\r\n\r\nabc", "501"},
		{"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\nContent-Length: 3\r\n\r\nabc", "501"},
		{"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunkedx\r\nContent-Length: 3\r\n\r\nabc", "501"},
		{"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nTransfer-Encoding:\r\n\r\nabc", "501"},
		{"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding:   ChunKed  \r\nContent-Length: 3\r\n\r\n0\r\n\r\n", "400"},
		{"POST / HTTP/1.1\nHost: a\nTransfer-Encoding: chunked\nContent-Length: 3\n\n0\r\n\r\n", "400"},
		{"POST / HTTP/1.0\r\nHost: a\r\nTransfer-Encoding: gzip\r\nContent-Length: 3\r\n\r\nabc", "400"},
		{"POST / HTTP/1.0\r\nHost: a\r\nTransfer-Encoding: gzip\r\n\r\n", "400"},
	} {
		for _, addr := range []string{p.std, p.loop} {
			out := exchange(t, addr, []byte(c.req))
			if !bytes.HasPrefix(out, []byte("HTTP/1.1 "+c.status+" ")) {
				server := "net/http behind GuardFraming"
				if addr == p.loop {
					server = "the loop"
				}
				t.Errorf("%s answered %q with %q, want %s", server, c.req, out, c.status)
			}
		}
	}
}
