package match

import (
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Policy is the request policy of one location (SPEC §11.4, §11.5): the body limit,
// the upstream timeouts and tries, the source ranges and the rate limits an
// Ingress's annotations ask for. Every Route and fallback of one Ingress
// shares one Policy; nil means none of these annotations is set, and the
// router's options apply. A Policy never changes once in a table.
type Policy struct {
	// MaxBodySize overrides the router's request body limit
	// (proxy-body-size): 0 keeps the router's, negative means no limit.
	MaxBodySize int64
	// BodyBufferSize overrides how much of a request body the router holds
	// in memory before the rest goes to a temporary file
	// (client-body-buffer-size); 0 keeps the router's.
	BodyBufferSize int64
	// StreamRequestBody passes a request body to the backend as it
	// arrives instead of reading it whole first
	// (proxy-request-buffering: "off").
	StreamRequestBody bool
	// ConnectTimeout, SendTimeout and ReadTimeout override the router's
	// (proxy-connect-timeout, proxy-send-timeout, proxy-read-timeout);
	// 0 keeps the router's.
	ConnectTimeout, SendTimeout, ReadTimeout time.Duration
	// NextUpstreamTries bounds the endpoints one request is sent to
	// (proxy-next-upstream-tries); 0 keeps the default (3), negative means
	// every endpoint of the backend once, nginx's 0.
	NextUpstreamTries int

	// Allow, when not nil, lists the only client ranges admitted
	// (whitelist-source-range, allowlist-source-range); Deny lists ranges
	// refused (denylist-source-range), checked first. Both are masked and
	// hold IPv4 ranges in their 4-byte form. DenyAll denies the location
	// (503 to every request, as ingress-nginx's "Location denied"): a
	// source range was set but did not parse, and guessing could open
	// what the Ingress meant to close.
	Allow, Deny []netip.Prefix
	DenyAll     bool

	// RateLimit is nil when no limit is set.
	RateLimit *RateLimit

	// Proxy is the location's buffering, protocol and retry settings
	// (proxying.go); nil when none is set.
	Proxy *Proxying
}

// RateLimit is the limit-rps, limit-rpm and limit-connections settings of
// one Ingress. As in ingress-nginx, each kind of limit is one zone per
// Ingress, shared by all its locations, with counters per client address.
type RateLimit struct {
	// Zone names the counters: "namespace/name" of the Ingress. Counters
	// are kept by zone name across tables.
	Zone string
	// RPS and RPM are the allowed rates per client address; Burst is how
	// many requests beyond the rate may arrive at once before requests are
	// refused (limit × limit-burst-multiplier, nginx's burst with nodelay),
	// for RPS and RPM each as BurstRPS and BurstRPM. Connections bounds a
	// client address's requests in flight. 0 means no such limit.
	RPS, RPM, Connections int
	BurstRPS, BurstRPM    int
	// Exempt lists client ranges no limit applies to (limit-whitelist).
	Exempt []netip.Prefix
	// Closed refuses every request: a limit was set but did not parse.
	Closed bool
}

// Admits reports whether a client address passes the source ranges:
// not in Deny, and in Allow when there is one. nginx checks deny and allow
// rules in order, denials first in ingress-nginx's template.
func (p *Policy) Admits(a netip.Addr) bool {
	if p.DenyAll {
		return false
	}
	if p.Deny == nil && p.Allow == nil {
		return true
	}
	if !a.IsValid() {
		return p.Allow == nil
	}
	// Prefix.Contains never matches an address with a zone (a link-local
	// peer's): nginx compares the address alone.
	a = a.Unmap().WithZone("")
	if ContainsAddr(p.Deny, a) {
		return false
	}
	return p.Allow == nil || ContainsAddr(p.Allow, a)
}

// ContainsAddr reports whether any of the (masked) ranges holds a.
func ContainsAddr(ranges []netip.Prefix, a netip.Addr) bool {
	for _, r := range ranges {
		if r.Contains(a) {
			return true
		}
	}
	return false
}

// policy adds a policy to the digest: nil differs from every policy.
func (e *encoder) policy(p *Policy) {
	if p == nil {
		e.flag(false)
		return
	}
	e.flag(true)
	e.num(int(p.MaxBodySize))
	e.num(int(p.ConnectTimeout))
	e.num(int(p.SendTimeout))
	e.num(int(p.ReadTimeout))
	e.num(p.NextUpstreamTries)
	e.prefixes(p.Allow, p.Allow != nil)
	e.prefixes(p.Deny, p.Deny != nil)
	e.flag(p.DenyAll)
	rl := p.RateLimit
	e.flag(rl != nil)
	if rl != nil {
		e.str(rl.Zone)
		e.num(rl.RPS)
		e.num(rl.RPM)
		e.num(rl.Connections)
		e.num(rl.BurstRPS)
		e.num(rl.BurstRPM)
		e.prefixes(rl.Exempt, true)
		e.flag(rl.Closed)
	}
}

func (e *encoder) prefixes(ps []netip.Prefix, set bool) {
	e.flag(set)
	e.num(len(ps))
	for _, p := range ps {
		e.str(p.String())
	}
}

// requestPolicySection is the limits and checks a location applies to a
// request before proxying it (SPEC §11.4, §11.5): body size and buffering,
// timeouts and tries, source ranges, rate limits.
var requestPolicySection = section{
	name:     "request-policy",
	location: []string{"Policy"},
	digest: []digestPart{{
		tag: "policies",
		hostHas: func(vh *VirtualHost) bool {
			return vh.FallbackLocation.Policy != nil || slices.ContainsFunc(vh.Routes, func(r *Route) bool { return r.Policy != nil })
		},
		host:  func(e *encoder, vh *VirtualHost) { e.policy(vh.FallbackLocation.Policy) },
		route: func(e *encoder, r *Route) { e.policy(r.Policy) },
	}, {
		// The body buffering settings joined later, in a part of their
		// own, so tables without them keep their digests.
		tag: "request-buffering",
		hostHas: func(vh *VirtualHost) bool {
			return vh.FallbackLocation.Policy.setsBuffering() || slices.ContainsFunc(vh.Routes, func(r *Route) bool { return r.Policy.setsBuffering() })
		},
		host:  func(e *encoder, vh *VirtualHost) { e.bodyBuffering(vh.FallbackLocation.Policy) },
		route: func(e *encoder, r *Route) { e.bodyBuffering(r.Policy) },
	}},
	text: textParts{
		at: 50,
		fallbackSuffix: func(b *strings.Builder, vh *VirtualHost) {
			b.WriteString(policyLine(vh.FallbackLocation.Policy))
		},
		routeSuffix: func(b *strings.Builder, _ *VirtualHost, r *Route) {
			b.WriteString(policyLine(r.Policy))
		},
	},
}

// setsBuffering reports whether p sets either body buffering setting.
func (p *Policy) setsBuffering() bool {
	return p != nil && (p.BodyBufferSize != 0 || p.StreamRequestBody)
}

func (e *encoder) bodyBuffering(p *Policy) {
	if p == nil {
		p = &Policy{}
	}
	e.num(int(p.BodyBufferSize))
	e.flag(p.StreamRequestBody)
}

// policyLine renders a policy on one line, each setting as key=value in a
// fixed order, "" for nil:
//
//	body=8m body-buffer=16k request-buffering=off connect=5s send=1m0s
//	read=1m0s tries=1 deny=... allow=10.0.0.0/8,...
//	limit=prod/shop(rps=5/25,rpm=100/500,conn=8,exempt=10.0.0.0/8)
//
// body=unlimited is proxy-body-size 0, tries=all nginx's 0; rates show
// limit/burst. A location closed by a source range that did not parse
// renders deny=all, one closed by a limit that did not parse limit=closed.
func policyLine(p *Policy) string {
	if p == nil {
		return ""
	}
	var parts []string
	switch {
	case p.MaxBodySize < 0:
		parts = append(parts, "body=unlimited")
	case p.MaxBodySize > 0:
		parts = append(parts, "body="+sizeText(p.MaxBodySize))
	}
	if p.BodyBufferSize > 0 {
		parts = append(parts, "body-buffer="+sizeText(p.BodyBufferSize))
	}
	if p.StreamRequestBody {
		parts = append(parts, "request-buffering=off")
	}
	for _, d := range []struct {
		k string
		v time.Duration
	}{{"connect", p.ConnectTimeout}, {"send", p.SendTimeout}, {"read", p.ReadTimeout}} {
		if d.v != 0 {
			parts = append(parts, d.k+"="+d.v.String())
		}
	}
	switch {
	case p.NextUpstreamTries < 0:
		parts = append(parts, "tries=all")
	case p.NextUpstreamTries > 0:
		parts = append(parts, "tries="+strconv.Itoa(p.NextUpstreamTries))
	}
	if p.DenyAll {
		parts = append(parts, "deny=all")
	} else {
		if p.Deny != nil {
			parts = append(parts, "deny="+prefixList(p.Deny))
		}
		if p.Allow != nil {
			parts = append(parts, "allow="+prefixList(p.Allow))
		}
	}
	if rl := p.RateLimit; rl != nil {
		if rl.Closed {
			parts = append(parts, "limit=closed")
		} else {
			var l []string
			if rl.RPS > 0 {
				l = append(l, "rps="+strconv.Itoa(rl.RPS)+"/"+strconv.Itoa(rl.BurstRPS))
			}
			if rl.RPM > 0 {
				l = append(l, "rpm="+strconv.Itoa(rl.RPM)+"/"+strconv.Itoa(rl.BurstRPM))
			}
			if rl.Connections > 0 {
				l = append(l, "conn="+strconv.Itoa(rl.Connections))
			}
			if len(rl.Exempt) > 0 {
				l = append(l, "exempt="+prefixList(rl.Exempt))
			}
			parts = append(parts, "limit="+rl.Zone+"("+strings.Join(l, ",")+")")
		}
	}
	if len(parts) == 0 {
		return "" // only proxying settings (proxying.go), on a line of their own
	}
	return " policy " + strings.Join(parts, " ")
}

// sizeText writes a size in nginx's syntax, with the largest unit that
// divides it.
func sizeText(n int64) string {
	for _, u := range []struct {
		suffix string
		size   int64
	}{{"g", 1 << 30}, {"m", 1 << 20}, {"k", 1 << 10}} {
		if n%u.size == 0 {
			return strconv.FormatInt(n/u.size, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10)
}

func prefixList(ps []netip.Prefix) string {
	if len(ps) == 0 {
		return "none"
	}
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = p.String()
	}
	return strings.Join(s, ",")
}
