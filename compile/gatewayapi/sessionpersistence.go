package gatewayapi

import (
	"cmp"
	"net/url"
	"strconv"
	"strings"
	"time"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"ramjet.dev/ramjet/balance"
	"ramjet.dev/ramjet/match"
)

// The migration of cookie session affinity (affinity: cookie and its
// session-cookie-* annotations): a rule's sessionPersistence is the
// affinity ramjet serves for it (rules.go), so the route of an Ingress
// whose affinity has that form gets it, and an Ingress with another
// affinity has its affinity annotations listed with what differs.

// affinityKey reports an annotation (without prefix) that says what the
// session cookie is.
func affinityKey(short string) bool {
	return short == "affinity" || short == "affinity-mode" || strings.HasPrefix(short, "session-cookie-")
}

// sessionPersistence writes the affinity of the route r matched, when it
// sets the cookie (its Ingress asks for affinity), as rule's
// sessionPersistence, or records why it cannot: what it records decides
// how the Ingress's affinity annotations are listed (finish).
func (c *converter) sessionPersistence(rule *gwv1.HTTPRouteRule, r *match.Route) {
	b := r.Backend
	if b == nil || b.Traffic == nil || b.Traffic.Affinity == nil || r.NoAffinityCookie {
		return
	}
	k := nsName{r.Source.Namespace, r.Source.Name}
	sp, why := persistenceOf(b.Traffic.Affinity)
	if why == "" && canary(b) != nil {
		why = "its backend has a canary, which sessionPersistence does not keep a session on, and a rule split among weighted backends keeps none"
	}
	if want, _ := match.CookiePath(r); why == "" && want != ruleCookiePath(rule) {
		why = "the cookie's path is " + strconv.Quote(want) + ", where sessionPersistence, which names none, sets the path its rule matches (" +
			strconv.Quote(ruleCookiePath(rule)) + ")"
	}
	if why != "" {
		c.affinity[k] = "cookie session affinity is not carried over: " + why + "; write sessionPersistence by hand where the difference does not matter"
		return
	}
	if _, failed := c.affinity[k]; !failed {
		c.affinity[k] = ""
	}
	rule.SessionPersistence = sp
}

// ruleCookiePath is the cookie path ramjet sets for a converted rule's
// sessionPersistence (match.CookiePath of its route): an Exact path, a
// PathPrefix without its trailing slash ("/" for "/"), both decoded; ""
// for a regular expression, whose cookie path is not the Ingress's.
func ruleCookiePath(rule *gwv1.HTTPRouteRule) string {
	if len(rule.Matches) != 1 || rule.Matches[0].Path == nil || rule.Matches[0].Path.Type == nil || rule.Matches[0].Path.Value == nil {
		return ""
	}
	p := rule.Matches[0].Path
	v, err := url.PathUnescape(*p.Value)
	switch {
	case err != nil:
		return ""
	case *p.Type == gwv1.PathMatchExact:
		return v
	case *p.Type == gwv1.PathMatchPathPrefix:
		return cmp.Or(strings.TrimRight(v, "/"), "/")
	}
	return ""
}

// persistenceOf is a as sessionPersistence, or why no sessionPersistence
// serves the same cookie: ramjet's keeps a session on its endpoint
// (affinity-mode persistent), names the cookie, and gives it a Max-Age
// only as a Permanent cookie's absoluteTimeout, which the API writes as
// at most five digits a unit.
func persistenceOf(a *match.SessionAffinity) (*gwv1.SessionPersistence, string) {
	var gaps []string
	if a.Mode != balance.Persistent {
		gaps = append(gaps, "affinity-mode balanced (the default) places a new session by consistent hashing and moves some after a scale-up, where sessionPersistence keeps each on its endpoint (affinity-mode persistent)")
	}
	if a.Path != "" || a.Domain != "" || a.SameSite != "" || a.ConditionalSameSiteNone || a.Secure {
		gaps = append(gaps, "sessionPersistence sets no cookie path, domain, SameSite or Secure attribute")
	}
	if a.ChangeOnFailure {
		gaps = append(gaps, "sessionPersistence does not move a session whose endpoint fails (session-cookie-change-on-failure)")
	}
	if a.Expires != "" {
		gaps = append(gaps, "sessionPersistence sets no Expires attribute (session-cookie-expires), only a Permanent cookie's Max-Age")
	}
	sp := &gwv1.SessionPersistence{SessionName: new(a.CookieName), Type: new(gwv1.CookieBasedSessionPersistence)}
	if a.MaxAge != "" {
		s, err := strconv.ParseInt(a.MaxAge, 10, 64)
		d := duration(time.Duration(s) * time.Second)
		if err != nil || s < 1 || d == "" {
			gaps = append(gaps, "session-cookie-max-age "+a.MaxAge+" has no absoluteTimeout of a second or more to match it")
		}
		sp.AbsoluteTimeout = &d
		sp.CookieConfig = &gwv1.CookieConfig{LifetimeType: new(gwv1.PermanentCookieLifetimeType)}
	}
	if len(gaps) > 0 {
		return nil, strings.Join(gaps, "; ")
	}
	return sp, ""
}

// duration writes d, whole seconds, as a Gateway API Duration (GEP-2257:
// at most five digits in each of h, m and s); "" when the hours need more.
func duration(d time.Duration) gwv1.Duration {
	h, m, s := int64(d/time.Hour), int64(d%time.Hour/time.Minute), int64(d%time.Minute/time.Second)
	if h > 99999 {
		return ""
	}
	var b strings.Builder
	for _, u := range []struct {
		n    int64
		unit string
	}{{h, "h"}, {m, "m"}, {s, "s"}} {
		if u.n > 0 {
			b.WriteString(strconv.FormatInt(u.n, 10) + u.unit)
		}
	}
	return gwv1.Duration(b.String())
}
