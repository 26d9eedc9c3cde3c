package main

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
)

// defaultNodeRefresh is how long the nodes running the controller's pods
// are taken as read; ingress-nginx reads them again on each status sync,
// every 60 s by default (--status-update-interval).
const defaultNodeRefresh = 60 * time.Second

func (c *clusterController) nodeRefresh() time.Duration {
	return cmp.Or(c.cfg.statusNodeRefresh, defaultNodeRefresh)
}

// statusNodes is what status advertises with neither -publish-service nor
// -publish-address (SPEC §16): the addresses of the nodes running this
// controller's ready pods, as ingress-nginx advertises them for a
// hostNetwork or hostPort install. Owned by the status writer.
type statusNodes struct {
	// selector picks this controller's pods: its own pod's labels, as
	// ingress-nginx selects them; nil until the pod was read.
	selector labels.Selector
	nodes    []*corev1.Node
	read     time.Time // when nodes were read; zero: never
}

// nodeMode reports whether status advertises node addresses: status is
// written, neither publish option is given, and $POD_NAME says which pod
// this is.
func (c *clusterController) nodeMode() bool {
	return !c.cfg.noStatusUpdate && c.cfg.publishService == nil && len(c.cfg.publishAddresses) == 0 && c.cfg.podName != ""
}

// runningNodes returns the nodes running the controller's Running and
// Ready pods, read again once nodeRefresh has passed. On an error it
// returns what it read last with the error.
func (c *clusterController) runningNodes(ctx context.Context) ([]*corev1.Node, error) {
	sn := &c.statusNodes
	if !sn.read.IsZero() && time.Since(sn.read) < c.nodeRefresh() {
		return sn.nodes, nil
	}
	pods := c.client.CoreV1().Pods(c.cfg.podNamespace)
	if sn.selector == nil {
		self, err := pods.Get(ctx, c.cfg.podName, metav1.GetOptions{})
		if err != nil {
			return sn.nodes, fmt.Errorf("reading this controller's pod %s/%s (from $POD_NAMESPACE and $POD_NAME): %w", c.cfg.podNamespace, c.cfg.podName, err)
		}
		sn.selector = labels.SelectorFromSet(self.Labels)
	}
	opts := metav1.ListOptions{LabelSelector: sn.selector.String()}
	if sn.selector.Empty() {
		// A pod without labels stands for itself alone, not for every
		// pod of its namespace.
		opts.FieldSelector = fields.OneTermEqualSelector("metadata.name", c.cfg.podName).String()
	}
	list, err := pods.List(ctx, opts)
	if err != nil {
		return sn.nodes, fmt.Errorf("listing this controller's pods in %s (%s): %w", c.cfg.podNamespace, opts.LabelSelector, err)
	}
	var names []string
	for i := range list.Items {
		if p := &list.Items[i]; p.Spec.NodeName != "" && p.Status.Phase == corev1.PodRunning && podReady(p) {
			names = append(names, p.Spec.NodeName)
		}
	}
	slices.Sort(names)
	names = slices.Compact(names)
	nodes := make([]*corev1.Node, 0, len(names))
	for _, name := range names {
		n, err := c.client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return sn.nodes, fmt.Errorf("reading node %s, which runs a ready controller pod: %w", name, err)
		}
		nodes = append(nodes, n)
	}
	sn.nodes, sn.read = nodes, time.Now()
	return nodes, nil
}

// nodesDue is how long until the node addresses are read again; -1 when
// status does not advertise them or they were never read (a failed read
// is retried with the pass's backoff).
func (c *clusterController) nodesDue() time.Duration {
	if !c.nodeMode() || c.statusNodes.read.IsZero() {
		return -1
	}
	return max(c.nodeRefresh()-time.Since(c.statusNodes.read), 0)
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
