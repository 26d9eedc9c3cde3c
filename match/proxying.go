package match

import (
	"cmp"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Proxying is how a location exchanges a request with its backend beyond
// the request policy (SPEC §11 "Also served"): response buffering
// (proxy-buffering, proxy-buffers-number, proxy-buffer-size,
// proxy-busy-buffers-size, proxy-max-temp-file-size), the protocol
// version (proxy-http-version) and which failures move a request to
// another endpoint (proxy-next-upstream, proxy-next-upstream-timeout).
// It hangs off the location's Policy; nil means none of these is set and
// the router serves as it always has.
type Proxying struct {
	// Buffering reads the whole response before it is sent to the client
	// (proxy-buffering: "on"): BuffersNumber × BufferSize bytes in memory,
	// the rest in a temporary file of at most MaxTempFileSize bytes; past
	// that the rest streams, as nginx does.
	Buffering bool
	// BufferSize bounds the response head (proxy-buffer-size): a longer
	// one answers 502, as nginx answers "upstream sent too big header".
	// 0: the router's bound (1 MiB).
	BufferSize int64
	// BuffersNumber is proxy-buffers-number; 0: nginx's 4.
	BuffersNumber int
	// BusyBuffersSize is proxy-busy-buffers-size, validated and shown; it
	// changes nothing a client sees (how much nginx sends while it still
	// reads). 0: unset.
	BusyBuffersSize int64
	// MaxTempFileSize bounds the temporary file of a buffered response
	// (proxy-max-temp-file-size); negative: unset, nginx's 1024m; 0: no
	// temporary file.
	MaxTempFileSize int64
	// HTTP10 sends requests to the backend as HTTP/1.0
	// (proxy-http-version: "1.0"): no chunked body, Connection: close.
	HTTP10 bool
	// NextUpstream is which failures of a try move the request to
	// another endpoint (proxy-next-upstream); 0 keeps the router's rule
	// (a connection that could not be opened, idempotent methods only).
	NextUpstream NextUpstream
	// NextUpstreamTimeout bounds the time in which a request may be
	// passed to another endpoint (proxy-next-upstream-timeout); 0: none.
	NextUpstreamTimeout time.Duration
	// Retry, a Gateway API rule's retry (SPEC §20), sends a request again
	// after a try that failed; nil: none. It is not proxy-next-upstream,
	// which it overrides: see Retry.
	Retry *Retry
	// RequestTimeout and TryTimeout are a Gateway API rule's
	// timeouts.request and timeouts.backendRequest (SPEC §20): the first
	// bounds the whole exchange with the backend, every try and backoff
	// included, the second each try, from its connection to the last byte
	// of its response. One that runs out before the response head answers
	// 504 (a try's is retried under Retry); after it, the client's
	// connection is cut. 0: none.
	RequestTimeout, TryTimeout time.Duration
	// Redirect rewrites the backend's Location and Refresh headers
	// (proxy-redirect-from and -to, nginx's proxy_redirect);
	// CookieDomain and CookiePath the Domain and Path of its Set-Cookie
	// headers (proxy-cookie-domain, proxy-cookie-path). nil: passed as
	// they are.
	Redirect, CookieDomain, CookiePath *HeaderRewrite
	// RedirectRelative keeps a Location Redirect rewrote to begin with
	// "/" as it is (relative-redirects: nginx's absolute_redirect off);
	// without it the client gets it with its scheme and host put first.
	RedirectRelative bool
	// Connection is the Connection header sent to the backend
	// (connection-proxy-header: "close" or "keep-alive"), in place of
	// nginx's $connection_upgrade ("Upgrade" for an upgrade, none
	// otherwise); "": that default.
	Connection string
}

// Retry is a Gateway API rule's retry: a try answered with one of Codes,
// or one that failed before a response head came whole (the connection
// could not be opened, broke or timed out), is sent again, at most
// Attempts times after the first, Backoff after the failure. Each retry
// goes to an endpoint of the backend not tried yet, or to the last one
// when all were. A request body the router read whole first (as it does
// unless proxy-request-buffering is off) is sent again from its start; one
// it streams is not, once a try began to send it. The method does not
// matter. The last try's answer is the client's.
type Retry struct {
	Codes    []int
	Attempts int
	Backoff  time.Duration
}

// Retries reports whether a try answered status is retried.
func (r *Retry) Retries(status int) bool { return slices.Contains(r.Codes, status) }

// checkRetry refuses a retry the router cannot follow.
func checkRetry(r *Retry) error {
	if r == nil {
		return nil
	}
	for _, c := range r.Codes {
		if c < 100 || c > 599 {
			return &fieldError{"Proxy.Retry.Codes", errors.New(strconv.Itoa(c) + " is not a status")}
		}
	}
	if r.Attempts < 0 {
		return &fieldError{"Proxy.Retry.Attempts", errors.New("is negative")}
	}
	if r.Backoff < 0 {
		return &fieldError{"Proxy.Retry.Backoff", errors.New("is negative")}
	}
	return nil
}

// checkRouteTimeouts refuses a negative timeout.
func checkRouteTimeouts(p *Proxying) error {
	switch {
	case p == nil:
	case p.RequestTimeout < 0:
		return &fieldError{"Proxy.RequestTimeout", errors.New("is negative")}
	case p.TryTimeout < 0:
		return &fieldError{"Proxy.TryTimeout", errors.New("is negative")}
	}
	return nil
}

// retryOf is a policy's Retry, nil without.
func retryOf(p *Policy) *Retry {
	if pr := proxyingOf(p); pr != nil {
		return pr.Retry
	}
	return nil
}

// hasRouteTries reports a policy with a Gateway API rule's retry or
// timeouts.
func hasRouteTries(p *Policy) bool {
	pr := proxyingOf(p)
	return pr != nil && (pr.Retry != nil || pr.RequestTimeout > 0 || pr.TryTimeout > 0)
}

func (e *encoder) routeTries(p *Policy) {
	pr := proxyingOf(p)
	if pr == nil {
		e.flag(false)
		return
	}
	e.flag(true)
	e.num(int(pr.RequestTimeout))
	e.num(int(pr.TryTimeout))
	e.retry(pr.Retry)
}

func (e *encoder) retry(r *Retry) {
	e.flag(r != nil)
	if r == nil {
		return
	}
	e.num(len(r.Codes))
	for _, c := range r.Codes {
		e.num(c)
	}
	e.num(r.Attempts)
	e.num(int(r.Backoff))
}

func retryText(r *Retry) string {
	codes := make([]string, len(r.Codes))
	for i, c := range r.Codes {
		codes[i] = strconv.Itoa(c)
	}
	return "retry codes=" + cmp.Or(strings.Join(codes, ","), "none") + " attempts=" + strconv.Itoa(r.Attempts) + " backoff=" + r.Backoff.String()
}

// NextUpstream is a set of proxy-next-upstream conditions.
type NextUpstream uint16

// The proxy-next-upstream conditions, as nginx's proxy_next_upstream
// names them.
const (
	RetryError NextUpstream = 1 << iota
	RetryTimeout
	RetryInvalidHeader
	Retry500
	Retry502
	Retry503
	Retry504
	Retry403
	Retry404
	Retry429
	RetryNonIdempotent
	// RetryOff never passes a request on; it overrides the others.
	RetryOff
)

var nextUpstreamNames = [...]string{"error", "timeout", "invalid_header", "http_500", "http_502",
	"http_503", "http_504", "http_403", "http_404", "http_429", "non_idempotent", "off"}

// ParseNextUpstreamCondition returns the condition nginx names name; 0
// when it names none.
func ParseNextUpstreamCondition(name string) NextUpstream {
	if i := slices.Index(nextUpstreamNames[:], name); i >= 0 {
		return 1 << i
	}
	return 0
}

// String writes the set as proxy-next-upstream does.
func (n NextUpstream) String() string {
	var names []string
	for i, name := range nextUpstreamNames {
		if n&(1<<i) != 0 {
			names = append(names, name)
		}
	}
	return strings.Join(names, " ")
}

// StatusCondition is the condition that names a response status (http_500
// for 500), 0 for a status none names.
func StatusCondition(status int) NextUpstream {
	var c NextUpstream
	switch status {
	case 500:
		c = Retry500
	case 502:
		c = Retry502
	case 503:
		c = Retry503
	case 504:
		c = Retry504
	case 403:
		c = Retry403
	case 404:
		c = Retry404
	case 429:
		c = Retry429
	}
	return c
}

// connectionOf is a policy's Connection, "" without.
func connectionOf(p *Policy) string {
	if pr := proxyingOf(p); pr != nil {
		return pr.Connection
	}
	return ""
}

// proxyingOf is the Proxying of a policy, nil without.
func proxyingOf(p *Policy) *Proxying {
	if p == nil {
		return nil
	}
	return p.Proxy
}

func (e *encoder) proxying(p *Proxying) {
	if p == nil {
		e.flag(false)
		return
	}
	e.flag(true)
	e.flag(p.Buffering)
	e.num(int(p.BufferSize))
	e.num(p.BuffersNumber)
	e.num(int(p.BusyBuffersSize))
	e.num(int(p.MaxTempFileSize))
	e.flag(p.HTTP10)
	e.num(int(p.NextUpstream))
	e.num(int(p.NextUpstreamTimeout))
}

// proxyingText renders a location's Proxying on one line, each setting
// set as key=value; "" for nil.
func proxyingText(p *Proxying) string {
	if p == nil {
		return ""
	}
	var parts []string
	if p.Buffering {
		parts = append(parts, "buffering=on")
	}
	if p.BuffersNumber > 0 {
		parts = append(parts, "buffers="+strconv.Itoa(p.BuffersNumber))
	}
	if p.BufferSize > 0 {
		parts = append(parts, "buffer-size="+sizeText(p.BufferSize))
	}
	if p.BusyBuffersSize > 0 {
		parts = append(parts, "busy-buffers="+sizeText(p.BusyBuffersSize))
	}
	switch {
	case p.MaxTempFileSize == 0:
		parts = append(parts, "max-temp-file=0")
	case p.MaxTempFileSize > 0:
		parts = append(parts, "max-temp-file="+sizeText(p.MaxTempFileSize))
	}
	if p.HTTP10 {
		parts = append(parts, "http=1.0")
	}
	if p.NextUpstream != 0 {
		parts = append(parts, "next-upstream="+strings.ReplaceAll(p.NextUpstream.String(), " ", ","))
	}
	if p.NextUpstreamTimeout > 0 {
		parts = append(parts, "next-upstream-timeout="+p.NextUpstreamTimeout.String())
	}
	if p.Connection != "" {
		parts = append(parts, "connection="+p.Connection)
	}
	if len(parts) == 0 && (p.Retry != nil || p.RequestTimeout > 0 || p.TryTimeout > 0 || p.HasHeaderRewrites()) {
		return "" // a route's retry, timeouts or rewrites alone: their own lines
	}
	return "proxying " + strings.Join(parts, " ")
}

// proxyingSection is how a location talks to its backend: response
// buffering, the protocol version and the retry conditions. It claims no
// field of its own: its settings hang off the location's Policy, whose
// digest part they follow under a tag of their own, so tables without
// them keep their digests.
var proxyingSection = section{
	name: "proxying",
	digest: []digestPart{{
		tag: "proxying",
		hostHas: func(vh *VirtualHost) bool {
			return proxyingOf(vh.FallbackLocation.Policy) != nil || slices.ContainsFunc(vh.Routes, func(r *Route) bool { return proxyingOf(r.Policy) != nil })
		},
		host:  func(e *encoder, vh *VirtualHost) { e.proxying(proxyingOf(vh.FallbackLocation.Policy)) },
		route: func(e *encoder, r *Route) { e.proxying(proxyingOf(r.Policy)) },
	}, {
		tag: "auth-options",
		hostHas: func(vh *VirtualHost) bool {
			return authOptionsOf(vh.FallbackLocation.Auth) != nil || slices.ContainsFunc(vh.Routes, func(r *Route) bool { return authOptionsOf(r.Auth) != nil })
		},
		host:  func(e *encoder, vh *VirtualHost) { e.authOptions(authOptionsOf(vh.FallbackLocation.Auth)) },
		route: func(e *encoder, r *Route) { e.authOptions(authOptionsOf(r.Auth)) },
	}, {
		tag: "route-tries",
		hostHas: func(vh *VirtualHost) bool {
			return hasRouteTries(vh.FallbackLocation.Policy) || slices.ContainsFunc(vh.Routes, func(r *Route) bool { return hasRouteTries(r.Policy) })
		},
		host:  func(e *encoder, vh *VirtualHost) { e.routeTries(vh.FallbackLocation.Policy) },
		route: func(e *encoder, r *Route) { e.routeTries(r.Policy) },
	}, {
		tag: "connection-header",
		hostHas: func(vh *VirtualHost) bool {
			return connectionOf(vh.FallbackLocation.Policy) != "" || slices.ContainsFunc(vh.Routes, func(r *Route) bool { return connectionOf(r.Policy) != "" })
		},
		host:  func(e *encoder, vh *VirtualHost) { e.str(connectionOf(vh.FallbackLocation.Policy)) },
		route: func(e *encoder, r *Route) { e.str(connectionOf(r.Policy)) },
	}, {
		tag: "header-rewrites",
		hostHas: func(vh *VirtualHost) bool {
			return hasHeaderRewrites(vh.FallbackLocation.Policy) || slices.ContainsFunc(vh.Routes, func(r *Route) bool { return hasHeaderRewrites(r.Policy) })
		},
		host:  func(e *encoder, vh *VirtualHost) { e.headerRewrites(proxyingOf(vh.FallbackLocation.Policy)) },
		route: func(e *encoder, r *Route) { e.headerRewrites(proxyingOf(r.Policy)) },
	}},
	text: textParts{
		at: 85,
		fallbackLines: func(b *strings.Builder, vh *VirtualHost) {
			proxyingLines(b, vh.FallbackLocation.Policy, vh.FallbackLocation.Auth)
		},
		routeLines: func(b *strings.Builder, _ *VirtualHost, r *Route) { proxyingLines(b, r.Policy, r.Auth) },
	},
}

func proxyingLines(b *strings.Builder, p *Policy, a *Auth) {
	if s := proxyingText(proxyingOf(p)); s != "" {
		b.WriteString("    " + s + "\n")
	}
	if r := retryOf(p); r != nil {
		b.WriteString("    " + retryText(r) + "\n")
	}
	if pr := proxyingOf(p); pr != nil && (pr.RequestTimeout > 0 || pr.TryTimeout > 0) {
		b.WriteString("    timeouts request=" + pr.RequestTimeout.String() + " backend-request=" + pr.TryTimeout.String() + "\n")
	}
	if s := headerRewritesText(proxyingOf(p)); s != "" {
		b.WriteString("    " + s + "\n")
	}
	if s := authOptionsText(authOptionsOf(a)); s != "" {
		b.WriteString("    " + s + "\n")
	}
}
