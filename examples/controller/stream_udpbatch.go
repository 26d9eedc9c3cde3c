package main

import (
	"net"
	"net/netip"
	"sync"
)

// Datagrams are read and written in batches: on Linux one recvmmsg or
// sendmmsg moves up to udpBatchSlots of them (stream_udpbatch_linux.go),
// elsewhere one read or write moves one. A batch is taken from a pool
// only while it holds datagrams, so an idle session holds no buffer.

// udpBatchSlots is how many datagrams one read or write moves at most.
const udpBatchSlots = 16

// udpBatch holds the datagrams of one read: data(i) came from addrs[i],
// sent to locals[i] (the zero Addr where the socket does not say: see
// udpSocketSys).
type udpBatch struct {
	bufs   [][]byte
	lens   []int
	addrs  []netip.AddrPort
	locals []netip.Addr
	n      int
	// out is the batch's datagrams on their way on, pointing into bufs.
	out *udpOut
	sys udpBatchSys
}

func newUDPBatch(size int) *udpBatch {
	b := &udpBatch{
		bufs:   make([][]byte, udpBatchSlots),
		lens:   make([]int, udpBatchSlots),
		addrs:  make([]netip.AddrPort, udpBatchSlots),
		locals: make([]netip.Addr, udpBatchSlots),
		out:    newUDPOut(),
	}
	for i := range b.bufs {
		b.bufs[i] = make([]byte, size)
	}
	b.sys.init(b)
	return b
}

func (b *udpBatch) data(i int) []byte { return b.bufs[i][:b.lens[i]] }

// udpOut is datagrams to send, each to its address and from froms[i]
// where that is valid (else from the address the kernel picks); the data
// is not copied. It holds one batch's worth (udpBatchSlots): the
// datagrams of one read, sent on before the next.
type udpOut struct {
	data  [][]byte
	addrs []netip.AddrPort
	froms []netip.Addr
	sys   udpOutSys
}

func newUDPOut() *udpOut {
	o := &udpOut{
		data:  make([][]byte, 0, udpBatchSlots),
		addrs: make([]netip.AddrPort, 0, udpBatchSlots),
		froms: make([]netip.Addr, 0, udpBatchSlots),
	}
	o.sys.init(o)
	return o
}

func (o *udpOut) add(b []byte, to netip.AddrPort, from netip.Addr) {
	o.data = append(o.data, b)
	o.addrs = append(o.addrs, to)
	o.froms = append(o.froms, from)
}

func (o *udpOut) reset() {
	clear(o.data) // let the buffers go
	o.data, o.addrs, o.froms = o.data[:0], o.addrs[:0], o.froms[:0]
}

// udpSocket is a UDP socket read and written in batches.
type udpSocket struct {
	conn *net.UDPConn
	pool *sync.Pool // of *udpBatch, the size of the datagrams read
	sys  udpSocketSys
}

func newUDPSocket(c *net.UDPConn, pool *sync.Pool) (*udpSocket, error) {
	s := &udpSocket{conn: c, pool: pool}
	if err := s.sys.init(s); err != nil {
		return nil, err
	}
	return s, nil
}

// release returns a batch read from the socket, once its datagrams are
// sent on.
func (s *udpSocket) release(b *udpBatch) {
	b.out.reset()
	s.pool.Put(b)
}

// Batches of the listening sockets take any datagram (64 KiB); those of
// the sessions' sockets the backend's answers, as long as udpBufferSize.
var (
	clientBatches = sync.Pool{New: func() any { return newUDPBatch(64 << 10) }}
	answerBatches = sync.Pool{New: func() any { return newUDPBatch(udpBufferSize) }}
)
