package router

import (
	"bytes"
	"errors"
	"io"
	"net"
	"runtime"
	"sync"
	"testing"
	"time"
)

// recordConn is the socket under a writeBehind: it keeps each Write, and
// blocks them while gate is held.
type recordConn struct {
	net.Conn
	gate   sync.Mutex
	mu     sync.Mutex
	writes []string
	fail   error
	closed bool
}

func (c *recordConn) Write(p []byte) (int, error) {
	c.gate.Lock()
	defer c.gate.Unlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fail != nil {
		return 0, c.fail
	}
	c.writes = append(c.writes, string(p))
	return len(p), nil
}

func (c *recordConn) Close() error {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	return nil
}

func (c *recordConn) SetWriteDeadline(time.Time) error { return nil }

func (c *recordConn) sent() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.writes...)
}

// waitIdle waits until w has nothing queued or on its way.
func waitIdle(t *testing.T, w *writeBehind) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; {
		w.mu.Lock()
		idle := !w.sending && len(w.buf) == 0
		w.mu.Unlock()
		if idle {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("writes still queued after 5 s")
		}
		time.Sleep(time.Millisecond)
	}
}

// TestWriteBehindOneWrite: a request's HEADERS and DATA, written one after
// the other as net/http's HTTP/2 client writes them, reach the socket in
// one write.
func TestWriteBehindOneWrite(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	rc := &recordConn{}
	w := newWriteBehind(rc)
	for _, p := range []string{"headers", "data"} {
		if n, err := w.Write([]byte(p)); n != len(p) || err != nil {
			t.Fatalf("Write %q: %d, %v", p, n, err)
		}
	}
	waitIdle(t, w)
	if got := rc.sent(); len(got) != 1 || got[0] != "headersdata" {
		t.Fatalf("writes %q, want one of \"headersdata\"", got)
	}
}

// TestWriteBehindOrderUnderLoad: whatever the scheduling, bytes reach
// the socket whole and in the order written, by several writers.
func TestWriteBehindOrderUnderLoad(t *testing.T) {
	rc := &recordConn{}
	w := newWriteBehind(rc)
	var want bytes.Buffer
	var mu sync.Mutex // the writers' turn, as the HTTP/2 client's wmu
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 500 {
				p := []byte{byte('a' + g), byte(i), byte(i >> 8)}
				mu.Lock()
				want.Write(p)
				if _, err := w.Write(p); err != nil {
					t.Error(err)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	waitIdle(t, w)
	if got := bytes.Join(bytesOf(rc.sent()), nil); !bytes.Equal(got, want.Bytes()) {
		t.Fatalf("%d bytes sent, %d written, or out of order", len(got), want.Len())
	}
}

func bytesOf(ss []string) [][]byte {
	var out [][]byte
	for _, s := range ss {
		out = append(out, []byte(s))
	}
	return out
}

// TestWriteBehindFailure: a send that fails closes the socket, so that the
// reader's calls fail too, and is every later Write's error.
func TestWriteBehindFailure(t *testing.T) {
	boom := errors.New("connection reset")
	rc := &recordConn{fail: boom}
	w := newWriteBehind(rc)
	if _, err := w.Write([]byte("x")); err != nil {
		t.Fatalf("first Write: %v (only queued)", err)
	}
	waitIdle(t, w)
	if _, err := w.Write([]byte("y")); !errors.Is(err, boom) {
		t.Fatalf("Write after a failed send: %v, want %v", err, boom)
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if !rc.closed {
		t.Fatal("the socket is still open after a failed send")
	}
}

// TestWriteBehindBounded: while a send is stuck, Write queues up to the
// bound (past what the stuck send took) and then waits, rather than
// holding a slow backend's backlog.
func TestWriteBehindBounded(t *testing.T) {
	rc := &recordConn{}
	rc.gate.Lock()
	w := newWriteBehind(rc)
	chunk := make([]byte, 64<<10)
	done := make(chan int)
	go func() {
		n := 0
		for range 4 * writeBehindLimit / len(chunk) {
			if _, err := w.Write(chunk); err != nil {
				break
			}
			n++
		}
		done <- n
	}()
	select {
	case n := <-done:
		t.Fatalf("%d writes of 64 KiB queued while the socket took nothing", n)
	case <-time.After(100 * time.Millisecond):
	}
	w.mu.Lock()
	queued := len(w.buf)
	w.mu.Unlock()
	if queued > writeBehindLimit+len(chunk) {
		t.Fatalf("%d bytes queued, bound %d", queued, writeBehindLimit)
	}
	rc.gate.Unlock()
	<-done
	waitIdle(t, w)
}

// TestWriteBehindCloseSends: what is queued when Close comes (a GOAWAY, a
// TLS close_notify) is sent before the socket closes.
func TestWriteBehindCloseSends(t *testing.T) {
	a, b := net.Pipe()
	w := newWriteBehind(a)
	got := make(chan []byte)
	go func() { p, _ := io.ReadAll(b); got <- p }()
	if _, err := w.Write([]byte("goaway")); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if p := <-got; string(p) != "goaway" {
		t.Fatalf("peer read %q before the close", p)
	}
	if _, err := w.Write([]byte("more")); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("Write after Close: %v", err)
	}
}
