package router

import (
	"math"
	"net/http"
	"net/netip"
	"strconv"
	"time"

	"ramjet.dev/ramjet/match"
)

// Reasons for requests a location's policy refuses (SPEC §11.5).
const (
	ReasonSourceDenied = "source-denied" // 403: the client address is outside the source ranges
	ReasonRateLimited  = "rate-limited"  // 503: over limit-rps, limit-rpm or limit-connections
	// ReasonLocationDenied is the 503 of a location whose source ranges
	// do not parse (match.Policy.DenyAll), for every request.
	ReasonLocationDenied = "location-denied"
	// ReasonHeadersDenied is the 503 of a location whose custom-headers
	// cannot be served (match.Response.HeadersDenied), for every request.
	ReasonHeadersDenied = "headers-denied"
	// ReasonBlocked is the 403 of a request whose User-Agent or Referer
	// the ConfigMap's block-user-agents or block-referers list
	// (Options.BlockUserAgents, BlockReferers).
	ReasonBlocked = "blocked"
)

var (
	ansSourceDenied   = answer{http.StatusForbidden, ReasonSourceDenied, "403 Forbidden: this client address may not use this location\n"}
	ansRateLimited    = answer{http.StatusServiceUnavailable, ReasonRateLimited, "503 Service Unavailable: too many requests from this client address\n"}
	ansLocationDenied = answer{http.StatusServiceUnavailable, ReasonLocationDenied, "503 Service Unavailable: this location's source ranges are misconfigured\n"}
	ansHeadersDenied  = answer{http.StatusServiceUnavailable, ReasonHeadersDenied, "503 Service Unavailable: this location's custom headers are misconfigured\n"}
	ansBlocked        = answer{http.StatusForbidden, ReasonBlocked, "403 Forbidden: this client's User-Agent or Referer is blocked\n"}
)

// stepDenied writes decide's answer for a location ingress-nginx denies
// (an annotation it reads as "location denied": a source range, or the
// authentication, that cannot be applied): 503 to every request. The
// template writes such a location as one "return 503" in place of all its
// directives (nginx.tmpl:1205, 1426-1429), so the answer comes past the
// declared body size (found with the location, by nginx's own default
// limit) and before anything else of the location: no CORS preflight or
// headers, redirects, rate limits, source ranges or authentication.
var stepDenied = step{name: "denied location", decided: true}

// deniedAnswer is the answer of a location that stepDenied refuses, and
// whether it is one.
func deniedAnswer(loc *match.Location) (answer, bool) {
	switch {
	case loc.Policy != nil && loc.Policy.DenyAll:
		return ansLocationDenied, true
	case loc.Auth != nil && loc.Auth.Denied != "":
		return ansAuthDenied, true
	case loc.BackendTLS != nil && loc.BackendTLS.Denied != "":
		return ansBackendTLSDenied, true
	case loc.Response != nil && loc.Response.HeadersDenied != "":
		return ansHeadersDenied, true
	}
	return answer{}, false
}

// stepLimits applies the location's rate limits and source ranges
// (applyLimits): they count requests, so only serving applies them.
var stepLimits = step{name: "limits", kind: kindLimits, reasons: []string{ReasonRateLimited, ReasonSourceDenied}}

// applyLimits admits the request past the location's limits (admit) and
// keeps its ticket, or answers the refusal.
func (r *Router) applyLimits(s *requestState) bool {
	if !limits(s.d.pol) {
		s.ticket = connTicket{}
		return false
	}
	t, a, refused := r.admit(s.req, s.d.pol)
	if refused {
		if s.d.backend == nil {
			s.d.backend = s.d.res.Backend
		}
		r.refuse(s, a)
		return true
	}
	s.ticket = t
	return false
}

// statusClose is nginx's 444 (NGX_HTTP_CLOSE): the connection is closed
// with no answer, and the request logged with that status.
const statusClose = 444

// limitAnswer is the refusal of a rate limit answering code (0: 503).
func limitAnswer(code int) answer {
	switch code {
	case 0, http.StatusServiceUnavailable:
		return ansRateLimited
	case statusClose:
		return answer{statusClose, ReasonRateLimited, ""}
	}
	return answer{code, ReasonRateLimited, strconv.Itoa(code) + " " + http.StatusText(code) + ": too many requests from this client address\n"}
}

// limits reports whether policy p limits or filters requests at all.
func limits(p *match.Policy) bool {
	return p != nil && (p.RateLimit != nil || p.Allow != nil || p.Deny != nil || p.DenyAll)
}

// admit applies a location's rate limits and source ranges, in nginx's
// order: limit_req and limit_conn (the preaccess phase, 503) before allow
// and deny (the access phase, 403). The ticket counts the request against
// limit-connections until released; the zero ticket when none applies.
// With no policy, or one without ranges and limits, it reads nothing of
// the request.
func (r *Router) admit(req *http.Request, p *match.Policy) (connTicket, answer, bool) {
	if !limits(p) {
		return connTicket{}, answer{}, false
	}
	client := r.ClientAddr(req)
	var t connTicket
	if rl := p.RateLimit; rl != nil {
		if rl.Closed {
			return connTicket{}, ansRateLimited, true
		}
		var ok bool
		if t, ok = r.limit(rl, client); !ok {
			live := r.live.Load()
			if t.connRefused {
				return connTicket{}, live.ansLimitConn, true
			}
			return connTicket{}, live.ansLimitReq, true
		}
	}
	if !p.Admits(client) {
		t.release()
		return connTicket{}, ansSourceDenied, true
	}
	return t, answer{}, false
}

// limit applies limit-rps, limit-rpm and limit-connections for the client
// (SPEC §11.5), per zone (the Ingress) and client address, unless the
// address is exempt (limit-whitelist). A request refused by one rate is
// counted by none, as nginx accounts a request only once all its limit_req
// zones passed.
func (r *Router) limit(rl *match.RateLimit, client netip.Addr) (connTicket, bool) {
	if !client.IsValid() || match.ContainsAddr(rl.Exempt, client.Unmap().WithZone("")) {
		// nginx keys an exempt client with the empty string, which no zone
		// counts; an unknown peer address has no key either.
		return connTicket{}, true
	}
	l := r.limits
	cl := l.client(client)
	lim := rateLimits{conns: int32(min(rl.Connections, math.MaxInt32))}
	if rl.RPS > 0 {
		lim.milliRPS, lim.burstRPS = int64(rl.RPS)*1000, int64(rl.BurstRPS)*1000
	}
	if rl.RPM > 0 {
		// nginx keeps r/m as thousandths a second, rounded down.
		lim.milliRPM, lim.burstRPM = max(int64(rl.RPM)*1000/60, 1), int64(rl.BurstRPM)*1000
	}
	return l.zone(rl.Zone).take(&cl, &lim, l.clock())
}

// upstreamPolicy sets the exchange's timeouts and tries from the
// location's policy, or the router's defaults.
func (x *exchange) upstreamPolicy(r *Router, p *match.Policy) {
	x.timeouts = r.timeouts
	x.maxTries = maxTries
	if p == nil {
		return
	}
	if p.ConnectTimeout > 0 {
		x.timeouts.connect = p.ConnectTimeout
	}
	if p.ReadTimeout > 0 {
		x.timeouts.read = p.ReadTimeout
	}
	if p.SendTimeout > 0 {
		x.timeouts.send = p.SendTimeout
	}
	if p.NextUpstreamTries != 0 {
		x.maxTries = int32(max(min(p.NextUpstreamTries, math.MaxInt32), math.MinInt32))
	}
}

// timeouts bound one exchange with a backend: dialling (and the TLS
// handshake), each write of the request (0: none), and the wait for the
// response headers.
type timeouts struct {
	connect, send, read time.Duration
}
