package gatewayapi

import (
	"cmp"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"ramjet.dev/ramjet/compile"
	"ramjet.dev/ramjet/status"
)

// statusState is what TranslateAll learns beside the routes.
type statusState struct {
	conflictsOf   map[*gwv1.Gateway][]string
	certWarnings  []compile.Warning
	listenerHosts map[listenerKey][]string   // hosts of the routes a listener serves
	attached      map[listenerKey]int32      // how many routes are attached to a listener
	services      map[nsName]*corev1.Service // Objects.Services, made by decideStatus
	secrets       map[nsName]*corev1.Secret
}

type listenerKey struct {
	gw   *gwv1.Gateway
	name gwv1.SectionName
}

// maxParents is the API's limit on an HTTPRoute's status.parents.
const maxParents = 32

// Status is the status TranslateAll decided for the GatewayClasses,
// Gateways and HTTPRoutes of ours (SPEC §20), by status's rules from what
// the translation found. It holds conditions without times: GatewayClass,
// Gateway and HTTPRoute merge them into an object's current status.
type Status struct {
	classes  map[string][]metav1.Condition
	gateways map[nsName]decidedGateway
	routes   map[nsName][]gwv1.RouteParentStatus
	// grpcRoutes are the GRPCRoutes' (grpcstatus.go).
	grpcRoutes map[nsName][]gwv1.RouteParentStatus
	// tlsRoutes are the TLSRoutes' (tlsroute.go).
	tlsRoutes map[nsName][]gwv1.RouteParentStatus
}

type decidedGateway struct {
	conditions []metav1.Condition
	listeners  []gwv1.ListenerStatus
}

// GatewayClass returns a copy of c with the decided status, and true, when
// that differs from c's status; nil and false when it does not, or when c
// is not ours.
func (s *Status) GatewayClass(c *gwv1.GatewayClass, now metav1.Time) (*gwv1.GatewayClass, bool) {
	decided, ok := s.classes[c.Name]
	if !ok {
		return nil, false
	}
	merged, changed := status.MergeConditions(c.Status.Conditions, decided, now)
	if !changed {
		return nil, false
	}
	out := c.DeepCopy()
	out.Status.Conditions = merged
	return out, true
}

// Gateway returns a copy of g with the decided status, and true, when that
// differs from g's status; nil and false when it does not, or when g is
// not ours. addresses, when not empty, become status.addresses; empty
// keeps what is there, as an Ingress keeps its status while no address is
// known (SPEC §16).
func (s *Status) Gateway(g *gwv1.Gateway, addresses []gwv1.GatewayStatusAddress, now metav1.Time) (*gwv1.Gateway, bool) {
	d, ok := s.gateways[nsName{g.Namespace, g.Name}]
	if !ok {
		return nil, false
	}
	next := gwv1.GatewayStatus{Addresses: g.Status.Addresses}
	if len(addresses) > 0 {
		next.Addresses = addresses
	}
	changed := !reflect.DeepEqual(next.Addresses, g.Status.Addresses)
	var c bool
	conds := d.conditions
	if bad := unusableAddresses(g, next.Addresses); len(bad) > 0 {
		// Known only now: the addresses are the controller's.
		conds = slices.Clone(conds)
		for i := range conds {
			if conds[i].Type == status.ConditionProgrammed && conds[i].Status == metav1.ConditionTrue {
				conds[i].Status, conds[i].Reason = metav1.ConditionFalse, status.ReasonAddressNotUsable
				conds[i].Message = "spec.addresses: " + strings.Join(bad, ", ") + " is not an address of the controller (status.addresses): ramjet assigns no requested address; the listeners are served on the controller's addresses"
			}
		}
	}
	next.Conditions, c = status.MergeConditions(g.Status.Conditions, conds, now)
	changed = changed || c
	for _, l := range d.listeners {
		var old gwv1.ListenerStatus
		if i := slices.IndexFunc(g.Status.Listeners, func(o gwv1.ListenerStatus) bool { return o.Name == l.Name }); i >= 0 {
			old = g.Status.Listeners[i]
		}
		// OverlappingTLSConfig is set only True: once not decided it goes.
		oldConds := slices.DeleteFunc(slices.Clone(old.Conditions), func(c metav1.Condition) bool {
			return c.Type == status.ConditionOverlappingTLSConfig &&
				!slices.ContainsFunc(l.Conditions, func(d metav1.Condition) bool { return d.Type == c.Type })
		})
		changed = changed || len(oldConds) != len(old.Conditions)
		l.Conditions, c = status.MergeConditions(oldConds, l.Conditions, now)
		changed = changed || c || old.AttachedRoutes != l.AttachedRoutes || !reflect.DeepEqual(old.SupportedKinds, l.SupportedKinds)
		next.Listeners = append(next.Listeners, l)
	}
	changed = changed || len(next.Listeners) != len(g.Status.Listeners)
	if !changed {
		return nil, false
	}
	out := g.DeepCopy()
	out.Status = next
	return out, true
}

// HTTPRoute returns a copy of r with the decided status, and true, when
// that differs from r's status; nil and false when it does not. Entries of
// status.parents written by other controllers stay as they are; entries of
// ours for parents the route no longer names go.
func (s *Status) HTTPRoute(r *gwv1.HTTPRoute, now metav1.Time) (*gwv1.HTTPRoute, bool) {
	next, changed := mergeParents(r.Status.Parents, s.routes[nsName{r.Namespace, r.Name}], now)
	if !changed {
		return nil, false
	}
	out := r.DeepCopy()
	out.Status.Parents = next
	return out, true
}

// mergeParents is a route's status.parents with the decided entries of
// ours merged in, and whether that differs from current.
func mergeParents(current, decided []gwv1.RouteParentStatus, now metav1.Time) ([]gwv1.RouteParentStatus, bool) {
	var next []gwv1.RouteParentStatus
	for _, p := range current {
		if p.ControllerName != ControllerName {
			next = append(next, p)
		}
	}
	changed := false
	for _, d := range decided {
		var old []metav1.Condition
		if i := slices.IndexFunc(current, func(o gwv1.RouteParentStatus) bool {
			return o.ControllerName == ControllerName && reflect.DeepEqual(o.ParentRef, d.ParentRef)
		}); i >= 0 {
			// PartiallyInvalid is set only True: once not decided it goes.
			old = slices.DeleteFunc(slices.Clone(current[i].Conditions), func(c metav1.Condition) bool {
				return c.Type == status.ConditionPartiallyInvalid &&
					!slices.ContainsFunc(d.Conditions, func(dc metav1.Condition) bool { return dc.Type == c.Type })
			})
			changed = changed || len(old) != len(current[i].Conditions)
		} else {
			changed = true
		}
		var c bool
		d.Conditions, c = status.MergeConditions(old, d.Conditions, now)
		changed = changed || c
		next = append(next, d)
	}
	next = next[:min(len(next), maxParents)]
	return next, changed || len(next) != len(current)
}

// sortedGateways are our Gateways by namespace and name.
func (t *translator) sortedGateways() []*gwv1.Gateway {
	gws := make([]*gwv1.Gateway, 0, len(t.gateways))
	for _, g := range t.gateways {
		gws = append(gws, g)
	}
	slices.SortFunc(gws, func(a, b *gwv1.Gateway) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	return gws
}

// decideStatus states the facts status decides by, and decides. warnings
// are Translate's, whose Unsupported ones are what an accepted route does
// not serve; routes are Translate's too, whose rules compile refuses
// (compile.RefusedRules) are not served either.
func (t *translator) decideStatus(warnings []compile.Warning, routes []*compile.HTTPRoute) *Status {
	s := &Status{classes: map[string][]metav1.Condition{}, gateways: map[nsName]decidedGateway{}, routes: map[nsName][]gwv1.RouteParentStatus{},
		grpcRoutes: map[nsName][]gwv1.RouteParentStatus{}, tlsRoutes: map[nsName][]gwv1.RouteParentStatus{}}
	t.listenerHosts = map[listenerKey][]string{}
	t.attached = map[listenerKey]int32{}
	t.services = make(map[nsName]*corev1.Service, len(t.objs.Services))
	for _, svc := range t.objs.Services {
		t.services[nsName{svc.Namespace, svc.Name}] = svc
	}
	t.secrets = make(map[nsName]*corev1.Secret, len(t.objs.Secrets))
	for _, sec := range t.objs.Secrets {
		t.secrets[nsName{sec.Namespace, sec.Name}] = sec
	}
	for _, c := range t.objs.GatewayClasses {
		if c.Spec.ControllerName == ControllerName {
			s.classes[c.Name] = status.GatewayClassConditions(c.Generation, classParametersProblem(c))
		}
	}
	unsupported := map[nsName][]string{}
	kindConflicts := kindConflictProblems(warnings, compile.HTTPRouteKind)
	refusing := refusingWarnings(routes)
	for _, w := range warnings {
		if w.Reason == Unsupported && w.Object.Kind == compile.HTTPRouteKind && !refusing[w] {
			k := nsName{w.Object.Namespace, w.Object.Name}
			unsupported[k] = append(unsupported[k], w.Field+": "+w.Message)
		}
	}
	dropped, backends, noneServed := refusedRules(routes, compile.HTTPRouteKind)
	for _, m := range []map[nsName][]string{dropped, backends} {
		for k, msgs := range m {
			unsupported[k] = append(unsupported[k], msgs...)
		}
	}
	for _, r := range t.objs.HTTPRoutes {
		var refs []status.Problem
		var badValue *status.Problem
		refsDone, valueDone := false, false
		seen := map[listenerKey]bool{}
		for i, p := range r.Spec.ParentRefs {
			if deref(p.Group, Group) != Group || deref(p.Kind, "Gateway") != "Gateway" {
				continue
			}
			gw := t.gateways[nsName{string(deref(p.Namespace, gwv1.Namespace(r.Namespace))), string(p.Name)}]
			if gw == nil {
				continue // not ours to judge
			}
			if !refsDone {
				refs, refsDone = t.backendProblems(r, true), true
			}
			if !valueDone {
				badValue, valueDone = httpValueProblem(r), true
			}
			k := nsName{r.Namespace, r.Name}
			f := status.RouteParentFacts{Generation: r.Generation, RefProblems: refs, Unsupported: unsupported[k], DroppedRules: dropped[k],
				NotAccepted: t.attachFacts(r, i, gw, seen, cmp.Or(badValue, kindConflicts[k], noneServed[k]), noneServed[k] != nil)}
			s.routes[nsName{r.Namespace, r.Name}] = append(s.routes[nsName{r.Namespace, r.Name}], gwv1.RouteParentStatus{
				ParentRef: p, ControllerName: ControllerName, Conditions: status.RouteParentConditions(f)})
		}
	}
	t.decideGRPCStatus(s, warnings, routes)
	t.translateTLSRoutes(s)
	for _, gw := range t.sortedGateways() {
		f := status.GatewayFacts{Generation: gw.Generation, InvalidParameters: cmp.Or(parametersProblem(gw), t.classProblem(gw)), UnsupportedAddress: addressProblem(gw)}
		var lss []gwv1.ListenerStatus
		conf := conflicts(gw)
		overlaps := overlappingHostnames(gw, conf)
		for li := range gw.Spec.Listeners {
			l := &gw.Spec.Listeners[li]
			lf := status.ListenerFacts{Name: string(l.Name), Conflict: conf[li], AttachedRoutes: t.attached[listenerKey{gw, l.Name}],
				OverlappingHostnames: overlaps[li]}
			if (l.Protocol == gwv1.HTTPProtocolType || l.Protocol == gwv1.HTTPSProtocolType) && !t.portServed(l) {
				lf.PortUnavailable, lf.PortWhy = true, t.portWhy(l)
			}
			if why := t.notAccepted(gw); why != "" {
				lf.UnsupportedValue = "the Gateway is not accepted: " + why
			} else if requiresClientCertificates(gw, l) {
				_, field := frontendValidation(gw, l)
				lf.UnsupportedValue = field + ": client certificate validation is not served; the listener is not served rather than served to clients without a valid certificate"
			}
			ls := gwv1.ListenerStatus{Name: l.Name, SupportedKinds: []gwv1.RouteGroupKind{}, AttachedRoutes: lf.AttachedRoutes}
			switch l.Protocol {
			case gwv1.HTTPSProtocolType:
				for _, c := range t.checkCertificates(gw, li) {
					if c.problem != nil {
						lf.CertificateProblems = append(lf.CertificateProblems, *c.problem)
					}
				}
				fallthrough
			case gwv1.HTTPProtocolType:
				lf.InvalidRouteKinds, ls.SupportedKinds = routeKinds(l)
				lf.Kinds = []string{}
				for _, k := range ls.SupportedKinds {
					lf.Kinds = append(lf.Kinds, string(k.Kind))
				}
			case gwv1.TLSProtocolType:
				t.tlsListenerFacts(gw, l, &lf, &ls)
			default:
				lf.UnsupportedProtocol = string(l.Protocol)
			}
			f.Listeners = append(f.Listeners, lf)
			lss = append(lss, ls)
		}
		conds, lconds := status.GatewayConditions(f)
		for i := range lss {
			lss[i].Conditions = lconds[i]
		}
		s.gateways[nsName{gw.Namespace, gw.Name}] = decidedGateway{conditions: conds, listeners: lss}
	}
	return s
}

// overlappingHostnames names, for each listener of gw, the other HTTPS
// listeners on its port whose hostname overlaps its own: a wildcard that
// matches the other's name (the API's ListenerConditionOverlappingTLSConfig,
// which controllers must detect). Equal hostnames are a HostnameConflict
// instead, a conflicted listener is not served, and a listener without a
// hostname names none.
func overlappingHostnames(gw *gwv1.Gateway, conf []string) [][]string {
	ls := gw.Spec.Listeners
	out := make([][]string, len(ls))
	for i := range ls {
		a := string(deref(ls[i].Hostname, ""))
		if ls[i].Protocol != gwv1.HTTPSProtocolType || conf[i] != "" || a == "" {
			continue
		}
		for j := range ls {
			b := string(deref(ls[j].Hostname, ""))
			if i == j || ls[j].Protocol != gwv1.HTTPSProtocolType || conf[j] != "" || b == "" || ls[i].Port != ls[j].Port {
				continue
			}
			if covers(a, b) || covers(b, a) {
				out[i] = append(out[i], string(ls[j].Name))
			}
		}
	}
	return out
}

// refusingWarnings are the translator's warnings that refuse a whole rule
// (compile.HTTPRouteRule.Refused): status lists each once, with its
// dropped rule (refusedRules), rather than again as a part not served.
func refusingWarnings(routes []*compile.HTTPRoute) map[compile.Warning]bool {
	out := map[compile.Warning]bool{}
	for _, hr := range routes {
		for _, rule := range hr.Rules {
			if rule.Refused != nil {
				out[*rule.Refused] = true
			}
		}
	}
	return out
}

// refusedRules are, by route of kind, the rules compile refuses
// (compile.RefusedRules), each named with compile's warning (a rule whose
// every match is refused among them), the backends whose share it
// refuses and the matches it does not serve of the other rules, and for
// a route none of whose rules is served, why it is not accepted
// (UnsupportedValue: the API counts a route whose every rule is invalid
// as invalid). A route attached to several listeners has the same rules
// on each: its first is read.
func refusedRules(routes []*compile.HTTPRoute, kind string) (dropped, backends map[nsName][]string, noneServed map[nsName]*status.Problem) {
	dropped, backends, noneServed = map[nsName][]string{}, map[nsName][]string{}, map[nsName]*status.Problem{}
	done := map[nsName]bool{}
	for _, hr := range routes {
		k := nsName{hr.Namespace, hr.Name}
		if cmp.Or(hr.Kind, compile.HTTPRouteKind) != kind || done[k] {
			continue
		}
		done[k] = true
		rules, incompatible := 0, 0
		refusals := compile.RefusedRules(hr)
		for i, rr := range refusals {
			w := rr.Warning
			if rr.Match >= 0 {
				rule := &hr.Rules[rr.Rule]
				refused := 0
				for _, o := range refusals {
					if o.Rule == rr.Rule && o.Match >= 0 {
						refused++
					}
				}
				if refused < max(len(rule.Matches), 1) {
					backends[k] = append(backends[k], w.Field+": "+w.Message)
					continue
				}
				if i > 0 && refusals[i-1].Rule == rr.Rule && refusals[i-1].Match >= 0 {
					continue // the rule is listed once, with its first match's warning
				}
			} else if rr.Backend >= 0 {
				backends[k] = append(backends[k], w.Field+": "+w.Message)
				continue
			}
			rules++
			if rr.Incompatible {
				incompatible++
			}
			dropped[k] = append(dropped[k], hr.Rules[rr.Rule].Field+" ("+w.Field+": "+w.Message+")")
		}
		if rules > 0 && rules == len(hr.Rules) {
			// The API names IncompatibleFilters for a route not accepted
			// for filters that cannot be combined (HTTPRouteRule filters).
			reason := status.ReasonUnsupportedValue
			if incompatible == rules {
				reason = status.ReasonIncompatibleFilters
			}
			noneServed[k] = &status.Problem{Reason: reason, Message: "no rule is served: " + strings.Join(dropped[k], "; ")}
		}
	}
	return dropped, backends, noneServed
}

// httpValueProblem lists r's values outside the API's enums as
// UnsupportedValue, which the HTTPRoute API asks of each: a path, header
// or query parameter match type, a filter or path modifier type, a
// redirect scheme or status code, a method; and ReplacePrefixMatch beside
// a match that is not PathPrefix, which the API does not accept either. nil when
// there is none. Such a value is not served (its match is left out, its
// rule answers 500); known values ramjet does not serve keep the route
// Accepted, listing them.
func httpValueProblem(r *gwv1.HTTPRoute) *status.Problem {
	var msgs []string
	prefixField := "" // a ReplacePrefixMatch of the rule's filters
	bad := func(field, what, v string) {
		msgs = append(msgs, field+": "+what+" "+strconv.Quote(v)+" is not one the API defines")
	}
	filter := func(field string, f gwv1.HTTPRouteFilter) {
		switch f.Type {
		case gwv1.HTTPRouteFilterRequestHeaderModifier, gwv1.HTTPRouteFilterResponseHeaderModifier, gwv1.HTTPRouteFilterRequestMirror,
			gwv1.HTTPRouteFilterExtensionRef, gwv1.HTTPRouteFilterCORS, gwv1.HTTPRouteFilterExternalAuth:
		case gwv1.HTTPRouteFilterRequestRedirect, gwv1.HTTPRouteFilterURLRewrite:
			var p *gwv1.HTTPPathModifier
			pf := field + ".urlRewrite.path.type"
			if rd := f.RequestRedirect; f.Type == gwv1.HTTPRouteFilterRequestRedirect && rd != nil {
				p, pf = rd.Path, field+".requestRedirect.path.type"
				if rd.Scheme != nil && *rd.Scheme != "http" && *rd.Scheme != "https" {
					bad(field+".requestRedirect.scheme", "scheme", *rd.Scheme)
				}
				if c := rd.StatusCode; c != nil && !slices.Contains([]int{301, 302, 303, 307, 308}, *c) {
					bad(field+".requestRedirect.statusCode", "status code", strconv.Itoa(*c))
				}
			} else if u := f.URLRewrite; f.Type == gwv1.HTTPRouteFilterURLRewrite && u != nil {
				p = u.Path
			}
			if p != nil && p.Type != gwv1.FullPathHTTPPathModifier && p.Type != gwv1.PrefixMatchHTTPPathModifier {
				bad(pf, "path modifier type", string(p.Type))
			}
			if p != nil && p.Type == gwv1.PrefixMatchHTTPPathModifier {
				prefixField = pf
			}
		default:
			bad(field+".type", "filter type", string(f.Type))
		}
	}
	for i, rule := range r.Spec.Rules {
		rf := "spec.rules[" + strconv.Itoa(i) + "]"
		prefixField = ""
		for j, f := range rule.Filters {
			filter(rf+".filters["+strconv.Itoa(j)+"]", f)
		}
		// The API asks the same of a ReplacePrefixMatch on a backendRef.
		for j, b := range rule.BackendRefs {
			for k, f := range b.Filters {
				filter(rf+".backendRefs["+strconv.Itoa(j)+"].filters["+strconv.Itoa(k)+"]", f)
			}
		}
		for j, m := range rule.Matches {
			mf := rf + ".matches[" + strconv.Itoa(j) + "]"
			// ReplacePrefixMatch replaces what a PathPrefix match matched:
			// beside another match type the API does not accept the route.
			if mp := m.Path; prefixField != "" && mp != nil && deref(mp.Type, gwv1.PathMatchPathPrefix) != gwv1.PathMatchPathPrefix {
				msgs = append(msgs, prefixField+": ReplacePrefixMatch needs PathPrefix matches; "+mf+" is "+string(*mp.Type))
			}
			if m.Method != nil && !knownMethod(*m.Method) {
				bad(mf+".method", "method", string(*m.Method))
			}
			if p := m.Path; p != nil && p.Type != nil && !slices.Contains([]gwv1.PathMatchType{gwv1.PathMatchExact, gwv1.PathMatchPathPrefix, gwv1.PathMatchRegularExpression}, *p.Type) {
				bad(mf+".path.type", "path match type", string(*p.Type))
			}
			for k, h := range m.Headers {
				if _, ok := valueType(deref(h.Type, gwv1.HeaderMatchExact)); !ok {
					bad(mf+".headers["+strconv.Itoa(k)+"].type", "header match type", string(*h.Type))
				}
			}
			for k, q := range m.QueryParams {
				if _, ok := valueType(deref(q.Type, gwv1.QueryParamMatchExact)); !ok {
					bad(mf+".queryParams["+strconv.Itoa(k)+"].type", "query parameter match type", string(*q.Type))
				}
			}
		}
	}
	if len(msgs) == 0 {
		return nil
	}
	return &status.Problem{Reason: status.ReasonUnsupportedValue, Message: strings.Join(msgs, "; ")}
}

// routeKinds splits a listener's allowedRoutes kinds into those it cannot
// serve and those it can (HTTPRoute and GRPCRoute, the default).
func routeKinds(l *gwv1.Listener) (invalid []string, supported []gwv1.RouteGroupKind) {
	httpRoute := gwv1.RouteGroupKind{Group: new(gwv1.Group(Group)), Kind: "HTTPRoute"}
	grpcRoute := gwv1.RouteGroupKind{Group: new(gwv1.Group(Group)), Kind: GRPCRouteKind}
	if l.AllowedRoutes == nil || len(l.AllowedRoutes.Kinds) == 0 {
		return nil, []gwv1.RouteGroupKind{httpRoute, grpcRoute}
	}
	supported = []gwv1.RouteGroupKind{}
	for _, k := range l.AllowedRoutes.Kinds {
		if (k.Kind == "HTTPRoute" || k.Kind == GRPCRouteKind) && deref(k.Group, Group) == Group {
			rk := httpRoute
			if k.Kind == GRPCRouteKind {
				rk = grpcRoute
			}
			if !slices.ContainsFunc(supported, func(s gwv1.RouteGroupKind) bool { return s.Kind == rk.Kind }) {
				supported = append(supported, rk)
			}
			continue
		}
		invalid = append(invalid, string(k.Kind))
	}
	return invalid, supported
}

// attachFacts finds why parentRef i of r is not accepted by gw: why it
// does not attach, as attach finds, else refused, the reason it is not
// accepted anyway; nil when it is accepted. Unless unserved (no rule of r
// is served), it records its hosts on each listener it attaches to, and
// counts an accepted route there (once per listener, in seen) unless
// another Gateway's listeners take its every host: a listener's attachedRoutes counts only routes whose Accepted is
// True (Gateway API, ListenerStatus) and that it serves.
func (t *translator) attachFacts(r *gwv1.HTTPRoute, i int, gw *gwv1.Gateway, seen map[listenerKey]bool, refused *status.Problem, unserved bool) *status.Problem {
	p := r.Spec.ParentRefs[i]
	field := "spec.parentRefs[" + strconv.Itoa(i) + "]"
	found, allowed, attached := false, false, false
	var keys []listenerKey
	for li := range gw.Spec.Listeners {
		l := &gw.Spec.Listeners[li]
		if p.SectionName != nil && *p.SectionName != l.Name || p.Port != nil && *p.Port != l.Port {
			continue
		}
		if !t.matchable(gw, l) {
			continue
		}
		found = true
		if !t.served(gw, l) || !t.allows(gw, l, r.Namespace) {
			continue
		}
		allowed = true
		hosts, ok := intersect(l.Hostname, r.Spec.Hostnames)
		if !ok {
			continue
		}
		attached = true
		k := listenerKey{gw, l.Name}
		if !unserved {
			// A route with a value outside the API's enums is not
			// Accepted but serves its other rules, so needs the
			// certificate; one that serves nothing does not.
			t.listenerHosts[k] = append(t.listenerHosts[k], hosts...)
		}
		// A route whose every host here another Gateway's listener takes
		// is not served here (attach), so is not counted.
		if slices.ContainsFunc(hosts, func(h string) bool {
			by := t.shadowedBy(viewOf(l), string(deref(l.Hostname, "")), h)
			return by == nil || by.gw == gw
		}) {
			keys = append(keys, k)
		}
	}
	if attached && refused == nil {
		for _, k := range keys {
			if !seen[k] {
				seen[k] = true
				t.attached[k]++
			}
		}
	}
	gwName := gw.Namespace + "/" + gw.Name
	switch {
	case !found:
		return &status.Problem{Reason: status.ReasonNoMatchingParent,
			Message: field + ": Gateway " + gwName + " has no HTTP or HTTPS listener, free of conflicts and on a served port, that matches the sectionName and port"}
	case !allowed:
		return &status.Problem{Reason: status.ReasonNotAllowedByListeners,
			Message: field + ": no listener of Gateway " + gwName + " allows " + t.routeKind() + "s from namespace " + r.Namespace + " (by its protocol, allowedRoutes kinds and namespaces)"}
	case !attached:
		return &status.Problem{Reason: status.ReasonNoMatchingListenerHostname,
			Message: "spec.hostnames: no hostname matches a listener of Gateway " + gwName}
	}
	return refused
}

// backendProblems are r's backendRefs, and the backendRefs of its rules'
// and backendRefs' mirrors, that do not resolve: another kind
// than a core Service, another namespace without a ReferenceGrant, a
// Service that does not exist, or (an HTTPRoute's) a Service port whose
// appProtocol ramjet does not speak (UnsupportedProtocol, as the API's
// BackendRef text asks; with appProtocols, as a GRPCRoute's backends are
// dialled as gRPC whatever the port says).
func (t *translator) backendProblems(r *gwv1.HTTPRoute, appProtocols bool) []status.Problem {
	var out []status.Problem
	for i := range r.Spec.Rules {
		type ref struct {
			field  string
			b      gwv1.BackendObjectReference
			mirror bool
		}
		var refs []ref
		for j, b := range r.Spec.Rules[i].BackendRefs {
			bf := fmt.Sprintf("spec.rules[%d].backendRefs[%d]", i, j)
			refs = append(refs, ref{bf, b.BackendObjectReference, false})
			for k, f := range b.Filters {
				if f.Type == gwv1.HTTPRouteFilterRequestMirror && f.RequestMirror != nil {
					refs = append(refs, ref{fmt.Sprintf("%s.filters[%d].requestMirror.backendRef", bf, k), f.RequestMirror.BackendRef, true})
				}
			}
		}
		for j, f := range r.Spec.Rules[i].Filters {
			if f.Type == gwv1.HTTPRouteFilterRequestMirror && f.RequestMirror != nil {
				refs = append(refs, ref{fmt.Sprintf("spec.rules[%d].filters[%d].requestMirror.backendRef", i, j), f.RequestMirror.BackendRef, true})
			}
		}
		for _, rf := range refs {
			field, b := rf.field, rf.b
			ns := string(deref(b.Namespace, gwv1.Namespace(r.Namespace)))
			switch g, k := deref(b.Group, ""), deref(b.Kind, "Service"); {
			case (g != "" && g != "core") || k != "Service":
				out = append(out, status.Problem{Reason: status.ReasonInvalidKind, Message: field + ": " + string(k) + " is not a core Service"})
			case ns != r.Namespace && !t.granted(r.Namespace, ns, string(b.Name)):
				out = append(out, status.Problem{Reason: status.ReasonRefNotPermitted,
					Message: field + ": no ReferenceGrant in namespace " + ns + " lets " + t.routeKind() + "s of " + r.Namespace + " use Service " + string(b.Name)})
			case t.services[nsName{ns, string(b.Name)}] == nil:
				out = append(out, status.Problem{Reason: status.ReasonBackendNotFound, Message: field + ": Service " + ns + "/" + string(b.Name) + " not found"})
			case t.services[nsName{ns, string(b.Name)}].Spec.Type == corev1.ServiceTypeExternalName:
				out = append(out, externalNameProblem(field, ns, string(b.Name)))
			case b.Port != nil && !hasPort(t.services[nsName{ns, string(b.Name)}], int32(*b.Port)):
				// Its share answers 500 as a missing Service's does.
				out = append(out, status.Problem{Reason: status.ReasonBackendNotFound,
					Message: field + ": Service " + ns + "/" + string(b.Name) + " has no port " + strconv.Itoa(int(*b.Port))})
			case appProtocols && !rf.mirror && b.Port != nil:
				if ap := appProtocol(t.services[nsName{ns, string(b.Name)}], int32(*b.Port)); !compile.AppProtocolServed(ap) {
					out = append(out, status.Problem{Reason: status.ReasonUnsupportedProtocol,
						Message: field + ": Service " + ns + "/" + string(b.Name) + " port " + strconv.Itoa(int(*b.Port)) + " has appProtocol " + strconv.Quote(ap) + ", which ramjet does not speak"})
				}
			}
		}
	}
	return out
}

// externalNameProblem is a backendRef to an ExternalName Service, which
// compile does not dial (its share is refused): an unsupported kind of
// backend, as the API's BackendObjectReference counts it.
func externalNameProblem(field, ns, name string) status.Problem {
	return status.Problem{Reason: status.ReasonInvalidKind,
		Message: field + ": Service " + ns + "/" + name + " is of type ExternalName, which ramjet does not dial"}
}

// hasPort reports whether svc has port number port.
func hasPort(svc *corev1.Service, port int32) bool {
	return slices.ContainsFunc(svc.Spec.Ports, func(p corev1.ServicePort) bool { return p.Port == port })
}

// appProtocol is the appProtocol of svc's port number port ("" when unset
// or when svc has no such port).
func appProtocol(svc *corev1.Service, port int32) string {
	for _, p := range svc.Spec.Ports {
		if p.Port == port && p.AppProtocol != nil {
			return *p.AppProtocol
		}
	}
	return ""
}
