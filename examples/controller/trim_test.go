package main

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"ramjet.dev/ramjet/compile"
	"ramjet.dev/ramjet/compile/manifest"
)

// bloat gives obj what a real cluster's copy carries and the compile never
// reads: kubectl's last-applied-configuration, a Service selector and IP
// families, endpoints' pod references and topology.
func bloat(t testing.TB, obj runtime.Object) {
	t.Helper()
	data, err := json.Marshal(obj)
	require.NoError(t, err)
	a := obj.(interface {
		GetAnnotations() map[string]string
		SetAnnotations(map[string]string)
	})
	ann := map[string]string{corev1.LastAppliedConfigAnnotation: string(data)}
	for k, v := range a.GetAnnotations() {
		ann[k] = v
	}
	a.SetAnnotations(ann)
	switch o := obj.(type) {
	case *corev1.Service:
		o.Labels = map[string]string{"app": o.Name}
		o.Spec.Selector = map[string]string{"app": o.Name}
		o.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv4Protocol}
		o.Spec.SessionAffinity = corev1.ServiceAffinityNone
	case *discoveryv1.EndpointSlice:
		for i := range o.Endpoints {
			ep := &o.Endpoints[i]
			node, zone := "node-1", "zone-a"
			ep.NodeName, ep.Zone = &node, &zone
			ep.TargetRef = &corev1.ObjectReference{Kind: "Pod", Namespace: o.Namespace, Name: o.Name + "-pod"}
		}
	}
}

// TestTrimKeepsTheTable: the informer transform drops only what the
// compile does not read, so a snapshot of trimmed objects compiles to the
// table, warnings and digest of the whole ones.
func TestTrimKeepsTheTable(t *testing.T) {
	load := func() *compile.Snapshot {
		snap, _, err := manifest.Load("../manifests", "../check/testdata/cluster-dump.yaml")
		require.NoError(t, err)
		for _, o := range objects(snap) {
			bloat(t, o)
		}
		return snap
	}
	whole, trimmed := load(), load()
	require.NotEmpty(t, trimmed.Services)
	require.NotEmpty(t, trimmed.EndpointSlices)
	for _, o := range objects(trimmed) {
		_, err := trimObject(o)
		require.NoError(t, err)
	}
	for _, s := range trimmed.Services {
		require.NotContains(t, s.Annotations, corev1.LastAppliedConfigAnnotation)
		require.Nil(t, s.Spec.Selector)
	}
	for _, s := range trimmed.EndpointSlices {
		for _, ep := range s.Endpoints {
			require.Nil(t, ep.TargetRef)
			require.Nil(t, ep.NodeName)
		}
	}
	opts := compile.Options{WatchIngressWithoutClass: true, AllowLoopbackEndpoints: true}
	a, b := compile.Compile(*whole, opts), compile.Compile(*trimmed, opts)
	require.Equal(t, a.String(), b.String())
	require.Equal(t, a.Table.Digest(), b.Table.Digest())
	require.NotEmpty(t, a.Table.Size().Routes)
}

func objects(s *compile.Snapshot) []runtime.Object {
	var objs []runtime.Object
	for _, o := range s.Ingresses {
		objs = append(objs, o)
	}
	for _, o := range s.IngressClasses {
		objs = append(objs, o)
	}
	for _, o := range s.Services {
		objs = append(objs, o)
	}
	for _, o := range s.EndpointSlices {
		objs = append(objs, o)
	}
	for _, o := range s.Secrets {
		objs = append(objs, o)
	}
	return objs
}

// TestTrimNamespace: a Namespace keeps its name and labels, what
// allowedRoutes selectors read, and the version the informer compares.
func TestTrimNamespace(t *testing.T) {
	ns := &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{Name: "shop", Labels: map[string]string{"team": "shop"}, ResourceVersion: "7",
			Annotations: map[string]string{"owner": "x"}, Finalizers: []string{"f"}},
		Spec:   corev1.NamespaceSpec{Finalizers: []corev1.FinalizerName{corev1.FinalizerKubernetes}},
		Status: corev1.NamespaceStatus{Phase: corev1.NamespaceActive},
	}
	out, err := trimObject(ns)
	require.NoError(t, err)
	require.Equal(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop", Labels: map[string]string{"team": "shop"}, ResourceVersion: "7"}}, out)
}
