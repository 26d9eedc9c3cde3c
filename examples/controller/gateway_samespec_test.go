package main

import (
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

func TestSameSpec(t *testing.T) {
	base := &gwv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{
		Name: "r", Namespace: "n", UID: "old", Generation: 1, ResourceVersion: "10",
		Labels: map[string]string{"app": "shop"}, Annotations: map[string]string{"note": "x"},
	}}
	withStatus := base.DeepCopy()
	withStatus.ResourceVersion = "11"
	withStatus.Status.Parents = []gwv1.RouteParentStatus{{ControllerName: "ramjet.dev/gateway"}}
	specEdit := base.DeepCopy()
	specEdit.Generation = 2
	labelEdit := base.DeepCopy()
	labelEdit.Labels = map[string]string{"app": "cart"}
	// Deleted and created again while the watch was down: the relist hands
	// it over as an update, at the same generation, with a new spec and
	// creation time (which decides between routes).
	recreated := base.DeepCopy()
	recreated.UID, recreated.ResourceVersion = "new", "30"
	recreated.CreationTimestamp = metav1.Unix(1000, 0)
	recreated.Spec.Hostnames = []gwv1.Hostname{"other.test"}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "n", UID: "old", Labels: map[string]string{"team": "a"}}}
	nsRecreated := ns.DeepCopy()
	nsRecreated.UID = "new"

	tests := []struct {
		name     string
		old, cur any
		want     bool
	}{
		{name: "status written", old: base, cur: withStatus, want: true},
		{name: "spec edited", old: base, cur: specEdit, want: false},
		{name: "labels edited", old: base, cur: labelEdit, want: false},
		{name: "created again under its name", old: base, cur: recreated, want: false},
		{name: "namespace created again with its labels", old: ns, cur: nsRecreated, want: true},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, sameSpec(tt.old, tt.cur), tt.name)
	}
}
