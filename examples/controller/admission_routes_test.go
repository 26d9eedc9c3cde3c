package main

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwv1alpha2 "sigs.k8s.io/gateway-api/apis/v1alpha2"

	"ramjet.dev/ramjet/compile"
	"ramjet.dev/ramjet/compile/gatewayapi"
	"ramjet.dev/ramjet/compile/manifest"
)

// routeAdmission is a webhook whose last table holds admissionObjects and
// objs translated; reject as --admission-reject-severity.
func routeAdmission(t *testing.T, objs gatewayapi.Objects, reject compile.Severity) *admission {
	t.Helper()
	snap, _, err := manifest.Decode("objects.yaml", []byte(admissionObjects))
	require.NoError(t, err)
	tr := gatewayapi.TranslateAll(objs)
	tr.AddTo(snap)
	a := newAdmission(config{admissionRejectSeverity: reject}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	a.offer(&reviewSource{snap: *snap, gateway: translateWith(objs)})
	return a
}

// postRoute posts an UPDATE review of obj as kind in version.
func postRoute(t *testing.T, a *admission, kind, version string, obj metav1.Object) *admissionv1.AdmissionResponse {
	t.Helper()
	raw, err := json.Marshal(obj)
	require.NoError(t, err)
	body, err := json.Marshal(admissionv1.AdmissionReview{TypeMeta: v1Review, Request: &admissionv1.AdmissionRequest{
		UID: "u", Kind: metav1.GroupVersionKind{Group: gwv1.GroupName, Version: version, Kind: kind},
		Namespace: obj.GetNamespace(), Name: obj.GetName(), Operation: admissionv1.Update, Object: runtime.RawExtension{Raw: raw},
	}})
	require.NoError(t, err)
	rec := httptest.NewRecorder()
	a.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body)))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	var out admissionv1.AdmissionReview
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &out))
	return out.Response
}

func ourGateway(ls ...gwv1.Listener) gatewayapi.Objects {
	all := gwv1.NamespacesFromAll
	for i := range ls {
		ls[i].AllowedRoutes = &gwv1.AllowedRoutes{Namespaces: &gwv1.RouteNamespaces{From: &all}}
	}
	return gatewayapi.Objects{
		GatewayClasses: []*gwv1.GatewayClass{{ObjectMeta: metav1.ObjectMeta{Name: "ramjet"}, Spec: gwv1.GatewayClassSpec{ControllerName: gatewayapi.ControllerName}}},
		Gateways:       []*gwv1.Gateway{{ObjectMeta: metav1.ObjectMeta{Namespace: "infra", Name: "gw"}, Spec: gwv1.GatewaySpec{GatewayClassName: "ramjet", Listeners: ls}}},
	}
}

var infraGateway = []gwv1.ParentReference{{Name: "gw", Namespace: new(gwv1.Namespace("infra"))}}

// A GRPCRoute under review is translated with the Gateway API objects,
// its old version replaced, and answered with its warnings, as an
// HTTPRoute is.
func TestAdmissionGRPCRoute(t *testing.T) {
	objs := ourGateway(gwv1.Listener{Name: "http", Port: 80, Protocol: gwv1.HTTPProtocolType})
	route := func(svc string) *gwv1.GRPCRoute {
		var ref gwv1.GRPCBackendRef
		ref.Name, ref.Port = gwv1.ObjectName(svc), new(gwv1.PortNumber(80))
		return &gwv1.GRPCRoute{
			ObjectMeta: metav1.ObjectMeta{Namespace: "prod", Name: "g"},
			Spec: gwv1.GRPCRouteSpec{CommonRouteSpec: gwv1.CommonRouteSpec{ParentRefs: infraGateway},
				Hostnames: []gwv1.Hostname{"grpc.example.com"}, Rules: []gwv1.GRPCRouteRule{{BackendRefs: []gwv1.GRPCBackendRef{ref}}}},
		}
	}
	objs.GRPCRoutes = []*gwv1.GRPCRoute{route("web")}
	a := routeAdmission(t, objs, "")
	ok := postRoute(t, a, "GRPCRoute", "v1", route("web"))
	require.True(t, ok.Allowed)
	require.Empty(t, ok.Warnings)

	missing := postRoute(t, a, "GRPCRoute", "v1", route("gone"))
	require.True(t, missing.Allowed)
	require.Len(t, missing.Warnings, 1, "%v", missing.Warnings)
	require.Contains(t, missing.Warnings[0], "ServiceNotFound spec.rules[0].backendRefs[0]")

	strict := routeAdmission(t, objs, compile.Cosmetic)
	require.False(t, postRoute(t, strict, "GRPCRoute", "v1", route("gone")).Allowed)
	require.True(t, postRoute(t, strict, "GRPCRoute", "v1", route("web")).Allowed)

	// Being deleted, it waits only for its finalizers, as an Ingress.
	deleting := route("gone")
	deleting.DeletionTimestamp = new(metav1.Now())
	gone := postRoute(t, strict, "GRPCRoute", "v1", deleting)
	require.True(t, gone.Allowed)
	require.Empty(t, gone.Warnings)
}

// A TLSRoute under review (v1, or v1alpha2 read as v1) is translated and
// compiled with the other TLSRoutes: its warnings come back, a hostname
// an older TLSRoute takes among them.
func TestAdmissionTLSRoute(t *testing.T) {
	objs := ourGateway(gwv1.Listener{Name: "tls", Port: 443, Protocol: gwv1.TLSProtocolType, Hostname: new(gwv1.Hostname("*.tls.test")),
		TLS: &gwv1.ListenerTLSConfig{Mode: new(gwv1.TLSModePassthrough)}})
	route := func(name, host, svc string, created int64) *gwv1.TLSRoute {
		var b gwv1.BackendRef
		b.Name, b.Port = gwv1.ObjectName(svc), new(gwv1.PortNumber(80))
		return &gwv1.TLSRoute{
			ObjectMeta: metav1.ObjectMeta{Namespace: "prod", Name: name, CreationTimestamp: metav1.Unix(created, 0)},
			Spec: gwv1.TLSRouteSpec{CommonRouteSpec: gwv1.CommonRouteSpec{ParentRefs: infraGateway},
				Hostnames: []gwv1.Hostname{gwv1.Hostname(host)}, Rules: []gwv1.TLSRouteRule{{BackendRefs: []gwv1.BackendRef{b}}}},
		}
	}
	objs.TLSRoutes = []*gwv1.TLSRoute{route("db", "db.tls.test", "web", 10)}
	a := routeAdmission(t, objs, "")
	ok := postRoute(t, a, "TLSRoute", "v1", route("db", "db.tls.test", "web", 10))
	require.True(t, ok.Allowed)
	require.Empty(t, ok.Warnings)

	missing := postRoute(t, a, "TLSRoute", "v1", route("db", "db.tls.test", "gone", 10))
	require.True(t, missing.Allowed)
	require.Len(t, missing.Warnings, 1, "%v", missing.Warnings)
	require.Contains(t, missing.Warnings[0], "ServiceNotFound spec.rules[0].backendRefs[0]")

	// A newer route for the same name: its connections go to the older.
	taken := postRoute(t, a, "TLSRoute", "v1", route("db-2", "db.tls.test", "web", 20))
	require.Len(t, taken.Warnings, 1, "%v", taken.Warnings)
	require.Contains(t, taken.Warnings[0], "RouteConflict spec.hostnames")

	// Outside every listener's hostname: not attached.
	off := postRoute(t, a, "TLSRoute", "v1", route("db-3", "db.elsewhere.test", "web", 20))
	require.Len(t, off.Warnings, 1, "%v", off.Warnings)
	require.Contains(t, off.Warnings[0], "spec.hostnames")

	// The experimental channel's v1alpha2 reads as v1.
	alpha := (*gwv1alpha2.TLSRoute)(nil)
	v1 := route("db", "db.tls.test", "gone", 10)
	raw, err := json.Marshal(v1)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(raw, &alpha))
	old := postRoute(t, a, "TLSRoute", "v1alpha2", alpha)
	require.Len(t, old.Warnings, 1, "%v", old.Warnings)
	require.Contains(t, old.Warnings[0], "ServiceNotFound")

	strict := routeAdmission(t, objs, compile.Cosmetic)
	require.False(t, postRoute(t, strict, "TLSRoute", "v1", route("db", "db.tls.test", "gone", 10)).Allowed)
}
