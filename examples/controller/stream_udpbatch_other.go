//go:build !linux

package main

import (
	"errors"
	"net"
	"net/netip"
)

// Without recvmmsg and sendmmsg, a batch is one datagram; a datagram's
// destination is not read, and answers go out from the address the
// kernel picks.

type udpSocketSys struct{}

func (y *udpSocketSys) init(*udpSocket) error { return nil }

type udpBatchSys struct{}

func (y *udpBatchSys) init(*udpBatch) {}

type udpOutSys struct{}

func (y *udpOutSys) init(*udpOut) {}

// read waits for a datagram and returns it as a batch, to be given back
// with release.
func (s *udpSocket) read() (*udpBatch, error) {
	b := s.pool.Get().(*udpBatch)
	n, from, err := s.conn.ReadFromUDPAddrPort(b.bufs[0])
	if err != nil {
		s.pool.Put(b)
		return nil, err
	}
	b.n, b.lens[0], b.addrs[0] = 1, n, from
	return b, nil
}

// send writes every datagram of o; failed counts those the kernel
// refused, which are skipped. err is the socket's (closed).
func (s *udpSocket) send(o *udpOut) (failed int, err error) {
	for i, b := range o.data {
		if _, err := s.conn.WriteToUDPAddrPort(b, o.addrs[i]); err != nil {
			if errors.Is(err, net.ErrClosed) {
				return failed + len(o.data) - i, err
			}
			failed++
		}
	}
	return failed, nil
}

// connect does nothing: a socket connected behind net's back takes no
// address on write on the BSDs (EISCONN), and an ICMP error from an
// endpoint goes unheard, its exchange left to proxy-stream-timeout.
func (s *udpSocket) connect(netip.AddrPort, bool) error { return nil }
