package gatewayapi

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"ramjet.dev/ramjet/match"
)

// TestPassthroughPorts: a TLS passthrough listener is served on the
// Gateway port the controller's TLS listener serves (--gateway-https-port)
// and nowhere else. On another port, or on the plain-HTTP one, it is not
// Accepted (PortUnavailable), the condition names the ports served, and
// its TLSRoutes are not served; the HTTPS port's listener beside it is.
func TestPassthroughPorts(t *testing.T) {
	pass := func(name string, port gwv1.PortNumber) gwv1.Listener {
		return gwv1.Listener{Name: gwv1.SectionName(name), Port: port, Protocol: gwv1.TLSProtocolType, Hostname: new(gwv1.Hostname("*.tls.test")),
			TLS: &gwv1.ListenerTLSConfig{Mode: new(gwv1.TLSModePassthrough)}}
	}
	gw := gateway("infra", "gw", "ours", pass("https-port", 443), pass("other-port", 8443), pass("http-port", 80))
	var b gwv1.BackendRef
	b.Name, b.Port = "db", new(gwv1.PortNumber(80))
	route := func(section string) *gwv1.TLSRoute {
		return &gwv1.TLSRoute{ObjectMeta: metav1.ObjectMeta{Namespace: "infra", Name: section},
			Spec: gwv1.TLSRouteSpec{CommonRouteSpec: gwv1.CommonRouteSpec{ParentRefs: []gwv1.ParentReference{{Name: "gw", SectionName: new(gwv1.SectionName(section))}}},
				Hostnames: []gwv1.Hostname{"db.tls.test"}, Rules: []gwv1.TLSRouteRule{{BackendRefs: []gwv1.BackendRef{b}}}}}
	}
	tr := TranslateAll(Objects{GatewayClasses: classes(), Gateways: []*gwv1.Gateway{gw},
		TLSRoutes: []*gwv1.TLSRoute{route("https-port"), route("other-port"), route("http-port")},
		Ports:     []match.Listener{{Port: 80}, {Port: 443, TLS: true}}})
	if len(tr.TLSRoutes) != 1 || tr.TLSRoutes[0].Name != "https-port" || tr.TLSRoutes[0].Listener != (match.Listener{Port: 443, TLS: true}) {
		t.Fatalf("TLS routes %+v", tr.TLSRoutes)
	}
	g, _ := tr.Status.Gateway(gw, nil, metav1.Now())
	if g == nil || len(g.Status.Listeners) != 3 {
		t.Fatalf("Gateway status %v", g)
	}
	if c := g.Status.Listeners[0].Conditions[0]; c.Type != "Accepted" || c.Status != metav1.ConditionTrue {
		t.Errorf("listener on the HTTPS port: %+v", c)
	}
	for i, want := range []string{"HTTPS and TLS passthrough on 443", "port 80 is its plain-HTTP listener"} {
		c := g.Status.Listeners[i+1].Conditions[0]
		if c.Type != "Accepted" || c.Status != metav1.ConditionFalse || c.Reason != "PortUnavailable" || !strings.Contains(c.Message, want) {
			t.Errorf("listener %s: %+v, want PortUnavailable saying %q", g.Status.Listeners[i+1].Name, c, want)
		}
	}
}
