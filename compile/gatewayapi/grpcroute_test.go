package gatewayapi

import (
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"ramjet.dev/ramjet/compile"
	"ramjet.dev/ramjet/status"
)

func grpcRoute(ns, name string, created int64, parents []gwv1.ParentReference, hosts []gwv1.Hostname, rules ...gwv1.GRPCRouteRule) *gwv1.GRPCRoute {
	return &gwv1.GRPCRoute{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, CreationTimestamp: metav1.Unix(created, 0), Generation: 3},
		Spec: gwv1.GRPCRouteSpec{CommonRouteSpec: gwv1.CommonRouteSpec{ParentRefs: parents}, Hostnames: hosts, Rules: rules}}
}

func grpcBackend(name string) gwv1.GRPCBackendRef {
	var b gwv1.GRPCBackendRef
	b.Name = gwv1.ObjectName(name)
	b.Port = new(gwv1.PortNumber(80))
	return b
}

// TestGRPCRouteStatus: a GRPCRoute's parent entries say Accepted as an
// HTTPRoute's do, except that a match ramjet cannot read is
// UnsupportedValue (GRPCRoute API), a listener whose allowedRoutes kinds
// leave GRPCRoute out is NotAllowedByListeners, and the younger of an
// HTTPRoute and a GRPCRoute sharing a listener's hostname is not accepted.
func TestGRPCRouteStatus(t *testing.T) {
	parent := []gwv1.ParentReference{{Name: "gw"}}
	httpOnly := listener("http-only", "only.example", gwv1.NamespacesFromSame)
	httpOnly.Port = 8080
	httpOnly.AllowedRoutes.Kinds = []gwv1.RouteGroupKind{{Kind: "HTTPRoute"}}
	gw := gateway("app", "gw", "ours", listener("http", "", gwv1.NamespacesFromSame), httpOnly)
	prefix := gwv1.GRPCHeaderMatchType("Prefix")
	rule := gwv1.GRPCRouteRule{BackendRefs: []gwv1.GRPCBackendRef{grpcBackend("svc")}}
	badRule := rule
	badRule.Matches = []gwv1.GRPCRouteMatch{{Headers: []gwv1.GRPCHeaderMatch{{Type: &prefix, Name: "v", Value: "1"}}}}
	missing := gwv1.GRPCRouteRule{BackendRefs: []gwv1.GRPCBackendRef{grpcBackend("missing")}}
	o := Objects{
		GatewayClasses: classes(),
		Gateways:       []*gwv1.Gateway{gw},
		GRPCRoutes: []*gwv1.GRPCRoute{
			grpcRoute("app", "good", 10, parent, []gwv1.Hostname{"good.example"}, rule, missing),
			grpcRoute("app", "bad-value", 10, parent, []gwv1.Hostname{"bad.example"}, badRule),
			grpcRoute("app", "kind", 10, []gwv1.ParentReference{{Name: "gw", SectionName: new(gwv1.SectionName("http-only"))}}, nil, rule),
			grpcRoute("app", "younger", 20, parent, []gwv1.Hostname{"*.shared.example"}, rule),
			grpcRoute("app", "older", 5, parent, []gwv1.Hostname{"old.example"}, rule),
		},
		HTTPRoutes: []*gwv1.HTTPRoute{
			httpRoute("app", "web", parent, []gwv1.Hostname{"www.shared.example"}, gwv1.HTTPRouteRule{BackendRefs: []gwv1.HTTPBackendRef{toService("", "svc", 80)}}),
			httpRoute("app", "web-younger", parent, []gwv1.Hostname{"old.example"}, gwv1.HTTPRouteRule{BackendRefs: []gwv1.HTTPBackendRef{toService("", "svc", 80)}}),
		},
	}
	o.HTTPRoutes[1].CreationTimestamp = metav1.Unix(30, 0)
	tr := TranslateAll(o)
	now := metav1.Unix(100, 0)
	want := map[string][]brief{
		"good":      {{"Accepted", "True", "Accepted"}, {"ResolvedRefs", "False", status.ReasonBackendNotFound}},
		"bad-value": {{"Accepted", "False", status.ReasonUnsupportedValue}, {"ResolvedRefs", "False", status.ReasonBackendNotFound}},
		"kind":      {{"Accepted", "False", status.ReasonNotAllowedByListeners}, {"ResolvedRefs", "False", status.ReasonBackendNotFound}},
		"younger":   {{"Accepted", "False", string(KindConflict)}, {"ResolvedRefs", "False", status.ReasonBackendNotFound}},
		"older":     {{"Accepted", "True", "Accepted"}, {"ResolvedRefs", "False", status.ReasonBackendNotFound}},
	}
	for _, r := range o.GRPCRoutes {
		got, changed := tr.Status.GRPCRoute(r, now)
		if !changed || len(got.Status.Parents) != 1 {
			t.Fatalf("%s: no status written: %+v", r.Name, got)
		}
		if d := cmp.Diff(want[r.Name], briefs(got.Status.Parents[0].Conditions)); d != "" {
			t.Errorf("%s (-want +got):\n%s", r.Name, d)
		}
		if g := got.Status.Parents[0].Conditions[0].ObservedGeneration; g != 3 {
			t.Errorf("%s: observedGeneration %d", r.Name, g)
		}
		if again, changed := tr.Status.GRPCRoute(got, now); changed {
			t.Errorf("%s: written again: %+v", r.Name, again.Status)
		}
	}
	web, _ := tr.Status.HTTPRoute(o.HTTPRoutes[1], now)
	if d := cmp.Diff([]brief{{"Accepted", "False", string(KindConflict)}, {"ResolvedRefs", "False", status.ReasonBackendNotFound}}, briefs(web.Status.Parents[0].Conditions)); d != "" {
		t.Errorf("web-younger (-want +got):\n%s", d)
	}
	var served []string
	for _, r := range tr.HTTPRoutes {
		served = append(served, r.Kind+" "+r.Name+" "+strconv.Itoa(len(r.Rules)))
	}
	// bad-value is attached, without a rule to serve.
	if d := cmp.Diff([]string{" web 1", compile.GRPCRouteKind + " bad-value 0", compile.GRPCRouteKind + " good 2", compile.GRPCRouteKind + " older 1"}, served); d != "" {
		t.Errorf("routes served (-want +got):\n%s", d)
	}
	g, _ := tr.Status.Gateway(gw, nil, now)
	var kinds [][]string
	for _, l := range g.Status.Listeners {
		var ks []string
		for _, k := range l.SupportedKinds {
			ks = append(ks, string(k.Kind))
		}
		kinds = append(kinds, ks)
	}
	if d := cmp.Diff([][]string{{"HTTPRoute", "GRPCRoute"}, {"HTTPRoute"}}, kinds); d != "" {
		t.Errorf("supportedKinds (-want +got):\n%s", d)
	}
	// Only routes whose Accepted is True count (Gateway API,
	// ListenerStatus.AttachedRoutes): good, older and web, not bad-value,
	// younger and web-younger.
	if n := g.Status.Listeners[0].AttachedRoutes; n != 3 {
		t.Errorf("listener http: %d routes attached, want 3", n)
	}
}

// FuzzGRPCMatch reads any method and header match: no panic, and a match
// it accepts carries what was asked (an Exact name is a gRPC name).
func FuzzGRPCMatch(f *testing.F) {
	f.Add("pkg.Svc", "Get", "Exact", "version", "Exact")
	f.Add("pkg\\..*", "(Get|Put)", "RegularExpression", "v", "RegularExpression")
	f.Add("a/b", "", "Exact", "", "Prefix")
	f.Add("", "", "Other", "x", "")
	f.Fuzz(func(t *testing.T, svc, method, typ, header, headerType string) {
		m := gwv1.GRPCRouteMatch{Method: &gwv1.GRPCMethodMatch{Type: new(gwv1.GRPCMethodMatchType(typ)), Service: &svc, Method: &method},
			Headers: []gwv1.GRPCHeaderMatch{{Name: gwv1.GRPCHeaderName(header), Value: "v", Type: new(gwv1.GRPCHeaderMatchType(headerType))}}}
		cm, why, _ := grpcMatch(m)
		if why != "" {
			return
		}
		if cm.GRPC == nil || cm.GRPC.Service != svc || cm.GRPC.Method != method || len(cm.Headers) != 1 {
			t.Fatalf("accepted as %+v", cm)
		}
		if !cm.GRPC.Regex && (strings.Contains(svc, "/") || strings.Contains(method, "/")) {
			t.Fatalf("an Exact name with a slash accepted: %q %q", svc, method)
		}
	})
}

// TestKindConflictLoserTakesNoOther: of an HTTPRoute and a GRPCRoute whose
// hostnames intersect on a listener the older is accepted; a route that
// conflicts only with one that lost such a conflict is accepted, whatever
// the names' order. Here the GRPCRoute loses to the older HTTPRoute "z-old"
// on old.example, so the younger HTTPRoute "a-new" on new.example, which
// only the GRPCRoute shares, is served.
func TestKindConflictLoserTakesNoOther(t *testing.T) {
	parent := []gwv1.ParentReference{{Name: "gw"}}
	gw := gateway("app", "gw", "ours", listener("http", "", gwv1.NamespacesFromSame))
	be := gwv1.HTTPRouteRule{BackendRefs: []gwv1.HTTPBackendRef{toService("", "svc", 80)}}
	o := Objects{
		GatewayClasses: classes(),
		Gateways:       []*gwv1.Gateway{gw},
		GRPCRoutes: []*gwv1.GRPCRoute{grpcRoute("app", "calls", 20, parent, []gwv1.Hostname{"new.example", "old.example"},
			gwv1.GRPCRouteRule{BackendRefs: []gwv1.GRPCBackendRef{grpcBackend("svc")}})},
		HTTPRoutes: []*gwv1.HTTPRoute{
			httpRoute("app", "z-old", parent, []gwv1.Hostname{"old.example"}, be),
			httpRoute("app", "a-new", parent, []gwv1.Hostname{"new.example"}, be),
		},
	}
	o.HTTPRoutes[0].CreationTimestamp = metav1.Unix(10, 0)
	o.HTTPRoutes[1].CreationTimestamp = metav1.Unix(30, 0)
	tr := TranslateAll(o)
	var served []string
	for _, r := range tr.HTTPRoutes {
		served = append(served, r.Kind+" "+r.Name)
	}
	if d := cmp.Diff([]string{" a-new", " z-old"}, served); d != "" {
		t.Errorf("routes served (-want +got):\n%s", d)
	}
	now := metav1.Unix(100, 0)
	for _, r := range o.HTTPRoutes {
		got, _ := tr.Status.HTTPRoute(r, now)
		if d := cmp.Diff(brief{"Accepted", "True", "Accepted"}, briefs(got.Status.Parents[0].Conditions)[0]); d != "" {
			t.Errorf("%s (-want +got):\n%s", r.Name, d)
		}
	}
	g, _ := tr.Status.GRPCRoute(o.GRPCRoutes[0], now)
	if d := cmp.Diff(brief{"Accepted", "False", string(KindConflict)}, briefs(g.Status.Parents[0].Conditions)[0]); d != "" {
		t.Errorf("calls (-want +got):\n%s", d)
	}
}

// TestGRPCRouteRefNotPermittedMessage: the ResolvedRefs message of a
// GRPCRoute's cross-namespace backendRef without a ReferenceGrant names
// the kind a grant must let in: GRPCRoutes.
func TestGRPCRouteRefNotPermittedMessage(t *testing.T) {
	gw := gateway("app", "gw", "ours", listener("http", "", gwv1.NamespacesFromSame))
	b := grpcBackend("svc")
	b.Namespace = new(gwv1.Namespace("other"))
	r := grpcRoute("app", "calls", 10, []gwv1.ParentReference{{Name: "gw"}}, nil, gwv1.GRPCRouteRule{BackendRefs: []gwv1.GRPCBackendRef{b}})
	tr := TranslateAll(Objects{GatewayClasses: classes(), Gateways: []*gwv1.Gateway{gw}, GRPCRoutes: []*gwv1.GRPCRoute{r}})
	got, _ := tr.Status.GRPCRoute(r, metav1.Unix(1, 0))
	c := got.Status.Parents[0].Conditions[1]
	if want := "spec.rules[0].backendRefs[0]: no ReferenceGrant in namespace other lets GRPCRoutes of app use Service svc"; c.Reason != status.ReasonRefNotPermitted || c.Message != want {
		t.Errorf("ResolvedRefs %s %q, want %s %q", c.Reason, c.Message, status.ReasonRefNotPermitted, want)
	}
}

// TestGRPCRouteRefusedRules: a GRPCRoute rule compile refuses (a header
// name that is not a token) is not served, as an HTTPRoute's: beside a served rule
// the route is PartiallyInvalid, alone it is Accepted False.
func TestGRPCRouteRefusedRules(t *testing.T) {
	gw := gateway("app", "gw", "ours", listener("http", "", gwv1.NamespacesFromSame))
	parent := []gwv1.ParentReference{{Name: "gw"}}
	good := gwv1.GRPCRouteRule{BackendRefs: []gwv1.GRPCBackendRef{grpcBackend("svc")}}
	dollar := gwv1.GRPCRouteRule{Matches: []gwv1.GRPCRouteMatch{{Method: &gwv1.GRPCMethodMatch{Service: new("pkg.S")}}},
		Filters: []gwv1.GRPCRouteFilter{{Type: gwv1.GRPCRouteFilterRequestHeaderModifier,
			RequestHeaderModifier: &gwv1.HTTPHeaderFilter{Set: []gwv1.HTTPHeader{{Name: "x a", Value: "b"}}}}},
		BackendRefs: []gwv1.GRPCBackendRef{grpcBackend("svc")}}
	routes := []*gwv1.GRPCRoute{grpcRoute("app", "partly", 10, parent, nil, good, dollar), grpcRoute("app", "dollar", 10, parent, nil, dollar)}
	tr := TranslateAll(Objects{GatewayClasses: classes(), Gateways: []*gwv1.Gateway{gw}, GRPCRoutes: routes})
	want := map[string][]brief{
		"partly": {{"Accepted", "True", status.ReasonAccepted}, {"ResolvedRefs", "False", status.ReasonBackendNotFound}, {"PartiallyInvalid", "True", status.ReasonUnsupportedValue}},
		"dollar": {{"Accepted", "False", status.ReasonUnsupportedValue}, {"ResolvedRefs", "False", status.ReasonBackendNotFound}},
	}
	for _, r := range routes {
		got, _ := tr.Status.GRPCRoute(r, metav1.Unix(1, 0))
		if d := cmp.Diff(want[r.Name], briefs(got.Status.Parents[0].Conditions)); d != "" {
			t.Errorf("%s (-want +got):\n%s", r.Name, d)
		}
	}
}

// TestGRPCRouteUnservedFilterRules: a GRPCRoute rule with a filter the
// translation does not serve (ExtensionRef, one type twice) answers an
// error, as an HTTPRoute's, so it is a dropped rule: beside a served rule
// the route is PartiallyInvalid naming it (listed once in the Accepted
// message), alone it is Accepted False.
func TestGRPCRouteUnservedFilterRules(t *testing.T) {
	gw := gateway("app", "gw", "ours", listener("http", "", gwv1.NamespacesFromSame))
	parent := []gwv1.ParentReference{{Name: "gw"}}
	good := gwv1.GRPCRouteRule{BackendRefs: []gwv1.GRPCBackendRef{grpcBackend("svc")}}
	header := gwv1.GRPCRouteFilter{Type: gwv1.GRPCRouteFilterRequestHeaderModifier, RequestHeaderModifier: &gwv1.HTTPHeaderFilter{Set: []gwv1.HTTPHeader{{Name: "x-a", Value: "b"}}}}
	twice := gwv1.GRPCRouteRule{Matches: []gwv1.GRPCRouteMatch{{Method: &gwv1.GRPCMethodMatch{Service: new("pkg.S")}}},
		Filters: []gwv1.GRPCRouteFilter{header, header}, BackendRefs: []gwv1.GRPCBackendRef{grpcBackend("svc")}}
	extRef := gwv1.GRPCRouteRule{Filters: []gwv1.GRPCRouteFilter{{Type: gwv1.GRPCRouteFilterExtensionRef,
		ExtensionRef: &gwv1.LocalObjectReference{Group: "example.com", Kind: "Auth", Name: "a"}}}, BackendRefs: []gwv1.GRPCBackendRef{grpcBackend("svc")}}
	routes := []*gwv1.GRPCRoute{grpcRoute("app", "partly", 10, parent, nil, good, twice), grpcRoute("app", "ext-ref", 10, parent, nil, extRef)}
	tr := TranslateAll(Objects{GatewayClasses: classes(), Gateways: []*gwv1.Gateway{gw}, GRPCRoutes: routes})
	want := map[string][]brief{
		"partly":  {{"Accepted", "True", status.ReasonAccepted}, {"ResolvedRefs", "False", status.ReasonBackendNotFound}, {"PartiallyInvalid", "True", status.ReasonUnsupportedValue}},
		"ext-ref": {{"Accepted", "False", status.ReasonUnsupportedValue}, {"ResolvedRefs", "False", status.ReasonBackendNotFound}},
	}
	for _, r := range routes {
		got, _ := tr.Status.GRPCRoute(r, metav1.Unix(1, 0))
		cs := got.Status.Parents[0].Conditions
		if d := cmp.Diff(want[r.Name], briefs(cs)); d != "" {
			t.Errorf("%s (-want +got):\n%s", r.Name, d)
			continue
		}
		rule, dropped := "spec.rules[1]", cs[len(cs)-1].Message
		if r.Name == "ext-ref" {
			rule, dropped = "spec.rules[0]", cs[0].Message
		}
		if !strings.Contains(dropped, rule+" (") {
			t.Errorf("%s: message %q does not name the dropped rule %s", r.Name, dropped, rule)
		}
		if n := strings.Count(cs[0].Message, rule+".filters["); n != 1 {
			t.Errorf("%s: Accepted message %q names the filter %d times, want once", r.Name, cs[0].Message, n)
		}
	}
}

// TestGRPCRouteMirrorServed: a GRPCRoute's RequestMirror, on the rule and
// on a backendRef, is served as an HTTPRoute's is (the router feeds the
// call's body to the copy as it streams): the rule and the backend carry
// their mirrors with their shares, no warning names them, and the route's
// Accepted condition does not say a filter is not served.
func TestGRPCRouteMirrorServed(t *testing.T) {
	gw := gateway("app", "gw", "ours", listener("http", "", gwv1.NamespacesFromSame))
	mirror := gwv1.GRPCRouteFilter{Type: gwv1.GRPCRouteFilterRequestMirror, RequestMirror: &gwv1.HTTPRequestMirrorFilter{
		BackendRef: gwv1.BackendObjectReference{Name: "copy", Port: new(gwv1.PortNumber(80))}, Percent: new(int32(25))}}
	be := grpcBackend("svc")
	be.Filters = []gwv1.GRPCRouteFilter{mirror}
	r := grpcRoute("app", "calls", 10, []gwv1.ParentReference{{Name: "gw"}}, nil,
		gwv1.GRPCRouteRule{Filters: []gwv1.GRPCRouteFilter{mirror}, BackendRefs: []gwv1.GRPCBackendRef{be}})
	tr := TranslateAll(Objects{GatewayClasses: classes(), Gateways: []*gwv1.Gateway{gw}, GRPCRoutes: []*gwv1.GRPCRoute{r}})
	for _, w := range tr.Warnings {
		if strings.Contains(w.Field, "filters[0]") {
			t.Errorf("warning on the mirror: %+v", w)
		}
	}
	if len(tr.HTTPRoutes) != 1 || len(tr.HTTPRoutes[0].Rules) != 1 {
		t.Fatalf("routes %+v", tr.HTTPRoutes)
	}
	want := compile.RequestMirror{Service: compile.ServiceRef{Namespace: "app", Name: "copy", Port: "80"}, Numerator: 25, Denominator: 100}
	rule := tr.HTTPRoutes[0].Rules[0]
	if rule.Refused != nil || len(rule.Mirrors) != 1 || len(rule.Backends) != 1 || len(rule.Backends[0].Mirrors) != 1 {
		t.Fatalf("rule %+v: want its mirror and its backend's", rule)
	}
	want.Field = "spec.rules[0].filters[0]"
	if rule.Mirrors[0] != want {
		t.Errorf("rule mirror %+v, want %+v", rule.Mirrors[0], want)
	}
	want.Field = "spec.rules[0].backendRefs[0].filters[0]"
	if got := rule.Backends[0].Mirrors[0]; got != want {
		t.Errorf("backend mirror %+v, want %+v", got, want)
	}
	got, _ := tr.Status.GRPCRoute(r, metav1.Unix(1, 0))
	if c := got.Status.Parents[0].Conditions[0]; c.Status != metav1.ConditionTrue || strings.Contains(c.Message, "filters[0]") {
		t.Errorf("Accepted %s %q: want True, naming no filter", c.Status, c.Message)
	}
}
