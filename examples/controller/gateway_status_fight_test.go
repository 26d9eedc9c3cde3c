package main

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	"ramjet.dev/ramjet/compile/gatewayapi"
)

// TestGatewayStatusFightIsNotAHotLoop: two controllers of the same
// GatewayClass that advertise different addresses each rewrite the
// Gateway's addresses the other wrote, but not as fast as the API server
// takes the writes.
func TestGatewayStatusFightIsNotAHotLoop(t *testing.T) {
	e := startE2E(t)
	ctx := context.Background()
	installGatewayCRDs(t, e)
	ns := e.namespace(t, "gwfight")
	gc, err := gwclient.NewForConfig(e.srv.Config)
	require.NoError(t, err)
	api := gc.GatewayV1()
	_, err = api.GatewayClasses().Create(ctx, &gwv1.GatewayClass{
		ObjectMeta: metav1.ObjectMeta{Name: "ramjet"}, Spec: gwv1.GatewayClassSpec{ControllerName: gatewayapi.ControllerName},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = api.Gateways(ns).Create(ctx, &gwv1.Gateway{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "gw"},
		Spec:       gwv1.GatewaySpec{GatewayClassName: "ramjet", Listeners: []gwv1.Listener{{Name: "http", Port: 80, Protocol: gwv1.HTTPProtocolType}}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	w, err := api.Gateways(ns).Watch(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	t.Cleanup(w.Stop)
	var updates atomic.Int64
	go func() {
		for range w.ResultChan() {
			updates.Add(1)
		}
	}()
	one := e.startController(t, ns, func(c *config) { c.identity, c.publishAddresses = "one", []string{"192.0.2.1"} })
	two := e.startController(t, ns, func(c *config) {
		c.identity, c.electionID, c.publishAddresses = "two", "other-leader", []string{"192.0.2.2"}
	})
	waitFor(t, 10*time.Second, "both to lead", func() bool { return one.cluster.leading.Load() && two.cluster.leading.Load() })
	time.Sleep(time.Second)
	before := updates.Load()
	time.Sleep(3 * time.Second)
	if n := updates.Load() - before; n > 4 {
		t.Fatalf("%d writes on Gateway gw in 3 s", n)
	}
}
