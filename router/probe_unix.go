//go:build unix

package router

import (
	"net"
	"syscall"
)

// prober tells whether an idle connection is still open, with one
// non-blocking peek at its socket: net/http's Transport learns it from the
// goroutine that reads every connection, nginx from its event loop; this
// pool has neither, and a request written to a connection the backend
// closed could not always be sent again.
type prober struct {
	rc   syscall.RawConn
	peek func(fd uintptr) bool // made once per connection, so probing does not allocate
	buf  [1]byte
	n    int
	err  error
}

func (p *prober) init(c net.Conn) {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return
	}
	p.rc = rc
	p.peek = func(fd uintptr) bool {
		p.n, _, p.err = syscall.Recvfrom(int(fd), p.buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		return true
	}
}

// alive reports that nothing is waiting on the connection: no EOF, no
// error, and no bytes the backend sent unasked.
func (p *prober) alive() bool {
	if p.rc == nil {
		return true
	}
	if err := p.rc.Read(p.peek); err != nil {
		return false
	}
	return p.err == syscall.EAGAIN || p.err == syscall.EWOULDBLOCK
}
