package h1

import "testing"

// TestHTTP10TransferEncodingClosesConnection: an HTTP/1.0 response with
// Transfer-Encoding has faulty framing (RFC 9112 §6.1); it is read
// chunked, as nginx reads it, and its connection is not kept for another
// request, "Connection: keep-alive" or not.
func TestHTTP10TransferEncodingClosesConnection(t *testing.T) {
	res, _, err := readResponseHead(t, "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n", "GET")
	if err != nil {
		t.Fatal(err)
	}
	if !res.Chunked || !res.Close {
		t.Fatalf("HTTP/1.0 response with Transfer-Encoding: chunked %v, close %v; want both", res.Chunked, res.Close)
	}
}
