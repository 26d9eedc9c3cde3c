package compile

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func TestSnapshotAdd(t *testing.T) {
	meta := func(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Name: name, Namespace: "n"} }
	ing := &networkingv1.Ingress{ObjectMeta: meta("i")}
	svc := &corev1.Service{ObjectMeta: meta("s")}
	class := &networkingv1.IngressClass{ObjectMeta: metav1.ObjectMeta{Name: "c"}}
	slice := &discoveryv1.EndpointSlice{ObjectMeta: meta("e")}
	secret := &corev1.Secret{ObjectMeta: meta("t")}
	var s Snapshot
	require.NoError(t, s.Add(ing, svc, class, slice, secret))
	want := Snapshot{
		Ingresses:      []*networkingv1.Ingress{ing},
		IngressClasses: []*networkingv1.IngressClass{class},
		Services:       []*corev1.Service{svc},
		EndpointSlices: []*discoveryv1.EndpointSlice{slice},
		Secrets:        []*corev1.Secret{secret},
	}
	if d := cmp.Diff(want, s); d != "" {
		t.Fatalf("snapshot (-want +got):\n%s", d)
	}
	require.Same(t, ing, s.Ingresses[0])

	bad := []struct {
		name string
		objs []runtime.Object
		msg  string
	}{
		{"unsupported type", []runtime.Object{svc, &corev1.Pod{}}, "snapshot: object 1 is a *v1.Pod"},
		{"nil pointer", []runtime.Object{(*corev1.Service)(nil)}, "snapshot: object 0 is a nil *v1.Service"},
		{"nil interface", []runtime.Object{nil}, "snapshot: object 0 is a <nil>"},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			err := s.Add(tt.objs...)
			require.ErrorContains(t, err, tt.msg)
			// Nothing is added when any object is rejected.
			if d := cmp.Diff(want, s); d != "" {
				t.Errorf("snapshot after rejected Add (-want +got):\n%s", d)
			}
		})
	}
}

func TestSnapshotMerge(t *testing.T) {
	svc := func(name string) *corev1.Service {
		return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}}
	}
	a, b, c := svc("a"), svc("b"), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "b", Namespace: "default"}}
	s := &Snapshot{Services: []*corev1.Service{a}}
	s.Merge(&Snapshot{Services: []*corev1.Service{b}, Secrets: []*corev1.Secret{c}})
	s.Merge(nil)
	want := &Snapshot{Services: []*corev1.Service{a, b}, Secrets: []*corev1.Secret{c}}
	if d := cmp.Diff(want, s); d != "" {
		t.Errorf("merged (-want +got):\n%s", d)
	}
}

func TestSnapshotRefs(t *testing.T) {
	s := mkSnapshot(mkService("prod", "web", ":80:"), mkIngress("prod", "shop", 1), mkSecret("prod", "tls", "a"))
	require.Equal(t, []Ref{
		{Kind: "Ingress", Namespace: "prod", Name: "shop"},
		{Kind: "IngressClass", Name: "ramjet"},
		{Kind: "Service", Namespace: "prod", Name: "web"},
		{Kind: "Secret", Namespace: "prod", Name: "tls"},
	}, s.Refs())
	require.Equal(t, "IngressClass ramjet", s.Refs()[1].String())
}

// Refs names the objects a Compile reads: a nil entry, which Compile
// skips, names nothing rather than panicking.
func TestSnapshotRefsSkipsNil(t *testing.T) {
	s := mkSnapshot(mkService("prod", "web", ":80:"))
	s.Ingresses = append(s.Ingresses, nil)
	s.IngressClasses = append(s.IngressClasses, nil)
	s.Services = append(s.Services, nil)
	s.EndpointSlices = append(s.EndpointSlices, nil)
	s.Secrets = append(s.Secrets, nil)
	s.ConfigMaps = append(s.ConfigMaps, nil)
	require.Equal(t, []Ref{{Kind: "IngressClass", Name: "ramjet"}, {Kind: "Service", Namespace: "prod", Name: "web"}}, s.Refs())
}
