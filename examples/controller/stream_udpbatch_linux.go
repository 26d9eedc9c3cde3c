package main

import (
	"net/netip"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// mmsghdr is struct mmsghdr of recvmmsg(2) and sendmmsg(2).
type mmsghdr struct {
	hdr unix.Msghdr
	len uint32
}

// udpSocketSys reads with recvmmsg through the runtime's poller: the
// socket stays non-blocking and a read that finds nothing waits as a
// goroutine, as net's own reads do.
type udpSocketSys struct {
	rc     syscall.RawConn
	v6     bool // AF_INET6: IPv4 peers are written as mapped addresses
	readFn func(fd uintptr) bool
	got    *udpBatch
	err    error
}

func (y *udpSocketSys) init(s *udpSocket) error {
	rc, err := s.conn.SyscallConn()
	if err != nil {
		return err
	}
	var sa unix.Sockaddr
	var serr error
	if err := rc.Control(func(fd uintptr) { sa, serr = unix.Getsockname(int(fd)) }); err != nil {
		return err
	}
	if serr != nil {
		return serr
	}
	_, y.v6 = sa.(*unix.SockaddrInet6)
	y.rc = rc
	// The batch is taken from the pool only when a datagram is there to
	// be read, and put back when the socket had none.
	y.readFn = func(fd uintptr) bool {
		b := s.pool.Get().(*udpBatch)
		n, err := b.sys.recv(fd)
		if err == unix.EAGAIN {
			s.pool.Put(b)
			return false
		}
		if err != nil {
			s.pool.Put(b)
			y.got, y.err = nil, err
			return true
		}
		b.n = n
		y.got, y.err = b, nil
		return true
	}
	return nil
}

// read waits for datagrams and returns a batch of them (one at least),
// to be given back with release.
func (s *udpSocket) read() (*udpBatch, error) {
	if err := s.sys.rc.Read(s.sys.readFn); err != nil {
		return nil, err
	}
	if s.sys.err != nil {
		return nil, s.sys.err
	}
	b := s.sys.got
	s.sys.got = nil
	return b, nil
}

// send writes every datagram of o; failed counts those the kernel
// refused (an ICMP error reported on the socket, say), which are skipped.
// err is the socket's (closed).
func (s *udpSocket) send(o *udpOut) (failed int, err error) {
	if len(o.data) == 0 {
		return 0, nil
	}
	o.sys.prepare(o, s.sys.v6)
	if err := s.sys.rc.Write(o.sys.writeFn); err != nil {
		return o.sys.failed + len(o.data) - o.sys.done, err
	}
	return o.sys.failed, nil
}

// udpBatchSys are a batch's recvmmsg arguments, each slot's buffer and
// address.
type udpBatchSys struct {
	b     *udpBatch
	msgs  []mmsghdr
	iovs  []unix.Iovec
	names []unix.RawSockaddrInet6
}

func (y *udpBatchSys) init(b *udpBatch) {
	y.b = b
	y.msgs = make([]mmsghdr, len(b.bufs))
	y.iovs = make([]unix.Iovec, len(b.bufs))
	y.names = make([]unix.RawSockaddrInet6, len(b.bufs))
	for i := range y.msgs {
		y.iovs[i].Base = &b.bufs[i][0]
		y.iovs[i].SetLen(len(b.bufs[i]))
		h := &y.msgs[i].hdr
		h.Name = (*byte)(unsafe.Pointer(&y.names[i]))
		h.Iov = &y.iovs[i]
		h.SetIovlen(1)
	}
}

// recv is one recvmmsg without waiting.
func (y *udpBatchSys) recv(fd uintptr) (int, error) {
	for i := range y.msgs {
		y.msgs[i].hdr.Namelen = unix.SizeofSockaddrInet6
		y.msgs[i].hdr.Flags = 0
		y.msgs[i].len = 0
	}
	for {
		r, _, e := unix.Syscall6(unix.SYS_RECVMMSG, fd, uintptr(unsafe.Pointer(&y.msgs[0])), uintptr(len(y.msgs)), unix.MSG_DONTWAIT, 0, 0)
		switch e {
		case 0:
		case unix.EINTR:
			continue
		default:
			return 0, e
		}
		n := int(r)
		for i := range n {
			y.b.lens[i] = int(y.msgs[i].len)
			y.b.addrs[i] = fromSockaddr(&y.names[i])
		}
		return n, nil
	}
}

// udpOutSys are an udpOut's sendmmsg arguments and the progress of its
// write.
type udpOutSys struct {
	msgs    []mmsghdr
	iovs    []unix.Iovec
	names   []unix.RawSockaddrInet6
	writeFn func(fd uintptr) bool
	// done are the datagrams written or skipped, failed those skipped.
	done, failed int
}

func (y *udpOutSys) init(o *udpOut) {
	n := cap(o.data)
	y.msgs = make([]mmsghdr, n)
	y.iovs = make([]unix.Iovec, n)
	y.names = make([]unix.RawSockaddrInet6, n)
	y.writeFn = func(fd uintptr) bool {
		for y.done < len(o.data) {
			r, _, e := unix.Syscall6(unix.SYS_SENDMMSG, fd, uintptr(unsafe.Pointer(&y.msgs[y.done])), uintptr(len(o.data)-y.done), unix.MSG_DONTWAIT, 0, 0)
			switch e {
			case 0:
				y.done += int(r)
			case unix.EAGAIN:
				return false
			case unix.EINTR:
			default:
				// sendmmsg reports an error only for the first datagram.
				y.done++
				y.failed++
			}
		}
		return true
	}
}

func (y *udpOutSys) prepare(o *udpOut, v6 bool) {
	y.done, y.failed = 0, 0
	for i, b := range o.data {
		h := &y.msgs[i].hdr
		*h = unix.Msghdr{}
		if len(b) > 0 {
			y.iovs[i].Base = &b[0]
		} else {
			y.iovs[i].Base = nil
		}
		y.iovs[i].SetLen(len(b))
		h.Iov = &y.iovs[i]
		h.SetIovlen(1)
		// An address the socket cannot reach (IPv6 on an AF_INET socket)
		// goes without one, and fails.
		if n := toSockaddr(&y.names[i], o.addrs[i], v6); n > 0 {
			h.Name = (*byte)(unsafe.Pointer(&y.names[i]))
			h.Namelen = n
		}
	}
}

// fromSockaddr reads an AF_INET or AF_INET6 address.
func fromSockaddr(sa *unix.RawSockaddrInet6) netip.AddrPort {
	p := (*[2]byte)(unsafe.Pointer(&sa.Port))
	port := uint16(p[0])<<8 | uint16(p[1])
	if sa.Family == unix.AF_INET {
		sa4 := (*unix.RawSockaddrInet4)(unsafe.Pointer(sa))
		return netip.AddrPortFrom(netip.AddrFrom4(sa4.Addr), port)
	}
	return netip.AddrPortFrom(netip.AddrFrom16(sa.Addr), port)
}

// toSockaddr writes a as an address of the socket's family, IPv4 as a
// mapped address on an AF_INET6 socket, and returns its length: 0 for
// an IPv6 address on an AF_INET socket.
func toSockaddr(sa *unix.RawSockaddrInet6, a netip.AddrPort, v6 bool) uint32 {
	*sa = unix.RawSockaddrInet6{}
	port := a.Port()
	if !v6 {
		if !a.Addr().Unmap().Is4() {
			return 0
		}
		sa4 := (*unix.RawSockaddrInet4)(unsafe.Pointer(sa))
		sa4.Family = unix.AF_INET
		p := (*[2]byte)(unsafe.Pointer(&sa4.Port))
		p[0], p[1] = byte(port>>8), byte(port)
		sa4.Addr = a.Addr().Unmap().As4()
		return unix.SizeofSockaddrInet4
	}
	sa.Family = unix.AF_INET6
	p := (*[2]byte)(unsafe.Pointer(&sa.Port))
	p[0], p[1] = byte(port>>8), byte(port)
	sa.Addr = a.Addr().As16()
	return unix.SizeofSockaddrInet6
}
