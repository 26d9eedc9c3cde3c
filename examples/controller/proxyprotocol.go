package main

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"net/netip"
	"slices"
	"time"

	"github.com/pires/go-proxyproto"

	"ramjet.dev/ramjet/router"
)

// proxyProtocolListener reads a PROXY protocol header (v1 or v2) at the
// start of each connection ln accepts, as nginx's "listen ... proxy_protocol"
// does (--use-proxy-protocol). Whose header is believed follows
// --proxy-real-ip-cidr, as nginx's set_real_ip_from:
//
//   - trusted empty: every peer must send the header and its address is the
//     client's, as with ingress-nginx's default proxy-real-ip-cidr of
//     0.0.0.0/0. Only a load balancer should be able to reach the listener.
//   - otherwise: a peer inside trusted must send the header, and its source
//     address becomes the request's RemoteAddr; a peer outside is served as
//     itself, any header it sends read and dropped.
//
// A connection from a trusted peer without a header fails: the PROXY
// protocol forbids guessing whether one comes. headerTimeout bounds the
// wait for it, as the HTTP server's header timeout bounds the request's.
// As nginx (ngx_http_wait_request_handler, ngx_http_ssl_handshake), the
// header is taken from the first read: one whose rest comes in a later
// segment is broken and the connection closed at once, not waited for.
func proxyProtocolListener(ln net.Listener, trusted []netip.Prefix, headerTimeout time.Duration) net.Listener {
	return &proxyproto.Listener{
		Listener:          firstReadListener{ln, trusted},
		ConnPolicy:        proxyPolicy(trusted),
		ReadHeaderTimeout: headerTimeout,
	}
}

// firstReadListener hands go-proxyproto connections whose first read must
// hold a whole PROXY header: from a peer that must send one (proxyPolicy's
// REQUIRE), always; from another, when the read begins as one.
type firstReadListener struct {
	net.Listener
	trusted []netip.Prefix
}

func (l firstReadListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &firstReadConn{Conn: c, require: mustSendProxy(l.trusted, c.RemoteAddr())}, nil
}

// firstReadConn checks the first read's bytes, go-proxyproto's look for
// the header, and hands them on; later reads are the socket's.
type firstReadConn struct {
	net.Conn
	require bool
	read    bool
	pending []byte
}

func (c *firstReadConn) Read(p []byte) (int, error) {
	if !c.read {
		c.read = true
		buf := make([]byte, proxyV2Max)
		n, err := c.Conn.Read(buf)
		for n == 0 && err == nil {
			n, err = c.Conn.Read(buf)
		}
		if n == 0 {
			return 0, err
		}
		if err := brokenProxyHeader(buf[:n], c.require); err != nil {
			return 0, err
		}
		c.pending = buf[:n]
	}
	if len(c.pending) > 0 {
		n := copy(p, c.pending)
		if c.pending = c.pending[n:]; len(c.pending) == 0 {
			c.pending = nil
		}
		return n, nil
	}
	return c.Conn.Read(p)
}

// brokenProxyHeader is nginx's "broken header" for a first read b: where
// a header is required, or b begins as one (as much of b as the
// signature's length is the v1 or v2 signature's start), b must start
// with a whole one, as readProxyV1 and readProxyV2 read it.
func brokenProxyHeader(b []byte, require bool) error {
	v2 := b[0] == proxyproto.SIGV2[0]
	if !require {
		sig := proxyproto.SIGV1
		if v2 {
			sig = proxyproto.SIGV2
		}
		if !bytes.HasPrefix(sig, b[:min(len(b), len(sig))]) {
			return nil
		}
	}
	var err error
	if v2 {
		_, _, err = readProxyV2(b)
	} else {
		_, _, err = readProxyV1(b)
	}
	return err
}

func proxyPolicy(trusted []netip.Prefix) proxyproto.ConnPolicyFunc {
	return func(o proxyproto.ConnPolicyOptions) (proxyproto.Policy, error) {
		if mustSendProxy(trusted, o.Upstream) {
			return proxyproto.REQUIRE, nil
		}
		return proxyproto.IGNORE, nil
	}
}

// mustSendProxy says whether peer must open with a PROXY header: every
// peer without -proxy-real-ip-cidr, else a peer inside it.
func mustSendProxy(trusted []netip.Prefix, peer net.Addr) bool {
	if len(trusted) == 0 {
		return true
	}
	a := addrOf(peer)
	return a.IsValid() && slices.ContainsFunc(trusted, func(p netip.Prefix) bool { return p.Contains(a) })
}

// proxyPeerIsClient is an http.Server's ConnContext for a PROXY protocol
// listener: a header that named no client (v1 UNKNOWN, v2 LOCAL, none
// from a peer outside -proxy-real-ip-cidr) leaves the load balancer as the
// peer, and then its requests' X-Forwarded-For is the client's own and is
// never believed, as ingress-nginx's real_ip_header then finds no address.
// The header is looked at only when a request asks, after it was read:
// reading it here would hold up the accept loop. The PROXY connection is
// found under the TLS connection and the framing guard, whichever wrap it.
func proxyPeerIsClient(ctx context.Context, c net.Conn) context.Context {
	pc, ok := c.(*proxyproto.Conn)
	for !ok {
		w, wraps := c.(interface{ NetConn() net.Conn })
		if !wraps {
			return ctx
		}
		c = w.NetConn()
		pc, ok = c.(*proxyproto.Conn)
	}
	// pc's LocalAddr is the header's destination; Gateway listeners go by
	// the socket's port, as nginx's $server_port.
	if a, ok := pc.Raw().LocalAddr().(*net.TCPAddr); ok {
		ctx = router.SocketPort(ctx, a.Port)
	}
	return router.PeerIsClient(ctx, func() bool {
		h := pc.ProxyHeader()
		// When go-proxyproto's RemoteAddr falls back to the connection's.
		return h == nil || h.Command.IsLocal() || h.SourceAddr == nil
	})
}

// addrOf is a listener peer's IP address, IPv4-mapped addresses unmapped.
func addrOf(a net.Addr) netip.Addr {
	if tcp, ok := a.(*net.TCPAddr); ok {
		ip, _ := netip.AddrFromSlice(tcp.IP)
		return ip.Unmap()
	}
	ap, err := netip.ParseAddrPort(a.String())
	if err != nil {
		return netip.Addr{}
	}
	return ap.Addr().Unmap()
}

// logClientAddressTrust says at start whose word the controller takes for
// the client's address, since getting it wrong either lets clients forge
// it or loses it.
func logClientAddressTrust(cfg config, log *slog.Logger) {
	cidrs := make([]string, len(cfg.proxyRealIPCIDR))
	for i, p := range cfg.proxyRealIPCIDR {
		cidrs[i] = p.String()
	}
	switch {
	case cfg.useProxyProtocol && len(cidrs) == 0:
		log.Warn("-use-proxy-protocol without -proxy-real-ip-cidr: every connection must start with a PROXY header and every peer's header is believed; " +
			"set -proxy-real-ip-cidr to the load balancer's addresses unless only it can reach the listeners")
	case cfg.useProxyProtocol && cfg.useForwardedHeaders:
		log.Info("PROXY protocol: peers in -proxy-real-ip-cidr must send the header and give the client address; other peers are served as themselves; "+
			"X-Forwarded-For gives the client address when the header's source is in -proxy-real-ip-cidr", "trusted", cidrs)
	case cfg.useProxyProtocol:
		log.Info("PROXY protocol: peers in -proxy-real-ip-cidr must send the header and give the client address; other peers are served as themselves; "+
			"X-Forwarded-For is never believed (-use-forwarded-headers is off)", "trusted", cidrs)
	case cfg.useForwardedHeaders && len(cidrs) > 0:
		log.Info("X-Forwarded-For gives the client address when the peer is in -proxy-real-ip-cidr", "trusted", cidrs)
	case len(cidrs) > 0:
		log.Warn("-proxy-real-ip-cidr without -use-forwarded-headers or -use-proxy-protocol: no header is believed, the client is the peer", "trusted", cidrs)
	case cfg.useForwardedHeaders:
		log.Info("-use-forwarded-headers without -proxy-real-ip-cidr: X-Forwarded-Proto is believed, X-Forwarded-For never (no peer is trusted with it)")
	}
}
