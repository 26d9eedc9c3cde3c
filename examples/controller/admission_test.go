package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admission/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"ramjet.dev/ramjet/compile"
	"ramjet.dev/ramjet/compile/gatewayapi"
	"ramjet.dev/ramjet/compile/manifest"
)

// admissionObjects: ramjet's class, one Service and an Ingress owning
// shop.example.com/api.
const admissionObjects = `apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata: {name: ramjet}
spec: {controller: ramjet.dev/ingress}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: prod}
spec: {ports: [{port: 80}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: owner, namespace: prod, creationTimestamp: "2024-01-01T00:00:00Z"}
spec:
  ingressClassName: ramjet
  rules: [{host: shop.example.com, http: {paths: [{path: /api, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}}]
`

func testAdmission(t testing.TB, reject compile.Severity) *admission {
	t.Helper()
	snap, _, err := manifest.Decode("objects.yaml", []byte(admissionObjects))
	require.NoError(t, err)
	a := newAdmission(config{admissionRejectSeverity: reject}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	a.offer(&reviewSource{snap: *snap})
	return a
}

// v1Review is what the API server sends for admissionReviewVersions [v1].
var v1Review = metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"}

// ingressReview posts an AdmissionReview of ing to a and returns the
// response.
func ingressReview(t *testing.T, a http.Handler, op admissionv1.Operation, ing *networkingv1.Ingress) *admissionv1.AdmissionResponse {
	t.Helper()
	raw, err := json.Marshal(ing)
	require.NoError(t, err)
	review := admissionv1.AdmissionReview{
		TypeMeta: v1Review,
		Request: &admissionv1.AdmissionRequest{
			UID: types.UID("uid-1"), Kind: metav1.GroupVersionKind{Group: "networking.k8s.io", Version: "v1", Kind: "Ingress"},
			Namespace: ing.Namespace, Name: ing.Name, Operation: op, Object: runtime.RawExtension{Raw: raw},
		},
	}
	body, err := json.Marshal(review)
	require.NoError(t, err)
	rec := httptest.NewRecorder()
	a.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body)))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	var out admissionv1.AdmissionReview
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &out))
	require.Equal(t, "AdmissionReview", out.Kind)
	require.Equal(t, types.UID("uid-1"), out.Response.UID)
	return out.Response
}

func admissionIngress(name, host, path string, annotations ...string) *networkingv1.Ingress {
	class := "ramjet"
	pt := networkingv1.PathTypePrefix
	ing := &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Namespace: "prod", Name: name, Annotations: map[string]string{}},
		Spec: networkingv1.IngressSpec{IngressClassName: &class, Rules: []networkingv1.IngressRule{{Host: host,
			IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{{
				Path: path, PathType: &pt, Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: "web", Port: networkingv1.ServiceBackendPort{Number: 80}}},
			}}}}}}},
	}
	for i := 0; i+1 < len(annotations); i += 2 {
		ing.Annotations[annotations[i]] = annotations[i+1]
	}
	return ing
}

func TestAdmissionReviews(t *testing.T) {
	a := testAdmission(t, "")

	good := ingressReview(t, a, admissionv1.Create, admissionIngress("good", "shop.example.com", "/cart"))
	require.True(t, good.Allowed)
	require.Empty(t, good.Warnings)

	bad := ingressReview(t, a, admissionv1.Create, admissionIngress("bad", "shop.example.com", "/cart", "nginx.ingress.kubernetes.io/load-balance", "random"))
	require.False(t, bad.Allowed)
	require.Equal(t, "annotation nginx.ingress.kubernetes.io/load-balance contains invalid value", bad.Result.Message)
	require.Equal(t, int32(http.StatusBadRequest), bad.Result.Code)

	conflict := ingressReview(t, a, admissionv1.Create, admissionIngress("dup", "shop.example.com", "/api"))
	require.False(t, conflict.Allowed)
	require.Equal(t, `host "shop.example.com" and path "/api" is already defined in ingress prod/owner`, conflict.Result.Message)
	require.NotEmpty(t, conflict.Warnings, "the warnings come with a refusal")
	require.Contains(t, conflict.Warnings[0], "RouteConflict spec.rules[0].http.paths[0]: ")

	// The owner's own update replaces its old version.
	require.True(t, ingressReview(t, a, admissionv1.Update, admissionIngress("owner", "shop.example.com", "/api")).Allowed)
	require.True(t, ingressReview(t, a, admissionv1.Delete, admissionIngress("dup", "shop.example.com", "/api")).Allowed, "a DELETE is allowed")

	cosmetic := ingressReview(t, a, admissionv1.Create, admissionIngress("cosmetic", "shop.example.com", "/x", "nginx.ingress.kubernetes.io/use-forwarded-headers", "true"))
	require.True(t, cosmetic.Allowed)
	require.Equal(t, []string{"AnnotationUnsupported metadata.annotations[nginx.ingress.kubernetes.io/use-forwarded-headers]: " +
		"nginx.ingress.kubernetes.io/use-forwarded-headers is not an annotation ingress-nginx reads (a ConfigMap key, or a removed or misspelled name): no effect under ingress-nginx either"}, cosmetic.Warnings)

	other := admissionIngress("other", "shop.example.com", "/api", "nginx.ingress.kubernetes.io/load-balance", "random")
	other.Spec.IngressClassName = nil
	other.Annotations["kubernetes.io/ingress.class"] = "nginx"
	untouched := ingressReview(t, a, admissionv1.Create, other)
	require.True(t, untouched.Allowed, "another class's Ingress is not ours to refuse")
	require.Empty(t, untouched.Warnings)

	// --admission-reject-severity refuses warnings that severe.
	strict := testAdmission(t, compile.Cosmetic)
	refused := ingressReview(t, strict, admissionv1.Create, admissionIngress("cosmetic", "shop.example.com", "/x", "nginx.ingress.kubernetes.io/use-forwarded-headers", "true"))
	require.False(t, refused.Allowed)
	require.Contains(t, refused.Result.Message, "refused under --admission-reject-severity=cosmetic: cosmetic: AnnotationUnsupported")
	require.True(t, ingressReview(t, testAdmission(t, compile.TrafficMoves), admissionv1.Create,
		admissionIngress("cosmetic", "shop.example.com", "/x", "nginx.ingress.kubernetes.io/use-forwarded-headers", "true")).Allowed)
}

func TestAdmissionBadRequests(t *testing.T) {
	a := testAdmission(t, "")
	for _, tt := range []struct {
		method, body string
		code         int
	}{
		{http.MethodGet, "", http.StatusMethodNotAllowed},
		{http.MethodPost, "{", http.StatusBadRequest},
		{http.MethodPost, `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}`, http.StatusBadRequest},
		// Another version or kind, or none, is not read as a v1 review:
		// its answer would be in a version the sender does not read.
		{http.MethodPost, `{"apiVersion":"admission.k8s.io/v2","kind":"AdmissionReview","request":{"uid":"1"}}`, http.StatusBadRequest},
		{http.MethodPost, `{"apiVersion":"admission.k8s.io/v1","kind":"Ingress","request":{"uid":"1"}}`, http.StatusBadRequest},
		{http.MethodPost, `{"request":{"uid":"1"}}`, http.StatusBadRequest},
		{http.MethodPost, `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"1"}}`, http.StatusOK},
		{http.MethodPost, `{"apiVersion":"admission.k8s.io/v1beta1","kind":"AdmissionReview","request":{"uid":"1"}}`, http.StatusOK},
	} {
		rec := httptest.NewRecorder()
		a.ServeHTTP(rec, httptest.NewRequest(tt.method, "/", strings.NewReader(tt.body)))
		require.Equal(t, tt.code, rec.Code, tt.body)
	}
	_, err := parseRejectSeverity("severe")
	require.Error(t, err)
}

// ingress-nginx's server reads at most 9 MiB and refuses a body that fills
// the buffer: 9 MiB less one byte is the largest review answered.
func TestAdmissionBodyLimit(t *testing.T) {
	a := testAdmission(t, "")
	review := `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"1"}}`
	for _, tt := range []struct {
		size, code int
	}{
		{9<<20 - 1, http.StatusOK},
		{9 << 20, http.StatusRequestEntityTooLarge},
		{9<<20 + 1, http.StatusRequestEntityTooLarge},
	} {
		body := review + strings.Repeat(" ", tt.size-len(review))
		rec := httptest.NewRecorder()
		a.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body)))
		require.Equal(t, tt.code, rec.Code, tt.size)
	}
}

// FuzzAdmission feeds the webhook arbitrary request bodies: it answers
// every one without panicking.
func FuzzAdmission(f *testing.F) {
	ing, _ := json.Marshal(admissionIngress("x", "shop.example.com", "/api", "nginx.ingress.kubernetes.io/canary", "true"))
	f.Add(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"1","kind":{"group":"networking.k8s.io","version":"v1","kind":"Ingress"},"operation":"CREATE","object":` + string(ing) + `}}`)
	f.Add(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"1","kind":{"group":"gateway.networking.k8s.io","version":"v1","kind":"HTTPRoute"},"operation":"CREATE","object":{}}}`)
	f.Add(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"kind":{"group":"networking.k8s.io","kind":"Ingress"},"object":{"spec":{"rules":[{"http":{"paths":[{}]}}]}}}}`)
	a := testAdmission(f, "")
	f.Fuzz(func(t *testing.T, body string) {
		rec := httptest.NewRecorder()
		a.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body)))
	})
}

// An HTTPRoute under review is translated with the Gateway API objects,
// its old version replaced, and answered with its warnings; ingress-nginx
// has no Gateway API, so nothing is refused but by severity.
func TestAdmissionHTTPRoute(t *testing.T) {
	all := gwv1.NamespacesFromAll
	objs := gatewayapi.Objects{
		GatewayClasses: []*gwv1.GatewayClass{{ObjectMeta: metav1.ObjectMeta{Name: "ramjet"}, Spec: gwv1.GatewayClassSpec{ControllerName: gatewayapi.ControllerName}}},
		Gateways: []*gwv1.Gateway{{ObjectMeta: metav1.ObjectMeta{Namespace: "infra", Name: "gw"}, Spec: gwv1.GatewaySpec{GatewayClassName: "ramjet",
			Listeners: []gwv1.Listener{{Name: "http", Port: 80, Protocol: gwv1.HTTPProtocolType, AllowedRoutes: &gwv1.AllowedRoutes{Namespaces: &gwv1.RouteNamespaces{From: &all}}}}}}},
	}
	route := func(svc string) *gwv1.HTTPRoute {
		ref := gwv1.HTTPBackendRef{}
		ref.Name, ref.Port = gwv1.ObjectName(svc), new(gwv1.PortNumber(80))
		return &gwv1.HTTPRoute{
			ObjectMeta: metav1.ObjectMeta{Namespace: "prod", Name: "r"},
			Spec: gwv1.HTTPRouteSpec{
				CommonRouteSpec: gwv1.CommonRouteSpec{ParentRefs: []gwv1.ParentReference{{Name: "gw", Namespace: new(gwv1.Namespace("infra"))}}},
				Hostnames:       []gwv1.Hostname{"gw.example.com"},
				Rules:           []gwv1.HTTPRouteRule{{BackendRefs: []gwv1.HTTPBackendRef{ref}}},
			},
		}
	}
	objs.HTTPRoutes = []*gwv1.HTTPRoute{route("web")}
	snap, _, err := manifest.Decode("objects.yaml", []byte(admissionObjects))
	require.NoError(t, err)
	tr := gatewayapi.TranslateAll(objs)
	tr.AddTo(snap)
	post := func(a *admission, r *gwv1.HTTPRoute) *admissionv1.AdmissionResponse {
		raw, err := json.Marshal(r)
		require.NoError(t, err)
		body, err := json.Marshal(admissionv1.AdmissionReview{TypeMeta: v1Review, Request: &admissionv1.AdmissionRequest{
			UID: "u", Kind: metav1.GroupVersionKind{Group: gwv1.GroupName, Version: "v1", Kind: "HTTPRoute"},
			Namespace: "prod", Name: "r", Operation: admissionv1.Update, Object: runtime.RawExtension{Raw: raw},
		}})
		require.NoError(t, err)
		rec := httptest.NewRecorder()
		a.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body)))
		var out admissionv1.AdmissionReview
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &out))
		return out.Response
	}
	a := newAdmission(config{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	a.offer(&reviewSource{snap: *snap, gateway: translateWith(objs)})
	ok := post(a, route("web"))
	require.True(t, ok.Allowed)
	require.Empty(t, ok.Warnings)

	missing := post(a, route("gone"))
	require.True(t, missing.Allowed)
	require.Len(t, missing.Warnings, 1)
	require.Contains(t, missing.Warnings[0], "ServiceNotFound spec.rules[0].backendRefs[0]")

	strict := newAdmission(config{admissionRejectSeverity: compile.TrafficMoves}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	strict.offer(&reviewSource{snap: *snap, gateway: translateWith(objs)})
	require.True(t, post(strict, route("gone")).Allowed, "a missing Service answers 500 under both: cosmetic")
	strict = newAdmission(config{admissionRejectSeverity: compile.Cosmetic}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	strict.offer(&reviewSource{snap: *snap, gateway: translateWith(objs)})
	require.False(t, post(strict, route("gone")).Allowed)
}

// New tables are indexed for reviews ahead of time only while reviews
// arrive; the first review after a quiet spell indexes the table itself.
func TestAdmissionIndexesAheadWhileReviewed(t *testing.T) {
	snap, _, err := manifest.Decode("objects.yaml", []byte(admissionObjects))
	require.NoError(t, err)
	a := newAdmission(config{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go a.run(ctx)
	indexed := func() *reviewSource {
		a.mu.Lock()
		defer a.mu.Unlock()
		return a.indexed
	}
	first := &reviewSource{snap: *snap}
	a.offer(first)
	time.Sleep(50 * time.Millisecond)
	require.Nil(t, indexed(), "nobody reviews: nothing indexed")

	require.True(t, ingressReview(t, a, admissionv1.Create, admissionIngress("good", "shop.example.com", "/cart")).Allowed)
	require.Same(t, first, indexed(), "the review indexed the table it needed")
	second := &reviewSource{snap: *snap}
	a.offer(second)
	waitFor(t, 5*time.Second, "the next table to be indexed ahead", func() bool { return indexed() == second })
}

// With snippets allowed, an Ingress whose ModSecurity rules Coraza
// refuses would answer 503 on every path once served; ingress-nginx's
// webhook refuses it (nginx -t fails on the rules), and so does this one,
// with the warning the rebuild would log.
func TestAdmissionRefusesModSecurityRulesThatDoNotBuild(t *testing.T) {
	snap, _, err := manifest.Decode("objects.yaml", []byte(admissionObjects))
	require.NoError(t, err)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	waf := newModSecurity(config{}, log)
	a := newAdmission(config{}, log)
	a.offer(&reviewSource{snap: *snap, opts: compile.Options{ExtensionKeys: modSecurityKeys,
		AllowSnippetAnnotations: true, AnnotationsRiskLevel: "Critical"}, waf: waf.checker(modSecuritySettings{})})

	bad := ingressReview(t, a, admissionv1.Create, admissionIngress("waf", "shop.example.com", "/cart",
		"nginx.ingress.kubernetes.io/enable-modsecurity", "true",
		"nginx.ingress.kubernetes.io/modsecurity-snippet", "SecRuleEngine On\nSecRule ARGS \"@nosuchop x\" \"id:1,deny\""))
	require.False(t, bad.Allowed)
	require.Contains(t, bad.Result.Message, "ModSecurity rules refused by Coraza")
	require.Len(t, bad.Warnings, 1)
	require.Contains(t, bad.Warnings[0], "AnnotationRejected metadata.annotations[nginx.ingress.kubernetes.io/modsecurity-snippet]: ")

	good := ingressReview(t, a, admissionv1.Create, admissionIngress("waf", "shop.example.com", "/cart",
		"nginx.ingress.kubernetes.io/enable-modsecurity", "true",
		"nginx.ingress.kubernetes.io/modsecurity-snippet", "SecRuleEngine On\nSecRule ARGS \"@contains x\" \"id:1,deny\""))
	require.True(t, good.Allowed, good.Result)
	require.Empty(t, good.Warnings)

	off := ingressReview(t, a, admissionv1.Create, admissionIngress("waf", "shop.example.com", "/cart",
		"nginx.ingress.kubernetes.io/modsecurity-snippet", "SecRule ARGS \"@nosuchop x\" \"id:1,deny\""))
	require.True(t, off.Allowed, "without enable-modsecurity the snippet is not read")
}

// The API server sends an AdmissionReview in the first version the
// webhook configuration lists and reads the answer as that version: a
// v1beta1 review answered as v1 fails to decode there, and the webhook's
// verdict is lost to the failure policy.
func TestAdmissionAnswersInTheReviewsVersion(t *testing.T) {
	a := testAdmission(t, "")
	raw, err := json.Marshal(admissionIngress("dup", "shop.example.com", "/api"))
	require.NoError(t, err)
	for _, version := range []string{"admission.k8s.io/v1beta1", "admission.k8s.io/v1"} {
		body := `{"apiVersion":"` + version + `","kind":"AdmissionReview","request":{"uid":"u-1",` +
			`"kind":{"group":"networking.k8s.io","version":"v1","kind":"Ingress"},"namespace":"prod","name":"dup","operation":"CREATE","object":` + string(raw) + `}}`
		rec := httptest.NewRecorder()
		a.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body)))
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		var out admissionv1.AdmissionReview
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &out))
		require.Equal(t, version, out.APIVersion)
		require.Equal(t, "AdmissionReview", out.Kind)
		require.Equal(t, types.UID("u-1"), out.Response.UID)
		require.False(t, out.Response.Allowed, "the host/path of prod/owner")
	}
}

// TestAdmissionMetrics: ingress-nginx's admission gauges, set by each
// Ingress admitted: the Ingresses tested together, the test's and the
// whole review's seconds.
func TestAdmissionMetrics(t *testing.T) {
	m := newMetrics(metricsConfig(func(c *config) { c.webhookAddr = "127.0.0.1:0" }))
	a := testAdmission(t, "")
	a.metrics = m
	names := []string{"nginx_ingress_controller_admission_tested_ingresses", "nginx_ingress_controller_admission_tested_duration",
		"nginx_ingress_controller_admission_roundtrip_duration"}
	for _, name := range names {
		v, n := scrapeMetrics(t, m).sum(name, map[string]string{"controller_class": compile.DefaultControllerName, "controller_pod": "ramjet-0"})
		require.Equal(t, 1, n, name)
		require.Zero(t, v, name)
	}

	require.True(t, ingressReview(t, a, admissionv1.Create, admissionIngress("good", "shop.example.com", "/cart")).Allowed)
	s := scrapeMetrics(t, m)
	tested, _ := s.sum(names[0], nil)
	require.Equal(t, 2.0, tested, "the owner and the new Ingress")
	testedTime, _ := s.sum(names[1], nil)
	roundtrip, _ := s.sum(names[2], nil)
	require.Positive(t, testedTime)
	require.GreaterOrEqual(t, roundtrip, testedTime)
	require.Less(t, roundtrip, 10.0, "seconds")

	// An update replaces its old version; a refusal leaves the gauges
	// as the last admitted review set them, as ingress-nginx's.
	require.True(t, ingressReview(t, a, admissionv1.Update, admissionIngress("owner", "shop.example.com", "/api")).Allowed)
	tested, _ = scrapeMetrics(t, m).sum(names[0], nil)
	require.Equal(t, 1.0, tested)
	require.False(t, ingressReview(t, a, admissionv1.Create, admissionIngress("dup", "shop.example.com", "/api")).Allowed)
	tested, _ = scrapeMetrics(t, m).sum(names[0], nil)
	require.Equal(t, 1.0, tested)
}

// admission_tested_ingresses counts the Ingresses of the controller's
// class only, as ingress-nginx's store holds only those: another
// controller's, one annotated for another class and one without a class
// (no default class here) are not tested with the reviewed one.
func TestAdmissionMetricsCountClaimed(t *testing.T) {
	m := newMetrics(metricsConfig(func(c *config) { c.webhookAddr = "127.0.0.1:0" }))
	snap, _, err := manifest.Decode("objects.yaml", []byte(admissionObjects+`---
apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata: {name: other}
spec: {controller: example.com/other}
`))
	require.NoError(t, err)
	other := admissionIngress("other", "other.example.com", "/")
	other.Spec.IngressClassName = ptr("other")
	annotated := admissionIngress("annotated", "annotated.example.com", "/", "kubernetes.io/ingress.class", "other")
	classless := admissionIngress("classless", "classless.example.com", "/")
	classless.Spec.IngressClassName = nil
	snap.Ingresses = append(snap.Ingresses, other, annotated, classless)
	a := newAdmission(config{}, slog.New(slog.DiscardHandler))
	a.offer(&reviewSource{snap: *snap})
	a.metrics = m

	require.True(t, ingressReview(t, a, admissionv1.Create, admissionIngress("good", "shop.example.com", "/cart")).Allowed)
	tested, _ := scrapeMetrics(t, m).sum("nginx_ingress_controller_admission_tested_ingresses", nil)
	require.Equal(t, 2.0, tested, "the owner and the new Ingress")
}

// The Ingresses of our class are counted once per offered snapshot, not
// on each review: once a review has counted them, the snapshot's
// Ingresses are not walked again (emptied here, the count stays), and an
// update still replaces its old version.
func TestAdmissionMetricsCountedOncePerSnapshot(t *testing.T) {
	m := newMetrics(metricsConfig(func(c *config) { c.webhookAddr = "127.0.0.1:0" }))
	snap, _, err := manifest.Decode("objects.yaml", []byte(admissionObjects))
	require.NoError(t, err)
	for i := range 50 {
		snap.Ingresses = append(snap.Ingresses, admissionIngress(fmt.Sprintf("app-%d", i), fmt.Sprintf("app-%d.example.com", i), "/"))
	}
	src := &reviewSource{snap: *snap}
	a := newAdmission(config{}, slog.New(slog.DiscardHandler))
	a.offer(src)
	a.metrics = m
	tested := func() float64 {
		v, _ := scrapeMetrics(t, m).sum("nginx_ingress_controller_admission_tested_ingresses", nil)
		return v
	}

	require.True(t, ingressReview(t, a, admissionv1.Create, admissionIngress("good", "shop.example.com", "/cart")).Allowed)
	require.Equal(t, 52.0, tested(), "the owner, 50 apps and the new Ingress")
	src.snap.Ingresses = nil
	require.True(t, ingressReview(t, a, admissionv1.Create, admissionIngress("new", "new.example.com", "/")).Allowed)
	require.Equal(t, 52.0, tested(), "counted by the first review")
	require.True(t, ingressReview(t, a, admissionv1.Update, admissionIngress("app-7", "app-7.example.com", "/")).Allowed)
	require.Equal(t, 51.0, tested(), "app-7 in place of its old version")

	next := &reviewSource{snap: *snap}
	next.snap.Ingresses = snap.Ingresses[:1]
	a.offer(next)
	require.True(t, ingressReview(t, a, admissionv1.Create, admissionIngress("good", "shop.example.com", "/cart")).Allowed)
	require.Equal(t, 2.0, tested(), "a new snapshot is counted anew")
}

// ingress-nginx's auth parser validates auth-realm only once it has found
// auth-secret's Secret: applied before its Secret, the Ingress is
// admitted (its location denied until the Secret comes).
func TestAdmissionAuthRealmNeedsItsSecret(t *testing.T) {
	ing := admissionIngress("auth", "shop.example.com", "/private", "nginx.ingress.kubernetes.io/auth-type", "basic",
		"nginx.ingress.kubernetes.io/auth-secret", "htpasswd", "nginx.ingress.kubernetes.io/auth-realm", "Log in!")

	require.True(t, ingressReview(t, testAdmission(t, ""), admissionv1.Create, ing).Allowed, "no Secret: the realm is never read")

	snap, _, err := manifest.Decode("objects.yaml", []byte(admissionObjects+`---
apiVersion: v1
kind: Secret
metadata: {name: htpasswd, namespace: prod}
type: Opaque
stringData: {auth: "user:{PLAIN}pass"}
`))
	require.NoError(t, err)
	a := newAdmission(config{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	a.offer(&reviewSource{snap: *snap})
	refused := ingressReview(t, a, admissionv1.Create, ing)
	require.False(t, refused.Allowed)
	require.Equal(t, "annotation nginx.ingress.kubernetes.io/auth-realm contains invalid value", refused.Result.Message)
}

// An Ingress being deleted is only waiting for its finalizers: ingress-nginx's
// CheckIngress and CheckWarning skip it, and so does the review, or an
// UPDATE removing the last finalizer would carry warnings and, under
// --admission-reject-severity, be refused, leaving the Ingress stuck in
// Terminating.
func TestAdmissionSkipsAnIngressBeingDeleted(t *testing.T) {
	ing := admissionIngress("dup", "shop.example.com", "/api", "nginx.ingress.kubernetes.io/use-forwarded-headers", "true")
	ing.Finalizers = []string{"example.com/cleanup"}
	require.NotEmpty(t, ingressReview(t, testAdmission(t, ""), admissionv1.Update, ing).Warnings, "alive, it has warnings")

	now := metav1.Now()
	ing.DeletionTimestamp = &now
	ing.Finalizers = nil
	for _, reject := range []compile.Severity{"", compile.Cosmetic} {
		resp := ingressReview(t, testAdmission(t, reject), admissionv1.Update, ing)
		require.True(t, resp.Allowed, "reject %q: %v", reject, resp.Result)
		require.Empty(t, resp.Warnings, "reject %q", reject)
	}
}

// TestAdmissionCheckCounters: ingress-nginx's CheckIngress counts each
// Ingress of its class it checks, by namespace and name:
// nginx_ingress_controller_check_success when admitted, check_errors when
// refused (controller.go IncCheckCount, IncCheckErrorCount).
func TestAdmissionCheckCounters(t *testing.T) {
	m := newMetrics(metricsConfig(func(c *config) { c.webhookAddr = "127.0.0.1:0" }))
	a := testAdmission(t, "")
	a.metrics = m
	require.True(t, ingressReview(t, a, admissionv1.Create, admissionIngress("good", "shop.example.com", "/cart")).Allowed)
	require.True(t, ingressReview(t, a, admissionv1.Update, admissionIngress("good", "shop.example.com", "/cart")).Allowed)
	require.False(t, ingressReview(t, a, admissionv1.Create, admissionIngress("dup", "shop.example.com", "/api")).Allowed)
	s := scrapeMetrics(t, m)
	for _, c := range []struct {
		name, ingress string
		want          float64
	}{
		{"nginx_ingress_controller_check_success", "good", 2},
		{"nginx_ingress_controller_check_success", "dup", 0},
		{"nginx_ingress_controller_check_errors", "dup", 1},
		{"nginx_ingress_controller_check_errors", "good", 0},
	} {
		v, _ := s.sum(c.name, map[string]string{"namespace": "prod", "ingress": c.ingress,
			"controller_class": compile.DefaultControllerName, "controller_pod": "ramjet-0", "controller_namespace": "ingress"})
		require.Equal(t, c.want, v, "%s{ingress=%q}", c.name, c.ingress)
	}
}
