package gatewayapi

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"ramjet.dev/ramjet/compile"
	"ramjet.dev/ramjet/match"
)

// TestTranslateConditionsMirrorsTimeouts: header and query matches of
// both types and the method become the match's conditions, an unknown
// type refuses the match; RequestMirror filters become mirrors with their
// share; timeouts parse, a bad one refusing the rule.
func TestTranslateConditionsMirrorsTimeouts(t *testing.T) {
	gw := gateway("app", "gw", "ours", listener("http", "", gwv1.NamespacesFromSame))
	regexH, regexQ := gwv1.HeaderMatchRegularExpression, gwv1.QueryParamMatchRegularExpression
	odd := gwv1.HeaderMatchType("Prefix")
	mirror := func(name string, percent *int32, fr *gwv1.Fraction) gwv1.HTTPRouteFilter {
		ref := gwv1.BackendObjectReference{Name: gwv1.ObjectName(name), Port: new(gwv1.PortNumber(80))}
		return gwv1.HTTPRouteFilter{Type: gwv1.HTTPRouteFilterRequestMirror,
			RequestMirror: &gwv1.HTTPRequestMirrorFilter{BackendRef: ref, Percent: percent, Fraction: fr}}
	}
	be := []gwv1.HTTPBackendRef{toService("", "a", 80)}
	route := httpRoute("app", "r", []gwv1.ParentReference{{Name: "gw"}}, nil,
		gwv1.HTTPRouteRule{
			Matches: []gwv1.HTTPRouteMatch{
				{Method: new(gwv1.HTTPMethodPost),
					Headers:     []gwv1.HTTPHeaderMatch{{Name: "Version", Value: "2"}, {Type: &regexH, Name: "color", Value: "^(red|blue)$"}},
					QueryParams: []gwv1.HTTPQueryParamMatch{{Name: "q", Value: "x"}, {Type: &regexQ, Name: "p", Value: "[0-9]+"}}},
				{Headers: []gwv1.HTTPHeaderMatch{{Type: &odd, Name: "x", Value: "y"}}},
			},
			Filters: []gwv1.HTTPRouteFilter{mirror("m1", nil, nil), mirror("m2", new(int32(20)), nil),
				mirror("m3", nil, &gwv1.Fraction{Numerator: 1})},
			Timeouts:    &gwv1.HTTPRouteTimeouts{Request: new(gwv1.Duration("1s")), BackendRequest: new(gwv1.Duration("500ms"))},
			BackendRefs: be,
		},
		gwv1.HTTPRouteRule{Timeouts: &gwv1.HTTPRouteTimeouts{Request: new(gwv1.Duration("soon"))}, BackendRefs: be},
	)
	routes, ws := Translate(Objects{GatewayClasses: classes(), Gateways: []*gwv1.Gateway{gw}, HTTPRoutes: []*gwv1.HTTPRoute{route}})
	if len(routes) != 1 || len(routes[0].Rules) != 1 {
		t.Fatalf("routes %+v", routes)
	}
	rule := routes[0].Rules[0]
	wantMatches := []compile.HTTPRouteMatch{{Field: "spec.rules[0].matches[0]", Type: match.Prefix, Path: "/", Method: "POST",
		Headers:     []match.ValueMatch{{Name: "Version", Value: "2"}, {Name: "color", Value: "^(red|blue)$", Regex: true}},
		QueryParams: []match.ValueMatch{{Name: "q", Value: "x"}, {Name: "p", Value: "[0-9]+", Regex: true}}}}
	if diff := cmp.Diff(wantMatches, rule.Matches, cmp.AllowUnexported(match.ValueMatch{})); diff != "" {
		t.Error(diff)
	}
	svc := func(name string) compile.ServiceRef {
		return compile.ServiceRef{Namespace: "app", Name: name, Port: "80"}
	}
	wantMirrors := []compile.RequestMirror{
		{Field: "spec.rules[0].filters[0]", Service: svc("m1")},
		{Field: "spec.rules[0].filters[1]", Service: svc("m2"), Numerator: 20, Denominator: 100},
		{Field: "spec.rules[0].filters[2]", Service: svc("m3"), Numerator: 1, Denominator: 100},
	}
	if diff := cmp.Diff(wantMirrors, rule.Mirrors); diff != "" {
		t.Error(diff)
	}
	if rule.RequestTimeout != time.Second || rule.BackendRequestTimeout != 500*time.Millisecond {
		t.Errorf("timeouts %v %v", rule.RequestTimeout, rule.BackendRequestTimeout)
	}
	var got []string
	for _, w := range ws {
		got = append(got, string(w.Reason)+" "+w.Field)
	}
	want := []string{
		"GatewayFeatureUnsupported spec.rules[0].matches[1].headers[0].type",
		"GatewayFeatureUnsupported spec.rules[1].timeouts.request",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Error(diff)
	}
}
