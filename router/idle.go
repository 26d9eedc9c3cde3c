package router

import (
	"net"
	"sync/atomic"
	"time"
)

// Bytes a backend sends on a connection that waits in the pool answer no
// request: read as the next request's response, they would hand one
// client what the backend (or whoever controls it) wrote after another's
// exchange. So every idle connection is watched, as net/http's Transport
// watches it with the goroutine that reads each connection: a watcher
// waits in the runtime's poller for the socket to turn readable, and a
// request taking the connection interrupts the wait with a read deadline
// in the past and learns what it saw. A connection that had anything to
// read, bytes or an end, is closed, whatever the request; the watcher
// closes it at once. The wait costs the request no system call; only a
// connection taken before its watcher started looking is checked with one
// (see peeker). What reaches the socket after the poller last looked,
// microseconds before a request takes the connection, cannot be told from
// that request's response, as with net/http's Transport.

// The states of an idleWatch.
const (
	watchOff    int32 = iota // a request holds the connection
	watchQueued              // in the pool; the watcher has not started looking
	watchOn                  // the watcher looks, or has seen something
)

// What a watcher saw while its connection was idle.
const (
	sawNothing   int8 = iota // looked until interrupted: the connection is clean
	sawSomething             // bytes, an end or an error: never reuse it
	sawUnknown               // interrupted before it could look
)

// aLongTimeAgo is a read deadline that interrupts a wait at once.
var aLongTimeAgo = time.Unix(1, 0)

// idleWatch is the watcher of one connection. Its goroutine starts the
// first time the connection goes idle and lives as long as it does.
type idleWatch struct {
	state   atomic.Int32
	started bool          // the goroutine runs; touched by the owner only
	wake    chan struct{} // the connection went idle: look (capacity 1)
	seen    chan int8     // what the look saw (capacity 1)
	peek    peeker
}

// watchIdle starts watching pc as it goes into the pool; called before
// any other goroutine can take it from there.
func (pc *h1Conn) watchIdle() {
	w := &pc.watch
	w.state.Store(watchQueued)
	if !w.started {
		w.started = true
		w.wake = make(chan struct{}, 1)
		w.seen = make(chan int8, 1)
		go w.run(pc.c)
	}
	select {
	case w.wake <- struct{}{}:
	default: // a wake-up is pending; it finds the connection queued
	}
}

func (w *idleWatch) run(c net.Conn) {
	for range w.wake {
		// A connection taken before the watcher got to it is checked by
		// the taker (see idleClean).
		if !w.state.CompareAndSwap(watchQueued, watchOn) {
			continue
		}
		saw := w.peek.wait()
		if saw == sawSomething {
			// Never to be used again: its socket is released now, not
			// when a request or the idle timeout comes for it.
			_ = c.Close()
		}
		w.seen <- saw
	}
}

// idleClean ends the watch of a connection just taken from the pool and
// reports whether nothing arrived on it while it was idle.
func (pc *h1Conn) idleClean() bool {
	w := &pc.watch
	if w.state.CompareAndSwap(watchQueued, watchOff) {
		return w.peek.now()
	}
	_ = pc.c.SetReadDeadline(aLongTimeAgo)
	saw := <-w.seen
	w.state.Store(watchOff)
	// The read deadline stays in the past: send sets its own before it
	// reads.
	if saw == sawUnknown {
		_ = pc.c.SetReadDeadline(time.Time{})
		return w.peek.now()
	}
	return saw == sawNothing
}

// stopWatch ends the watcher's goroutine once the connection is closed.
func (pc *h1Conn) stopWatch() {
	if pc.watch.started {
		pc.watch.started = false
		close(pc.watch.wake)
	}
}
