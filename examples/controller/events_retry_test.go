package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	networkinglisters "k8s.io/client-go/listers/networking/v1"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"

	"ramjet.dev/ramjet/compile"
	"ramjet.dev/ramjet/status"
)

func TestEventRetriedAfterFailedPost(t *testing.T) {
	ing := &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Namespace: "prod", Name: "shop", Annotations: map[string]string{"kubernetes.io/ingress.class": "ramjet"}}}
	client := fake.NewSimpleClientset(ing)
	fails := 1
	client.PrependReactor("create", "events", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if fails > 0 {
			fails--
			return true, nil, errors.New("apiserver hiccup")
		}
		return false, nil, nil
	})
	ingIdx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	ingIdx.Add(ing)
	clsIdx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	c := &clusterController{
		client:  client,
		log:     slog.New(slog.NewTextHandler(io.Discard, nil)),
		deduper: status.NewEventDeduper(status.DefaultRepostAfter),
	}
	c.cfg.options.IngressClass = "ramjet"
	c.cfg.options.ControllerName = "ramjet.dev/ingress"
	c.listers.ingresses = []networkinglisters.IngressLister{networkinglisters.NewIngressLister(ingIdx)}
	c.listers.classes = networkinglisters.NewIngressClassLister(clsIdx)
	c.ready.Store(true)
	shop := compile.Ref{Kind: "Ingress", Namespace: "prod", Name: "shop"}
	c.last.Store(&compile.Result{
		Claimed:  []compile.Ref{shop},
		Warnings: []compile.Warning{{Reason: compile.ServiceNotFound, Object: shop, Field: "spec.rules[0]", Message: "no svc"}},
	})

	// The first pass fails to post and says so, so that it is retried; the
	// retry posts the Event instead of waiting for the re-post interval.
	require.False(t, c.syncStatus(context.Background()))
	require.True(t, c.syncStatus(context.Background()))
	evs, err := client.CoreV1().Events("prod").List(context.Background(), metav1.ListOptions{})
	require.NoError(t, err)
	require.Len(t, evs.Items, 1)
	require.Equal(t, "ServiceNotFound", evs.Items[0].Reason)
	require.Equal(t, "shop", evs.Items[0].InvolvedObject.Name)
	require.True(t, c.syncStatus(context.Background()))
	evs, err = client.CoreV1().Events("prod").List(context.Background(), metav1.ListOptions{})
	require.NoError(t, err)
	require.Len(t, evs.Items, 1, "an unchanged problem is not posted again")
}
