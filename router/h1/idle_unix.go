//go:build unix

package h1

import (
	"net"
	"syscall"
)

// peeker looks at an idle connection's socket without taking anything
// from it: one non-blocking MSG_PEEK.
type peeker struct {
	rc syscall.RawConn
	// nowFn is handed to rc.Control (which, unlike Read, minds no read
	// deadline: the look does not wait), made once per connection so that
	// looking does not allocate.
	nowFn func(fd uintptr)
	clean bool    // set by nowFn
	buf   [1]byte // never consumed
}

func (p *peeker) init(c net.Conn) {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return
	}
	p.rc = rc
	p.nowFn = func(fd uintptr) {
		_, _, err := syscall.Recvfrom(int(fd), p.buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		p.clean = err == syscall.EAGAIN || err == syscall.EWOULDBLOCK
	}
}

// now looks once; a connection it cannot look at counts as clean.
func (p *peeker) now() bool {
	if p.rc == nil {
		return true
	}
	if err := p.rc.Control(p.nowFn); err != nil {
		return false
	}
	return p.clean
}
