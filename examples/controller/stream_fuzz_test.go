package main

import (
	"bytes"
	"net"
	"testing"
	"time"
)

// bytesConn is a connection that reads a fixed input.
type bytesConn struct {
	net.Conn
	r *bytes.Reader
}

func (c *bytesConn) Read(p []byte) (int, error)         { return c.r.Read(p) }
func (c *bytesConn) SetReadDeadline(time.Time) error    { return nil }
func (c *bytesConn) RemoteAddr() net.Addr               { return &net.TCPAddr{IP: net.IPv4(192, 0, 2, 1), Port: 1} }
func (c *bytesConn) LocalAddr() net.Addr                { return &net.TCPAddr{IP: net.IPv4(192, 0, 2, 2), Port: 2} }
func (c *bytesConn) SetDeadline(t time.Time) error      { return nil }
func (c *bytesConn) SetWriteDeadline(t time.Time) error { return nil }

// A client's PROXY header is untrusted input: whatever it holds, reading
// it never panics, and the bytes after a header it accepts reach the
// backend unchanged.
func FuzzReadProxyHeader(f *testing.F) {
	for _, s := range []string{
		"PROXY TCP4 203.0.113.7 192.0.2.1 4444 80\r\nhello",
		"PROXY TCP6 2001:db8::1 2001:db8::2 4444 80\r\n",
		"PROXY UNKNOWN\r\nrest",
		"\r\n\r\n\x00\r\nQUIT\n\x21\x11\x00\x0c\xcb\x00\x71\x07\xc0\x00\x02\x01\x11\x5c\x00\x50data",
		"\r\n\r\n\x00\r\nQUIT\n\x20\x00\x00\x00",
		"GET / HTTP/1.1\r\n\r\n",
		"PROXY TCP4 1.2.3.4",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		c := &bytesConn{r: bytes.NewReader(in)}
		src, rest, err := readProxyHeader(c, time.Second)
		if err != nil {
			return
		}
		unread := in[len(in)-c.r.Len():]
		if !bytes.HasSuffix(in, append(append([]byte(nil), rest...), unread...)) {
			t.Fatalf("rest %q is not what followed the header in %q", rest, in)
		}
		if src != nil && src.String() == "" {
			t.Fatalf("an empty source address from %q", in)
		}
	})
}
