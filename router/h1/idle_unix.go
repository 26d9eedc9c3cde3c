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

// look peeks at most len(buf) bytes into buf: how many there are, 0
// when none waits, -1 at the end or when the socket cannot be looked at.
func (p *peeker) look(buf []byte) int {
	if p.rc == nil {
		return -1
	}
	n := -1
	err := p.rc.Control(func(fd uintptr) {
		m, _, err := syscall.Recvfrom(int(fd), buf, syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		switch {
		case err == syscall.EAGAIN || err == syscall.EWOULDBLOCK:
			n = 0
		case err == nil && m > 0:
			n = m
		}
	})
	if err != nil {
		return -1
	}
	return n
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
