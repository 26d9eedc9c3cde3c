package gatewayapi

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"ramjet.dev/ramjet/compile"
	"ramjet.dev/ramjet/match"
)

func gateway(ns, name, class string, ls ...gwv1.Listener) *gwv1.Gateway {
	return &gwv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: gwv1.GatewaySpec{GatewayClassName: gwv1.ObjectName(class), Listeners: ls}}
}

func listener(name string, host string, from gwv1.FromNamespaces) gwv1.Listener {
	l := gwv1.Listener{Name: gwv1.SectionName(name), Port: 80, Protocol: gwv1.HTTPProtocolType,
		AllowedRoutes: &gwv1.AllowedRoutes{Namespaces: &gwv1.RouteNamespaces{From: &from}}}
	if host != "" {
		l.Hostname = new(gwv1.Hostname(host))
	}
	return l
}

func httpRoute(ns, name string, parents []gwv1.ParentReference, hosts []gwv1.Hostname, rules ...gwv1.HTTPRouteRule) *gwv1.HTTPRoute {
	return &gwv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, CreationTimestamp: metav1.Unix(7, 0)},
		Spec: gwv1.HTTPRouteSpec{CommonRouteSpec: gwv1.CommonRouteSpec{ParentRefs: parents}, Hostnames: hosts, Rules: rules}}
}

func toService(ns, name string, port int32) gwv1.HTTPBackendRef {
	r := gwv1.HTTPBackendRef{}
	r.Name = gwv1.ObjectName(name)
	r.Port = new(gwv1.PortNumber(port))
	if ns != "" {
		r.Namespace = new(gwv1.Namespace(ns))
	}
	return r
}

func classes() []*gwv1.GatewayClass {
	return []*gwv1.GatewayClass{
		{ObjectMeta: metav1.ObjectMeta{Name: "ours"}, Spec: gwv1.GatewayClassSpec{ControllerName: ControllerName}},
		{ObjectMeta: metav1.ObjectMeta{Name: "theirs"}, Spec: gwv1.GatewayClassSpec{ControllerName: "example.com/other"}},
	}
}

// TestTranslateHostnames: a route's hosts are the intersection of its
// hostnames with each attached listener's (Gateway API, HTTPRoute
// spec.hostnames), per sectionName.
func TestTranslateHostnames(t *testing.T) {
	gw := gateway("infra", "gw", "ours",
		listener("any", "", gwv1.NamespacesFromAll),
		listener("wild", "*.example.com", gwv1.NamespacesFromAll),
		listener("exact", "shop.example.com", gwv1.NamespacesFromAll))
	parent := func(section string) []gwv1.ParentReference {
		p := gwv1.ParentReference{Name: "gw", Namespace: new(gwv1.Namespace("infra"))}
		if section != "" {
			p.SectionName = new(gwv1.SectionName(section))
		}
		return []gwv1.ParentReference{p}
	}
	rule := gwv1.HTTPRouteRule{BackendRefs: []gwv1.HTTPBackendRef{toService("", "svc", 80)}}
	for _, tt := range []struct {
		name    string
		section string
		hosts   []gwv1.Hostname
		want    []string
	}{
		{"no hostnames anywhere: catch-all", "any", nil, []string{""}},
		{"route hostnames on a hostless listener", "any", []gwv1.Hostname{"a.test", "*.b.test"}, []string{"*.b.test", "a.test"}},
		{"listener wildcard narrows to the route's name", "wild", []gwv1.Hostname{"a.example.com", "other.test"}, []string{"a.example.com"}},
		// shop.example.com's requests go to the listener of that name,
		// the most specific, whose routes do not include this one.
		{"a more specific listener takes a name", "wild", []gwv1.Hostname{"shop.example.com", "a.example.com"}, []string{"a.example.com"}},
		{"a more specific listener takes a name from the hostless", "any", []gwv1.Hostname{"shop.example.com", "x.test"}, []string{"x.test"}},
		{"route wildcard narrows to the listener's name", "exact", []gwv1.Hostname{"*.example.com"}, []string{"shop.example.com"}},
		{"route without hostnames takes the listener's", "wild", nil, []string{"*.example.com"}},
		{"every listener: the union", "", []gwv1.Hostname{"shop.example.com"}, []string{"shop.example.com"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			routes, ws := Translate(Objects{GatewayClasses: classes(), Gateways: []*gwv1.Gateway{gw},
				HTTPRoutes: []*gwv1.HTTPRoute{httpRoute("app", "r", parent(tt.section), tt.hosts, rule)}})
			if len(ws) != 0 || len(routes) != 1 {
				t.Fatalf("routes %v, warnings %v", routes, ws)
			}
			if diff := cmp.Diff(tt.want, routes[0].Hostnames); diff != "" {
				t.Error(diff)
			}
		})
	}
	routes, ws := Translate(Objects{GatewayClasses: classes(), Gateways: []*gwv1.Gateway{gw},
		HTTPRoutes: []*gwv1.HTTPRoute{httpRoute("app", "r", parent("exact"), []gwv1.Hostname{"other.test"}, rule)}})
	if len(routes) != 0 || len(ws) != 1 || ws[0].Field != "spec.hostnames" || ws[0].Reason != NotAttached {
		t.Errorf("disjoint hostnames: routes %v, warnings %v", routes, ws)
	}
}

// TestTranslateAttachment: only Gateways of our class count; allowedRoutes
// Same, All and Selector decide by the route's namespace and its labels.
func TestTranslateAttachment(t *testing.T) {
	sel := listener("sel", "", gwv1.NamespacesFromSelector)
	sel.AllowedRoutes.Namespaces.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"team": "shop"}}
	// The API server labels every Namespace with its name; one read from
	// a file, or not read at all, has that label all the same.
	byName := listener("byname", "", gwv1.NamespacesFromSelector)
	byName.AllowedRoutes.Namespaces.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
		{Key: corev1.LabelMetadataName, Operator: metav1.LabelSelectorOpIn, Values: []string{"shop", "undeclared"}}}}
	objs := Objects{
		GatewayClasses: classes(),
		Gateways: []*gwv1.Gateway{
			gateway("infra", "same", "ours", listener("http", "", gwv1.NamespacesFromSame)),
			gateway("infra", "sel", "ours", sel),
			gateway("infra", "byname", "ours", byName),
			gateway("infra", "other", "theirs", listener("http", "", gwv1.NamespacesFromAll)),
		},
		Namespaces: []*corev1.Namespace{ns("shop", "team", "shop"), ns("blog", "team", "blog")},
	}
	rule := gwv1.HTTPRouteRule{BackendRefs: []gwv1.HTTPBackendRef{toService("", "svc", 80)}}
	for _, tt := range []struct {
		ns, gw   string
		attached bool
		warns    int
	}{
		{"infra", "same", true, 0},
		{"shop", "same", false, 1},
		{"shop", "sel", true, 0},
		{"blog", "sel", false, 1},
		{"shop", "byname", true, 0},
		{"undeclared", "byname", true, 0},
		{"blog", "byname", false, 1},
		{"infra", "other", false, 0}, // another controller's Gateway: not ours to warn about
	} {
		o := objs
		o.HTTPRoutes = []*gwv1.HTTPRoute{httpRoute(tt.ns, "r", []gwv1.ParentReference{{Name: gwv1.ObjectName(tt.gw), Namespace: new(gwv1.Namespace("infra"))}}, nil, rule)}
		routes, ws := Translate(o)
		if (len(routes) == 1) != tt.attached || len(ws) != tt.warns {
			t.Errorf("route in %s on %s: routes %v, warnings %v", tt.ns, tt.gw, routes, ws)
		}
	}
}

// TestTranslateRules: matches, weights and refusals become compile's
// input field by field, each refusal warning on its field.
func TestTranslateRules(t *testing.T) {
	gw := gateway("app", "gw", "ours", listener("http", "", gwv1.NamespacesFromSame))
	parents := []gwv1.ParentReference{{Name: "gw"}}
	exact, regex := gwv1.PathMatchExact, gwv1.PathMatchRegularExpression
	weighted := toService("", "b", 8080)
	weighted.Weight = new(int32(0))
	route := httpRoute("app", "r", parents, nil,
		gwv1.HTTPRouteRule{
			Matches: []gwv1.HTTPRouteMatch{
				{Path: &gwv1.HTTPPathMatch{Type: &exact, Value: new("/one")}},
				{Path: &gwv1.HTTPPathMatch{Type: &regex, Value: new("/i/[0-9]+")}},
				{Method: new(gwv1.HTTPMethodGet)},
			},
			BackendRefs: []gwv1.HTTPBackendRef{toService("", "a", 80), weighted, toService("other", "c", 80)},
		},
		gwv1.HTTPRouteRule{
			Filters:     []gwv1.HTTPRouteFilter{{Type: gwv1.HTTPRouteFilterRequestRedirect}},
			BackendRefs: []gwv1.HTTPBackendRef{toService("", "a", 80)},
		},
		gwv1.HTTPRouteRule{BackendRefs: []gwv1.HTTPBackendRef{toService("granted", "g", 80)}},
	)
	grant := &gwv1.ReferenceGrant{ObjectMeta: metav1.ObjectMeta{Namespace: "granted", Name: "g"},
		Spec: gwv1.ReferenceGrantSpec{
			From: []gwv1.ReferenceGrantFrom{{Group: Group, Kind: "HTTPRoute", Namespace: "app"}},
			To:   []gwv1.ReferenceGrantTo{{Kind: "Service", Name: new(gwv1.ObjectName("g"))}},
		}}
	routes, ws := Translate(Objects{GatewayClasses: classes(), Gateways: []*gwv1.Gateway{gw}, HTTPRoutes: []*gwv1.HTTPRoute{route}, ReferenceGrants: []*gwv1.ReferenceGrant{grant}})
	want := []*compile.HTTPRoute{{
		Namespace: "app", Name: "r", Created: time.Unix(7, 0), Hostnames: []string{""},
		Rules: []compile.HTTPRouteRule{
			{Field: "spec.rules[0]",
				Matches: []compile.HTTPRouteMatch{
					{Field: "spec.rules[0].matches[0]", Type: match.Exact, Path: "/one"},
					{Field: "spec.rules[0].matches[1]", Type: match.Regex, Path: "/i/[0-9]+"},
					{Field: "spec.rules[0].matches[2]", Type: match.Prefix, Path: "/", Method: "GET"},
				},
				Backends: []compile.WeightedBackend{
					{Service: compile.ServiceRef{Namespace: "app", Name: "a", Port: "80"}, Weight: 1, Field: "spec.rules[0].backendRefs[0]"},
					{Service: compile.ServiceRef{Namespace: "app", Name: "b", Port: "8080"}, Weight: 0, Field: "spec.rules[0].backendRefs[1]"},
					// invalid: its share answers 500
					{Weight: 1, Field: "spec.rules[0].backendRefs[2]", Invalid: "no ReferenceGrant in namespace other lets HTTPRoutes of app use Service c"},
				}},
			// a filter without its settings is not skipped: the rule's
			// requests answer 500
			{Field: "spec.rules[1]",
				Matches: []compile.HTTPRouteMatch{{Field: "spec.rules[1]", Type: match.Prefix, Path: "/"}},
				Refused: &compile.Warning{Reason: Unsupported, Object: compile.Ref{Kind: "HTTPRoute", Namespace: "app", Name: "r"}, Field: "spec.rules[1].filters[0]",
					Message: "filter RequestRedirect is not served here (or given twice, or without its settings); the rule's requests answer 500"}},
			{Field: "spec.rules[2]",
				Matches:  []compile.HTTPRouteMatch{{Field: "spec.rules[2]", Type: match.Prefix, Path: "/"}},
				Backends: []compile.WeightedBackend{{Service: compile.ServiceRef{Namespace: "granted", Name: "g", Port: "80"}, Weight: 1, Field: "spec.rules[2].backendRefs[0]"}}},
		},
		Listener: match.Listener{Port: 80},
	}}
	if diff := cmp.Diff(want, routes); diff != "" {
		t.Error(diff)
	}
	var got []string
	for _, w := range ws {
		got = append(got, string(w.Reason)+" "+w.Field)
	}
	wantWarn := []string{
		"RefNotPermitted spec.rules[0].backendRefs[2].namespace",
		"GatewayFeatureUnsupported spec.rules[1].filters[0]",
	}
	if diff := cmp.Diff(wantWarn, got); diff != "" {
		t.Error(diff)
	}
}

func ns(name string, kv ...string) *corev1.Namespace {
	n := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{}}}
	for i := 0; i+1 < len(kv); i += 2 {
		n.Labels[kv[i]] = kv[i+1]
	}
	return n
}

// TestTranslateURLRewrite: URLRewrite's hostname and path modifiers map to
// compile.URLRewrite; a filter without its settings makes the rule answer
// 500.
func TestTranslateURLRewrite(t *testing.T) {
	gw := gateway("app", "gw", "ours", listener("http", "", gwv1.NamespacesFromSame))
	rw := func(host string, p *gwv1.HTTPPathModifier) gwv1.HTTPRouteFilter {
		f := gwv1.HTTPRouteFilter{Type: gwv1.HTTPRouteFilterURLRewrite, URLRewrite: &gwv1.HTTPURLRewriteFilter{Path: p}}
		if host != "" {
			f.URLRewrite.Hostname = new(gwv1.PreciseHostname(host))
		}
		return f
	}
	be := []gwv1.HTTPBackendRef{toService("", "a", 80)}
	route := httpRoute("app", "r", []gwv1.ParentReference{{Name: "gw"}}, nil,
		gwv1.HTTPRouteRule{Filters: []gwv1.HTTPRouteFilter{rw("b.test", &gwv1.HTTPPathModifier{Type: gwv1.PrefixMatchHTTPPathModifier, ReplacePrefixMatch: new("/x")})}, BackendRefs: be},
		gwv1.HTTPRouteRule{Filters: []gwv1.HTTPRouteFilter{rw("", &gwv1.HTTPPathModifier{Type: gwv1.FullPathHTTPPathModifier, ReplaceFullPath: new("/y")})}, BackendRefs: be},
		gwv1.HTTPRouteRule{Filters: []gwv1.HTTPRouteFilter{rw("c.test", nil), {Type: gwv1.HTTPRouteFilterRequestHeaderModifier}}, BackendRefs: be},
	)
	routes, ws := Translate(Objects{GatewayClasses: classes(), Gateways: []*gwv1.Gateway{gw}, HTTPRoutes: []*gwv1.HTTPRoute{route}})
	if len(routes) != 1 || len(routes[0].Rules) != 3 {
		t.Fatalf("routes %+v", routes)
	}
	if r := routes[0].Rules[2]; r.Rewrite != nil || len(r.Backends) != 0 || r.Refused == nil || r.Refused.Field != "spec.rules[2].filters[1]" {
		t.Errorf("rule with an unserved filter: %+v, want it refused for its filter", r)
	}
	got := []compile.URLRewrite{*routes[0].Rules[0].Rewrite, *routes[0].Rules[1].Rewrite}
	want := []compile.URLRewrite{{Hostname: "b.test", Path: "/x", PathSet: true, ReplacePrefix: true}, {Path: "/y", PathSet: true}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Error(diff)
	}
	if routes[0].Rules[0].FilterField != "spec.rules[0].filters[0]" {
		t.Errorf("filter field %q", routes[0].Rules[0].FilterField)
	}
	if len(ws) != 1 || ws[0].Field != "spec.rules[2].filters[1]" {
		t.Errorf("warnings %v", ws)
	}
}
