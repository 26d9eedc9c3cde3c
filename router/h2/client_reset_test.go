package h2

import (
	"context"
	"io"
	"net"
	"net/http"
	"testing"
	"time"
)

// TestClientResetAfterWholeAnswer: a RST_STREAM that comes after the
// server's END_STREAM, whatever its code (STREAM_CLOSED answers DATA the
// client sent after the server was done), ends only the request's half:
// the answer came whole and is read whole, trailers included, as
// net/http's client reads it.
func TestClientResetAfterWholeAnswer(t *testing.T) {
	for _, code := range []byte{0, 5, 8} { // NO_ERROR, STREAM_CLOSED, CANCEL
		c := &Client{ResponseHeaderTimeout: 5 * time.Second, DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			cl, sv := net.Pipe()
			go func() {
				go func() { _, _ = io.Copy(io.Discard, sv) }()
				_, _ = sv.Write(frame(frameSettings, 0, 0, nil))
				time.Sleep(100 * time.Millisecond) // the call opens its stream
				head := appendField([]byte{0x88}, "content-type", "application/grpc")
				out := frame(frameHeaders, flagEndHeaders, 1, head)
				out = append(out, frame(frameData, 0, 1, []byte("abc"))...)
				out = append(out, frame(frameHeaders, flagEndHeaders|flagEndStream, 1, appendField(nil, "grpc-status", "0"))...)
				out = append(out, frame(frameRSTStream, 0, 1, []byte{0, 0, 0, code})...)
				_, _ = sv.Write(out)
			}()
			return cl, nil
		}}
		pr, pw := io.Pipe() // a request body that has not ended
		req, _ := http.NewRequest(http.MethodPost, "http://backend.test:50051/pkg.Svc/Get", pr)
		res, err := c.RoundTrip(req)
		if err != nil {
			t.Fatalf("code %d: %v", code, err)
		}
		time.Sleep(50 * time.Millisecond) // the reset is read before the body
		b, err := io.ReadAll(res.Body)
		if err != nil || string(b) != "abc" || res.Trailer.Get("Grpc-Status") != "0" {
			t.Errorf("code %d: body %q, %v, trailer %v", code, b, err, res.Trailer)
		}
		res.Body.Close()
		pw.Close()
		c.CloseIdleConnections()
	}
}
