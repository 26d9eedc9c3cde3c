package main

import (
	"context"
	"errors"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwv1alpha2 "sigs.k8s.io/gateway-api/apis/v1alpha2"
	gwv1alpha3 "sigs.k8s.io/gateway-api/apis/v1alpha3"
	gwinformers "sigs.k8s.io/gateway-api/pkg/client/informers/externalversions"

	"ramjet.dev/ramjet/compile/gatewayapi"
)

// TLSRoutes (SPEC §20) are watched in the newest version the API server
// serves: v1 (the standard channel's since Gateway API v1.5), else the
// experimental channel's v1alpha3 or v1alpha2, which older installations
// serve. Without a TLSRoute CRD the rest of the Gateway API is served
// and TLSRoutes are not.

// tlsRouteVersions are the versions asked for, newest first.
var tlsRouteVersions = []string{gwv1.GroupVersion.Version, gwv1alpha3.GroupVersion.Version, gwv1alpha2.GroupVersion.Version}

// tlsRouteVersion asks discovery for the newest TLSRoute version served;
// "" for none.
func (c *clusterController) tlsRouteVersion() string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, v := range tlsRouteVersions {
		list := &metav1.APIResourceList{}
		if err := c.client.Discovery().RESTClient().Get().AbsPath("/apis", gwv1.GroupName, v).Do(ctx).Into(list); err != nil {
			continue
		}
		if slices.ContainsFunc(list.APIResources, func(r metav1.APIResource) bool { return r.Name == "tlsroutes" }) {
			return v
		}
	}
	return ""
}

// tlsWatch sets up the TLSRoute lateWatch: a TLSRoute CRD installed
// after start is picked up without a restart, in the newest version then
// served.
func (c *clusterController) tlsWatch() {
	w := &c.gw.tls
	w.kind = "TLSRoute"
	w.served = func(context.Context) (bool, error) { return c.tlsRouteVersion() != "", nil }
	w.informers = func() (gwinformers.SharedInformerFactory, *tlsRouteLister, error) {
		f := gwinformers.NewSharedInformerFactoryWithOptions(c.gw.client, c.cfg.resync, gwinformers.WithNamespace(c.cfg.namespace))
		inf, l := c.tlsRouteInformer(f)
		if inf == nil {
			return nil, nil, errors.New("no TLSRoute version is served")
		}
		if err := inf.SetTransform(c.transform()); err != nil {
			return nil, nil, err
		}
		if _, err := inf.AddEventHandler(c.gatewayHandler()); err != nil {
			return nil, nil, err
		}
		return f, l, nil
	}
}

// tlsRouteLister lists the cached TLSRoutes as v1, and keeps the version
// they are written back in.
type tlsRouteLister struct {
	version string
	v1      func() []*gwv1.TLSRoute
	alpha3  func() []*gwv1alpha3.TLSRoute
	alpha2  func() []*gwv1alpha2.TLSRoute
}

// list returns the TLSRoutes as v1; nil without a lister.
func (t *tlsRouteLister) list() []*gwv1.TLSRoute {
	if t == nil {
		return nil
	}
	switch {
	case t.v1 != nil:
		return t.v1()
	case t.alpha3 != nil:
		var out []*gwv1.TLSRoute
		for _, r := range t.alpha3() {
			out = append(out, gatewayapi.TLSRouteV1(r))
		}
		return out
	case t.alpha2 != nil:
		var out []*gwv1.TLSRoute
		for _, r := range t.alpha2() {
			out = append(out, gatewayapi.TLSRouteV1(r))
		}
		return out
	}
	return nil
}

// tlsRouteInformer makes the informer of the TLSRoute version served, and
// its lister; nil, nil when none is.
func (c *clusterController) tlsRouteInformer(f gwinformers.SharedInformerFactory) (cache.SharedIndexInformer, *tlsRouteLister) {
	all := labels.Everything()
	l := &tlsRouteLister{version: c.tlsRouteVersion()}
	var inf cache.SharedIndexInformer
	switch l.version {
	case gwv1.GroupVersion.Version:
		i := f.Gateway().V1().TLSRoutes()
		inf, l.v1 = i.Informer(), func() []*gwv1.TLSRoute { rs, _ := i.Lister().List(all); return rs }
	case gwv1alpha3.GroupVersion.Version:
		i := f.Gateway().V1alpha3().TLSRoutes()
		inf, l.alpha3 = i.Informer(), func() []*gwv1alpha3.TLSRoute { rs, _ := i.Lister().List(all); return rs }
	case gwv1alpha2.GroupVersion.Version:
		i := f.Gateway().V1alpha2().TLSRoutes()
		inf, l.alpha2 = i.Informer(), func() []*gwv1alpha2.TLSRoute { rs, _ := i.Lister().List(all); return rs }
	default:
		c.log.Info("no TLSRoute CRD is served (gateway.networking.k8s.io v1, v1alpha3 or v1alpha2): TLSRoutes are not served")
		return nil, nil
	}
	c.log.Info("watching TLSRoutes", "version", l.version)
	return inf, l
}

// syncTLSRouteStatus writes the decided status of every TLSRoute whose
// status differs from it, in the version watched; report is
// syncGatewayStatus's.
func (c *clusterController) syncTLSRouteStatus(ctx context.Context, st *gatewayapi.Status, now metav1.Time,
	report func(kind, key string, written bool, err error)) {
	tl := c.gw.tls.lister.Load()
	if tl == nil {
		return
	}
	for _, o := range sortedByName(tl.list()) {
		next, changed := st.TLSRoute(o, now)
		if !changed {
			continue
		}
		key := o.Namespace + "/" + o.Name
		redecide := func(fresh *gwv1.TLSRoute) (*gwv1.TLSRoute, bool) { return st.TLSRoute(fresh, now) }
		var written bool
		var err error
		switch api := c.gw.client; tl.version {
		case gwv1.GroupVersion.Version:
			rs := api.GatewayV1().TLSRoutes(o.Namespace)
			written, err = writeStatus(ctx, c.gatewayWritten(), next, rs.UpdateStatus, rs.Get, redecide)
		case gwv1alpha3.GroupVersion.Version:
			rs := api.GatewayV1alpha3().TLSRoutes(o.Namespace)
			written, err = writeStatus(ctx, c.gatewayWritten(), (*gwv1alpha3.TLSRoute)(next), rs.UpdateStatus, rs.Get,
				func(fresh *gwv1alpha3.TLSRoute) (*gwv1alpha3.TLSRoute, bool) {
					r, ok := redecide((*gwv1.TLSRoute)(fresh))
					return (*gwv1alpha3.TLSRoute)(r), ok
				})
		case gwv1alpha2.GroupVersion.Version:
			rs := api.GatewayV1alpha2().TLSRoutes(o.Namespace)
			alpha2 := func(r *gwv1.TLSRoute, from *gwv1alpha2.TLSRoute) *gwv1alpha2.TLSRoute {
				out := from.DeepCopy()
				out.Status = gwv1alpha2.TLSRouteStatus(r.Status)
				return out
			}
			cur, getErr := rs.Get(ctx, o.Name, metav1.GetOptions{})
			if getErr != nil {
				if apierrors.IsNotFound(getErr) {
					continue
				}
				report("TLSRoute", key, false, getErr)
				continue
			}
			written, err = writeStatus(ctx, c.gatewayWritten(), alpha2(next, cur), rs.UpdateStatus, rs.Get,
				func(fresh *gwv1alpha2.TLSRoute) (*gwv1alpha2.TLSRoute, bool) {
					r, ok := redecide(gatewayapi.TLSRouteV1(fresh))
					if !ok {
						return nil, false
					}
					return alpha2(r, fresh), true
				})
		}
		report("TLSRoute", key, written, err)
	}
}
