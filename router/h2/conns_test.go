package h2

import (
	"io"
	"net/http"
	"testing"
	"time"

	"ramjet.dev/ramjet/router/h1"
)

func waitCounts(t *testing.T, s *h1.ConnStats, want h1.ConnCounts) {
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

// As nginx's stub_status: an HTTP/2 connection waits without streams,
// and each stream is a request being served.
func TestConnStatsStreams(t *testing.T) {
	stats := new(h1.ConnStats)
	release := make(chan struct{})
	addr, stop := serveTLS(t, &Server{Conns: stats, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			<-release
		}
		io.WriteString(w, "ok")
	})})
	defer stop()
	client := testClient()
	get := func(path string) {
		res, err := client.Get("https://" + addr + path)
		if err != nil {
			t.Error(err)
			return
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
	}
	get("/")
	waitCounts(t, stats, h1.ConnCounts{Active: 1, Waiting: 1, Requests: 1})
	done := make(chan struct{})
	for range 2 {
		go func() { get("/slow"); done <- struct{}{} }()
	}
	waitCounts(t, stats, h1.ConnCounts{Active: 1, Writing: 2, Requests: 3})
	close(release)
	<-done
	<-done
	waitCounts(t, stats, h1.ConnCounts{Active: 1, Waiting: 1, Requests: 3})
	client.CloseIdleConnections()
	waitCounts(t, stats, h1.ConnCounts{Requests: 3})
}
