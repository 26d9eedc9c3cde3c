package main

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"log/slog"
	"net"
	"time"

	"github.com/pires/go-proxyproto"

	"ramjet.dev/ramjet/router"
	"ramjet.dev/ramjet/router/h1"
	"ramjet.dev/ramjet/router/rawsock"
)

// tlsListener does the TLS handshake of each connection ln accepts, each in
// its own goroutine within handshakeTimeout, and hands the HTTPS server
// the connections whose handshake is done: as the bare *tls.Conn when ALPN
// chose HTTP/2, which net/http serves as HTTP/2 only on a *tls.Conn, and
// otherwise wrapped in h1.GuardFramingConn, which keeps the TLS state
// for Request.TLS and refuses the request framings nginx refuses. Serve it
// with http.Server.Serve, the server's TLSConfig naming "h2" so that
// net/http sets up HTTP/2.
type tlsListener struct {
	net.Listener
	config           *tls.Config
	handshakeTimeout time.Duration
	log              *slog.Logger
	// passthrough, when set, decides a connection by the local port it
	// arrived on and its SNI: spliced unterminated to an endpoint (an
	// ssl-passthrough host's, a Gateway TLS listener's), refused, or
	// terminated (router.Router.PassthroughFor); peek says whether the
	// serving table passes any connection through, so that only then is
	// the ClientHello read first.
	passthrough func(localPort int, serverName string) (addr string, release func(), v router.PassthroughVerdict)
	peek        func() bool
	// guard wraps HTTP/1 connections in h1.GuardFramingConn, for
	// net/http's server; the controller's own loop (-http1-server
	// ramjet) refuses those framings itself and gets the bare *tls.Conn.
	guard bool
	// conns, when set, counts the connections whose handshake is under
	// way, as nginx counts them: active, neither reading, writing nor
	// waiting. The server counts those handed to it as accepted.
	conns *h1.ConnStats

	ready  chan net.Conn
	errs   chan error
	ctx    context.Context // done once the listener is closed
	cancel context.CancelFunc
}

// newTLSListener starts accepting on ln; passthrough and peek: see
// tlsListener, nil for none; guard and conns: see tlsListener. Everything
// the handshakes read is set here, before the first one starts.
func newTLSListener(ln net.Listener, config *tls.Config, handshakeTimeout time.Duration, log *slog.Logger,
	passthrough func(localPort int, serverName string) (string, func(), router.PassthroughVerdict), peek func() bool, guard bool, conns *h1.ConnStats) *tlsListener {
	ctx, cancel := context.WithCancel(context.Background())
	l := &tlsListener{
		Listener: ln, config: config, handshakeTimeout: handshakeTimeout, log: log, passthrough: passthrough, peek: peek,
		ready: make(chan net.Conn), errs: make(chan error), ctx: ctx, cancel: cancel, guard: guard, conns: conns,
	}
	go l.acceptLoop()
	return l
}

func (l *tlsListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.ready:
		return c, nil
	case err := <-l.errs:
		return nil, err
	case <-l.ctx.Done():
		return nil, net.ErrClosed
	}
}

// Close stops accepting; handshakes under way are abandoned and their
// connections closed.
func (l *tlsListener) Close() error {
	l.cancel()
	return l.Listener.Close()
}

// acceptLoop accepts until the listener is closed. An accept error goes to
// Accept, whose caller decides, as net/http does, whether to retry.
func (l *tlsListener) acceptLoop() {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			select {
			case l.errs <- err:
				continue
			case <-l.ctx.Done():
				return
			}
		}
		go l.handshake(c)
	}
}

func (l *tlsListener) handshake(c net.Conn) {
	if l.handshakeTimeout > 0 {
		_ = c.SetDeadline(time.Now().Add(l.handshakeTimeout))
	}
	raw := c
	if l.passthrough != nil && (l.peek == nil || l.peek()) {
		name, replay, err := router.PeekClientHello(c)
		if err == nil {
			// The socket's port, not a PROXY header's destination
			// (LocalAddr then), as nginx picks a server by its socket.
			port := 0
			if a, ok := socketOf(c).LocalAddr().(*net.TCPAddr); ok {
				port = a.Port
			}
			switch addr, release, v := l.passthrough(port, name); v {
			case router.Splice:
				defer release()
				l.splice(replay, addr)
				return
			case router.Refuse:
				// A Gateway TLS listener's name without a route, or
				// whose backend is invalid or has no endpoint; an
				// ssl-passthrough host without an endpoint.
				if l.log.Enabled(l.ctx, slog.LevelDebug) {
					l.log.Debug("TLS passthrough: connection refused", "client", c.RemoteAddr().String(), "serverName", name)
				}
				_ = c.Close()
				return
			}
		}
		// Not a passthrough host, or not a ClientHello: the handshake
		// reads the same bytes again and answers as without passthrough.
		c = replay
	}
	// A passthrough connection is not nginx's to count.
	var entry h1.ConnEntry
	l.conns.Open(&entry, h1.ConnHandshake)
	defer l.conns.Close(&entry)
	// Its socket read and written raw, as the HTTP/1 loop reads plain
	// connections (rawsock): the TLS records of HTTPS and HTTP/2 alike.
	tc := tls.Server(rawsock.NetConn(c), l.config)
	if err := tc.HandshakeContext(l.ctx); err != nil {
		l.conns.Accepted()
		// A client speaking plain HTTP gets a plain answer, as from
		// net/http's own TLS listener.
		var re tls.RecordHeaderError
		if errors.As(err, &re) && re.Conn != nil && looksLikeHTTP(re.RecordHeader) {
			_, _ = io.WriteString(re.Conn, "HTTP/1.0 400 Bad Request\r\n\r\nClient sent an HTTP request to an HTTPS server.\n")
			err = errors.New("client sent an HTTP request to an HTTPS server")
		}
		if l.log.Enabled(l.ctx, slog.LevelDebug) {
			l.log.Debug("http: TLS handshake error", "client", c.RemoteAddr().String(), "err", err)
		}
		_ = c.Close()
		return
	}
	_ = raw.SetDeadline(time.Time{})
	// The client's Finished is acknowledged now: a client with Nagle's
	// algorithm on would otherwise hold its first request for the
	// kernel's delayed acknowledgement (rawsock.AckNow).
	rawsock.AckNow(raw)
	var hc net.Conn = tc
	if l.guard && tc.ConnectionState().NegotiatedProtocol != "h2" {
		hc = h1.GuardFramingConn(tc)
	}
	select {
	case l.ready <- hc:
	case <-l.ctx.Done():
		_ = c.Close()
	}
}

// splice passes a passthrough connection to the backend endpoint addr,
// TLS and all, as ingress-nginx's TCP proxy does.
func (l *tlsListener) splice(c *router.PeekedConn, addr string) {
	d := net.Dialer{Timeout: l.handshakeTimeout}
	if d.Timeout <= 0 {
		d.Timeout = 5 * time.Second
	}
	backend, err := d.DialContext(l.ctx, "tcp", addr)
	if err != nil {
		if l.log.Enabled(l.ctx, slog.LevelDebug) {
			l.log.Debug("ssl-passthrough: backend unreachable", "client", c.RemoteAddr().String(), "endpoint", addr, "err", err)
		}
		_ = c.Close()
		return
	}
	_ = c.SetDeadline(time.Time{})
	c.Splice(backend)
}

// looksLikeHTTP reports whether a TLS record header is the start of an
// HTTP/1 request, as net/http judges it.
func looksLikeHTTP(hdr [5]byte) bool {
	switch string(hdr[:]) {
	case "GET /", "HEAD ", "POST ", "PUT /", "OPTIO":
		return true
	}
	return false
}

// socketOf is the accepted socket under a PROXY protocol connection.
func socketOf(c net.Conn) net.Conn {
	if pc, ok := c.(*proxyproto.Conn); ok {
		return pc.Raw()
	}
	return c
}
