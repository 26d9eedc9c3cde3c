package gatewayapi

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"ramjet.dev/ramjet/status"
)

// TestGatewayAddresses: a Gateway's spec.addresses must be answered in
// its conditions when they cannot be honoured (GatewaySpec.Addresses, the
// suite's gateway-static-addresses.go): an address of a type ramjet does
// not support makes the Gateway not accepted (UnsupportedAddress), and
// serves nothing; an IPAddress or Hostname that is not among the
// controller's addresses leaves it accepted but not Programmed
// (AddressNotUsable), naming the address; one that is, is Programmed.
func TestGatewayAddresses(t *testing.T) {
	addr := func(typ gwv1.AddressType, v string) gwv1.GatewaySpecAddress {
		return gwv1.GatewaySpecAddress{Type: new(typ), Value: v}
	}
	typed := gateway("app", "typed", "ours", listener("http", "typed.test", gwv1.NamespacesFromSame))
	typed.Spec.Addresses = []gwv1.GatewaySpecAddress{addr("test/fake-invalid-type", "x"), addr(gwv1.IPAddressType, "10.0.0.1")}
	static := gateway("app", "static", "ours", listener("http", "static.test", gwv1.NamespacesFromSame))
	static.Spec.Addresses = []gwv1.GatewaySpecAddress{{Value: "10.9.9.9"}} // IPAddress by default
	named := gateway("app", "named", "ours", listener("http", "named.test", gwv1.NamespacesFromSame))
	named.Spec.Addresses = []gwv1.GatewaySpecAddress{addr(gwv1.HostnameAddressType, "lb.example.net")}
	rule := gwv1.HTTPRouteRule{BackendRefs: []gwv1.HTTPBackendRef{toService("", "svc", 80)}}
	routes := []*gwv1.HTTPRoute{
		httpRoute("app", "on-typed", []gwv1.ParentReference{{Name: "typed"}}, nil, rule),
		httpRoute("app", "on-static", []gwv1.ParentReference{{Name: "static"}}, nil, rule),
	}
	tr := TranslateAll(Objects{GatewayClasses: classes(), Gateways: []*gwv1.Gateway{typed, static, named}, HTTPRoutes: routes})
	for _, hr := range tr.HTTPRoutes {
		if hr.Name == "on-typed" {
			t.Errorf("route on-typed is served on %v, but its Gateway is not accepted", hr.Hostnames)
		}
	}
	ip := []gwv1.GatewayStatusAddress{{Type: new(gwv1.IPAddressType), Value: "10.0.0.1"}}
	for _, c := range []struct {
		gw        *gwv1.Gateway
		addresses []gwv1.GatewayStatusAddress
		want      []brief
		names     string // in the message of the condition that is not healthy
	}{
		{typed, ip, []brief{{"Accepted", "False", string(gwv1.GatewayReasonUnsupportedAddress)}, {"Programmed", "False", "Invalid"}}, "test/fake-invalid-type"},
		{static, ip, []brief{{"Accepted", "True", "Accepted"}, {"Programmed", "False", string(gwv1.GatewayReasonAddressNotUsable)}}, "10.9.9.9"},
		{static, []gwv1.GatewayStatusAddress{{Type: new(gwv1.IPAddressType), Value: "10.9.9.9"}}, []brief{{"Accepted", "True", "Accepted"}, {"Programmed", "True", "Programmed"}}, ""},
		{named, ip, []brief{{"Accepted", "True", "Accepted"}, {"Programmed", "False", string(gwv1.GatewayReasonAddressNotUsable)}}, "lb.example.net"},
		{named, []gwv1.GatewayStatusAddress{{Type: new(gwv1.HostnameAddressType), Value: "lb.example.net"}}, []brief{{"Accepted", "True", "Accepted"}, {"Programmed", "True", "Programmed"}}, ""},
	} {
		got, _ := tr.Status.Gateway(c.gw, c.addresses, metav1.Unix(1, 0))
		if got == nil {
			t.Fatalf("%s: no status", c.gw.Name)
		}
		if d := cmp.Diff(c.want, briefs(got.Status.Conditions)); d != "" {
			t.Errorf("%s with %v (-want +got):\n%s", c.gw.Name, c.addresses[0].Value, d)
			continue
		}
		for _, cd := range got.Status.Conditions {
			if cd.Status == metav1.ConditionFalse && cd.Reason != status.ReasonInvalid && !strings.Contains(cd.Message, c.names) {
				t.Errorf("%s: %s message %q does not name %s", c.gw.Name, cd.Type, cd.Message, c.names)
			}
		}
		// Decided again on what was written: no change.
		if _, again := tr.Status.Gateway(got, nil, metav1.Unix(2, 0)); again {
			t.Errorf("%s: an unchanged decision is written again", c.gw.Name)
		}
	}
}
