package gatewayapi

import (
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"ramjet.dev/ramjet/compile"
	"ramjet.dev/ramjet/compile/manifest"
	"ramjet.dev/ramjet/match"
)

const gatewayAndClass = `apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: ramjet}
spec: {controllerName: ramjet.dev/gateway}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: infra}
spec:
  gatewayClassName: ramjet
  listeners: [{name: http, port: 80, protocol: HTTP, allowedRoutes: {namespaces: {from: All}}}]
`

// TestDecodeGatewayAPI: with the Extension registered the loader reads
// Gateway API objects in v1 and v1beta1, Lists of them and Namespaces,
// puts a namespaced one without a namespace in "default", and translates
// them together once everything is read: the HTTPRoute, in default, is
// attached to the Gateway of another document and uses a Service of
// another namespace through a v1beta1 ReferenceGrant.
func TestDecodeGatewayAPI(t *testing.T) {
	Register()
	Register() // idempotent
	stream := gatewayAndClass + `---
apiVersion: gateway.networking.k8s.io/v1beta1
kind: HTTPRouteList
items:
- apiVersion: gateway.networking.k8s.io/v1beta1
  kind: HTTPRoute
  metadata: {name: web}
  spec:
    parentRefs: [{name: gw, namespace: infra}]
    hostnames: [web.example]
    rules: [{backendRefs: [{name: api, namespace: backends, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1beta1
kind: ReferenceGrant
metadata: {name: from-default, namespace: backends}
spec:
  from: [{group: gateway.networking.k8s.io, kind: HTTPRoute, namespace: default}]
  to: [{group: "", kind: Service}]
---
apiVersion: v1
kind: Namespace
metadata: {name: backends}
---
apiVersion: gateway.networking.k8s.io/v1alpha2
kind: TCPRoute
metadata: {name: tcp, namespace: infra}
`
	snap, skipped, err := manifest.Decode("gw.yaml", []byte(stream))
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.HTTPRoutes) != 1 || len(snap.Warnings) != 0 {
		t.Fatalf("routes %v, warnings %v; want one route and none", snap.HTTPRoutes, snap.Warnings)
	}
	r := snap.HTTPRoutes[0]
	if r.Namespace != "default" || !slices.Equal(r.Hostnames, []string{"web.example"}) ||
		len(r.Rules) != 1 || len(r.Rules[0].Backends) != 1 || r.Rules[0].Backends[0].Service.String() != "backends/api:80" {
		t.Errorf("route %+v", r)
	}
	if want := []string{"gw.yaml#6: gateway.networking.k8s.io/v1alpha2 TCPRoute infra/tcp skipped"}; !slices.Equal(skipped, want) {
		t.Errorf("skipped %q, want %q", skipped, want)
	}
}

// TestDecodeGatewayAPIErrors: a Gateway API document's problems are the
// loader's *manifest.Error, naming file, document, object and field.
func TestDecodeGatewayAPIErrors(t *testing.T) {
	Register()
	stream := gatewayAndClass + `---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: typo, namespace: infra}
spec:
  parentRefs: [{name: gw}]
  rules: [{matchs: [{path: {value: /}}]}]
---
apiVersion: gateway.networking.k8s.io/v1alpha2
kind: HTTPRoute
metadata: {name: old, namespace: infra}
---
apiVersion: gateway.networking.k8s.io/v1beta1
kind: Gateway
metadata: {name: gw, namespace: infra}
`
	_, _, err := manifest.Decode("bad.yaml", []byte(stream))
	var got []string
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		var me *manifest.Error
		if !errors.As(e, &me) {
			t.Fatalf("%v is not a *manifest.Error", e)
		}
		got = append(got, strings.Join([]string{me.File, strings.Repeat("#", me.Document), me.Object(), me.Field}, " "))
	}
	want := []string{
		"bad.yaml ### HTTPRoute infra/typo spec.rules[0].matchs",
		"bad.yaml #### HTTPRoute infra/old apiVersion",
		"bad.yaml ##### Gateway infra/gw ",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("errors (-want +got):\n%s\n%v", d, err)
	}
	if !strings.Contains(err.Error(), "ramjet reads gateway.networking.k8s.io/v1 or gateway.networking.k8s.io/v1beta1 HTTPRoute") {
		t.Errorf("the version error does not name the versions read: %v", err)
	}
	if !errors.Is(err, manifest.ErrDefinedTwice) {
		t.Errorf("a v1beta1 Gateway of the same name as a v1 one is not defined twice: %v", err)
	}
}

// TestSnapshotWarnings: Translate's warnings reach compile.Result.Warnings
// through the snapshot, sorted and deduplicated with compile's own.
func TestSnapshotWarnings(t *testing.T) {
	Register()
	stream := gatewayAndClass + `---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r, namespace: infra}
spec:
  parentRefs: [{name: gw}, {name: gw, sectionName: none}]
  rules: [{backendRefs: [{name: api, namespace: elsewhere, port: 80}]}]
`
	snap, _, err := manifest.Decode("w.yaml", []byte(stream))
	if err != nil {
		t.Fatal(err)
	}
	snap.Warnings = append(snap.Warnings, snap.Warnings...) // as if merged twice
	var got []string
	for _, w := range compile.Compile(*snap, compile.Options{}).Warnings {
		got = append(got, string(w.Reason)+" "+w.Object.String()+" "+w.Field)
	}
	want := []string{
		"RouteNotAttached HTTPRoute infra/r spec.parentRefs[1]",
		"RefNotPermitted HTTPRoute infra/r spec.rules[0].backendRefs[0].namespace",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("warnings (-want +got):\n%s", d)
	}
}

// FuzzDecodeGatewayAPI feeds arbitrary streams through the loader with the
// Extension registered: it must never panic, and what it reads must
// translate and compile to the same table and warnings twice.
func FuzzDecodeGatewayAPI(f *testing.F) {
	Register()
	for _, name := range []string{"base.yaml", "httproute-hostname-intersection.yaml", "httproute-rewrite-path.yaml", "httproute-redirect-path.yaml", "httproute-reference-grant.yaml",
		"httproute-cors.yaml", "httproute-request-header-modifier-backend-weights.yaml", "httproute-backend-protocol-h2c.yaml"} {
		data, err := os.ReadFile("testdata/conformance/" + name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(gatewayAndClass))
	f.Fuzz(func(t *testing.T, data []byte) {
		snap, _, err := manifest.Decode("fuzz", data)
		if err != nil {
			return
		}
		again, _, err := manifest.Decode("fuzz", data)
		if err != nil {
			t.Fatalf("a second read fails: %v", err)
		}
		a, b := compile.Compile(*snap, compile.Options{}), compile.Compile(*again, compile.Options{})
		if a.String() != b.String() {
			t.Fatalf("two reads compile differently:\n%s\n%s", a, b)
		}
	})
}

// TestDecodeTLSRoute: a TLSRoute is read in v1 and in the experimental
// channel's v1alpha3 and v1alpha2, each attached to the Gateway's TLS
// passthrough listener.
func TestDecodeTLSRoute(t *testing.T) {
	Register()
	for _, v := range []string{"v1", "v1alpha3", "v1alpha2"} {
		t.Run(v, func(t *testing.T) {
			stream := `apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: ramjet}
spec: {controllerName: ramjet.dev/gateway}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: infra}
spec:
  gatewayClassName: ramjet
  listeners: [{name: tls, port: 443, protocol: TLS, tls: {mode: Passthrough}}]
---
apiVersion: gateway.networking.k8s.io/` + v + `
kind: TLSRoute
metadata: {name: db, namespace: infra}
spec:
  parentRefs: [{name: gw}]
  hostnames: [db.example.com]
  rules: [{backendRefs: [{name: db, port: 5432, weight: 3}]}]
`
			snap, skipped, err := manifest.Decode("tls.yaml", []byte(stream))
			if err != nil {
				t.Fatal(err)
			}
			if len(skipped) != 0 || len(snap.TLSRoutes) != 1 {
				t.Fatalf("skipped %q, TLSRoutes %+v; want one", skipped, snap.TLSRoutes)
			}
			r := snap.TLSRoutes[0]
			if r.Listener != (match.Listener{Port: 443, TLS: true}) || !slices.Equal(r.Hostnames, []string{"db.example.com"}) ||
				len(r.Backends) != 1 || r.Backends[0].Service.String() != "infra/db:5432" || r.Backends[0].Weight != 3 {
				t.Errorf("route %+v", r)
			}
			if len(snap.PassthroughListeners) != 1 {
				t.Errorf("passthrough listeners %+v, want the Gateway's", snap.PassthroughListeners)
			}
		})
	}
}
