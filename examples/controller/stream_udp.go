package main

import (
	"errors"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"ramjet.dev/ramjet/balance"
	"ramjet.dev/ramjet/match"
)

// udpBufferSize is the largest datagram a backend's answer may be, as
// nginx's stream proxy_buffer_size (16k): a longer one is cut.
const udpBufferSize = 16 << 10

// udpRelay serves one UDP service port. Each client address gets a
// session: a socket of its own towards the backend, whose answers are
// sent back from the listening socket. Within a session, an exchange
// picks an endpoint and lasts until the answers proxy-stream-responses
// expects have come (nginx's UDP session); the next datagram starts
// another, balanced anew, on the same socket. A session idle for
// proxy-stream-timeout ends. At most max sessions exist: a datagram from
// a new address beyond them is dropped, so a flood of addresses costs no
// more than max sockets and buffers.
type udpRelay struct {
	s    *streams
	port int32
	conn *net.UDPConn
	max  int

	mu       sync.Mutex
	sessions map[netip.AddrPort]*udpSession
	draining bool
	closed   bool
}

func newUDPRelay(s *streams, port int32, conn *net.UDPConn) *udpRelay {
	return &udpRelay{s: s, port: port, conn: conn, max: s.maxSessions, sessions: make(map[netip.AddrPort]*udpSession)}
}

// Sessions returns how many client sessions are open.
func (r *udpRelay) Sessions() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.sessions)
}

// readLoop reads client datagrams until the socket closes.
func (r *udpRelay) readLoop() {
	buf := make([]byte, 64<<10)
	for {
		n, from, err := r.conn.ReadFromUDPAddrPort(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue // an ICMP error reported on the socket, say
		}
		r.relay(buf[:n], from)
	}
}

// relay sends one client datagram to the client's session's endpoint.
func (r *udpRelay) relay(b []byte, from netip.AddrPort) {
	from = netip.AddrPortFrom(from.Addr().Unmap(), from.Port())
	r.mu.Lock()
	sess := r.sessions[from]
	if sess == nil {
		switch {
		case r.draining:
			r.mu.Unlock()
			return
		case len(r.sessions) >= r.max:
			r.mu.Unlock()
			r.s.metrics.error(match.UDP, r.port, nil, "sessions_full")
			return
		}
		var err error
		sess, err = r.open(from)
		if err != nil {
			r.mu.Unlock()
			r.s.metrics.error(match.UDP, r.port, nil, "socket")
			return
		}
		r.sessions[from] = sess
		r.s.wg.Go(sess.answerLoop)
	}
	r.mu.Unlock()
	sess.send(b)
}

// open makes a session's socket. r.mu is held.
func (r *udpRelay) open(client netip.AddrPort) (*udpSession, error) {
	network := "udp4"
	if client.Addr().Is6() {
		network = "udp6"
	}
	up, err := net.ListenUDP(network, nil)
	if err != nil {
		return nil, err
	}
	s := &udpSession{r: r, client: client, up: up, buf: make([]byte, udpBufferSize)}
	s.last.Store(time.Now().UnixNano())
	return s, nil
}

// end removes a session. Called by its answer loop, once.
func (r *udpRelay) end(s *udpSession) {
	r.mu.Lock()
	if r.sessions[s.client] == s {
		delete(r.sessions, s.client)
	}
	if r.draining && len(r.sessions) == 0 && !r.closed {
		r.closed = true
		r.conn.Close()
	}
	r.mu.Unlock()
}

// drain stops sessions for new clients; the socket closes once the open
// ones have ended (answers go out from it).
func (r *udpRelay) drain() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.draining = true
	if len(r.sessions) == 0 && !r.closed {
		r.closed = true
		r.conn.Close()
	}
}

// close ends every session and the socket at once.
func (r *udpRelay) close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range r.sessions {
		s.up.Close()
	}
	r.closed = true
	r.conn.Close()
}

// udpSession is one client address's socket towards the backend.
type udpSession struct {
	r      *udpRelay
	client netip.AddrPort
	up     *net.UDPConn
	buf    []byte
	last   atomic.Int64 // UnixNano of the last datagram either way

	mu sync.Mutex
	// The exchange in progress: its endpoint (inflight while set), the
	// datagrams sent and answered, and how many answers each expects.
	ep        balance.Endpoint
	to        netip.AddrPort
	active    bool
	sent      int
	answered  int
	responses int
	metrics   *serviceMetrics
	timeout   time.Duration
}

// send forwards a client datagram, starting an exchange when none is in
// progress.
func (s *udpSession) send(b []byte) {
	s.mu.Lock()
	if !s.active && !s.begin() {
		s.mu.Unlock()
		return
	}
	to, m := s.to, s.metrics
	s.sent++
	s.last.Store(time.Now().UnixNano())
	finished := s.responses == 0
	if finished {
		s.finish()
	}
	s.mu.Unlock()
	m.in(len(b))
	if _, err := s.up.WriteToUDPAddrPort(b, to); err != nil {
		m.failed("connect")
	}
}

// begin picks the exchange's endpoint from the serving table. s.mu is held.
func (s *udpSession) begin() bool {
	route, ok := s.r.s.rt.Stream(match.UDP, s.r.port)
	if !ok {
		s.r.s.metrics.error(match.UDP, s.r.port, nil, "no_service")
		return false
	}
	m := s.r.s.metrics.service(route.Service)
	if route.Balancer == nil {
		m.failed("no_endpoint")
		return false
	}
	e, ok := route.Balancer.Pick("")
	if !ok {
		m.failed("no_endpoint")
		return false
	}
	to, err := netip.ParseAddrPort(s.r.s.dialAddr(e.Addr))
	if err != nil {
		e.Release()
		m.failed("no_endpoint")
		return false
	}
	if s.client.Addr().Is4() != to.Addr().Is4() {
		// The session's socket is of the client's family; an endpoint
		// of the other one is reached through a mapped address.
		to = netip.AddrPortFrom(netip.AddrFrom16(to.Addr().As16()), to.Port())
	}
	s.ep, s.to, s.active = e, to, true
	s.sent, s.answered, s.responses = 0, 0, route.Settings.Responses
	s.metrics, s.timeout = m, route.Settings.Timeout
	m.accepted()
	return true
}

// finish ends the exchange in progress. s.mu is held.
func (s *udpSession) finish() {
	if s.active {
		s.active = false
		s.ep.Release()
		s.metrics.closed()
	}
}

// answerLoop sends the backend's answers to the client until the session
// idles out or its socket closes.
func (s *udpSession) answerLoop() {
	defer s.r.end(s)
	defer func() {
		s.mu.Lock()
		s.finish()
		s.mu.Unlock()
		s.up.Close()
	}()
	for {
		s.mu.Lock()
		timeout := s.timeout
		s.mu.Unlock()
		if timeout == 0 {
			timeout = match.DefaultStreamSettings.Timeout
		}
		_ = s.up.SetReadDeadline(time.Unix(0, s.last.Load()).Add(timeout))
		n, from, err := s.up.ReadFromUDPAddrPort(s.buf)
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				if time.Since(time.Unix(0, s.last.Load())) >= timeout {
					return // idle
				}
				continue
			}
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue // an ICMP port unreachable from the endpoint, say
		}
		s.mu.Lock()
		if !s.active || from.Port() != s.to.Port() || from.Addr().Unmap() != s.to.Addr().Unmap() {
			// An answer after its exchange ended, or from elsewhere.
			s.mu.Unlock()
			continue
		}
		s.answered++
		s.last.Store(time.Now().UnixNano())
		m := s.metrics
		if s.answered >= s.responses*s.sent {
			s.finish()
		}
		s.mu.Unlock()
		m.out(n)
		if _, err := s.r.conn.WriteToUDPAddrPort(s.buf[:n], s.client); err != nil {
			m.failed("reset")
		}
	}
}
