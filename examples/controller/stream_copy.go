package main

import (
	"io"
	"net"
)

// copier is the mover where there is no splice(2) (another system, or a
// socket splice(2) refuses): through a buffer of its own, allocated once
// per direction, so that a write's deadline leaves what was read in it.
type copier struct {
	src, dst *net.TCPConn
	buf      []byte
	off, end int
	copyIO
}

func newCopier(dst, src *net.TCPConn) *copier {
	c := &copier{src: src, dst: dst, buf: make([]byte, 32<<10)}
	c.initIO()
	return c
}

func (c *copier) buffered() int { return c.end - c.off }

func (c *copier) fill() (int, error) {
	for {
		n, err := c.read()
		c.off, c.end = 0, n
		switch {
		case n > 0:
			return n, nil // an error comes again with the next read
		case err == io.EOF:
			return 0, nil
		case err != nil:
			return 0, err
		}
	}
}

func (c *copier) flush() (int, error) {
	n, err := c.write(c.buf[c.off:c.end])
	c.off += n
	return n, err
}

func (c *copier) close() {}
