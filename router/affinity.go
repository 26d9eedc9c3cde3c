package router

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"ramjet.dev/ramjet/balance"
	"ramjet.dev/ramjet/match"
)

// Cookie session affinity (SPEC §9). The cookie's value is
// "<session>|<backend token>", the layout ingress-nginx uses: the session
// part names the endpoint without revealing its address (see
// balance.Balancer.PickSession), the token names the backend, so that one
// cookie can pin a request to a canary and a cookie of another backend
// is never read as this one's.

// splitSession splits a cookie value at its last '|'.
func splitSession(v string) (session, token string) {
	i := strings.LastIndexByte(v, '|')
	if i < 0 {
		return "", ""
	}
	return v[:i], v[i+1:]
}

// readSession fills the session part of ch for backend affinity a.
func (st *serving) readSession(ch *choice, a *match.SessionAffinity, rt *match.Route, req *http.Request) {
	ch.affinity = a
	ch.cookiePath = a.Path
	if ch.cookiePath == "" {
		ch.cookiePath = routeCookiePath(rt)
	}
	if a.ConditionalSameSiteNone && a.SameSite == "None" {
		ch.userAgent = req.Header.Get("User-Agent")
	}
	v, ok := balance.Cookie(req, a.CookieName)
	if !ok {
		return
	}
	session, token := splitSession(v)
	if bal := st.balancers[ch.backend]; bal != nil && token == bal.Token() {
		ch.session = session
	}
}

// routeCookiePath is where a session cookie applies when
// session-cookie-path is not set: the matched route's path, as
// ingress-nginx uses the location's. A regex means nothing as a cookie
// path, nor does a fallback have one: "/" then.
func routeCookiePath(rt *match.Route) string {
	switch {
	case rt == nil || rt.Type == match.Regex:
		return "/"
	case rt.Type == match.Prefix && rt.Path == "":
		return "/"
	}
	return rt.Path
}

// pickEndpoint picks for the exchange, never one of tried: by its session
// when the backend has affinity, else by the policy. A new session, or one moved after a
// failure with session-cookie-change-on-failure, sets the cookie; the
// response has not started, so an earlier cookie of this exchange is
// replaced rather than doubled.
func (x *exchange) pickEndpoint(tried []balance.Endpoint) (balance.Endpoint, bool) {
	ch := &x.choice
	if ch.affinity == nil {
		return x.balancer.Pick(x.key, tried...)
	}
	e, fresh, ok := x.balancer.PickSession(ch.session, x.key, tried...)
	if !ok || fresh == "" {
		return e, ok
	}
	if x.tries > 0 && !ch.affinity.ChangeOnFailure && ch.session != "" {
		// The session keeps its endpoint: the next request tries it again.
		return e, ok
	}
	h := x.w.Header()
	if x.tries > 0 {
		h.Del("Set-Cookie")
	}
	h.Add("Set-Cookie", sessionCookie(ch, fresh+"|"+x.balancer.Token(), time.Now()))
	ch.session = fresh
	return e, ok
}

// sessionCookie renders the Set-Cookie value, attributes in the order
// ingress-nginx writes them.
func sessionCookie(ch *choice, value string, now time.Time) string {
	a := ch.affinity
	var b strings.Builder
	b.WriteString(a.CookieName + "=" + value + "; Path=" + ch.cookiePath)
	if a.Domain != "" {
		b.WriteString("; Domain=" + a.Domain)
	}
	if a.Expires != "" {
		if n, err := strconv.ParseInt(a.Expires, 10, 64); err == nil {
			b.WriteString("; Expires=" + now.Add(time.Duration(n)*time.Second).UTC().Format(http.TimeFormat))
		}
	}
	if a.MaxAge != "" {
		b.WriteString("; Max-Age=" + a.MaxAge)
	}
	if a.Secure {
		b.WriteString("; Secure")
	}
	b.WriteString("; HttpOnly")
	if s := a.SameSite; s != "" && !(s == "None" && a.ConditionalSameSiteNone && sameSiteNoneIncompatible(ch.userAgent)) {
		b.WriteString("; SameSite=" + s)
	}
	return b.String()
}

// sameSiteNoneIncompatible reports browsers known to reject or mistreat
// SameSite=None cookies (old Chrome versions, iOS 12, macOS 10.14 Safari),
// for session-cookie-conditional-samesite-none: the user-agent substrings
// ingress-nginx checks.
func sameSiteNoneIncompatible(ua string) bool {
	switch {
	case ua == "":
		return false
	case strings.Contains(ua, "Chrome/4"), strings.Contains(ua, "Chrome/5"), strings.Contains(ua, "Chrome/6"):
		return true
	case strings.Contains(ua, "CPU iPhone OS 12"), strings.Contains(ua, "iPad; CPU OS 12"):
		return true
	case strings.Contains(ua, "Macintosh") && strings.Contains(ua, "Intel Mac OS X 10_14") &&
		strings.Contains(ua, "Safari") && !strings.Contains(ua, "Chrome"):
		return true
	}
	return false
}

// affinityMode is the balance mode for b's session affinity.
func affinityMode(b *match.Backend) balance.Affinity {
	if b.Traffic == nil || b.Traffic.Affinity == nil {
		return balance.NoAffinity
	}
	return b.Traffic.Affinity.Mode
}
