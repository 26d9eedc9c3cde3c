package gatewayapi

import (
	"cmp"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"ramjet.dev/ramjet/compile"
	"ramjet.dev/ramjet/status"
)

// GRPCRoute returns a copy of r with the decided status, and true, when
// that differs from r's status; nil and false when it does not. As for
// HTTPRoute, entries of other controllers stay as they are.
func (s *Status) GRPCRoute(r *gwv1.GRPCRoute, now metav1.Time) (*gwv1.GRPCRoute, bool) {
	next, changed := mergeParents(r.Status.Parents, s.grpcRoutes[nsName{r.Namespace, r.Name}], now)
	if !changed {
		return nil, false
	}
	out := r.DeepCopy()
	out.Status.Parents = next
	return out, true
}

// kindConflictProblems are the routes of kind that lost a KindConflict,
// as the reason they are not accepted.
func kindConflictProblems(warnings []compile.Warning, kind string) map[nsName]*status.Problem {
	out := map[nsName]*status.Problem{}
	for _, w := range warnings {
		if w.Reason == KindConflict && w.Object.Kind == kind {
			k := nsName{w.Object.Namespace, w.Object.Name}
			if out[k] == nil {
				out[k] = &status.Problem{Reason: string(KindConflict), Message: w.Field + ": " + w.Message}
			}
		}
	}
	return out
}

// decideGRPCStatus decides each GRPCRoute's parent entries as decideStatus
// does an HTTPRoute's, counting it on the listeners it attaches to. A
// match ramjet cannot read (an unknown type, a name that is not a gRPC
// name, a pattern that does not compile) makes the route not accepted
// with reason UnsupportedValue, as the GRPCRoute API asks; rules compile
// refuses are not served (refusedRules), as an HTTPRoute's.
func (t *translator) decideGRPCStatus(s *Status, warnings []compile.Warning, routes []*compile.HTTPRoute) {
	t.kind = GRPCRouteKind
	defer func() { t.kind = "" }()
	unsupported := map[nsName][]string{}
	refusing := refusingWarnings(routes)
	for _, w := range warnings {
		if w.Reason == Unsupported && w.Object.Kind == GRPCRouteKind && !refusing[w] {
			k := nsName{w.Object.Namespace, w.Object.Name}
			unsupported[k] = append(unsupported[k], w.Field+": "+w.Message)
		}
	}
	conflicts := kindConflictProblems(warnings, GRPCRouteKind)
	dropped, backends, noneServed := refusedRules(routes, GRPCRouteKind)
	for _, m := range []map[nsName][]string{dropped, backends} {
		for k, msgs := range m {
			unsupported[k] = append(unsupported[k], msgs...)
		}
	}
	for _, g := range t.objs.GRPCRoutes {
		shell := asHTTPRoute(g)
		k := nsName{g.Namespace, g.Name}
		badValue := grpcValueProblem(g)
		var refs []status.Problem
		refsDone := false
		seen := map[listenerKey]bool{}
		for i, p := range g.Spec.ParentRefs {
			if deref(p.Group, Group) != Group || deref(p.Kind, "Gateway") != "Gateway" {
				continue
			}
			gw := t.gateways[nsName{string(deref(p.Namespace, gwv1.Namespace(g.Namespace))), string(p.Name)}]
			if gw == nil {
				continue
			}
			if !refsDone {
				refs, refsDone = t.grpcBackendProblems(g), true
			}
			notAccepted := t.attachFacts(shell, i, gw, seen, cmp.Or(badValue, conflicts[k], noneServed[k]), noneServed[k] != nil)
			f := status.RouteParentFacts{Generation: g.Generation, RefProblems: refs, Unsupported: unsupported[k], DroppedRules: dropped[k], NotAccepted: notAccepted}
			s.grpcRoutes[k] = append(s.grpcRoutes[k], gwv1.RouteParentStatus{
				ParentRef: p, ControllerName: ControllerName, Conditions: status.RouteParentConditions(f)})
		}
	}
}

// grpcValueProblem is the first match of g that grpcMatch refuses, as
// UnsupportedValue; nil when every match is read.
func grpcValueProblem(g *gwv1.GRPCRoute) *status.Problem {
	var msgs []string
	for i, r := range g.Spec.Rules {
		for j, m := range r.Matches {
			if _, why, at := grpcMatch(m); why != "" {
				msgs = append(msgs, fmt.Sprintf("spec.rules[%d].matches[%d]%s: %s", i, j, at, why))
			}
		}
	}
	if len(msgs) == 0 {
		return nil
	}
	return &status.Problem{Reason: status.ReasonUnsupportedValue, Message: strings.Join(msgs, "; ")}
}

// grpcBackendProblems is backendProblems for a GRPCRoute: its backendRefs
// and mirror backends that do not resolve.
func (t *translator) grpcBackendProblems(g *gwv1.GRPCRoute) []status.Problem {
	shell := asHTTPRoute(g)
	for _, r := range g.Spec.Rules {
		hr := gwv1.HTTPRouteRule{}
		for _, b := range r.BackendRefs {
			hr.BackendRefs = append(hr.BackendRefs, gwv1.HTTPBackendRef{BackendRef: b.BackendRef})
		}
		for _, f := range r.Filters {
			// Kept in place, so that field indexes stay the GRPCRoute's.
			hf := gwv1.HTTPRouteFilter{Type: gwv1.HTTPRouteFilterType(f.Type)}
			if f.Type == gwv1.GRPCRouteFilterRequestMirror {
				hf.RequestMirror = f.RequestMirror
			}
			hr.Filters = append(hr.Filters, hf)
		}
		shell.Spec.Rules = append(shell.Spec.Rules, hr)
	}
	return t.backendProblems(shell, false)
}
