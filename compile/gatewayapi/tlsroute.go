package gatewayapi

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwv1alpha2 "sigs.k8s.io/gateway-api/apis/v1alpha2"
	gwv1alpha3 "sigs.k8s.io/gateway-api/apis/v1alpha3"

	"ramjet.dev/ramjet/compile"
	"ramjet.dev/ramjet/match"
	"ramjet.dev/ramjet/status"
)

// TLSRoute (SPEC §20): SNI hostnames to weighted backends on listeners
// with protocol TLS and tls.mode Passthrough, whose connections are
// spliced unterminated. Such a listener shares its port with the HTTPS
// listeners there (both begin with a TLS handshake); match decides a
// connection by the listener hostname its server name matches most
// specifically. A TLS listener in Terminate mode is not served
// (UnsupportedValue), and one sharing its port with a TLS listener of the
// other mode conflicts with it (ProtocolConflict), as the suite's
// tlsroute-listener-mixed-termination-not-supported asks.

const tlsRouteKind = "TLSRoute"

// passthroughListener reports a TLS listener in Passthrough mode.
func passthroughListener(l *gwv1.Listener) bool {
	return l.Protocol == gwv1.TLSProtocolType && l.TLS != nil && deref(l.TLS.Mode, gwv1.TLSModeTerminate) == gwv1.TLSModePassthrough
}

// tlsServed reports whether listener l of gw passes TLSRoutes' connections
// through: a TLS listener in Passthrough mode, free of conflicts, on a
// TLS port requests arrive on.
func (t *translator) tlsServed(gw *gwv1.Gateway, l *gwv1.Listener) bool {
	return passthroughListener(l) && !t.conflicted(gw, l) && t.portServed(l) && !t.takenByHTTPS(gw, l) && t.notAccepted(gw) == ""
}

// takenByHTTPS reports whether a served HTTPS listener of another of our
// Gateways has TLS listener l's port and hostname: Gateways share the
// data plane's ports, and of the two the HTTPS listener keeps the names,
// so that a Gateway added beside never takes an HTTPS listener's
// connections; l is Conflicted (HostnameConflict).
func (t *translator) takenByHTTPS(gw *gwv1.Gateway, l *gwv1.Listener) bool {
	for _, other := range t.gateways {
		if other == gw {
			continue
		}
		for i := range other.Spec.Listeners {
			o := &other.Spec.Listeners[i]
			if o.Protocol == gwv1.HTTPSProtocolType && o.Port == l.Port && deref(o.Hostname, "") == deref(l.Hostname, "") && t.served(other, o) {
				return true
			}
		}
	}
	return false
}

// tlsAllows applies a TLS listener's allowedRoutes to a TLSRoute in ns:
// its kinds (TLSRoute when none are listed), then its namespaces.
func (t *translator) tlsAllows(gw *gwv1.Gateway, l *gwv1.Listener, ns string) bool {
	lc := *l
	if a := l.AllowedRoutes; a != nil {
		if len(a.Kinds) > 0 && !slices.ContainsFunc(a.Kinds, func(k gwv1.RouteGroupKind) bool {
			return k.Kind == tlsRouteKind && deref(k.Group, Group) == Group
		}) {
			return false
		}
		ac := *a
		ac.Kinds = nil
		lc.AllowedRoutes = &ac
	}
	return t.allows(gw, &lc, ns)
}

// tlsListenerFacts states what status decides a TLS listener by, and its
// supported kinds.
func (t *translator) tlsListenerFacts(gw *gwv1.Gateway, l *gwv1.Listener, lf *status.ListenerFacts, ls *gwv1.ListenerStatus) {
	if lf.Conflict == "" && passthroughListener(l) && t.takenByHTTPS(gw, l) {
		lf.Conflict = status.ReasonHostnameConflict
	}
	if !passthroughListener(l) {
		lf.UnsupportedValue = "tls.mode " + string(tlsMode(l)) + " is not served on a TLS listener; ramjet passes TLS listeners' connections through (tls.mode Passthrough), and terminates TLS on HTTPS listeners"
		ls.SupportedKinds = []gwv1.RouteGroupKind{}
		return
	}
	if !t.portServed(l) {
		lf.PortUnavailable, lf.PortWhy = true, t.portWhy(l)
	}
	lf.Kinds = []string{tlsRouteKind}
	ls.SupportedKinds = []gwv1.RouteGroupKind{}
	tlsRoute := gwv1.RouteGroupKind{Group: new(gwv1.Group(Group)), Kind: tlsRouteKind}
	if l.AllowedRoutes == nil || len(l.AllowedRoutes.Kinds) == 0 {
		ls.SupportedKinds = append(ls.SupportedKinds, tlsRoute)
		return
	}
	for _, k := range l.AllowedRoutes.Kinds {
		if k.Kind == tlsRouteKind && deref(k.Group, Group) == Group {
			if len(ls.SupportedKinds) == 0 {
				ls.SupportedKinds = append(ls.SupportedKinds, tlsRoute)
			}
			continue
		}
		lf.InvalidRouteKinds = append(lf.InvalidRouteKinds, string(k.Kind))
	}
	if len(ls.SupportedKinds) == 0 {
		lf.Kinds = []string{} // its kinds leave TLSRoute out: it serves none
	}
}

func tlsMode(l *gwv1.Listener) gwv1.TLSModeType {
	if l.TLS == nil {
		return gwv1.TLSModeTerminate
	}
	return deref(l.TLS.Mode, gwv1.TLSModeTerminate)
}

// sortedTLSRoutes are Objects.TLSRoutes by namespace and name.
func (t *translator) sortedTLSRoutes() []*gwv1.TLSRoute {
	routes := slices.Clone(t.objs.TLSRoutes)
	slices.SortFunc(routes, func(a, b *gwv1.TLSRoute) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	return routes
}

func (t *translator) warnTLS(reason compile.Reason, r *gwv1.TLSRoute, field, msg string) {
	t.tlsWarnings = append(t.tlsWarnings, compile.Warning{Reason: reason,
		Object: compile.Ref{Kind: compile.TLSRouteKind, Namespace: r.Namespace, Name: r.Name}, Field: field, Message: msg})
}

// tlsAttachment is where one parentRef of a TLSRoute attaches it.
type tlsAttachment struct {
	gw    *gwv1.Gateway
	l     *gwv1.Listener
	hosts []string
}

// attachTLS finds the listeners parentRef i of r attaches it to, and why
// it attaches to none (nil when it attaches).
func (t *translator) attachTLS(r *gwv1.TLSRoute, i int, gw *gwv1.Gateway) ([]tlsAttachment, *status.Problem) {
	p := r.Spec.ParentRefs[i]
	field := "spec.parentRefs[" + strconv.Itoa(i) + "]"
	var out []tlsAttachment
	found, allowed := false, false
	for li := range gw.Spec.Listeners {
		l := &gw.Spec.Listeners[li]
		if p.SectionName != nil && *p.SectionName != l.Name || p.Port != nil && *p.Port != l.Port {
			continue
		}
		if l.Protocol == gwv1.TLSProtocolType && !t.tlsServed(gw, l) || !t.matchable(gw, l) {
			continue
		}
		found = true
		if !t.tlsServed(gw, l) || !t.tlsAllows(gw, l, r.Namespace) {
			continue
		}
		allowed = true
		hs, ok := intersect(l.Hostname, r.Spec.Hostnames)
		if !ok {
			continue
		}
		out = append(out, tlsAttachment{gw, l, hs})
	}
	gwName := gw.Namespace + "/" + gw.Name
	switch {
	case !found:
		return nil, &status.Problem{Reason: status.ReasonNoMatchingParent,
			Message: field + ": Gateway " + gwName + " has no listener, free of conflicts and on a served port, that matches the sectionName and port"}
	case !allowed:
		return nil, &status.Problem{Reason: status.ReasonNotAllowedByListeners,
			Message: field + ": no TLS listener in Passthrough mode of Gateway " + gwName + " allows TLSRoutes from namespace " + r.Namespace}
	case len(out) == 0:
		return nil, &status.Problem{Reason: status.ReasonNoMatchingListenerHostname,
			Message: "spec.hostnames: no hostname matches a listener of Gateway " + gwName}
	}
	return out, nil
}

// tlsBackends translates the rule's backendRefs, and states the problems
// of those that do not resolve.
func (t *translator) tlsBackends(r *gwv1.TLSRoute, rule int) ([]compile.WeightedBackend, []status.Problem) {
	var out []compile.WeightedBackend
	var problems []status.Problem
	for j, b := range r.Spec.Rules[rule].BackendRefs {
		field := fmt.Sprintf("spec.rules[%d].backendRefs[%d]", rule, j)
		wb := compile.WeightedBackend{Field: field, Weight: deref(b.Weight, 1)}
		invalid := func(reason compile.Reason, sr, f, why string) {
			t.warnTLS(reason, r, field+f, why+"; its share of the connections is refused")
			problems = append(problems, status.Problem{Reason: sr, Message: field + ": " + why})
			wb.Invalid = why
		}
		ns := string(deref(b.Namespace, gwv1.Namespace(r.Namespace)))
		switch g, k := deref(b.Group, ""), deref(b.Kind, "Service"); {
		case (g != "" && g != "core") || k != "Service":
			invalid(Unsupported, status.ReasonInvalidKind, ".kind", "backend "+string(k)+" is not a core Service")
		case b.Port == nil:
			invalid(Unsupported, status.ReasonUnsupportedValue, ".port", "a Service backendRef needs a port")
		case ns != r.Namespace && !t.grantedTo(tlsRouteKind, r.Namespace, ns, string(b.Name)):
			invalid(RefNotPermitted, status.ReasonRefNotPermitted, ".namespace",
				"no ReferenceGrant in namespace "+ns+" lets TLSRoutes of "+r.Namespace+" use Service "+string(b.Name))
		default:
			wb.Service = compile.ServiceRef{Namespace: ns, Name: string(b.Name), Port: strconv.Itoa(int(*b.Port))}
			// compile warns, and refuses the share.
			if svc := t.services[nsName{ns, string(b.Name)}]; svc == nil {
				problems = append(problems, status.Problem{Reason: status.ReasonBackendNotFound, Message: field + ": Service " + ns + "/" + string(b.Name) + " not found"})
			} else if svc.Spec.Type == corev1.ServiceTypeExternalName {
				problems = append(problems, externalNameProblem(field, ns, string(b.Name)))
			} else if !hasPort(svc, int32(*b.Port)) {
				problems = append(problems, status.Problem{Reason: status.ReasonBackendNotFound,
					Message: field + ": Service " + ns + "/" + string(b.Name) + " has no port " + strconv.Itoa(int(*b.Port))})
			}
		}
		out = append(out, wb)
	}
	return out, problems
}

// grantedTo reports a ReferenceGrant in toNS letting routes of kind in
// fromNS refer to Service name.
func (t *translator) grantedTo(kind, fromNS, toNS, name string) bool {
	for _, g := range t.objs.ReferenceGrants {
		if g.Namespace != toNS {
			continue
		}
		from := slices.ContainsFunc(g.Spec.From, func(f gwv1.ReferenceGrantFrom) bool {
			return f.Group == Group && string(f.Kind) == kind && string(f.Namespace) == fromNS
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

// translateTLSRoutes turns the TLSRoutes attached to our Gateways into
// compile's passthrough routes, one per listener, and decides their
// status into s, counting each on the listeners it attaches to. Run it
// after decideStatus has indexed Services and before it decides the
// Gateways' listeners.
func (t *translator) translateTLSRoutes(s *Status) {
	for _, gw := range t.sortedGateways() {
		for i := range gw.Spec.Listeners {
			if l := &gw.Spec.Listeners[i]; l.Protocol == gwv1.TLSProtocolType && !passthroughListener(l) {
				t.tlsWarnings = append(t.tlsWarnings, compile.Warning{Reason: Unsupported,
					Object:  compile.Ref{Kind: "Gateway", Namespace: gw.Namespace, Name: gw.Name},
					Field:   "spec.listeners[" + strconv.Itoa(i) + "].tls.mode",
					Message: "tls.mode " + string(tlsMode(l)) + " is not served on a TLS listener (only Passthrough is; HTTPS listeners terminate TLS); the listener is not served"})
			}
		}
	}
	for _, r := range t.sortedTLSRoutes() {
		var backends []compile.WeightedBackend
		var problems []status.Problem
		var unsupported []string
		// The rules are judged, with warnings, once a parentRef names a
		// Gateway of ours: a route of other controllers' Gateways only is
		// not ours to warn about, as an HTTPRoute's is not.
		judged := false
		judge := func() {
			judged = true
			if len(r.Spec.Rules) > 0 {
				backends, problems = t.tlsBackends(r, 0)
			}
			for i := 1; i < len(r.Spec.Rules); i++ {
				f := "spec.rules[" + strconv.Itoa(i) + "]"
				msg := "a TLSRoute rule matches nothing of its own, so the first rule takes every connection; this rule is not served"
				t.warnTLS(Unsupported, r, f, msg)
				unsupported = append(unsupported, f+": "+msg)
			}
		}
		seen := map[listenerKey]bool{}
		key := nsName{r.Namespace, r.Name}
		// lost are hosts another Gateway's listener takes; they warn
		// unless the route is served there through another parentRef.
		type lostHost struct {
			field, host, msg string
			view             match.Listener
		}
		var lost []lostHost
		servedOn := map[match.Listener][]string{}
		type parent struct {
			ref     gwv1.ParentReference
			problem *status.Problem
		}
		var parents []parent
		for i, p := range r.Spec.ParentRefs {
			if deref(p.Group, Group) != Group || deref(p.Kind, "Gateway") != "Gateway" {
				continue
			}
			ns := string(deref(p.Namespace, gwv1.Namespace(r.Namespace)))
			gw := t.gateways[nsName{ns, string(p.Name)}]
			if gw == nil {
				continue // not ours to judge
			}
			if !judged {
				judge()
			}
			atts, problem := t.attachTLS(r, i, gw)
			if problem != nil {
				f := "spec.parentRefs[" + strconv.Itoa(i) + "]"
				if problem.Reason == status.ReasonNoMatchingListenerHostname {
					f = "spec.hostnames"
				}
				t.warnTLS(NotAttached, r, f, strings.TrimPrefix(problem.Message, f+": ")+"; the route is not attached there")
			}
			for _, a := range atts {
				// A host a more specific listener on the port takes is
				// not served here; a route none of whose hosts is served
				// here but for the API's own listener precedence within
				// one Gateway is not counted (as attachFacts does).
				view, lh := viewOf(a.l), string(deref(a.l.Hostname, ""))
				var hs []string
				counted := false
				for _, h := range a.hosts {
					by := t.shadowedBy(view, lh, h)
					if by == nil {
						hs = append(hs, h)
					}
					if by == nil || by.gw == gw {
						counted = true
						continue
					}
					lost = append(lost, lostHost{"spec.parentRefs[" + strconv.Itoa(i) + "]", h, fmt.Sprintf("host %q of listener %s of Gateway %s/%s is taken on port %d by listener %s of Gateway %s/%s, whose hostname %q is more specific: Gateways share the controller's ports, so the route is not served there",
						h, a.l.Name, gw.Namespace, gw.Name, view.Port, by.name, by.gw.Namespace, by.gw.Name, by.hostname), view})
				}
				servedOn[view] = append(servedOn[view], hs...)
				if k := (listenerKey{a.gw, a.l.Name}); counted && !seen[k] {
					seen[k] = true
					t.attached[k]++
				}
				if len(r.Spec.Rules) == 0 || len(hs) == 0 {
					continue
				}
				slices.Sort(hs)
				t.tlsRoutes = append(t.tlsRoutes, &compile.TLSRoute{Namespace: r.Namespace, Name: r.Name, Created: r.CreationTimestamp.Time,
					Listener: view, ListenerHostname: lh, Hostnames: slices.Compact(hs), Field: "spec.rules[0]", Backends: backends})
			}
			parents = append(parents, parent{p, problem})
		}
		for _, x := range lost {
			if !slices.Contains(servedOn[x.view], x.host) {
				t.warnTLS(Unsupported, r, x.field, x.msg)
				unsupported = append(unsupported, x.field+": "+x.msg)
			}
		}
		for _, p := range parents {
			f := status.RouteParentFacts{Generation: r.Generation, RefProblems: problems, Unsupported: unsupported, NotAccepted: p.problem}
			s.tlsRoutes[key] = append(s.tlsRoutes[key], gwv1.RouteParentStatus{
				ParentRef: p.ref, ControllerName: ControllerName, Conditions: status.RouteParentConditions(f)})
		}
	}
}

// servedPassthroughListeners are the hostnames of every TLS passthrough
// listener of our Gateways that is served, by port.
func (t *translator) servedPassthroughListeners() []match.ListenerHost {
	var out []match.ListenerHost
	for _, gw := range t.sortedGateways() {
		for i := range gw.Spec.Listeners {
			l := &gw.Spec.Listeners[i]
			if t.tlsServed(gw, l) {
				out = append(out, match.ListenerHost{Listener: viewOf(l), Hostname: string(deref(l.Hostname, ""))})
			}
		}
	}
	return out
}

// TLSRoute returns a copy of r with the decided status, and true, when
// that differs from r's status; nil and false when it does not. Entries
// of status.parents written by other controllers stay as they are.
func (s *Status) TLSRoute(r *gwv1.TLSRoute, now metav1.Time) (*gwv1.TLSRoute, bool) {
	next, changed := mergeParents(r.Status.Parents, s.tlsRoutes[nsName{r.Namespace, r.Name}], now)
	if !changed {
		return nil, false
	}
	out := r.DeepCopy()
	out.Status.Parents = next
	return out, true
}

// tlsRouteVersions are the TLSRoute versions read, newest first: v1 (the
// standard channel's since v1.5), v1alpha3 and v1alpha2 (the
// experimental channel's before, still served there).
var tlsRouteVersions = []string{gwv1.GroupVersion.Version, gwv1alpha3.GroupVersion.Version, gwv1alpha2.GroupVersion.Version}

// TLSRouteV1 reads a TLSRoute of any version read (*gwv1.TLSRoute,
// *gwv1alpha3.TLSRoute, *gwv1alpha2.TLSRoute) as v1, whose shape they
// share; nil for anything else.
func TLSRouteV1(obj any) *gwv1.TLSRoute {
	switch x := obj.(type) {
	case *gwv1.TLSRoute:
		return x
	case *gwv1alpha3.TLSRoute:
		return (*gwv1.TLSRoute)(x)
	case *gwv1alpha2.TLSRoute:
		out := &gwv1.TLSRoute{TypeMeta: x.TypeMeta, ObjectMeta: x.ObjectMeta, Status: gwv1.TLSRouteStatus(x.Status)}
		out.Spec.CommonRouteSpec, out.Spec.Hostnames = x.Spec.CommonRouteSpec, x.Spec.Hostnames
		for _, r := range x.Spec.Rules {
			out.Spec.Rules = append(out.Spec.Rules, gwv1.TLSRouteRule(r))
		}
		return out
	}
	return nil
}
