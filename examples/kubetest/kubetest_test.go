package kubetest_test

import (
	"context"
	"net/netip"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"ramjet.dev/ramjet/examples/kubetest"
)

// TestServer drives the objects an ingress controller reads and writes
// through a real apiserver: create, list back, and watch updates of spec
// and status.
func TestServer(t *testing.T) {
	s := kubetest.Start(t)
	c := s.Client(t)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()

	version, err := c.Discovery().ServerVersion()
	require.NoError(t, err)
	require.Equal(t, kubetest.KubeVersion, version.GitVersion, "the apiserver is not the pinned release")

	// A watch from "now", the form most tests use, must deliver events.
	classWatch, err := c.NetworkingV1().IngressClasses().Watch(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	defer classWatch.Stop()

	const ns = "demo"
	_, err = c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	require.NoError(t, err)

	classSpec := networkingv1.IngressClassSpec{Controller: "ramjet.dev/ingress"}
	_, err = c.NetworkingV1().IngressClasses().Create(ctx, &networkingv1.IngressClass{
		ObjectMeta: metav1.ObjectMeta{Name: "ramjet"},
		Spec:       classSpec,
	}, metav1.CreateOptions{})
	require.NoError(t, err)

	svcPorts := []corev1.ServicePort{{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80, TargetPort: intstr.FromString("http")}}
	svc, err := c.CoreV1().Services(ns).Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec:       corev1.ServiceSpec{Selector: map[string]string{"app": "web"}, Ports: svcPorts},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	clusterIP, err := netip.ParseAddr(svc.Spec.ClusterIP)
	require.NoError(t, err, "cluster IP %q", svc.Spec.ClusterIP)
	require.True(t, netip.MustParsePrefix("10.96.0.0/16").Contains(clusterIP), "cluster IP %s outside the service range", clusterIP)

	// The apiserver rejects loopback endpoint addresses, so the slice names
	// a documentation address (RFC 5737); nothing ever connects to it.
	ready := true
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{
			Name:   "web-1",
			Labels: map[string]string{discoveryv1.LabelServiceName: "web"},
		},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints: []discoveryv1.Endpoint{
			{Addresses: []string{"192.0.2.10"}, Conditions: discoveryv1.EndpointConditions{Ready: &ready}},
		},
		Ports: []discoveryv1.EndpointPort{{Name: new("http"), Protocol: new(corev1.ProtocolTCP), Port: new(int32(18081))}},
	}
	_, err = c.DiscoveryV1().EndpointSlices(ns).Create(ctx, slice, metav1.CreateOptions{})
	require.NoError(t, err)

	ingSpec := networkingv1.IngressSpec{
		IngressClassName: new("ramjet"),
		Rules: []networkingv1.IngressRule{{
			Host: "shop.example.com",
			IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{
				Paths: []networkingv1.HTTPIngressPath{{
					Path:     "/",
					PathType: new(networkingv1.PathTypePrefix),
					Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{
						Name: "web",
						Port: networkingv1.ServiceBackendPort{Name: "http"},
					}},
				}},
			}},
		}},
	}
	_, err = c.NetworkingV1().Ingresses(ns).Create(ctx, &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Name: "shop"},
		Spec:       ingSpec,
	}, metav1.CreateOptions{})
	require.NoError(t, err)

	select {
	case ev, ok := <-classWatch.ResultChan():
		require.True(t, ok, "watch closed")
		require.Equal(t, watch.Added, ev.Type, "event %+v", ev.Object)
		ic, ok := ev.Object.(*networkingv1.IngressClass)
		require.True(t, ok, "event object is %T", ev.Object)
		require.Equal(t, "ramjet", ic.Name)
	case <-ctx.Done():
		t.Fatalf("no IngressClass watch event: %v", ctx.Err())
	}

	classes, err := c.NetworkingV1().IngressClasses().List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	require.Len(t, classes.Items, 1)
	if diff := cmp.Diff(classSpec, classes.Items[0].Spec); diff != "" {
		t.Errorf("IngressClass spec (-want +got):\n%s", diff)
	}

	svcs, err := c.CoreV1().Services(ns).List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	require.Len(t, svcs.Items, 1)
	if diff := cmp.Diff(svcPorts, svcs.Items[0].Spec.Ports); diff != "" {
		t.Errorf("Service ports (-want +got):\n%s", diff)
	}

	slices, err := c.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=web"})
	require.NoError(t, err)
	require.Len(t, slices.Items, 1)
	if diff := cmp.Diff(slice.Endpoints, slices.Items[0].Endpoints); diff != "" {
		t.Errorf("EndpointSlice endpoints (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(slice.Ports, slices.Items[0].Ports); diff != "" {
		t.Errorf("EndpointSlice ports (-want +got):\n%s", diff)
	}

	ings, err := c.NetworkingV1().Ingresses(ns).List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	require.Len(t, ings.Items, 1)
	if diff := cmp.Diff(ingSpec, ings.Items[0].Spec); diff != "" {
		t.Errorf("Ingress spec (-want +got):\n%s", diff)
	}

	w, err := c.NetworkingV1().Ingresses(ns).Watch(ctx, metav1.ListOptions{ResourceVersion: ings.ResourceVersion})
	require.NoError(t, err)
	defer w.Stop()

	ing := ings.Items[0].DeepCopy()
	ing.Spec.Rules[0].HTTP.Paths[0].Path = "/api"
	updated, err := c.NetworkingV1().Ingresses(ns).Update(ctx, ing, metav1.UpdateOptions{})
	require.NoError(t, err)
	got := nextIngress(ctx, t, w)
	require.Equal(t, updated.ResourceVersion, got.ResourceVersion)
	require.Equal(t, "/api", got.Spec.Rules[0].HTTP.Paths[0].Path)

	// A controller publishes its address in the status subresource.
	updated.Status.LoadBalancer.Ingress = []networkingv1.IngressLoadBalancerIngress{{IP: "127.0.0.1"}}
	withStatus, err := c.NetworkingV1().Ingresses(ns).UpdateStatus(ctx, updated, metav1.UpdateOptions{})
	require.NoError(t, err)
	got = nextIngress(ctx, t, w)
	require.Equal(t, withStatus.ResourceVersion, got.ResourceVersion)
	if diff := cmp.Diff(updated.Status, got.Status); diff != "" {
		t.Errorf("Ingress status (-want +got):\n%s", diff)
	}
}

// TestInformer checks that a shared informer, as a controller runs it,
// syncs and then sees changes.
func TestInformer(t *testing.T) {
	s := kubetest.Start(t)
	c := s.Client(t)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()

	added := make(chan string, 10)
	factory := informers.NewSharedInformerFactory(c, 0)
	inf := factory.Networking().V1().IngressClasses().Informer()
	_, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if ic, ok := obj.(*networkingv1.IngressClass); ok {
				added <- ic.Name
			}
		},
	})
	require.NoError(t, err)
	factory.Start(ctx.Done())
	defer factory.Shutdown()
	// Shutdown waits for the informers, which stop only once ctx is done.
	defer cancel()
	began := time.Now()
	require.True(t, cache.WaitForCacheSync(ctx.Done(), inf.HasSynced), "informer did not sync")
	t.Logf("informer synced in %s", time.Since(began).Round(time.Millisecond))

	_, err = c.NetworkingV1().IngressClasses().Create(ctx, &networkingv1.IngressClass{
		ObjectMeta: metav1.ObjectMeta{Name: "ramjet"},
		Spec:       networkingv1.IngressClassSpec{Controller: "ramjet.dev/ingress"},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	select {
	case name := <-added:
		require.Equal(t, "ramjet", name)
	case <-ctx.Done():
		t.Fatalf("informer saw no IngressClass: %v", ctx.Err())
	}
}

// TestServersAreIndependent checks that two servers in one test share
// nothing: an object written to one is absent from the other.
func TestServersAreIndependent(t *testing.T) {
	a, b := kubetest.Start(t), kubetest.Start(t)
	require.NotEqual(t, a.URL, b.URL)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()

	_, err := a.Client(t).NetworkingV1().IngressClasses().Create(ctx, &networkingv1.IngressClass{
		ObjectMeta: metav1.ObjectMeta{Name: "only-in-a"},
		Spec:       networkingv1.IngressClassSpec{Controller: "ramjet.dev/ingress"},
	}, metav1.CreateOptions{})
	require.NoError(t, err)

	names := func(c kubernetes.Interface) []string {
		list, err := c.NetworkingV1().IngressClasses().List(ctx, metav1.ListOptions{})
		require.NoError(t, err)
		var out []string
		for _, ic := range list.Items {
			out = append(out, ic.Name)
		}
		return out
	}
	if diff := cmp.Diff([]string{"only-in-a"}, names(a.Client(t))); diff != "" {
		t.Errorf("server a IngressClasses (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string(nil), names(b.Client(t))); diff != "" {
		t.Errorf("server b IngressClasses (-want +got):\n%s", diff)
	}
}

// nextIngress returns the next Ingress the watch delivers as modified.
func nextIngress(ctx context.Context, t *testing.T, w watch.Interface) *networkingv1.Ingress {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		require.True(t, ok, "watch closed")
		require.Equal(t, watch.Modified, ev.Type, "event %+v", ev.Object)
		ing, ok := ev.Object.(*networkingv1.Ingress)
		require.True(t, ok, "event object is %T", ev.Object)
		return ing
	case <-ctx.Done():
		t.Fatalf("no watch event: %v", ctx.Err())
		return nil
	}
}
