package gatewayapi

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"ramjet.dev/ramjet/compile"
	"ramjet.dev/ramjet/match"
)

// ControllerName is the GatewayClass controllerName whose Gateways ramjet
// serves (SPEC §20).
const ControllerName gwv1.GatewayController = "ramjet.dev/gateway"

// Group is the Gateway API's API group.
const Group = gwv1.GroupName

// Reasons of the warnings Translate gives, beside compile's own.
const (
	// NotAttached: a parentRef names no Gateway of ours, no listener that
	// allows the route, or no host the listener and route share.
	NotAttached compile.Reason = "RouteNotAttached"
	// RefNotPermitted: a cross-namespace backendRef without a
	// ReferenceGrant allowing it.
	RefNotPermitted compile.Reason = "RefNotPermitted"
	// Unsupported: a match, filter or backend this translation does not
	// serve yet; the warning says what happens instead.
	Unsupported compile.Reason = "GatewayFeatureUnsupported"
)

// Objects are the Gateway API objects Translate reads, and the Namespaces
// whose labels allowedRoutes selectors match. Order does not matter.
type Objects struct {
	GatewayClasses  []*gwv1.GatewayClass
	Gateways        []*gwv1.Gateway
	HTTPRoutes      []*gwv1.HTTPRoute
	GRPCRoutes      []*gwv1.GRPCRoute
	TLSRoutes       []*gwv1.TLSRoute
	ReferenceGrants []*gwv1.ReferenceGrant
	Namespaces      []*corev1.Namespace
	// Services and Secrets are read by TranslateAll's status only.
	Services []*corev1.Service
	Secrets  []*corev1.Secret
	// Ports are the Gateway ports and protocols requests arrive on (the
	// data plane's listeners as router.Options.GatewayPorts publishes
	// them); a listener on another is not served (PortUnavailable). Nil
	// serves every port.
	Ports []match.Listener
}

// Translate turns Gateways of a GatewayClass with ControllerName and the
// HTTPRoutes attached to them into compile's route input (set it as
// compile.Snapshot.HTTPRoutes), with a warning naming object and field for
// everything refused. The result does not depend on the order of the
// objects.
func Translate(o Objects) ([]*compile.HTTPRoute, []compile.Warning) {
	t := translator{objs: o}
	t.index()
	var out []*compile.HTTPRoute
	routes := slices.Clone(o.HTTPRoutes)
	slices.SortFunc(routes, func(a, b *gwv1.HTTPRoute) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	for _, r := range routes {
		out = append(out, t.route(r)...)
	}
	out = t.grpcRoutes(out)
	return out, t.warnings
}

type nsName struct{ ns, name string }

type translator struct {
	objs     Objects
	classes  map[string]bool // GatewayClasses that are ours
	gateways map[nsName]*gwv1.Gateway
	nsLabels map[string]labels.Set
	warnings []compile.Warning
	// hostnamesOn are the served listeners' hostnames by view (views.go).
	hostnamesOn map[match.Listener][]servedListener
	// kind is the Kind of the route being translated: HTTPRoute when "",
	// or GRPCRoute (grpcroute.go).
	kind string
	// tlsRoutes and tlsWarnings are what translateTLSRoutes made of
	// the TLSRoutes (tlsroute.go).
	tlsRoutes   []*compile.TLSRoute
	tlsWarnings []compile.Warning
	statusState
}

func (t *translator) index() {
	t.classes = make(map[string]bool)
	for _, c := range t.objs.GatewayClasses {
		if c.Spec.ControllerName == ControllerName {
			t.classes[c.Name] = true
		}
	}
	t.gateways = make(map[nsName]*gwv1.Gateway)
	for _, g := range t.objs.Gateways {
		if t.classes[string(g.Spec.GatewayClassName)] {
			t.gateways[nsName{g.Namespace, g.Name}] = g
		}
	}
	t.nsLabels = make(map[string]labels.Set)
	for _, n := range t.objs.Namespaces {
		t.nsLabels[n.Name] = n.Labels
	}
}

// namespaceLabels are the labels of namespace ns, with the
// kubernetes.io/metadata.name the API server gives every Namespace (the
// Gateway API's way to select one by name), which a Namespace read from
// a file, or not read at all, lacks.
func (t *translator) namespaceLabels(ns string) labels.Set {
	ls := t.nsLabels[ns]
	if v, ok := ls[corev1.LabelMetadataName]; ok && v == ns {
		return ls
	}
	out := make(labels.Set, len(ls)+1)
	maps.Copy(out, ls)
	out[corev1.LabelMetadataName] = ns
	return out
}

func (t *translator) warn(reason compile.Reason, r *gwv1.HTTPRoute, field, msg string) {
	t.warnings = append(t.warnings, compile.Warning{Reason: reason,
		Object: compile.Ref{Kind: t.routeKind(), Namespace: r.Namespace, Name: r.Name}, Field: field, Message: msg})
}

// route translates one HTTPRoute into one compile route per Gateway
// listener port and protocol it is attached to, or none when no parent of
// ours accepts it.
func (t *translator) route(r *gwv1.HTTPRoute) []*compile.HTTPRoute {
	byListener, attached := t.attach(r)
	if !attached {
		return nil
	}
	var rules []compile.HTTPRouteRule
	for i := range r.Spec.Rules {
		if rule, ok := t.rule(r, i); ok {
			rules = append(rules, rule)
		}
	}
	var out []*compile.HTTPRoute
	for _, l := range slices.SortedFunc(maps.Keys(byListener), compareListeners) {
		hosts := byListener[l]
		if len(hosts) == 0 {
			continue // every host is another listener's (shadowed)
		}
		slices.Sort(hosts)
		out = append(out, &compile.HTTPRoute{Namespace: r.Namespace, Name: r.Name, Created: r.CreationTimestamp.Time,
			Hostnames: slices.Compact(hosts), Rules: rules, Listener: l})
	}
	return out
}

// attach finds the listeners the route's parentRefs attach it to and the
// hosts it is served on there, by listener port and protocol: the
// intersection of the listener's and the route's hostnames (Gateway API,
// HTTPRoute hostnames), "" for the catch-all, less those that a listener
// on the same port with a more specific hostname takes wholly (a request
// is served by the routes of the listener whose hostname matches it most
// specifically, SPEC §20). attached is false when no parentRef attaches it.
func (t *translator) attach(r *gwv1.HTTPRoute) (hosts map[match.Listener][]string, attached bool) {
	hosts = map[match.Listener][]string{}
	// lost are hosts another Gateway's listener takes; they warn unless
	// the route is served there through another parentRef.
	type lostHost struct {
		field, host, msg string
		view             match.Listener
	}
	var lost []lostHost
	for i, p := range r.Spec.ParentRefs {
		field := "spec.parentRefs[" + strconv.Itoa(i) + "]"
		if g := deref(p.Group, Group); g != Group || deref(p.Kind, "Gateway") != "Gateway" {
			continue // another kind of parent: not ours to judge
		}
		ns := string(deref(p.Namespace, gwv1.Namespace(r.Namespace)))
		gw := t.gateways[nsName{ns, string(p.Name)}]
		if gw == nil {
			continue // a Gateway of another controller, or none: not ours
		}
		found, allowed := false, false
		for _, l := range gw.Spec.Listeners {
			if p.SectionName != nil && *p.SectionName != l.Name || p.Port != nil && *p.Port != l.Port {
				continue
			}
			if !t.matchable(gw, &l) {
				continue
			}
			found = true
			if !t.served(gw, &l) || !t.allows(gw, &l, r.Namespace) {
				continue
			}
			allowed = true
			hs, ok := intersect(l.Hostname, r.Spec.Hostnames)
			if !ok {
				continue
			}
			attached = true
			ml := viewOf(&l)
			for _, h := range hs {
				by := t.shadowedBy(ml, string(deref(l.Hostname, "")), h)
				if by == nil {
					hosts[ml] = append(hosts[ml], h)
					continue
				}
				if _, ok := hosts[ml]; !ok {
					hosts[ml] = nil
				}
				if by.gw != gw {
					// Within one Gateway this is the API's listener
					// precedence; across two, ramjet's one set of ports.
					lost = append(lost, lostHost{field, h, fmt.Sprintf("host %q of listener %s of Gateway %s/%s is taken on port %d by listener %s of Gateway %s/%s, whose hostname %q is more specific: Gateways share the controller's ports, so the route is not served there",
						h, l.Name, ns, p.Name, ml.Port, by.name, by.gw.Namespace, by.gw.Name, by.hostname), ml})
				}
			}
		}
		switch {
		case !found:
			t.warn(NotAttached, r, field, fmt.Sprintf("Gateway %s/%s has no HTTP or HTTPS listener on a served port that matches the sectionName and port; the route is not attached there", ns, p.Name))
		case !allowed:
			t.warn(NotAttached, r, field, fmt.Sprintf("no listener of Gateway %s/%s allows %ss from namespace %q (its protocol, allowedRoutes kinds and namespaces); the route is not attached there", ns, p.Name, t.routeKind(), r.Namespace))
		case !attached:
			t.warn(NotAttached, r, "spec.hostnames", fmt.Sprintf("no hostname matches a listener of Gateway %s/%s; the route is not attached there", ns, p.Name))
		}
	}
	for _, x := range lost {
		if !slices.Contains(hosts[x.view], x.host) {
			t.warn(Unsupported, r, x.field, x.msg)
		}
	}
	return hosts, attached
}

// allows applies a listener's allowedRoutes to an HTTPRoute in ns.
func (t *translator) allows(gw *gwv1.Gateway, l *gwv1.Listener, ns string) bool {
	from := gwv1.NamespacesFromSame
	var sel *metav1.LabelSelector
	if a := l.AllowedRoutes; a != nil {
		if len(a.Kinds) > 0 && !slices.ContainsFunc(a.Kinds, func(k gwv1.RouteGroupKind) bool {
			return string(k.Kind) == t.routeKind() && deref(k.Group, Group) == Group
		}) {
			return false
		}
		if a.Namespaces != nil {
			from = deref(a.Namespaces.From, gwv1.NamespacesFromSame)
			sel = a.Namespaces.Selector
		}
	}
	switch from {
	case gwv1.NamespacesFromAll:
		return true
	case gwv1.NamespacesFromSame:
		return ns == gw.Namespace
	case gwv1.NamespacesFromSelector:
		s, err := metav1.LabelSelectorAsSelector(sel)
		return err == nil && sel != nil && s.Matches(t.namespaceLabels(ns))
	}
	return false
}

// intersect is the hosts a route is served on under a listener: ok is
// false when the route names hostnames and none matches the listener's.
func intersect(listener *gwv1.Hostname, route []gwv1.Hostname) (hosts []string, ok bool) {
	if listener == nil || *listener == "" {
		if len(route) == 0 {
			return []string{""}, true
		}
		for _, h := range route {
			hosts = append(hosts, string(h))
		}
		return hosts, true
	}
	l := string(*listener)
	if len(route) == 0 {
		return []string{l}, true
	}
	for _, h := range route {
		rh := string(h)
		switch {
		case rh == l, covers(l, rh):
			hosts = append(hosts, rh)
		case covers(rh, l):
			hosts = append(hosts, l)
		}
	}
	return hosts, len(hosts) > 0
}

// covers reports whether wildcard w ("*.example.com") matches the more
// specific name h (a name or a longer wildcard).
func covers(w, h string) bool {
	if !strings.HasPrefix(w, "*.") || w == h {
		return false
	}
	return strings.HasSuffix(h, w[1:])
}

// rule translates one rule; ok is false when it is not served at all.
func (t *translator) rule(r *gwv1.HTTPRoute, i int) (compile.HTTPRouteRule, bool) {
	src := &r.Spec.Rules[i]
	field := "spec.rules[" + strconv.Itoa(i) + "]"
	out := compile.HTTPRouteRule{Field: field}
	// Fields this translation does not serve yet change no answer of the
	// rule's own, so the rule is served without them, and says so.
	if src.Retry != nil {
		rt, ok := t.retry(r, field+".retry", src.Retry)
		if !ok {
			return out, false
		}
		out.Retry = rt
	}
	if sp := src.SessionPersistence; sp != nil {
		out.Affinity, out.AffinityField = t.sessionPersistence(r, field+".sessionPersistence", sp), field+".sessionPersistence"
	}
	// A filter that cannot be applied is not skipped: the requests it
	// would have processed answer 500 (Gateway API, HTTPRouteFilter type),
	// rather than fall through to another rule that lacks it.
	var unserved, unservedField string
filters:
	for j, f := range src.Filters {
		ff := field + ".filters[" + strconv.Itoa(j) + "]"
		switch {
		case f.Type == gwv1.HTTPRouteFilterRequestHeaderModifier && f.RequestHeaderModifier != nil && out.RequestHeaders == nil:
			out.RequestHeaders = headerModifier(ff, f.RequestHeaderModifier)
			continue
		case f.Type == gwv1.HTTPRouteFilterResponseHeaderModifier && f.ResponseHeaderModifier != nil && out.ResponseHeaders == nil:
			out.ResponseHeaders = headerModifier(ff, f.ResponseHeaderModifier)
			continue
		case f.Type == gwv1.HTTPRouteFilterCORS && f.CORS != nil && out.CORS == nil:
			out.CORS = corsFilter(ff, f.CORS)
			continue
		case f.Type == gwv1.HTTPRouteFilterRequestMirror && f.RequestMirror != nil:
			out.Mirrors = append(out.Mirrors, t.mirror(r, ff, f.RequestMirror, "the rule"))
			continue
		case f.Type == gwv1.HTTPRouteFilterRequestRedirect && f.RequestRedirect != nil && out.Redirect == nil:
			if out.Redirect = redirect(ff, f.RequestRedirect); out.Redirect == nil {
				unserved, unservedField = "a path modifier without its value", ff+".requestRedirect.path"
				break filters
			}
			continue
		}
		if f.Type != gwv1.HTTPRouteFilterURLRewrite || f.URLRewrite == nil || out.Rewrite != nil {
			unserved, unservedField = "filter "+string(f.Type)+" is not served here (or given twice, or without its settings)", ff
			break filters
		}
		if out.Rewrite, out.FilterField = urlRewrite(f.URLRewrite), ff; out.Rewrite == nil {
			unserved, unservedField = "path modifier "+strconv.Quote(string(f.URLRewrite.Path.Type))+" without its value", ff+".urlRewrite.path"
			break filters
		}
	}
	if unserved != "" {
		t.warn(Unsupported, r, unservedField, unserved+"; the rule's requests answer 500")
		w := t.warnings[len(t.warnings)-1]
		out = compile.HTTPRouteRule{Field: field, Refused: &w}
	} else if !t.timeouts(r, field, src.Timeouts, &out) {
		return out, false
	}
	for j, m := range src.Matches {
		mf := field + ".matches[" + strconv.Itoa(j) + "]"
		if cm, ok := t.match(r, mf, m); ok {
			out.Matches = append(out.Matches, cm)
		}
	}
	if len(src.Matches) > 0 && len(out.Matches) == 0 {
		return out, false // every match refused, each with its warning
	}
	if len(src.Matches) == 0 {
		out.Matches = []compile.HTTPRouteMatch{{Field: field, Type: match.Prefix, Path: "/"}}
	}
	if unserved != "" {
		return out, true
	}
	for j, b := range src.BackendRefs {
		bf := field + ".backendRefs[" + strconv.Itoa(j) + "]"
		if wb, ok := t.backend(r, bf, &b); ok {
			out.Backends = append(out.Backends, wb)
		}
	}
	return out, true
}

func (t *translator) match(r *gwv1.HTTPRoute, field string, m gwv1.HTTPRouteMatch) (compile.HTTPRouteMatch, bool) {
	cm, ok := t.conditions(r, field, m)
	if !ok {
		return cm, false
	}
	cm.Field, cm.Type, cm.Path = field, match.Prefix, "/"
	if p := m.Path; p != nil {
		if p.Value != nil {
			cm.Path = *p.Value
		}
		switch deref(p.Type, gwv1.PathMatchPathPrefix) {
		case gwv1.PathMatchExact:
			cm.Type = match.Exact
		case gwv1.PathMatchPathPrefix:
		case gwv1.PathMatchRegularExpression:
			cm.Type = match.Regex
		default:
			t.warn(Unsupported, r, field+".path.type", "path type "+strconv.Quote(string(*p.Type))+" is unknown; this match is not served")
			return cm, false
		}
	}
	return cm, true
}

// backend translates a Service backendRef. A reference to another kind,
// without a port, or to another namespace without a ReferenceGrant is
// invalid: its share of the rule's requests answers 500 (SPEC §20).
func (t *translator) backend(r *gwv1.HTTPRoute, field string, b *gwv1.HTTPBackendRef) (compile.WeightedBackend, bool) {
	wb := compile.WeightedBackend{Field: field, Weight: deref(b.Weight, 1)}
	invalid := func(reason compile.Reason, f, why string) (compile.WeightedBackend, bool) {
		t.warn(reason, r, field+f, why+"; its share of the requests answers 500")
		wb.Invalid = why
		return wb, true
	}
	if g, k := deref(b.Group, ""), deref(b.Kind, "Service"); (g != "" && g != "core") || k != "Service" {
		return invalid(Unsupported, ".kind", "backend "+string(k)+" is not a Service")
	}
	if why := t.backendFilters(r, field, b.Filters, &wb); why != "" {
		// Not skipped: the requests sent here would miss the filter, and
		// the other backends would take a share that is not theirs.
		wb.Invalid = why
		return wb, true
	}
	if b.Port == nil {
		return invalid(Unsupported, ".port", "a Service backendRef needs a port")
	}
	ns := string(deref(b.Namespace, gwv1.Namespace(r.Namespace)))
	if ns != r.Namespace && !t.granted(r.Namespace, ns, string(b.Name)) {
		return invalid(RefNotPermitted, ".namespace",
			"no ReferenceGrant in namespace "+ns+" lets "+t.routeKind()+"s of "+r.Namespace+" use Service "+string(b.Name))
	}
	wb.Service = compile.ServiceRef{Namespace: ns, Name: string(b.Name), Port: strconv.Itoa(int(*b.Port))}
	return wb, true
}

// granted reports a ReferenceGrant in toNS letting HTTPRoutes of fromNS
// refer to Service name.
func (t *translator) granted(fromNS, toNS, name string) bool {
	for _, g := range t.objs.ReferenceGrants {
		if g.Namespace != toNS {
			continue
		}
		from := slices.ContainsFunc(g.Spec.From, func(f gwv1.ReferenceGrantFrom) bool {
			return f.Group == Group && string(f.Kind) == t.routeKind() && string(f.Namespace) == fromNS
		})
		to := slices.ContainsFunc(g.Spec.To, func(to gwv1.ReferenceGrantTo) bool {
			return (to.Group == "" || to.Group == "core") && to.Kind == "Service" && (to.Name == nil || string(*to.Name) == name)
		})
		if from && to {
			return true
		}
	}
	return false
}

func deref[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}

// headerModifier translates a header filter. Of entries of set, or of
// add, whose names differ only in case the first counts and the rest are
// ignored, as the API asks (HTTPHeader.name).
func headerModifier(field string, f *gwv1.HTTPHeaderFilter) *compile.HeaderModifier {
	hm := &compile.HeaderModifier{Field: field, Remove: f.Remove}
	firsts := func(hs []gwv1.HTTPHeader) []compile.HeaderValue {
		var out []compile.HeaderValue
		for _, h := range hs {
			if !slices.ContainsFunc(out, func(o compile.HeaderValue) bool { return strings.EqualFold(o.Name, string(h.Name)) }) {
				out = append(out, compile.HeaderValue{Name: string(h.Name), Value: h.Value})
			}
		}
		return out
	}
	hm.Set, hm.Add = firsts(f.Set), firsts(f.Add)
	return hm
}

// urlRewrite translates a URLRewrite filter; nil when its path modifier
// lacks its value.
func urlRewrite(u *gwv1.HTTPURLRewriteFilter) *compile.URLRewrite {
	rw := &compile.URLRewrite{}
	if u.Hostname != nil {
		rw.Hostname = string(*u.Hostname)
	}
	if p := u.Path; p != nil {
		switch {
		case p.Type == gwv1.FullPathHTTPPathModifier && p.ReplaceFullPath != nil:
			rw.Path, rw.PathSet = *p.ReplaceFullPath, true
		case p.Type == gwv1.PrefixMatchHTTPPathModifier && p.ReplacePrefixMatch != nil:
			rw.Path, rw.PathSet, rw.ReplacePrefix = *p.ReplacePrefixMatch, true, true
		default:
			return nil
		}
	}
	return rw
}

// redirect translates a RequestRedirect filter; nil when its path modifier
// lacks its value.
func redirect(field string, f *gwv1.HTTPRequestRedirectFilter) *compile.RequestRedirect {
	rd := &compile.RequestRedirect{Field: field, Scheme: deref(f.Scheme, ""), StatusCode: deref(f.StatusCode, 0)}
	if f.Hostname != nil {
		rd.Hostname = string(*f.Hostname)
	}
	if f.Port != nil {
		rd.Port = int32(*f.Port)
	}
	if p := f.Path; p != nil {
		switch {
		case p.Type == gwv1.FullPathHTTPPathModifier && p.ReplaceFullPath != nil:
			rd.Path, rd.PathSet = *p.ReplaceFullPath, true
		case p.Type == gwv1.PrefixMatchHTTPPathModifier && p.ReplacePrefixMatch != nil:
			rd.Path, rd.PathSet, rd.ReplacePrefix = *p.ReplacePrefixMatch, true, true
		default:
			return nil
		}
	}
	return rd
}
