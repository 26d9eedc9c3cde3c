//go:build linux

package rawsock

import (
	"io"
	"net"
	"os"
	"sync"
	"syscall"
	"unsafe"
)

// Conn is a TCP connection's socket, read and written with raw calls. A
// Conn is used by one reader and one writer at a time, as a bufio.Reader
// and a bufio.Writer use it.
type Conn struct {
	c  net.Conn
	rc syscall.RawConn

	// The functions handed to rc, made once so that a call does not
	// allocate, and what they work on.
	readFn, writeFn, sendFn func(fd uintptr) bool
	pendingFn               func(fd uintptr)
	rp, wp, sp              []byte
	rn, wn                  int
	rerr, werr, serr        syscall.Errno
	sent                    bool // sendFn: the write is done, the wait began
	ready                   bool // sendFn: the wait ended with the socket readable
	pending                 bool // pendingFn's answer
	waited                  bool // the last Read found nothing at first and waited
	peek                    [1]byte

	held    []byte // Writes held for Send
	holding bool
	// borrow: the next Write under Hold is the hold's last (see Borrow);
	// borrowed is that Write's bytes, kept instead of copied into held.
	borrow   bool
	borrowed []byte

	// shared: another goroutine may write while Send runs (a TLS layer's
	// Close writes its close_notify alert whenever it is called), so
	// writes, the hold and Send's write take wmu. unlock: Send's write
	// left wmu locked (sendNow lets go of it once it wrote).
	shared bool
	wmu    sync.Mutex
	unlock bool

	// rec follows the TLS records read, for a Conn under a TLS layer
	// (NetConn): see OneRecord.
	rec *records
}

// New is a Conn on c's socket, or nil when c is not a *net.TCPConn.
func New(c net.Conn) *Conn {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return nil
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return nil
	}
	s := &Conn{c: c, rc: rc}
	s.readFn, s.writeFn, s.sendFn, s.pendingFn = s.readNow, s.writeNow, s.sendNow, s.pendingNow
	return s
}

func (s *Conn) readNow(fd uintptr) bool {
	for {
		r, e := sysRead(fd, s.rp)
		switch e {
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			s.waited = true
			return false
		}
		if e != 0 {
			r = 0 // the call returned -1
		}
		s.rn, s.rerr = r, e
		return true
	}
}

// writeNow writes all of wp it can; false: the socket's buffer is full.
func (s *Conn) writeNow(fd uintptr) bool {
	var full bool
	s.wp, s.wn, s.werr, full = writeAll(fd, s.wp, s.wn)
	return !full
}

// writeAll writes all of p it can, adding what it wrote to n; full: the
// socket's buffer is full.
func writeAll(fd uintptr, p []byte, n int) (rest []byte, _ int, _ syscall.Errno, full bool) {
	for len(p) > 0 {
		r, e := sysWrite(fd, p)
		switch e {
		case 0:
			n += r
			p = p[r:]
		case syscall.EINTR:
		case syscall.EAGAIN:
			return p, n, 0, true
		default:
			return p, n, e, false
		}
	}
	return p, n, 0, false
}

// sendNow runs under rc.Read: first it writes, then it waits for the
// socket to become readable. Its fields are its own (sp, serr), as a
// shared Conn's Write may run while it waits.
func (s *Conn) sendNow(fd uintptr) bool {
	if s.sent {
		s.ready = true
		return true // readable
	}
	var full bool
	if s.sp, _, s.serr, full = writeAll(fd, s.sp, 0); full || s.serr != 0 {
		return true // the caller finishes the write, or fails
	}
	s.sent = true
	if s.unlock {
		s.unlock = false
		s.wmu.Unlock() // written: a close alert may follow while this waits
	}
	return false
}

func (s *Conn) pendingNow(fd uintptr) {
	_, _, e := syscall.RawSyscall6(syscall.SYS_RECVFROM, fd, uintptr(unsafe.Pointer(&s.peek[0])), 1, syscall.MSG_PEEK|syscall.MSG_DONTWAIT, 0, 0)
	s.pending = e != syscall.EAGAIN
}

// Read reads as net.Conn's Read does.
func (s *Conn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	s.rp, s.rn, s.rerr, s.waited = p, 0, 0, false
	err := s.rc.Read(s.readFn)
	s.rp = nil
	if s.rec != nil && err == nil && s.rn > 0 {
		s.rec.read(p[:s.rn])
	}
	switch {
	case err != nil:
		return 0, err
	case s.rerr != 0:
		return 0, s.opError("read", s.rerr)
	case s.rn == 0:
		return 0, io.EOF
	}
	return s.rn, nil
}

// Write writes as net.Conn's Write does, unless Hold was called.
func (s *Conn) Write(p []byte) (int, error) {
	if s.shared {
		s.wmu.Lock()
		defer s.wmu.Unlock()
	}
	return s.write(p)
}

func (s *Conn) write(p []byte) (int, error) {
	if s.holding {
		if s.borrow && len(s.held) == 0 && s.borrowed == nil {
			s.borrow, s.borrowed = false, p
			return len(p), nil
		}
		s.borrow = false
		if s.borrowed != nil {
			// Not the last after all: what was kept is copied now, as
			// Borrow's caller still leaves it.
			s.held, s.borrowed = append(s.held, s.borrowed...), nil
		}
		s.held = append(s.held, p...)
		return len(p), nil
	}
	s.wp, s.wn, s.werr = p, 0, 0
	err := s.rc.Write(s.writeFn)
	s.wp = nil
	switch {
	case err != nil:
		return s.wn, err
	case s.werr != 0:
		return s.wn, s.opError("write", s.werr)
	}
	return s.wn, nil
}

// Hold keeps what is written from now on for Send.
func (s *Conn) Hold() {
	if s.shared {
		s.wmu.Lock()
		defer s.wmu.Unlock()
	}
	s.holding = true
	s.held = s.held[:0]
	s.borrow, s.borrowed = false, nil
}

// Borrow tells a Conn under Hold that the next Write is the last before
// Send: it keeps that Write's bytes where they are instead of copying
// them, when nothing else is held, so the caller must not change them
// until Send returns (a Write after it copies them then, as they are). A
// buffered writer's Flush just before Send is such a Write: it hands over
// its buffer once and writes nothing more into it until it is written to
// again.
func (s *Conn) Borrow() {
	if s.shared {
		s.wmu.Lock()
		defer s.wmu.Unlock()
	}
	s.borrow = s.holding
}

// Send writes what was written since Hold and waits until the socket has
// something to read (or its peer closed), without reading it. A request
// and the wait for its answer cost one system call fewer that way than a
// write and a read that finds nothing yet; the wait is armed before the
// write, so an answer that comes at once is not missed.
//
// Only a failed write is Send's error. The wait is under the read
// deadline; when it fails (the deadline, or the connection closed under
// it) the next Read reports why. If the socket's buffer cannot take it
// all at once, Send writes the rest as Write does and does not wait.
func (s *Conn) Send() error {
	_, err := s.SendAwait()
	return err
}

// SendAwait is Send, and reports whether its wait ended with the socket
// readable (rather than by the read deadline, a close, or not at all):
// the next Read then finds something, even if the deadline passed since.
func (s *Conn) SendAwait() (ready bool, err error) {
	if s.shared {
		s.wmu.Lock()
		s.unlock = true
	}
	s.holding, s.borrow = false, false
	s.sp, s.serr, s.sent, s.ready = s.held, 0, false, false
	if s.borrowed != nil {
		s.sp, s.borrowed = s.borrowed, nil
	}
	_ = s.rc.Read(s.sendFn) // a failed wait is the next Read's
	rest, sent, werr := s.sp, s.sent, s.serr
	s.sp = nil
	if s.unlock {
		// Not written in the wait: the write below takes the lock again.
		s.unlock = false
		s.wmu.Unlock()
	}
	if cap(s.held) > maxHeld {
		s.held = nil
	}
	switch {
	case werr != 0:
		return false, s.opError("write", werr)
	case sent:
		return s.ready, nil
	}
	// The buffer was full, or the wait could not begin (a deadline already
	// past, or closed): the rest is written as Write would, which reports
	// a closed connection; a deadline is the next Read's.
	_, err = s.Write(rest)
	return false, err
}

// Waited reports whether the last Read found nothing to read at first and
// waited for the socket, since ResetWaited when that was called later.
func (s *Conn) Waited() bool { return s.waited }

// ResetWaited forgets the last Read's wait, so that Waited tells whether
// a Read waited since: a layer above that reads from its own buffer (TLS)
// may serve the next bytes without a Read.
func (s *Conn) ResetWaited() { s.waited = false }

// maxHeld is the largest hold buffer kept for the next Send.
const maxHeld = 16 << 10

// Pending reports whether anything waits to be read on the socket, data
// or the peer's close, without taking it: one non-blocking MSG_PEEK. A
// read deadline, even one that passed, does not stop it (the look does
// not wait), so a pooled connection may keep the deadline its last
// exchange left instead of paying a call to lift it (h1.Conn).
func (s *Conn) Pending() bool {
	if err := s.rc.Control(s.pendingFn); err != nil {
		return true
	}
	return s.pending
}

func (s *Conn) opError(op string, e syscall.Errno) error {
	return &net.OpError{Op: op, Net: "tcp", Source: s.c.LocalAddr(), Addr: s.c.RemoteAddr(), Err: os.NewSyscallError(op, e)}
}

// layered readies a Conn for a layer above it (NetConn).
func (s *Conn) layered() { s.shared, s.rec = true, new(records) }

// OneRecord reports whether the last Read of a Conn under NetConn began at
// a TLS record's start and ended at the end of the one record it
// completed. A TLS layer reads its socket only when it holds no whole
// record, so then it holds nothing more once it took that record: whatever
// it has not yet handed up is that record's, and nothing waits in its
// buffer that the socket would not announce. False for other Conns.
func (s *Conn) OneRecord() bool { return s.rec != nil && s.rec.one }

// AckNow makes c's socket acknowledge what it received at once, where the
// kernel would delay the acknowledgement (TCP_QUICKACK), for a server that
// read a TLS handshake's last message and writes nothing before the
// client's request: a client that leaves Nagle's algorithm on holds that
// request until the acknowledgement comes, 40 ms or more later. Go's TLS
// 1.3 server sends its session tickets before the client's Finished, so
// nothing else acknowledges it (OpenSSL's, as nginx's, sends them after).
// Nothing is done when c is not a *net.TCPConn.
func AckNow(c net.Conn) {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return
	}
	_ = rc.Control(func(fd uintptr) { _ = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_QUICKACK, 1) })
}
