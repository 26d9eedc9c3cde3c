package gatewayapi

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// TestTLSRouteOfAnotherControllerIsNotJudged: a TLSRoute whose parents are
// all another controller's Gateways is not ours, as an HTTPRoute's is
// not: ramjet warns about nothing in it (its backendRefs, its rules) and
// decides no status for it.
func TestTLSRouteOfAnotherControllerIsNotJudged(t *testing.T) {
	theirs := gateway("infra", "theirs", "theirs", gwv1.Listener{Name: "tls", Port: 443, Protocol: gwv1.TLSProtocolType,
		TLS: &gwv1.ListenerTLSConfig{Mode: new(gwv1.TLSModePassthrough)}})
	var ref gwv1.BackendRef
	ref.Name, ref.Namespace, ref.Port = "db", new(gwv1.Namespace("elsewhere")), new(gwv1.PortNumber(5432))
	r := &gwv1.TLSRoute{ObjectMeta: metav1.ObjectMeta{Namespace: "app", Name: "r"},
		Spec: gwv1.TLSRouteSpec{CommonRouteSpec: gwv1.CommonRouteSpec{ParentRefs: []gwv1.ParentReference{{Name: "theirs", Namespace: new(gwv1.Namespace("infra"))}}},
			Hostnames: []gwv1.Hostname{"db.example"},
			Rules:     []gwv1.TLSRouteRule{{BackendRefs: []gwv1.BackendRef{ref}}, {BackendRefs: []gwv1.BackendRef{ref}}}}}
	tr := TranslateAll(Objects{GatewayClasses: classes(), Gateways: []*gwv1.Gateway{theirs}, TLSRoutes: []*gwv1.TLSRoute{r}})
	for _, w := range tr.Warnings {
		t.Errorf("warning about another controller's TLSRoute: %v", w)
	}
	if len(tr.TLSRoutes) != 0 {
		t.Errorf("served: %+v", tr.TLSRoutes)
	}
	if got, changed := tr.Status.TLSRoute(r, metav1.Unix(1, 0)); changed {
		t.Errorf("status decided: %+v", got.Status)
	}
}

// TestTLSRouteBackendPortNotFound: a backendRef to a port its Service does
// not have refuses its share of the connections, so its ResolvedRefs is
// False, BackendNotFound, as a missing Service's is; one to an
// ExternalName Service, InvalidKind.
func TestTLSRouteBackendPortNotFound(t *testing.T) {
	gw := gateway("infra", "gw", "ours", gwv1.Listener{Name: "tls", Port: 443, Protocol: gwv1.TLSProtocolType,
		TLS: &gwv1.ListenerTLSConfig{Mode: new(gwv1.TLSModePassthrough)}, AllowedRoutes: &gwv1.AllowedRoutes{Namespaces: &gwv1.RouteNamespaces{From: new(gwv1.NamespacesFromAll)}}})
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "app", Name: "db"}, Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 5432}}}}
	for _, tt := range []struct {
		port int32
		want []brief
	}{
		{5432, []brief{{"Accepted", "True", "Accepted"}, {"ResolvedRefs", "True", "ResolvedRefs"}}},
		{5433, []brief{{"Accepted", "True", "Accepted"}, {"ResolvedRefs", "False", "BackendNotFound"}}},
		// An ExternalName Service is not dialled either.
		{5432, []brief{{"Accepted", "True", "Accepted"}, {"ResolvedRefs", "False", "InvalidKind"}}},
	} {
		if tt.want[1].Reason == "InvalidKind" {
			svc = svc.DeepCopy()
			svc.Spec.Type, svc.Spec.ExternalName = corev1.ServiceTypeExternalName, "db.example.net"
		}
		var ref gwv1.BackendRef
		ref.Name, ref.Port = "db", new(gwv1.PortNumber(tt.port))
		r := &gwv1.TLSRoute{ObjectMeta: metav1.ObjectMeta{Namespace: "app", Name: "r"},
			Spec: gwv1.TLSRouteSpec{CommonRouteSpec: gwv1.CommonRouteSpec{ParentRefs: []gwv1.ParentReference{{Name: "gw", Namespace: new(gwv1.Namespace("infra"))}}},
				Hostnames: []gwv1.Hostname{"db.example"},
				Rules:     []gwv1.TLSRouteRule{{BackendRefs: []gwv1.BackendRef{ref}}}}}
		tr := TranslateAll(Objects{GatewayClasses: classes(), Gateways: []*gwv1.Gateway{gw}, TLSRoutes: []*gwv1.TLSRoute{r}, Services: []*corev1.Service{svc}})
		got, _ := tr.Status.TLSRoute(r, metav1.Unix(1, 0))
		if len(got.Status.Parents) != 1 {
			t.Fatalf("port %d: parents %+v", tt.port, got.Status.Parents)
		}
		if d := cmp.Diff(tt.want, briefs(got.Status.Parents[0].Conditions)); d != "" {
			t.Errorf("port %d (-want +got):\n%s", tt.port, d)
		}
	}
}

// TestTLSRouteOnListenerOfAnotherProtocol: a TLSRoute whose sectionName
// names a TCP listener is NotAllowedByListeners, as the suite asks of a
// route on a listener whose protocol does not take its kind
// (tcproute-invalid-non-tcp-listener), not NoMatchingParent: the listener
// is there.
func TestTLSRouteOnListenerOfAnotherProtocol(t *testing.T) {
	gw := gateway("infra", "gw", "ours", gwv1.Listener{Name: "tcp", Port: 5432, Protocol: gwv1.TCPProtocolType,
		AllowedRoutes: &gwv1.AllowedRoutes{Namespaces: &gwv1.RouteNamespaces{From: new(gwv1.NamespacesFromAll)}}})
	var ref gwv1.BackendRef
	ref.Name, ref.Port = "db", new(gwv1.PortNumber(5432))
	r := &gwv1.TLSRoute{ObjectMeta: metav1.ObjectMeta{Namespace: "app", Name: "r"},
		Spec: gwv1.TLSRouteSpec{CommonRouteSpec: gwv1.CommonRouteSpec{ParentRefs: []gwv1.ParentReference{
			{Name: "gw", Namespace: new(gwv1.Namespace("infra")), SectionName: new(gwv1.SectionName("tcp"))}}},
			Hostnames: []gwv1.Hostname{"db.example"},
			Rules:     []gwv1.TLSRouteRule{{BackendRefs: []gwv1.BackendRef{ref}}}}}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "app", Name: "db"}, Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 5432}}}}
	tr := TranslateAll(Objects{GatewayClasses: classes(), Gateways: []*gwv1.Gateway{gw}, TLSRoutes: []*gwv1.TLSRoute{r}, Services: []*corev1.Service{svc}})
	got, _ := tr.Status.TLSRoute(r, metav1.Unix(1, 0))
	if got == nil || len(got.Status.Parents) != 1 {
		t.Fatalf("parents %+v", got)
	}
	want := []brief{{"Accepted", "False", "NotAllowedByListeners"}, {"ResolvedRefs", "True", "ResolvedRefs"}}
	if d := cmp.Diff(want, briefs(got.Status.Parents[0].Conditions)); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

// TestTLSRouteTakenByAnotherGateway: on one port a connection goes to the
// listener whose hostname matches its server name most specifically,
// across every Gateway and whether that listener is TLS or HTTPS. A
// TLSRoute whose every hostname on a listener another Gateway's more
// specific listener takes is not served there: that listener's
// attachedRoutes does not count it and the table leaves it out; a route
// with a hostname still served there is counted and keeps that hostname
// alone. Each hostname lost warns, naming both Gateways.
func TestTLSRouteTakenByAnotherGateway(t *testing.T) {
	all := &gwv1.AllowedRoutes{Namespaces: &gwv1.RouteNamespaces{From: new(gwv1.NamespacesFromAll)}}
	passthrough := func(name, host string) gwv1.Listener {
		return gwv1.Listener{Name: gwv1.SectionName(name), Port: 443, Protocol: gwv1.TLSProtocolType, Hostname: new(gwv1.Hostname(host)),
			TLS: &gwv1.ListenerTLSConfig{Mode: new(gwv1.TLSModePassthrough)}, AllowedRoutes: all}
	}
	wide := gateway("infra", "wide", "ours", passthrough("tls", "*.example.com"))
	narrow := gateway("infra", "narrow", "ours", passthrough("tls", "a.example.com"),
		gwv1.Listener{Name: "https", Port: 443, Protocol: gwv1.HTTPSProtocolType, Hostname: new(gwv1.Hostname("c.example.com")), AllowedRoutes: all})
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "app", Name: "db"}, Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 5432}}}}
	route := func(name string, hosts ...gwv1.Hostname) *gwv1.TLSRoute {
		var ref gwv1.BackendRef
		ref.Name, ref.Port = "db", new(gwv1.PortNumber(5432))
		return &gwv1.TLSRoute{ObjectMeta: metav1.ObjectMeta{Namespace: "app", Name: name},
			Spec: gwv1.TLSRouteSpec{CommonRouteSpec: gwv1.CommonRouteSpec{ParentRefs: []gwv1.ParentReference{{Name: "wide", Namespace: new(gwv1.Namespace("infra"))}}},
				Hostnames: hosts, Rules: []gwv1.TLSRouteRule{{BackendRefs: []gwv1.BackendRef{ref}}}}}
	}
	routes := []*gwv1.TLSRoute{route("lost", "a.example.com"), route("lost-to-https", "c.example.com"), route("kept", "a.example.com", "b.example.com")}
	tr := TranslateAll(Objects{GatewayClasses: classes(), Gateways: []*gwv1.Gateway{wide, narrow}, TLSRoutes: routes, Services: []*corev1.Service{svc}})
	g, _ := tr.Status.Gateway(wide, nil, metav1.Unix(1, 0))
	if g == nil {
		t.Fatal("no status for Gateway wide")
	}
	if n := g.Status.Listeners[0].AttachedRoutes; n != 1 {
		t.Errorf("attachedRoutes of wide's listener: %d, want 1 (kept)", n)
	}
	var served []string
	for _, r := range tr.TLSRoutes {
		served = append(served, r.Name+" "+r.ListenerHostname+" "+strings.Join(r.Hostnames, ","))
	}
	if d := cmp.Diff([]string{"kept *.example.com b.example.com"}, served); d != "" {
		t.Errorf("served (-want +got):\n%s", d)
	}
	for _, name := range []string{"lost", "lost-to-https", "kept"} {
		found := false
		for _, w := range tr.Warnings {
			if w.Object.Kind == "TLSRoute" && w.Object.Name == name && strings.Contains(w.Message, "infra/wide") && strings.Contains(w.Message, "infra/narrow") {
				found = true
			}
		}
		if !found {
			t.Errorf("no warning on TLSRoute %s naming Gateways infra/wide and infra/narrow; warnings: %v", name, tr.Warnings)
		}
	}
	for _, w := range tr.Warnings {
		if w.Object.Name == "kept" && strings.Contains(w.Message, "b.example.com") {
			t.Errorf("warning about kept's b.example.com, served: %v", w)
		}
	}
}

// TestHTTPRouteTakenByPassthrough: the rule of TestTLSRouteTakenByAnotherGateway
// holds the other way round. A connection whose server name another
// Gateway's TLS passthrough listener matches more specifically is spliced
// there, never terminated, so an HTTPRoute's host on an HTTPS listener of
// the port that the passthrough listener takes is not served: the
// listener's attachedRoutes does not count a route that loses every host,
// the table leaves the host out, and each host lost warns naming both
// Gateways.
func TestHTTPRouteTakenByPassthrough(t *testing.T) {
	all := &gwv1.AllowedRoutes{Namespaces: &gwv1.RouteNamespaces{From: new(gwv1.NamespacesFromAll)}}
	web := gateway("infra", "web", "ours", https("https", "", secretRef("", "cert")))
	tls := gateway("infra", "tls", "ours", gwv1.Listener{Name: "tls", Port: 443, Protocol: gwv1.TLSProtocolType, Hostname: new(gwv1.Hostname("*.example.com")),
		TLS: &gwv1.ListenerTLSConfig{Mode: new(gwv1.TLSModePassthrough)}, AllowedRoutes: all})
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "app", Name: "svc"}, Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}
	rule := gwv1.HTTPRouteRule{BackendRefs: []gwv1.HTTPBackendRef{toService("", "svc", 80)}}
	parent := []gwv1.ParentReference{{Name: "web", Namespace: new(gwv1.Namespace("infra"))}}
	routes := []*gwv1.HTTPRoute{
		httpRoute("app", "lost", parent, []gwv1.Hostname{"a.example.com"}, rule),
		httpRoute("app", "kept", parent, []gwv1.Hostname{"a.example.com", "www.example.org"}, rule),
	}
	tr := TranslateAll(Objects{GatewayClasses: classes(), Gateways: []*gwv1.Gateway{web, tls}, HTTPRoutes: routes,
		Services: []*corev1.Service{svc}, Secrets: []*corev1.Secret{tlsSecret(t, "infra", "cert", "a.example.com", "www.example.org")}})
	g, _ := tr.Status.Gateway(web, nil, metav1.Unix(1, 0))
	if g == nil {
		t.Fatal("no status for Gateway web")
	}
	if n := g.Status.Listeners[0].AttachedRoutes; n != 1 {
		t.Errorf("attachedRoutes of web's listener: %d, want 1 (kept)", n)
	}
	var served []string
	for _, r := range tr.HTTPRoutes {
		served = append(served, r.Name+" "+strings.Join(r.Hostnames, ","))
	}
	if d := cmp.Diff([]string{"kept www.example.org"}, served); d != "" {
		t.Errorf("served (-want +got):\n%s", d)
	}
	for _, name := range []string{"lost", "kept"} {
		found := false
		for _, w := range tr.Warnings {
			if w.Object.Kind == "HTTPRoute" && w.Object.Name == name && strings.Contains(w.Message, "infra/web") && strings.Contains(w.Message, "infra/tls") &&
				strings.Contains(w.Message, `"a.example.com"`) {
				found = true
			}
		}
		if !found {
			t.Errorf("no warning on HTTPRoute %s naming Gateways infra/web and infra/tls; warnings: %v", name, tr.Warnings)
		}
	}
}
