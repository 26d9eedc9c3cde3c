package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pires/go-proxyproto"

	"ramjet.dev/ramjet/balance"
	"ramjet.dev/ramjet/match"
	"ramjet.dev/ramjet/router"
	"ramjet.dev/ramjet/router/h1"
)

// tcpListener serves one TCP service port.
type tcpListener struct {
	s    *streams
	port int32
	ln   *net.TCPListener
}

func (l *tcpListener) acceptLoop() {
	var delay time.Duration
	for {
		c, err := l.ln.AcceptTCP()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			// Out of file descriptors, say: back off as net/http does.
			delay = min(max(2*delay, 5*time.Millisecond), time.Second)
			l.s.log.Warn("tcp service: accept failed", "port", l.port, "err", err, "retry", delay)
			time.Sleep(delay)
			continue
		}
		delay = 0
		l.s.wg.Go(func() { l.serve(c) })
	}
}

// serve proxies one client connection: the PROXY header read when the
// entry asks, an endpoint dialled (with retries), then both ways spliced
// until both ends finish or the connection idles out.
func (l *tcpListener) serve(c *net.TCPConn) {
	ctx, cancel := context.WithCancel(context.Background())
	client := &tcpConn{client: c, port: l.port, cancel: cancel}
	l.s.track(client)
	defer l.s.untrack(client)
	defer client.abort()
	var counted h1.ConnEntry
	l.s.sessionOpen(&counted)
	defer l.s.sessionClose(&counted)

	rec := l.s.record(match.TCP, l.port, c.RemoteAddr())
	defer l.s.logSession(rec)
	route, ok := l.s.rt.Stream(match.TCP, l.port)
	if !ok {
		l.s.metrics.error(match.TCP, l.port, nil, "no_service")
		rec.setStatus(streamBadGateway)
		return
	}
	if rec != nil {
		rec.service = route.Service
	}
	m := l.s.metrics.service(route.Service)
	m.accepted()
	defer m.closed()

	from := c.RemoteAddr()
	var early []byte
	if route.Service.DecodeProxyProtocol {
		src, rest, err := readProxyHeader(c, proxyHeaderTimeout)
		if err != nil {
			m.failed("proxy_protocol")
			l.s.log.Debug("tcp service: no valid PROXY header; connection closed", "port", l.port, "peer", from.String(), "err", err)
			// nginx: a client that times out or fails its read is
			// done with, one whose header does not parse a bad request.
			var ne net.Error
			if !errors.As(err, &ne) {
				rec.setStatus(streamBadRequest)
			}
			return
		}
		if rec != nil {
			rec.proxyProtocol = src
		}
		if src != nil && l.s.trustedPeer(from) {
			from = src
			if rec != nil {
				rec.proxied = src
			}
		}
		early = rest
		// nginx picks the peer as it connects, after the header, among
		// the endpoints its balancer holds then; an entry changed
		// meanwhile is a reload, whose old workers keep the old one.
		if now, ok := l.s.rt.Stream(match.TCP, l.port); ok && now.Service.Backend.ID == route.Service.Backend.ID {
			route.Balancer = now.Balancer
		}
	}
	if route.Balancer == nil || route.Balancer.Len() == 0 {
		m.failed("no_endpoint")
		rec.setStatus(streamBadGateway)
		return
	}
	dialed := time.Now()
	backend, ep, err := dialStream(ctx, route, l.s.dialAddr)
	if err != nil {
		m.failed("connect")
		l.s.log.Debug("tcp service: no endpoint could be reached; connection closed", "port", l.port, "err", err)
		rec.setStatus(streamBadGateway)
		return
	}
	defer ep.Release()
	if rec != nil {
		rec.upstream, rec.connect, rec.connected = ep.Addr, time.Since(dialed), true
	}
	if !client.setBackend(backend) {
		return // aborted as the dial ended: backend closed
	}
	if route.Service.EncodeProxyProtocol {
		// nginx's proxy_protocol on: version 1, the client and the address
		// it connected to.
		if _, err := proxyproto.HeaderProxyFromAddrs(1, from, c.LocalAddr()).WriteTo(backend); err != nil {
			m.failed("connect")
			rec.setStatus(streamBadGateway)
			return
		}
	}
	in, out := m.in, m.out
	if rec != nil {
		in = func(n int) { m.in(n); rec.in(n) }
		out = func(n int) { m.out(n); rec.out(n) }
	}
	if len(early) > 0 {
		if _, err := backend.Write(early); err != nil {
			m.failed("reset")
			return
		}
		in(len(early))
	}
	if err := splice(c, backend, route.Settings.Timeout, in, out); err != nil && !errors.Is(err, errIdle) {
		m.failed("reset")
	}
}

// readProxyHeader reads a PROXY protocol v1 or v2 header at the start of
// c within timeout. src is the client it names (nil for v1 UNKNOWN or v2
// LOCAL); rest are bytes read past it, which belong to the stream. As
// nginx's stream module (ngx_stream_proxy_protocol_handler), the header
// is taken from one read of up to proxyV2Max bytes once the connection
// is readable: one whose rest comes in a later segment is broken, not
// waited for, and timeout bounds only the wait for the first bytes.
func readProxyHeader(c net.Conn, timeout time.Duration) (src net.Addr, rest []byte, err error) {
	if err := c.SetReadDeadline(time.Now().Add(timeout)); err != nil {
		return nil, nil, err
	}
	buf := make([]byte, proxyV2Max)
	n, err := c.Read(buf)
	for n == 0 && err == nil {
		n, err = c.Read(buf)
	}
	if n == 0 {
		return nil, nil, err
	}
	b := buf[:n]
	var used int
	if b[0] == proxyproto.SIGV2[0] {
		src, used, err = readProxyV2(b)
	} else {
		src, used, err = readProxyV1(b)
	}
	if err != nil {
		return nil, nil, err
	}
	if err := c.SetReadDeadline(time.Time{}); err != nil {
		return nil, nil, err
	}
	if used < n {
		rest = append([]byte(nil), b[used:]...)
	}
	return src, rest, nil
}

// readProxyV1 reads a v1 header at the start of b as nginx's
// ngx_proxy_protocol_read does; used is its length. "PROXY UNKNOWN" and
// anything up to CRLF names no client; "PROXY TCP4 " or "PROXY TCP6 ",
// two addresses of address characters (hex digits, '.' and ':'), two
// decimal ports up to 65535 and CRLF name the first address and port.
// nginx checks neither the addresses against the family nor that they
// are IPs; one that is none names no client (the stream realip module
// keeps the peer then), where a stricter parser would close a connection
// nginx serves. A line longer than proxyV1Max is broken.
func readProxyV1(b []byte) (src net.Addr, used int, err error) {
	i := bytes.IndexByte(b[:min(len(b), proxyV1Max)], '\n')
	if i < 0 {
		return nil, 0, fmt.Errorf("broken PROXY protocol v1 header %q", b)
	}
	line := b[:i+1]
	bad := fmt.Errorf("broken PROXY protocol v1 header %q", line)
	rest, ok := bytes.CutPrefix(line, []byte("PROXY "))
	if !ok || !bytes.HasSuffix(line, []byte("\r\n")) {
		return nil, 0, bad
	}
	used = len(line)
	rest = rest[:len(rest)-2]
	if bytes.HasPrefix(rest, []byte("UNKNOWN")) {
		return nil, used, nil
	}
	rest, ok = bytes.CutPrefix(rest, []byte("TCP4 "))
	if !ok {
		if rest, ok = bytes.CutPrefix(rest, []byte("TCP6 ")); !ok {
			return nil, 0, bad
		}
	}
	f := bytes.Split(rest, []byte(" "))
	if len(f) != 4 {
		return nil, 0, bad
	}
	for _, a := range f[:2] {
		if len(a) == 0 || bytes.IndexFunc(a, func(r rune) bool { return !strings.ContainsRune("0123456789abcdefABCDEF.:", r) }) >= 0 {
			return nil, 0, bad
		}
	}
	var port [2]int
	for i, p := range f[2:] {
		n, err := strconv.Atoi(string(p))
		if err != nil || n > 65535 || bytes.IndexFunc(p, func(r rune) bool { return r < '0' || r > '9' }) >= 0 {
			return nil, 0, bad
		}
		port[i] = n
	}
	ip, err := netip.ParseAddr(string(f[0]))
	if err != nil {
		return nil, used, nil
	}
	return net.TCPAddrFromAddrPort(netip.AddrPortFrom(ip, uint16(port[0]))), used, nil
}

// proxyV1Max is the longest v1 header nginx reads, CRLF included
// (NGX_PROXY_PROTOCOL_V1_MAX_HEADER).
const proxyV1Max = 107

// proxyV2Max is the longest header nginx reads, and the most of a
// connection's first bytes it reads for one (NGX_PROXY_PROTOCOL_MAX_HEADER);
// a longer v2 header closes the connection.
const proxyV2Max = 4096

// readProxyV2 reads a v2 header at the start of b as nginx's
// ngx_proxy_protocol_v2_read does; used is its length. Only the PROXY
// command over TCP of IPv4 or IPv6 names a client. Any other command,
// transport or family (LOCAL, UNSPEC, UDP, unix, or a value the
// specification leaves undefined) is skipped whole and names none, the
// connection served on with its peer as the client, where a stricter
// parser would close a connection nginx serves. A header longer than b
// is broken (nginx's "header is too large").
func readProxyV2(b []byte) (src net.Addr, used int, err error) {
	if len(b) < 16 {
		return nil, 0, errors.New("PROXY protocol v2 header cut short")
	}
	h := b[:16]
	if !bytes.Equal(h[:12], proxyproto.SIGV2) {
		return nil, 0, proxyproto.ErrNoProxyProtocol
	}
	if v := h[12] >> 4; v != 2 {
		return nil, 0, fmt.Errorf("unknown PROXY protocol version %d", v)
	}
	n := int(binary.BigEndian.Uint16(h[14:16]))
	if 16+n > proxyV2Max {
		return nil, 0, errors.New("PROXY protocol v2 header too large")
	}
	if 16+n > len(b) {
		return nil, 0, errors.New("PROXY protocol v2 header cut short")
	}
	command, family, transport := h[12]&0x0f, h[13]>>4, h[13]&0x0f
	size := 0 // of the family's addresses
	if command == 1 && transport == 1 {
		switch family {
		case 1:
			size = 12
		case 2:
			size = 36
		}
	}
	if size > n {
		return nil, 0, errors.New("PROXY protocol v2 address block too short")
	}
	if size > 0 {
		a := b[16 : 16+size]
		ip := a[:4]
		if size == 36 {
			ip = a[:16]
		}
		src = &net.TCPAddr{IP: append(net.IP(nil), ip...), Port: int(binary.BigEndian.Uint16(a[size-4:]))}
	}
	return src, 16 + n, nil
}

// dialStream connects to an endpoint of the route's backend: each try
// within the connect timeout, on failure the balancer's next pick
// (proxy-stream-next-upstream), at most NextUpstreamTries tries,
// another begun only within NextUpstreamTimeout: as nginx, that timeout
// does not cut a try under way. As ingress-nginx's tcp_udp_balancer.lua,
// each try takes the round-robin's next endpoint whether tried or not
// (with more tries than endpoints, a, b, a), and only the tries and the
// timeout bound them, not the endpoints' count. With neither bound the
// tries stop after one round of the endpoints, where nginx would go on
// dialling a refusing backend for ever. The endpoint counts as in flight
// until its Release.
func dialStream(ctx context.Context, route router.Stream, dialAddr func(string) string) (*net.TCPConn, balance.Endpoint, error) {
	st := route.Settings
	tries := 1
	var deadline time.Time
	if st.NextUpstream {
		tries = st.NextUpstreamTries
		if st.NextUpstreamTimeout > 0 {
			deadline = time.Now().Add(st.NextUpstreamTimeout)
		}
		if tries == 0 && deadline.IsZero() {
			tries = route.Balancer.Len()
		}
	}
	var lastErr error = errors.New("no endpoint")
	for n := 0; tries == 0 || n < tries; n++ {
		e, ok := route.Balancer.Pick("")
		if !ok {
			break
		}
		d := net.Dialer{Timeout: st.ConnectTimeout}
		conn, err := d.DialContext(ctx, "tcp", dialAddr(e.Addr))
		if err == nil {
			return conn.(*net.TCPConn), e, nil
		}
		e.Release()
		lastErr = err
		if ctx.Err() != nil || !deadline.IsZero() && !time.Now().Before(deadline) {
			break
		}
	}
	return nil, balance.Endpoint{}, lastErr
}

// tcpConn is a client connection and, once dialled, its backend's; abort
// closes both, and stops a dial under way (cancel), so that a shutdown's
// timeout is not held by an endpoint that drops SYNs.
type tcpConn struct {
	client  *net.TCPConn
	port    int32
	cancel  context.CancelFunc
	mu      sync.Mutex
	back    *net.TCPConn
	aborted bool
}

// setBackend keeps b for abort; after abort it closes b and is false.
func (c *tcpConn) setBackend(b *net.TCPConn) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.aborted {
		b.Close()
		return false
	}
	c.back = b
	return true
}

func (c *tcpConn) abort() {
	c.cancel()
	c.client.Close()
	c.mu.Lock()
	c.aborted = true
	if c.back != nil {
		c.back.Close()
	}
	c.mu.Unlock()
}

// splice copies both ways between client and backend until both have
// ended their side (each end's close is passed on as a half-close), one
// fails, or no byte moved either way for idle. Between TCP connections on
// Linux the copy is splice(2) through a pipe of each direction's own: no
// copy through user space, no allocation per read, and bytes read from
// one end wait in the pipe, not lost, when the other end's write has to
// wait past a deadline. The deadlines are not moved per read: they fire
// every quarter of idle, and a connection whose last byte moved idle ago
// or more is then closed, between idle and one and a quarter idle after
// its last byte. in and out count the bytes from the client and to it.
func splice(client, backend *net.TCPConn, idle time.Duration, in, out func(int)) error {
	p := &pipe{idle: idle}
	p.last.Store(time.Now().UnixNano())
	run := func(dst, src *net.TCPConn, count func(int)) error {
		err := p.copy(dst, src, count)
		if err != nil {
			// Closing both ends the other direction too.
			client.Close()
			backend.Close()
		}
		return err
	}
	errc := make(chan error, 1)
	go func() { errc <- run(backend, client, in) }()
	err := run(client, backend, out)
	err2 := <-errc
	switch {
	case errors.Is(err, errIdle) || errors.Is(err2, errIdle):
		return errIdle
	case err != nil && !errors.Is(err, net.ErrClosed):
		return err
	case err2 != nil && !errors.Is(err2, net.ErrClosed):
		return err2
	}
	return nil
}

// pipe is what the two directions of a spliced connection share: when a
// byte last moved either way.
type pipe struct {
	idle time.Duration
	last atomic.Int64 // UnixNano
}

// mover moves one direction's bytes: fill reads what src has (waiting
// for some) into its buffer when that is empty, flush writes the buffer
// to dst. Bytes stay buffered across a deadline's error.
type mover interface {
	// fill reads into the empty buffer; 0 bytes and no error is src's end.
	fill() (int, error)
	// flush writes the buffer out, n of it before an error.
	flush() (int, error)
	buffered() int
	close()
}

// copy moves src's bytes to dst until src ends, then half-closes dst.
func (p *pipe) copy(dst, src *net.TCPConn, count func(int)) error {
	mv, err := newMover(dst, src)
	if err != nil {
		return err
	}
	defer mv.close()
	return p.move(mv, dst, src, count)
}

// move is copy with the given mover.
func (p *pipe) move(mv mover, dst, src *net.TCPConn, count func(int)) error {
	period := max(p.idle/4, time.Millisecond)
	deadlines := func(now time.Time) {
		_ = src.SetReadDeadline(now.Add(period))
		_ = dst.SetWriteDeadline(now.Add(period))
	}
	deadlines(time.Now())
	// expired reports whether the connection idled out, else sets the
	// next deadlines.
	expired := func() bool {
		now := time.Now()
		if time.Duration(now.UnixNano()-p.last.Load()) >= p.idle {
			return true
		}
		deadlines(now)
		return false
	}
	for {
		if mv.buffered() == 0 {
			n, err := mv.fill()
			switch {
			case n > 0:
				p.last.Store(time.Now().UnixNano())
			case err == nil: // src's end
				_ = dst.CloseWrite()
				return nil
			case errors.Is(err, os.ErrDeadlineExceeded):
				if expired() {
					return errIdle
				}
				continue
			default:
				return err
			}
		}
		n, err := mv.flush()
		if n > 0 {
			count(n)
			p.last.Store(time.Now().UnixNano())
		}
		if err != nil {
			if !errors.Is(err, os.ErrDeadlineExceeded) {
				return err
			}
			if expired() {
				return errIdle
			}
		}
	}
}
