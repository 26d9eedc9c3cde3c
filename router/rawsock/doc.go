// Package rawsock reads and writes a connection's TCP socket with raw
// system calls, for the router's backend connections and the example
// controller's own HTTP/1 server.
//
// Go's own socket calls tell the scheduler they are in the kernel. The
// socket is non-blocking, so none of them waits there, but on a loaded
// proxy some take long enough (a write on loopback runs the receiver's
// whole TCP path) that sysmon takes the processor away, wakes another
// thread to run it, and keeps polling every 20 µs while it finds calls to
// take over: about a tenth of the proxy's CPU on the load harness of
// issue 26. A raw call keeps the processor. Waiting for the socket is
// still the netpoller's, under the connection's deadlines, so a Conn
// behaves as the net.Conn it wraps for every other purpose.
//
// Under the race detector the syscall package's calls are used instead,
// so that it sees what the kernel orders between a write and the read of
// its bytes.
//
// New returns nil where this is not done (another operating system, or a
// connection that is not a plain TCP socket): callers keep the net.Conn.
package rawsock
