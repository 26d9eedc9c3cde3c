package match

import (
	"regexp"
	"slices"
	"strconv"
	"strings"

	"ramjet.dev/ramjet/balance"
)

// Traffic is how a backend's requests are shared out beyond the pick of an
// endpoint: a canary that takes some of them (SPEC §10) and cookie session
// affinity (SPEC §9). Backend.Traffic is nil when there is neither.
type Traffic struct {
	// Canary, when set, may take a request before the backend's own
	// endpoints are considered. Being on the backend, it applies wherever
	// the backend is used, as ingress-nginx attaches a canary to the
	// primary upstream.
	Canary *Canary
	// Affinity, when set, keeps a session on one endpoint.
	Affinity *SessionAffinity
}

// Canary is an alternative backend and the rules that send a request to
// it (ingress-nginx's canary annotations). Rules are tried in order:
// header (value, else pattern, else "always"/"never"), then cookie
// ("always"/"never"), then weight; the first that decides wins, and a rule
// that does not decide passes the request on.
type Canary struct {
	// Backend is the canary's backend.
	Backend *Backend
	// Source is the canary Ingress's declaration that attached it, and
	// PortName how it wrote the Service port (Route.PortName).
	Source   Source
	PortName uint8
	// Header is the canonical request header name (canary-by-header), ""
	// for none. Its value is compared case-sensitively, as nginx does.
	Header string
	// HeaderValue (canary-by-header-value) sends the request to the
	// canary when the header equals it; other values pass on.
	HeaderValue string
	// HeaderPattern (canary-by-header-pattern, used only without
	// HeaderValue) sends it when the header matches, unanchored.
	HeaderPattern *regexp.Regexp
	// HeaderPatternError: canary-by-header-pattern does not compile
	// (HeaderPattern nil). Without HeaderValue a request with the header
	// goes to the primary, no later rule asked, as ingress-nginx's
	// balancer answers its match error.
	HeaderPatternError bool
	// Cookie is the cookie name (canary-by-cookie), "" for none; names
	// compare case-insensitively, values ("always", "never") exactly.
	Cookie string
	// Weight of WeightTotal requests that no other rule decided go to the
	// canary, by a deterministic rotation (SPEC §9). WeightTotal is at
	// least 100 (ingress-nginx reads a smaller total as 100); a weight of
	// WeightTotal or more takes them all, 0 or less none.
	Weight, WeightTotal int
	// Sticky: a request whose affinity cookie names the canary goes to it
	// while it has ready endpoints (affinity-canary-behavior sticky, the
	// default when the primary has session affinity).
	Sticky bool
}

// SessionAffinity is cookie session affinity (SPEC §9, ingress-nginx's
// affinity: cookie and session-cookie-* annotations).
type SessionAffinity struct {
	// Mode is balanced (the default) or persistent (affinity-mode).
	Mode balance.Affinity
	// CookieName is session-cookie-name (default INGRESSCOOKIE).
	CookieName string
	// Path is session-cookie-path; "" means the matched route's path.
	Path string
	// Domain is session-cookie-domain, "" for none.
	Domain string
	// MaxAge and Expires are session-cookie-max-age and -expires in
	// seconds as written (decimal digits), "" when unset.
	MaxAge, Expires string
	// SameSite is "None", "Lax", "Strict" or "" (unset).
	SameSite string
	// ConditionalSameSiteNone leaves SameSite=None out for browsers known
	// to reject it.
	ConditionalSameSiteNone bool
	// Secure marks the cookie Secure (session-cookie-secure).
	Secure bool
	// ChangeOnFailure moves the session when its endpoint could not be
	// reached (session-cookie-change-on-failure).
	ChangeOnFailure bool
}

// CookiePath is where a session cookie set on a request rt matched
// applies when session-cookie-path is not set: the route's path as
// declared, as ingress-nginx writes the location's ($location_path). A
// path matched as a regex (ImplementationSpecific, a host in regex mode)
// is that path when it is a plain one; a pattern with regex syntax means
// nothing as a cookie path (pattern is true), nor does a fallback (rt nil)
// have one: "/" then.
func CookiePath(rt *Route) (path string, pattern bool) {
	switch {
	case rt == nil:
		return "/", false
	case rt.Type == Regex:
		p := rt.Path
		if strings.HasPrefix(rt.OrderPath, "/") {
			p = rt.OrderPath // the declared path of a regex-mode pattern
		}
		if !strings.HasPrefix(p, "/") || strings.ContainsAny(p, `\^$*+?()[]{}|`) {
			return "/", true
		}
		return p, false
	case rt.Type == Prefix && rt.Path == "":
		return "/", false
	case rt.Type == Prefix && rt.CookieSlash:
		return rt.Path + "/", false
	}
	return rt.Path, false
}

// CanaryTotal is the denominator of a canary weight: total, or 100 when
// total is below 100, as ingress-nginx reads canary-weight-total.
func CanaryTotal(total int) int { return max(total, 100) }

// trafficText renders a backend's canary and affinity, one line each,
// after its backend line (see WriteText).
func trafficText(be *Backend) string {
	t := be.Traffic
	if t == nil {
		return ""
	}
	var b strings.Builder
	if c := t.Canary; c != nil {
		b.WriteString("  canary ")
		if c.Backend != nil {
			b.WriteString(c.Backend.ID + portText(c.Backend, c.PortName))
		} else {
			b.WriteString("none")
		}
		b.WriteString(sourceText(c.Source))
		if c.Header != "" {
			b.WriteString(" header " + c.Header)
			switch {
			case c.HeaderValue != "":
				b.WriteString(" value " + strconv.Quote(c.HeaderValue))
			case c.HeaderPattern != nil:
				b.WriteString(" pattern " + strconv.Quote(c.HeaderPattern.String()))
			case c.HeaderPatternError:
				b.WriteString(" pattern-error (to the primary)")
			}
		}
		if c.Cookie != "" {
			b.WriteString(" cookie " + c.Cookie)
		}
		b.WriteString(" weight " + strconv.Itoa(c.Weight) + "/" + strconv.Itoa(c.WeightTotal))
		if c.Sticky {
			b.WriteString(" sticky")
		}
		b.WriteString("\n")
	}
	if a := t.Affinity; a != nil {
		b.WriteString("  affinity cookie " + a.CookieName + " " + a.Mode.String())
		attr := func(k, v string) {
			if v != "" {
				b.WriteString(" " + k + " " + quoteText(v, false))
			}
		}
		attr("path", a.Path)
		attr("domain", a.Domain)
		attr("max-age", a.MaxAge)
		attr("expires", a.Expires)
		attr("samesite", a.SameSite)
		if a.ConditionalSameSiteNone {
			b.WriteString(" conditional-samesite-none")
		}
		if a.Secure {
			b.WriteString(" secure")
		}
		if a.ChangeOnFailure {
			b.WriteString(" change-on-failure")
		}
		b.WriteString("\n")
	}
	return b.String()
}

// trafficSection is how a backend's requests are shared out beyond the
// pick of an endpoint: its canary and session affinity.
var trafficSection = section{
	name:    "canary-and-affinity",
	route:   []string{"NoAffinityCookie", "CookieSlash"},
	backend: []string{"Traffic"},
	digest: []digestPart{{
		tag:        "traffic",
		backendHas: func(be *Backend) bool { return be.Traffic != nil },
		backend:    encodeTraffic,
	}, {
		// The routes that set no session cookie joined later, under a
		// tag of their own, so tables without them keep their digest.
		tag: "affinity-routes",
		hostHas: func(vh *VirtualHost) bool {
			return slices.ContainsFunc(vh.Routes, func(r *Route) bool { return r.NoAffinityCookie })
		},
		route: func(e *encoder, r *Route) { e.flag(r.NoAffinityCookie) },
	}, {
		// The cookie path of a Prefix path declared with its slash joined
		// later still.
		tag: "affinity-cookie-slash",
		hostHas: func(vh *VirtualHost) bool {
			return slices.ContainsFunc(vh.Routes, func(r *Route) bool { return r.CookieSlash })
		},
		route: func(e *encoder, r *Route) { e.flag(r.CookieSlash) },
	}},
	text: textParts{
		at:           10,
		backendLines: func(b *strings.Builder, be *Backend) { b.WriteString(trafficText(be)) },
		routeLines: func(b *strings.Builder, _ *VirtualHost, r *Route) {
			if r.NoAffinityCookie {
				b.WriteString("    no affinity cookie (the Ingress does not set affinity: cookie)\n")
			}
			if r.CookieSlash {
				b.WriteString("    affinity cookie path " + r.Path + "/ (the path as declared)\n")
			}
		},
	},
}

func encodeTraffic(e *encoder, be *Backend) {
	tr := be.Traffic
	e.flag(tr != nil)
	if tr == nil {
		return
	}
	e.flag(tr.Canary != nil)
	if c := tr.Canary; c != nil {
		e.backendRef(c.Backend)
		e.str(c.Header)
		e.str(c.HeaderValue)
		// The pattern's state is one byte, as the flag it was: 0 none, 1
		// a pattern, 2 a pattern that does not compile.
		pattern, state := "", byte(0)
		switch {
		case c.HeaderPattern != nil:
			pattern, state = c.HeaderPattern.String(), 1
		case c.HeaderPatternError:
			state = 2
		}
		e.raw([]byte{state})
		e.str(pattern)
		e.str(c.Cookie)
		e.num(c.Weight)
		e.num(c.WeightTotal)
		e.flag(c.Sticky)
	}
	e.flag(tr.Affinity != nil)
	if a := tr.Affinity; a != nil {
		e.num(int(a.Mode))
		e.str(a.CookieName)
		e.str(a.Path)
		e.str(a.Domain)
		e.str(a.MaxAge)
		e.str(a.Expires)
		e.str(a.SameSite)
		e.flag(a.ConditionalSameSiteNone)
		e.flag(a.Secure)
		e.flag(a.ChangeOnFailure)
	}
}
