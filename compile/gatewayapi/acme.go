package gatewayapi

import (
	"regexp"
	"slices"
	"strings"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// ingress-nginx never redirects /.well-known/acme-challenge and the paths
// below it to HTTPS, so that HTTP-01 challenges reach their solver (SPEC
// §12): the route that matches such a request serves it over plain HTTP.
// On the Gateway's HTTP listener a host's redirected rules answer 308, so
// the rules that serve challenge paths get a twin there without the
// redirect:
//
//   - a rule whose paths all lie under the challenge path is not
//     redirected at all (add);
//   - the PathPrefix rules whose prefix holds the challenge path ("/",
//     "/.well-known"): of these the longest serves challenges in both
//     readings, and when it is redirected it gets a twin on the HTTP
//     listener, the same rule with PathPrefix /.well-known/acme-challenge,
//     which outranks it there and is outranked by every longer path that
//     already outranked it.
//
// A redirected regular expression that matches challenge paths has no
// such twin (the Gateway API cannot intersect a pattern with a prefix):
// the Ingress is listed.
const acmePath = "/.well-known/acme-challenge"

// acmeRule is a rule of the host being converted whose PathPrefix holds
// the challenge path.
type acmeRule struct {
	g          *routeGroup
	rule       gwv1.HTTPRouteRule
	prefix     int // the prefix's length, without a trailing slash
	redirected bool
}

// acmeSample is a challenge path a regular expression is tried on.
const acmeSample = acmePath + "/AbCd-Ef_0123456789"

// acmeCandidate records a rule added to g that may serve challenge paths.
func (c *converter) acmeCandidate(g *routeGroup, rule gwv1.HTTPRouteRule, redirected bool) {
	for _, m := range rule.Matches {
		if m.Path == nil || m.Path.Type == nil || m.Path.Value == nil {
			continue
		}
		v := *m.Path.Value
		switch *m.Path.Type {
		case gwv1.PathMatchPathPrefix:
			if p := strings.TrimSuffix(v, "/"); strings.HasPrefix(acmePath+"/", p+"/") {
				c.acme = append(c.acme, acmeRule{g: g, rule: rule, prefix: len(p), redirected: redirected})
			}
		case gwv1.PathMatchRegularExpression:
			if !redirected {
				continue
			}
			// ramjet anchors a path pattern at the start only (§4).
			if re, err := regexp.Compile("^(?:" + v + ")"); err != nil || re.MatchString(acmeSample) || re.MatchString(acmePath) {
				key := nginxPrefix + "ssl-redirect"
				if ing := c.ingresses[nsName{g.key.ns, g.key.name}]; ing != nil && ing.Annotations[nginxPrefix+"force-ssl-redirect"] == "true" {
					key = nginxPrefix + "force-ssl-redirect"
				}
				c.note(g.key.ns, g.key.name, key, "path pattern "+v+" of "+hostName(g.key.host)+" matches "+acmePath+
					", which ingress-nginx never redirects and the HTTP listener's RequestRedirect does; a pattern has no Gateway API form that leaves those paths out")
			}
		}
	}
}

// underACME reports whether every path of rule lies under the challenge
// path (Exact or PathPrefix).
func underACME(rule gwv1.HTTPRouteRule) bool {
	return len(rule.Matches) > 0 && !slices.ContainsFunc(rule.Matches, func(m gwv1.HTTPRouteMatch) bool {
		if m.Path == nil || m.Path.Type == nil || m.Path.Value == nil || *m.Path.Type == gwv1.PathMatchRegularExpression {
			return true
		}
		v := *m.Path.Value
		return v != acmePath && !strings.HasPrefix(v, acmePath+"/")
	})
}

// acmeTwins adds the HTTP listener's twins of the host's longest
// redirected PathPrefix rules that hold the challenge path.
func (c *converter) acmeTwins() {
	longest := -1
	for _, a := range c.acme {
		longest = max(longest, a.prefix)
	}
	for _, a := range c.acme {
		if a.prefix != longest || !a.redirected || longest == len(acmePath) {
			// A shorter prefix is outranked there; one equal to the
			// challenge path was kept unredirected by add.
			continue
		}
		twin := a.rule
		twin.Matches = slices.Clone(a.rule.Matches)
		for i := range twin.Matches {
			twin.Matches[i].Path = &gwv1.HTTPPathMatch{Type: ptr(gwv1.PathMatchPathPrefix), Value: ptr(acmePath)}
		}
		a.g.httpOnly = append(a.g.httpOnly, twin)
	}
}
