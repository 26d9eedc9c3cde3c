package compile_test

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"ramjet.dev/ramjet/compile"
	"ramjet.dev/ramjet/match"
	"ramjet.dev/ramjet/router/routertest"
)

// The equality of Compiler.Compile and Compile (SPEC §17) is held here by
// replaying random sequences of adds, updates and deletes of every kind of
// object over the case files' objects, comparing after every step.

// pool is the material the sequences draw from: every case's objects and
// options.
type pool struct {
	cases      []routertest.Case
	ingresses  []*networkingv1.Ingress
	classes    []*networkingv1.IngressClass
	services   []*corev1.Service
	slices     []*discoveryv1.EndpointSlice
	secrets    []*corev1.Secret
	configMaps []*corev1.ConfigMap
	hosts      []string
}

func loadPool(tb testing.TB) *pool {
	tb.Helper()
	cases, err := routertest.LoadCases("../testdata/cases")
	if err != nil {
		tb.Fatal(err)
	}
	p := &pool{cases: cases}
	hosts := map[string]bool{}
	for _, c := range cases {
		s := c.Objects
		p.ingresses = append(p.ingresses, s.Ingresses...)
		p.classes = append(p.classes, s.IngressClasses...)
		p.services = append(p.services, s.Services...)
		p.slices = append(p.slices, s.EndpointSlices...)
		p.secrets = append(p.secrets, s.Secrets...)
		p.configMaps = append(p.configMaps, s.ConfigMaps...)
		for _, ing := range s.Ingresses {
			for _, r := range ing.Spec.Rules {
				if !hosts[r.Host] {
					hosts[r.Host] = true
					p.hosts = append(p.hosts, r.Host)
				}
			}
		}
	}
	if len(p.ingresses) == 0 || len(p.services) == 0 || len(p.slices) == 0 || len(p.secrets) == 0 || len(p.classes) == 0 || len(p.configMaps) == 0 {
		tb.Fatalf("the cases lack a kind of object: %d Ingresses, %d Services, %d slices, %d Secrets, %d classes, %d ConfigMaps",
			len(p.ingresses), len(p.services), len(p.slices), len(p.secrets), len(p.classes), len(p.configMaps))
	}
	return p
}

// chooser is where a sequence's choices come from: a seeded generator, or
// the fuzzer's bytes.
type chooser interface{ IntN(n int) int }

// byteChooser reads choices from data, then zeros.
type byteChooser struct{ data []byte }

func (b *byteChooser) IntN(n int) int {
	if n <= 1 {
		return 0
	}
	var v uint16
	if len(b.data) >= 2 {
		v = binary.LittleEndian.Uint16(b.data)
		b.data = b.data[2:]
	} else if len(b.data) == 1 {
		v = uint16(b.data[0])
		b.data = b.data[1:]
	}
	return int(v) % n
}

func (b *byteChooser) done() bool { return len(b.data) == 0 }

func pick[T any](ch chooser, from []T) T { return from[ch.IntN(len(from))] }

// sequence is one replay: the snapshot and options a Compiler and Compile
// are both given after each step.
type sequence struct {
	p    *pool
	ch   chooser
	snap compile.Snapshot
	opts compile.Options
	// serial makes the objects a step creates unique.
	serial int
	// what the last step did, for failure messages.
	log []string
	// ingressesOnly: no other route source, which a Compiler always
	// compiles in full, so that the sequence recompiles more.
	ingressesOnly bool
}

func (q *sequence) note(s string) { q.log = append(q.log, s) }

// replace returns in with the element at i replaced by v (nil deletes it),
// as a new slice: the previous snapshot is never modified.
func replace[T any](in []*T, i int, v *T) []*T {
	out := make([]*T, 0, len(in)+1)
	out = append(out, in[:i]...)
	if v != nil {
		out = append(out, v)
	}
	return append(out, in[i+1:]...)
}

func add[T any](in []*T, v *T) []*T {
	out := make([]*T, 0, len(in)+1)
	out = append(out, in...)
	return append(out, v)
}

// bump is a write that changes nothing a compile reads: a new
// resourceVersion, a status.
func bump(m *metav1.ObjectMeta, serial int) {
	m.ResourceVersion = strconv.Itoa(1000 + serial)
	m.Generation++
	m.ManagedFields = append(m.ManagedFields, metav1.ManagedFieldsEntry{Manager: "test", Operation: metav1.ManagedFieldsOperationUpdate})
}

// step applies one random change.
func (q *sequence) step() {
	q.serial++
	ch := q.ch
	s := &q.snap
	switch k := ch.IntN(17); {
	case k < 6:
		q.ingressStep()
	case k < 8:
		q.serviceStep()
	case k < 10:
		q.sliceStep()
	case k == 10:
		q.secretStep()
	case k == 11:
		q.classStep()
	case k == 12:
		q.configMapStep()
	case k == 13 && !q.ingressesOnly:
		q.routeStep()
	case k == 15:
		q.gatewayStep()
	case k == 13 || k == 14:
		// The same objects again, in another order, some as equal copies.
		n := compile.Snapshot{
			Ingresses: shuffled(ch, s.Ingresses), IngressClasses: shuffled(ch, s.IngressClasses),
			Services: shuffled(ch, s.Services), EndpointSlices: shuffled(ch, s.EndpointSlices),
			Secrets: shuffled(ch, s.Secrets), ConfigMaps: shuffled(ch, s.ConfigMaps),
			HTTPRoutes: s.HTTPRoutes, Warnings: s.Warnings, ListenerCertificates: s.ListenerCertificates,
			Listeners: s.Listeners, PassthroughListeners: s.PassthroughListeners, TLSRoutes: shuffled(ch, s.TLSRoutes),
		}
		if len(n.TLSRoutes) > 0 && ch.IntN(2) == 0 {
			// An equal copy, as a translation makes on every rebuild.
			i := ch.IntN(len(n.TLSRoutes))
			tr := *n.TLSRoutes[i]
			tr.Hostnames, tr.Backends = append([]string(nil), tr.Hostnames...), append([]compile.WeightedBackend(nil), tr.Backends...)
			n.TLSRoutes = replace(n.TLSRoutes, i, &tr)
		}
		if len(n.Ingresses) > 0 && ch.IntN(2) == 0 {
			i := ch.IntN(len(n.Ingresses))
			n.Ingresses = replace(n.Ingresses, i, n.Ingresses[i].DeepCopy())
		}
		if len(n.Services) > 0 && ch.IntN(2) == 0 {
			i := ch.IntN(len(n.Services))
			n.Services = replace(n.Services, i, n.Services[i].DeepCopy())
		}
		*s = n
		q.note("same objects")
	default:
		q.optionsStep()
	}
}

func shuffled[T any](ch chooser, in []T) []T {
	out := append([]T(nil), in...)
	for i := len(out) - 1; i > 0; i-- {
		j := ch.IntN(i + 1)
		out[i], out[j] = out[j], out[i]
	}
	return out
}

func (q *sequence) ingressStep() {
	ch, s := q.ch, &q.snap
	if len(s.Ingresses) == 0 || ch.IntN(5) == 0 {
		ing := pick(ch, q.p.ingresses)
		if ch.IntN(3) == 0 {
			// Another name, so that it joins rather than replaces.
			ing = ing.DeepCopy()
			ing.Name += "-" + strconv.Itoa(q.serial)
			ing.UID = types.UID("uid-" + ing.Name)
		}
		if ch.IntN(2) == 0 {
			ing = q.simplified(ing)
		}
		s.Ingresses = add(s.Ingresses, ing)
		q.note("add Ingress " + ing.Namespace + "/" + ing.Name)
		return
	}
	i := ch.IntN(len(s.Ingresses))
	old := s.Ingresses[i]
	if ch.IntN(6) == 0 {
		s.Ingresses = replace(s.Ingresses, i, nil)
		q.note("delete Ingress " + old.Namespace + "/" + old.Name)
		return
	}
	ing := old.DeepCopy()
	other := pick(ch, q.p.ingresses)
	what := ""
	switch ch.IntN(12) {
	case 0:
		bump(&ing.ObjectMeta, q.serial)
		ing.Status.LoadBalancer.Ingress = []networkingv1.IngressLoadBalancerIngress{{IP: "192.0.2." + strconv.Itoa(q.serial%250)}}
		what = "status"
	case 1, 2:
		if len(other.Annotations) > 0 {
			keys := make([]string, 0, len(other.Annotations))
			for k := range other.Annotations {
				keys = append(keys, k)
			}
			k := keys[ch.IntN(len(keys))]
			if ing.Annotations == nil {
				ing.Annotations = map[string]string{}
			}
			ing.Annotations[k] = other.Annotations[k]
			what = "annotation " + k
		}
	case 3:
		for k := range ing.Annotations {
			delete(ing.Annotations, k)
			what = "drop annotation " + k
			break
		}
	case 4:
		if len(ing.Spec.Rules) > 0 {
			ing.Spec.Rules[ch.IntN(len(ing.Spec.Rules))].Host = pick(ch, q.p.hosts)
			what = "host"
		}
	case 5:
		ing.Spec.Rules = other.DeepCopy().Spec.Rules
		what = "rules of " + other.Name
	case 6:
		svc := pick(ch, q.p.services)
		for ri := range ing.Spec.Rules {
			if h := ing.Spec.Rules[ri].HTTP; h != nil && len(h.Paths) > 0 {
				if b := h.Paths[0].Backend.Service; b != nil {
					b.Name = svc.Name
					what = "backend " + svc.Name
				}
				break
			}
		}
	case 7:
		ing.CreationTimestamp = metav1.NewTime(time.Date(2024, 1, 1+ch.IntN(5), 0, 0, 0, 0, time.UTC))
		what = "created"
	case 8:
		ing.Spec.TLS = other.DeepCopy().Spec.TLS
		what = "tls of " + other.Name
	case 9:
		ing = q.simplified(ing)
		what = "simplified"
	case 10:
		ing.Spec.IngressClassName = other.Spec.IngressClassName
		ing.Spec.DefaultBackend = other.DeepCopy().Spec.DefaultBackend
		what = "class and default backend of " + other.Name
	default:
		ing.Namespace = other.Namespace
		what = "namespace " + other.Namespace
	}
	s.Ingresses = replace(s.Ingresses, i, ing)
	q.note("update Ingress " + old.Namespace + "/" + old.Name + ": " + what)
}

// simplified is a copy of ing without what couples it beyond its hosts
// and Services (the catch-all, a default backend, TLS), which a Compiler
// recompiles alone: so that the sequences exercise that path with every
// annotation the cases hold.
func (q *sequence) simplified(ing *networkingv1.Ingress) *networkingv1.Ingress {
	ing = ing.DeepCopy()
	ing.Spec.TLS, ing.Spec.DefaultBackend = nil, nil
	for i := range ing.Spec.Rules {
		if r := &ing.Spec.Rules[i]; r.Host == "" || r.Host[0] == '*' {
			r.Host = pick(q.ch, q.p.hosts)
		}
	}
	if len(ing.Spec.Rules) == 0 {
		svc := pick(q.ch, q.p.services)
		prefix := networkingv1.PathTypePrefix
		ing.Spec.Rules = []networkingv1.IngressRule{{Host: pick(q.ch, q.p.hosts), IngressRuleValue: networkingv1.IngressRuleValue{
			HTTP: &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{{Path: "/", PathType: &prefix,
				Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: svc.Name, Port: networkingv1.ServiceBackendPort{Number: 80}}}}}}}}}
	}
	return ing
}

// simplifyAll simplifies every Ingress of the snapshot.
func (q *sequence) simplifyAll() {
	q.ingressesOnly = true
	ings := make([]*networkingv1.Ingress, len(q.snap.Ingresses))
	for i, ing := range q.snap.Ingresses {
		ings[i] = q.simplified(ing)
	}
	q.snap.Ingresses = ings
	q.note("simplified")
}

func (q *sequence) serviceStep() {
	ch, s := q.ch, &q.snap
	if len(s.Services) == 0 || ch.IntN(4) == 0 {
		svc := pick(ch, q.p.services)
		s.Services = add(s.Services, svc)
		q.note("add Service " + svc.Namespace + "/" + svc.Name)
		return
	}
	i := ch.IntN(len(s.Services))
	old := s.Services[i]
	svc := old.DeepCopy()
	switch ch.IntN(4) {
	case 0:
		s.Services = replace(s.Services, i, nil)
		q.note("delete Service " + old.Namespace + "/" + old.Name)
		return
	case 1:
		bump(&svc.ObjectMeta, q.serial)
		svc.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "192.0.2.9"}}
	case 2:
		svc.Spec = *pick(ch, q.p.services).Spec.DeepCopy()
	default:
		if len(svc.Spec.Ports) > 0 {
			svc.Spec.Ports[0].Port++
		}
	}
	s.Services = replace(s.Services, i, svc)
	q.note("update Service " + old.Namespace + "/" + old.Name)
}

func (q *sequence) sliceStep() {
	ch, s := q.ch, &q.snap
	if len(s.EndpointSlices) == 0 || ch.IntN(4) == 0 {
		sl := pick(ch, q.p.slices)
		s.EndpointSlices = add(s.EndpointSlices, sl)
		q.note("add EndpointSlice " + sl.Namespace + "/" + sl.Name)
		return
	}
	i := ch.IntN(len(s.EndpointSlices))
	old := s.EndpointSlices[i]
	sl := old.DeepCopy()
	switch ch.IntN(6) {
	case 5:
		// An address that is never dialled: the slice's warnings change.
		if len(sl.Endpoints) > 0 {
			e := &sl.Endpoints[ch.IntN(len(sl.Endpoints))]
			e.Addresses = append(e.Addresses, pick(ch, []string{"169.254.169.254", "127.0.0.2", "::1"}))
		}
	case 0:
		s.EndpointSlices = replace(s.EndpointSlices, i, nil)
		q.note("delete EndpointSlice " + old.Namespace + "/" + old.Name)
		return
	case 1:
		bump(&sl.ObjectMeta, q.serial)
	case 2:
		sl.Endpoints = pick(ch, q.p.slices).DeepCopy().Endpoints
	case 3:
		if len(sl.Endpoints) > 0 {
			e := &sl.Endpoints[ch.IntN(len(sl.Endpoints))]
			ready := e.Conditions.Ready == nil || !*e.Conditions.Ready
			e.Conditions.Ready = &ready
		}
	default:
		if sl.Labels == nil {
			sl.Labels = map[string]string{}
		}
		sl.Labels[discoveryv1.LabelServiceName] = pick(ch, q.p.services).Name
	}
	s.EndpointSlices = replace(s.EndpointSlices, i, sl)
	q.note("update EndpointSlice " + old.Namespace + "/" + old.Name)
}

func (q *sequence) secretStep() {
	ch, s := q.ch, &q.snap
	if len(s.Secrets) == 0 || ch.IntN(3) == 0 {
		sec := pick(ch, q.p.secrets)
		s.Secrets = add(s.Secrets, sec)
		q.note("add Secret " + sec.Namespace + "/" + sec.Name)
		return
	}
	i := ch.IntN(len(s.Secrets))
	old := s.Secrets[i]
	sec := old.DeepCopy()
	switch ch.IntN(3) {
	case 0:
		s.Secrets = replace(s.Secrets, i, nil)
		q.note("delete Secret " + old.Namespace + "/" + old.Name)
		return
	case 1:
		bump(&sec.ObjectMeta, q.serial)
	default:
		other := pick(ch, q.p.secrets)
		sec.Data, sec.Type = other.DeepCopy().Data, other.Type
	}
	s.Secrets = replace(s.Secrets, i, sec)
	q.note("update Secret " + old.Namespace + "/" + old.Name)
}

func (q *sequence) classStep() {
	ch, s := q.ch, &q.snap
	if len(s.IngressClasses) == 0 || ch.IntN(3) == 0 {
		c := pick(ch, q.p.classes)
		s.IngressClasses = add(s.IngressClasses, c)
		q.note("add IngressClass " + c.Name)
		return
	}
	i := ch.IntN(len(s.IngressClasses))
	old := s.IngressClasses[i]
	c := old.DeepCopy()
	switch ch.IntN(4) {
	case 0:
		s.IngressClasses = replace(s.IngressClasses, i, nil)
		q.note("delete IngressClass " + old.Name)
		return
	case 1:
		bump(&c.ObjectMeta, q.serial)
	case 2:
		if c.Spec.Controller == compile.DefaultControllerName {
			c.Spec.Controller = "example.com/other"
		} else {
			c.Spec.Controller = compile.DefaultControllerName
		}
	default:
		if c.Annotations == nil {
			c.Annotations = map[string]string{}
		}
		if c.Annotations[networkingv1.AnnotationIsDefaultIngressClass] == "true" {
			delete(c.Annotations, networkingv1.AnnotationIsDefaultIngressClass)
		} else {
			c.Annotations[networkingv1.AnnotationIsDefaultIngressClass] = "true"
		}
	}
	s.IngressClasses = replace(s.IngressClasses, i, c)
	q.note("update IngressClass " + old.Name)
}

// configMapStep changes the ConfigMaps of the snapshot, which
// add-headers and proxy-set-headers name, and with them the options'
// ConfigMap parsed from one of them.
func (q *sequence) configMapStep() {
	ch, s := q.ch, &q.snap
	if len(s.ConfigMaps) == 0 || ch.IntN(3) == 0 {
		cm := pick(ch, q.p.configMaps)
		s.ConfigMaps = add(s.ConfigMaps, cm)
		q.note("add ConfigMap " + cm.Namespace + "/" + cm.Name)
	} else {
		i := ch.IntN(len(s.ConfigMaps))
		old := s.ConfigMaps[i]
		cm := old.DeepCopy()
		switch ch.IntN(3) {
		case 0:
			s.ConfigMaps = replace(s.ConfigMaps, i, nil)
			q.note("delete ConfigMap " + old.Namespace + "/" + old.Name)
		case 1:
			bump(&cm.ObjectMeta, q.serial)
			s.ConfigMaps = replace(s.ConfigMaps, i, cm)
			q.note("touch ConfigMap " + old.Namespace + "/" + old.Name)
		default:
			cm.Data = pick(ch, q.p.configMaps).DeepCopy().Data
			s.ConfigMaps = replace(s.ConfigMaps, i, cm)
			q.note("update ConfigMap " + old.Namespace + "/" + old.Name)
		}
	}
	// The options' ConfigMap is parsed again, as a controller does on
	// every rebuild: from the ConfigMap it names when that is still
	// there, so that an unchanged one parses to an equal value.
	if len(s.ConfigMaps) > 0 && ch.IntN(2) == 0 {
		cm := pick(ch, s.ConfigMaps)
		q.opts.ConfigMap = compile.ParseConfigMap(cm)
		q.opts.ConfigMap.ReadHeaders(s.ConfigMaps)
		q.note("options ConfigMap " + cm.Namespace + "/" + cm.Name)
	}
}

// routeStep adds or removes a route of a source other than Ingresses, as
// compile/gatewayapi translates HTTPRoutes, on the pool's hosts and
// Services.
func (q *sequence) routeStep() {
	ch, s := q.ch, &q.snap
	if len(s.HTTPRoutes) > 0 && ch.IntN(3) == 0 {
		i := ch.IntN(len(s.HTTPRoutes))
		q.note("delete HTTPRoute " + s.HTTPRoutes[i].Name)
		s.HTTPRoutes = replace(s.HTTPRoutes, i, nil)
		return
	}
	svc := pick(ch, q.p.services)
	port := "80"
	if len(svc.Spec.Ports) > 0 {
		port = strconv.Itoa(int(svc.Spec.Ports[0].Port))
	}
	types := []match.PathType{match.Exact, match.Prefix, match.Regex}
	paths := []string{"/", "/app", "/api/", "/foo"}
	r := &compile.HTTPRoute{
		Namespace: svc.Namespace, Name: "route-" + strconv.Itoa(q.serial),
		Created:   time.Date(2024, 1, 1+ch.IntN(5), 0, 0, 0, 0, time.UTC),
		Hostnames: []string{pick(ch, q.p.hosts)},
		Rules: []compile.HTTPRouteRule{{
			Field:    "spec.rules[0]",
			Matches:  []compile.HTTPRouteMatch{{Field: "spec.rules[0].matches[0]", Type: pick(ch, types), Path: pick(ch, paths)}},
			Backends: []compile.WeightedBackend{{Service: compile.ServiceRef{Namespace: svc.Namespace, Name: svc.Name, Port: port}, Weight: 1}},
		}},
	}
	s.HTTPRoutes = add(s.HTTPRoutes, r)
	q.note("add HTTPRoute " + r.Name)
}

// gatewayStep changes what the Gateway API adds beside routes: a
// listener's hostname (HTTP or HTTPS, served or not by an Ingress's
// host), a TLS passthrough listener, or a TLSRoute on one, to the pool's
// Services.
func (q *sequence) gatewayStep() {
	ch, s := q.ch, &q.snap
	listeners := []match.Listener{{Port: 80}, {Port: 443, TLS: true}, {Port: 8443, TLS: true}}
	hostname := func() string {
		switch ch.IntN(5) {
		case 0:
			return ""
		case 1:
			return "*." + strings.TrimPrefix(pick(ch, q.p.hosts), "*.")
		}
		return pick(ch, q.p.hosts)
	}
	switch ch.IntN(3) {
	case 0:
		if len(s.Listeners) > 0 && ch.IntN(3) == 0 {
			i := ch.IntN(len(s.Listeners))
			s.Listeners = append(append([]match.ListenerHost(nil), s.Listeners[:i]...), s.Listeners[i+1:]...)
			q.note("delete listener")
			return
		}
		lh := match.ListenerHost{Listener: pick(ch, listeners), Hostname: hostname()}
		s.Listeners = append(append([]match.ListenerHost(nil), s.Listeners...), lh)
		q.note("add listener " + lh.Listener.String() + " " + lh.Hostname)
	case 1:
		if len(s.PassthroughListeners) > 0 && ch.IntN(3) == 0 {
			s.PassthroughListeners = s.PassthroughListeners[: len(s.PassthroughListeners)-1 : len(s.PassthroughListeners)-1]
			q.note("delete passthrough listener")
			return
		}
		lh := match.ListenerHost{Listener: pick(ch, listeners[1:]), Hostname: hostname()}
		s.PassthroughListeners = append(append([]match.ListenerHost(nil), s.PassthroughListeners...), lh)
		q.note("add passthrough listener " + lh.Listener.String() + " " + lh.Hostname)
	default:
		if len(s.TLSRoutes) > 0 && ch.IntN(3) == 0 {
			i := ch.IntN(len(s.TLSRoutes))
			q.note("delete TLSRoute " + s.TLSRoutes[i].Name)
			s.TLSRoutes = replace(s.TLSRoutes, i, nil)
			return
		}
		backend := func(i int) compile.WeightedBackend {
			svc := pick(ch, q.p.services)
			port := "443"
			if len(svc.Spec.Ports) > 0 && ch.IntN(4) > 0 {
				port = strconv.Itoa(int(svc.Spec.Ports[0].Port))
			}
			wb := compile.WeightedBackend{Service: compile.ServiceRef{Namespace: svc.Namespace, Name: svc.Name, Port: port},
				Weight: int32(ch.IntN(3)), Field: "spec.rules[0].backendRefs[" + strconv.Itoa(i) + "]"}
			if ch.IntN(8) == 0 {
				wb.Invalid = "a kind that is not a Service"
			}
			return wb
		}
		tr := &compile.TLSRoute{
			Namespace: "default", Name: "tls-" + strconv.Itoa(q.serial%7),
			Created:  time.Date(2024, 1, 1+ch.IntN(3), 0, 0, 0, 0, time.UTC),
			Listener: pick(ch, listeners), ListenerHostname: hostname(),
			Field: "spec.rules[0]",
		}
		for range ch.IntN(3) {
			tr.Hostnames = append(tr.Hostnames, hostname())
		}
		for i := range ch.IntN(3) {
			tr.Backends = append(tr.Backends, backend(i))
		}
		if len(tr.Backends) > 0 {
			tr.Namespace = tr.Backends[0].Service.Namespace
		}
		i := slices.IndexFunc(s.TLSRoutes, func(r *compile.TLSRoute) bool { return r.Namespace == tr.Namespace && r.Name == tr.Name })
		if i >= 0 {
			s.TLSRoutes = replace(s.TLSRoutes, i, tr)
			q.note("update TLSRoute " + tr.Name)
		} else {
			s.TLSRoutes = add(s.TLSRoutes, tr)
			q.note("add TLSRoute " + tr.Name)
		}
	}
}

// optionsStep takes another case's options, or the same options rebuilt
// as a controller builds them on every rebuild.
func (q *sequence) optionsStep() {
	ch := q.ch
	if ch.IntN(2) == 0 {
		c := pick(ch, q.p.cases)
		q.opts = c.Options
		q.note("options of case " + c.Name)
		return
	}
	o := q.opts
	if o.DefaultBackend != nil {
		d := *o.DefaultBackend
		o.DefaultBackend = &d
	}
	o.ExtensionKeys = append([]string(nil), o.ExtensionKeys...)
	q.opts = o
	q.note("options rebuilt")
}

// sameLookups is the lookup of name and path on l in two tables, as text.
// A regular expression's match that timed out (10 ms, easily passed under
// the race detector on a loaded machine) answers no match; when either
// table counted a timeout the lookups are made again, so that only a
// difference that stays fails.
func sameLookups(want, got *match.Table, l match.Listener, name, path string) (string, string) {
	var a, b string
	for range 5 {
		before := want.RegexTimeouts() + got.RegexTimeouts()
		a, b = lookupText(want.LookupOn(l, name, path, nil)), lookupText(got.LookupOn(l, name, path, nil))
		if a == b || want.RegexTimeouts()+got.RegexTimeouts() == before {
			break
		}
	}
	return a, b
}

// check compiles the snapshot both ways and fails on any difference.
func (q *sequence) check(t testing.TB, c *compile.Compiler) {
	t.Helper()
	c.Options = q.opts
	got := c.Compile(q.snap)
	want := compile.Compile(q.snap, q.opts)
	if why := compile.CompilerCheck(c); why != "" {
		t.Fatalf("after %q: %s\nsteps: %q", q.log[len(q.log)-1], why, q.log)
	}
	if got.Table.Digest() != want.Table.Digest() || got.String() != want.String() || !equalRefs(got.Claimed, want.Claimed) ||
		!reflect.DeepEqual(got.Unclaimed, want.Unclaimed) || !sameRatings(got.Warnings, want.Warnings) {
		t.Fatalf("after %q the Compiler's result differs from Compile's\nsteps: %q\n--- Compile:\n%s\n--- Compiler:\n%s",
			q.log[len(q.log)-1], q.log, want.String()+fmt.Sprintf("unclaimed %+v\n", want.Unclaimed), got.String()+fmt.Sprintf("unclaimed %+v\n", got.Unclaimed))
	}
	if a, b := passthroughText(want.Table), passthroughText(got.Table); a != b {
		t.Fatalf("after %q the Compiler's passthrough routes reach\n%s\nCompile's\n%s\nsteps: %q", q.log[len(q.log)-1], b, a, q.log)
	}
	// The lookup index answers as Compile's: each host by name, and a
	// name below each, on each route's path, one below and one beside,
	// on each listener too.
	listeners := append([]match.Listener{{}}, want.Table.Listeners()...)
	for vh := range want.Table.VirtualHosts() {
		names := []string{vh.Name, "x." + strings.TrimPrefix(vh.Name, "*.")}
		paths := []string{"/", "/nothing-here"}
		for _, r := range vh.Routes {
			paths = append(paths, "/"+strings.TrimLeft(r.Path, "/^"), "/"+strings.TrimLeft(r.Path, "/^")+"/x")
		}
		for _, name := range names {
			for _, path := range paths {
				for _, l := range listeners {
					if a, b := sameLookups(want.Table, got.Table, l, name, path); a != b {
						t.Fatalf("after %q the Compiler's table answers %s%s on %s with %s, Compile's with %s\nsteps: %q", q.log[len(q.log)-1], name, path, l, b, a, q.log)
					}
				}
			}
		}
	}
}

// passthroughText is where the TLS passthrough routes send, endpoints
// included.
func passthroughText(t *match.Table) string {
	var b strings.Builder
	for _, r := range t.PassthroughRoutes() {
		b.WriteString(r.Listener.String() + " " + r.ListenerHostname + " " + r.Hostname + ":")
		if r.Split != nil {
			for _, a := range r.Split.Alternatives {
				if a.Backend != nil {
					b.WriteString(" " + a.Backend.ID + " " + strings.Join(a.Backend.Endpoints, ","))
				}
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

// lookupText is what a lookup answered, by name.
func lookupText(r match.Result) string {
	s := "host " + r.Host.Name
	if r.Route != nil {
		s += " route " + r.Route.Type.String() + " " + r.Route.Path + " " + r.Route.Source.String()
	}
	if r.Backend != nil {
		s += " -> " + r.Backend.ID + " " + strings.Join(r.Backend.Endpoints, ",")
	}
	return s
}

// sameRatings compares the warnings' severities, which String leaves out.
func sameRatings(a, b []compile.Warning) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Severity() != b[i].Severity() {
			return false
		}
	}
	return true
}

func equalRefs(a, b []compile.Ref) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestRecompileEqualsCompile(t *testing.T) {
	p := loadPool(t)
	sequences, steps := 300, 25
	if testing.Short() {
		sequences = 60
	}
	reused, recompiled, shared, endpointOnly, listeners, passthrough := 0, 0, 0, 0, 0, 0
	reasons := map[string]int{}
	for n := range sequences {
		rng := rand.New(rand.NewPCG(40, uint64(n)))
		c0 := p.cases[rng.IntN(len(p.cases))]
		q := &sequence{p: p, ch: rng, snap: c0.Objects, opts: c0.Options}
		q.note("case " + c0.Name)
		if n%2 == 1 {
			q.simplifyAll()
		}
		c := &compile.Compiler{}
		q.check(t, c)
		for range steps {
			q.step()
			q.check(t, c)
		}
		reused += compile.CompilerReuses(c)
		recompiled += compile.CompilerRecompiles(c)
		shared += compile.CompilerShared(c)
		endpointOnly += compile.CompilerEndpointOnly(c)
		l, p := compile.CompilerGatewayRecompiles(c)
		listeners, passthrough = listeners+l, passthrough+p
		for k, v := range compile.CompilerFullReasons(c) {
			reasons[k] += v
		}
	}
	t.Logf("compiled in full instead: %v", reasons)
	// The test is no proof unless the reuse happens.
	if reused == 0 || recompiled == 0 || shared < recompiled/2 || endpointOnly < recompiled/20 || listeners < recompiled/20 || passthrough < recompiled/20 {
		t.Fatalf("%d compiles reused the previous result, %d recompiled what changed, %d of them sharing the previous table's hosts, %d changing endpoint lists alone, %d with Gateway listeners and %d with TLSRoutes: want some of each, and most recompiles sharing",
			reused, recompiled, shared, endpointOnly, listeners, passthrough)
	}
	t.Logf("of %d compiles, %d reused the previous result and %d compiled only what changed, %d of them sharing the previous table's unchanged hosts, %d changing endpoint lists alone, %d with Gateway listeners, %d with TLSRoutes",
		sequences*(steps+1), reused, recompiled, shared, endpointOnly, listeners, passthrough)
}

func FuzzRecompile(f *testing.F) {
	p := loadPool(f)
	for i := range 8 {
		seed := make([]byte, 64)
		rng := rand.New(rand.NewPCG(41, uint64(i)))
		for j := range seed {
			seed[j] = byte(rng.IntN(256))
		}
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 4096 {
			return
		}
		ch := &byteChooser{data: data}
		c0 := p.cases[ch.IntN(len(p.cases))]
		q := &sequence{p: p, ch: ch, snap: c0.Objects, opts: c0.Options}
		q.note("case " + c0.Name)
		if ch.IntN(2) == 1 {
			q.simplifyAll()
		}
		c := &compile.Compiler{}
		q.check(t, c)
		for !ch.done() {
			q.step()
			q.check(t, c)
		}
	})
}

// TestRecompileWhileServing looks up every path of each table while the
// next one is recompiled from it, as a router serves the last table while
// a controller compiles the next: under -race, a recompile that wrote to
// what the previous table holds would be reported.
func TestRecompileWhileServing(t *testing.T) {
	var s compile.Snapshot
	for i := range 300 {
		id := strconv.Itoa(i)
		svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "svc-" + id},
			Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80}}}}
		ready := true
		sl := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "svc-" + id + "-a",
			Labels: map[string]string{discoveryv1.LabelServiceName: svc.Name}},
			AddressType: discoveryv1.AddressTypeIPv4, Ports: []discoveryv1.EndpointPort{{Name: ptrTo("http"), Port: ptrTo(int32(8080))}},
			Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.0.1." + strconv.Itoa(i%250+1)}, Conditions: discoveryv1.EndpointConditions{Ready: &ready}}}}
		s.Services = append(s.Services, svc)
		s.EndpointSlices = append(s.EndpointSlices, sl)
		s.Ingresses = append(s.Ingresses, servingIngress(i, 0))
	}
	c := &compile.Compiler{Options: compile.Options{WatchIngressWithoutClass: true}}
	prev := c.Compile(s)
	for step := range 40 {
		done := make(chan struct{})
		go func(tab *match.Table) {
			defer close(done)
			for i := range 300 {
				id := strconv.Itoa(i)
				tab.Lookup("host-"+id+".example.com", "/exact")
				tab.Lookup("host-"+id+".example.com", "/prefix/x")
				tab.Lookup("host-"+id+".example.com", "/r1/x")
			}
		}(prev.Table)
		i := (step * 7) % 300
		next := s
		next.Ingresses = append([]*networkingv1.Ingress(nil), s.Ingresses...)
		next.Ingresses[i] = servingIngress(i, step+1)
		res := c.Compile(next)
		<-done
		if want := compile.Compile(next, c.Options); res.String() != want.String() {
			t.Fatalf("step %d: the Compiler's result differs from Compile's", step)
		}
		s, prev = next, res
	}
}

// servingIngress is Ingress i of TestRecompileWhileServing, its version v
// with v regex paths more than the first.
func servingIngress(i, v int) *networkingv1.Ingress {
	id := strconv.Itoa(i)
	exact, prefix := networkingv1.PathTypeExact, networkingv1.PathTypePrefix
	impl := networkingv1.PathTypeImplementationSpecific
	be := networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: "svc-" + id, Port: networkingv1.ServiceBackendPort{Name: "http"}}}
	paths := []networkingv1.HTTPIngressPath{{Path: "/exact", PathType: &exact, Backend: be}, {Path: "/prefix/", PathType: &prefix, Backend: be}}
	ann := map[string]string{}
	if i%3 == 0 {
		ann["nginx.ingress.kubernetes.io/use-regex"] = "true"
		for r := range v%4 + 1 {
			paths = append(paths, networkingv1.HTTPIngressPath{Path: "/r" + strconv.Itoa(r+1) + "/.*", PathType: &impl, Backend: be})
		}
	}
	return &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "ing-" + id, Annotations: ann,
			CreationTimestamp: metav1.NewTime(time.Date(2024, 1, 1, 0, 0, i, 0, time.UTC)), ResourceVersion: strconv.Itoa(v)},
		Spec: networkingv1.IngressSpec{Rules: []networkingv1.IngressRule{{Host: "host-" + id + ".example.com",
			IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{Paths: paths}}}}},
	}
}

func ptrTo[T any](v T) *T { return &v }

// TestRecompileSliceOfUnservedBackend: a Service named only by a path that
// loses its route still has its slices read (and warned about) by Compile,
// so a change to them alone must not skip those warnings.
func TestRecompileSliceOfUnservedBackend(t *testing.T) {
	prefix := networkingv1.PathTypePrefix
	ing := func(name string, created int64, svc string) *networkingv1.Ingress {
		return &networkingv1.Ingress{
			ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: name, UID: types.UID(name),
				CreationTimestamp: metav1.NewTime(time.Unix(created, 0))},
			Spec: networkingv1.IngressSpec{Rules: []networkingv1.IngressRule{{Host: "dup.example.com",
				IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{
					Paths: []networkingv1.HTTPIngressPath{{Path: "/foo", PathType: &prefix, Backend: networkingv1.IngressBackend{
						Service: &networkingv1.IngressServiceBackend{Name: svc, Port: networkingv1.ServiceBackendPort{Number: 80}}}}}}}}}},
		}
	}
	ready := true
	slice := func(svc string, addrs ...string) *discoveryv1.EndpointSlice {
		return &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: svc + "-1",
			Labels: map[string]string{discoveryv1.LabelServiceName: svc}},
			AddressType: discoveryv1.AddressTypeIPv4, Ports: []discoveryv1.EndpointPort{{Port: ptrTo(int32(8080))}},
			Endpoints: []discoveryv1.Endpoint{{Addresses: addrs, Conditions: discoveryv1.EndpointConditions{Ready: &ready}}}}
	}
	var s compile.Snapshot
	for _, name := range []string{"a", "c"} {
		s.Services = append(s.Services, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: name},
			Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}})
	}
	s.Ingresses = []*networkingv1.Ingress{ing("older", 1, "c"), ing("newer", 2, "a")}
	s.EndpointSlices = []*discoveryv1.EndpointSlice{slice("a", "10.0.1.1"), slice("c", "10.0.3.1")}
	c := &compile.Compiler{Options: compile.Options{WatchIngressWithoutClass: true}}
	c.Compile(s)
	s.EndpointSlices = []*discoveryv1.EndpointSlice{slice("a", "10.0.1.1", "169.254.169.254"), slice("c", "10.0.3.1")}
	got, want := c.Compile(s), compile.Compile(s, c.Options)
	if got.String() != want.String() {
		t.Fatalf("the Compiler's result differs from Compile's\n--- Compile:\n%s\n--- Compiler:\n%s", want, got)
	}
	if !strings.Contains(want.String(), "EndpointRejected EndpointSlice demo/a-1") {
		t.Fatalf("Compile does not warn about the slice of the losing path's Service:\n%s", want)
	}
}
