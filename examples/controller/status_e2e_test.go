package main

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestStatusWriteKeepsLastAppliedConfiguration: an Ingress status update
// takes the metadata sent with it, so writing the status must not drop
// kubectl's last-applied-configuration, the base of the next kubectl apply.
func TestStatusWriteKeepsLastAppliedConfiguration(t *testing.T) {
	e := startE2E(t)
	ctx := context.Background()
	ns := e.namespace(t, "lastapplied")
	e.app(t, ns, "a", backendPort(t, namedBackend(t, "A")))
	ing := newIngress(ns, "mine", "ramjet", "mine.test", "a", "/")
	ing.Annotations = map[string]string{corev1.LastAppliedConfigAnnotation: `{"kind":"Ingress"}`}
	e.createIngress(t, ing)
	e.startController(t, ns, func(c *config) { c.publishAddresses = []string{"192.0.2.1"} })
	waitFor(t, 10*time.Second, "the status", func() bool {
		return cmp.Equal(ips("192.0.2.1"), e.ingressStatus(t, ns, "mine"))
	})
	got, err := e.client.NetworkingV1().Ingresses(ns).Get(ctx, "mine", metav1.GetOptions{})
	require.NoError(t, err)
	require.Equal(t, `{"kind":"Ingress"}`, got.Annotations[corev1.LastAppliedConfigAnnotation])
}

// TestStatusFightIsNotAHotLoop: two controllers that claim the same
// Ingress and advertise different addresses (two installations of one
// class) each rewrite what the other wrote, but not as fast as the API
// server takes the writes.
func TestStatusFightIsNotAHotLoop(t *testing.T) {
	e := startE2E(t)
	ns := e.namespace(t, "fight")
	e.app(t, ns, "a", backendPort(t, namedBackend(t, "A")))
	e.createIngress(t, newIngress(ns, "app", "ramjet", "app.test", "a", "/"))
	writes := watchWrites(t, e, ns)
	one := e.startController(t, ns, func(c *config) { c.identity, c.publishAddresses = "one", []string{"192.0.2.1"} })
	two := e.startController(t, ns, func(c *config) {
		c.identity, c.electionID, c.publishAddresses = "two", "other-leader", []string{"192.0.2.2"}
	})
	waitFor(t, 10*time.Second, "both to lead", func() bool { return one.cluster.leading.Load() && two.cluster.leading.Load() })
	time.Sleep(3 * time.Second)
	if n := writes.statuses("app"); n > 4 {
		t.Fatalf("%d status writes on Ingress app in 3 s", n)
	}
}

// TestStatusOfRecreatedIngress: an Ingress deleted and created again under
// the same name (kubectl replace --force, a Helm reinstall) is a new object
// with no status, not someone else's change to what was written: it gets
// its status at once.
func TestStatusOfRecreatedIngress(t *testing.T) {
	e := startE2E(t)
	ctx := context.Background()
	ns := e.namespace(t, "recreated")
	e.app(t, ns, "a", backendPort(t, namedBackend(t, "A")))
	e.createIngress(t, newIngress(ns, "app", "ramjet", "app.test", "a", "/"))
	tc := e.startController(t, ns, func(c *config) { c.publishAddresses = []string{"192.0.2.1"} })
	waitFor(t, 10*time.Second, "the status", func() bool {
		return cmp.Equal(ips("192.0.2.1"), e.ingressStatus(t, ns, "app"))
	})
	require.NoError(t, e.client.NetworkingV1().Ingresses(ns).Delete(ctx, "app", metav1.DeleteOptions{}))
	tc.settle(t)
	e.createIngress(t, newIngress(ns, "app", "ramjet", "app.test", "a", "/"))
	waitFor(t, statusRewriteAfter/3, "the status of the new Ingress", func() bool {
		return cmp.Equal(ips("192.0.2.1"), e.ingressStatus(t, ns, "app"))
	})
	require.NotContains(t, tc.logs.String(), "someone else changed")
}
