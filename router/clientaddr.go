package router

import (
	"context"
	"net/http"
	"net/netip"
	"strings"
)

// ClientAddr is the address a request is judged by (source ranges, rate
// limits, X-Real-IP, X-Forwarded-For, records): the peer, or, with
// Options.TrustForwardedFor and the peer inside Options.ProxyRealIPCIDR,
// the client its X-Forwarded-For (Options.ForwardedForHeader) names, as nginx's realip module with
// real_ip_recursive on: the last address in that header not itself inside
// those ranges (the first one when all are). An entry that is not an
// address stops the walk at the address read before it (the peer when it
// is the last entry). A connection marked with PeerIsClient counts as the
// peer. The zero Addr means the peer address could not be read.
func (r *Router) ClientAddr(req *http.Request) netip.Addr {
	peer := peerAddr(req.RemoteAddr)
	live := r.live.Load()
	if len(live.realIPFrom) == 0 || !peer.IsValid() || !live.trustedProxy(peer) {
		return peer
	}
	if f, _ := req.Context().Value(peerIsClientKey{}).(func() bool); f != nil && f() {
		return peer
	}
	client := peer
	xff := req.Header[live.forwardedFor]
	for i := len(xff) - 1; i >= 0; i-- {
		// Entries end at ',' or ' ', read from the right as nginx's
		// ngx_http_get_forwarded_addr_internal reads them: one that is not
		// an address (or a line that starts with a separator) ends the
		// walk, and the last address read stands: the peer or a trusted
		// hop, never a value written left of it.
		rest := xff[i]
		for {
			rest = strings.TrimRight(rest, " ,")
			j := strings.LastIndexAny(rest, " ,")
			part := rest
			if j > 0 {
				part = rest[j+1:]
			}
			a, ok := parseForwardedAddr(part)
			if !ok {
				return client
			}
			client = a
			if !live.trustedProxy(a) {
				return a
			}
			if j <= 0 {
				break
			}
			rest = rest[:j]
		}
	}
	return client
}

type peerIsClientKey struct{}

// PeerIsClient marks a connection's context (from http.Server.ConnContext)
// so that a request on it is judged by the peer address alone, whatever
// Options.TrustForwardedFor says, when f reports true. A PROXY protocol
// listener uses it for a header that named no client (v1 UNKNOWN, v2
// LOCAL): the peer is then the load balancer itself, which wrote no
// X-Forwarded-For, so the header came from the client; ingress-nginx then
// takes the connection's address too. A marked connection is read as
// PROXY protocol's in one more way: when f reports false and the local
// address (the header's destination) has port 443, the request counts as
// https, as ingress-nginx's use-proxy-protocol does. f is called only when the answer
// matters (the peer is trusted), once the request has been read, so it
// may look at what the connection read first without holding up the
// server's accept loop; it must be safe to call from several goroutines.
func PeerIsClient(ctx context.Context, f func() bool) context.Context {
	peersMarked.Store(true)
	return context.WithValue(ctx, peerIsClientKey{}, f)
}

// realIP is X-Real-IP's value when it may differ from the peer's: "" without
// Options.TrustForwardedFor, so the common path parses nothing.
func (r *Router) realIP(req *http.Request) string {
	if len(r.live.Load().realIPFrom) == 0 {
		return ""
	}
	if a := r.ClientAddr(req); a.IsValid() {
		return a.String()
	}
	return ""
}

func (l *liveSettings) trustedProxy(a netip.Addr) bool {
	for _, p := range l.realIPFrom {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// peerAddr reads http.Request.RemoteAddr ("ip:port", or a bare address
// when a handler is driven without a listener); IPv4-mapped IPv6 addresses
// count as IPv4, so "::ffff:10.0.0.1" is inside 10.0.0.0/8.
func peerAddr(remote string) netip.Addr {
	a, err := netip.ParseAddr(peerHost(remote))
	if err != nil {
		return netip.Addr{}
	}
	return a.Unmap()
}

// peerHost is the address part of a peer address: "ip:port",
// "[ipv6]:port", or a bare address. The port is dropped by hand: parsing
// it (netip.ParseAddrPort) costs as much as the address on every request.
func peerHost(remote string) string {
	if strings.HasPrefix(remote, "[") {
		if j := strings.IndexByte(remote, ']'); j > 0 {
			return remote[1:j]
		}
	} else if i := strings.LastIndexByte(remote, ':'); i >= 0 && strings.IndexByte(remote[:i], ':') < 0 {
		return remote[:i] // "ip:port"; a bare IPv6 address has more colons
	}
	return remote
}

// parseForwardedAddr takes an X-Forwarded-For entry: an address, or an
// address with a port ("203.0.113.7:4711", "[2001:db8::1]:4711") as some
// proxies write it. Zones are refused: they name an interface of another
// machine.
func parseForwardedAddr(s string) (netip.Addr, bool) {
	a, err := netip.ParseAddr(s)
	if err != nil {
		ap, err2 := netip.ParseAddrPort(s)
		if err2 != nil {
			return netip.Addr{}, false
		}
		if ap.Port() == 0 {
			return netip.Addr{}, false // nginx's ngx_parse_addr_port wants 1-65535
		}
		a = ap.Addr()
	}
	if a.Zone() != "" {
		return netip.Addr{}, false
	}
	return a.Unmap(), true
}

// normalizePrefixes masks each range and maps IPv4-mapped IPv6 ranges to
// IPv4, so Contains sees the same form peerAddr returns.
func normalizePrefixes(ps []netip.Prefix) []netip.Prefix {
	out := make([]netip.Prefix, 0, len(ps))
	for _, p := range ps {
		if !p.IsValid() {
			continue
		}
		// Masked first: a mapped address over fewer than 96 bits is an
		// IPv6 range, which holds no IPv4 peer.
		p = p.Masked()
		if a := p.Addr(); a.Is4In6() {
			p = netip.PrefixFrom(a.Unmap(), p.Bits()-96)
		}
		out = append(out, p)
	}
	return out
}
