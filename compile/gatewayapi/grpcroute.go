package gatewayapi

import (
	"cmp"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"ramjet.dev/ramjet/compile"
	"ramjet.dev/ramjet/match"
)

// GRPCRouteKind is the Kind of a GRPCRoute.
const GRPCRouteKind = compile.GRPCRouteKind

// KindConflict: an HTTPRoute and a GRPCRoute attached to one listener
// share a hostname; the older is served there and the other is not
// accepted (GRPCRoute, spec.hostnames).
const KindConflict compile.Reason = "RouteKindConflict"

// routeKind is the Kind of the route being translated.
func (t *translator) routeKind() string { return cmp.Or(t.kind, compile.HTTPRouteKind) }

// asHTTPRoute is the part of a GRPCRoute that attachment reads (metadata,
// parentRefs, hostnames) in an HTTPRoute's shape, so that a GRPCRoute
// attaches to listeners as an HTTPRoute does.
func asHTTPRoute(g *gwv1.GRPCRoute) *gwv1.HTTPRoute {
	return &gwv1.HTTPRoute{ObjectMeta: g.ObjectMeta,
		Spec: gwv1.HTTPRouteSpec{CommonRouteSpec: g.Spec.CommonRouteSpec, Hostnames: g.Spec.Hostnames}}
}

// grpcRoutes translates the GRPCRoutes and appends them to out, the
// HTTPRoutes' translation; then, where an HTTPRoute and a GRPCRoute on one
// listener share a hostname, keeps the older there (grpcKindConflicts).
func (t *translator) grpcRoutes(out []*compile.HTTPRoute) []*compile.HTTPRoute {
	if len(t.objs.GRPCRoutes) == 0 {
		return out
	}
	routes := slices.Clone(t.objs.GRPCRoutes)
	slices.SortFunc(routes, func(a, b *gwv1.GRPCRoute) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	t.kind = GRPCRouteKind
	defer func() { t.kind = "" }()
	for _, g := range routes {
		out = append(out, t.grpcRoute(g)...)
	}
	return t.grpcKindConflicts(out)
}

// grpcRoute translates one GRPCRoute into one compile route of Kind
// GRPCRoute per listener port and protocol it is attached to.
func (t *translator) grpcRoute(g *gwv1.GRPCRoute) []*compile.HTTPRoute {
	shell := asHTTPRoute(g)
	byListener, attached := t.attach(shell)
	if !attached {
		return nil
	}
	var rules []compile.HTTPRouteRule
	for i := range g.Spec.Rules {
		if rule, ok := t.grpcRule(g, shell, i); ok {
			rules = append(rules, rule)
		}
	}
	var out []*compile.HTTPRoute
	for _, l := range slices.SortedFunc(maps.Keys(byListener), compareListeners) {
		hosts := byListener[l]
		if len(hosts) == 0 {
			continue
		}
		slices.Sort(hosts)
		out = append(out, &compile.HTTPRoute{Kind: GRPCRouteKind, Namespace: g.Namespace, Name: g.Name, Created: g.CreationTimestamp.Time,
			Hostnames: slices.Compact(hosts), Rules: rules, Listener: l})
	}
	return out
}

// grpcRule translates one rule; ok is false when it is not served at all.
func (t *translator) grpcRule(g *gwv1.GRPCRoute, shell *gwv1.HTTPRoute, i int) (compile.HTTPRouteRule, bool) {
	src := &g.Spec.Rules[i]
	field := "spec.rules[" + strconv.Itoa(i) + "]"
	out := compile.HTTPRouteRule{Field: field}
	if sp := src.SessionPersistence; sp != nil {
		out.Affinity, out.AffinityField = t.sessionPersistence(shell, field+".sessionPersistence", sp), field+".sessionPersistence"
	}
	// A filter that cannot be applied answers the rule's requests 500, as
	// an HTTPRoute's does (rule).
	var refused *compile.Warning
filters:
	for j, f := range src.Filters {
		ff := field + ".filters[" + strconv.Itoa(j) + "]"
		switch {
		case f.Type == gwv1.GRPCRouteFilterRequestHeaderModifier && f.RequestHeaderModifier != nil && out.RequestHeaders == nil:
			out.RequestHeaders = headerModifier(ff, f.RequestHeaderModifier)
		case f.Type == gwv1.GRPCRouteFilterResponseHeaderModifier && f.ResponseHeaderModifier != nil && out.ResponseHeaders == nil:
			out.ResponseHeaders = headerModifier(ff, f.ResponseHeaderModifier)
		case f.Type == gwv1.GRPCRouteFilterRequestMirror && f.RequestMirror != nil:
			// The router feeds the call's body to the copy as it streams.
			out.Mirrors = append(out.Mirrors, t.mirror(shell, ff, f.RequestMirror, "the rule"))
		default:
			t.warn(Unsupported, shell, ff, "filter "+string(f.Type)+" is not served here (or given twice, or without its settings); the rule's requests answer 500")
			w := t.warnings[len(t.warnings)-1]
			refused = &w
			break filters
		}
	}
	for j, m := range src.Matches {
		mf := field + ".matches[" + strconv.Itoa(j) + "]"
		cm, why, at := grpcMatch(m)
		if why != "" {
			t.warn(Unsupported, shell, mf+at, why+"; this match is not served")
			continue
		}
		cm.Field = mf
		out.Matches = append(out.Matches, cm)
	}
	if len(src.Matches) > 0 && len(out.Matches) == 0 {
		return out, false // every match refused, each with its warning
	}
	if len(src.Matches) == 0 {
		out.Matches = []compile.HTTPRouteMatch{{Field: field}}
	}
	if refused != nil {
		return compile.HTTPRouteRule{Field: field, Matches: out.Matches, Refused: refused}, true
	}
	for j, b := range src.BackendRefs {
		bf := field + ".backendRefs[" + strconv.Itoa(j) + "]"
		if wb, ok := t.backend(shell, bf, &gwv1.HTTPBackendRef{BackendRef: b.BackendRef, Filters: httpFilters(b.Filters)}); ok {
			out.Backends = append(out.Backends, wb)
		}
	}
	return out, true
}

// httpFilters are a GRPCRoute backendRef's filters as an HTTPRoute's,
// which backendFilters serves alike: the header modifiers, once each,
// after the rule's, and RequestMirror, as often as given; an ExtensionRef
// is refused, and the backend's share with it.
func httpFilters(fs []gwv1.GRPCRouteFilter) []gwv1.HTTPRouteFilter {
	var out []gwv1.HTTPRouteFilter
	for _, f := range fs {
		out = append(out, gwv1.HTTPRouteFilter{Type: gwv1.HTTPRouteFilterType(f.Type), RequestHeaderModifier: f.RequestHeaderModifier,
			ResponseHeaderModifier: f.ResponseHeaderModifier, RequestMirror: f.RequestMirror, ExtensionRef: f.ExtensionRef})
	}
	return out
}

// grpcName is what an Exact service (dot-separated identifiers) or method
// (one identifier) may be: the API's own validation, which a manifest read
// without the API server has not passed.
var (
	grpcService = regexp.MustCompile(`^\.?[A-Za-z_][A-Za-z_0-9]*(\.[A-Za-z_][A-Za-z_0-9]*)*$`)
	grpcMethod  = regexp.MustCompile(`^[A-Za-z_][A-Za-z_0-9]*$`)
)

// grpcMatch translates a GRPCRoute match, or says why it is refused and
// at which field under the match (the Gateway API's UnsupportedValue).
// Of several header matches with one name only the first counts.
func grpcMatch(m gwv1.GRPCRouteMatch) (cm compile.HTTPRouteMatch, why, at string) {
	if mm := m.Method; mm != nil {
		gm := &compile.GRPCMethodMatch{Service: deref(mm.Service, ""), Method: deref(mm.Method, "")}
		switch typ := deref(mm.Type, gwv1.GRPCMethodMatchExact); typ {
		case gwv1.GRPCMethodMatchExact:
			switch {
			case gm.Service != "" && !grpcService.MatchString(gm.Service):
				return cm, "service " + strconv.Quote(gm.Service) + " is not a gRPC service name", ".method.service"
			case gm.Method != "" && !grpcMethod.MatchString(gm.Method):
				return cm, "method " + strconv.Quote(gm.Method) + " is not a gRPC method name", ".method.method"
			}
		case gwv1.GRPCMethodMatchRegularExpression:
			gm.Regex = true
			for _, p := range []struct{ v, f string }{{gm.Service, ".method.service"}, {gm.Method, ".method.method"}} {
				if _, err := match.CompileCaseSensitiveRegex(p.v, 0); err != nil {
					return cm, "regular expression " + strconv.Quote(p.v) + " does not compile: " + err.Error(), p.f
				}
			}
		default:
			return cm, "method match type " + strconv.Quote(string(typ)) + " is unknown", ".method.type"
		}
		if gm.Service == "" && gm.Method == "" {
			return cm, "a method match names neither service nor method", ".method"
		}
		cm.GRPC = gm
	}
	seen := map[string]bool{}
	for i, h := range m.Headers {
		regex, ok := valueType(deref(h.Type, gwv1.GRPCHeaderMatchExact))
		if !ok {
			return cm, "header match type " + strconv.Quote(string(*h.Type)) + " is unknown", ".headers[" + strconv.Itoa(i) + "].type"
		}
		if name := strings.ToLower(string(h.Name)); !seen[name] {
			seen[name] = true
			cm.Headers = append(cm.Headers, match.ValueMatch{Name: string(h.Name), Value: h.Value, Regex: regex})
		}
	}
	return cm, "", ""
}

// grpcKindConflicts applies the GRPCRoute rule for an HTTPRoute and a
// GRPCRoute attached to one listener whose hostnames intersect: the older
// route (then the first by namespace/name) is served there, the other is
// not, and warns (KindConflict), which makes its status Accepted False.
func (t *translator) grpcKindConflicts(routes []*compile.HTTPRoute) []*compile.HTTPRoute {
	var grpc, http []*compile.HTTPRoute
	for _, r := range routes {
		if r.Kind == GRPCRouteKind {
			grpc = append(grpc, r)
		} else {
			http = append(http, r)
		}
	}
	if len(grpc) == 0 || len(http) == 0 {
		return routes
	}
	// On a full tie the GRPCRoute goes first, so that one always does.
	older := func(a, b *compile.HTTPRoute) bool {
		return cmp.Or(a.Created.Compare(b.Created), cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name), cmp.Compare(b.Kind, a.Kind)) < 0
	}
	// The HTTPRoutes by listener and host, so that each GRPCRoute host
	// looks up the few that can share it.
	type hostKey struct {
		l match.Listener
		h string
	}
	byHost := map[hostKey][]*compile.HTTPRoute{}
	byListener := map[match.Listener][]*compile.HTTPRoute{}
	for _, h := range http {
		byListener[h.Listener] = append(byListener[h.Listener], h)
		for _, x := range h.Hostnames {
			byHost[hostKey{h.Listener, x}] = append(byHost[hostKey{h.Listener, x}], h)
		}
	}
	candidates := func(g *compile.HTTPRoute) []*compile.HTTPRoute {
		var out []*compile.HTTPRoute
		for _, x := range g.Hostnames {
			if x == "" || strings.HasPrefix(x, "*.") {
				return byListener[g.Listener] // every name, or names below: rare, so scanned
			}
			out = append(out, byHost[hostKey{g.Listener, x}]...)
			out = append(out, byHost[hostKey{g.Listener, ""}]...)
			for rest := x; ; {
				i := strings.IndexByte(rest, '.')
				if i < 0 {
					break
				}
				rest = rest[i+1:]
				out = append(out, byHost[hostKey{g.Listener, "*." + rest}]...)
			}
		}
		return out
	}
	// The routes each one shares a hostname with, of the other kind.
	rivals := map[*compile.HTTPRoute][]*compile.HTTPRoute{}
	for _, g := range grpc {
		seen := map[*compile.HTTPRoute]bool{}
		for _, h := range candidates(g) {
			if !seen[h] && hostsIntersect(g.Hostnames, h.Hostnames) {
				seen[h] = true
				rivals[g], rivals[h] = append(rivals[g], h), append(rivals[h], g)
			}
		}
	}
	// Oldest first, a route is accepted unless an accepted older rival
	// holds the hostname: one that lost to another takes nothing.
	contenders := slices.Collect(maps.Keys(rivals))
	slices.SortFunc(contenders, func(a, b *compile.HTTPRoute) int {
		return cmp.Or(a.Created.Compare(b.Created), cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name),
			cmp.Compare(b.Kind, a.Kind), compareListeners(a.Listener, b.Listener))
	})
	dropped := map[*compile.HTTPRoute]bool{}
	for _, lose := range contenders {
		i := slices.IndexFunc(rivals[lose], func(x *compile.HTTPRoute) bool { return !dropped[x] && older(x, lose) })
		if i < 0 {
			continue
		}
		win := rivals[lose][i]
		dropped[lose] = true
		t.warnings = append(t.warnings, compile.Warning{Reason: KindConflict,
			Object:  compile.Ref{Kind: cmp.Or(lose.Kind, compile.HTTPRouteKind), Namespace: lose.Namespace, Name: lose.Name},
			Field:   "spec.hostnames",
			Message: fmt.Sprintf("%s %s/%s, older or first by namespace/name, shares a hostname on listener %s; this route is not served there", cmp.Or(win.Kind, compile.HTTPRouteKind), win.Namespace, win.Name, lose.Listener.String())})
	}
	return slices.DeleteFunc(routes, func(r *compile.HTTPRoute) bool { return dropped[r] })
}

// hostsIntersect reports whether some name is served by a host of both
// lists ("" is every name, "*.x" every name below x).
func hostsIntersect(a, b []string) bool {
	for _, x := range a {
		for _, y := range b {
			if x == "" || y == "" || x == y || covers(x, y) || covers(y, x) {
				return true
			}
		}
	}
	return false
}
