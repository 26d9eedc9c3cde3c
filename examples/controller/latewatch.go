package main

import (
	"cmp"
	"context"
	"sync/atomic"
	"time"

	gwinformers "sigs.k8s.io/gateway-api/pkg/client/informers/externalversions"
)

// lateWatch watches one Gateway API route kind whose CRD a cluster may
// lack, or install after the rest (GRPCRoute, TLSRoute: SPEC §20), beside
// the other Gateway API objects: when discovery shows the CRD at start,
// its informer starts and syncs with theirs; otherwise runLate asks again
// every gatewayRecheck and starts it then, without a restart. It has its
// own informer factory for that. L is what the kind is listed through.
type lateWatch[L any] struct {
	// kind names the kind in logs ("GRPCRoute").
	kind string
	// served asks discovery whether the CRD is served.
	served func(context.Context) (bool, error)
	// informers makes the factory and the lister, the informer's handler
	// and transform set.
	informers func() (gwinformers.SharedInformerFactory, *L, error)

	// factory and pending are made at start when the CRD is there;
	// waitGateway waits for them with the other Gateway API caches.
	factory gwinformers.SharedInformerFactory
	pending *L
	// lister is nil until the cache has synced: until then the kind is
	// not served.
	lister atomic.Pointer[L]
}

// discover, run by discoverGateway once the Gateway API is found at
// start, makes the watch when the CRD is there too.
func (w *lateWatch[L]) discover(ctx context.Context, c *clusterController) {
	found, err := w.served(ctx)
	switch {
	case err != nil:
		c.log.Warn("cannot ask discovery for "+w.kind+"s; asking again later", "err", err)
	case !found:
		c.log.Info("no " + w.kind + " CRD: " + w.kind + "s are not served; it is picked up once installed")
	default:
		if w.factory, w.pending, err = w.informers(); err != nil {
			c.log.Error(w.kind+" watch; "+w.kind+"s are not served", "err", err)
			w.factory, w.pending = nil, nil
		}
	}
}

// start starts the informer made at start, if any.
func (w *lateWatch[L]) start(ctx context.Context) {
	if w.factory != nil {
		w.factory.Start(ctx.Done())
	}
}

func (w *lateWatch[L]) stop() {
	if w.factory != nil {
		w.factory.Shutdown()
	}
}

// synced waits for the cache made at start (true without one).
func (w *lateWatch[L]) synced(ctx context.Context) bool {
	if w.factory == nil {
		return true
	}
	for _, ok := range w.factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return false
		}
	}
	return true
}

// serve publishes the lister made at start, once synced.
func (w *lateWatch[L]) serve(c *clusterController) {
	if w.pending != nil && w.lister.Load() == nil {
		w.lister.Store(w.pending)
		c.log.Info("serving " + w.kind + "s")
	}
}

// runLate, when no watch was made at start, asks discovery every
// gatewayRecheck and starts watching once the Gateway API and the kind's
// CRD are both installed, then rebuilds.
func (w *lateWatch[L]) runLate(ctx context.Context, c *clusterController) {
	select {
	case <-ctx.Done():
		return
	case <-c.gw.initial:
	}
	if w.factory != nil {
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
		if ok, err := w.served(ctx); err != nil || !ok {
			continue
		}
		f, l, err := w.informers()
		if err != nil {
			c.log.Error(w.kind+" watch", "err", err)
			return
		}
		c.log.Info("the " + w.kind + " CRD is installed now: watching " + w.kind + "s")
		f.Start(ctx.Done())
		defer f.Shutdown()
		for _, ok := range f.WaitForCacheSync(ctx.Done()) {
			if !ok {
				return
			}
		}
		w.lister.Store(l)
		c.changed()
		<-ctx.Done()
		return
	}
}
