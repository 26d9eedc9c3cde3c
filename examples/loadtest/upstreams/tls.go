package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"time"

	"ramjet.dev/ramjet/router"
	"ramjet.dev/ramjet/router/h1"
	"ramjet.dev/ramjet/router/h2"
	"ramjet.dev/ramjet/router/rawsock"
)

// serveTLS serves rt over TLS on addr as the example controller serves its
// -https-addr: the router's TLS configuration (ingress-nginx's defaults,
// the session cache), each handshake in a goroutine of its own before the
// connection is handed to router/h1's loop, which passes those that
// negotiated h2 to router/h2's server (-http2-server ramjet) or net/http's
// (net/http). It returns what stops it.
func serveTLS(rt *router.Router, addr string) (func(), error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	cfg := rt.TLSConfig()
	// net/http's HTTP/2 server gets a configuration without the suite
	// list, as the controller's (see router.Router.TLSConfig).
	srvCfg := cfg.Clone()
	srvCfg.CipherSuites = nil
	fallback := &http.Server{
		Handler: rt, TLSConfig: srvCfg, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 75 * time.Second,
		HTTP2: &http.HTTP2Config{PermitProhibitedCipherSuites: true}, ErrorLog: log.New(io.Discard, "", 0),
	}
	s := &h1.Server{Handler: rt, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 75 * time.Second,
		ErrorLog: log.New(io.Discard, "", 0), Fallback: fallback}
	switch extra.http2Server {
	case "ramjet":
		s.HTTP2 = &h2.Server{Handler: rt, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 75 * time.Second,
			ErrorLog: log.New(io.Discard, "", 0)}
	case "net/http":
	default:
		return nil, fmt.Errorf("-http2-server: %q is neither ramjet nor net/http", extra.http2Server)
	}
	hl := &handshakeListener{Listener: ln, cfg: cfg, ready: make(chan net.Conn)}
	hl.ctx, hl.cancel = context.WithCancel(context.Background())
	go hl.accept()
	go func() { _ = s.Serve(hl) }()
	return func() { hl.cancel(); s.Close() }, nil
}

// handshakeListener hands over connections whose TLS handshake is done.
type handshakeListener struct {
	net.Listener
	cfg    *tls.Config
	ready  chan net.Conn
	ctx    context.Context
	cancel context.CancelFunc
}

func (l *handshakeListener) accept() {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			l.cancel()
			return
		}
		go func() {
			_ = c.SetDeadline(time.Now().Add(10 * time.Second))
			if extra.tlsRaw {
				c = rawsock.NetConn(c) // as the controller's
			}
			tc := tls.Server(c, l.cfg)
			if err := tc.HandshakeContext(l.ctx); err != nil {
				_ = c.Close()
				return
			}
			_ = c.SetDeadline(time.Time{})
			rawsock.AckNow(c) // as the controller's
			select {
			case l.ready <- tc:
			case <-l.ctx.Done():
				_ = c.Close()
			}
		}()
	}
}

func (l *handshakeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.ready:
		return c, nil
	case <-l.ctx.Done():
		return nil, net.ErrClosed
	}
}

func (l *handshakeListener) Close() error {
	l.cancel()
	return l.Listener.Close()
}
