package h1

import (
	"io"
	"net/http"
	"testing"
	"time"
)

// waitCounts polls s until it counts want, as the servers' goroutines
// move their connections' states on their own time.
func waitCounts(t *testing.T, s *ConnStats, want ConnCounts) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		got := s.Counts()
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("counts %+v, want %+v", got, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestConnStatsStates(t *testing.T) {
	stats := new(ConnStats)
	release := make(chan struct{})
	addr := serve(t, &Server{Conns: stats, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 10 * time.Second,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/slow" {
				<-release
			}
			io.WriteString(w, "ok")
		})})

	idle, idleBR := dial(t, addr)
	io.WriteString(idle, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	readResponse(t, idleBR, "GET")
	slow, _ := dial(t, addr)
	io.WriteString(slow, "GET /slow HTTP/1.1\r\nHost: x\r\n\r\n")
	half, _ := dial(t, addr)
	io.WriteString(half, "GET / HTTP/1.1\r\nHost: x\r\n")
	fresh, _ := dial(t, addr)
	// The idle one and the fresh one wait, as nginx counts a connection
	// before its first byte; each request counts from its first byte.
	waitCounts(t, stats, ConnCounts{Active: 4, Reading: 1, Writing: 1, Waiting: 2, Accepted: 4, Requests: 3})

	io.WriteString(idle, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	readResponse(t, idleBR, "GET")
	close(release)
	for _, c := range []io.Closer{idle, slow, half, fresh} {
		c.Close()
	}
	waitCounts(t, stats, ConnCounts{Accepted: 4, Requests: 4})
}
