package h1

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestEdgeSenderRefusesBodyOfOtherLength: a request body whose reader ends
// before the Content-Length the head declared, or goes on past it, is
// not sent as if it were whole: the sender fails and closes the
// connection, so the backend sees a body broken off (never a complete
// one, nor the surplus as the start of another request), and the
// exchange fails rather than waiting for an answer.
func TestEdgeSenderRefusesBodyOfOtherLength(t *testing.T) {
	for _, tc := range []struct {
		name, body string
	}{
		{"short", "ab"},
		{"long", "abcdef"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			got := make(chan string, 1)
			go func() {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				defer c.Close()
				_ = c.SetDeadline(time.Now().Add(5 * time.Second))
				br := bufio.NewReader(c)
				req, err := http.ReadRequest(br)
				if err != nil {
					got <- "head: " + err.Error()
					return
				}
				b, err := io.ReadAll(req.Body)
				if err != nil {
					got <- "broken off after " + string(b)
					return
				}
				// A whole body: anything after it is another request.
				rest, _ := io.ReadAll(br)
				got <- "whole body " + string(b) + ", then " + string(rest)
			}()
			p := NewPool(time.Second)
			defer p.CloseIdle()
			pc, err := p.Get(context.Background(), ln.Addr().String(), false, time.Second)
			if err != nil {
				t.Fatal(err)
			}
			// The body's reader is a pipe, so that the sender runs apart
			// from the exchange and its end is the sender's to notice.
			pr, pw := io.Pipe()
			go func() {
				io.WriteString(pw, tc.body)
				pw.Close()
			}()
			bw := pc.Begin(Request{Ctx: context.Background(), Method: "POST", Header: http.Header{}, Body: pr, Length: 4,
				Read: time.Minute, MaxHead: 1 << 16})
			bw.WriteString("POST / HTTP/1.1\r\nHost: backend\r\nContent-Length: 4\r\n\r\n")
			done := make(chan error, 1)
			go func() {
				_, err := pc.Next()
				done <- err
			}()
			select {
			case s := <-got:
				if !strings.HasPrefix(s, "broken off") {
					t.Errorf("the backend got %q; want the body broken off", s)
				}
			case <-time.After(3 * time.Second):
				t.Error("the backend still waits for the body's rest")
			}
			select {
			case err := <-done:
				if err == nil {
					t.Error("the exchange succeeded")
				}
			case <-time.After(3 * time.Second):
				t.Error("the exchange still waits for an answer")
			}
			pc.End(false)
		})
	}
}
