package gatewayapi

import (
	"regexp"
	"slices"
	"strings"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// ingress-nginx never redirects the paths its ConfigMap's
// no-tls-redirect-locations lists (/.well-known/acme-challenge by default,
// so that HTTP-01 challenges reach their solver), nor those below them, to
// HTTPS (SPEC §12): the route that matches such a request serves it over
// plain HTTP. On the Gateway's HTTP listener a host's redirected rules
// answer the redirect, so the rules that serve exempt paths get a twin
// there without it:
//
//   - a rule whose paths all lie under exempt paths is not redirected at
//     all (add);
//   - the PathPrefix rules whose prefix holds an exempt path (for the ACME
//     path, "/" or "/.well-known"): of these the longest serves that path
//     in both readings, and when it is redirected it gets a twin on the
//     HTTP listener, the same rule with PathPrefix the exempt path, which
//     outranks it there and is outranked by every longer path that
//     already outranked it. An exempt path listed with a trailing slash
//     ("/healthz/") leaves the path without it redirected, which the
//     twin's PathPrefix matches too: an Exact rule for that path, which
//     outranks the twin, redirects it, unless an Exact rule of the host
//     already decides it.
//
// A redirected regular expression that matches an exempt path has no such
// twin (the Gateway API cannot intersect a pattern with a prefix): the
// Ingress is listed.

// acmePath is ingress-nginx's no-tls-redirect-locations default, the
// HTTP-01 challenge path.
const acmePath = "/.well-known/acme-challenge"

// acmeRule is a rule of the host being converted whose PathPrefix holds
// an exempt path.
type acmeRule struct {
	g          *routeGroup
	rule       gwv1.HTTPRouteRule
	exempt     string // the exempt path as exemptPaths lists it
	prefix     int    // the prefix's length, without a trailing slash
	redirected bool
}

// exemptPaths are the paths the HTTPS redirect leaves alone: the
// ConfigMap's no-tls-redirect-locations, one trailing slash at most. One
// with a trailing slash whose bare path another leaves alone too is
// listed bare, as that one exempts what it does.
func (c *converter) exemptPaths() []string {
	paths := []string{acmePath}
	if cm := c.opts.Compile.ConfigMap; cm != nil && cm.Router.NoTLSRedirectLocations != nil {
		paths = cm.Router.NoTLSRedirectLocations
	}
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		if t := strings.TrimRight(p, "/"); t != p && t != "" {
			p = t + "/"
		}
		out = append(out, p)
	}
	var uniq []string
	for _, p := range out {
		if b := exemptBase(p); b != p && slices.ContainsFunc(out, func(o string) bool { return o != p && exemptUnder(b, o) }) {
			p = b
		}
		if !slices.Contains(uniq, p) {
			uniq = append(uniq, p)
		}
	}
	return uniq
}

// exemptBase is exempt path e without its trailing slash ("/" for "/"):
// the PathPrefix that holds every path under it.
func exemptBase(e string) string {
	if t := strings.TrimSuffix(e, "/"); t != "" {
		return t
	}
	return e
}

// exemptUnder reports whether the normalized path p is one exempt path e
// leaves alone, as the router judges it: e itself, or below it, where
// e's trailing slash, if any, is part of what p must begin with.
func exemptUnder(p, e string) bool {
	return strings.HasPrefix(p, e) && (len(p) == len(e) || strings.HasSuffix(e, "/") || p[len(e)] == '/')
}

// redirectCode is the status of the HTTPS redirect: the ConfigMap's
// http-redirect-code, every value of which (301, 302, 307, 308) is a
// RequestRedirect status.
func (c *converter) redirectCode() int {
	if cm := c.opts.Compile.ConfigMap; cm != nil && cm.Router.HTTPRedirectCode != 0 {
		return cm.Router.HTTPRedirectCode
	}
	return sslRedirectCode
}

// holds reports whether PathPrefix p (no trailing slash) matches every
// path under exempt.
func holds(p, exempt string) bool {
	return p == "" || strings.HasPrefix(exempt+"/", p+"/")
}

// acmeCandidate records a rule added to g that may serve exempt paths.
func (c *converter) acmeCandidate(g *routeGroup, rule gwv1.HTTPRouteRule, redirected bool) {
	for _, m := range rule.Matches {
		if m.Path == nil || m.Path.Type == nil || m.Path.Value == nil {
			continue
		}
		v := *m.Path.Value
		switch *m.Path.Type {
		case gwv1.PathMatchExact:
			c.exacts = append(c.exacts, v)
		case gwv1.PathMatchPathPrefix:
			p := strings.TrimSuffix(v, "/")
			for _, e := range c.exempt {
				if holds(p, strings.TrimSuffix(e, "/")) {
					c.acme = append(c.acme, acmeRule{g: g, rule: rule, exempt: e, prefix: len(p), redirected: redirected})
				}
			}
		case gwv1.PathMatchRegularExpression:
			if !redirected {
				continue
			}
			// ramjet anchors a path pattern at the start only (§4).
			re, err := regexp.Compile("^(?:" + v + ")")
			for _, e := range c.exempt {
				if err != nil || re.MatchString(e+"/AbCd-Ef_0123456789") || re.MatchString(e) {
					key := nginxPrefix + "ssl-redirect"
					if ing := c.ingresses[nsName{g.key.ns, g.key.name}]; ing != nil && ing.Annotations[nginxPrefix+"force-ssl-redirect"] == "true" {
						key = nginxPrefix + "force-ssl-redirect"
					}
					c.note(g.key.ns, g.key.name, key, "path pattern "+v+" of "+hostName(g.key.host)+" matches "+e+
						", which ingress-nginx never redirects (no-tls-redirect-locations) and the HTTP listener's RequestRedirect does; a pattern has no Gateway API form that leaves those paths out")
					break
				}
			}
		}
	}
}

// underExempt reports whether every path of rule lies under an exempt
// path (Exact or PathPrefix, which matches its value without a trailing
// slash too).
func (c *converter) underExempt(rule gwv1.HTTPRouteRule) bool {
	return len(rule.Matches) > 0 && !slices.ContainsFunc(rule.Matches, func(m gwv1.HTTPRouteMatch) bool {
		if m.Path == nil || m.Path.Type == nil || m.Path.Value == nil || *m.Path.Type == gwv1.PathMatchRegularExpression {
			return true
		}
		v := *m.Path.Value
		if *m.Path.Type == gwv1.PathMatchPathPrefix {
			v = exemptBase(v)
		}
		return !slices.ContainsFunc(c.exempt, func(e string) bool { return exemptUnder(v, e) })
	})
}

// acmeTwins adds, per exempt path, the HTTP listener's twins of the
// host's longest redirected PathPrefix rules that hold it.
func (c *converter) acmeTwins() {
	for _, e := range c.exempt {
		longest := -1
		for _, a := range c.acme {
			if a.exempt == e {
				longest = max(longest, a.prefix)
			}
		}
		for _, a := range c.acme {
			if a.exempt != e || a.prefix != longest || !a.redirected {
				// A shorter prefix is outranked there; one under the
				// exempt path was kept unredirected by add.
				continue
			}
			base := exemptBase(e)
			twin := a.rule
			twin.Matches = slices.Clone(a.rule.Matches)
			for i := range twin.Matches {
				twin.Matches[i].Path = &gwv1.HTTPPathMatch{Type: ptr(gwv1.PathMatchPathPrefix), Value: ptr(pathValue(base))}
			}
			if a.prefix == len(base) {
				// The twin has the rule's own path, whose redirect it
				// must win against: the first of equal rules wins.
				a.g.httpOnly = slices.Insert(a.g.httpOnly, 0, twin)
			} else {
				a.g.httpOnly = append(a.g.httpOnly, twin)
			}
			if base == e || slices.Contains(c.exacts, pathValue(base)) {
				continue
			}
			bare := gwv1.HTTPRouteRule{Matches: slices.Clone(a.rule.Matches), Filters: c.httpsRedirect()}
			for i := range bare.Matches {
				bare.Matches[i].Path = &gwv1.HTTPPathMatch{Type: ptr(gwv1.PathMatchExact), Value: ptr(pathValue(base))}
			}
			a.g.httpOnly = append(a.g.httpOnly, bare)
		}
	}
}
