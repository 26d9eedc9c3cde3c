package compile

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"ramjet.dev/ramjet/match"
)

// HTTPRoute is one route of a route source other than Ingress (SPEC §20),
// in compile's own terms: a translator (compile/gatewayapi for the Gateway
// API) has already attached it to its parents, chosen its host names and
// checked its references, so compile only places its rules in the table
// beside the Ingresses' paths. It is not annotation-shaped: every setting
// is a field.
type HTTPRoute struct {
	// Namespace and Name name the route in warnings and in the table.
	Namespace, Name string
	// Created is the creation timestamp: among routes the oldest wins a
	// tie, then namespace/name (the Gateway API's tie-break), and against
	// an Ingress the older object wins (SPEC §20).
	Created time.Time
	// Hostnames are the virtual hosts the rules are served on: names or
	// "*." wildcards, "" for the catch-all. Empty means the catch-all.
	Hostnames []string
	// Rules in declaration order; among equal matches the first wins.
	Rules []HTTPRouteRule
}

// HTTPRouteRule is one rule: its matches, any of which selects it, and
// the backend it sends to.
type HTTPRouteRule struct {
	// Field locates the rule in its object ("spec.rules[0]").
	Field string
	// Matches are ORed; none means a PathPrefix "/" match.
	Matches []HTTPRouteMatch
	// Backends share the rule's requests by weight. Today one backend
	// with a positive weight is served; a split across several is refused
	// with a warning (the canary split lives on a backend, not a rule).
	Backends []WeightedBackend
}

// HTTPRouteMatch is one match of a rule.
type HTTPRouteMatch struct {
	// Field locates the match ("spec.rules[0].matches[1]"), "" for the
	// implied match of a rule without any.
	Field string
	// Type is match.Exact, match.Prefix or match.Regex (the Gateway API's
	// Exact, PathPrefix and RegularExpression); Path is the value.
	Type match.PathType
	Path string
}

// WeightedBackend is a Service port and its share of a rule's requests.
type WeightedBackend struct {
	Service ServiceRef
	Weight  int32
	// Field locates the backend reference ("spec.rules[0].backendRefs[0]").
	Field string
}

// HTTPRouteKind is the Kind of an HTTPRoute in warnings and sources.
const HTTPRouteKind = "HTTPRoute"

func (r *HTTPRoute) ref() Ref { return Ref{Kind: HTTPRouteKind, Namespace: r.Namespace, Name: r.Name} }

// buildHTTPRoutes places the routes' rules after the Ingresses' paths,
// routes oldest first, then by namespace/name, then in rule and match
// order, so that the first declaration of a key wins among routes as the
// Gateway API's precedence asks. Against an Ingress path with the same
// host and key the older object wins, the Ingress on equal age (SPEC §20).
func (b *builder) buildHTTPRoutes() {
	if len(b.snap.HTTPRoutes) == 0 {
		return
	}
	routes := slices.Clone(b.snap.HTTPRoutes)
	slices.SortStableFunc(routes, compareHTTPRoutes)
	order := 0
	for _, v := range b.vhostOrder {
		for _, r := range v.vh.Routes {
			order = max(order, r.Order)
		}
	}
	for _, hr := range routes {
		if hr == nil {
			continue
		}
		hosts := hr.Hostnames
		if len(hosts) == 0 {
			hosts = []string{""}
		}
		for _, host := range hosts {
			if why := invalidHost(host); why != "" {
				b.warn(RuleRejected, hr.ref(), "spec.hostnames",
					"host "+strconv.Quote(host)+" "+why+"; the route is not served there")
				continue
			}
			v, ok := b.vhosts[host]
			if !ok {
				v = b.newVhost(host, nil)
			}
			for i := range hr.Rules {
				rule := &hr.Rules[i]
				backend := b.ruleBackend(hr, rule)
				if backend == nil {
					continue
				}
				matches := rule.Matches
				if len(matches) == 0 {
					matches = []HTTPRouteMatch{{Field: rule.Field, Type: match.Prefix, Path: "/"}}
				}
				for _, m := range matches {
					order++
					b.declareHTTPRouteMatch(hr, v, m, backend, order)
				}
			}
		}
	}
}

// compareHTTPRoutes orders routes oldest first, then by namespace/name.
func compareHTTPRoutes(x, y *HTTPRoute) int {
	if x == nil || y == nil {
		return 0
	}
	return cmp.Or(x.Created.Compare(y.Created), cmp.Compare(x.Namespace, y.Namespace), cmp.Compare(x.Name, y.Name))
}

// ruleBackend resolves the rule's backend, or warns and returns nil when
// the rule is not served.
func (b *builder) ruleBackend(hr *HTTPRoute, rule *HTTPRouteRule) *match.Backend {
	var chosen *WeightedBackend
	positive := 0
	for i := range rule.Backends {
		if rule.Backends[i].Weight > 0 {
			positive++
			chosen = &rule.Backends[i]
		}
	}
	switch {
	case len(rule.Backends) == 0:
		b.warn(BackendUnsupported, hr.ref(), rule.Field+".backendRefs",
			"the rule names no backend; it is not served")
		return nil
	case positive == 0:
		b.warn(BackendUnsupported, hr.ref(), rule.Field+".backendRefs",
			"every backend has weight 0; the rule is not served")
		return nil
	case positive > 1:
		b.warn(BackendUnsupported, hr.ref(), rule.Field+".backendRefs",
			"a split across "+strconv.Itoa(positive)+" weighted backends is not served yet; the rule is not served")
		return nil
	}
	svc := chosen.Service
	r := b.resolve(svc.Namespace, svc.Name, svc.Port)
	switch r.problem {
	case ServiceNotFound, ExternalNameUnsupported:
		b.warn(r.problem, hr.ref(), chosen.Field+".name", r.message+"; requests answer 503")
	case ServicePortNotFound:
		b.warn(r.problem, hr.ref(), chosen.Field+".port", r.message+"; requests answer 503")
	}
	r.backend.used = true
	return r.backend.b
}

// declareHTTPRouteMatch validates one match and adds its route to v unless
// an earlier declaration of the same key wins.
func (b *builder) declareHTTPRouteMatch(hr *HTTPRoute, v *vhost, m HTTPRouteMatch, backend *match.Backend, order int) {
	key, re, why := b.httpRouteKey(m)
	if why != "" {
		b.warn(PathRejected, hr.ref(), m.Field+".path", "path "+strconv.Quote(m.Path)+" "+why+"; it is not served")
		return
	}
	r := b.routeSlab.new()
	*r = match.Route{
		Type:    m.Type,
		Path:    key,
		Source:  match.Source{Kind: HTTPRouteKind, Namespace: hr.Namespace, Name: hr.Name, Field: m.Field},
		Order:   order,
		Regexp:  re,
		Backend: backend,
	}
	winner := v.route(routeKey{m.Type, key})
	if winner == nil {
		v.addRoute(r)
		return
	}
	src := winner.Source
	if src.Kind == "" {
		// An Ingress path: the older object wins, the Ingress on equal age.
		if ing := b.ingressOf(src); ing != nil && hr.Created.Before(ing.obj.CreationTimestamp.Time) {
			b.conflict(RouteConflict, ing.ref(), src.Field,
				fmt.Sprintf("%s: %s path %q is the same route as the older HTTPRoute %s/%s; this one is not served",
					hostLabel(v.vh.Name), m.Type, m.Path, hr.Namespace, hr.Name),
				hr.ref(), m.Field)
			v.replaceRoute(winner, r)
			return
		}
		b.conflict(RouteConflict, hr.ref(), m.Field,
			fmt.Sprintf("%s: %s path %q is the same route as Ingress %s, which is as old or older; this one is not served",
				hostLabel(v.vh.Name), m.Type, m.Path, src.Ingress()),
			ingressRef(src.Namespace, src.Name), src.Field)
		return
	}
	why = "an older HTTPRoute, or one as old that goes first by namespace/name"
	if src.Namespace == hr.Namespace && src.Name == hr.Name {
		why = "an earlier rule or match of this HTTPRoute"
	}
	b.conflict(RouteConflict, hr.ref(), m.Field,
		fmt.Sprintf("%s: %s path %q is the same route as %s; this one is not served", hostLabel(v.vh.Name), m.Type, m.Path, why),
		Ref{Kind: HTTPRouteKind, Namespace: src.Namespace, Name: src.Name}, src.Field)
}

// httpRouteKey is routePath for a route match: the key the table matches,
// or why the path is refused.
func (b *builder) httpRouteKey(m HTTPRouteMatch) (key string, re *match.Regexp, why string) {
	path := m.Path
	if path == "" || path[0] != '/' {
		return "", nil, "does not begin with /"
	}
	switch m.Type {
	case match.Exact:
		return path, nil, badSegment(path)
	case match.Prefix:
		if why := badSegment(path); why != "" {
			return "", nil, why
		}
		return strings.TrimRight(path, "/"), nil, ""
	case match.Regex:
		path = strings.TrimPrefix(path, "^")
		res, cached := b.regexps[path]
		if !cached {
			res.re, res.err = match.CompileRegex(path, 0)
			b.regexps[path] = res
		}
		if res.err != nil {
			return "", nil, "is not a usable regular expression: " + res.err.Error()
		}
		return path, res.re, ""
	}
	return "", nil, "has an unknown match type"
}
