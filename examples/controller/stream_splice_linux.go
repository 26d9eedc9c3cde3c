package main

import (
	"net"
	"runtime"
	"sync"
	"syscall"
)

// spliceMove is how much one splice(2) may move, and the size asked of
// each pipe: the default /proc/sys/fs/pipe-max-size, as Go's own splice.
const spliceMove = 1 << 20

const (
	spliceMoveFlag     = 0x1  // SPLICE_F_MOVE
	spliceNonblockFlag = 0x2  // SPLICE_F_NONBLOCK: the pipe's side never blocks
	tcpNotsentLowat    = 0x19 // TCP_NOTSENT_LOWAT
)

// spliceMinPipe is the smallest pipe spliced through; a direction with a
// smaller one copies through user space. A user over
// fs.pipe-user-pages-soft (16384 pages: 64 pipes of 1 MiB, 32
// connections, when not root, as the chart runs the controller) gets
// pipes of two pages, through which a splice cost the proxy three times
// the CPU per byte of a full pipe, and more than one and a half times
// that of the copy.
const spliceMinPipe = 64 << 10

// spliceNotsentLowat bounds what the writing socket holds unsent
// (TCP_NOTSENT_LOWAT): past it the socket takes no more of the pipe's
// bytes until it has sent some. Without it the socket queues its whole
// send buffer (4 MiB by default) ahead of the wire: through loopback that
// cost a fifth more CPU per byte, client, proxy and backend together.
// Bytes sent and not yet acknowledged are not bounded, so a long fat
// path keeps its window.
const spliceNotsentLowat = 128 << 10

// splicer moves bytes from a socket through a pipe into another with
// splice(2), waiting in Go's netpoller (the sockets are non-blocking), so
// that a deadline leaves what it read in the pipe.
type splicer struct {
	srcConn, dstConn *net.TCPConn
	src, dst         syscall.RawConn
	p                *kernelPipe
	inPipe           int
	// n and err are the last fillFD/flushFD's result.
	n   int
	err error
	// fillFD and flushFD are bound once: no allocation per read.
	fillFD, flushFD func(fd uintptr) bool
	spliced         bool
	// copier takes over when the first splice(2) is refused (EINVAL: not
	// for this socket), as Go's own splice falls back to a copy.
	copier *copier
}

func newMover(dst, src *net.TCPConn) (mover, error) { return moverFrom(dst, src, getPipe) }

// moverFrom is newMover with the pipe taken from pipe (a test gives one
// that fails, without touching the shared pool).
func moverFrom(dst, src *net.TCPConn, pipe func() (*kernelPipe, error)) (mover, error) {
	p, err := pipe()
	if err != nil {
		// No pipe to be had (no file descriptors left): the direction
		// copies, served as nginx serves every stream connection,
		// rather than closed.
		return newCopier(dst, src), nil
	}
	return moverWith(dst, src, p)
}

// moverWith is the mover from src to dst through pipe p, which it owns.
func moverWith(dst, src *net.TCPConn, p *kernelPipe) (mover, error) {
	sc, err := src.SyscallConn()
	if err != nil {
		putPipe(p, 0)
		return nil, err
	}
	dc, err := dst.SyscallConn()
	if err != nil {
		putPipe(p, 0)
		return nil, err
	}
	// Ignored error: without the bound the bytes still move.
	_ = dc.Control(func(fd uintptr) {
		_ = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_TCP, tcpNotsentLowat, spliceNotsentLowat)
	})
	if p.size < spliceMinPipe {
		p.cleanup.Stop()
		closePipe([2]int{p.r, p.w})
		return newCopier(dst, src), nil
	}
	s := &splicer{srcConn: src, dstConn: dst, src: sc, dst: dc, p: p}
	s.fillFD = s.fillFrom
	s.flushFD = s.flushTo
	return s, nil
}

func (s *splicer) buffered() int {
	if s.copier != nil {
		return s.copier.buffered()
	}
	return s.inPipe
}

func (s *splicer) fill() (int, error) {
	if s.copier != nil {
		return s.copier.fill()
	}
	s.n, s.err = 0, nil
	if err := s.src.Read(s.fillFD); err != nil {
		return 0, err
	}
	if s.err == syscall.EINVAL && !s.spliced {
		s.copier = newCopier(s.dstConn, s.srcConn)
		return s.copier.fill()
	}
	s.spliced = true
	return s.n, s.err
}

// fillFrom splices what the socket fd has into the empty pipe; false
// (wait until readable) when it has nothing yet.
func (s *splicer) fillFrom(fd uintptr) bool {
	for {
		n, errno := spliceFD(int(fd), s.p.w, spliceMove)
		switch errno {
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return false
		case 0:
			s.n = n
			s.inPipe += n
		default:
			s.err = errno
		}
		return true
	}
}

func (s *splicer) flush() (int, error) {
	if s.copier != nil {
		return s.copier.flush()
	}
	s.n, s.err = 0, nil
	err := s.dst.Write(s.flushFD)
	if s.err != nil {
		err = s.err
	}
	return s.n, err
}

// flushTo splices the whole pipe into the socket fd; false (wait until
// writable) when the socket's buffer is full.
func (s *splicer) flushTo(fd uintptr) bool {
	for s.inPipe > 0 {
		n, errno := spliceFD(s.p.r, int(fd), s.inPipe)
		switch errno {
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return false
		case 0:
			s.n += n
			s.inPipe -= n
		default:
			s.err = errno
			return true
		}
	}
	return true
}

// spliceFD moves up to n bytes from in to out with splice(2). Neither
// end blocks (non-blocking sockets, SPLICE_F_NONBLOCK on the pipe), so
// the call is raw: one the scheduler prepares for blocking (entersyscall)
// wakes the runtime's monitor thread whenever the process was idle, and
// that thread then polls every 20 µs for a millisecond, which under a
// stream doubled the proxy's context switches per byte.
func spliceFD(in, out, n int) (int, syscall.Errno) {
	r, _, errno := syscall.RawSyscall6(syscall.SYS_SPLICE, uintptr(in), 0, uintptr(out), 0, uintptr(n), spliceMoveFlag|spliceNonblockFlag)
	return int(r), errno
}

func (s *splicer) close() {
	putPipe(s.p, s.inPipe)
	s.p = nil
}

// kernelPipe is a pipe's two ends. Pipes are pooled, as Go's splice
// pools them, so a connection costs no pipe(2) when one is free; one the
// pool drops is closed by its cleanup.
type kernelPipe struct {
	r, w    int
	size    int // F_GETPIPE_SZ, what it can hold
	cleanup runtime.Cleanup
}

var pipes = sync.Pool{New: func() any {
	p, err := newKernelPipe(spliceMove)
	if err != nil {
		return err
	}
	return p
}}

// newKernelPipe is a pipe of size bytes if it can have them.
func newKernelPipe(size int) (*kernelPipe, error) {
	var fds [2]int
	if err := syscall.Pipe2(fds[:], syscall.O_CLOEXEC|syscall.O_NONBLOCK); err != nil {
		return nil, err
	}
	// Ignored error: the pipe keeps the size it has, which
	// F_GETPIPE_SZ tells.
	_, _ = fcntl(fds[0], syscall.F_SETPIPE_SZ, size)
	got, err := fcntl(fds[0], syscall.F_GETPIPE_SZ, 0)
	if err != nil {
		got = 0
	}
	p := &kernelPipe{r: fds[0], w: fds[1], size: got}
	p.cleanup = runtime.AddCleanup(p, closePipe, fds)
	return p, nil
}

func getPipe() (*kernelPipe, error) {
	switch v := pipes.Get().(type) {
	case *kernelPipe:
		return v, nil
	case error:
		return nil, v
	}
	panic("unreachable")
}

// putPipe pools an empty pipe and closes one that still holds bytes.
func putPipe(p *kernelPipe, inPipe int) {
	if inPipe != 0 {
		p.cleanup.Stop()
		closePipe([2]int{p.r, p.w})
		return
	}
	pipes.Put(p)
}

func closePipe(fds [2]int) {
	syscall.Close(fds[0])
	syscall.Close(fds[1])
}

func fcntl(fd, cmd, arg int) (int, error) {
	r, _, e := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), uintptr(cmd), uintptr(arg))
	if e != 0 {
		return int(r), e
	}
	return int(r), nil
}
