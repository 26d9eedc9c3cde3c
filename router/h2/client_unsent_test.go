package h2

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// readBody is a request body that notes whether it was read.
type readBody struct {
	r    io.Reader
	read atomic.Bool
}

func (b *readBody) Read(p []byte) (int, error) {
	b.read.Store(true)
	return b.r.Read(p)
}

func (b *readBody) Close() error { return nil }

// readFrames reads the client's preface, then frames until stop says so
// or the connection ends.
func readFrames(nc net.Conn, stop func(frameHeader) bool) {
	pre := make([]byte, len(clientPreface))
	if _, err := io.ReadFull(nc, pre); err != nil {
		return
	}
	var hdr [frameHeaderLen]byte
	for {
		if _, err := io.ReadFull(nc, hdr[:]); err != nil {
			return
		}
		fh := parseFrameHeader(hdr[:])
		if _, err := io.CopyN(io.Discard, nc, int64(fh.length)); err != nil || stop(fh) {
			return
		}
	}
}

// TestClientUnsentCall: a call whose connection ends after it was opened
// but before the call's HEADERS were written fails with a NotSentError,
// its body unread, so that a proxy may send it elsewhere; one whose
// HEADERS were written does not.
func TestClientUnsentCall(t *testing.T) {
	for _, tc := range []struct {
		name string
		// serve is the server's end of the connection.
		serve   func(nc net.Conn)
		notSent bool
	}{
		{"lost before the server's SETTINGS", func(nc net.Conn) {
			// The client's preface, SETTINGS and WINDOW_UPDATE, then
			// the end, before the server said anything.
			readFrames(nc, func(fh frameHeader) bool { return fh.typ == frameWindowUpdate })
			nc.Close()
		}, true},
		{"lost after the HEADERS", func(nc net.Conn) {
			done := make(chan struct{})
			go func() {
				defer close(done)
				readFrames(nc, func(fh frameHeader) bool { return fh.typ == frameHeaders })
			}()
			_, _ = nc.Write(frame(frameSettings, 0, 0, nil))
			<-done
			nc.Close()
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &Client{ResponseHeaderTimeout: 5 * time.Second, DialContext: func(context.Context, string, string) (net.Conn, error) {
				cl, sv := net.Pipe()
				go tc.serve(sv)
				return cl, nil
			}}
			t.Cleanup(c.CloseIdleConnections)
			body := &readBody{r: strings.NewReader("\x00\x00\x00\x00\x00")}
			req, _ := http.NewRequest(http.MethodPost, "http://backend.test:50051/pkg.Svc/Get", body)
			req.Header.Set("Content-Type", "application/grpc")
			req.ContentLength = 5
			res, err := c.RoundTrip(req)
			if err == nil {
				res.Body.Close()
				t.Fatal("the call did not fail")
			}
			var ns *NotSentError
			if got := errors.As(err, &ns); got != tc.notSent {
				t.Fatalf("not sent: %v, want %v (%v)", got, tc.notSent, err)
			}
			if tc.notSent && body.read.Load() {
				t.Error("the body of a call not sent was read")
			}
		})
	}
}
