//go:build unix

package router

import (
	"errors"
	"net"
	"os"
	"syscall"
)

// peeker looks at an idle connection's socket without taking anything
// from it: a non-blocking MSG_PEEK, and between looks a wait in the
// runtime's poller, which costs no system call.
type peeker struct {
	rc syscall.RawConn
	// The functions handed to rc.Read, made once per connection so that
	// looking does not allocate. wait's runs on the watcher's goroutine,
	// now's on the taker's.
	waitFn, nowFn func(fd uintptr) bool
	looked, found bool    // set by waitFn
	clean         bool    // set by nowFn
	wbuf, nbuf    [1]byte // one byte each, never consumed
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
	p.waitFn = func(fd uintptr) bool {
		p.looked = true
		_, _, err := syscall.Recvfrom(int(fd), p.wbuf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		if err == syscall.EAGAIN || err == syscall.EWOULDBLOCK {
			return false // nothing yet: wait in the poller
		}
		p.found = true // bytes, an end or an error
		return true
	}
	p.nowFn = func(fd uintptr) bool {
		_, _, err := syscall.Recvfrom(int(fd), p.nbuf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		p.clean = err == syscall.EAGAIN || err == syscall.EWOULDBLOCK
		return true
	}
}

// wait looks until something arrives or the wait is interrupted.
func (p *peeker) wait() int8 {
	if p.rc == nil {
		return sawUnknown
	}
	p.looked, p.found = false, false
	err := p.rc.Read(p.waitFn)
	switch {
	case p.found:
		return sawSomething
	case !p.looked:
		return sawUnknown // the deadline was past before it could look
	case errors.Is(err, os.ErrDeadlineExceeded):
		return sawNothing
	}
	return sawSomething // closed
}

// now looks once, with a system call; a connection it cannot look at
// counts as clean.
func (p *peeker) now() bool {
	if p.rc == nil {
		return true
	}
	if err := p.rc.Read(p.nowFn); err != nil {
		return false
	}
	return p.clean
}
