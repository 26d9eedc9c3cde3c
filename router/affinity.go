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
// cookie can pin a request to a canary. As ingress-nginx's sticky
// balancer, a backend reads the session part whichever backend set it: a
// balanced backend places any key on its ring, so two backends sharing a
// cookie name and path keep their sessions instead of replacing each
// other's cookie at every request.

// splitSession splits a cookie value as ingress-nginx's sticky balancer
// does (sticky.lua get_cookie_parsed, util/split.lua split_string): at
// each '|', empty parts left out; the first part is the session, the
// second the backend token.
func splitSession(v string) (session, token string) {
	part := func() string {
		v = strings.TrimLeft(v, "|")
		i := strings.IndexByte(v, '|')
		if i < 0 {
			i = len(v)
		}
		p := v[:i]
		v = v[i:]
		return p
	}
	session = part()
	return session, part()
}

// readSession fills the session part of ch for backend affinity a.
func (st *serving) readSession(ch *choice, a *match.SessionAffinity, rt *match.Route, req *http.Request) {
	ch.affinity = a
	// A fallback is no location an Ingress declares: ingress-nginx's sticky
	// balancer follows a cookie there and sets none.
	ch.noCookie = rt == nil || rt.NoAffinityCookie
	ch.https = req.TLS != nil
	ch.cookiePath = a.Path
	if ch.cookiePath == "" {
		ch.cookiePath = routeCookiePath(rt)
	}
	if a.ConditionalSameSiteNone && a.SameSite == "None" {
		ch.userAgent = req.Header.Get("User-Agent")
	}
	if v, ok := balance.StickyCookie(req.Header["Cookie"], a.CookieName); ok {
		ch.session, _ = splitSession(v)
	}
}

// routeCookiePath is where a session cookie applies when
// session-cookie-path is not set (match.CookiePath).
func routeCookiePath(rt *match.Route) string {
	p, _ := match.CookiePath(rt)
	return p
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
	if !ok || fresh == "" || ch.noCookie {
		return e, ok
	}
	if x.tries > 0 && !ch.affinity.ChangeOnFailure && ch.session != "" && !ch.setCookie {
		// The request's session keeps its endpoint: the next request
		// tries it again. A session this exchange began names the
		// endpoint that serves it, as the sticky balancer sets the
		// cookie again for the retry's pick.
		return e, ok
	}
	h := x.w.Header()
	if x.tries > 0 {
		h.Del("Set-Cookie")
	}
	h.Add("Set-Cookie", sessionCookie(ch, fresh+"|"+x.balancer.Token(), time.Now()))
	ch.session, ch.setCookie = fresh, true
	return e, ok
}

// sessionCookie renders the Set-Cookie value as ingress-nginx's sticky
// balancer has lua-resty-cookie write it: the attributes in its order
// (Expires, Max-Age, Domain, Path, Secure, HttpOnly, SameSite; its
// lib/resty/cookie.lua:159-167), Expires in nginx's cookie_time format,
// and Secure when session-cookie-secure is set or the request came over
// TLS (rootfs/etc/nginx/lua/balancer/sticky.lua:90-93: a false setting is
// left out of the configuration, so the request's scheme decides).
func sessionCookie(ch *choice, value string, now time.Time) string {
	a := ch.affinity
	var b strings.Builder
	b.WriteString(a.CookieName + "=" + value)
	if a.Expires != "" {
		if n, err := strconv.ParseInt(a.Expires, 10, 64); err == nil {
			b.WriteString("; Expires=")
			b.Write(cookieTime(make([]byte, 0, 32), cookieExpiry(now, n)))
		}
	}
	if a.MaxAge != "" {
		b.WriteString("; Max-Age=" + a.MaxAge)
	}
	if a.Domain != "" {
		b.WriteString("; Domain=" + a.Domain)
	}
	b.WriteString("; Path=" + ch.cookiePath)
	if a.Secure || ch.https {
		b.WriteString("; Secure")
	}
	b.WriteString("; HttpOnly")
	if s := a.SameSite; s != "" && !(s == "None" && a.ConditionalSameSiteNone && sameSiteNoneIncompatible(ch.userAgent)) {
		b.WriteString("; SameSite=" + s)
	}
	return b.String()
}

// cookieExpiry is n seconds after now, as nginx adds them to the clock:
// in whole seconds, where a time.Duration would overflow past 292 years;
// held within 1970 to 9999, the years a cookie date is written for (one
// before 1970 has expired all the same).
func cookieExpiry(now time.Time, n int64) time.Time {
	const last = 253402300799 // 9999-12-31 23:59:59 UTC
	s := now.Unix()
	switch {
	case n > last-s:
		return time.Unix(last, 0)
	case n < -s:
		return time.Unix(0, 0)
	}
	return time.Unix(s+n, 0)
}

// cookieTime appends t as nginx's ngx_http_cookie_time writes it (what
// ngx.cookie_time returns): "Thu, 18-Nov-10 11:27:35 GMT", the year in two
// digits up to 2037 and in four after.
func cookieTime(dst []byte, t time.Time) []byte {
	t = t.UTC()
	dst = append(dst, t.Format("Mon, 02-Jan-")...)
	if y := t.Year(); y > 2037 {
		dst = strconv.AppendInt(dst, int64(y), 10)
	} else {
		dst = append(dst, byte('0'+y%100/10), byte('0'+y%10))
	}
	return append(dst, t.Format(" 15:04:05 GMT")...)
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
