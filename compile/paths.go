package compile

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"

	networkingv1 "k8s.io/api/networking/v1"

	"ramjet.dev/ramjet/match"
)

// routeKey identifies a route within its virtual host (SPEC §7): two
// declarations with one key are the same route, and the first in Ingress
// order wins.
type routeKey struct {
	typ  match.PathType
	path string
}

// routeScanLimit is how many routes a host holds before its keys are
// indexed in a map; below it a scan is cheaper than hashing.
const routeScanLimit = 8

// route returns the route v already has under k, or nil.
func (v *vhost) route(k routeKey) *match.Route {
	if v.routeIndex != nil {
		return v.routeIndex[k]
	}
	for _, r := range v.vh.Routes {
		if r.Type == k.typ && r.Path == k.path && r.When == nil {
			return r
		}
	}
	return nil
}

// addRoute appends r to v and keeps the index, once there is one.
func (v *vhost) addRoute(r *match.Route) {
	if v.vh.Routes == nil {
		if v.routeSlices != nil {
			v.vh.Routes = v.routeSlices.take(4)[:0]
		} else {
			v.vh.Routes = make([]*match.Route, 0, 4)
		}
	}
	v.vh.Routes = append(v.vh.Routes, r)
	switch {
	case v.routeIndex != nil:
		v.routeIndex[routeKey{r.Type, r.Path}] = r
	case len(v.vh.Routes) > routeScanLimit:
		v.routeIndex = make(map[routeKey]*match.Route, 2*len(v.vh.Routes))
		for _, r := range v.vh.Routes {
			if r.When == nil { // an HTTPRoute's route with conditions (httproute.go)
				v.routeIndex[routeKey{r.Type, r.Path}] = r
			}
		}
	}
}

type regexResult struct {
	re  *match.Regexp
	err error
}

// buildRoutes declares every path of every accepted rule, in Ingress order,
// then rule and path order (SPEC §4, §7). Route.Order counts declarations
// in that order.
func (b *builder) buildRoutes() {
	var order int32
	for _, ing := range b.ingresses {
		for i := range ing.obj.Spec.Rules {
			rule := &ing.obj.Spec.Rules[i]
			v := ing.rules[i].vhost
			if v == nil || rule.HTTP == nil {
				continue
			}
			for j := range rule.HTTP.Paths {
				order++
				b.declarePath(ing, v, pathField(i, j), &rule.HTTP.Paths[j], order)
			}
		}
	}
	b.warnPrefixTakesOver()
}

// prefixLike is a served ImplementationSpecific path on a host outside
// regex mode, which ingress-nginx reads as a Prefix path
// (SetDefaultNGINXPathType) and ramjet as a regex.
type prefixLike struct {
	v     *vhost
	r     *match.Route
	ing   *ingress
	field string
}

// warnPrefixTakesOver tells each such path whose requests a Prefix route
// takes here, a regex being tried after every Prefix (SPEC §5), where
// ingress-nginx serves them from it: a Prefix over a whole-segment prefix
// of it ("/" above all), which ingress-nginx ranks below it as a shorter
// prefix, or one of the same path declared after it, whose location
// ingress-nginx drops. Only literal paths are judged: a pattern's prefix
// under ingress-nginx is its text, which nothing here compares.
func (b *builder) warnPrefixTakesOver() {
	for _, pl := range b.prefixLike {
		path := pl.r.Path
		if strings.ContainsAny(path, `.*+?()[]{}|\^$`) {
			continue
		}
		key := strings.TrimRight(path, "/")
		var taker *match.Route
		for {
			if t := pl.v.route(routeKey{match.Prefix, key}); t != nil && (key != strings.TrimRight(path, "/") || t.Order > pl.r.Order) {
				taker = t
				break
			}
			if key == "" {
				break
			}
			key = key[:strings.LastIndexByte(key, '/')]
		}
		if taker == nil {
			continue
		}
		shown := cmp.Or(taker.Path, "/")
		b.conflict(PathCaseInsensitive, pl.ing.ref(), pl.field+".pathType",
			fmt.Sprintf("%s: ImplementationSpecific path %q is a regular expression here, tried after every Prefix path (SPEC §5), so the Prefix path %q of Ingress %s/%s takes the requests under it; ingress-nginx reads it as a Prefix path and serves them from it",
				hostLabel(pl.v.vh.Name), path, shown, taker.Source.Namespace, taker.Source.Name),
			ingressRef(taker.Source.Namespace, taker.Source.Name), taker.Source.Field)
	}
	b.prefixLike = nil
}

// nginxLocationOf is the type of the location ingress-nginx writes for the
// route of key that a regex-mode host made of p, one of n (modeKeys): the
// declared type, but Exact for the "p" twin of a Prefix path split in two;
// 0 for an ImplementationSpecific path.
func nginxLocationOf(p *networkingv1.HTTPIngressPath, key string, n int) match.NginxLocationType {
	switch {
	case p.PathType == nil:
	case *p.PathType == networkingv1.PathTypeExact, *p.PathType == networkingv1.PathTypePrefix && n == 2 && key == declaredPath(p):
		return match.NginxExact
	case *p.PathType == networkingv1.PathTypePrefix:
		return match.NginxPrefix
	}
	return 0
}

// declarePath validates one path and, unless it is rejected or loses a
// conflict, adds its route to v. Each problem warns on its own field.
func (b *builder) declarePath(ing *ingress, v *vhost, field string, p *networkingv1.HTTPIngressPath, order int32) {
	typ, key, re, pathOK := b.routePath(ing, field, p)
	backendOK := b.checkBackendShape(ing, field, ".backend", &p.Backend)
	if !pathOK || !backendOK {
		return
	}
	var buf [2]pathKey
	keys, ok := b.modeKeys(ing, v, field, p, pathKey{typ, key, re}, buf[:0])
	if !ok {
		return
	}
	prefixToNginx := false
	if p.PathType != nil && *p.PathType == networkingv1.PathTypeImplementationSpecific && v.regex == nil {
		switch rv := ing.ann.rewriteR(); {
		case !rv.useRegex:
			b.warnCaseInsensitive(ing, field, p.Path)
			prefixToNginx = true
		case !native(rv.useRegexKey):
			// Its nginx use-regex would have put the host in regex mode
			// had ingress-nginx kept its location (markRegexHosts).
			b.warn(PathCaseInsensitive, ing.ref(), field+".pathType",
				"ImplementationSpecific path "+strconv.Quote(p.Path)+" is the case-insensitive regular expression ^(?:"+strings.TrimPrefix(p.Path, "^")+
					") here; ingress-nginx reads it as a Prefix path, the same location as an earlier path on this host, and does not serve it (nor does its use-regex put the host in regex mode)")
		}
	}
	var backend *match.Backend
	for _, k := range keys {
		orderPath := ""
		if v.regex != nil && k.typ == match.Regex && declaredPath(p) != k.key {
			// ingress-nginx sorts the declared paths (regex mode).
			orderPath = declaredPath(p)
		}
		winner := v.route(routeKey{typ: k.typ, path: k.key})
		if winner != nil && match.CompareRoutes(&match.Route{Type: k.typ, Path: k.key, OrderPath: orderPath, Order: order}, winner) > 0 {
			src := winner.Source
			shown := k.key
			if k.typ == match.Prefix && shown == "" {
				shown = "/" // the root Prefix's key, as the table text shows it
			}
			b.conflict(RouteConflict, ing.ref(), field,
				fmt.Sprintf("%s: %s path %q is the same route as %s (key %q); this one is not served",
					hostLabel(v.vh.Name), k.typ, p.Path, b.precedes(src, ing), shown),
				ingressRef(src.Namespace, src.Name), src.Field)
			if b.sameDeclaration(src, p) {
				// ingress-nginx skips a location it already has (same path,
				// same type), in the same Ingress order: the same one wins.
				b.warnings[len(b.warnings)-1].Rated = Cosmetic
			}
			continue
		}
		r := b.routeSlab.new()
		*r = match.Route{
			Type:     k.typ,
			Path:     k.key,
			Source:   ing.source(field),
			Order:    order,
			Regexp:   k.re,
			Location: b.location(ing, p, v),
		}
		if twin, ok := prefixTwin(p); ok && k.typ == match.Regex && k.key == twin {
			// ingress-nginx's "p/" location of a Prefix path in regex mode
			// (modeKeys): a rewrite-target equal to "p" rewrites it.
			r.Rewrite = b.routeRewrite(ing, twin)
		}
		if backend == nil {
			backend = b.useBackend(ing, p.Backend.Service, field, ".backend.service", true)
			if ing.ann.trafficR().affinity.key != "" && !slices.Contains(ing.routed, backend) {
				ing.routed = append(ing.routed, backend)
			}
		}
		r.Backend = backend
		r.PortName = portName(backend, p.Backend.Service.Port)
		r.SSLRedirect, r.ForceSSLRedirect = ing.redirects(b.opts)
		r.PreserveTrailingSlash = ing.ann.preserveTrailingSlash
		r.UsePortInRedirects = ing.ann.usePortInRedirects
		r.OrderPath = orderPath
		if v.regex != nil && k.typ == match.Regex {
			r.NginxLocation = nginxLocationOf(p, k.key, len(keys))
		}
		// Both kept only where the backend turns out to have affinity
		// (applyRouteAffinity).
		r.NoAffinityCookie = ing.ann.trafficR().affinity.key == ""
		r.CookieSlash = k.typ == match.Prefix && k.key != "" && strings.HasSuffix(p.Path, "/")
		if winner == nil {
			v.addRoute(r)
			if prefixToNginx {
				b.prefixLike = append(b.prefixLike, prefixLike{v, r, ing, field})
			}
			continue
		}
		// Another declared path made the same pattern, and nginx tries
		// this one first: ingress-nginx orders the declared paths, longest
		// first, before it adds a Prefix path's twin (SPEC §5).
		src := winner.Source
		b.conflict(RouteConflict, ingressRef(src.Namespace, src.Name), src.Field,
			fmt.Sprintf("%s: path %q makes the pattern %q, as path %q of Ingress %s/%s does, which ingress-nginx orders first (declared paths longest first, then greatest); this one does not serve that pattern",
				hostLabel(v.vh.Name), cmp.Or(winner.OrderPath, winner.Path), k.key, p.Path, ing.obj.Namespace, ing.obj.Name),
			ing.ref(), field)
		// ramjet orders them as ingress-nginx does: the same one wins.
		b.warnings[len(b.warnings)-1].Rated = Cosmetic
		v.replaceRoute(winner, r)
	}
}

// replaceRoute puts r where old was, under the same key.
func (v *vhost) replaceRoute(old, r *match.Route) {
	v.vh.Routes[slices.Index(v.vh.Routes, old)] = r
	if v.routeIndex != nil {
		v.routeIndex[routeKey{r.Type, r.Path}] = r
	}
}

// routePath turns a declared path into its match type and key (SPEC §4):
// the path itself for Exact, the prefix without trailing slashes for Prefix
// ("" for "/"), the pattern without one leading "^" for a regex. ok is false
// when the path is rejected.
func (b *builder) routePath(ing *ingress, field string, p *networkingv1.HTTPIngressPath) (typ match.PathType, key string, re *match.Regexp, ok bool) {
	switch {
	case p.PathType == nil:
		typ = match.Regex
		b.warn(PathTypeUnknown, ing.ref(), field+".pathType",
			"pathType is missing; the path is treated as ImplementationSpecific, a case-insensitive regular expression")
	case *p.PathType == networkingv1.PathTypeExact:
		typ = match.Exact
	case *p.PathType == networkingv1.PathTypePrefix:
		typ = match.Prefix
	case *p.PathType == networkingv1.PathTypeImplementationSpecific:
		typ = match.Regex
	default:
		typ = match.Regex
		b.warn(PathTypeUnknown, ing.ref(), field+".pathType",
			"pathType "+strconv.Quote(string(*p.PathType))+" is not Exact, Prefix or ImplementationSpecific; the path is treated as ImplementationSpecific, a case-insensitive regular expression")
	}

	path := p.Path
	if typ == match.Regex {
		// Redundant with the added anchor; dropped before anything else
		// looks at the path, so "^/api" and "/api" are one route.
		path = strings.TrimPrefix(path, "^")
	}
	if path == "" {
		path = "/"
	}
	reject := func(why string) {
		b.warn(PathRejected, ing.ref(), field+".path", "path "+strconv.Quote(p.Path)+" "+why+"; it is not served")
	}
	if path[0] != '/' {
		reject("does not begin with /")
		return typ, "", nil, false
	}
	switch typ {
	case match.Exact:
		if why := badSegment(path); why != "" {
			reject(why)
			return typ, "", nil, false
		}
		return typ, path, nil, true
	case match.Prefix:
		if why := badSegment(path); why != "" {
			reject(why)
			return typ, "", nil, false
		}
		return typ, strings.TrimRight(path, "/"), nil, true
	}
	res, cached := b.regexps[path]
	if !cached {
		res.re, res.err = match.CompileRegex(path, 0)
		b.regexps[path] = res
	}
	if res.err != nil {
		reject("is not a usable regular expression: " + res.err.Error())
		return typ, "", nil, false
	}
	return typ, path, res.re, true
}

// badSegment reports an empty, "." or ".." segment, which a normalized
// request path (SPEC §13) never has, so an Exact or Prefix path containing
// one could never match. One trailing slash is allowed. It also reports an
// encoded slash, a space or a control byte: a request reaches a literal
// "%2F" only by encoding it twice, and whitespace only escaped, so the
// author meant something else (the API server refuses "%2F", ingress-nginx's
// path validation all three).
func badSegment(path string) string {
	if strings.Contains(path, "%2F") || strings.Contains(path, "%2f") {
		return "has an encoded slash (%2F), which a normalized request path never has"
	}
	for i := 0; i < len(path); i++ {
		if c := path[i]; c <= ' ' || c == 0x7f {
			return "has a space or control character at byte " + strconv.Itoa(i) + ", which a request path carries only percent-encoded"
		}
	}
	return dotSegment(path)
}

// dotSegment reports an empty, "." or ".." segment of path (one trailing
// slash allowed), which a normalized request path never has.
func dotSegment(path string) string {
	rest := path[1:]
	for rest != "" {
		seg, after, more := strings.Cut(rest, "/")
		switch {
		case seg == "" && more:
			return "has an empty segment (//), which never matches a normalized request path"
		case seg == "." || seg == "..":
			return "has a " + strconv.Quote(seg) + " segment, which never matches a normalized request path"
		}
		rest = after
	}
	return ""
}

// checkBackendShape accepts a backend that names a Service. A resource
// backend, or one naming nothing, is not served (BackendUnsupported). The
// backend is at field+suffix.
func (b *builder) checkBackendShape(ing *ingress, field, suffix string, be *networkingv1.IngressBackend) bool {
	switch {
	case be.Service != nil:
		return true
	case be.Resource != nil:
		b.warn(BackendUnsupported, ing.ref(), field+suffix+".resource",
			"a resource backend is not supported, only a Service; this backend is not served")
	default:
		b.warn(BackendUnsupported, ing.ref(), field+suffix,
			"the backend names no Service; this backend is not served")
	}
	return false
}

func hostLabel(host string) string {
	if host == "" {
		return "catch-all host (no host)"
	}
	return "host " + strconv.Quote(host)
}

// precedes says why the declaration at src comes before one of ing in
// Ingress order (SPEC §7), for a conflict's message: the winner is older,
// comes earlier in the same Ingress, or has the same creation second and
// wins by name.
func (b *builder) precedes(src match.Source, ing *ingress) string {
	if src.Namespace == ing.obj.Namespace && src.Name == ing.obj.Name {
		return "an earlier declaration in this Ingress"
	}
	if b.byKey == nil {
		b.byKey = make(map[objKey]*ingress, len(b.ingresses))
		for _, other := range b.ingresses {
			b.byKey[objKey{other.obj.Namespace, other.obj.Name}] = other
		}
	}
	if w := b.byKey[objKey{src.Namespace, src.Name}]; w != nil && w.createdSec == ing.createdSec && w.createdNsec == ing.createdNsec {
		return "an Ingress created in the same second that goes first by namespace/name (descending)"
	}
	return "an older declaration"
}

// sameDeclaration reports whether the winning route src was declared
// with p's path and path type, which ingress-nginx, meeting the same
// location twice, keeps from the first Ingress in the same order.
func (b *builder) sameDeclaration(src match.Source, p *networkingv1.HTTPIngressPath) bool {
	if src.Kind != "" {
		return false // an HTTPRoute: ingress-nginx serves none
	}
	if b.byKey == nil {
		b.byKey = make(map[objKey]*ingress, len(b.ingresses))
		for _, other := range b.ingresses {
			b.byKey[objKey{other.obj.Namespace, other.obj.Name}] = other
		}
	}
	w := b.byKey[objKey{src.Namespace, src.Name}]
	var i, j int
	if w == nil {
		return false
	}
	if n, err := fmt.Sscanf(src.Field, "spec.rules[%d].http.paths[%d]", &i, &j); n != 2 || err != nil {
		return false
	}
	rules := w.obj.Spec.Rules
	if i >= len(rules) || rules[i].HTTP == nil || j >= len(rules[i].HTTP.Paths) {
		return false
	}
	q := &rules[i].HTTP.Paths[j]
	return declaredPath(q) == declaredPath(p) && pathTypeOf(q) == pathTypeOf(p)
}

func pathTypeOf(p *networkingv1.HTTPIngressPath) networkingv1.PathType {
	if p.PathType == nil {
		return ""
	}
	return *p.PathType
}

// warnCaseInsensitive warns PathCaseInsensitive on an ImplementationSpecific
// path that ingress-nginx, its host not in regex mode, matches as a
// case-sensitive Prefix path, when the case-insensitive regex it is here
// matches more: it has a letter, or a character regex syntax reads, or no
// closing slash (the regex goes on past the last segment, where the
// Prefix path ingress-nginx reads stops at it: /v1 takes /v10 here only).
func (b *builder) warnCaseInsensitive(ing *ingress, field, path string) {
	letter := strings.IndexFunc(path, func(r rune) bool { return unicode.IsLetter(r) }) >= 0
	meta := strings.ContainsAny(path, `.*+?()[]{}|\^$`)
	open := !strings.HasSuffix(path, "/")
	if !letter && !meta && !open {
		return
	}
	var parts []string
	if letter {
		parts = append(parts, "other letter cases")
	}
	if meta {
		parts = append(parts, "what its regex syntax matches")
	} else if open {
		parts = append(parts, "longer names than its last segment ("+strings.TrimPrefix(path, "^")+"x)")
	}
	what := strings.Join(parts, " and ")
	b.warn(PathCaseInsensitive, ing.ref(), field+".pathType",
		"ImplementationSpecific path "+strconv.Quote(path)+" is the case-insensitive regular expression ^(?:"+strings.TrimPrefix(path, "^")+
			") here and a case-sensitive prefix under ingress-nginx (no use-regex on its host): "+what+" match here, not there")
}
