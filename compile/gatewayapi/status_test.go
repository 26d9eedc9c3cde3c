package gatewayapi

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"log/slog"
	"math/big"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"ramjet.dev/ramjet/compile"
	"ramjet.dev/ramjet/match"
	"ramjet.dev/ramjet/router"
	"ramjet.dev/ramjet/status"
)

func tlsSecret(t *testing.T, ns, name string, hosts ...string) *corev1.Secret {
	t.Helper()
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), DNSNames: hosts, NotBefore: time.Unix(0, 0), NotAfter: time.Unix(1<<33, 0)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &priv.PublicKey, priv)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Type: corev1.SecretTypeTLS, Data: map[string][]byte{
		corev1.TLSCertKey:       pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		corev1.TLSPrivateKeyKey: pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
	}}
}

func https(name, host string, refs ...gwv1.SecretObjectReference) gwv1.Listener {
	l := listener(name, host, gwv1.NamespacesFromAll)
	l.Protocol, l.Port = gwv1.HTTPSProtocolType, 443
	l.TLS = &gwv1.ListenerTLSConfig{CertificateRefs: refs}
	return l
}

func secretRef(ns, name string) gwv1.SecretObjectReference {
	r := gwv1.SecretObjectReference{Name: gwv1.ObjectName(name)}
	if ns != "" {
		r.Namespace = new(gwv1.Namespace(ns))
	}
	return r
}

type brief struct{ Type, Status, Reason string }

func briefs(cs []metav1.Condition) []brief {
	out := make([]brief, len(cs))
	for i, c := range cs {
		out[i] = brief{c.Type, string(c.Status), c.Reason}
	}
	return out
}

// TestTranslateAllTLS: HTTPS listeners' certificateRefs become listener
// certificates for the listener's hostname, or its routes' hostnames when
// it has none; a cross-namespace Secret needs a ReferenceGrant, and a
// refused reference warns naming the Gateway and field.
func TestTranslateAllTLS(t *testing.T) {
	tcp := gwv1.SecretObjectReference{Name: "x", Kind: new(gwv1.Kind("ConfigMap"))}
	gw := gateway("infra", "gw", "ours",
		https("named", "shop.example.com", secretRef("", "shop")),
		https("open", "", secretRef("certs", "granted"), secretRef("certs", "refused")),
		https("bad", "bad.example.com", tcp),
	)
	gw.CreationTimestamp = metav1.Unix(5, 0)
	grant := &gwv1.ReferenceGrant{ObjectMeta: metav1.ObjectMeta{Namespace: "certs", Name: "g"}, Spec: gwv1.ReferenceGrantSpec{
		From: []gwv1.ReferenceGrantFrom{{Group: Group, Kind: "Gateway", Namespace: "infra"}},
		To:   []gwv1.ReferenceGrantTo{{Kind: "Secret", Name: new(gwv1.ObjectName("granted"))}},
	}}
	rule := gwv1.HTTPRouteRule{BackendRefs: []gwv1.HTTPBackendRef{toService("", "svc", 80)}}
	route := httpRoute("app", "r", []gwv1.ParentReference{{Name: "gw", Namespace: new(gwv1.Namespace("infra")), SectionName: new(gwv1.SectionName("open"))}},
		[]gwv1.Hostname{"api.example.com", "www.example.com"}, rule)
	tr := TranslateAll(Objects{GatewayClasses: classes(), Gateways: []*gwv1.Gateway{gw}, HTTPRoutes: []*gwv1.HTTPRoute{route},
		ReferenceGrants: []*gwv1.ReferenceGrant{grant},
		Secrets:         []*corev1.Secret{tlsSecret(t, "infra", "shop", "shop.example.com"), tlsSecret(t, "certs", "granted", "*.example.com")}})

	gwRef := compile.Ref{Kind: "Gateway", Namespace: "infra", Name: "gw"}
	want := []*compile.ListenerCertificate{
		{Object: gwRef, Field: "spec.listeners[0].tls.certificateRefs[0]", Created: time.Unix(5, 0), SecretNamespace: "infra", SecretName: "shop", Hosts: []string{"shop.example.com"}},
		{Object: gwRef, Field: "spec.listeners[1].tls.certificateRefs[0]", Created: time.Unix(5, 0), SecretNamespace: "certs", SecretName: "granted", Hosts: []string{"*", "api.example.com", "www.example.com"}},
	}
	if d := cmp.Diff(want, tr.ListenerCertificates); d != "" {
		t.Errorf("listener certificates (-want +got):\n%s", d)
	}
	type short struct{ Reason, Object, Field string }
	var got []short
	for _, w := range tr.Warnings {
		got = append(got, short{string(w.Reason), w.Object.String(), w.Field})
	}
	if d := cmp.Diff([]short{
		{string(RefNotPermitted), "Gateway infra/gw", "spec.listeners[1].tls.certificateRefs[1]"},
		{string(Unsupported), "Gateway infra/gw", "spec.listeners[2].tls.certificateRefs[0]"},
	}, got); d != "" {
		t.Errorf("warnings (-want +got):\n%s", d)
	}
	if m := tr.Warnings[0].Message; !strings.HasPrefix(m, "no ReferenceGrant in namespace certs lets Gateways of infra use Secret refused;") {
		t.Errorf("warning message %q", m)
	}
	g, changed := tr.Status.Gateway(gw, nil, metav1.Now())
	if !changed {
		t.Fatal("no Gateway status")
	}
	var lb [][]brief
	for _, l := range g.Status.Listeners {
		lb = append(lb, briefs(l.Conditions))
	}
	ok := func(r string) brief { return brief{r, "True", r} }
	noConflict := brief{"Conflicted", "False", "NoConflicts"}
	if d := cmp.Diff([][]brief{
		{ok("Accepted"), noConflict, ok("ResolvedRefs"), ok("Programmed")},
		{ok("Accepted"), noConflict, {"ResolvedRefs", "False", "RefNotPermitted"}, {"Programmed", "False", "Invalid"}},
		{ok("Accepted"), noConflict, {"ResolvedRefs", "False", "InvalidCertificateRef"}, {"Programmed", "False", "Invalid"}},
	}, lb); d != "" {
		t.Errorf("listener conditions (-want +got):\n%s", d)
	}
	if n := g.Status.Listeners[1].AttachedRoutes; n != 1 {
		t.Errorf("attachedRoutes of listener open: %d, want 1", n)
	}
}

// TestTranslateAllStatus: the route conditions of the spec's reasons, the
// Gateway's listeners and counts, the class's Accepted, and no second
// write of an unchanged decision.
func TestTranslateAllStatus(t *testing.T) {
	tcpL := listener("tcp", "", gwv1.NamespacesFromAll)
	tcpL.Protocol, tcpL.Port = gwv1.TCPProtocolType, 9000
	passL := listener("passthrough", "", gwv1.NamespacesFromAll)
	passL.Protocol, passL.Port, passL.TLS = gwv1.TLSProtocolType, 443, &gwv1.ListenerTLSConfig{Mode: new(gwv1.TLSModePassthrough)}
	gw := gateway("infra", "gw", "ours",
		listener("all", "*.example.com", gwv1.NamespacesFromAll),
		listener("same", "", gwv1.NamespacesFromSame),
		tcpL,
		// Two HTTP listeners on one port and hostname: both conflicted.
		listener("dup1", "dup.test", gwv1.NamespacesFromAll), listener("dup2", "dup.test", gwv1.NamespacesFromAll),
		passL,
	)
	gw.Generation = 4
	gw.Spec.Listeners[3].Port, gw.Spec.Listeners[4].Port = 8080, 8080
	parent := func(section string) gwv1.ParentReference {
		return gwv1.ParentReference{Name: "gw", Namespace: new(gwv1.Namespace("infra")), SectionName: new(gwv1.SectionName(section))}
	}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "app", Name: "svc"}, Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}
	ext := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "app", Name: "ext"},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "db.example.net", Ports: []corev1.ServicePort{{Port: 80}}}}
	// A port whose appProtocol ramjet does not speak: UnsupportedProtocol
	// (the API's BackendRef text); h2c is spoken.
	wss := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "app", Name: "wss"}, Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{
		{Port: 80, AppProtocol: new("kubernetes.io/h2c")}, {Port: 443, AppProtocol: new("kubernetes.io/wss")}}}}
	rule := func(refs ...gwv1.HTTPBackendRef) gwv1.HTTPRouteRule { return gwv1.HTTPRouteRule{BackendRefs: refs} }
	other := toService("", "svc", 80)
	other.Kind = new(gwv1.Kind("Bucket"))
	other.Group = new(gwv1.Group("storage.example.com"))
	routes := []*gwv1.HTTPRoute{
		httpRoute("app", "served", []gwv1.ParentReference{parent("all")}, []gwv1.Hostname{"a.example.com"}, rule(toService("", "svc", 80))),
		httpRoute("app", "wrong-ns", []gwv1.ParentReference{parent("same")}, nil, rule(toService("", "svc", 80))),
		httpRoute("app", "wrong-host", []gwv1.ParentReference{parent("all")}, []gwv1.Hostname{"a.test"}, rule(toService("", "svc", 80))),
		httpRoute("app", "no-section", []gwv1.ParentReference{parent("nope")}, nil, rule(toService("", "svc", 80))),
		// A served listener whose protocol takes TLSRoutes only.
		httpRoute("app", "on-passthrough", []gwv1.ParentReference{parent("passthrough")}, nil, rule(toService("", "svc", 80))),
		httpRoute("app", "conflicted", []gwv1.ParentReference{parent("dup1")}, nil, rule(toService("", "svc", 80))),
		httpRoute("app", "refs", []gwv1.ParentReference{parent("all")}, nil,
			rule(toService("", "missing", 80)), rule(toService("elsewhere", "svc", 80)), rule(other)),
		httpRoute("app", "h2c", []gwv1.ParentReference{parent("all")}, nil, rule(toService("", "wss", 80))),
		// The Service is there but not the port: its share answers 500.
		httpRoute("app", "no-port", []gwv1.ParentReference{parent("all")}, nil, rule(toService("", "svc", 81))),
		// An ExternalName Service is not dialled: its share answers 500.
		httpRoute("app", "external", []gwv1.ParentReference{parent("all")}, nil, rule(toService("", "ext", 80))),
		httpRoute("app", "wss", []gwv1.ParentReference{parent("all")}, nil, rule(toService("", "wss", 443))),
		// A listener of a protocol that takes no HTTPRoutes, as the suite
		// asks of a TCPRoute on an HTTP listener (tcproute-invalid-non-tcp-listener).
		httpRoute("app", "on-tcp", []gwv1.ParentReference{parent("tcp")}, nil, rule(toService("", "svc", 80))),
		// Another controller's parent: not ours to write.
		httpRoute("app", "theirs", []gwv1.ParentReference{{Name: "else"}}, nil, rule(toService("", "svc", 80))),
	}
	for _, r := range routes {
		r.Generation = 2
	}
	cls := classes()
	cls[0].Generation = 3
	tr := TranslateAll(Objects{GatewayClasses: cls, Gateways: []*gwv1.Gateway{gw}, HTTPRoutes: routes, Services: []*corev1.Service{svc, wss, ext}})
	now := metav1.NewTime(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))

	want := map[string][]brief{
		"served":         {{"Accepted", "True", "Accepted"}, {"ResolvedRefs", "True", "ResolvedRefs"}},
		"wrong-ns":       {{"Accepted", "False", "NotAllowedByListeners"}, {"ResolvedRefs", "True", "ResolvedRefs"}},
		"wrong-host":     {{"Accepted", "False", "NoMatchingListenerHostname"}, {"ResolvedRefs", "True", "ResolvedRefs"}},
		"no-section":     {{"Accepted", "False", "NoMatchingParent"}, {"ResolvedRefs", "True", "ResolvedRefs"}},
		"on-passthrough": {{"Accepted", "False", "NotAllowedByListeners"}, {"ResolvedRefs", "True", "ResolvedRefs"}},
		"on-tcp":         {{"Accepted", "False", "NotAllowedByListeners"}, {"ResolvedRefs", "True", "ResolvedRefs"}},
		"conflicted":     {{"Accepted", "False", "NoMatchingParent"}, {"ResolvedRefs", "True", "ResolvedRefs"}},
		"refs":           {{"Accepted", "True", "Accepted"}, {"ResolvedRefs", "False", "BackendNotFound"}},
		"h2c":            {{"Accepted", "True", "Accepted"}, {"ResolvedRefs", "True", "ResolvedRefs"}},
		"no-port":        {{"Accepted", "True", "Accepted"}, {"ResolvedRefs", "False", "BackendNotFound"}},
		"external":       {{"Accepted", "True", "Accepted"}, {"ResolvedRefs", "False", "InvalidKind"}},
		"wss":            {{"Accepted", "True", "Accepted"}, {"ResolvedRefs", "False", string(gwv1.RouteReasonUnsupportedProtocol)}},
	}
	for _, r := range routes {
		got, changed := tr.Status.HTTPRoute(r, now)
		w, ours := want[r.Name]
		if !ours {
			if changed {
				t.Errorf("route %s: status written for another controller's parent: %+v", r.Name, got.Status)
			}
			continue
		}
		if !changed || len(got.Status.Parents) != 1 {
			t.Fatalf("route %s: changed %v, %+v", r.Name, changed, got)
		}
		p := got.Status.Parents[0]
		if d := cmp.Diff(w, briefs(p.Conditions)); d != "" {
			t.Errorf("route %s (-want +got):\n%s", r.Name, d)
		}
		if p.ControllerName != ControllerName || p.Conditions[0].ObservedGeneration != 2 || !p.Conditions[0].LastTransitionTime.Equal(&now) {
			t.Errorf("route %s: parent %+v", r.Name, p)
		}
		// The written status decided again is no change: nothing to write.
		if _, again := tr.Status.HTTPRoute(got, metav1.NewTime(now.Add(time.Minute))); again {
			t.Errorf("route %s: an unchanged decision is written again", r.Name)
		}
	}
	refs, _ := tr.Status.HTTPRoute(routes[6], now)
	if m := refs.Status.Parents[0].Conditions[1].Message; m != "spec.rules[0].backendRefs[0]: Service app/missing not found; "+
		"spec.rules[1].backendRefs[0]: no ReferenceGrant in namespace elsewhere lets HTTPRoutes of app use Service svc; "+
		"spec.rules[2].backendRefs[0]: Bucket is not a core Service" {
		t.Errorf("ResolvedRefs message: %s", m)
	}

	g, changed := tr.Status.Gateway(gw, []gwv1.GatewayStatusAddress{{Type: new(gwv1.IPAddressType), Value: "10.0.0.1"}}, now)
	if !changed {
		t.Fatal("no Gateway status")
	}
	if d := cmp.Diff([]brief{{"Accepted", "True", "ListenersNotValid"}, {"Programmed", "True", "Programmed"}}, briefs(g.Status.Conditions)); d != "" {
		t.Errorf("gateway (-want +got):\n%s", d)
	}
	type ls struct {
		Name     string
		Attached int32
		Kinds    int
		Accepted string
		Conflict string
	}
	var gotL []ls
	for _, l := range g.Status.Listeners {
		gotL = append(gotL, ls{string(l.Name), l.AttachedRoutes, len(l.SupportedKinds), l.Conditions[0].Reason, l.Conditions[1].Reason})
	}
	if d := cmp.Diff([]ls{
		{"all", 6, 2, "Accepted", "NoConflicts"}, // served, refs, h2c, no-port, external and wss; HTTPRoute and GRPCRoute
		{"same", 0, 2, "Accepted", "NoConflicts"},
		{"tcp", 0, 0, "UnsupportedProtocol", "NoConflicts"},
		{"dup1", 0, 2, "Accepted", "HostnameConflict"},
		{"dup2", 0, 2, "Accepted", "HostnameConflict"},
		{"passthrough", 0, 1, "Accepted", "NoConflicts"},
	}, gotL); d != "" {
		t.Errorf("listeners (-want +got):\n%s", d)
	}
	if g.Status.Conditions[0].ObservedGeneration != 4 || len(g.Status.Addresses) != 1 {
		t.Errorf("gateway status %+v", g.Status)
	}
	if _, again := tr.Status.Gateway(g, nil, metav1.NewTime(now.Add(time.Minute))); again {
		t.Error("an unchanged Gateway decision is written again (no addresses keeps the old ones)")
	}

	c, changed := tr.Status.GatewayClass(cls[0], now)
	if !changed || c.Status.Conditions[0].Reason != status.ReasonAccepted || c.Status.Conditions[0].ObservedGeneration != 3 {
		t.Errorf("gatewayclass: %v %+v", changed, c)
	}
	if _, changed := tr.Status.GatewayClass(cls[1], now); changed {
		t.Error("another controller's GatewayClass gets status")
	}

	// A route that no longer names our Gateway loses our entry, and keeps
	// another controller's.
	served, _ := tr.Status.HTTPRoute(routes[0], now)
	served.Status.Parents = append(served.Status.Parents, gwv1.RouteParentStatus{ParentRef: gwv1.ParentReference{Name: "else"}, ControllerName: "example.com/other"})
	served.Spec.ParentRefs = []gwv1.ParentReference{{Name: "else"}}
	tr2 := TranslateAll(Objects{GatewayClasses: cls, Gateways: []*gwv1.Gateway{gw}, HTTPRoutes: []*gwv1.HTTPRoute{served}})
	left, changed := tr2.Status.HTTPRoute(served, now)
	if !changed || len(left.Status.Parents) != 1 || left.Status.Parents[0].ControllerName != "example.com/other" {
		t.Errorf("detached route: changed %v, %+v", changed, left)
	}
}

// TestReasonsAreTheAPIs: status's reason strings are the Gateway API's.
func TestReasonsAreTheAPIs(t *testing.T) {
	for got, want := range map[string]string{
		status.ReasonNotAllowedByListeners:      string(gwv1.RouteReasonNotAllowedByListeners),
		status.ReasonNoMatchingListenerHostname: string(gwv1.RouteReasonNoMatchingListenerHostname),
		status.ReasonNoMatchingParent:           string(gwv1.RouteReasonNoMatchingParent),
		status.ReasonBackendNotFound:            string(gwv1.RouteReasonBackendNotFound),
		status.ReasonInvalidKind:                string(gwv1.RouteReasonInvalidKind),
		status.ReasonRefNotPermitted:            string(gwv1.RouteReasonRefNotPermitted),
		status.ReasonInvalidCertificateRef:      string(gwv1.ListenerReasonInvalidCertificateRef),
		status.ReasonInvalidRouteKinds:          string(gwv1.ListenerReasonInvalidRouteKinds),
		status.ReasonHostnameConflict:           string(gwv1.ListenerReasonHostnameConflict),
		status.ReasonProtocolConflict:           string(gwv1.ListenerReasonProtocolConflict),
		status.ReasonNoConflicts:                string(gwv1.ListenerReasonNoConflicts),
		status.ReasonUnsupportedProtocol:        string(gwv1.ListenerReasonUnsupportedProtocol),
		status.ReasonPortUnavailable:            string(gwv1.ListenerReasonPortUnavailable),
		status.ReasonListenersNotValid:          string(gwv1.GatewayReasonListenersNotValid),
		status.ReasonInvalidParameters:          string(gwv1.GatewayReasonInvalidParameters),
		status.ReasonUnsupportedAddress:         string(gwv1.GatewayReasonUnsupportedAddress),
		status.ReasonAddressNotUsable:           string(gwv1.GatewayReasonAddressNotUsable),
		status.ConditionConflicted:              string(gwv1.ListenerConditionConflicted),
		status.ConditionProgrammed:              string(gwv1.GatewayConditionProgrammed),
		status.ConditionResolvedRefs:            string(gwv1.RouteConditionResolvedRefs),
		status.ReasonInvalid:                    string(gwv1.GatewayReasonInvalid),
	} {
		if got != want {
			t.Errorf("%q, the API says %q", got, want)
		}
	}
}

// TestConflicts: one port under HTTP and HTTPS conflicts on protocol;
// HTTPS and TLS share a port by SNI; one port and hostname twice
// conflicts on hostname; other ports and hostnames do not.
func TestConflicts(t *testing.T) {
	l := func(name string, port gwv1.PortNumber, proto gwv1.ProtocolType, host string) gwv1.Listener {
		x := listener(name, host, gwv1.NamespacesFromAll)
		x.Port, x.Protocol = port, proto
		return x
	}
	gw := gateway("infra", "gw", "ours",
		l("a", 80, gwv1.HTTPProtocolType, ""),
		l("b", 80, gwv1.HTTPSProtocolType, "b.test"),
		l("c", 443, gwv1.HTTPSProtocolType, "c.test"),
		l("d", 443, gwv1.TLSProtocolType, "d.test"),
		l("e", 8080, gwv1.HTTPProtocolType, "e.test"),
		l("f", 8080, gwv1.HTTPProtocolType, "e.test"),
		l("g", 8080, gwv1.HTTPProtocolType, "g.test"),
	)
	want := []string{status.ReasonProtocolConflict, status.ReasonProtocolConflict, "", "", status.ReasonHostnameConflict, status.ReasonHostnameConflict, ""}
	if d := cmp.Diff(want, conflicts(gw)); d != "" {
		t.Errorf("conflicts (-want +got):\n%s", d)
	}
}

// TestPortUnavailable: with Objects.Ports, a listener on a port requests
// do not arrive on is not Accepted (PortUnavailable) nor Programmed, a
// route attached only there is not attached (NoMatchingParent), and the
// listener on a served port serves as before.
func TestPortUnavailable(t *testing.T) {
	other := listener("other", "", gwv1.NamespacesFromAll)
	other.Port = 8080
	gw := gateway("infra", "gw", "ours", listener("web", "", gwv1.NamespacesFromAll), other)
	parent := func(section string) []gwv1.ParentReference {
		return []gwv1.ParentReference{{Name: "gw", Namespace: new(gwv1.Namespace("infra")), SectionName: new(gwv1.SectionName(section))}}
	}
	rule := gwv1.HTTPRouteRule{BackendRefs: []gwv1.HTTPBackendRef{toService("", "svc", 80)}}
	o := Objects{GatewayClasses: classes(), Gateways: []*gwv1.Gateway{gw},
		HTTPRoutes: []*gwv1.HTTPRoute{httpRoute("app", "web", parent("web"), nil, rule), httpRoute("app", "other", parent("other"), nil, rule)},
		Ports:      []match.Listener{{Port: 80}, {Port: 443, TLS: true}}}
	tr := TranslateAll(o)
	if len(tr.HTTPRoutes) != 1 || tr.HTTPRoutes[0].Name != "web" || tr.HTTPRoutes[0].Listener != (match.Listener{Port: 80}) {
		t.Fatalf("routes %v", tr.HTTPRoutes)
	}
	g, _ := tr.Status.Gateway(gw, nil, metav1.Now())
	if g == nil || len(g.Status.Listeners) != 2 {
		t.Fatalf("Gateway status %v", g)
	}
	want := []brief{{"Accepted", "False", "PortUnavailable"}, {"Conflicted", "False", "NoConflicts"}, {"ResolvedRefs", "True", "ResolvedRefs"}, {"Programmed", "False", "Invalid"}}
	if got := briefs(g.Status.Listeners[1].Conditions); !slices.Equal(got, want) {
		t.Errorf("listener other: %v, want %v", got, want)
	}
	if got := briefs(g.Status.Listeners[0].Conditions); got[0] != (brief{"Accepted", "True", "Accepted"}) || got[3] != (brief{"Programmed", "True", "Programmed"}) {
		t.Errorf("listener web: %v", got)
	}
	r, _ := tr.Status.HTTPRoute(o.HTTPRoutes[1], metav1.Now())
	if r == nil || briefs(r.Status.Parents[0].Conditions)[0] != (brief{"Accepted", "False", "NoMatchingParent"}) {
		t.Errorf("route other: %v", r)
	}
}

// TestFrontendValidationNotServed: a Gateway asking HTTPS listeners to
// require client certificates (spec.tls.frontend) is not served without
// them: those listeners are not accepted (UnsupportedValue), attach no
// route and serve no certificate, with a warning naming the field; a
// port's own setting replaces the default, and AllowInsecureFallback,
// which accepts connections without a certificate, is served and warned.
func TestFrontendValidationNotServed(t *testing.T) {
	validation := func(mode gwv1.FrontendValidationModeType) *gwv1.FrontendTLSValidation {
		return &gwv1.FrontendTLSValidation{Mode: mode, CACertificateRefs: []gwv1.ObjectReference{{Kind: "ConfigMap", Name: "ca"}}}
	}
	plainPort := https("plain", "plain.example.com", secretRef("", "shop"))
	plainPort.Port = 8443
	fallbackPort := https("fallback", "fallback.example.com", secretRef("", "shop"))
	fallbackPort.Port = 9443
	gw := gateway("infra", "gw", "ours", https("mtls", "mtls.example.com", secretRef("", "shop")), plainPort, fallbackPort,
		listener("http", "", gwv1.NamespacesFromAll))
	gw.Spec.TLS = &gwv1.GatewayTLSConfig{Frontend: &gwv1.FrontendTLSConfig{
		Default: gwv1.TLSConfig{Validation: validation("")},
		PerPort: []gwv1.TLSPortConfig{{Port: 8443}, {Port: 9443, TLS: gwv1.TLSConfig{Validation: validation(gwv1.AllowInsecureFallback)}}},
	}}
	rule := gwv1.HTTPRouteRule{BackendRefs: []gwv1.HTTPBackendRef{toService("", "svc", 80)}}
	route := httpRoute("app", "r", []gwv1.ParentReference{{Name: "gw", Namespace: new(gwv1.Namespace("infra"))}}, nil, rule)
	tr := TranslateAll(Objects{GatewayClasses: classes(), Gateways: []*gwv1.Gateway{gw}, HTTPRoutes: []*gwv1.HTTPRoute{route},
		Secrets: []*corev1.Secret{tlsSecret(t, "infra", "shop", "*.example.com")}})

	var hosts []string
	for _, r := range tr.HTTPRoutes {
		hosts = append(hosts, r.Listener.String()+" "+strings.Join(r.Hostnames, ","))
	}
	if d := cmp.Diff([]string{":80 ", ":8443 tls plain.example.com", ":9443 tls fallback.example.com"}, hosts); d != "" {
		t.Errorf("routes served (-want +got):\n%s", d)
	}
	for _, c := range tr.ListenerCertificates {
		if c.Field == "spec.listeners[0].tls.certificateRefs[0]" {
			t.Errorf("the refused listener's certificate is served: %+v", c)
		}
	}
	type short struct{ Reason, Field string }
	var got []short
	for _, w := range tr.Warnings {
		got = append(got, short{string(w.Reason), w.Field})
	}
	if d := cmp.Diff([]short{{string(Unsupported), "spec.tls.frontend.default.validation"}, {string(Unsupported), "spec.tls.frontend.perPort[1].tls.validation"}}, got); d != "" {
		t.Errorf("warnings (-want +got):\n%s", d)
	}
	g, _ := tr.Status.Gateway(gw, nil, metav1.Now())
	var accepted []brief
	for _, l := range g.Status.Listeners {
		accepted = append(accepted, briefs(l.Conditions)[0])
	}
	if d := cmp.Diff([]brief{{"Accepted", "False", "UnsupportedValue"}, {"Accepted", "True", "Accepted"}, {"Accepted", "True", "Accepted"}, {"Accepted", "True", "Accepted"}}, accepted); d != "" {
		t.Errorf("listeners (-want +got):\n%s", d)
	}
}

// TestGatewayParametersRefNotServed: ramjet reads no parameters, so a
// Gateway whose infrastructure.parametersRef names some is not accepted
// (InvalidParameters, as the API and the suite's
// gateway-invalid-parameters-ref ask) and serves nothing, with a warning
// naming the field; its routes are not attached.
func TestGatewayParametersRefNotServed(t *testing.T) {
	gw := gateway("infra", "gw", "ours", listener("http", "", gwv1.NamespacesFromAll))
	gw.Spec.Infrastructure = &gwv1.GatewayInfrastructure{ParametersRef: &gwv1.LocalParametersReference{Group: "example.com", Kind: "Params", Name: "p"}}
	gw.Generation = 2
	rule := gwv1.HTTPRouteRule{BackendRefs: []gwv1.HTTPBackendRef{toService("", "svc", 80)}}
	route := httpRoute("app", "r", []gwv1.ParentReference{{Name: "gw", Namespace: new(gwv1.Namespace("infra"))}}, nil, rule)
	tr := TranslateAll(Objects{GatewayClasses: classes(), Gateways: []*gwv1.Gateway{gw}, HTTPRoutes: []*gwv1.HTTPRoute{route}})
	if len(tr.HTTPRoutes) != 0 || len(tr.Listeners) != 0 {
		t.Errorf("served: routes %+v, listeners %+v", tr.HTTPRoutes, tr.Listeners)
	}
	if !slices.ContainsFunc(tr.Warnings, func(w compile.Warning) bool {
		return w.Reason == Unsupported && w.Object.Kind == "Gateway" && w.Field == "spec.infrastructure.parametersRef"
	}) {
		t.Errorf("no warning on spec.infrastructure.parametersRef: %v", tr.Warnings)
	}
	now := metav1.Unix(100, 0)
	g, _ := tr.Status.Gateway(gw, nil, now)
	if d := cmp.Diff([]brief{{"Accepted", "False", string(gwv1.GatewayReasonInvalidParameters)}, {"Programmed", "False", "Invalid"}}, briefs(g.Status.Conditions)); d != "" {
		t.Errorf("gateway (-want +got):\n%s", d)
	}
	if c := g.Status.Conditions[0]; c.ObservedGeneration != 2 {
		t.Errorf("observedGeneration %d", c.ObservedGeneration)
	}
	if l := g.Status.Listeners[0]; l.AttachedRoutes != 0 || l.Conditions[len(l.Conditions)-1].Status != metav1.ConditionFalse {
		t.Errorf("listener %+v", l)
	}
	r, _ := tr.Status.HTTPRoute(route, now)
	if c := r.Status.Parents[0].Conditions[0]; c.Status != metav1.ConditionFalse {
		t.Errorf("route accepted: %+v", c)
	}
}

// TestInvalidRouteKindsMessage: the ResolvedRefs message of a listener
// with route kinds it cannot serve names the kinds it does serve, or says
// it serves none.
func TestInvalidRouteKindsMessage(t *testing.T) {
	mixed := listener("mixed", "", gwv1.NamespacesFromAll)
	mixed.AllowedRoutes.Kinds = []gwv1.RouteGroupKind{{Kind: "GRPCRoute"}, {Kind: "TCPRoute"}}
	only := listener("only", "only.example", gwv1.NamespacesFromAll)
	only.AllowedRoutes.Kinds = []gwv1.RouteGroupKind{{Kind: "TCPRoute"}}
	tlsOnly := listener("tls", "", gwv1.NamespacesFromAll)
	tlsOnly.Protocol, tlsOnly.Port, tlsOnly.TLS = gwv1.TLSProtocolType, 443, &gwv1.ListenerTLSConfig{Mode: new(gwv1.TLSModePassthrough)}
	tlsOnly.AllowedRoutes.Kinds = []gwv1.RouteGroupKind{{Kind: "HTTPRoute"}}
	gw := gateway("infra", "gw", "ours", mixed, only, tlsOnly)
	tr := TranslateAll(Objects{GatewayClasses: classes(), Gateways: []*gwv1.Gateway{gw}})
	g, _ := tr.Status.Gateway(gw, nil, metav1.Unix(1, 0))
	for i, want := range []string{
		"route kinds TCPRoute are not served; the listener serves GRPCRoute",
		"route kinds TCPRoute are not served; the listener serves none of the kinds it allows",
		"route kinds HTTPRoute are not served; the listener serves none of the kinds it allows",
	} {
		if m := g.Status.Listeners[i].Conditions[2].Message; m != want {
			t.Errorf("listener %s: %q, want %q", g.Status.Listeners[i].Name, m, want)
		}
	}
}

// TestUnservedGatewayFieldsWarn: Gateway fields that change nothing here
// warn naming the field, never dropped silently (SPEC §20): requested
// addresses, a client certificate for backends, listener TLS options.
func TestUnservedGatewayFieldsWarn(t *testing.T) {
	l := https("https", "a.example.com", secretRef("", "shop"))
	l.TLS.Options = map[gwv1.AnnotationKey]gwv1.AnnotationValue{"example.com/ciphers": "x"}
	gw := gateway("infra", "gw", "ours", listener("http", "", gwv1.NamespacesFromAll), l)
	gw.Spec.Addresses = []gwv1.GatewaySpecAddress{{Type: new(gwv1.IPAddressType), Value: "10.9.9.9"}}
	gw.Spec.TLS = &gwv1.GatewayTLSConfig{Backend: &gwv1.GatewayBackendTLS{ClientCertificateRef: &gwv1.SecretObjectReference{Name: "client"}}}
	tr := TranslateAll(Objects{GatewayClasses: classes(), Gateways: []*gwv1.Gateway{gw}, Secrets: []*corev1.Secret{tlsSecret(t, "infra", "shop", "a.example.com")}})
	var got []string
	for _, w := range tr.Warnings {
		got = append(got, string(w.Reason)+" "+w.Object.String()+" "+w.Field)
	}
	if d := cmp.Diff([]string{
		string(Unsupported) + " Gateway infra/gw spec.addresses",
		string(Unsupported) + " Gateway infra/gw spec.tls.backend.clientCertificateRef",
		string(Unsupported) + " Gateway infra/gw spec.listeners[1].tls.options",
	}, got); d != "" {
		t.Errorf("warnings (-want +got):\n%s", d)
	}
}

// TestUnservedListenerSetsWarn: a Gateway that lets ListenerSets attach
// (spec.allowedListeners from other than None), or that asks to be a
// default Gateway (spec.defaultScope other than None), warns naming the
// field: ramjet serves neither, only the listeners in the Gateway's spec
// and routes that name it. The defaults (None) do not warn.
func TestUnservedListenerSetsWarn(t *testing.T) {
	open := gateway("infra", "open", "ours", listener("http", "", gwv1.NamespacesFromAll))
	open.Spec.AllowedListeners = &gwv1.AllowedListeners{Namespaces: &gwv1.ListenerNamespaces{From: new(gwv1.NamespacesFromAll)}}
	open.Spec.DefaultScope = gwv1.GatewayDefaultScopeAll
	closed := gateway("infra", "closed", "ours", listener("http", "", gwv1.NamespacesFromAll))
	closed.Spec.AllowedListeners = &gwv1.AllowedListeners{Namespaces: &gwv1.ListenerNamespaces{From: new(gwv1.NamespacesFromNone)}}
	closed.Spec.DefaultScope = gwv1.GatewayDefaultScopeNone
	tr := TranslateAll(Objects{GatewayClasses: classes(), Gateways: []*gwv1.Gateway{open, closed}})
	var got []string
	for _, w := range tr.Warnings {
		got = append(got, string(w.Reason)+" "+w.Object.String()+" "+w.Field)
	}
	if d := cmp.Diff([]string{
		string(Unsupported) + " Gateway infra/open spec.allowedListeners.namespaces.from",
		string(Unsupported) + " Gateway infra/open spec.defaultScope",
	}, got); d != "" {
		t.Errorf("warnings (-want +got):\n%s", d)
	}
}

// TestHTTPRouteUnsupportedValue: a value outside the API's enum (a path,
// header or query parameter match type, a filter or path modifier type,
// a redirect scheme or status code), and ReplacePrefixMatch in a rule with
// a match that is not PathPrefix, make the HTTPRoute Accepted False with
// reason UnsupportedValue, as the HTTPRoute API asks of each; so does a
// known value ramjet does not serve (ExtensionRef) on its only rule, which
// answers 500 (TestHTTPRouteUnservedFilterRules).
// backendPrefixRewrite is a backendRef whose URLRewrite replaces the
// prefix a PathPrefix match matched.
var backendPrefixRewrite = gwv1.HTTPBackendRef{BackendRef: toService("", "svc", 80).BackendRef, Filters: []gwv1.HTTPRouteFilter{{Type: gwv1.HTTPRouteFilterURLRewrite,
	URLRewrite: &gwv1.HTTPURLRewriteFilter{Path: &gwv1.HTTPPathModifier{Type: gwv1.PrefixMatchHTTPPathModifier, ReplacePrefixMatch: new("/b")}}}}}

func TestHTTPRouteUnsupportedValue(t *testing.T) {
	parent := []gwv1.ParentReference{{Name: "gw"}}
	gw := gateway("app", "gw", "ours", listener("http", "", gwv1.NamespacesFromSame))
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "app", Name: "svc"}, Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}
	rule := func(m []gwv1.HTTPRouteMatch, fs ...gwv1.HTTPRouteFilter) gwv1.HTTPRouteRule {
		return gwv1.HTTPRouteRule{Matches: m, Filters: fs, BackendRefs: []gwv1.HTTPBackendRef{toService("", "svc", 80)}}
	}
	pathType := gwv1.PathMatchType("Suffix")
	headerType := gwv1.HeaderMatchType("Prefix")
	queryType := gwv1.QueryParamMatchType("Prefix")
	modifier := gwv1.HTTPPathModifierType("ReplaceSuffix")
	redirect := func(rd gwv1.HTTPRequestRedirectFilter) gwv1.HTTPRouteRule {
		return gwv1.HTTPRouteRule{Filters: []gwv1.HTTPRouteFilter{{Type: gwv1.HTTPRouteFilterRequestRedirect, RequestRedirect: &rd}}}
	}
	routes := []*gwv1.HTTPRoute{
		httpRoute("app", "good", parent, nil, rule(nil)),
		httpRoute("app", "path-type", parent, nil, rule([]gwv1.HTTPRouteMatch{{Path: &gwv1.HTTPPathMatch{Type: &pathType, Value: new("/a")}}})),
		httpRoute("app", "header-type", parent, nil, rule([]gwv1.HTTPRouteMatch{{Headers: []gwv1.HTTPHeaderMatch{{Type: &headerType, Name: "v", Value: "1"}}}})),
		httpRoute("app", "query-type", parent, nil, rule([]gwv1.HTTPRouteMatch{{QueryParams: []gwv1.HTTPQueryParamMatch{{Type: &queryType, Name: "v", Value: "1"}}}})),
		httpRoute("app", "filter-type", parent, nil, rule(nil, gwv1.HTTPRouteFilter{Type: "Compress"})),
		httpRoute("app", "modifier-type", parent, nil, rule(nil, gwv1.HTTPRouteFilter{Type: gwv1.HTTPRouteFilterURLRewrite,
			URLRewrite: &gwv1.HTTPURLRewriteFilter{Path: &gwv1.HTTPPathModifier{Type: modifier}}})),
		httpRoute("app", "scheme", parent, nil, redirect(gwv1.HTTPRequestRedirectFilter{Scheme: new("ftp")})),
		httpRoute("app", "status-code", parent, nil, redirect(gwv1.HTTPRequestRedirectFilter{StatusCode: new(305)})),
		// ReplacePrefixMatch beside a match that is not PathPrefix.
		httpRoute("app", "prefix-on-exact", parent, nil, rule([]gwv1.HTTPRouteMatch{{Path: &gwv1.HTTPPathMatch{Type: new(gwv1.PathMatchExact), Value: new("/a")}}},
			gwv1.HTTPRouteFilter{Type: gwv1.HTTPRouteFilterURLRewrite, URLRewrite: &gwv1.HTTPURLRewriteFilter{
				Path: &gwv1.HTTPPathModifier{Type: gwv1.PrefixMatchHTTPPathModifier, ReplacePrefixMatch: new("/b")}}})),
		httpRoute("app", "extension-ref", parent, nil, rule(nil, gwv1.HTTPRouteFilter{Type: gwv1.HTTPRouteFilterExtensionRef,
			ExtensionRef: &gwv1.LocalObjectReference{Group: "example.com", Kind: "Auth", Name: "a"}})),
		// The same ReplacePrefixMatch on a backendRef.
		httpRoute("app", "backend-prefix-on-exact", parent, nil, gwv1.HTTPRouteRule{
			Matches:     []gwv1.HTTPRouteMatch{{Path: &gwv1.HTTPPathMatch{Type: new(gwv1.PathMatchExact), Value: new("/a")}}},
			BackendRefs: []gwv1.HTTPBackendRef{backendPrefixRewrite}}),
	}
	tr := TranslateAll(Objects{GatewayClasses: classes(), Gateways: []*gwv1.Gateway{gw}, HTTPRoutes: routes, Services: []*corev1.Service{svc}})
	now := metav1.Unix(100, 0)
	for _, r := range routes {
		want := brief{"Accepted", "False", status.ReasonUnsupportedValue}
		if r.Name == "good" {
			want = brief{"Accepted", "True", status.ReasonAccepted}
		}
		got, _ := tr.Status.HTTPRoute(r, now)
		if got == nil || len(got.Status.Parents) != 1 {
			t.Fatalf("%s: no status: %+v", r.Name, got)
		}
		if d := cmp.Diff(want, briefs(got.Status.Parents[0].Conditions)[0]); d != "" {
			t.Errorf("%s (-want +got):\n%s", r.Name, d)
		}
	}
}

// TestHTTPRouteRefusedRules: a rule compile refuses as written (a header
// name that is not a token, RequestRedirect beside URLRewrite) answers 500, so the
// status does not say it is served: beside a served rule the route is
// Accepted and PartiallyInvalid ("Dropped Rule", naming the rule); alone
// it is Accepted False, UnsupportedValue. Once valid again, the
// PartiallyInvalid condition written before goes.
func TestHTTPRouteRefusedRules(t *testing.T) {
	parent := []gwv1.ParentReference{{Name: "gw"}}
	gw := gateway("app", "gw", "ours", listener("http", "", gwv1.NamespacesFromSame))
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "app", Name: "svc"}, Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}
	good := gwv1.HTTPRouteRule{BackendRefs: []gwv1.HTTPBackendRef{toService("", "svc", 80)}}
	dollar := gwv1.HTTPRouteRule{Matches: []gwv1.HTTPRouteMatch{{Path: &gwv1.HTTPPathMatch{Value: new("/d")}}},
		Filters: []gwv1.HTTPRouteFilter{{Type: gwv1.HTTPRouteFilterRequestHeaderModifier,
			RequestHeaderModifier: &gwv1.HTTPHeaderFilter{Set: []gwv1.HTTPHeader{{Name: "X A", Value: "b"}}}}},
		BackendRefs: []gwv1.HTTPBackendRef{toService("", "svc", 80)}}
	both := gwv1.HTTPRouteRule{Filters: []gwv1.HTTPRouteFilter{
		{Type: gwv1.HTTPRouteFilterRequestRedirect, RequestRedirect: &gwv1.HTTPRequestRedirectFilter{Scheme: new("https")}},
		{Type: gwv1.HTTPRouteFilterURLRewrite, URLRewrite: &gwv1.HTTPURLRewriteFilter{Hostname: new(gwv1.PreciseHostname("b.example"))}}}}
	routes := []*gwv1.HTTPRoute{
		httpRoute("app", "partly", parent, nil, good, dollar),
		httpRoute("app", "dollar", parent, nil, dollar),
		httpRoute("app", "both", parent, nil, both),
		httpRoute("app", "good", parent, nil, good),
	}
	tr := TranslateAll(Objects{GatewayClasses: classes(), Gateways: []*gwv1.Gateway{gw}, HTTPRoutes: routes, Services: []*corev1.Service{svc}})
	now := metav1.Unix(100, 0)
	want := map[string][]brief{
		"partly": {{"Accepted", "True", status.ReasonAccepted}, {"ResolvedRefs", "True", "ResolvedRefs"}, {"PartiallyInvalid", "True", status.ReasonUnsupportedValue}},
		"dollar": {{"Accepted", "False", status.ReasonUnsupportedValue}, {"ResolvedRefs", "True", "ResolvedRefs"}},
		"both":   {{"Accepted", "False", status.ReasonIncompatibleFilters}, {"ResolvedRefs", "True", "ResolvedRefs"}},
		"good":   {{"Accepted", "True", status.ReasonAccepted}, {"ResolvedRefs", "True", "ResolvedRefs"}},
	}
	for _, r := range routes {
		got, _ := tr.Status.HTTPRoute(r, now)
		if got == nil || len(got.Status.Parents) != 1 {
			t.Fatalf("%s: no status: %+v", r.Name, got)
		}
		cs := got.Status.Parents[0].Conditions
		if d := cmp.Diff(want[r.Name], briefs(cs)); d != "" {
			t.Errorf("%s (-want +got):\n%s", r.Name, d)
		}
		if r.Name == "partly" && len(cs) == 3 && (!strings.HasPrefix(cs[2].Message, "Dropped Rule") || !strings.Contains(cs[2].Message, "spec.rules[1]") ||
			!strings.Contains(cs[0].Message, "spec.rules[1]")) {
			t.Errorf("partly: messages %q, %q: want the dropped rule named", cs[0].Message, cs[2].Message)
		}
		// A route made valid again loses the PartiallyInvalid condition.
		if r.Name == "good" {
			stale := r.DeepCopy()
			stale.Status.Parents = []gwv1.RouteParentStatus{{ParentRef: parent[0], ControllerName: ControllerName, Conditions: append(slices.Clone(got.Status.Parents[0].Conditions),
				metav1.Condition{Type: "PartiallyInvalid", Status: metav1.ConditionTrue, Reason: status.ReasonUnsupportedValue, Message: "Dropped Rule spec.rules[1]"})}}
			next, changed := tr.Status.HTTPRoute(stale, now)
			if !changed || len(next.Status.Parents[0].Conditions) != 2 {
				t.Errorf("good with a stale PartiallyInvalid: changed %t, %+v", changed, next)
			}
		}
	}
}

// TestShadowedAcrossGateways: Gateways share the controller's ports, so a
// listener of one Gateway with a more specific hostname takes that host
// from a route of another Gateway. The route is not served there: it
// warns naming both Gateways, their listeners and the host, and its
// status lists it, in whatever order the objects come. A route that the
// more specific listener also takes is served there and does not warn,
// nor does one shadowed within its own Gateway, by the API's listener
// precedence.
func TestShadowedAcrossGateways(t *testing.T) {
	wide := gateway("app", "wide", "ours", listener("any", "", gwv1.NamespacesFromSame), listener("wild", "*.example.com", gwv1.NamespacesFromSame))
	narrow := gateway("app", "narrow", "ours", listener("shop", "shop.example.com", gwv1.NamespacesFromSame))
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "app", Name: "svc"}, Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}
	rule := gwv1.HTTPRouteRule{BackendRefs: []gwv1.HTTPBackendRef{toService("", "svc", 80)}}
	hosts := []gwv1.Hostname{"shop.example.com", "www.example.com"}
	routes := []*gwv1.HTTPRoute{
		httpRoute("app", "lost", []gwv1.ParentReference{{Name: "wide", SectionName: new(gwv1.SectionName("any"))}}, hosts, rule),
		httpRoute("app", "both", []gwv1.ParentReference{{Name: "wide", SectionName: new(gwv1.SectionName("any"))}, {Name: "narrow"}}, hosts, rule),
		// Within one Gateway, the API's listener precedence.
		httpRoute("app", "own", []gwv1.ParentReference{{Name: "wide", SectionName: new(gwv1.SectionName("any"))}}, []gwv1.Hostname{"a.example.com"}, rule),
	}
	var first []compile.Warning
	for _, o := range []Objects{
		{GatewayClasses: classes(), Gateways: []*gwv1.Gateway{wide, narrow}, HTTPRoutes: routes, Services: []*corev1.Service{svc}},
		{GatewayClasses: classes(), Gateways: []*gwv1.Gateway{narrow, wide}, HTTPRoutes: []*gwv1.HTTPRoute{routes[2], routes[1], routes[0]}, Services: []*corev1.Service{svc}},
	} {
		tr := TranslateAll(o)
		var got []compile.Warning
		for _, w := range tr.Warnings {
			if strings.Contains(w.Message, "more specific") {
				got = append(got, w)
			}
		}
		slices.SortFunc(got, func(a, b compile.Warning) int {
			return strings.Compare(a.Object.Name+a.Field+a.Message, b.Object.Name+b.Field+b.Message)
		})
		if len(got) != 1 || got[0].Object.Name != "lost" || got[0].Field != "spec.parentRefs[0]" {
			t.Fatalf("warnings %+v, want one on lost's spec.parentRefs[0]", got)
		}
		for _, s := range []string{`"shop.example.com"`, "Gateway app/wide", "Gateway app/narrow", "listener any", "listener shop"} {
			if !strings.Contains(got[0].Message, s) {
				t.Errorf("message %q does not name %s", got[0].Message, s)
			}
		}
		if first == nil {
			first = got
		} else if d := cmp.Diff(first, got); d != "" {
			t.Errorf("another order of the objects (-first +then):\n%s", d)
		}
		lost, _ := tr.Status.HTTPRoute(routes[0], metav1.Unix(100, 0))
		if c := lost.Status.Parents[0].Conditions[0]; !strings.Contains(c.Message, "shop.example.com") {
			t.Errorf("lost: Accepted message %q does not list the host", c.Message)
		}
	}
}

// TestHTTPRouteRefusedBackendFilter: a backendRef's header filter compile
// refuses (a name that is not a token) makes that backend's share answer 500; the
// route is served otherwise, and its Accepted message says so.
func TestHTTPRouteRefusedBackendFilter(t *testing.T) {
	gw := gateway("app", "gw", "ours", listener("http", "", gwv1.NamespacesFromSame))
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "app", Name: "svc"}, Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}
	b := toService("", "svc", 80)
	b.Filters = []gwv1.HTTPRouteFilter{{Type: gwv1.HTTPRouteFilterRequestHeaderModifier,
		RequestHeaderModifier: &gwv1.HTTPHeaderFilter{Add: []gwv1.HTTPHeader{{Name: "X A", Value: "b"}}}}}
	r := httpRoute("app", "r", []gwv1.ParentReference{{Name: "gw"}}, nil, gwv1.HTTPRouteRule{BackendRefs: []gwv1.HTTPBackendRef{toService("", "svc", 80), b}})
	tr := TranslateAll(Objects{GatewayClasses: classes(), Gateways: []*gwv1.Gateway{gw}, HTTPRoutes: []*gwv1.HTTPRoute{r}, Services: []*corev1.Service{svc}})
	got, _ := tr.Status.HTTPRoute(r, metav1.Unix(1, 0))
	cs := got.Status.Parents[0].Conditions
	if d := cmp.Diff([]brief{{"Accepted", "True", status.ReasonAccepted}, {"ResolvedRefs", "True", "ResolvedRefs"}}, briefs(cs)); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	if !strings.Contains(cs[0].Message, "spec.rules[0].backendRefs[1]") {
		t.Errorf("Accepted message %q does not name the backend whose share answers 500", cs[0].Message)
	}
}

// TestHTTPRouteRefusedMatches: a match compile refuses (a path or header
// pattern that does not compile) is not served, and a mirror whose share
// is more than every request refuses its rule (it answers 500); the
// status says so rather than "the route is served": a refused match of a
// rule with another match is listed in the Accepted message, a rule
// whose every match is refused is a dropped rule (PartiallyInvalid), and
// a route with nothing left is not accepted.
func TestHTTPRouteRefusedMatches(t *testing.T) {
	parent := []gwv1.ParentReference{{Name: "gw"}}
	gw := gateway("app", "gw", "ours", listener("http", "", gwv1.NamespacesFromSame))
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "app", Name: "svc"}, Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}
	badPath := gwv1.HTTPRouteMatch{Path: &gwv1.HTTPPathMatch{Type: new(gwv1.PathMatchRegularExpression), Value: new("/a(")}}
	badHeader := gwv1.HTTPRouteMatch{Headers: []gwv1.HTTPHeaderMatch{{Type: new(gwv1.HeaderMatchRegularExpression), Name: "X-A", Value: "b("}}}
	goodMatch := gwv1.HTTPRouteMatch{Path: &gwv1.HTTPPathMatch{Value: new("/ok")}}
	backends := []gwv1.HTTPBackendRef{toService("", "svc", 80)}
	good := gwv1.HTTPRouteRule{BackendRefs: backends}
	oneBad := gwv1.HTTPRouteRule{Matches: []gwv1.HTTPRouteMatch{badPath, goodMatch}, BackendRefs: backends}
	allBad := gwv1.HTTPRouteRule{Matches: []gwv1.HTTPRouteMatch{badPath, badHeader}, BackendRefs: backends}
	mirror := gwv1.HTTPRouteRule{Matches: []gwv1.HTTPRouteMatch{{Path: &gwv1.HTTPPathMatch{Value: new("/m")}}}, BackendRefs: backends,
		Filters: []gwv1.HTTPRouteFilter{{Type: gwv1.HTTPRouteFilterRequestMirror, RequestMirror: &gwv1.HTTPRequestMirrorFilter{
			BackendRef: gwv1.BackendObjectReference{Name: "svc", Port: new(gwv1.PortNumber(80))}, Fraction: &gwv1.Fraction{Numerator: 3, Denominator: new(int32(2))}}}}}
	routes := []*gwv1.HTTPRoute{
		httpRoute("app", "one-bad", parent, nil, oneBad),
		httpRoute("app", "all-bad", parent, nil, good, allBad),
		httpRoute("app", "mirror", parent, nil, good, mirror),
		httpRoute("app", "nothing", parent, nil, allBad),
	}
	tr := TranslateAll(Objects{GatewayClasses: classes(), Gateways: []*gwv1.Gateway{gw}, HTTPRoutes: routes, Services: []*corev1.Service{svc}})
	ok := []brief{{"Accepted", "True", status.ReasonAccepted}, {"ResolvedRefs", "True", "ResolvedRefs"}}
	partly := append(slices.Clone(ok), brief{"PartiallyInvalid", "True", status.ReasonUnsupportedValue})
	want := map[string]struct {
		briefs []brief
		names  string // in the Accepted message, or PartiallyInvalid's when there is one
	}{
		"one-bad": {ok, "spec.rules[0].matches[0]"},
		"all-bad": {partly, "spec.rules[1]"},
		"mirror":  {partly, "spec.rules[1]"},
		"nothing": {[]brief{{"Accepted", "False", status.ReasonUnsupportedValue}, {"ResolvedRefs", "True", "ResolvedRefs"}}, "spec.rules[0]"},
	}
	for _, r := range routes {
		got, _ := tr.Status.HTTPRoute(r, metav1.Unix(1, 0))
		if got == nil || len(got.Status.Parents) != 1 {
			t.Fatalf("%s: no status: %+v", r.Name, got)
		}
		cs := got.Status.Parents[0].Conditions
		w := want[r.Name]
		if d := cmp.Diff(w.briefs, briefs(cs)); d != "" {
			t.Errorf("%s (-want +got):\n%s", r.Name, d)
			continue
		}
		if msg := cs[len(cs)-1].Message; len(cs) == 2 && !strings.Contains(cs[0].Message, w.names) || len(cs) == 3 && !strings.Contains(msg, w.names) {
			t.Errorf("%s: messages %+v do not name %s", r.Name, cs, w.names)
		}
	}
}

// TestShadowedRouteNotCounted: a route whose every host on a listener is
// taken by another Gateway's more specific listener is not served there,
// so that listener's attachedRoutes does not count it; a route with a
// host still served there is counted.
func TestShadowedRouteNotCounted(t *testing.T) {
	wide := gateway("app", "wide", "ours", listener("any", "", gwv1.NamespacesFromSame))
	narrow := gateway("app", "narrow", "ours", listener("shop", "shop.example.com", gwv1.NamespacesFromSame))
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "app", Name: "svc"}, Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}
	rule := gwv1.HTTPRouteRule{BackendRefs: []gwv1.HTTPBackendRef{toService("", "svc", 80)}}
	routes := []*gwv1.HTTPRoute{
		httpRoute("app", "lost", []gwv1.ParentReference{{Name: "wide"}}, []gwv1.Hostname{"shop.example.com"}, rule),
		httpRoute("app", "kept", []gwv1.ParentReference{{Name: "wide"}}, []gwv1.Hostname{"shop.example.com", "www.example.com"}, rule),
	}
	tr := TranslateAll(Objects{GatewayClasses: classes(), Gateways: []*gwv1.Gateway{wide, narrow}, HTTPRoutes: routes, Services: []*corev1.Service{svc}})
	g, _ := tr.Status.Gateway(wide, nil, metav1.Unix(1, 0))
	if g == nil {
		t.Fatal("no status for Gateway wide")
	}
	if n := g.Status.Listeners[0].AttachedRoutes; n != 1 {
		t.Errorf("attachedRoutes of listener any: %d, want 1 (kept; lost's every host is listener shop's)", n)
	}
}

// TestHTTPRouteMethodOutsideEnum: a method match outside the API's enum
// ("get", "PURGE") is not served (its match is left out, warning on the
// field) and the route is not accepted, UnsupportedValue, as for the
// other enum values; and a route whose rules are all refused for
// RequestRedirect beside URLRewrite is not accepted with reason
// IncompatibleFilters, which the API names for that.
func TestHTTPRouteMethodOutsideEnum(t *testing.T) {
	parent := []gwv1.ParentReference{{Name: "gw"}}
	gw := gateway("app", "gw", "ours", listener("http", "", gwv1.NamespacesFromSame))
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "app", Name: "svc"}, Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}
	rule := gwv1.HTTPRouteRule{Matches: []gwv1.HTTPRouteMatch{{Method: new(gwv1.HTTPMethod("get"))}, {Method: new(gwv1.HTTPMethodPost)}},
		BackendRefs: []gwv1.HTTPBackendRef{toService("", "svc", 80)}}
	both := gwv1.HTTPRouteRule{Filters: []gwv1.HTTPRouteFilter{
		{Type: gwv1.HTTPRouteFilterRequestRedirect, RequestRedirect: &gwv1.HTTPRequestRedirectFilter{Scheme: new("https")}},
		{Type: gwv1.HTTPRouteFilterURLRewrite, URLRewrite: &gwv1.HTTPURLRewriteFilter{Hostname: new(gwv1.PreciseHostname("b.example"))}}}}
	r := httpRoute("app", "r", parent, nil, rule)
	inc := httpRoute("app", "both", parent, nil, both)
	tr := TranslateAll(Objects{GatewayClasses: classes(), Gateways: []*gwv1.Gateway{gw}, HTTPRoutes: []*gwv1.HTTPRoute{r, inc}, Services: []*corev1.Service{svc}})
	got, _ := tr.Status.HTTPRoute(r, metav1.Unix(1, 0))
	c := got.Status.Parents[0].Conditions[0]
	if c.Status != metav1.ConditionFalse || c.Reason != status.ReasonUnsupportedValue || !strings.Contains(c.Message, "spec.rules[0].matches[0].method") {
		t.Errorf("Accepted %s %s %q, want False UnsupportedValue naming spec.rules[0].matches[0].method", c.Status, c.Reason, c.Message)
	}
	warned := slices.ContainsFunc(tr.Warnings, func(w compile.Warning) bool {
		return w.Object.Name == "r" && w.Field == "spec.rules[0].matches[0].method"
	})
	if !warned {
		t.Errorf("no warning on spec.rules[0].matches[0].method: %+v", tr.Warnings)
	}
	for _, hr := range tr.HTTPRoutes {
		if hr.Name == "r" && slices.ContainsFunc(hr.Rules[0].Matches, func(m compile.HTTPRouteMatch) bool { return m.Method == "get" }) {
			t.Errorf("method \"get\" is served: %+v", hr.Rules[0].Matches)
		}
	}
	got, _ = tr.Status.HTTPRoute(inc, metav1.Unix(1, 0))
	if c := got.Status.Parents[0].Conditions[0]; c.Status != metav1.ConditionFalse || c.Reason != "IncompatibleFilters" {
		t.Errorf("both: Accepted %s %s %q, want False IncompatibleFilters", c.Status, c.Reason, c.Message)
	}
}

// TestHTTPRouteUnservedFilterRules: a rule with a filter the translation
// does not serve (ExternalAuth, ExtensionRef), one type given twice, or a
// path modifier without its value answers 500, so the status does not say
// it is served: beside a served rule the route is PartiallyInvalid ("Dropped
// Rule", naming the rule, listed once in the Accepted message too); alone
// it is Accepted False, UnsupportedValue.
func TestHTTPRouteUnservedFilterRules(t *testing.T) {
	parent := []gwv1.ParentReference{{Name: "gw"}}
	gw := gateway("app", "gw", "ours", listener("http", "", gwv1.NamespacesFromSame))
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "app", Name: "svc"}, Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}
	backends := []gwv1.HTTPBackendRef{toService("", "svc", 80)}
	good := gwv1.HTTPRouteRule{BackendRefs: backends}
	withFilters := func(fs ...gwv1.HTTPRouteFilter) gwv1.HTTPRouteRule {
		return gwv1.HTTPRouteRule{Matches: []gwv1.HTTPRouteMatch{{Path: &gwv1.HTTPPathMatch{Value: new("/f")}}}, Filters: fs, BackendRefs: backends}
	}
	extAuth := withFilters(gwv1.HTTPRouteFilter{Type: gwv1.HTTPRouteFilterExternalAuth, ExternalAuth: &gwv1.HTTPExternalAuthFilter{
		ExternalAuthProtocol: gwv1.HTTPRouteExternalAuthHTTPProtocol, BackendRef: gwv1.BackendObjectReference{Name: "svc", Port: new(gwv1.PortNumber(80))}}})
	extRef := withFilters(gwv1.HTTPRouteFilter{Type: gwv1.HTTPRouteFilterExtensionRef, ExtensionRef: &gwv1.LocalObjectReference{Group: "example.com", Kind: "Auth", Name: "a"}})
	header := gwv1.HTTPRouteFilter{Type: gwv1.HTTPRouteFilterRequestHeaderModifier, RequestHeaderModifier: &gwv1.HTTPHeaderFilter{Set: []gwv1.HTTPHeader{{Name: "X-A", Value: "b"}}}}
	twice := withFilters(header, header)
	noValue := withFilters(gwv1.HTTPRouteFilter{Type: gwv1.HTTPRouteFilterURLRewrite, URLRewrite: &gwv1.HTTPURLRewriteFilter{Path: &gwv1.HTTPPathModifier{Type: gwv1.FullPathHTTPPathModifier}}})
	routes := []*gwv1.HTTPRoute{
		httpRoute("app", "ext-auth", parent, nil, good, extAuth),
		httpRoute("app", "twice", parent, nil, good, twice),
		httpRoute("app", "no-value", parent, nil, good, noValue),
		httpRoute("app", "ext-ref-only", parent, nil, extRef),
	}
	tr := TranslateAll(Objects{GatewayClasses: classes(), Gateways: []*gwv1.Gateway{gw}, HTTPRoutes: routes, Services: []*corev1.Service{svc}})
	ok := []brief{{"Accepted", "True", status.ReasonAccepted}, {"ResolvedRefs", "True", "ResolvedRefs"}}
	partly := append(slices.Clone(ok), brief{"PartiallyInvalid", "True", status.ReasonUnsupportedValue})
	want := map[string][]brief{
		"ext-auth":     partly,
		"twice":        partly,
		"no-value":     partly,
		"ext-ref-only": {{"Accepted", "False", status.ReasonUnsupportedValue}, {"ResolvedRefs", "True", "ResolvedRefs"}},
	}
	for _, r := range routes {
		got, _ := tr.Status.HTTPRoute(r, metav1.Unix(1, 0))
		if got == nil || len(got.Status.Parents) != 1 {
			t.Fatalf("%s: no status: %+v", r.Name, got)
		}
		cs := got.Status.Parents[0].Conditions
		if d := cmp.Diff(want[r.Name], briefs(cs)); d != "" {
			t.Errorf("%s (-want +got):\n%s", r.Name, d)
			continue
		}
		rule := "spec.rules[1]"
		if r.Name == "ext-ref-only" {
			rule = "spec.rules[0]"
		}
		dropped := cs[0].Message // Accepted False's, or PartiallyInvalid's
		if len(cs) == 3 {
			dropped = cs[2].Message
		}
		if !strings.Contains(dropped, rule+" (") || !strings.Contains(cs[0].Message, rule) {
			t.Errorf("%s: messages %q, %q do not name the dropped rule %s", r.Name, cs[0].Message, dropped, rule)
		}
		if n := strings.Count(cs[0].Message, rule+".filters["); n != 1 {
			t.Errorf("%s: Accepted message %q names the filter %d times, want once", r.Name, cs[0].Message, n)
		}
	}
	// The dropped rules still answer 500, not another rule's backend.
	rt := router.New(router.Options{Logger: slog.New(slog.DiscardHandler), Transport: recorder{}})
	rt.Publish(compile.Compile(compile.Snapshot{HTTPRoutes: tr.HTTPRoutes, Services: []*corev1.Service{svc}}, compile.Options{}).Table)
	if got := serve(rt, "http", "a.example", "/f"); !strings.HasPrefix(got, "500") {
		t.Errorf("GET /f: %s, want 500", got)
	}
}

// TestListenerWithoutHostnameLeavesTakenHostsCertificate: a listener
// without a hostname offers its certificate for its routes' hostnames,
// but not for one that a more specific listener on the port takes
// (listener precedence): a connection naming it is that listener's, so
// it gets that listener's certificate, even when the listener without a
// hostname comes first in the Gateway or belongs to an older Gateway.
func TestListenerWithoutHostnameLeavesTakenHostsCertificate(t *testing.T) {
	older := gateway("infra", "older", "ours", https("any", "", secretRef("", "wide")), https("shop", "shop.example.com", secretRef("", "shop")))
	older.CreationTimestamp = metav1.Unix(1, 0)
	newer := gateway("infra", "newer", "ours", https("api", "api.example.com", secretRef("", "api")))
	newer.CreationTimestamp = metav1.Unix(9, 0)
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "app", Name: "svc"}, Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}
	rule := gwv1.HTTPRouteRule{BackendRefs: []gwv1.HTTPBackendRef{toService("", "svc", 80)}}
	// No sectionName: attached to both of older's listeners.
	route := httpRoute("app", "r", []gwv1.ParentReference{{Name: "older", Namespace: new(gwv1.Namespace("infra"))}},
		[]gwv1.Hostname{"shop.example.com", "api.example.com", "www.example.com"}, rule)
	secrets := []*corev1.Secret{tlsSecret(t, "infra", "wide", "*.example.com"), tlsSecret(t, "infra", "shop", "shop.example.com"),
		tlsSecret(t, "infra", "api", "api.example.com")}
	tr := TranslateAll(Objects{GatewayClasses: classes(), Gateways: []*gwv1.Gateway{older, newer}, HTTPRoutes: []*gwv1.HTTPRoute{route},
		Services: []*corev1.Service{svc}, Secrets: secrets})
	snap := compile.Snapshot{Services: []*corev1.Service{svc}, Secrets: secrets}
	tr.AddTo(&snap)
	res := compile.Compile(snap, compile.Options{})
	got := map[string]string{}
	for c := range res.Table.Certificates() {
		for _, h := range c.Hosts {
			got[h] = c.Secret
		}
	}
	want := map[string]string{
		match.AnyName:      "infra/wide",
		"www.example.com":  "infra/wide",
		"shop.example.com": "infra/shop",
		"api.example.com":  "infra/api",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("certificates by host (-want +got):\n%s", d)
	}
}

// TestOverlappingTLSConfig: HTTPS listeners of one Gateway on one port
// whose hostnames overlap (one matches a name the other does) carry
// OverlappingTLSConfig True, reason OverlappingHostnames, as the API
// asks of every controller (ListenerConditionOverlappingTLSConfig): a
// client that coalesces connections may reuse one listener's TLS
// session for the other's names. The others do not carry it, and one
// written earlier goes once the overlap does, the condition being set
// only True.
func TestOverlappingTLSConfig(t *testing.T) {
	gw := gateway("infra", "gw", "ours",
		https("a", "foo.example.com", secretRef("", "cert")),
		https("b", "foo.example.org", secretRef("", "cert")),
		https("c", "*.example.com", secretRef("", "cert")),
		listener("http", "foo.example.org", gwv1.NamespacesFromAll))
	gw.Spec.Listeners[3].Hostname = new(gwv1.Hostname("*.example.org"))
	secrets := []*corev1.Secret{tlsSecret(t, "infra", "cert", "foo.example.com", "foo.example.org", "*.example.com")}
	tr := TranslateAll(Objects{GatewayClasses: classes(), Gateways: []*gwv1.Gateway{gw}, Secrets: secrets})
	g, _ := tr.Status.Gateway(gw, nil, metav1.Unix(1, 0))
	if g == nil {
		t.Fatal("no status for Gateway gw")
	}
	overlapping := func(ls gwv1.ListenerStatus) *metav1.Condition {
		for i, c := range ls.Conditions {
			if c.Type == "OverlappingTLSConfig" {
				return &ls.Conditions[i]
			}
		}
		return nil
	}
	for _, ls := range g.Status.Listeners {
		c := overlapping(ls)
		switch ls.Name {
		case "a", "c":
			other := map[gwv1.SectionName]string{"a": "c", "c": "a"}[ls.Name]
			if c == nil || c.Status != metav1.ConditionTrue || c.Reason != "OverlappingHostnames" || !strings.Contains(c.Message, "listener "+other) {
				t.Errorf("listener %s: OverlappingTLSConfig %+v, want True OverlappingHostnames naming listener %s", ls.Name, c, other)
			}
		default:
			if c != nil {
				t.Errorf("listener %s: OverlappingTLSConfig %+v, want none", ls.Name, c)
			}
		}
	}
	// The overlap goes: so does the condition written for it.
	gw2 := gw.DeepCopy()
	gw2.Spec.Listeners[2].Hostname = new(gwv1.Hostname("*.example.net"))
	gw2.Status = g.Status
	tr = TranslateAll(Objects{GatewayClasses: classes(), Gateways: []*gwv1.Gateway{gw2}, Secrets: secrets})
	g2, changed := tr.Status.Gateway(gw2, nil, metav1.Unix(2, 0))
	if !changed {
		t.Fatal("no new status once the overlap is gone")
	}
	for _, ls := range g2.Status.Listeners {
		if c := overlapping(ls); c != nil {
			t.Errorf("listener %s keeps OverlappingTLSConfig %+v once the overlap is gone", ls.Name, c)
		}
	}
}

// TestCertificateRefOfAnotherGroup: a certificateRef of kind Secret in
// another API group is refused (InvalidCertificateRef), and the condition
// and the warning name the group, not only the kind, which alone reads as
// a core Secret refused for being one.
func TestCertificateRefOfAnotherGroup(t *testing.T) {
	ref := secretRef("", "cert")
	ref.Group = new(gwv1.Group("wrong.group.company.io"))
	gw := gateway("infra", "gw", "ours", https("https", "a.example.com", ref))
	tr := TranslateAll(Objects{GatewayClasses: classes(), Gateways: []*gwv1.Gateway{gw}, Secrets: []*corev1.Secret{tlsSecret(t, "infra", "cert", "a.example.com")}})
	g, _ := tr.Status.Gateway(gw, nil, metav1.Unix(1, 0))
	if g == nil {
		t.Fatal("no status for Gateway gw")
	}
	var c metav1.Condition
	for _, x := range g.Status.Listeners[0].Conditions {
		if x.Type == "ResolvedRefs" {
			c = x
		}
	}
	if c.Reason != status.ReasonInvalidCertificateRef || !strings.Contains(c.Message, `"wrong.group.company.io"`) {
		t.Errorf("ResolvedRefs %s %q, want InvalidCertificateRef naming group \"wrong.group.company.io\"", c.Reason, c.Message)
	}
	if len(tr.Warnings) != 1 || !strings.Contains(tr.Warnings[0].Message, `"wrong.group.company.io"`) {
		t.Errorf("warnings %v, want one naming group \"wrong.group.company.io\"", tr.Warnings)
	}
}

// TestListenerWithoutHostnameOffersOnlyServedRoutesHosts: a listener
// without a hostname offers its certificate by name for the hosts of the
// routes it serves. A route none of whose rules is served (here
// IncompatibleFilters) serves nothing there, so its hostname is not named;
// one not Accepted for a value outside the API's enums still serves its
// other rules, so its hostname is.
func TestListenerWithoutHostnameOffersOnlyServedRoutesHosts(t *testing.T) {
	gw := gateway("infra", "gw", "ours", https("any", "", secretRef("", "wide")))
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "app", Name: "svc"}, Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}
	parent := []gwv1.ParentReference{{Name: "gw", Namespace: new(gwv1.Namespace("infra"))}}
	good := gwv1.HTTPRouteRule{BackendRefs: []gwv1.HTTPBackendRef{toService("", "svc", 80)}}
	ok := httpRoute("app", "ok", parent, []gwv1.Hostname{"ok.example.com"}, good)
	badValue := httpRoute("app", "bad-value", parent, []gwv1.Hostname{"bad-value.example.com"}, good,
		gwv1.HTTPRouteRule{BackendRefs: good.BackendRefs, Filters: []gwv1.HTTPRouteFilter{{Type: "Bogus"}}})
	none := httpRoute("app", "none", parent, []gwv1.Hostname{"none.example.com"}, gwv1.HTTPRouteRule{Filters: []gwv1.HTTPRouteFilter{
		{Type: gwv1.HTTPRouteFilterRequestRedirect, RequestRedirect: &gwv1.HTTPRequestRedirectFilter{Scheme: new("https")}},
		{Type: gwv1.HTTPRouteFilterURLRewrite, URLRewrite: &gwv1.HTTPURLRewriteFilter{Hostname: new(gwv1.PreciseHostname("b.example"))}}}})
	tr := TranslateAll(Objects{GatewayClasses: classes(), Gateways: []*gwv1.Gateway{gw}, HTTPRoutes: []*gwv1.HTTPRoute{ok, badValue, none},
		Services: []*corev1.Service{svc}, Secrets: []*corev1.Secret{tlsSecret(t, "infra", "wide", "*.example.com")}})
	for r, reason := range map[*gwv1.HTTPRoute]string{badValue: status.ReasonUnsupportedValue, none: status.ReasonIncompatibleFilters} {
		got, _ := tr.Status.HTTPRoute(r, metav1.Unix(1, 0))
		if c := got.Status.Parents[0].Conditions[0]; c.Status != metav1.ConditionFalse || c.Reason != reason {
			t.Fatalf("%s: Accepted %s %s, want False %s", r.Name, c.Status, c.Reason, reason)
		}
	}
	var hosts [][]string
	for _, c := range tr.ListenerCertificates {
		hosts = append(hosts, c.Hosts)
	}
	if d := cmp.Diff([][]string{{match.AnyName, "bad-value.example.com", "ok.example.com"}}, hosts); d != "" {
		t.Errorf("listener certificate hosts (-want +got):\n%s", d)
	}
}
