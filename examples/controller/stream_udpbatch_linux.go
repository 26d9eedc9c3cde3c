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
//
// A socket bound to every address (a service port on the deployment's
// --http-addr=:8080) asks the kernel for each datagram's destination
// address (IP_PKTINFO, IPV6_RECVPKTINFO), and its answers go out from
// that address (the same control message on send), as nginx's do: else
// the kernel picks the source by route, and a client that connected its
// socket to the address it asked (every stub resolver) drops the answer.
type udpSocketSys struct {
	rc      syscall.RawConn
	v6      bool // AF_INET6: IPv4 peers are written as mapped addresses
	pktinfo bool // datagrams' destinations are read
	readFn  func(fd uintptr) bool
	got     *udpBatch
	err     error
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
	var wildcard bool
	switch sa := sa.(type) {
	case *unix.SockaddrInet4:
		wildcard = sa.Addr == [4]byte{}
	case *unix.SockaddrInet6:
		y.v6, wildcard = true, sa.Addr == [16]byte{}
	}
	if wildcard {
		if err := rc.Control(func(fd uintptr) { serr = enablePktinfo(int(fd), y.v6) }); err != nil {
			return err
		}
		if serr != nil {
			return serr
		}
		y.pktinfo = true
	}
	y.rc = rc
	// The batch is taken from the pool only when a datagram is there to
	// be read, and put back when the socket had none.
	y.readFn = func(fd uintptr) bool {
		b := s.pool.Get().(*udpBatch)
		n, err := b.sys.recv(fd, y.pktinfo)
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

// connect makes to the socket's only peer, in place of the one before:
// the kernel then reports an ICMP error from it (port unreachable) to the
// socket's next read or write, as nginx's connected upstream socket reads
// it, where an unconnected socket never hears of it. The socket is first
// disconnected, which unbinds its source address and port, so that the
// new peer gets those its route gives (another family, another interface).
func (s *udpSocket) connect(to netip.AddrPort, connected bool) error {
	var sa unix.RawSockaddrInet6
	n := toSockaddr(&sa, to, s.sys.v6)
	if n == 0 {
		return unix.EAFNOSUPPORT
	}
	var serr error
	err := s.sys.rc.Control(func(fd uintptr) {
		if connected {
			unspec := unix.RawSockaddr{Family: unix.AF_UNSPEC}
			if serr = rawConnect(fd, unsafe.Pointer(&unspec), uint32(unsafe.Sizeof(unspec))); serr != nil {
				return
			}
		}
		serr = rawConnect(fd, unsafe.Pointer(&sa), n)
	})
	if err != nil {
		return err
	}
	return serr
}

// rawConnect is connect(2) with a raw address: AF_UNSPEC, which x/sys has
// no Sockaddr for, disconnects.
func rawConnect(fd uintptr, sa unsafe.Pointer, n uint32) error {
	for {
		_, _, e := unix.Syscall(unix.SYS_CONNECT, fd, uintptr(sa), uintptr(n))
		switch e {
		case 0:
			return nil
		case unix.EINTR:
			continue
		}
		return e
	}
}

// enablePktinfo asks for datagrams' destination addresses: an AF_INET6
// socket gets IPv4 ones (of mapped peers) by IP_PKTINFO too.
func enablePktinfo(fd int, v6 bool) error {
	if v6 {
		if err := unix.SetsockoptInt(fd, unix.IPPROTO_IPV6, unix.IPV6_RECVPKTINFO, 1); err != nil {
			return err
		}
	}
	return unix.SetsockoptInt(fd, unix.IPPROTO_IP, unix.IP_PKTINFO, 1)
}

// pktinfoSpace is a slot's control buffer: one IPv6 packet-info message,
// the larger of the two.
var pktinfoSpace = unix.CmsgSpace(unix.SizeofInet6Pktinfo)

// udpBatchSys are a batch's recvmmsg arguments, each slot's buffer,
// address and control buffer.
type udpBatchSys struct {
	b     *udpBatch
	msgs  []mmsghdr
	iovs  []unix.Iovec
	names []unix.RawSockaddrInet6
	ctl   []byte
}

func (y *udpBatchSys) init(b *udpBatch) {
	y.b = b
	y.msgs = make([]mmsghdr, len(b.bufs))
	y.iovs = make([]unix.Iovec, len(b.bufs))
	y.names = make([]unix.RawSockaddrInet6, len(b.bufs))
	y.ctl = make([]byte, len(b.bufs)*pktinfoSpace)
	for i := range y.msgs {
		y.iovs[i].Base = &b.bufs[i][0]
		y.iovs[i].SetLen(len(b.bufs[i]))
		h := &y.msgs[i].hdr
		h.Name = (*byte)(unsafe.Pointer(&y.names[i]))
		h.Iov = &y.iovs[i]
		h.SetIovlen(1)
	}
}

// recv is one recvmmsg without waiting; with pktinfo each datagram's
// destination address is read too.
func (y *udpBatchSys) recv(fd uintptr, pktinfo bool) (int, error) {
	for i := range y.msgs {
		h := &y.msgs[i].hdr
		h.Namelen = unix.SizeofSockaddrInet6
		h.Flags = 0
		if pktinfo {
			h.Control = &y.ctl[i*pktinfoSpace]
			h.SetControllen(pktinfoSpace)
		} else {
			h.Control = nil
			h.SetControllen(0)
		}
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
			y.b.locals[i] = netip.Addr{}
			if pktinfo {
				c := y.ctl[i*pktinfoSpace:]
				y.b.locals[i] = destination(c[:min(int(y.msgs[i].hdr.Controllen), pktinfoSpace)])
			}
		}
		return n, nil
	}
}

// destination reads the packet-info message of a datagram's control
// data: the address it was sent to, or the zero Addr.
func destination(c []byte) netip.Addr {
	for len(c) >= unix.CmsgLen(0) {
		h := (*unix.Cmsghdr)(unsafe.Pointer(&c[0]))
		l := int(h.Len)
		if l < unix.CmsgLen(0) || l > len(c) {
			break
		}
		data := c[unix.CmsgLen(0):l]
		switch {
		case h.Level == unix.IPPROTO_IP && h.Type == unix.IP_PKTINFO && len(data) >= unix.SizeofInet4Pktinfo:
			return netip.AddrFrom4((*unix.Inet4Pktinfo)(unsafe.Pointer(&data[0])).Addr)
		case h.Level == unix.IPPROTO_IPV6 && h.Type == unix.IPV6_PKTINFO && len(data) >= unix.SizeofInet6Pktinfo:
			return netip.AddrFrom16((*unix.Inet6Pktinfo)(unsafe.Pointer(&data[0])).Addr)
		}
		c = c[min(unix.CmsgSpace(l-unix.CmsgLen(0)), len(c)):]
	}
	return netip.Addr{}
}

// udpOutSys are an udpOut's sendmmsg arguments and the progress of its
// write.
type udpOutSys struct {
	msgs    []mmsghdr
	iovs    []unix.Iovec
	names   []unix.RawSockaddrInet6
	ctl     []byte
	writeFn func(fd uintptr) bool
	// done are the datagrams written or skipped, failed those skipped.
	done, failed int
}

func (y *udpOutSys) init(o *udpOut) {
	n := cap(o.data)
	y.msgs = make([]mmsghdr, n)
	y.iovs = make([]unix.Iovec, n)
	y.names = make([]unix.RawSockaddrInet6, n)
	y.ctl = make([]byte, n*pktinfoSpace)
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
		if from := o.froms[i]; from.IsValid() {
			c := y.ctl[i*pktinfoSpace : (i+1)*pktinfoSpace]
			h.Control = &c[0]
			h.SetControllen(sourcePktinfo(c, from))
		}
	}
}

// sourcePktinfo writes into c the packet-info message that sends a
// datagram from the address from, and returns its length.
func sourcePktinfo(c []byte, from netip.Addr) int {
	clear(c)
	h := (*unix.Cmsghdr)(unsafe.Pointer(&c[0]))
	data := unsafe.Pointer(&c[unix.CmsgLen(0)])
	if from.Unmap().Is4() {
		h.Level, h.Type = unix.IPPROTO_IP, unix.IP_PKTINFO
		h.SetLen(unix.CmsgLen(unix.SizeofInet4Pktinfo))
		(*unix.Inet4Pktinfo)(data).Spec_dst = from.Unmap().As4()
		return unix.CmsgSpace(unix.SizeofInet4Pktinfo)
	}
	h.Level, h.Type = unix.IPPROTO_IPV6, unix.IPV6_PKTINFO
	h.SetLen(unix.CmsgLen(unix.SizeofInet6Pktinfo))
	(*unix.Inet6Pktinfo)(data).Addr = from.As16()
	return unix.CmsgSpace(unix.SizeofInet6Pktinfo)
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
