package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"
	gwinformers "sigs.k8s.io/gateway-api/pkg/client/informers/externalversions"
	gwlisters "sigs.k8s.io/gateway-api/pkg/client/listers/apis/v1"

	"ramjet.dev/ramjet/compile"
	"ramjet.dev/ramjet/compile/gatewayapi"
)

// defaultGatewayRecheck is how often a controller that found no Gateway
// API CRDs asks discovery again: installing them later needs no restart.
const defaultGatewayRecheck = 30 * time.Second

// gatewayResources are the Gateway API resources the controller watches;
// all of them must be served for it to serve the Gateway API.
var gatewayResources = []string{"gatewayclasses", "gateways", "httproutes", "referencegrants"}

// gatewayWatch is the Gateway API side of the cluster controller (SPEC
// §20): GatewayClasses, Gateways, HTTPRoutes and ReferenceGrants, and the
// Namespaces whose labels allowedRoutes selectors read. It watches them
// once discovery shows their CRDs, at start or later.
type gatewayWatch struct {
	client gwclient.Interface
	// initial is closed once runRebuilds has asked discovery at start.
	initial chan struct{}
	// At start, when the CRDs are there: the informers runRebuilds starts
	// and waits for with the others, and the listers it then publishes.
	factory   gwinformers.SharedInformerFactory
	nsFactory informers.SharedInformerFactory
	pending   *gatewayListers
	// listers is nil until the caches have synced: until then the Gateway
	// API is not served.
	listers atomic.Pointer[gatewayListers]
	// status is what the last rebuild decided; the leader writes it.
	status atomic.Pointer[gatewayapi.Status]
	// grpc and tls watch GRPCRoutes and TLSRoutes when their CRDs are
	// there, at start or later (grpcroute.go, gateway_tlsroute.go).
	grpc lateWatch[gwlisters.GRPCRouteLister]
	tls  lateWatch[tlsRouteLister]
}

type gatewayListers struct {
	classes    gwlisters.GatewayClassLister
	gateways   gwlisters.GatewayLister
	routes     gwlisters.HTTPRouteLister
	grants     gwlisters.ReferenceGrantLister
	namespaces corelisters.NamespaceLister
}

// initGateway makes the Gateway API client. Custom resources speak JSON,
// not the protobuf the built-in client uses.
func (c *clusterController) initGateway(rc *rest.Config) error {
	jc := rest.CopyConfig(rc)
	jc.ContentType = ""
	client, err := gwclient.NewForConfig(jc)
	if err != nil {
		return fmt.Errorf("gateway API client: %w", err)
	}
	c.gw.client = client
	c.gw.initial = make(chan struct{})
	c.grpcWatch()
	c.tlsWatch()
	return nil
}

// gatewayInstalled asks discovery whether every watched Gateway API
// resource is served at v1.
func (c *clusterController) gatewayInstalled(ctx context.Context) (bool, error) {
	list := &metav1.APIResourceList{}
	err := c.client.Discovery().RESTClient().Get().AbsPath("/apis", gwv1.GroupVersion.Group, gwv1.GroupVersion.Version).Do(ctx).Into(list)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	for _, want := range gatewayResources {
		if !slices.ContainsFunc(list.APIResources, func(r metav1.APIResource) bool { return r.Name == want }) {
			return false, nil
		}
	}
	return true, nil
}

// discoverGateway, run by runRebuilds before it starts the informers,
// sets up the Gateway API watches when the CRDs are installed; otherwise
// runGateway looks again now and then. It waits for the API server as the
// informers would, so that start does not.
func (c *clusterController) discoverGateway(ctx context.Context) {
	defer close(c.gw.initial)
	found, err := c.gatewayInstalled(ctx)
	switch {
	case ctx.Err() != nil:
	case err != nil:
		c.log.Warn("cannot ask discovery for the Gateway API; asking again later", "err", err)
	case !found:
		c.log.Info("the Gateway API CRDs (gateway.networking.k8s.io/v1) are not installed: Gateway API is not served; they are picked up once installed",
			"recheck", cmp.Or(c.cfg.gatewayRecheck, defaultGatewayRecheck))
	default:
		if c.gw.factory, c.gw.nsFactory, c.gw.pending, err = c.gatewayInformers(); err != nil {
			c.log.Error("Gateway API watches; Gateway API is not served", "err", err)
			c.gw.factory = nil
			return
		}
		c.gw.grpc.discover(ctx, c)
		c.gw.tls.discover(ctx, c)
	}
}

// gatewayInformers makes the informers and listers of the Gateway API
// objects, limited to -namespace like Ingresses (GatewayClasses and
// Namespaces are cluster-scoped).
// gatewayHandler is the event handler of every Gateway API kind: a spec
// change rebuilds, a status-only change has the status writer look again.
func (c *clusterController) gatewayHandler() cache.ResourceEventHandlerFuncs {
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(any) { c.changed() },
		UpdateFunc: func(old, cur any) {
			switch {
			case redelivered(old, cur):
			case sameSpec(old, cur):
				// Status only, ours included: the writer looks again.
				c.kickStatus()
			default:
				c.changed()
			}
		},
		DeleteFunc: func(any) { c.changed() },
	}
}

func (c *clusterController) gatewayInformers() (gwinformers.SharedInformerFactory, informers.SharedInformerFactory, *gatewayListers, error) {
	f := gwinformers.NewSharedInformerFactoryWithOptions(c.gw.client, c.cfg.resync, gwinformers.WithNamespace(c.cfg.namespace))
	nsf := informers.NewSharedInformerFactory(c.client, c.cfg.resync)
	v1 := f.Gateway().V1()
	ns := nsf.Core().V1().Namespaces()
	l := &gatewayListers{
		classes: v1.GatewayClasses().Lister(), gateways: v1.Gateways().Lister(), routes: v1.HTTPRoutes().Lister(),
		grants: v1.ReferenceGrants().Lister(), namespaces: ns.Lister(),
	}
	specChanged := c.gatewayHandler()
	infs := []cache.SharedIndexInformer{
		v1.GatewayClasses().Informer(), v1.Gateways().Informer(), v1.HTTPRoutes().Informer(), v1.ReferenceGrants().Informer(), ns.Informer(),
	}
	for _, inf := range infs {
		if err := inf.SetTransform(c.transform()); err != nil {
			return nil, nil, nil, err
		}
		if _, err := inf.AddEventHandler(specChanged); err != nil {
			return nil, nil, nil, err
		}
	}
	return f, nsf, l, nil
}

// sameSpec reports an update of the same object (UID) that changes
// neither the generation (the spec; for kinds without one, any change) nor
// labels and annotations. An object deleted and created again while the
// watch was down comes back from the relist as an update, maybe at the
// same generation, with a new spec and creation time (which decides
// between routes), as statusOnly's Ingresses.
func sameSpec(old, cur any) bool {
	o, err1 := meta.Accessor(old)
	n, err2 := meta.Accessor(cur)
	if err1 != nil || err2 != nil {
		return false
	}
	if _, isNS := cur.(*corev1.Namespace); isNS {
		return maps.Equal(o.GetLabels(), n.GetLabels()) // selectors read labels only
	}
	return o.GetUID() == n.GetUID() && o.GetGeneration() != 0 && o.GetGeneration() == n.GetGeneration() &&
		maps.Equal(o.GetLabels(), n.GetLabels()) && maps.Equal(o.GetAnnotations(), n.GetAnnotations())
}

// startGateway starts the informers made at start; waitGateway waits for
// them and publishes their listers. Both do nothing without them.
func (c *clusterController) startGateway(ctx context.Context) {
	if c.gw.factory != nil {
		c.gw.factory.Start(ctx.Done())
		c.gw.nsFactory.Start(ctx.Done())
	}
	c.gw.grpc.start(ctx)
	c.gw.tls.start(ctx)
}

// waitGateway: a controller whose RBAC predates the Gateway API (an image
// upgraded without its ClusterRole) would never sync those caches and so
// never be ready; after defaultGatewaySyncWait it goes on without them,
// says so, and serves them once they sync.
func (c *clusterController) waitGateway(ctx context.Context) bool {
	if c.gw.factory == nil {
		return true
	}
	done := make(chan bool, 1)
	go func() {
		done <- synced(ctx, c.gw.factory, c.gw.nsFactory) && c.gw.grpc.synced(ctx) && c.gw.tls.synced(ctx)
	}()
	wait := cmp.Or(c.cfg.gatewaySyncWait, defaultGatewaySyncWait)
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case ok := <-done:
		if ok {
			c.serveGateway(c.gw.pending)
		}
		return ok
	case <-t.C:
		c.log.Warn("the Gateway API caches have not synced (does the ClusterRole grant list and watch on gateway.networking.k8s.io?): serving without the Gateway API until they do",
			"waited", wait)
		go func() {
			if <-done {
				c.serveGateway(c.gw.pending)
				c.changed()
			}
		}()
		return true
	}
}

// defaultGatewaySyncWait bounds how long the first table waits for the
// Gateway API caches.
const defaultGatewaySyncWait = 30 * time.Second

func (c *clusterController) serveGateway(l *gatewayListers) {
	c.gw.listers.Store(l)
	c.log.Info("serving the Gateway API", "controllerName", string(gatewayapi.ControllerName))
	c.gw.grpc.serve(c)
	c.gw.tls.serve(c)
}

func (c *clusterController) stopGateway() {
	if c.gw.factory != nil {
		c.gw.factory.Shutdown()
		c.gw.nsFactory.Shutdown()
	}
	c.gw.grpc.stop()
	c.gw.tls.stop()
}

func synced(ctx context.Context, f gwinformers.SharedInformerFactory, nsf informers.SharedInformerFactory) bool {
	for _, ok := range f.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return false
		}
	}
	for _, ok := range nsf.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return false
		}
	}
	return true
}

// runGateway, when the CRDs were missing at start, asks discovery again
// every gatewayRecheck (defaultGatewayRecheck unless a test sets it) and
// starts serving the Gateway API once they are installed.
func (c *clusterController) runGateway(ctx context.Context) {
	select {
	case <-ctx.Done():
		return
	case <-c.gw.initial:
	}
	if c.gw.factory != nil {
		return // found at start: runRebuilds runs them
	}
	t := time.NewTicker(cmp.Or(c.cfg.gatewayRecheck, defaultGatewayRecheck))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		found, err := c.gatewayInstalled(ctx)
		if err != nil || !found {
			continue
		}
		f, nsf, l, err := c.gatewayInformers()
		if err != nil {
			c.log.Error("Gateway API watches", "err", err)
			return
		}
		c.log.Info("the Gateway API CRDs are installed now: watching them")
		f.Start(ctx.Done())
		nsf.Start(ctx.Done())
		defer f.Shutdown()
		defer nsf.Shutdown()
		if !synced(ctx, f, nsf) {
			return
		}
		c.serveGateway(l)
		c.changed()
		<-ctx.Done()
		return
	}
}

// translateGateway translates the cached Gateway API objects into snap
// (routes, listener certificates and warnings) and keeps the status it
// decided for the leader. Without the Gateway API it does nothing.
func (c *clusterController) translateGateway(snap *compile.Snapshot) {
	o, ok := c.gatewayObjects(*snap)
	if !ok {
		return
	}
	tr := gatewayapi.TranslateAll(o)
	tr.AddTo(snap)
	c.gw.status.Store(tr.Status)
}

// syncGatewayStatus writes the status of the last rebuild's decision into
// every GatewayClass, Gateway, HTTPRoute and GRPCRoute of ours whose status differs
// from it (SPEC §20), by the name order of each kind. Gateways advertise
// the Ingresses' addresses. It reports whether every write went through.
func (c *clusterController) syncGatewayStatus(ctx context.Context, desired []networkingv1.IngressLoadBalancerIngress) bool {
	l, st := c.gw.listers.Load(), c.gw.status.Load()
	if l == nil || st == nil || c.cfg.noStatusUpdate {
		return true
	}
	now := metav1.NewTime(time.Now().Truncate(time.Second)) // the API keeps seconds
	var addrs []gwv1.GatewayStatusAddress
	for _, d := range desired {
		if d.IP != "" {
			addrs = append(addrs, gwv1.GatewayStatusAddress{Type: new(gwv1.IPAddressType), Value: d.IP})
		} else if d.Hostname != "" {
			addrs = append(addrs, gwv1.GatewayStatusAddress{Type: new(gwv1.HostnameAddressType), Value: d.Hostname})
		}
	}
	api := c.gw.client.GatewayV1()
	ok := true
	report := func(kind, key string, written bool, err error) {
		if err == nil {
			if written {
				c.log.Info(kind+" status written", "object", key)
			}
			return
		}
		if ctx.Err() == nil && !errors.Is(err, errRewriteDeferred) {
			c.log.Warn("cannot write "+kind+" status; will retry", "object", key, "err", err)
		}
		ok = false
	}
	report2 := func(kind, key string) func(bool, error) {
		return func(written bool, err error) { report(kind, key, written, err) }
	}
	all := labels.Everything()
	classes, _ := l.classes.List(all)
	for _, o := range sortedByName(classes) {
		if next, changed := st.GatewayClass(o, now); changed {
			report2("GatewayClass", o.Name)(writeStatus(ctx, c.gatewayWritten(), next, api.GatewayClasses().UpdateStatus, api.GatewayClasses().Get,
				func(fresh *gwv1.GatewayClass) (*gwv1.GatewayClass, bool) { return st.GatewayClass(fresh, now) }))
		}
	}
	gateways, _ := l.gateways.List(all)
	for _, o := range sortedByName(gateways) {
		if next, changed := st.Gateway(o, addrs, now); changed {
			gws := api.Gateways(o.Namespace)
			report2("Gateway", o.Namespace+"/"+o.Name)(writeStatus(ctx, c.gatewayWritten(), next, gws.UpdateStatus, gws.Get,
				func(fresh *gwv1.Gateway) (*gwv1.Gateway, bool) { return st.Gateway(fresh, addrs, now) }))
		}
	}
	routes, _ := l.routes.List(all)
	for _, o := range sortedByName(routes) {
		if next, changed := st.HTTPRoute(o, now); changed {
			rs := api.HTTPRoutes(o.Namespace)
			report2("HTTPRoute", o.Namespace+"/"+o.Name)(writeStatus(ctx, c.gatewayWritten(), next, rs.UpdateStatus, rs.Get,
				func(fresh *gwv1.HTTPRoute) (*gwv1.HTTPRoute, bool) { return st.HTTPRoute(fresh, now) }))
		}
	}
	c.syncGRPCRouteStatus(ctx, st, now, report2)
	c.syncTLSRouteStatus(ctx, st, now, report)
	return ok
}

// writeStatus writes next's status. The cached copy it was decided on may
// lag a write by someone else: on a conflict the object is read again and
// written once more only if the decision still differs from it. A deleted
// object is not an error; written is false when nothing was written.
//
// A status written lately (written, within statusRewriteAfter) that
// differs again is not written before that is over: errRewriteDeferred.
func writeStatus[T metav1.Object](ctx context.Context, written map[string]statusWrite, next T,
	update func(context.Context, T, metav1.UpdateOptions) (T, error),
	get func(context.Context, string, metav1.GetOptions) (T, error),
	redecide func(T) (T, bool)) (_ bool, err error) {
	key := fmt.Sprintf("%T %s/%s", next, next.GetNamespace(), next.GetName())
	fingerprint := statusFingerprint(next)
	// One created again under the name is a new object, written at once.
	if w, ok := written[key]; ok && w.addresses == fingerprint && w.uid == next.GetUID() {
		return false, errRewriteDeferred
	}
	defer func() {
		if err == nil {
			written[key] = statusWrite{addresses: fingerprint, at: time.Now(), uid: next.GetUID()}
		}
	}()
	opts := metav1.UpdateOptions{FieldManager: fieldManager}
	_, err = update(ctx, next, opts)
	if apierrors.IsConflict(err) {
		fresh, getErr := get(ctx, next.GetName(), metav1.GetOptions{})
		if getErr != nil {
			err = getErr
		} else if again, changed := redecide(fresh); !changed {
			return false, nil
		} else {
			_, err = update(ctx, again, opts)
		}
	}
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	return err == nil, err
}

// errRewriteDeferred is writeStatus's answer for a status it wrote lately
// that someone else changed since.
var errRewriteDeferred = errors.New("written lately and changed since by someone else: written again later")

// gatewayWritten are the Gateway API statuses this term wrote lately, by
// kind and name, without those written statusRewriteAfter ago or more.
func (c *clusterController) gatewayWritten() map[string]statusWrite {
	if c.gwWritten == nil {
		c.gwWritten = make(map[string]statusWrite)
	}
	now := time.Now()
	maps.DeleteFunc(c.gwWritten, func(_ string, w statusWrite) bool { return now.Sub(w.at) >= statusRewriteAfter })
	return c.gwWritten
}

// statusFingerprint is obj's status less its conditions' transition
// times, which a decision made again sets anew.
func statusFingerprint(obj any) string {
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return ""
	}
	var strip func(any)
	strip = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			delete(x, "lastTransitionTime")
			for _, e := range x {
				strip(e)
			}
		case []any:
			for _, e := range x {
				strip(e)
			}
		}
	}
	st := u["status"]
	strip(st)
	b, _ := json.Marshal(st)
	return string(b)
}

func sortedByName[T metav1.Object](items []T) []T {
	return slices.SortedFunc(slices.Values(items), func(a, b T) int {
		return cmp.Or(cmp.Compare(a.GetNamespace(), b.GetNamespace()), cmp.Compare(a.GetName(), b.GetName()))
	})
}

// gatewayObjects lists the cached Gateway API objects, with snap's
// Services and Secrets; false without the Gateway API.
func (c *clusterController) gatewayObjects(snap compile.Snapshot) (gatewayapi.Objects, bool) {
	l := c.gw.listers.Load()
	if l == nil {
		return gatewayapi.Objects{}, false
	}
	all := labels.Everything()
	o := gatewayapi.Objects{Services: snap.Services, Secrets: snap.Secrets, Ports: servedGatewayPorts(c.cfg)}
	o.GatewayClasses, _ = l.classes.List(all) // a cache lister never fails
	o.Gateways, _ = l.gateways.List(all)
	o.HTTPRoutes, _ = l.routes.List(all)
	o.ReferenceGrants, _ = l.grants.List(all)
	o.Namespaces, _ = l.namespaces.List(all)
	c.listGRPCRoutes(&o)
	o.TLSRoutes = c.gw.tls.lister.Load().list()
	return o, true
}

// gatewayRoutes is the admission webhook's view of the Gateway API at
// this rebuild (nil when it is not served): the translation of its
// objects with the route under review in place of its old version.
func (c *clusterController) gatewayRoutes(snap compile.Snapshot) func(edit func(*gatewayapi.Objects)) gatewayapi.Translation {
	if c.admission == nil {
		return nil
	}
	o, ok := c.gatewayObjects(snap)
	if !ok {
		return nil
	}
	return translateWith(o)
}

// translateWith translates o after edit, which puts a route in place of
// its old version (withRoute) in a copy of o's lists.
func translateWith(o gatewayapi.Objects) func(edit func(*gatewayapi.Objects)) gatewayapi.Translation {
	return func(edit func(*gatewayapi.Objects)) gatewayapi.Translation {
		objs := o
		edit(&objs)
		return gatewayapi.TranslateAll(objs)
	}
}

// withRoute is list without route's old version (by namespace and name),
// then route; list itself is not written.
func withRoute[T metav1.Object](list []T, route T) []T {
	out := slices.DeleteFunc(slices.Clone(list), func(r T) bool {
		return r.GetNamespace() == route.GetNamespace() && r.GetName() == route.GetName()
	})
	return append(out, route)
}
