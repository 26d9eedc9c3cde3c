package gatewayapi

import (
	"fmt"
	"os"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	"sigs.k8s.io/yaml"

	"ramjet.dev/ramjet/compile"
)

// className is the GatewayClass the suite's "{GATEWAY_CLASS_NAME}" stands
// for in these tests.
const className = "ramjet"

// world is what a set of manifests holds: the Gateway API objects and the
// Services, with one ready endpoint per Service port.
type world struct {
	objs     Objects
	services []*corev1.Service
	slices   []*discoveryv1.EndpointSlice
}

// load reads multi-document YAML files into a world with a GatewayClass
// of ours; kinds a table does not need (Deployments...) are skipped.
func load(t *testing.T, files ...string) *world {
	t.Helper()
	w := &world{}
	w.objs.GatewayClasses = []*gwv1.GatewayClass{{
		ObjectMeta: metav1.ObjectMeta{Name: className},
		Spec:       gwv1.GatewayClassSpec{ControllerName: ControllerName},
	}}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		text := strings.ReplaceAll(string(data), "{GATEWAY_CLASS_NAME}", className)
		for _, doc := range strings.Split(text, "\n---") {
			if err := w.add([]byte(doc)); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
		}
	}
	return w
}

func (w *world) add(doc []byte) error {
	var head struct{ Kind string }
	if err := yaml.Unmarshal(doc, &head); err != nil {
		return err
	}
	var err error
	switch head.Kind {
	case "":
		return nil // a comment or empty document
	case "Namespace":
		o := &corev1.Namespace{}
		err = yaml.UnmarshalStrict(doc, o)
		w.objs.Namespaces = append(w.objs.Namespaces, o)
	case "Gateway":
		o := &gwv1.Gateway{}
		err = yaml.UnmarshalStrict(doc, o)
		w.objs.Gateways = append(w.objs.Gateways, o)
	case "HTTPRoute":
		o := &gwv1.HTTPRoute{}
		err = yaml.UnmarshalStrict(doc, o)
		w.objs.HTTPRoutes = append(w.objs.HTTPRoutes, o)
	case "ReferenceGrant":
		o := &gwv1.ReferenceGrant{}
		err = yaml.Unmarshal(doc, o) // v1beta1 in some manifests: same shape
		w.objs.ReferenceGrants = append(w.objs.ReferenceGrants, o)
	case "Service":
		o := &corev1.Service{}
		err = yaml.UnmarshalStrict(doc, o)
		w.services = append(w.services, o)
		w.slices = append(w.slices, readySlice(o, len(w.services)))
	case "Deployment", "ConfigMap", "Secret", "TLSRoute", "GRPCRoute":
	default:
		return fmt.Errorf("unexpected kind %q", head.Kind)
	}
	return err
}

// readySlice gives every port of svc one ready endpoint, 10.0.0.n.
func readySlice(svc *corev1.Service, n int) *discoveryv1.EndpointSlice {
	sl := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Namespace: svc.Namespace, Name: svc.Name,
			Labels: map[string]string{discoveryv1.LabelServiceName: svc.Name}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints: []discoveryv1.Endpoint{{Addresses: []string{fmt.Sprintf("10.0.%d.%d", n/250, n%250+1)},
			Conditions: discoveryv1.EndpointConditions{Ready: new(true)}}},
	}
	for _, p := range svc.Spec.Ports {
		sl.Ports = append(sl.Ports, discoveryv1.EndpointPort{Name: new(p.Name), Port: new(p.TargetPort.IntVal)})
	}
	return sl
}

// compile translates the world and compiles it with its Services.
func (w *world) compile() (compile.Result, []compile.Warning) {
	routes, ws := Translate(w.objs)
	res := compile.Compile(compile.Snapshot{Services: w.services, EndpointSlices: w.slices, HTTPRoutes: routes}, compile.Options{})
	return res, ws
}
