//go:build !unix

package router

import (
	"errors"
	"net"
	"os"
)

// peeker cannot look at sockets here without reading from them: the
// watcher reads one byte, and a connection that yields one is closed
// anyway. A connection taken before its watcher started reading is not
// looked at; then a closed one is found out when the request is written
// (see serveH1's retry).
type peeker struct {
	c   net.Conn
	buf [1]byte
}

func (p *peeker) init(c net.Conn) { p.c = c }

func (p *peeker) wait() int8 {
	n, err := p.c.Read(p.buf[:])
	if n == 0 && errors.Is(err, os.ErrDeadlineExceeded) {
		return sawNothing
	}
	return sawSomething
}

func (p *peeker) now() bool { return true }
