package configmap

import (
	"errors"
	"strconv"
	"time"
)

// Connections are the client connection keys, with ingress-nginx v1.15's
// defaults (config.go NewDefault) and nginx.tmpl's use of them: numbers
// of seconds, as nginx.tmpl writes them with an "s". For the listeners,
// read when they are made, but BodyTimeout (router.Options).
type Connections struct {
	// KeepAlive: keep-alive (75), keepalive_timeout: how long an idle
	// keep-alive connection stays open; 0 turns keep-alive off, each
	// connection closing after its response.
	KeepAlive time.Duration
	// KeepAliveRequests: keep-alive-requests (1000), keepalive_requests:
	// the most requests a connection serves ("0" serves one, as nginx).
	KeepAliveRequests int
	// HeaderTimeout: client-header-timeout (60), client_header_timeout.
	HeaderTimeout time.Duration
	// BodyTimeout: client-body-timeout (60), client_body_timeout: the
	// longest wait between two reads of a request body
	// (router.Options.ClientBodyTimeout).
	BodyTimeout time.Duration
	// ShutdownTimeout: worker-shutdown-timeout ("240s"), an nginx time:
	// how long the requests in flight when the controller stops may take;
	// 0, as nginx's worker_shutdown_timeout 0, waits for them however long.
	ShutdownTimeout time.Duration
}

// UpstreamKeepalive are the backend connection pool's keys, with
// ingress-nginx v1.15's defaults, as nginx.tmpl writes them in each
// upstream block (router.Options.UpstreamKeepalive).
type UpstreamKeepalive struct {
	// Connections: upstream-keepalive-connections (320), keepalive: the
	// idle connections kept; 0 keeps none (no keep-alive to backends).
	Connections int
	// Timeout: upstream-keepalive-timeout (60), keepalive_timeout, in
	// seconds.
	Timeout time.Duration
	// Requests: upstream-keepalive-requests (10000), keepalive_requests.
	Requests int
	// Time: upstream-keepalive-time ("1h"), keepalive_time, an nginx time.
	// The key's "0" reuses no connection, as nginx's keepalive_time 0
	// (router.Options.ApplyConfigMap); in the struct, 0 is no bound.
	Time time.Duration
}

// DefaultUpstreamKeepalive are ingress-nginx's defaults of the pool keys.
func DefaultUpstreamKeepalive() UpstreamKeepalive {
	return UpstreamKeepalive{Connections: 320, Timeout: 60 * time.Second, Requests: 10000, Time: time.Hour}
}

// DefaultConnections are ingress-nginx's defaults of the connection keys.
func DefaultConnections() Connections {
	return Connections{KeepAlive: 75 * time.Second, KeepAliveRequests: 1000, HeaderTimeout: 60 * time.Second,
		BodyTimeout: 60 * time.Second, ShutdownTimeout: 240 * time.Second}
}

func init() {
	// seconds reads a number of seconds as ingress-nginx's int fields take
	// it; nginx refuses a negative time, and times a client out at once
	// at 0, so min is 1 but for keep-alive.
	seconds := func(field func(c *Connections) *time.Duration, min int64) Key {
		return Key{read: func(p *parse, v string) error {
			n, err := strconv.ParseInt(v, 0, 32)
			if err != nil || n < min {
				return errors.New("want a number of seconds, at least " + strconv.FormatInt(min, 10))
			}
			*field(&p.s.Connections) = time.Duration(n) * time.Second
			return nil
		}}
	}
	Keys["keep-alive"] = seconds(func(c *Connections) *time.Duration { return &c.KeepAlive }, 0)
	Keys["client-header-timeout"] = seconds(func(c *Connections) *time.Duration { return &c.HeaderTimeout }, 1)
	Keys["client-body-timeout"] = seconds(func(c *Connections) *time.Duration { return &c.BodyTimeout }, 1)
	Keys["keep-alive-requests"] = Key{read: func(p *parse, v string) error {
		n, err := strconv.ParseInt(v, 0, 32)
		if err != nil || n < 0 {
			return errors.New("want a number of requests")
		}
		p.s.Connections.KeepAliveRequests = max(int(n), 1)
		return nil
	}}
	Keys["worker-shutdown-timeout"] = Key{read: func(p *parse, v string) (err error) {
		p.s.Connections.ShutdownTimeout, err = ParseTime(v, false)
		return err
	}}
	count := func(field func(u *UpstreamKeepalive) *int, min int64) Key {
		return Key{read: func(p *parse, v string) error {
			n, err := strconv.ParseInt(v, 0, 32)
			if err != nil || n < min {
				return errors.New("want a number, at least " + strconv.FormatInt(min, 10))
			}
			*field(&p.s.UpstreamKeepalive) = int(n)
			return nil
		}}
	}
	Keys["upstream-keepalive-connections"] = count(func(u *UpstreamKeepalive) *int { return &u.Connections }, 0)
	Keys["upstream-keepalive-requests"] = count(func(u *UpstreamKeepalive) *int { return &u.Requests }, 1)
	Keys["upstream-keepalive-timeout"] = Key{read: func(p *parse, v string) error {
		n, err := strconv.ParseInt(v, 0, 32)
		if err != nil || n < 1 {
			return errors.New("want a number of seconds, at least 1")
		}
		p.s.UpstreamKeepalive.Timeout = time.Duration(n) * time.Second
		return nil
	}}
	Keys["upstream-keepalive-time"] = Key{read: func(p *parse, v string) (err error) {
		p.s.UpstreamKeepalive.Time, err = ParseTime(v, false)
		return err
	}}
}
