package router

import (
	"crypto/tls"
	"net"
	"net/http"
	"time"

	"ramjet.dev/ramjet/match"
)

// DefaultTransport returns the transports a Router built with o uses when
// o.Transport is nil, as one RoundTripper, for an embedder who wraps it
// (tracing, metrics, client certificates via the returned value's
// WithTLSConfig) and gives the wrapper back as Options.Transport:
//
//	rt := router.DefaultTransport(o)
//	o.Transport = otelhttp.NewTransport(rt)
//	r := router.New(o)
//
// It keeps what a Transport of one's own would have to redo: the connect
// timeout (o.ConnectTimeout, dial and TLS handshake) and the wait for
// response headers (o.ReadTimeout, 504 when it passes); pooled HTTP/1.1
// for HTTP and HTTPS backends, cleartext HTTP/2 with prior knowledge (h2c)
// for GRPC and HTTP/2 over TLS for GRPCS, chosen by the backend's
// protocol, which it reads from the request's context; targets the URL
// cannot carry byte for byte sent on a connection of their own; no
// environment proxy, no compression, no verification of backend
// certificates (see Options.Transport). A request that did not come from
// a Router goes out over HTTP/1.1.
//
// What any Options.Transport, this one wrapped included, takes over: every
// proxied request, HTTP backends too. The Router's own HTTP/1.1 path,
// which exchanges requests on the handler's goroutine without net/http's
// per-request work, is used only when Options.Transport is nil, since a
// wrapper must see every request. Retries on another endpoint, the 502 and
// 504 answers and the forwarded headers stay the Router's in both cases.
func DefaultTransport(o Options) *Transport {
	connect, read := optionTimeouts(o)
	h1, h2c, h2 := defaultTransports(connect, read, poolingOf(o))
	return &Transport{h1: h1, h2c: h2c, h2: h2,
		verbatim: &verbatimTransport{dialer: &net.Dialer{Timeout: connect}, handshake: connect, header: read}}
}

// Transport is the Router's default set of transports (see DefaultTransport).
type Transport struct {
	h1       *http.Transport
	h2c, h2  http.RoundTripper
	verbatim *verbatimTransport
}

// RoundTrip sends req with the transport its backend's protocol needs.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	x, _ := req.Context().Value(exchangeKey{}).(*exchange)
	if x == nil {
		return t.h1.RoundTrip(req)
	}
	switch x.backend.Protocol {
	case match.GRPC, match.H2C:
		return t.h2c.RoundTrip(req)
	case match.GRPCS:
		return t.h2.RoundTrip(req)
	}
	if x.verbatim {
		return t.verbatim.RoundTrip(req)
	}
	return t.h1.RoundTrip(req)
}

// WithTLSConfig returns a copy of t that dials HTTPS and GRPCS backends
// with cfg (client certificates for mTLS, a CA to verify against) in place
// of the default, which does not verify.
func (t *Transport) WithTLSConfig(cfg *tls.Config) *Transport {
	c := &Transport{h1: t.h1.Clone(), h2c: t.h2c, h2: cloneTransport(t.h2)}
	c.h1.TLSClientConfig = cfg.Clone()
	setTLSConfig(c.h2, cfg.Clone())
	v := *t.verbatim
	v.tlsConfig = cfg.Clone()
	c.verbatim = &v
	return c
}

// CloseIdleConnections closes the idle connections of every transport.
func (t *Transport) CloseIdleConnections() {
	t.h1.CloseIdleConnections()
	closeIdle(t.h2c)
	closeIdle(t.h2)
}

// optionTimeouts are o's connect and read timeouts, defaults filled in.
func optionTimeouts(o Options) (connect, read time.Duration) {
	connect, read = o.ConnectTimeout, o.ReadTimeout
	if connect <= 0 {
		connect = 5 * time.Second
	}
	if read <= 0 {
		read = 60 * time.Second
	}
	return connect, read
}
