package h1

// Bytes a backend sends on a connection that waits in the pool answer no
// request: read as the next request's response, they would hand one
// client what the backend (or whoever controls it) wrote after another's
// exchange. So a connection taken from the pool is looked at first, every
// time, whatever the request: one non-blocking MSG_PEEK (rawsock.Conn.Pending, or peeker). A
// connection with anything to read, bytes or an end, is closed and another
// taken or dialled. A goroutine parked on each idle connection would
// spare the request that system call but not the process: its wait in the
// poller starts with the same peek, and the hand-offs when a request takes
// the connection cost more (measured with the loopback harness: router
// CPU per request +5% against the peek's +1%). Bytes that arrive after the
// look, while the request is being written, cannot be told from its
// response, as with net/http's Transport and nginx.

// idleClean reports whether nothing arrived on a connection just taken
// from the pool while it was idle.
func (pc *Conn) idleClean() bool {
	if pc.raw != nil {
		return !pc.raw.Pending()
	}
	return pc.peek.now()
}
