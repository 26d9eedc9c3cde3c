package main

import (
	"io"
	"syscall"
	"unsafe"
)

// copyIO reads and writes the copier's sockets with raw read(2) and
// write(2), waiting in Go's netpoller, for the reason spliceFD gives: the
// sockets are non-blocking, and a call the scheduler prepares for
// blocking wakes its monitor thread whenever the process was idle.
// Through net.Conn's Read and Write the copy cost the proxy 5,600
// nanosleeps and 11,000 context switches per GiB.
type copyIO struct {
	rsrc, rdst syscall.RawConn
	// out is what writeTo writes; n and errno are the last
	// readFrom/writeTo's result.
	out   []byte
	n     int
	errno syscall.Errno
	// readFD and writeFD are bound once: no allocation per read.
	readFD, writeFD func(fd uintptr) bool
}

func (c *copier) initIO() {
	// SyscallConn fails only for a nil connection.
	c.rsrc, _ = c.src.SyscallConn()
	c.rdst, _ = c.dst.SyscallConn()
	c.readFD, c.writeFD = c.readFrom, c.writeTo
}

// read is src.Read into the buffer: io.EOF at src's end.
func (c *copier) read() (int, error) {
	c.n, c.errno = 0, 0
	if err := c.rsrc.Read(c.readFD); err != nil {
		return 0, err
	}
	switch {
	case c.errno != 0:
		return 0, c.errno
	case c.n == 0:
		return 0, io.EOF
	}
	return c.n, nil
}

// readFrom reads what the socket fd has; false (wait until readable)
// when it has nothing yet.
func (c *copier) readFrom(fd uintptr) bool {
	for {
		n, _, errno := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&c.buf[0])), uintptr(len(c.buf)))
		switch errno {
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return false
		case 0:
			c.n = int(n)
		default:
			c.errno = errno
		}
		return true
	}
}

// write is dst.Write of b: all of it, or n of it before an error.
func (c *copier) write(b []byte) (int, error) {
	c.out, c.n, c.errno = b, 0, 0
	err := c.rdst.Write(c.writeFD)
	c.out = nil
	if c.errno != 0 {
		err = c.errno
	}
	return c.n, err
}

// writeTo writes the rest of out to the socket fd; false (wait until
// writable) when the socket's buffer is full.
func (c *copier) writeTo(fd uintptr) bool {
	for c.n < len(c.out) {
		n, _, errno := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&c.out[c.n])), uintptr(len(c.out)-c.n))
		switch errno {
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return false
		case 0:
			c.n += int(n)
		default:
			c.errno = errno
			return true
		}
	}
	return true
}
