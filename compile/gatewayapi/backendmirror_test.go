package gatewayapi

import (
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"ramjet.dev/ramjet/compile/manifest"
	"ramjet.dev/ramjet/status"
)

// TestBackendRefMirror: a RequestMirror among a backendRef's filters
// applies only to the requests sent to that backend (HTTPBackendRef
// filters): the mirrored Service receives a copy of exactly those of the
// split's requests, of its share of them when it has one, and of no
// request the other backend took.
func TestBackendRefMirror(t *testing.T) {
	Register()
	snap, _, err := manifest.Load(filepath.Join("testdata", "suite", "gatewayclass.yaml"), filepath.Join("testdata", "suite", "certificates.yaml"),
		filepath.Join("testdata", "conformance", "base.yaml"), filepath.Join("testdata", "mirror", "backendref-mirror.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	rt, bs := serveSuite(t, snap)
	for _, c := range []struct {
		path     string
		total    int
		toV1     int // requests the split sends to infra-backend-v1
		mirrored int // of which copies reach infra-backend-v3
	}{
		{"/split", 20, 10, 10},
		{"/share", 40, 10, 5},
		{"/alone", 20, 20, 5},
	} {
		var servedByV1 []string
		for i := range c.total {
			target := c.path + "?id=" + strconv.Itoa(i)
			code, by := send(rt, "GET", "", target, nil)
			if code != http.StatusOK {
				t.Fatalf("%s: %d from %q", target, code, by)
			}
			if by == v1 {
				servedByV1 = append(servedByV1, target)
			}
		}
		if len(servedByV1) != c.toV1 {
			t.Errorf("%s: %d of %d requests went to %s, want %d", c.path, len(servedByV1), c.total, v1, c.toV1)
		}
		copies := func() (ofV1, others int) {
			for i := range c.total {
				target := c.path + "?id=" + strconv.Itoa(i)
				n := len(bs.received(v3, target))
				if n > 1 {
					t.Fatalf("%s: %d copies reached %s", target, n, v3)
				}
				if n == 1 && len(bs.received(v1, target)) == 1 {
					ofV1++
				} else if n == 1 {
					others++
				}
			}
			return ofV1, others
		}
		if !eventually(func() bool { ofV1, _ := copies(); return ofV1 >= c.mirrored }) {
			ofV1, _ := copies()
			t.Errorf("%s: %d copies of requests sent to %s reached %s, want %d", c.path, ofV1, v1, v3, c.mirrored)
		}
		time.Sleep(50 * time.Millisecond) // a copy too many would have come by now
		if ofV1, others := copies(); ofV1 != c.mirrored || others != 0 {
			t.Errorf("%s: %d copies of requests sent to %s and %d of others reached %s, want %d and 0", c.path, ofV1, v1, others, v3, c.mirrored)
		}
	}
	if d := rt.Stats().MirrorsDropped; d != 0 {
		t.Errorf("%d copies dropped", d)
	}
}

// TestBackendRefMirrorStatus: a backendRef's RequestMirror is served, so
// the route's Accepted message lists no part as not served, and its
// reference is resolved as a rule's mirror's is: to a Service that does
// not exist it is ResolvedRefs False (BackendNotFound) naming the
// filter. A share above one refuses that backend (its share answers
// 500), which the Accepted message names.
func TestBackendRefMirrorStatus(t *testing.T) {
	gw := gateway("app", "gw", "ours", listener("http", "", gwv1.NamespacesFromSame))
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "app", Name: "svc"}, Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}
	mirrored := func(to string, fr *gwv1.Fraction) gwv1.HTTPBackendRef {
		b := toService("", "svc", 80)
		b.Filters = []gwv1.HTTPRouteFilter{{Type: gwv1.HTTPRouteFilterRequestMirror, RequestMirror: &gwv1.HTTPRequestMirrorFilter{
			BackendRef: gwv1.BackendObjectReference{Name: gwv1.ObjectName(to), Port: new(gwv1.PortNumber(80))}, Fraction: fr}}}
		return b
	}
	rule := func(b gwv1.HTTPBackendRef) gwv1.HTTPRouteRule {
		return gwv1.HTTPRouteRule{BackendRefs: []gwv1.HTTPBackendRef{b, toService("", "svc", 80)}}
	}
	parent := []gwv1.ParentReference{{Name: "gw"}}
	routes := []*gwv1.HTTPRoute{
		httpRoute("app", "served", parent, nil, rule(mirrored("svc", &gwv1.Fraction{Numerator: 1}))),
		httpRoute("app", "missing", parent, nil, rule(mirrored("gone", nil))),
		httpRoute("app", "share", parent, nil, rule(mirrored("svc", &gwv1.Fraction{Numerator: 3, Denominator: new(int32(2))}))),
	}
	tr := TranslateAll(Objects{GatewayClasses: classes(), Gateways: []*gwv1.Gateway{gw}, HTTPRoutes: routes, Services: []*corev1.Service{svc}})
	const filter = "spec.rules[0].backendRefs[0].filters[0]"
	for _, c := range []struct {
		route  string
		briefs []brief
		names  string // in the message of the last condition; "" for none but the route's acceptance
	}{
		{"served", []brief{{"Accepted", "True", status.ReasonAccepted}, {"ResolvedRefs", "True", "ResolvedRefs"}}, ""},
		{"missing", []brief{{"Accepted", "True", status.ReasonAccepted}, {"ResolvedRefs", "False", status.ReasonBackendNotFound}}, filter + ".requestMirror.backendRef"},
		{"share", []brief{{"Accepted", "True", status.ReasonAccepted}, {"ResolvedRefs", "True", "ResolvedRefs"}}, filter + ".requestMirror"},
	} {
		var r *gwv1.HTTPRoute
		for _, x := range routes {
			if x.Name == c.route {
				r = x
			}
		}
		got, _ := tr.Status.HTTPRoute(r, metav1.Unix(1, 0))
		if got == nil || len(got.Status.Parents) != 1 {
			t.Fatalf("%s: no status: %+v", c.route, got)
		}
		cs := got.Status.Parents[0].Conditions
		if d := cmp.Diff(c.briefs, briefs(cs)); d != "" {
			t.Errorf("%s (-want +got):\n%s", c.route, d)
			continue
		}
		switch {
		case c.names == "" && strings.Contains(cs[0].Message, filter):
			t.Errorf("%s: Accepted message %q names the mirror, which is served", c.route, cs[0].Message)
		case c.names != "" && !strings.Contains(cs[0].Message+cs[len(cs)-1].Message, c.names):
			t.Errorf("%s: messages %q and %q do not name %s", c.route, cs[0].Message, cs[len(cs)-1].Message, c.names)
		}
	}
}
