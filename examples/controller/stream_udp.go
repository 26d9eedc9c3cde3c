package main

import (
	"errors"
	"net"
	"net/netip"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"ramjet.dev/ramjet/balance"
	"ramjet.dev/ramjet/match"
	"ramjet.dev/ramjet/router/h1"
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
// proxy-stream-timeout ends. At most max sessions exist: a new address
// beyond them takes the place of a session with no exchange in progress
// (nginx's session ends with its answers, so it holds only those in
// progress), and its datagram is dropped when every session has one, so a
// flood of addresses costs no more than max sockets (a session holds a
// buffer only while it has answers to send on).
//
// One goroutine reads the clients' datagrams and one per session the
// backend's answers, each a batch at a time (stream_udpbatch.go): a
// batch's sessions are looked up under one lock, and the datagrams of
// one session are sent on in one write, with no allocation.
type udpRelay struct {
	s    *streams
	port int32
	conn *net.UDPConn
	sock *udpSocket
	max  int
	// out and sess are readLoop's, kept between batches.
	out  *udpOut
	sess []*udpSession

	// draining is set by drain: no session for a new client, and a
	// session ends once no exchange is in progress, or at the next event
	// of the one in progress.
	draining atomic.Bool
	// exchanges counts the sessions with an exchange in progress: when
	// it is every session, a full table has none to give up.
	exchanges atomic.Int64

	mu       sync.Mutex
	sessions map[netip.AddrPort]*udpSession
	closed   bool
}

func newUDPRelay(s *streams, port int32, conn *net.UDPConn) (*udpRelay, error) {
	sock, err := newUDPSocket(conn, &clientBatches)
	if err != nil {
		return nil, err
	}
	return &udpRelay{
		s: s, port: port, conn: conn, sock: sock, max: s.maxSessions,
		out: newUDPOut(), sess: make([]*udpSession, 0, udpBatchSlots),
		sessions: make(map[netip.AddrPort]*udpSession),
	}, nil
}

// Sessions returns how many client sessions are open.
func (r *udpRelay) Sessions() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.sessions)
}

// readLoop reads client datagrams until the socket closes.
func (r *udpRelay) readLoop() {
	for {
		b, err := r.sock.read()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue // an ICMP error reported on the socket, say
		}
		r.relay(b)
		r.sock.release(b)
	}
}

// relay sends a batch of client datagrams to their sessions' endpoints.
func (r *udpRelay) relay(b *udpBatch) {
	now := time.Now().UnixNano()
	sess := r.sess[:0]
	var full, failed int
	// refused are the clients of the datagrams dropped, for the access
	// log, logged once r.mu is released.
	var refused []streamRecord
	r.mu.Lock()
	for i := range b.n {
		from := netip.AddrPortFrom(b.addrs[i].Addr().Unmap(), b.addrs[i].Port())
		s := r.sessions[from]
		switch {
		case s != nil:
		case r.draining.Load():
		case len(r.sessions) >= r.max && !r.evict(sess):
			full++
			refused = r.refuse(refused, from, b.lens[i], streamUnavailable)
		default:
			var err error
			if s, err = r.open(from); err != nil {
				failed++
				refused = r.refuse(refused, from, b.lens[i], streamInternal)
				break
			}
			r.sessions[from] = s
			r.s.wg.Go(s.answerLoop)
		}
		sess = append(sess, s)
	}
	r.mu.Unlock()
	for i := range refused {
		r.s.logSession(&refused[i])
	}
	for range full {
		r.s.metrics.error(match.UDP, r.port, nil, "sessions_full")
	}
	for range failed {
		r.s.metrics.error(match.UDP, r.port, nil, "socket")
	}
	// The datagrams of a session that follow each other go in one write.
	for i := 0; i < len(sess); {
		j := i + 1
		for j < len(sess) && sess[j] == sess[i] {
			j++
		}
		if sess[i] != nil {
			sess[i].send(b, i, j, now, r.out)
		}
		i = j
	}
	clear(sess)
	r.sess = sess[:0]
}

// refuse adds a record of a datagram from client dropped with status to
// refused, when the stream access log is on.
func (r *udpRelay) refuse(refused []streamRecord, client netip.AddrPort, n, status int) []streamRecord {
	rec := r.s.record(match.UDP, r.port, net.UDPAddrFromAddrPort(client))
	if rec == nil {
		return refused
	}
	rec.received, rec.status = int64(n), status
	return append(refused, *rec)
}

// evict ends a session with no exchange in progress, to make room for a
// new client; busy are the sessions of the batch being relayed, which
// stay. It reports whether one was ended. r.mu is held.
func (r *udpRelay) evict(busy []*udpSession) bool {
	if r.exchanges.Load() >= int64(len(r.sessions)) {
		return false // a flood against a silent backend scans nothing
	}
	for _, s := range r.sessions {
		if slices.Contains(busy, s) {
			continue
		}
		s.mu.Lock()
		idle := !s.active && !s.ended
		s.ended = s.ended || idle
		s.mu.Unlock()
		if idle {
			delete(r.sessions, s.client)
			s.up.conn.Close()
			return true
		}
	}
	return false
}

// open makes a session's socket. r.mu is held.
func (r *udpRelay) open(client netip.AddrPort) (*udpSession, error) {
	// Of both families where the host has both, so that any endpoint can
	// be reached whatever the client's.
	up, err := net.ListenUDP("udp", nil)
	if err != nil {
		return nil, err
	}
	sock, err := newUDPSocket(up, &answerBatches)
	if err != nil {
		up.Close()
		return nil, err
	}
	s := &udpSession{r: r, client: client, up: sock}
	s.last.Store(time.Now().UnixNano())
	return s, nil
}

// end removes a session. Called by its answer loop, once.
func (r *udpRelay) end(s *udpSession) {
	r.mu.Lock()
	if r.sessions[s.client] == s {
		delete(r.sessions, s.client)
	}
	r.mu.Unlock()
}

// drain is nginx's worker shutdown: the listening socket closes at once,
// so no client's datagram is relayed any more; a session with no
// exchange in progress ends now, one with an exchange at its next event
// (answerLoop): an answer, dropped, as the socket it would go out from
// is closed, or its timeout.
func (r *udpRelay) drain() {
	r.draining.Store(true)
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range r.sessions {
		s.mu.Lock()
		if !s.active {
			s.up.conn.Close()
		}
		s.mu.Unlock()
	}
	if !r.closed {
		r.closed = true
		r.conn.Close()
	}
}

// close ends every session and the socket at once.
func (r *udpRelay) close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range r.sessions {
		s.up.conn.Close()
	}
	r.closed = true
	r.conn.Close()
}

// udpSession is one client address's socket towards the backend.
type udpSession struct {
	r      *udpRelay
	client netip.AddrPort
	up     *udpSocket
	last   atomic.Int64 // UnixNano of the last datagram either way

	mu sync.Mutex
	// ended is set once the answer loop ends the session, or evict: a
	// datagram the relay looked the session up for just before is
	// dropped, as it would start an exchange nothing ends, its endpoint
	// in flight for ever.
	ended bool
	// The exchange in progress: its endpoint (inflight while set), the
	// datagrams sent and answered, and how many answers each expects.
	ep        balance.Endpoint
	to        netip.AddrPort
	active    bool
	sent      int
	answered  int
	responses int
	metrics   *serviceMetrics
	// counted is the exchange in the stub_status counts.
	counted h1.ConnEntry
	// rec is the exchange's access log record; nil when the log is off.
	rec     *streamRecord
	timeout time.Duration
	// heard is UnixNano of the exchange's start or its last answer: an
	// exchange unanswered for proxy-stream-timeout ends at the client's
	// next datagram, which starts another with the balancer's pick, so
	// that a client asking again from the same address does not stay
	// with an endpoint that is gone or silent.
	heard int64
	// local is the address the client's last datagram was sent to, where
	// the listening socket says (bound to every address): answers go out
	// from it, as a client that connected its socket takes no other.
	local netip.Addr
	// peer is the endpoint the socket is connected to (udpSocket.connect),
	// the zero AddrPort before the first exchange.
	peer netip.AddrPort
}

// send forwards the client datagrams b's slots i to j-1 (this session's),
// starting an exchange when none is in progress, through out.
func (s *udpSession) send(b *udpBatch, i, j int, now int64, out *udpOut) {
	var m *serviceMetrics
	bytes := 0
	s.mu.Lock()
	if s.ended {
		s.mu.Unlock()
		return
	}
	for k := i; k < j; k++ {
		if s.active && now-s.heard >= int64(s.idleTimeout()) {
			s.metrics.failed("timeout")
			s.finish(streamBadGateway)
		}
		// Draining, a session takes no new exchange.
		if !s.active && s.r.draining.Load() {
			continue
		}
		if !s.active && !s.begin(now) {
			s.refused(b.lens[k])
			continue
		}
		if s.metrics != m {
			m.in(bytes)
			m, bytes = s.metrics, 0
		}
		s.sent++
		bytes += b.lens[k]
		s.rec.in(b.lens[k])
		s.local = b.locals[k]
		out.add(b.data(k), s.to, netip.Addr{})
		if s.responses == 0 {
			s.finish(streamOK)
		}
	}
	if len(out.data) > 0 {
		s.last.Store(now)
	}
	over, to := !s.active, s.to
	s.mu.Unlock()
	m.in(bytes)
	if failed, _ := s.up.send(out); failed > 0 {
		for range failed {
			m.failed("connect")
		}
		// nginx ends the session whose datagram its upstream socket did
		// not take (an ICMP error from the endpoint reported to the send,
		// say), so that the next one is balanced anew.
		s.mu.Lock()
		if s.active && s.to == to {
			s.finish(streamOK)
		}
		over = !s.active
		s.mu.Unlock()
	}
	out.reset()
	s.endIfDrained(over)
}

// endIfDrained ends the session when the relay drains and no exchange is
// in progress (over, as seen under s.mu after the last change to it):
// drain ends the sessions idle when it starts, this those whose exchange
// ends later.
func (s *udpSession) endIfDrained(over bool) {
	if over && s.r.draining.Load() {
		s.up.conn.Close()
	}
}

// begin picks the exchange's endpoint from the serving table. s.mu is held.
func (s *udpSession) begin(now int64) bool {
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
	if to != s.peer {
		// Unconnected, the exchange waits out proxy-stream-timeout on
		// an endpoint that refuses it, unheard: served on all the same.
		if err := s.up.connect(to, s.peer.IsValid()); err != nil {
			s.peer = netip.AddrPort{}
		} else {
			s.peer = to
		}
	}
	s.ep, s.to, s.active, s.heard = e, to, true, now
	s.r.exchanges.Add(1)
	s.sent, s.answered, s.responses = 0, 0, route.Settings.Responses
	s.metrics = m
	if s.rec = s.r.s.record(match.UDP, s.r.port, net.UDPAddrFromAddrPort(s.client)); s.rec != nil {
		s.rec.service, s.rec.upstream = route.Service, to.String()
	}
	if s.timeout != route.Settings.Timeout {
		s.timeout = route.Settings.Timeout
		s.arm()
	}
	m.accepted()
	s.r.s.sessionOpen(&s.counted)
	return true
}

// finish ends the exchange in progress, logged with status. s.mu is
// held.
func (s *udpSession) finish(status int) {
	if s.active {
		s.active = false
		s.r.exchanges.Add(-1)
		s.ep.Release()
		s.metrics.closed()
		s.r.s.sessionClose(&s.counted)
		s.rec.setStatus(status)
		s.r.s.logSession(s.rec)
		s.rec = nil
	}
}

// refused logs a datagram that started no exchange, no service or
// endpoint taking it: nginx's session with no upstream reached.
func (s *udpSession) refused(n int) {
	if rec := s.r.s.record(match.UDP, s.r.port, net.UDPAddrFromAddrPort(s.client)); rec != nil {
		rec.received, rec.status = int64(n), streamBadGateway
		s.r.s.logSession(rec)
	}
}

// answerLoop sends the backend's answers to the client until the session
// idles out or its socket closes. The read deadline is moved on only when
// it passes or proxy-stream-timeout changes, not at every answer.
func (s *udpSession) answerLoop() {
	// An exchange still waiting for answers at the session's end timed
	// out: nginx's 502 for a UDP session short of them.
	status := streamBadGateway
	defer s.r.end(s)
	defer func() {
		s.mu.Lock()
		s.ended = true
		s.finish(status)
		s.mu.Unlock()
		s.up.conn.Close()
	}()
	s.mu.Lock()
	s.arm()
	s.mu.Unlock()
	for {
		b, err := s.up.read()
		if s.r.draining.Load() && (err == nil || !errors.Is(err, os.ErrDeadlineExceeded) && !errors.Is(err, net.ErrClosed)) {
			// Shut down, nginx ends the session at its next event,
			// "disconnected on shutdown" (200), what came dropped.
			if err == nil {
				s.up.release(b)
			}
			status = streamOK
			return
		}
		if err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				s.mu.Lock()
				idle := time.Since(time.Unix(0, s.last.Load())) >= s.idleTimeout()
				if !idle {
					s.arm()
				}
				s.mu.Unlock()
				if idle {
					return
				}
				continue
			}
			if errors.Is(err, net.ErrClosed) {
				if s.r.draining.Load() {
					// Closed as the shutdown timeout ran out: nginx's
					// "shutdown timeout", logged 200.
					status = streamOK
				}
				return
			}
			s.refusedByEndpoint()
			continue
		}
		s.answer(b)
		s.up.release(b)
	}
}

// refusedByEndpoint takes an error the socket read, an ICMP error from
// the endpoint it is connected to (port unreachable): as nginx's upstream
// read that fails, it counts as one of the exchange's answers, none sent
// on, so that an exchange of one datagram ends at once (nginx's "udp
// done", logged 200) and the client's next is balanced anew.
func (s *udpSession) refusedByEndpoint() {
	s.mu.Lock()
	if s.active {
		s.metrics.failed("connect")
		s.answered++
		s.heard = time.Now().UnixNano()
		if s.answered >= s.responses*s.sent {
			s.finish(streamOK)
		}
	}
	over := !s.active
	s.mu.Unlock()
	s.endIfDrained(over)
}

// idleTimeout is proxy-stream-timeout as the last exchange had it. s.mu
// is held.
func (s *udpSession) idleTimeout() time.Duration {
	if s.timeout == 0 {
		return match.DefaultStreamSettings.Timeout
	}
	return s.timeout
}

// arm sets the read deadline to when the session idles out, but for
// datagrams to come. s.mu is held.
func (s *udpSession) arm() {
	_ = s.up.conn.SetReadDeadline(time.Unix(0, s.last.Load()).Add(s.idleTimeout()))
}

// answer sends a batch of the backend's answers on to the client.
func (s *udpSession) answer(b *udpBatch) {
	out := b.out
	bytes := 0
	now := time.Now().UnixNano()
	s.mu.Lock()
	m := s.metrics
	for i := range b.n {
		from := b.addrs[i]
		if !s.active || from.Port() != s.to.Port() || from.Addr().Unmap() != s.to.Addr().Unmap() {
			// An answer after its exchange ended, or from elsewhere.
			continue
		}
		s.answered++
		s.heard = now
		bytes += b.lens[i]
		s.rec.out(b.lens[i])
		out.add(b.data(i), s.client, s.local)
		if s.answered >= s.responses*s.sent {
			s.finish(streamOK)
		}
	}
	if len(out.data) > 0 {
		s.last.Store(now)
	}
	over := !s.active
	s.mu.Unlock()
	m.out(bytes)
	if failed, _ := s.r.sock.send(out); failed > 0 {
		for range failed {
			m.failed("reset")
		}
	}
	s.endIfDrained(over)
}
