package router

import (
	"net"
	"sync"
	"time"
)

// writeBehind is an HTTP/2 backend connection whose writes leave together.
// net/http's HTTP/2 client flushes a request's HEADERS before it writes
// the body, so a unary gRPC call costs two writes (two system calls) where
// one would do. A Write here only queues its bytes and, unless a send is
// already on its way, starts one on a goroutine of its own, which Go's
// scheduler runs next on the processor: once the writing goroutine waits
// (for the response, for the next piece of the body), everything queued
// by then, other calls' frames included, goes in one write.
//
// A failed send closes the connection, so that the client's reader fails
// its calls, and is every later Write's error. Queued bytes are bounded
// by writeBehindLimit while a send is under way; past it, Write waits.
type writeBehind struct {
	net.Conn
	mu      sync.Mutex
	cond    sync.Cond
	buf     []byte // queued, not yet sent
	spare   []byte
	sending bool // a send is scheduled or under way
	err     error
	closed  bool
}

const writeBehindLimit = 256 << 10

func newWriteBehind(c net.Conn) *writeBehind {
	w := &writeBehind{Conn: c}
	w.cond.L = &w.mu
	return w
}

func (w *writeBehind) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for w.err == nil && w.sending && len(w.buf) >= writeBehindLimit {
		w.cond.Wait()
	}
	if w.err != nil {
		return 0, w.err
	}
	if w.closed {
		return 0, net.ErrClosed
	}
	w.buf = append(w.buf, p...)
	if !w.sending {
		w.sending = true
		go w.send()
	}
	return len(p), nil
}

// send writes what is queued, and what is queued meanwhile, until nothing
// is left.
func (w *writeBehind) send() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for len(w.buf) > 0 && w.err == nil {
		b := w.buf
		w.buf, w.spare = w.spare[:0], nil
		w.mu.Unlock()
		_, err := w.Conn.Write(b)
		w.mu.Lock()
		if cap(b) <= 64<<10 {
			w.spare = b[:0]
		}
		if err != nil {
			w.err = err
			w.buf = nil
			// The reader must fail too: nothing more will reach the peer.
			_ = w.Conn.Close()
		}
	}
	w.sending = false
	w.cond.Broadcast()
}

// Close sends what is queued (a GOAWAY, a TLS close_notify) within a
// second, then closes.
func (w *writeBehind) Close() error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return net.ErrClosed
	}
	w.closed = true
	if w.sending || len(w.buf) > 0 {
		_ = w.Conn.SetWriteDeadline(time.Now().Add(time.Second))
	}
	for w.sending {
		w.cond.Wait()
	}
	if len(w.buf) > 0 && w.err == nil {
		_, _ = w.Conn.Write(w.buf)
		w.buf = nil
	}
	w.mu.Unlock()
	return w.Conn.Close()
}
