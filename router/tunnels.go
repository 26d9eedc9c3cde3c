package router

import (
	"context"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// tunnels are the Upgrade tunnels (WebSockets) open. A server's Shutdown
// stops counting a connection once it is taken over, so the Router counts
// them itself: nginx's graceful quit keeps an upgraded connection until
// it ends or worker_shutdown_timeout runs out.
type tunnels struct {
	mu   sync.Mutex
	open map[*tunnel]struct{}
	// closing: Shutdown's time ran out; a connection taken over from now
	// on is closed at once.
	closing bool
}

// tunnel is one Upgrade from the moment the backend agreed, before the
// client's connection is taken over (so that no moment goes uncounted
// between the server's count and this one), until it ends.
type tunnel struct {
	conns []net.Conn // its two ends, as they are taken over
}

// tunnelKey is the context key of a proxied Upgrade's *tunnelRef.
type tunnelKey struct{}

type tunnelRef struct {
	ts *tunnels
	t  *tunnel
}

func (ts *tunnels) begin() *tunnel {
	t := new(tunnel)
	ts.mu.Lock()
	if ts.open == nil {
		ts.open = make(map[*tunnel]struct{})
	}
	ts.open[t] = struct{}{}
	ts.mu.Unlock()
	return t
}

// hold records an end of t, the client's connection or the backend's.
func (ts *tunnels) hold(t *tunnel, c net.Conn) {
	ts.mu.Lock()
	t.conns = append(t.conns, c)
	closing := ts.closing
	ts.mu.Unlock()
	if closing {
		c.Close()
	}
}

func (ts *tunnels) end(t *tunnel) {
	ts.mu.Lock()
	delete(ts.open, t)
	ts.mu.Unlock()
}

// Shutdown waits for the Upgrade tunnels (WebSockets) open to end, until
// ctx is done: then it closes the connections of those left and
// returns ctx's error. Call it with the servers' Shutdown: they stop
// counting a connection once the Router takes it over for a tunnel, as
// net/http's does, and nginx's graceful quit keeps an upgraded connection
// until worker_shutdown_timeout.
func (r *Router) Shutdown(ctx context.Context) error {
	ts := &r.tunnels
	wait := time.Millisecond
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		ts.mu.Lock()
		n := len(ts.open)
		ts.mu.Unlock()
		if n == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			ts.mu.Lock()
			ts.closing = true
			for t := range ts.open {
				for _, c := range t.conns {
					c.Close()
				}
			}
			ts.mu.Unlock()
			return ctx.Err()
		case <-timer.C:
			wait = min(2*wait, 500*time.Millisecond)
			timer.Reset(wait)
		}
	}
}

// tunnelIdle ends a tunnel through which nothing passed either way for
// its timeout, the location's proxy-read-timeout: nginx's
// ngx_http_upstream_process_upgraded arms proxy_read_timeout on the
// backend's side again at every event of either side, so an upgraded
// connection closes once both sides were silent that long, and one where
// either side still sends stays open.
type tunnelIdle struct {
	timeout time.Duration
	last    atomic.Int64 // tunnelClock at the last bytes through
	end     func()

	mu      sync.Mutex
	timer   *time.Timer
	stopped bool
}

var tunnelBase = time.Now()

func tunnelClock() time.Duration { return time.Since(tunnelBase) }

// watchIdle calls end once the tunnel was idle for timeout; nil (no
// watch) when timeout is not positive.
func watchIdle(timeout time.Duration, end func()) *tunnelIdle {
	if timeout <= 0 {
		return nil
	}
	w := &tunnelIdle{timeout: timeout, end: end}
	w.last.Store(int64(tunnelClock()))
	w.mu.Lock()
	w.timer = time.AfterFunc(timeout, w.check)
	w.mu.Unlock()
	return w
}

func (w *tunnelIdle) check() {
	w.mu.Lock()
	if w.stopped {
		w.mu.Unlock()
		return
	}
	if quiet := tunnelClock() - time.Duration(w.last.Load()); quiet < w.timeout {
		w.timer.Reset(w.timeout - quiet)
		w.mu.Unlock()
		return
	}
	w.stopped = true
	w.mu.Unlock()
	w.end()
}

// passed records bytes through the tunnel, either way.
func (w *tunnelIdle) passed() { w.last.Store(int64(tunnelClock())) }

// stop ends the watch once the tunnel ended.
func (w *tunnelIdle) stop() {
	if w == nil {
		return
	}
	w.mu.Lock()
	w.stopped = true
	w.timer.Stop()
	w.mu.Unlock()
}

// reader is r with every read that brings bytes recorded.
func (w *tunnelIdle) reader(r io.Reader) io.Reader {
	if w == nil {
		return r
	}
	return idleReader{r, w}
}

type idleReader struct {
	r io.Reader
	w *tunnelIdle
}

func (r idleReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if n > 0 {
		r.w.passed()
	}
	return n, err
}
