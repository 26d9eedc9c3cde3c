package h2

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestClientTraceWrote: the client reports a call's request written as
// net/http's transports do, through httptrace: WroteHeaders once its
// HEADERS went out, WroteRequest once its END_STREAM did (with the
// HEADERS of a call without a body, after the last DATA of one with a
// body), each once. A router starts proxy-read-timeout from WroteRequest.
func TestClientTraceWrote(t *testing.T) {
	addr, _, _ := h2cBackend(t, echoUnary, nil)
	c := newTestClient(t)
	for _, tt := range []struct {
		name string
		body io.Reader
	}{
		{"no body", nil},
		{"a body", strings.NewReader("\x00\x00\x00\x00\x03abc")},
		{"a body that comes late", &slowBody{parts: []string{"\x00\x00\x00", "\x00\x03abc"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var (
				mu     sync.Mutex
				events []string
			)
			note := func(e string) {
				mu.Lock()
				defer mu.Unlock()
				events = append(events, e)
			}
			trace := &httptrace.ClientTrace{
				WroteHeaders: func() { note("headers") },
				WroteRequest: func(i httptrace.WroteRequestInfo) {
					if i.Err != nil {
						note("request " + i.Err.Error())
						return
					}
					note("request")
				},
			}
			ctx := httptrace.WithClientTrace(context.Background(), trace)
			req := grpcRequest(t, ctx, addr, "/pkg.Svc/Echo", tt.body)
			if tt.body == nil {
				req.Body = http.NoBody
			}
			res, err := c.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, res.Body)
			res.Body.Close()
			// The hooks run on the goroutine that wrote, which may still
			// be on its way back from the write.
			for start := time.Now(); time.Since(start) < 5*time.Second; time.Sleep(time.Millisecond) {
				mu.Lock()
				n := len(events)
				mu.Unlock()
				if n >= 2 {
					break
				}
			}
			time.Sleep(10 * time.Millisecond)
			mu.Lock()
			defer mu.Unlock()
			if got := strings.Join(events, ", "); got != "headers, request" {
				t.Errorf("events: %s", got)
			}
		})
	}
}

// slowBody is a body whose parts come one read at a time.
type slowBody struct{ parts []string }

func (b *slowBody) Read(p []byte) (int, error) {
	if len(b.parts) == 0 {
		return 0, io.EOF
	}
	n := copy(p, b.parts[0])
	b.parts = b.parts[1:]
	return n, nil
}

// pacedBody sends its parts every gap.
type pacedBody struct {
	parts []string
	gap   time.Duration
	sent  int
}

func (b *pacedBody) Read(p []byte) (int, error) {
	if b.sent == len(b.parts) {
		return 0, io.EOF
	}
	if b.sent > 0 {
		time.Sleep(b.gap)
	}
	n := copy(p, b.parts[b.sent])
	b.sent++
	return n, nil
}

// TestClientHeaderTimeoutFromRequestEnd: ResponseHeaderTimeout counts
// from when the whole request was sent, as nginx's grpc_read_timeout (and
// proxy_read_timeout) starts once the request body was: a client-streaming
// call whose backend answers after the last message gets its answer
// however long the stream took; one whose backend does not answer in time
// after it fails with a timeout.
func TestClientHeaderTimeoutFromRequestEnd(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	addr, _, _ := h2cBackend(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/silent" {
			_, _ = io.ReadAll(r.Body)
			select {
			case <-release:
			case <-r.Context().Done():
			}
			return
		}
		echoUnary(w, r)
	}, nil)
	c := newTestClient(t)
	c.ResponseHeaderTimeout = 200 * time.Millisecond
	parts := []string{"\x00\x00\x00\x00\x01a", "\x00\x00\x00\x00\x01b", "\x00\x00\x00\x00\x01c", "\x00\x00\x00\x00\x01d"}
	res, err := c.RoundTrip(grpcRequest(t, context.Background(), addr, "/stream", &pacedBody{parts: parts, gap: 150 * time.Millisecond}))
	if err != nil {
		t.Fatalf("a stream of 450 ms under a 200 ms ResponseHeaderTimeout: %v", err)
	}
	b, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil || string(b) != strings.Join(parts, "") {
		t.Fatalf("body %q, %v", b, err)
	}
	start := time.Now()
	_, err = c.RoundTrip(grpcRequest(t, context.Background(), addr, "/silent", &pacedBody{parts: parts, gap: 100 * time.Millisecond}))
	var te interface{ Timeout() bool }
	if !errors.As(err, &te) || !te.Timeout() {
		t.Fatalf("no answer after the request: %v", err)
	}
	if d := time.Since(start); d < 450*time.Millisecond || d > 5*time.Second {
		t.Errorf("timed out after %v, want the body's 300 ms and then 200 ms", d)
	}
}
