package router

import (
	"context"
	"net"
	"net/http"
	"sync"
	"time"
)

// Locations with their own proxy-connect-timeout, proxy-read-timeout or
// proxy-send-timeout (SPEC §11.4) reach HTTPS backends through net/http
// transports and gRPC ones through router/h2 clients, whose dial,
// handshake and response-header timeouts are fixed per transport. So each distinct set of timeouts gets its own
// set of transports, made the first time a request needs it and kept
// (with its idle connections) for the next: a request pays a read-locked
// map lookup, never an allocation. Distinct sets come from annotation
// values, so there are few; past maxTransportVariants, a request with yet
// another set gets transports of its own that are closed when it ends.

// maxTransportVariants bounds the transport sets kept for policies.
const maxTransportVariants = 64

// transportSet is what upstream needs for one set of timeouts.
type transportSet struct {
	h1       *http.Transport
	h2c, h2  http.RoundTripper // router/h2's Client, or net/http's (Options.NetHTTP2Client)
	verbatim *verbatimTransport
}

type transportVariants struct {
	pooling
	mu   sync.RWMutex
	sets map[timeouts]*transportSet
}

// forTimeouts returns the transports for t, and whether they were made for
// this request alone (then the caller closes them).
func (v *transportVariants) forTimeouts(t timeouts) (*transportSet, bool) {
	v.mu.RLock()
	s := v.sets[t]
	v.mu.RUnlock()
	if s != nil {
		return s, false
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if s = v.sets[t]; s != nil {
		return s, false
	}
	s = newTransportSet(t, v.pooling)
	if len(v.sets) >= maxTransportVariants {
		return s, true
	}
	if v.sets == nil {
		v.sets = make(map[timeouts]*transportSet)
	}
	v.sets[t] = s
	return s, false
}

func newTransportSet(t timeouts, p pooling) *transportSet {
	s := &transportSet{}
	s.h1, s.h2c, s.h2 = defaultTransports(t.connect, t.read, p)
	if t.send > 0 {
		dial := sendTimeoutDialer(&net.Dialer{Timeout: t.connect, KeepAlive: 30 * time.Second}, t.send)
		s.h1.DialContext = dial
		setDial(s.h2c, dial)
		setDial(s.h2, dial)
	}
	s.verbatim = &verbatimTransport{dialer: &net.Dialer{Timeout: t.connect}, handshake: t.connect, header: t.read}
	return s
}

func (s *transportSet) closeIdle() {
	s.h1.CloseIdleConnections()
	closeIdle(s.h2c)
	closeIdle(s.h2)
}

// closeIdle closes the idle connections of every kept set.
func (v *transportVariants) closeIdle() {
	v.mu.RLock()
	defer v.mu.RUnlock()
	for _, s := range v.sets {
		s.closeIdle()
	}
}

// sendTimeoutDialer dials connections on which every write must finish
// within send (nginx's proxy_send_timeout, which bounds each write of the
// request rather than the whole of it).
func sendTimeoutDialer(d *net.Dialer, send time.Duration) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &sendTimeoutConn{Conn: c, send: send}, nil
	}
}

type sendTimeoutConn struct {
	net.Conn
	send time.Duration
}

func (c *sendTimeoutConn) Write(p []byte) (int, error) {
	_ = c.Conn.SetWriteDeadline(time.Now().Add(c.send))
	return c.Conn.Write(p)
}
