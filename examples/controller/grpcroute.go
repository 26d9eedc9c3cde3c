package main

import (
	"context"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwinformers "sigs.k8s.io/gateway-api/pkg/client/informers/externalversions"
	gwlisters "sigs.k8s.io/gateway-api/pkg/client/listers/apis/v1"

	"ramjet.dev/ramjet/compile/gatewayapi"
)

// resourceServed asks discovery whether gateway.networking.k8s.io/v1
// serves the resource (e.g. "grpcroutes").
func (c *clusterController) resourceServed(ctx context.Context, resource string) (bool, error) {
	list := &metav1.APIResourceList{}
	err := c.client.Discovery().RESTClient().Get().AbsPath("/apis", gwv1.GroupVersion.Group, gwv1.GroupVersion.Version).Do(ctx).Into(list)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return slices.ContainsFunc(list.APIResources, func(r metav1.APIResource) bool { return r.Name == resource }), nil
}

// GRPCRoutes (SPEC §20) are watched beside the other Gateway API objects
// when discovery shows their CRD (a lateWatch): a cluster may install the
// Gateway API's standard channel without it, or add it later.
func (c *clusterController) grpcWatch() {
	w := &c.gw.grpc
	w.kind = "GRPCRoute"
	w.served = func(ctx context.Context) (bool, error) { return c.resourceServed(ctx, "grpcroutes") }
	w.informers = c.grpcInformers
}

// grpcInformers makes the GRPCRoute informer, limited to -namespace as
// the other routes are.
func (c *clusterController) grpcInformers() (gwinformers.SharedInformerFactory, *gwlisters.GRPCRouteLister, error) {
	f := gwinformers.NewSharedInformerFactoryWithOptions(c.gw.client, c.cfg.resync, gwinformers.WithNamespace(c.cfg.namespace))
	inf := f.Gateway().V1().GRPCRoutes()
	if err := inf.Informer().SetTransform(c.transform()); err != nil {
		return nil, nil, err
	}
	_, err := inf.Informer().AddEventHandler(c.gatewayHandler())
	if err != nil {
		return nil, nil, err
	}
	l := inf.Lister()
	return f, &l, nil
}

// listGRPCRoutes adds the cached GRPCRoutes to o, when they are watched.
func (c *clusterController) listGRPCRoutes(o *gatewayapi.Objects) {
	if l := c.gw.grpc.lister.Load(); l != nil {
		o.GRPCRoutes, _ = (*l).List(labels.Everything())
	}
}

// syncGRPCRouteStatus writes st's decision into every GRPCRoute whose
// status differs from it, as syncGatewayStatus does for HTTPRoutes.
func (c *clusterController) syncGRPCRouteStatus(ctx context.Context, st *gatewayapi.Status, now metav1.Time, report func(kind, key string) func(bool, error)) {
	l := c.gw.grpc.lister.Load()
	if l == nil {
		return
	}
	routes, _ := (*l).List(labels.Everything())
	for _, o := range sortedByName(routes) {
		if next, changed := st.GRPCRoute(o, now); changed {
			rs := c.gw.client.GatewayV1().GRPCRoutes(o.Namespace)
			report("GRPCRoute", o.Namespace+"/"+o.Name)(writeStatus(ctx, c.gatewayWritten(), next, rs.UpdateStatus, rs.Get,
				func(fresh *gwv1.GRPCRoute) (*gwv1.GRPCRoute, bool) { return st.GRPCRoute(fresh, now) }))
		}
	}
}
