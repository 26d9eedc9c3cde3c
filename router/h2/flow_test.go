package h2

import (
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// zeros is an endless request body.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// TestUnreadBodyStallsNoOtherStream: a handler that stops reading its
// request body holds back its own stream only. Its body is bounded by the
// stream's window; the connection's window comes back as the data is
// queued, so another request on the same connection, body and all, is
// served. nginx keeps other streams going the same way (per-stream
// windows; the connection's given back as DATA arrives).
func TestUnreadBodyStallsNoOtherStream(t *testing.T) {
	hold := make(chan struct{})
	s := &Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hold" {
			<-hold // reads nothing
			return
		}
		b, _ := io.ReadAll(r.Body)
		_, _ = w.Write(b)
	})}
	addr, stop := serveTLS(t, s)
	defer stop()
	defer close(hold)
	client := testClient()
	defer client.CloseIdleConnections()
	go func() {
		req, _ := http.NewRequest(http.MethodPost, "https://"+addr+"/hold", io.LimitReader(zeros{}, 8<<20))
		if res, err := client.Do(req); err == nil {
			res.Body.Close()
		}
	}()
	// The held stream took its whole window: the connection's, as large,
	// would be used up by it.
	c := onlyConn(t, s)
	waitFor(t, c, "the held body to fill its stream window", func() bool {
		for _, st := range c.streams {
			if len(st.body)-st.bodyR >= streamWindow {
				return true
			}
		}
		return false
	})
	done := make(chan error, 1)
	go func() {
		res, err := client.Post("https://"+addr+"/small", "text/plain", strings.NewReader("small body"))
		if err == nil {
			var b []byte
			b, err = io.ReadAll(res.Body)
			res.Body.Close()
			if err == nil && string(b) != "small body" {
				err = io.ErrUnexpectedEOF
			}
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a small request stalled behind a stream whose body is not read")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.streams) != 1 {
		t.Fatalf("%d streams open", len(c.streams))
	}
	for _, st := range c.streams {
		if n := len(st.body) - st.bodyR; n > streamWindow {
			t.Fatalf("the held stream buffers %d bytes, over its window %d", n, streamWindow)
		}
	}
}

// TestUnreadBodiesBoundedPerConnection: many streams whose bodies are not
// read hold at most bufferedBound plus one connection window between them;
// past the bound the connection's window comes back only as bodies are
// read, so a client cannot make one connection hold a stream window per
// stream.
func TestUnreadBodiesBoundedPerConnection(t *testing.T) {
	const held = 8 // × streamWindow, past bufferedBound+connWindow
	hold := make(chan struct{})
	s := &Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hold" {
			<-hold
		}
	})}
	addr, stop := serveTLS(t, s)
	defer stop()
	client := testClient()
	defer client.CloseIdleConnections()
	// One connection first, which the held requests then share.
	res, err := client.Get("https://" + addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	var wg sync.WaitGroup
	defer wg.Wait()
	defer close(hold)
	for range held {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest(http.MethodPost, "https://"+addr+"/hold", io.LimitReader(zeros{}, 2*streamWindow))
			if res, err := client.Do(req); err == nil {
				res.Body.Close()
			}
		}()
	}
	c := onlyConn(t, s)
	waitFor(t, c, "the held bodies to use up what the connection may hold", func() bool {
		return len(c.streams) == held && c.buffered >= bufferedBound+connWindow/2
	})
	// Time for any window given back too early to be used.
	time.Sleep(200 * time.Millisecond)
	c.mu.Lock()
	buffered := c.buffered
	var sum int64
	for _, st := range c.streams {
		sum += int64(len(st.body) - st.bodyR)
	}
	c.mu.Unlock()
	if buffered != sum {
		t.Fatalf("counted %d bytes buffered, the streams hold %d", buffered, sum)
	}
	if buffered > bufferedBound+connWindow {
		t.Fatalf("%d streams hold %d bytes unread, over %d", held, buffered, bufferedBound+connWindow)
	}
}
