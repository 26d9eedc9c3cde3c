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

// loadedObjects lists "Kind namespace/name" for every object of a snapshot, in
// snapshot order.
func loadedObjects(s *Snapshot) []string {
	var out []string
	for _, o := range s.Ingresses {
		out = append(out, "Ingress "+o.Namespace+"/"+o.Name)
	}
	for _, o := range s.IngressClasses {
		out = append(out, "IngressClass "+o.Name)
	}
	for _, o := range s.Services {
		out = append(out, "Service "+o.Namespace+"/"+o.Name)
	}
	for _, o := range s.EndpointSlices {
		out = append(out, "EndpointSlice "+o.Namespace+"/"+o.Name)
	}
	for _, o := range s.Secrets {
		out = append(out, "Secret "+o.Namespace+"/"+o.Name)
	}
	return out
}

func TestSnapshotAdd(t *testing.T) {
	var s Snapshot
	ing := &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Name: "i", Namespace: "n"}}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "n"}}
	require.NoError(t, s.Add(ing, svc,
		&networkingv1.IngressClass{ObjectMeta: metav1.ObjectMeta{Name: "c"}},
		&discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: "e", Namespace: "n"}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "t", Namespace: "n"}},
	))
	want := []string{"Ingress n/i", "IngressClass c", "Service n/s", "EndpointSlice n/e", "Secret n/t"}
	if d := cmp.Diff(want, loadedObjects(&s)); d != "" {
		t.Fatalf("objects (-want +got):\n%s", d)
	}
	require.Same(t, ing, s.Ingresses[0])

	bad := []struct {
		name string
		objs []runtime.Object
		msg  string
	}{
		{"unsupported type", []runtime.Object{svc, &corev1.ConfigMap{}}, "snapshot: object 1 is a *v1.ConfigMap"},
		{"nil pointer", []runtime.Object{(*corev1.Service)(nil)}, "snapshot: object 0 is a nil *v1.Service"},
		{"nil interface", []runtime.Object{nil}, "snapshot: object 0 is a <nil>"},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			err := s.Add(tt.objs...)
			require.ErrorContains(t, err, tt.msg)
			// Nothing is added when any object is rejected.
			if d := cmp.Diff(want, loadedObjects(&s)); d != "" {
				t.Errorf("objects after rejected Add (-want +got):\n%s", d)
			}
		})
	}
}

func TestSnapshotMerge(t *testing.T) {
	svc := func(name string) *corev1.Service {
		return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}}
	}
	a := &Snapshot{Services: []*corev1.Service{svc("a")}}
	b := &Snapshot{
		Services: []*corev1.Service{svc("b")},
		Secrets:  []*corev1.Secret{{ObjectMeta: metav1.ObjectMeta{Name: "b", Namespace: "default"}}},
	}
	a.Merge(b)
	a.Merge(nil)
	if d := cmp.Diff([]string{"Service default/a", "Service default/b", "Secret default/b"}, loadedObjects(a)); d != "" {
		t.Errorf("merged (-want +got):\n%s", d)
	}
}
