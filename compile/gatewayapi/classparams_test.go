package gatewayapi

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"ramjet.dev/ramjet/compile"
)

// TestGatewayClassParametersRefNotServed: ramjet reads no parameters, so
// a GatewayClass whose parametersRef names some is not accepted
// (InvalidParameters, as the API asks of a referent of an unsupported
// kind: GatewayClassSpec.ParametersRef), with a warning naming the field,
// and its Gateways are not served, as a Gateway's own parametersRef is
// not: not accepted, naming the class's field, their routes not attached.
func TestGatewayClassParametersRefNotServed(t *testing.T) {
	cls := classes()
	cls[0].Spec.ParametersRef = &gwv1.ParametersReference{Group: "example.com", Kind: "Config", Name: "c"}
	cls[0].Generation = 3
	gw := gateway("infra", "gw", "ours", listener("http", "", gwv1.NamespacesFromAll))
	rule := gwv1.HTTPRouteRule{BackendRefs: []gwv1.HTTPBackendRef{toService("", "svc", 80)}}
	route := httpRoute("app", "r", []gwv1.ParentReference{{Name: "gw", Namespace: new(gwv1.Namespace("infra"))}}, nil, rule)
	tr := TranslateAll(Objects{GatewayClasses: cls, Gateways: []*gwv1.Gateway{gw}, HTTPRoutes: []*gwv1.HTTPRoute{route}})
	if len(tr.HTTPRoutes) != 0 || len(tr.Listeners) != 0 {
		t.Errorf("served: routes %+v, listeners %+v", tr.HTTPRoutes, tr.Listeners)
	}
	if !slices.ContainsFunc(tr.Warnings, func(w compile.Warning) bool {
		return w.Reason == Unsupported && w.Object.Kind == "GatewayClass" && w.Object.Name == "ours" && w.Field == "spec.parametersRef"
	}) {
		t.Errorf("no warning on the GatewayClass's spec.parametersRef: %v", tr.Warnings)
	}
	now := metav1.Unix(100, 0)
	c, _ := tr.Status.GatewayClass(cls[0], now)
	if c == nil {
		t.Fatal("no GatewayClass status")
	}
	if d := cmp.Diff([]brief{{"Accepted", "False", string(gwv1.GatewayClassReasonInvalidParameters)}}, briefs(c.Status.Conditions)); d != "" {
		t.Errorf("gatewayclass (-want +got):\n%s", d)
	}
	if c.Status.Conditions[0].ObservedGeneration != 3 || !strings.Contains(c.Status.Conditions[0].Message, "spec.parametersRef") {
		t.Errorf("gatewayclass condition %+v", c.Status.Conditions[0])
	}
	g, _ := tr.Status.Gateway(gw, nil, now)
	if g == nil {
		t.Fatal("no Gateway status")
	}
	if d := cmp.Diff([]brief{{"Accepted", "False", string(gwv1.GatewayReasonInvalidParameters)}, {"Programmed", "False", "Invalid"}}, briefs(g.Status.Conditions)); d != "" {
		t.Errorf("gateway (-want +got):\n%s", d)
	}
	if m := g.Status.Conditions[0].Message; !strings.Contains(m, "GatewayClass ours") {
		t.Errorf("gateway Accepted message %q does not name the class", m)
	}
	r, _ := tr.Status.HTTPRoute(route, now)
	if r == nil || r.Status.Parents[0].Conditions[0].Status != metav1.ConditionFalse {
		t.Errorf("route accepted: %+v", r)
	}
	// Another class of ours without parameters is accepted.
	plain := &gwv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: "plain"}, Spec: gwv1.GatewayClassSpec{ControllerName: ControllerName}}
	tr = TranslateAll(Objects{GatewayClasses: []*gwv1.GatewayClass{plain}})
	if c, _ := tr.Status.GatewayClass(plain, now); c == nil || c.Status.Conditions[0].Status != metav1.ConditionTrue {
		t.Errorf("plain class: %+v", c)
	}
}
