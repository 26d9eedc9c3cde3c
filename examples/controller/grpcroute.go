package main

import (
	"cmp"
	"context"
	"slices"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwinformers "sigs.k8s.io/gateway-api/pkg/client/informers/externalversions"
	gwlisters "sigs.k8s.io/gateway-api/pkg/client/listers/apis/v1"

	"ramjet.dev/ramjet/compile/gatewayapi"
)

// grpcWatch watches GRPCRoutes (SPEC §20) beside the other Gateway API
// objects, when discovery shows their CRD: a cluster may install the
// Gateway API's standard channel without it, or add it later. It has its
// own informers, so its CRD is picked up without a restart however it
// comes.
type grpcWatch struct {
	// factory and pending are made at start when the CRD is there;
	// waitGateway waits for them with the other Gateway API caches.
	factory gwinformers.SharedInformerFactory
	pending gwlisters.GRPCRouteLister
	// lister is nil until the cache has synced: until then GRPCRoutes are
	// not served.
	lister atomic.Pointer[gwlisters.GRPCRouteLister]
}

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

// grpcInformers makes the GRPCRoute informer, limited to -namespace as
// the other routes are.
func (c *clusterController) grpcInformers() (gwinformers.SharedInformerFactory, gwlisters.GRPCRouteLister, error) {
	f := gwinformers.NewSharedInformerFactoryWithOptions(c.gw.client, c.cfg.resync, gwinformers.WithNamespace(c.cfg.namespace))
	inf := f.Gateway().V1().GRPCRoutes()
	if err := inf.Informer().SetTransform(c.transform()); err != nil {
		return nil, nil, err
	}
	_, err := inf.Informer().AddEventHandler(c.gatewayHandler())
	if err != nil {
		return nil, nil, err
	}
	return f, inf.Lister(), nil
}

// discoverGRPCRoutes, run by discoverGateway once the Gateway API is
// found at start, sets up the GRPCRoute watch when its CRD is there too.
func (c *clusterController) discoverGRPCRoutes(ctx context.Context) {
	found, err := c.resourceServed(ctx, "grpcroutes")
	switch {
	case err != nil:
		c.log.Warn("cannot ask discovery for GRPCRoutes; asking again later", "err", err)
	case !found:
		c.log.Info("no GRPCRoute CRD (gateway.networking.k8s.io/v1 grpcroutes): GRPCRoutes are not served; it is picked up once installed")
	default:
		if c.gw.grpc.factory, c.gw.grpc.pending, err = c.grpcInformers(); err != nil {
			c.log.Error("GRPCRoute watch; GRPCRoutes are not served", "err", err)
			c.gw.grpc.factory = nil
		}
	}
}

// grpcSynced waits for the GRPCRoute cache made at start (true without
// one).
func (c *clusterController) grpcSynced(ctx context.Context) bool {
	if c.gw.grpc.factory == nil {
		return true
	}
	for _, ok := range c.gw.grpc.factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return false
		}
	}
	return true
}

// serveGRPCRoutes publishes the lister made at start, once synced.
func (c *clusterController) serveGRPCRoutes() {
	if l := c.gw.grpc.pending; l != nil && c.gw.grpc.lister.Load() == nil {
		c.gw.grpc.lister.Store(&l)
		c.log.Info("serving GRPCRoutes")
	}
}

// runGRPCRoutes, when no GRPCRoute watch was made at start, asks
// discovery again every gatewayRecheck and starts watching GRPCRoutes
// once the Gateway API and the GRPCRoute CRD are both installed.
func (c *clusterController) runGRPCRoutes(ctx context.Context) {
	select {
	case <-ctx.Done():
		return
	case <-c.gw.initial:
	}
	if c.gw.grpc.factory != nil {
		return // found at start: runRebuilds runs it
	}
	t := time.NewTicker(cmp.Or(c.cfg.gatewayRecheck, defaultGatewayRecheck))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if ok, err := c.gatewayInstalled(ctx); err != nil || !ok {
			continue
		}
		if ok, err := c.resourceServed(ctx, "grpcroutes"); err != nil || !ok {
			continue
		}
		f, l, err := c.grpcInformers()
		if err != nil {
			c.log.Error("GRPCRoute watch", "err", err)
			return
		}
		c.log.Info("the GRPCRoute CRD is installed now: watching GRPCRoutes")
		f.Start(ctx.Done())
		defer f.Shutdown()
		for _, ok := range f.WaitForCacheSync(ctx.Done()) {
			if !ok {
				return
			}
		}
		c.gw.grpc.lister.Store(&l)
		c.changed()
		<-ctx.Done()
		return
	}
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
			report("GRPCRoute", o.Namespace+"/"+o.Name)(writeStatus(ctx, next, rs.UpdateStatus, rs.Get,
				func(fresh *gwv1.GRPCRoute) (*gwv1.GRPCRoute, bool) { return st.GRPCRoute(fresh, now) }))
		}
	}
}
