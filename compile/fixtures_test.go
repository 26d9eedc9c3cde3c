package compile

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"k8s.io/apimachinery/pkg/runtime"
	"math/big"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"ramjet.dev/ramjet/match"
)

// Small constructors for test objects. Ingresses name the "ramjet"
// IngressClass unless an option says otherwise; mkSnapshot adds that class.

type ingressOpt func(*networkingv1.Ingress)

func mkIngress(ns, name string, created int64, opts ...ingressOpt) *networkingv1.Ingress {
	class := "ramjet"
	ing := &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:         ns,
			Name:              name,
			CreationTimestamp: metav1.Unix(created, 0),
		},
		Spec: networkingv1.IngressSpec{IngressClassName: &class},
	}
	for _, o := range opts {
		o(ing)
	}
	return ing
}

func withRules(rules ...networkingv1.IngressRule) ingressOpt {
	return func(i *networkingv1.Ingress) { i.Spec.Rules = append(i.Spec.Rules, rules...) }
}

func withDefault(svc string, port any) ingressOpt {
	return func(i *networkingv1.Ingress) { i.Spec.DefaultBackend = mkBackend(svc, port) }
}

func withAnnotations(kv ...string) ingressOpt {
	return func(i *networkingv1.Ingress) {
		if i.Annotations == nil {
			i.Annotations = map[string]string{}
		}
		for n := 0; n+1 < len(kv); n += 2 {
			i.Annotations[kv[n]] = kv[n+1]
		}
	}
}

func withTLS(secret string, hosts ...string) ingressOpt {
	return func(i *networkingv1.Ingress) {
		i.Spec.TLS = append(i.Spec.TLS, networkingv1.IngressTLS{Hosts: hosts, SecretName: secret})
	}
}

// withClassName sets spec.ingressClassName; "" removes it.
func withClassName(name string) ingressOpt {
	return func(i *networkingv1.Ingress) {
		if name == "" {
			i.Spec.IngressClassName = nil
			return
		}
		i.Spec.IngressClassName = &name
	}
}

func mkRule(host string, paths ...networkingv1.HTTPIngressPath) networkingv1.IngressRule {
	r := networkingv1.IngressRule{Host: host}
	if paths != nil {
		r.HTTP = &networkingv1.HTTPIngressRuleValue{Paths: paths}
	}
	return r
}

// mkPath builds a path; pathType "" leaves it nil, svc "" gives a resource
// backend. port is an int (number) or a string (name).
func mkPath(pathType, path, svc string, port any) networkingv1.HTTPIngressPath {
	p := networkingv1.HTTPIngressPath{Path: path}
	if pathType != "" {
		pt := networkingv1.PathType(pathType)
		p.PathType = &pt
	}
	if svc == "" {
		group := "example.com"
		p.Backend.Resource = &corev1.TypedLocalObjectReference{APIGroup: &group, Kind: "Bucket", Name: "static"}
	} else {
		p.Backend = *mkBackend(svc, port)
	}
	return p
}

func prefix(path, svc string, port any) networkingv1.HTTPIngressPath {
	return mkPath("Prefix", path, svc, port)
}

func exact(path, svc string, port any) networkingv1.HTTPIngressPath {
	return mkPath("Exact", path, svc, port)
}

func regex(path, svc string, port any) networkingv1.HTTPIngressPath {
	return mkPath("ImplementationSpecific", path, svc, port)
}

func mkBackend(svc string, port any) *networkingv1.IngressBackend {
	be := &networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: svc}}
	switch p := port.(type) {
	case int:
		be.Service.Port.Number = int32(p)
	case string:
		be.Service.Port.Name = p
	default:
		panic(fmt.Sprintf("port %v: want int or string", port))
	}
	return be
}

// mkService builds a ClusterIP Service with ports "name:port:target" (name
// may be empty; target a number or a name, empty for the port itself).
func mkService(ns, name string, ports ...string) *corev1.Service {
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP},
	}
	for _, spec := range ports {
		parts := strings.Split(spec, ":")
		if len(parts) != 3 {
			panic("port spec " + spec + ": want name:port:target")
		}
		var number int32
		fmt.Sscan(parts[1], &number)
		target := intstr.Parse(parts[2])
		if parts[2] == "" {
			target = intstr.FromInt32(number)
		}
		svc.Spec.Ports = append(svc.Spec.Ports, corev1.ServicePort{Name: parts[0], Port: number, TargetPort: target})
	}
	return svc
}

func mkExternalName(ns, name string) *corev1.Service {
	svc := mkService(ns, name, ":80:")
	svc.Spec.Type = corev1.ServiceTypeExternalName
	svc.Spec.ExternalName = "example.org"
	return svc
}

// mkSlice builds an EndpointSlice for svc with one port; addresses prefixed
// "!" are not ready, "?" have no ready condition.
func mkSlice(ns, svc, name, portName string, port int32, addrs ...string) *discoveryv1.EndpointSlice {
	sl := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: ns, Name: name,
			Labels: map[string]string{discoveryv1.LabelServiceName: svc},
		},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: &portName, Port: &port}},
	}
	for _, a := range addrs {
		ep := discoveryv1.Endpoint{}
		switch {
		case strings.HasPrefix(a, "!"):
			a = a[1:]
			ep.Conditions.Ready = ptr(false)
		case strings.HasPrefix(a, "?"):
			a = a[1:]
		default:
			ep.Conditions.Ready = ptr(true)
		}
		if strings.Contains(a, ":") {
			sl.AddressType = discoveryv1.AddressTypeIPv6
		}
		ep.Addresses = []string{a}
		sl.Endpoints = append(sl.Endpoints, ep)
	}
	return sl
}

func ptr[T any](v T) *T { return &v }

func mkClass(name, controller string) *networkingv1.IngressClass {
	return &networkingv1.IngressClass{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       networkingv1.IngressClassSpec{Controller: controller},
	}
}

var (
	certOnce sync.Once
	certPEM  = map[string][2][]byte{}
)

// keyPair returns a self-signed certificate and key for one of a few fixed
// identities, generated once per test binary.
func keyPair(id string) (crt, key []byte) {
	certOnce.Do(func() {
		// a, b and c cover every example.com name the tests list; narrow
		// covers only narrow.example.com; legacy and legacy-wild name
		// theirs only by Common Name (no DNS names).
		for _, id := range []string{"a", "b", "c", "narrow", "legacy", "legacy-wild"} {
			names := []string{id + ".example.com", "*.example.com", "*.wild.example.com"}
			cn := "test-" + id
			switch id {
			case "narrow":
				names = names[:1]
			case "legacy":
				names, cn = nil, "Legacy.example.com"
			case "legacy-wild":
				names, cn = nil, "*.legacy.example.com"
			}
			priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
			if err != nil {
				panic(err)
			}
			tmpl := &x509.Certificate{
				SerialNumber: big.NewInt(1),
				Subject:      pkix.Name{CommonName: cn},
				DNSNames:     names,
				NotBefore:    time.Unix(0, 0),
				NotAfter:     time.Unix(1<<33, 0),
			}
			der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &priv.PublicKey, priv)
			if err != nil {
				panic(err)
			}
			keyDER, err := x509.MarshalECPrivateKey(priv)
			if err != nil {
				panic(err)
			}
			certPEM[id] = [2][]byte{
				pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
				pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
			}
		}
	})
	pair := certPEM[id]
	return pair[0], pair[1]
}

// mkSecret builds a kubernetes.io/tls Secret holding key pair id.
func mkSecret(ns, name, id string) *corev1.Secret {
	crt, key := keyPair(id)
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Type:       corev1.SecretTypeTLS,
		Data:       map[string][]byte{corev1.TLSCertKey: crt, corev1.TLSPrivateKeyKey: key},
	}
}

// mkSnapshot sorts objects into a snapshot and adds our "ramjet" class.
func mkSnapshot(objs ...runtime.Object) Snapshot {
	s := Snapshot{IngressClasses: []*networkingv1.IngressClass{mkClass("ramjet", DefaultControllerName)}}
	if err := s.Add(objs...); err != nil {
		panic(err)
	}
	return s
}

// served returns where a request goes: the backend ID, or "404".
func served(t *match.Table, host, path string) string {
	res := t.Lookup(host, path)
	if res.Backend == nil {
		return "404"
	}
	return res.Backend.ID
}

// short is the part of a warning most tests compare.
type short struct {
	Reason Reason
	Object string
	Field  string
}

func shorten(ws []Warning) []short {
	out := make([]short, 0, len(ws))
	for _, w := range ws {
		out = append(out, short{w.Reason, w.Object.String(), w.Field})
	}
	return out
}

// findWarning returns the one warning with reason and field, failing the
// test when there is not exactly one.
func findWarning(t *testing.T, ws []Warning, reason Reason, field string) Warning {
	t.Helper()
	var found []Warning
	for _, w := range ws {
		if w.Reason == reason && w.Field == field {
			found = append(found, w)
		}
	}
	require.Len(t, found, 1, "warnings %s at %s in:\n%s", reason, field, warningText(ws))
	return found[0]
}

func warningText(ws []Warning) string {
	var b strings.Builder
	for _, w := range ws {
		b.WriteString(w.String() + "\n")
	}
	return b.String()
}

// sharedBackendSnapshot has two Ingresses serving one backend, the older
// annotated with old, the newer with new. The newer refers to the backend
// three times (a default backend and two paths), so a conflict about it
// must be told once, not per reference.
func sharedBackendSnapshot(old, new []string) Snapshot {
	return mkSnapshot(
		mkService("prod", "api", ":80:"), mkSlice("prod", "api", "a", "", 80, "10.0.0.1"),
		mkIngress("prod", "old", 1, withAnnotations(old...), withRules(mkRule("a.example.com", prefix("/", "api", 80)))),
		mkIngress("prod", "new", 2, withAnnotations(new...), withDefault("api", 80),
			withRules(mkRule("b.example.com", prefix("/", "api", 80), exact("/x", "api", 80)))),
	)
}

// compileTable is Compile split into the table and warnings most tests want.
func compileTable(s Snapshot, o Options) (*match.Table, []Warning) {
	res := Compile(s, o)
	return res.Table, res.Warnings
}

// compileOK compiles and checks invariants every table must hold.
func compileOK(t *testing.T, s Snapshot, o Options) (*match.Table, []Warning) {
	t.Helper()
	tab, ws := compileTable(s, o)
	require.NotNil(t, tab)
	require.NotEmpty(t, tab.Digest())
	for _, w := range ws {
		require.NotEmpty(t, w.Reason, "warning %v", w)
		require.False(t, w.Object.IsZero(), "warning %v", w)
		require.NotEmpty(t, w.Field, "warning %v", w)
		require.NotEmpty(t, w.Message, "warning %v", w)
	}
	require.NotNil(t, tab.VirtualHostByName(""), "catch-all")
	return tab, ws
}
