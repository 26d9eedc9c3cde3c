package compile

import (
	"slices"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// fuzzReader turns fuzz bytes into choices. Past the end it yields zeros,
// so every input decodes to some snapshot.
type fuzzReader struct {
	data []byte
}

func (r *fuzzReader) byte() byte {
	if len(r.data) == 0 {
		return 0
	}
	b := r.data[0]
	r.data = r.data[1:]
	return b
}

func (r *fuzzReader) n(limit int) int { return int(r.byte()) % (limit + 1) }

func (r *fuzzReader) flag() bool { return r.byte()&1 == 1 }

// str picks from pool, or (high bit set) takes up to 31 raw bytes.
func (r *fuzzReader) str(pool ...string) string {
	b := r.byte()
	if b&0x80 == 0 {
		return pool[int(b)%len(pool)]
	}
	n := min(int(b&0x1f), len(r.data))
	s := string(r.data[:n])
	r.data = r.data[n:]
	return s
}

var (
	fuzzNamespaces = []string{"prod", "team"}
	fuzzServices   = []string{"s0", "s1", "s2"}
	fuzzPortNames  = []string{"", "http", "grpc"}
	fuzzHosts      = []string{"", "shop.example.com", "*.example.com", "a.example.com", "Shop.example.com", "shop.example.com:80", "10.0.0.1", "*", "a.*.com"}
	fuzzPaths      = []string{"", "/", "/api", "/api/", "^/api", "/api/(.*)", "api", "//", "/a/../b", "/(", "/(?!x)y", "^"}
	fuzzPathTypes  = []string{"", "Exact", "Prefix", "ImplementationSpecific", "Glob"}
	fuzzAnnKeys    = []string{
		NginxPrefix + "backend-protocol", NativePrefix + "backend-protocol", NginxPrefix + "ssl-redirect",
		NativePrefix + "force-ssl-redirect", NginxPrefix + "rewrite-target", NativePrefix + "rewrite-target",
		NativePrefix + "bogus", NginxPrefix + "proxy-body-size", "kubernetes.io/ingress.class", "example.com/x",
	}
	fuzzAnnValues = []string{"GRPC", "https", "true", "false", "ramjet", "nginx", ""}
	fuzzAddrs     = []string{"10.0.0.1", "10.0.0.2", "fd00::1", "fd00:0::1", "not-an-ip", "64:ff9b::a9fe:a9fe", "fd00:ec2::254"}
)

// fuzzSnapshot decodes a snapshot and options from fuzz input: up to three
// Ingresses, Services, EndpointSlices, two IngressClasses and two Secrets.
func fuzzSnapshot(data []byte) (Snapshot, Options) {
	r := &fuzzReader{data: data}
	var s Snapshot
	var o Options
	o.WatchIngressWithoutClass = r.flag()
	o.DisableSSLRedirect = r.flag()
	if r.flag() {
		o.DefaultBackend = &ServiceRef{Namespace: r.str(fuzzNamespaces...), Name: r.str(fuzzServices...), Port: r.str("80", "http", "8080")}
	}

	for range r.n(2) {
		ic := mkClass(r.str("ramjet", "nginx", "other"), r.str(DefaultControllerName, "k8s.io/ingress-nginx"))
		if r.flag() {
			ic.Annotations = map[string]string{networkingv1.AnnotationIsDefaultIngressClass: r.str("true", "false")}
		}
		s.IngressClasses = append(s.IngressClasses, ic)
	}

	backend := func() *networkingv1.IngressBackend {
		if r.byte()%8 == 0 {
			p := mkPath("Prefix", "/", "", nil)
			return &p.Backend
		}
		var port any = []int{80, 8080, 0, 9090}[r.n(3)]
		if r.flag() {
			port = r.str(fuzzPortNames...)
		}
		return mkBackend(r.str(fuzzServices...), port)
	}

	for range 1 + r.n(2) {
		ing := mkIngress(r.str(fuzzNamespaces...), r.str("i0", "i1", "i2"), int64(r.n(3)))
		switch r.n(3) {
		case 1:
			ing.Spec.IngressClassName = nil
		case 2:
			other := r.str("nginx", "other", "missing")
			ing.Spec.IngressClassName = &other
		}
		for range r.n(3) {
			withAnnotations(r.str(fuzzAnnKeys...), r.str(fuzzAnnValues...))(ing)
		}
		if r.flag() {
			ing.Spec.DefaultBackend = backend()
		}
		for range r.n(3) {
			rule := networkingv1.IngressRule{Host: r.str(fuzzHosts...)}
			if r.byte()%4 != 0 {
				rule.HTTP = &networkingv1.HTTPIngressRuleValue{}
				for range r.n(3) {
					p := networkingv1.HTTPIngressPath{Path: r.str(fuzzPaths...), Backend: *backend()}
					if pt := r.str(fuzzPathTypes...); pt != "" {
						p.PathType = (*networkingv1.PathType)(&pt)
					}
					rule.HTTP.Paths = append(rule.HTTP.Paths, p)
				}
			}
			ing.Spec.Rules = append(ing.Spec.Rules, rule)
		}
		for range r.n(2) {
			var hosts []string
			for range r.n(2) {
				hosts = append(hosts, r.str(fuzzHosts...))
			}
			withTLS(r.str("", "tls-a", "tls-b"), hosts...)(ing)
		}
		s.Ingresses = append(s.Ingresses, ing)
	}

	for range r.n(3) {
		svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: r.str(fuzzNamespaces...), Name: r.str(fuzzServices...)}}
		if r.byte()%5 == 0 {
			svc.Spec.Type = corev1.ServiceTypeExternalName
		}
		for range r.n(2) {
			target := intstr.FromInt32(int32(r.byte()) * 40)
			if r.flag() {
				target = intstr.FromString(r.str("web", "http", "80"))
			}
			svc.Spec.Ports = append(svc.Spec.Ports, corev1.ServicePort{
				Name: r.str(fuzzPortNames...), Port: int32(r.byte()%3) * 40, TargetPort: target,
			})
		}
		s.Services = append(s.Services, svc)
	}

	for i := range r.n(3) {
		sl := &discoveryv1.EndpointSlice{
			ObjectMeta: metav1.ObjectMeta{
				Namespace: r.str(fuzzNamespaces...), Name: "slice-" + strconv.Itoa(i),
				Labels: map[string]string{discoveryv1.LabelServiceName: r.str(fuzzServices...)},
			},
			AddressType: discoveryv1.AddressType(r.str("IPv4", "IPv6", "FQDN", "")),
		}
		for range r.n(2) {
			name, port := r.str(fuzzPortNames...), int32(r.byte())*40
			p := discoveryv1.EndpointPort{Port: &port}
			if r.flag() {
				p.Name = &name
			}
			sl.Ports = append(sl.Ports, p)
		}
		for range r.n(3) {
			ep := discoveryv1.Endpoint{Addresses: []string{r.str(fuzzAddrs...)}}
			switch r.n(2) {
			case 1:
				ep.Conditions.Ready = ptr(true)
			case 2:
				ep.Conditions.Ready = ptr(false)
			}
			sl.Endpoints = append(sl.Endpoints, ep)
		}
		s.EndpointSlices = append(s.EndpointSlices, sl)
	}

	for range r.n(2) {
		sec := mkSecret(r.str(fuzzNamespaces...), r.str("tls-a", "tls-b"), r.str("a", "b"))
		switch r.n(3) {
		case 1:
			sec.Type = corev1.SecretTypeOpaque
		case 2:
			sec.Data[corev1.TLSPrivateKeyKey] = []byte(r.str("garbage"))
		}
		s.Secrets = append(s.Secrets, sec)
	}
	return s, o
}

func reversedSnapshot(s Snapshot) Snapshot {
	out := Snapshot{
		Ingresses:      slices.Clone(s.Ingresses),
		IngressClasses: slices.Clone(s.IngressClasses),
		Services:       slices.Clone(s.Services),
		EndpointSlices: slices.Clone(s.EndpointSlices),
		Secrets:        slices.Clone(s.Secrets),
	}
	slices.Reverse(out.Ingresses)
	slices.Reverse(out.IngressClasses)
	slices.Reverse(out.Services)
	slices.Reverse(out.EndpointSlices)
	slices.Reverse(out.Secrets)
	return out
}

func FuzzCompile(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{1, 1, 1, 0, 0, 0, 1, 1, 2, 1, 1, 0, 1, 1, 1, 2, 1, 3, 2, 1, 0, 1, 1, 2, 0, 0, 1, 1, 1, 0})
	f.Add([]byte("\x00\x00\x00\x01\x00\x00\x00\x02\x00\x00\x00\x01\x03\x01\x01\x02\x00\x00\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d"))
	f.Add([]byte{0, 0, 1, 1, 0, 1, 2, 2, 0, 1, 0, 0, 0, 3, 0x83, 'a', '/', 'b', 1, 1, 0x84, '[', '(', '*', ')', 3, 2, 1, 1, 1, 1, 1, 1, 1, 2, 1, 1, 1})
	f.Fuzz(func(t *testing.T, data []byte) {
		s, o := fuzzSnapshot(data)
		tab, ws := compileTable(s, o)
		again, ws2 := compileTable(s, o)
		rev, ws3 := compileTable(reversedSnapshot(s), o)
		if tab.Digest() != again.Digest() || tab.Digest() != rev.Digest() {
			t.Fatalf("digests differ: %s %s %s", tab.Digest(), again.Digest(), rev.Digest())
		}
		if diff := cmp.Diff(ws, ws2); diff != "" {
			t.Fatalf("warnings differ on recompiling (-first +second):\n%s", diff)
		}
		if diff := cmp.Diff(ws, ws3); diff != "" {
			t.Fatalf("warnings differ on reversed input (-first +reversed):\n%s", diff)
		}
		if diff := cmp.Diff(tab.String(), rev.String()); diff != "" {
			t.Fatalf("tables differ on reversed input (-first +reversed):\n%s", diff)
		}
		for _, w := range ws {
			if w.Reason == "" || w.Object.IsZero() || w.Field == "" || w.Message == "" {
				t.Fatalf("incomplete warning %#v", w)
			}
		}
		for vh := range tab.VirtualHosts() {
			for _, path := range []string{"/", "/api", "/api/x"} {
				tab.Lookup(vh.Name, path)
			}
			for _, r := range vh.Routes {
				if r.Backend == nil {
					t.Fatalf("route %v without backend", r.Source)
				}
			}
		}
	})
}
