package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"ramjet.dev/ramjet/match"
	"ramjet.dev/ramjet/router"
	"ramjet.dev/ramjet/router/h1"
)

// TCP and UDP services (SPEC §22, --tcp-services-configmap and
// --udp-services-configmap). The table holds the services (compile reads
// the ConfigMaps); streams listens for them: one TCP listener or UDP
// socket per port, bound when the first table is published, each
// connection or datagram looked up in the serving table as it comes, so
// that endpoints follow every rebuild. A port that appears later waits for
// a restart, as ingress-nginx reloads nginx for it; one that disappears
// closes new connections until then, and its open ones after
// worker-shutdown-timeout.

// defaultUDPSessions bounds each UDP port's client table: the memory of
// a flood of new client addresses.
const defaultUDPSessions = 1024

// proxyHeaderTimeout bounds the wait for a client's first bytes, which
// must hold its whole PROXY header (readProxyHeader): nginx's
// stream proxy_protocol_timeout default (30s), which ingress-nginx leaves
// (its proxy-protocol-header-timeout is its TLS passthrough listener's).
const proxyHeaderTimeout = 30 * time.Second

// streams is the controller's TCP and UDP listeners.
type streams struct {
	rt  *router.Router
	log *slog.Logger
	// host is where the ports listen: -http-addr's host (else
	// -https-addr's); "" for every address.
	host string
	// ipv4Only is disable-ipv6: for every address means IPv4's only.
	ipv4Only bool
	// trusted is -proxy-real-ip-cidr: the peers whose PROXY header names
	// the client; none: every peer.
	trusted     []netip.Prefix
	maxSessions int
	metrics     *streamMetrics // nil without -enable-metrics
	// accessLog logs each TCP connection and UDP session; nil: off.
	accessLog func(*streamRecord)
	// endpoint maps an endpoint to the address dialled (config.streamEndpoint).
	endpoint func(string) string
	// stubStatus are the traffic listeners' stub_status counts (countIn),
	// which take each TCP connection and UDP exchange as nginx's count its
	// stream sessions: accepted, then active and waiting until it ends.
	stubStatus atomic.Pointer[h1.ConnStats]

	// goneGrace is how long the open connections of a TCP port whose
	// entry went are served on: worker-shutdown-timeout, as long as
	// nginx's old workers serve theirs after the reload that drops the
	// port.
	goneGrace time.Duration

	mu      sync.Mutex
	started bool
	closed  bool
	tcp     map[int32]*tcpListener
	udp     map[int32]*udpRelay
	// warned are the ports already warned about, by protocol and port.
	warned map[portKey]string
	// gone are the timers that close the open connections of the TCP
	// ports whose entry went, by port.
	gone map[int32]*time.Timer
	// conns are the open TCP connections, client and backend, closed
	// when the shutdown timeout runs out.
	conns map[*tcpConn]struct{}
	wg    sync.WaitGroup
}

type portKey struct {
	proto match.L4Protocol
	port  int32
}

func newStreams(cfg config, rt *router.Router, log *slog.Logger, m *metrics) *streams {
	host, _, err := net.SplitHostPort(cfg.httpAddr)
	if cfg.httpAddr == "" || err != nil {
		host, _, _ = net.SplitHostPort(cfg.httpsAddr)
	}
	max := cfg.udpMaxSessions
	if max <= 0 {
		max = defaultUDPSessions
	}
	return &streams{
		rt: rt, log: log, host: host, ipv4Only: cfg.routerKeys.DisableIPv6, trusted: cfg.proxyRealIPCIDR, maxSessions: max, goneGrace: cfg.connections().ShutdownTimeout,
		metrics: m.streamMetrics(), endpoint: cfg.streamEndpoint, accessLog: streamAccessLog(cfg),
		tcp: make(map[int32]*tcpListener), udp: make(map[int32]*udpRelay),
		warned: make(map[portKey]string), gone: make(map[int32]*time.Timer), conns: make(map[*tcpConn]struct{}),
	}
}

// update follows a published table: at the first, it binds every port
// (an error names the ports it could not bind, the others serving);
// later, it warns once about each port that came or went.
func (s *streams) update(t *match.Table) error {
	if s == nil || t == nil {
		return nil
	}
	s.metrics.keep(t)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	want := make(map[portKey]bool)
	for svc := range t.L4Services() {
		want[portKey{svc.Protocol, svc.Port}] = true
	}
	if !s.started {
		s.started = true
		var errs []error
		for _, k := range slices.SortedFunc(maps.Keys(want), func(a, b portKey) int { return int(a.port) - int(b.port) }) {
			if err := s.bind(k); err != nil {
				errs = append(errs, fmt.Errorf("%s service port %d: %w", k.proto, k.port, err))
				s.warned[k] = "failed"
			}
		}
		if bound := s.boundPorts(); len(bound) > 0 {
			s.log.Info("listening for TCP and UDP services", "ports", bound)
		}
		return errors.Join(errs...)
	}
	for k := range want {
		// A port that failed at start was reported then.
		if s.bound(k) || s.warned[k] == "new" || s.warned[k] == "failed" {
			continue
		}
		s.warned[k] = "new"
		s.log.Warn("a "+k.proto.String()+" service on a new port waits for a restart: ports are bound at start, as ingress-nginx reloads nginx for a new one", "port", k.port)
	}
	for _, k := range s.boundPorts() {
		if want[k] {
			if s.warned[k] == "gone" {
				delete(s.warned, k)
				if tm := s.gone[k.port]; k.proto == match.TCP && tm != nil {
					tm.Stop()
					delete(s.gone, k.port)
				}
				s.log.Info("the "+k.proto.String()+" service is back on its port", "port", k.port)
			}
			continue
		}
		if s.warned[k] != "gone" {
			s.warned[k] = "gone"
			if k.proto == match.UDP {
				s.log.Warn("the udp service of this port is gone: new exchanges are dropped, and the port stays bound until a restart", "port", k.port)
				continue
			}
			s.log.Warn("the tcp service of this port is gone: new connections are closed, open ones are served on for the grace nginx's old workers get (worker-shutdown-timeout), and the port stays bound until a restart", "port", k.port, "grace", s.goneGrace)
			s.closeAfter(k.port)
		}
	}
	return nil
}

// closeAfter closes the open connections of TCP port once goneGrace has
// passed, unless its entry is back by then; a goneGrace of 0
// (worker-shutdown-timeout "0") leaves them open. s.mu is held.
func (s *streams) closeAfter(port int32) {
	if s.goneGrace <= 0 {
		return
	}
	var t *time.Timer
	t = time.AfterFunc(s.goneGrace, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.gone[port] != t {
			return // back meanwhile
		}
		delete(s.gone, port)
		for c := range s.conns {
			if c.port == port {
				c.abort()
			}
		}
	})
	s.gone[port] = t
}

// close releases every listener at once, for a start that failed. s.mu
// is held.
func (s *streams) close() {
	s.closed = true
	for _, l := range s.tcp {
		l.ln.Close()
	}
	for _, r := range s.udp {
		r.close()
	}
}

func (k portKey) String() string { return k.proto.String() + "/" + strconv.Itoa(int(k.port)) }

func (s *streams) bound(k portKey) bool {
	if k.proto == match.TCP {
		return s.tcp[k.port] != nil
	}
	return s.udp[k.port] != nil
}

func (s *streams) boundPorts() []portKey {
	var out []portKey
	for p := range s.tcp {
		out = append(out, portKey{match.TCP, p})
	}
	for p := range s.udp {
		out = append(out, portKey{match.UDP, p})
	}
	slices.SortFunc(out, func(a, b portKey) int { return int(a.port) - int(b.port) })
	return out
}

// bind opens the port's listener and starts serving it. s.mu is held.
func (s *streams) bind(k portKey) error {
	addr := net.JoinHostPort(s.host, strconv.Itoa(int(k.port)))
	if k.proto == match.TCP {
		ln, err := net.Listen(listenAddr("tcp", addr, s.ipv4Only))
		if err != nil {
			return err
		}
		l := &tcpListener{s: s, port: k.port, ln: ln.(*net.TCPListener)}
		s.tcp[k.port] = l
		s.wg.Go(l.acceptLoop)
		return nil
	}
	pc, err := net.ListenPacket(listenAddr("udp", addr, s.ipv4Only))
	if err != nil {
		return err
	}
	r, err := newUDPRelay(s, k.port, pc.(*net.UDPConn))
	if err != nil {
		pc.Close()
		return err
	}
	s.udp[k.port] = r
	s.wg.Go(r.readLoop)
	return nil
}

// Addrs are the bound addresses, "tcp/9000" or "udp/53" to "host:port".
func (s *streams) Addrs() map[string]string {
	out := make(map[string]string)
	if s == nil {
		return out
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for p, l := range s.tcp {
		out["tcp/"+strconv.Itoa(int(p))] = l.ln.Addr().String()
	}
	for p, r := range s.udp {
		out["udp/"+strconv.Itoa(int(p))] = r.conn.LocalAddr().String()
	}
	return out
}

// Shutdown stops accepting connections and closes the UDP sockets, then
// waits for the open connections and UDP exchanges to end (an exchange at
// its next event, udpRelay.drain) until ctx is done, when it closes them.
func (s *streams) Shutdown(ctx context.Context) error {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	s.closed = true
	for _, l := range s.tcp {
		l.ln.Close()
	}
	for _, r := range s.udp {
		r.drain()
	}
	s.mu.Unlock()
	done := make(chan struct{})
	go func() {
		s.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
	}
	s.mu.Lock()
	n, sessions := len(s.conns), 0
	for c := range s.conns {
		c.abort()
	}
	for _, r := range s.udp {
		sessions += r.Sessions()
		r.close()
	}
	s.mu.Unlock()
	<-done
	return fmt.Errorf("streams: %d TCP connections and %d UDP sessions were still open when the shutdown timeout ran out", n, sessions)
}

// countIn counts the connections and exchanges in stats from now on.
func (s *streams) countIn(stats *h1.ConnStats) {
	if s != nil {
		s.stubStatus.Store(stats)
	}
}

// sessionOpen counts a connection or UDP exchange as nginx's stub_status
// counts a stream session, until sessionClose(e).
func (s *streams) sessionOpen(e *h1.ConnEntry) {
	stats := s.stubStatus.Load()
	stats.Accepted()
	stats.Open(e, 0)
}

func (s *streams) sessionClose(e *h1.ConnEntry) { s.stubStatus.Load().Close(e) }

// dialAddr is the address endpoint addr is reached at.
func (s *streams) dialAddr(addr string) string {
	if s.endpoint != nil {
		return s.endpoint(addr)
	}
	return addr
}

// trustedPeer reports whether a PROXY header from peer names the client.
func (s *streams) trustedPeer(peer net.Addr) bool {
	if len(s.trusted) == 0 {
		return true
	}
	a := addrOf(peer)
	return slices.ContainsFunc(s.trusted, func(p netip.Prefix) bool { return p.Contains(a) })
}

func (s *streams) track(c *tcpConn) {
	s.mu.Lock()
	s.conns[c] = struct{}{}
	s.mu.Unlock()
}

func (s *streams) untrack(c *tcpConn) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
}

// nginxReservedPorts are the ports ingress-nginx refuses a TCP or UDP
// service on whatever its flags, nginx's own at their defaults
// (getStreamServices): 442 SSL passthrough, 8181 default server, 10245
// profiler, 10246 status, 10247 stream. An entry on one never served
// there, so it is refused here too, as examples/check refuses it.
var nginxReservedPorts = []int{442, 8181, 10245, 10246, 10247}

// ownPorts are the ports of the controller's own listeners, which no TCP
// or UDP service may take (compile.Options.ReservedPorts).
func ownPorts(addrs ...string) []int {
	var ports []int
	for _, a := range addrs {
		if _, p, err := net.SplitHostPort(a); err == nil {
			if n, err := strconv.Atoi(p); err == nil && n > 0 {
				ports = append(ports, n)
			}
		}
	}
	return ports
}

// record starts the access log's record of a connection or session
// from client; nil when the stream access log is off.
func (s *streams) record(proto match.L4Protocol, port int32, client net.Addr) *streamRecord {
	if s.accessLog == nil {
		return nil
	}
	return &streamRecord{proto: proto, port: port, client: client, start: time.Now(), status: streamOK}
}

// logSession ends r and writes its line.
func (s *streams) logSession(r *streamRecord) {
	if r != nil {
		r.end = time.Now()
		s.accessLog(r)
	}
}

// errIdle ends a connection or session idle for the stream timeout.
var errIdle = errors.New("idle for proxy-stream-timeout")
