package router

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/match"
)

// A Gateway TLS listener's connections go to their TLSRoute's backends by
// weight, an invalid alternative's share and a backend without endpoints
// refused; a name of no passthrough listener is terminated, and the local
// port counts as the Gateway port it is published as.
func TestPassthroughFor(t *testing.T) {
	a := httpBackend("prod/a:443", "10.0.1.1:8443")
	b := httpBackend("prod/b:443", "10.0.2.1:8443")
	empty := httpBackend("prod/empty:443")
	tls443 := match.Listener{Port: 443, TLS: true}
	tab := mustTable(match.Spec{
		Backends: []*match.Backend{a, b, empty},
		PassthroughRoutes: []*match.PassthroughRoute{{
			Listener: tls443, ListenerHostname: "*.example.com", Hostname: "db.example.com",
			Split: &match.Split{Alternatives: []match.Alternative{{Backend: a, Weight: 3}, {Backend: b, Weight: 1}, {Weight: 1}, {Backend: empty, Weight: 1}}},
		}},
		PassthroughListeners: []match.PassthroughListener{{Listener: tls443, Hostname: "*.example.com"}},
		Listeners:            []match.ListenerHost{{Listener: tls443, Hostname: "www.example.com"}},
	})
	r := newTestRouter(Options{GatewayPorts: map[int]int32{8443: 443}})
	require.False(t, r.PeeksClientHello(), "no table yet")
	r.Publish(tab)
	require.True(t, r.PeeksClientHello())
	got := map[string]int{}
	for range 60 {
		addr, release, v := r.PassthroughFor(8443, "DB.example.com")
		switch v {
		case Splice:
			got[addr]++
			release()
		case Refuse:
			got["refused"]++
		default:
			got["terminated"]++
		}
	}
	require.Empty(t, cmp.Diff(map[string]int{"10.0.1.1:8443": 30, "10.0.2.1:8443": 10, "refused": 20}, got))

	for _, c := range []struct {
		port int
		sni  string
		want PassthroughVerdict
	}{
		{8443, "other.example.com", Refuse},  // the TLS listener's, no route
		{8443, "www.example.com", Terminate}, // the HTTPS listener's
		{443, "db.example.com", Splice},      // an unmapped local port is the Gateway port
		{9443, "db.example.com", Terminate},  // a port without passthrough listeners
	} {
		_, release, v := r.PassthroughFor(c.port, c.sni)
		require.Equal(t, c.want, v, "%d %s", c.port, c.sni)
		if release != nil {
			release()
		}
	}
}

// An ssl-passthrough host's connection is never terminated for want of an
// endpoint: ingress-nginx's TCP proxy dials the Service's cluster IP,
// which without a ready endpoint refuses, and closes the client's
// connection. Only a host whose Service is missing is left out of the TCP
// proxy, and nginx terminates its TLS.
func TestSSLPassthroughWithoutEndpoints(t *testing.T) {
	up := httpBackend("prod/up:443", "10.0.1.1:8443")
	empty := httpBackend("prod/empty:443")
	missing := backend("prod/missing:443", match.HTTP, match.ServiceNotFound)
	host := func(name string, b *match.Backend) *match.VirtualHost {
		vh := vhost(name, nil, route(match.Prefix, "/", b))
		vh.Passthrough = b
		return vh
	}
	r := newTestRouter(Options{})
	r.Publish(table("ssl-passthrough", host("up.example.com", up), host("empty.example.com", empty), host("missing.example.com", missing)))
	for _, c := range []struct {
		sni  string
		want PassthroughVerdict
	}{
		{"up.example.com", Splice},
		{"empty.example.com", Refuse},
		{"missing.example.com", Terminate},
		{"other.example.com", Terminate},
	} {
		_, release, v := r.PassthroughFor(443, c.sni)
		assert.Equal(t, c.want, v, c.sni)
		if release != nil {
			release()
		}
	}
}

// Behind a PROXY protocol header a connection's LocalAddr is the header's
// destination; the Gateway listener is judged by the socket's own port
// (SocketPort), as nginx picks a server by its listening socket.
func TestListenerOfSocketPort(t *testing.T) {
	r := newTestRouter(Options{GatewayPorts: map[int]int32{8443: 443}})
	req := httptest.NewRequest("GET", "https://www.example.com/", nil)
	ctx := context.WithValue(req.Context(), http.LocalAddrContextKey, &net.TCPAddr{IP: net.IPv4(10, 0, 0, 1), Port: 9999})
	assert.Equal(t, match.Listener{Port: 9999, TLS: true}, r.listenerOf(req.WithContext(ctx)), "without a mark, LocalAddr's port")
	assert.Equal(t, match.Listener{Port: 443, TLS: true}, r.listenerOf(req.WithContext(SocketPort(ctx, 8443))))
}
