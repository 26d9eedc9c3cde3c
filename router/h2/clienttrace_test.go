package h2

import (
	"context"
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
