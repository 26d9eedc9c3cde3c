package main

import (
	"log/slog"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"ramjet.dev/ramjet/compile"
	"ramjet.dev/ramjet/match"
)

// modsecurity-transaction-id fills its variables and keeps others as
// written.
func TestTransactionID(t *testing.T) {
	req := httptest.NewRequest("GET", "/", nil)
	req.Host = "Shop.Example"
	req.RemoteAddr = "192.0.2.9:1234"
	req.Header.Set("X-Request-Id", "abc")
	req.Header.Set("X-Tenant", "blue")
	assert.Equal(t, "abc-shop.example-192.0.2.9-blue-$msec-$", transactionID("$request_id-$host-$remote_addr-${http_x_tenant}-$msec-$", req))
}

// A modsecurity-transaction-id ingress-nginx's validator refuses
// (parser.NGINXVariable: letters, digits, -, _, $, { and }, spaces
// aside) is not applied there, and the transaction takes the default ID;
// the Ingress is warned about, naming the annotation.
func TestTransactionIDInvalid(t *testing.T) {
	ms := newModSecurity(config{}, slog.New(slog.DiscardHandler))
	for v, want := range map[string]string{"waf-$request_id": "waf-$request_id", "${host} _x": "${host} _x", "id:$request_id": "", "a.b": ""} {
		table := wafTable(t, map[string]string{"enable-modsecurity": "true", "modsecurity-transaction-id": v})
		warns := ms.prepare(modSecuritySettings{}, table)
		n := 0
		for vh := range table.VirtualHosts() {
			require.NotNil(t, vh.Fallback, "the Ingress's default backend")
			_, _, got := ms.state.Load().location(vh.FallbackLocation.Extensions)
			assert.Equal(t, want, got, v)
			n++
		}
		require.Equal(t, 1, n)
		if want == "" {
			require.Len(t, warns, 1, v)
			assert.Equal(t, compile.AnnotationRejected, warns[0].Reason)
			assert.Equal(t, "metadata.annotations[nginx.ingress.kubernetes.io/modsecurity-transaction-id]", warns[0].Field)
			assert.Equal(t, "t/shop", warns[0].Object.Namespace+"/"+warns[0].Object.Name)
		} else {
			assert.Empty(t, warns, v)
		}
	}
}

// wafTable compiles one Ingress, t/shop, with annotations (their nginx
// keys) and a Service without endpoints.
func wafTable(t *testing.T, annotations map[string]string) *match.Table {
	t.Helper()
	class := "ramjet"
	ann := map[string]string{}
	for k, v := range annotations {
		ann[compile.NginxPrefix+k] = v
	}
	ing := &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Namespace: "t", Name: "shop", Annotations: ann},
		Spec: networkingv1.IngressSpec{IngressClassName: &class, DefaultBackend: &networkingv1.IngressBackend{
			Service: &networkingv1.IngressServiceBackend{Name: "app", Port: networkingv1.ServiceBackendPort{Number: 80}}}},
	}
	ic := &networkingv1.IngressClass{ObjectMeta: metav1.ObjectMeta{Name: class}, Spec: networkingv1.IngressClassSpec{Controller: compile.DefaultControllerName}}
	var snap compile.Snapshot
	require.NoError(t, snap.Add(ing, ic))
	opts := compileOptions(config{}, nil)
	opts.AllowSnippetAnnotations, opts.AnnotationsRiskLevel = true, "Critical"
	res := compile.Compile(snap, opts)
	require.NotNil(t, res.Table)
	return res.Table
}
