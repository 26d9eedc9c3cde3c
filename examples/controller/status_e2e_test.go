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

// TestStatusAdvertisesNodeAddresses: with neither -publish-service nor
// -publish-address (a hostNetwork install), status advertises the
// addresses of the nodes running the controller's Running and Ready pods,
// those selected by its own pod's labels, as ingress-nginx's status sync
// does: each node's ExternalIP, else its InternalIP, and InternalIP alone
// with -report-node-internal-ip-address. A pod that stops being ready
// takes its node's address away at the next read.
func TestStatusAdvertisesNodeAddresses(t *testing.T) {
	e := startE2E(t)
	ctx := context.Background()
	ns := e.namespace(t, "nodes")
	e.app(t, ns, "a", backendPort(t, namedBackend(t, "A")))
	e.createIngress(t, newIngress(ns, "app", "ramjet", "app.test", "a", "/"))
	node := func(name string, addrs ...corev1.NodeAddress) {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: ns + "-" + name}}
		created, err := e.client.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{})
		require.NoError(t, err)
		t.Cleanup(func() {
			_ = e.client.CoreV1().Nodes().Delete(context.Background(), created.Name, metav1.DeleteOptions{})
		})
		created.Status.Addresses = addrs
		_, err = e.client.CoreV1().Nodes().UpdateStatus(ctx, created, metav1.UpdateOptions{})
		require.NoError(t, err)
	}
	node("a", corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: "10.1.0.1"}, corev1.NodeAddress{Type: corev1.NodeExternalIP, Address: "203.0.113.1"})
	node("b", corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: "10.1.0.2"})
	node("c", corev1.NodeAddress{Type: corev1.NodeExternalIP, Address: "203.0.113.3"})
	node("d", corev1.NodeAddress{Type: corev1.NodeExternalIP, Address: "203.0.113.4"})
	ctl := map[string]string{"app.kubernetes.io/name": "ramjet", "app.kubernetes.io/component": "controller"}
	pod := func(name, nodeName string, lbls map[string]string, ready bool) {
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: lbls},
			Spec:       corev1.PodSpec{NodeName: ns + "-" + nodeName, Containers: []corev1.Container{{Name: "c", Image: "ramjet"}}},
		}
		created, err := e.client.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{})
		require.NoError(t, err)
		setPodReady(t, e, created, ready)
	}
	pod("ctl-1", "a", ctl, true)
	pod("ctl-2", "b", ctl, true)
	pod("ctl-3", "c", ctl, false)
	pod("web-1", "d", map[string]string{"app.kubernetes.io/name": "web"}, true)

	tc := e.startController(t, ns, func(c *config) {
		c.podName, c.podNamespace, c.statusNodeRefresh = "ctl-1", ns, time.Second
	})
	waitFor(t, 10*time.Second, "the nodes' addresses in the status", func() bool {
		return cmp.Equal(ips("10.1.0.2", "203.0.113.1"), e.ingressStatus(t, ns, "app"))
	}, func() string { return tc.logs.String() })

	got, err := e.client.CoreV1().Pods(ns).Get(ctx, "ctl-2", metav1.GetOptions{})
	require.NoError(t, err)
	setPodReady(t, e, got, false)
	waitFor(t, 10*time.Second, "the address of the node whose pod is no longer ready to go", func() bool {
		return cmp.Equal(ips("203.0.113.1"), e.ingressStatus(t, ns, "app"))
	})
	tc.stop(t)

	e.startController(t, ns, func(c *config) {
		c.podName, c.podNamespace, c.nodeInternalIP, c.identity = "ctl-1", ns, true, "replica-b"
	})
	waitFor(t, 20*time.Second, "the InternalIP with -report-node-internal-ip-address", func() bool {
		return cmp.Equal(ips("10.1.0.1"), e.ingressStatus(t, ns, "app"))
	})
}

// setPodReady makes p Running, with its Ready condition ready.
func setPodReady(t *testing.T, e *e2e, p *corev1.Pod, ready bool) {
	t.Helper()
	cond := corev1.ConditionFalse
	if ready {
		cond = corev1.ConditionTrue
	}
	p.Status.Phase = corev1.PodRunning
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: cond}}
	_, err := e.client.CoreV1().Pods(p.Namespace).UpdateStatus(context.Background(), p, metav1.UpdateOptions{})
	require.NoError(t, err)
}
