package h1

import "testing"

// TestHTTP10TransferEncodingClosesConnection: RFC 9112 §6.1: a client that
// receives an HTTP/1.0 message with Transfer-Encoding MUST treat its
// framing as faulty and close the connection after it. frame ignores the
// field in a 1.0 response (response.go:447) and keeps the connection for
// the next request on "Connection: keep-alive" (response.go:442).
// TestHTTP10TransferEncodingClosesConnection: an HTTP/1.0 response with
// Transfer-Encoding has faulty framing (RFC 9112 §6.1); its connection is
// not kept for another request.
func TestHTTP10TransferEncodingClosesConnection(t *testing.T) {
	res, _, err := readResponseHead(t, "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n3\r\nabc\r\n0\r\n\r\n", "GET")
	if err != nil {
		return // refusing it is fine too
	}
	if !res.Close {
		t.Fatalf("HTTP/1.0 response with Transfer-Encoding: framed by Content-Length %d, connection kept for reuse", res.Length)
	}
}
