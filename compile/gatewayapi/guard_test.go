package gatewayapi

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"ramjet.dev/ramjet/compile"
	"ramjet.dev/ramjet/router/routertest"
)

// TestFromIngressNeverFailsOpen: an Ingress with authentication, a client
// address restriction or ModSecurity becomes no route at all (it would
// serve its requests unchecked) and is listed with the annotation; a plain
// Ingress beside it is converted.
// rootIngress is an Ingress of class "nginx" sending name.example.com's
// "/" (Prefix) to Service web:80.
func rootIngress(name string, annotations map[string]string) *networkingv1.Ingress {
	class, pt := "nginx", networkingv1.PathTypePrefix
	return &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, Annotations: annotations},
		Spec: networkingv1.IngressSpec{IngressClassName: &class, Rules: []networkingv1.IngressRule{{
			Host: name + ".example.com",
			IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{{
				Path: "/", PathType: &pt, Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{
					Name: "web", Port: networkingv1.ServiceBackendPort{Number: 80}}}}}}},
		}}},
	}
}

// fromRootIngresses migrates ings under ingress-nginx's class "nginx".
func fromRootIngresses(ings ...*networkingv1.Ingress) Migration {
	snap := compile.Snapshot{
		IngressClasses: []*networkingv1.IngressClass{{ObjectMeta: metav1.ObjectMeta{Name: "nginx"}, Spec: networkingv1.IngressClassSpec{Controller: "k8s.io/ingress-nginx"}}},
		Ingresses:      ings,
	}
	return FromIngress(snap, FromIngressOptions{Compile: compile.Options{IngressClass: "nginx", ControllerName: "k8s.io/ingress-nginx"}})
}

func TestFromIngressNeverFailsOpen(t *testing.T) {
	m := fromRootIngresses(
		rootIngress("plain", nil),
		rootIngress("authurl", map[string]string{nginxPrefix + "auth-url": "http://auth.ns.svc/check"}),
		rootIngress("ranges", map[string]string{nginxPrefix + "whitelist-source-range": "10.0.0.0/8"}),
		rootIngress("waf", map[string]string{nginxPrefix + "enable-modsecurity": "true"}),
	)
	var routes []string
	for _, r := range m.HTTPRoutes {
		routes = append(routes, r.Name)
		for _, name := range []string{"authurl", "ranges", "waf"} {
			if strings.HasPrefix(r.Name, name+"-") {
				t.Errorf("HTTPRoute %s serves Ingress %s without its check", r.Name, name)
			}
		}
	}
	if len(routes) == 0 {
		t.Fatal("the plain Ingress is not converted")
	}
	listed := map[string]string{}
	for _, u := range m.Unconverted {
		if strings.Contains(u.Why, "not converted") {
			listed[u.Name] = strings.TrimPrefix(u.Annotation, nginxPrefix)
		}
	}
	want := map[string]string{"authurl": "auth-url", "ranges": "whitelist-source-range", "waf": "enable-modsecurity"}
	for name, key := range want {
		if listed[name] != key {
			t.Errorf("Ingress %s listed under %q, want %q (all: %v)", name, listed[name], key, m.Unconverted)
		}
	}
}

// TestFromIngressNamesValid: a long host and Ingress name still make
// valid object and listener names (at most 253 bytes, a DNS subdomain or
// label), distinct for distinct hosts.
func TestFromIngressNamesValid(t *testing.T) {
	class := "nginx"
	pt := networkingv1.PathTypePrefix
	label := strings.Repeat("a", 60)
	long := func(c string) string {
		return strings.Join([]string{label, label, label, c + "x"}, ".") + ".example.com"
	} // 200+ bytes
	rule := func(host string) networkingv1.IngressRule {
		return networkingv1.IngressRule{Host: host, IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{{
			Path: "/", PathType: &pt, Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{
				Name: "web", Port: networkingv1.ServiceBackendPort{Number: 80}}}}}}}}
	}
	ing := &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: strings.Repeat("n", 200)},
		Spec: networkingv1.IngressSpec{IngressClassName: &class, Rules: []networkingv1.IngressRule{rule(long("a")), rule(long("b"))}}}
	snap := compile.Snapshot{
		IngressClasses: []*networkingv1.IngressClass{{ObjectMeta: metav1.ObjectMeta{Name: class}, Spec: networkingv1.IngressClassSpec{Controller: "k8s.io/ingress-nginx"}}},
		Ingresses:      []*networkingv1.Ingress{ing},
	}
	m := FromIngress(snap, FromIngressOptions{Compile: compile.Options{IngressClass: class, ControllerName: "k8s.io/ingress-nginx"}})
	seen := map[string]bool{}
	for _, r := range m.HTTPRoutes {
		if errs := validation.IsDNS1123Subdomain(r.Name); len(errs) > 0 || seen[r.Name] {
			t.Errorf("HTTPRoute name %q: %v (or repeated)", r.Name, errs)
		}
		seen[r.Name] = true
	}
	if len(m.HTTPRoutes) != 2 || len(m.Gateways) != 1 {
		t.Fatalf("%d routes, %d Gateways", len(m.HTTPRoutes), len(m.Gateways))
	}
	for _, l := range m.Gateways[0].Spec.Listeners {
		if errs := validation.IsDNS1123Subdomain(string(l.Name)); len(errs) > 0 {
			t.Errorf("listener name %q: %v", l.Name, errs)
		}
	}
}

// TestFromIngressNamesMadeValid: a class named in an annotation and an
// Ingress name no API server checked (a file) that are not valid object
// names become valid ones, apart from each other and from the valid names
// they resemble, the same whatever the order of the objects.
func TestFromIngressNamesMadeValid(t *testing.T) {
	class := "Nginx_Public"
	pt := networkingv1.PathTypePrefix
	ing := func(name, host string) *networkingv1.Ingress {
		return &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, Annotations: map[string]string{"kubernetes.io/ingress.class": class}},
			Spec: networkingv1.IngressSpec{Rules: []networkingv1.IngressRule{{Host: host, IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{
				Paths: []networkingv1.HTTPIngressPath{{Path: "/", PathType: &pt, Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{
					Name: "web", Port: networkingv1.ServiceBackendPort{Number: 80}}}}}}}}}}}
	}
	snap := compile.Snapshot{Ingresses: []*networkingv1.Ingress{ing("Bad_Name", "a.example.com"), ing("bad-name", "c.example.com"), ing("..Odd..Name-", "b.example.com")}}
	opts := FromIngressOptions{Compile: compile.Options{IngressClass: class, ControllerName: "k8s.io/ingress-nginx"}}
	m := FromIngress(snap, opts)
	names := map[string]bool{}
	valid := func(kind, name string) {
		t.Helper()
		if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
			t.Errorf("%s name %q: %v", kind, name, errs)
		}
		if names[kind+" "+name] {
			t.Errorf("%s name %q twice", kind, name)
		}
		names[kind+" "+name] = true
	}
	if len(m.Gateways) != 1 || len(m.HTTPRoutes) != 3 {
		t.Fatalf("%d Gateways, %d HTTPRoutes; want 1, 3", len(m.Gateways), len(m.HTTPRoutes))
	}
	for _, g := range m.Gateways {
		valid("Gateway", g.Name)
		valid("GatewayClass", string(g.Spec.GatewayClassName))
		if !strings.HasPrefix(g.Name, "nginx-public-") {
			t.Errorf("Gateway %q, want nginx-public-<hash>", g.Name)
		}
	}
	for _, r := range m.HTTPRoutes {
		valid("HTTPRoute", r.Name)
	}
	if !names["HTTPRoute bad-name-c-example-com"] {
		t.Errorf("a valid Ingress name is kept: routes %v", names)
	}
	var a, b bytes.Buffer
	if err := m.WriteYAML(&a); err != nil {
		t.Fatal(err)
	}
	slices.Reverse(snap.Ingresses)
	if err := FromIngress(snap, opts).WriteYAML(&b); err != nil {
		t.Fatal(err)
	}
	if a.String() != b.String() {
		t.Errorf("the output depends on the order of the Ingresses")
	}
}

// TestFromIngressSharedHostNeverFailsOpen: when an Ingress with a check is
// not converted, another Ingress's paths on the same host are not either:
// its "/" would take the checked Ingress's /admin and serve it unchecked.
// That Ingress is listed; Ingresses of other hosts are converted.
func TestFromIngressSharedHostNeverFailsOpen(t *testing.T) {
	class := "nginx"
	pt := networkingv1.PathTypePrefix
	ing := func(name, host, path string, annotations map[string]string) *networkingv1.Ingress {
		return &networkingv1.Ingress{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, Annotations: annotations},
			Spec: networkingv1.IngressSpec{IngressClassName: &class, Rules: []networkingv1.IngressRule{{
				Host: host,
				IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{{
					Path: path, PathType: &pt, Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{
						Name: "web", Port: networkingv1.ServiceBackendPort{Number: 80}}}}}}},
			}}},
		}
	}
	snap := compile.Snapshot{
		IngressClasses: []*networkingv1.IngressClass{{ObjectMeta: metav1.ObjectMeta{Name: class}, Spec: networkingv1.IngressClassSpec{Controller: "k8s.io/ingress-nginx"}}},
		Ingresses: []*networkingv1.Ingress{
			ing("admin", "shop.example.com", "/admin", map[string]string{nginxPrefix + "auth-url": "http://auth.ns.svc/check"}),
			ing("site", "shop.example.com", "/", nil),
			ing("blog", "blog.example.com", "/", nil),
		},
	}
	m := FromIngress(snap, FromIngressOptions{Compile: compile.Options{IngressClass: class, ControllerName: "k8s.io/ingress-nginx"}})
	var served []string
	for _, r := range m.HTTPRoutes {
		for _, h := range r.Spec.Hostnames {
			served = append(served, string(h))
			if h == "shop.example.com" {
				t.Errorf("HTTPRoute %s serves shop.example.com, whose /admin Ingress %s checks, without the check", r.Name, "admin")
			}
		}
	}
	if !slices.Contains(served, "blog.example.com") {
		t.Errorf("blog.example.com is not converted: %v", served)
	}
	listed := false
	for _, u := range m.Unconverted {
		listed = listed || u.Name == "site"
	}
	if !listed {
		t.Errorf("Ingress site is not listed: %v", m.Unconverted)
	}
}

// TestFromIngressWithheldHostNotServedByOthers: the name of a host whose
// only Ingress is not converted for its check is not served by a route of
// another host either (the catch-all's, or a wildcard's), which would
// answer its requests unchecked: served from the Gateway API objects,
// such a request is not proxied to the other Ingress's backend.
func TestFromIngressWithheldHostNotServedByOthers(t *testing.T) {
	class := "nginx"
	pt := networkingv1.PathTypePrefix
	ing := func(name, host, svc string, annotations map[string]string) *networkingv1.Ingress {
		return &networkingv1.Ingress{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, Annotations: annotations},
			Spec: networkingv1.IngressSpec{IngressClassName: &class, Rules: []networkingv1.IngressRule{{
				Host: host,
				IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{{
					Path: "/", PathType: &pt, Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{
						Name: svc, Port: networkingv1.ServiceBackendPort{Number: 80}}}}}}},
			}}},
		}
	}
	svc := func(name string) *corev1.Service {
		return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name},
			Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080)}}}}
	}
	admin, site, wild := svc("admin"), svc("site"), svc("wild")
	auth := map[string]string{nginxPrefix + "auth-url": "http://auth.ns.svc/check"}
	for _, tt := range []struct{ name, otherHost, other string }{
		{"catch-all", "", "site"},
		{"wildcard", "*.example.com", "wild"},
	} {
		snap := compile.Snapshot{
			IngressClasses: []*networkingv1.IngressClass{{ObjectMeta: metav1.ObjectMeta{Name: class}, Spec: networkingv1.IngressClassSpec{Controller: "k8s.io/ingress-nginx"}}},
			Ingresses:      []*networkingv1.Ingress{ing("admin", "admin.example.com", "admin", auth), ing("other", tt.otherHost, tt.other, nil)},
			Services:       []*corev1.Service{admin, site, wild},
			EndpointSlices: []*discoveryv1.EndpointSlice{readySlice(admin, 1), readySlice(site, 2), readySlice(wild, 3)},
		}
		m, _, _ := migrate(t, snap, FromIngressOptions{Compile: compile.Options{IngressClass: class, ControllerName: "k8s.io/ingress-nginx"}})
		var classes []*gwv1.GatewayClass
		for name := range gatewayClassNames(m) {
			classes = append(classes, &gwv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: gwv1.GatewayClassSpec{ControllerName: ControllerName}})
		}
		gc := routertest.Case{Name: tt.name, Objects: compile.Snapshot{Services: snap.Services, EndpointSlices: snap.EndpointSlices},
			Requests: []routertest.Request{{Host: "admin.example.com", Path: "/", Method: "GET", Scheme: "http", Repeat: 1}, {Host: "admin.example.com", Path: "/", Method: "GET", Scheme: "https", Repeat: 1}}}
		tr := TranslateAll(Objects{GatewayClasses: classes, Gateways: m.Gateways, HTTPRoutes: m.HTTPRoutes, ReferenceGrants: m.ReferenceGrants, Services: snap.Services})
		tr.AddTo(&gc.Objects)
		res := routertest.Run(gc)
		if res.Error != "" {
			t.Fatalf("%s: %s", tt.name, res.Error)
		}
		for _, r := range res.Requests {
			if r.Got.Service != "" {
				t.Errorf("%s: %s://admin.example.com/ is proxied to %s, unchecked", tt.name, r.Request.Scheme, r.Got.Service)
			}
		}
	}
}

// A configuration-snippet that ramjet applies, on an Ingress withheld for
// another annotation, is not listed as a snippet ramjet does not apply.
func TestWithheldSnippetNotCalledUnapplied(t *testing.T) {
	class := "nginx"
	pt := networkingv1.PathTypePrefix
	snap := compile.Snapshot{
		IngressClasses: []*networkingv1.IngressClass{{ObjectMeta: metav1.ObjectMeta{Name: class}, Spec: networkingv1.IngressClassSpec{Controller: "k8s.io/ingress-nginx"}}},
		Ingresses: []*networkingv1.Ingress{{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "app", Annotations: map[string]string{
				nginxPrefix + "configuration-snippet":  `more_set_headers "X-Frame-Options: DENY";`,
				nginxPrefix + "whitelist-source-range": "10.0.0.0/8",
			}},
			Spec: networkingv1.IngressSpec{IngressClassName: &class, Rules: []networkingv1.IngressRule{{
				Host: "app.example.com",
				IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{{
					Path: "/", PathType: &pt, Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{
						Name: "web", Port: networkingv1.ServiceBackendPort{Number: 80}}}}}}},
			}}},
		}},
	}
	opts := compile.Options{IngressClass: class, ControllerName: "k8s.io/ingress-nginx", AllowSnippetAnnotations: true, AnnotationsRiskLevel: "Critical"}
	m := FromIngress(snap, FromIngressOptions{Compile: opts})
	for _, u := range m.Unconverted {
		if strings.Contains(u.Why, "does not apply it") {
			t.Errorf("%s listed as not applied, though ramjet applies it: %s", u.Annotation, u.Why)
		}
	}
}

// The ConfigMap's proxy-body-size "0" lifts the limit; the note says so
// rather than that it bounds the bodies.
func TestConfigMapBodySizeUnlimitedNote(t *testing.T) {
	class := "nginx"
	pt := networkingv1.PathTypePrefix
	snap := compile.Snapshot{
		IngressClasses: []*networkingv1.IngressClass{{ObjectMeta: metav1.ObjectMeta{Name: class}, Spec: networkingv1.IngressClassSpec{Controller: "k8s.io/ingress-nginx"}}},
		Ingresses: []*networkingv1.Ingress{{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "app"},
			Spec: networkingv1.IngressSpec{IngressClassName: &class, Rules: []networkingv1.IngressRule{{
				Host: "app.example.com",
				IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{{
					Path: "/", PathType: &pt, Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{
						Name: "web", Port: networkingv1.ServiceBackendPort{Number: 80}}}}}}},
			}}},
		}},
	}
	for size, want := range map[string]string{"0": "lifts the limit", "8m": "bounds this Ingress's request bodies"} {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ingress-nginx", Name: "ingress-nginx-controller"}, Data: map[string]string{"proxy-body-size": size}}
		opts := compile.Options{IngressClass: class, ControllerName: "k8s.io/ingress-nginx", ConfigMap: compile.ParseConfigMap(cm)}
		m := FromIngress(snap, FromIngressOptions{Compile: opts})
		found := false
		for _, u := range m.Unconverted {
			found = found || u.Annotation == nginxPrefix+"proxy-body-size" && strings.Contains(u.Why, want)
		}
		if !found {
			t.Errorf("proxy-body-size %q: no note saying %q: %v", size, want, m.Unconverted)
		}
	}
}

// use-port-in-redirects: "false" is what an HTTPS RequestRedirect does (no
// port 443 in its Location), so it is not listed; "true" is, with why.
func TestFromIngressUsePortInRedirects(t *testing.T) {
	ing := func(name, value string) *networkingv1.Ingress {
		return rootIngress(name, map[string]string{nginxPrefix + "use-port-in-redirects": value})
	}
	m := fromRootIngresses(ing("withport", "true"), ing("noport", "false"))
	listed := map[string]string{}
	for _, u := range m.Unconverted {
		listed[u.Name] = u.Why
	}
	if why := listed["withport"]; !strings.Contains(why, "443") {
		t.Errorf("use-port-in-redirects \"true\" listed as %q, want its reason", why)
	}
	if why, ok := listed["noport"]; ok {
		t.Errorf("use-port-in-redirects \"false\" listed: %q", why)
	}
}
