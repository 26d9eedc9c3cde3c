package gatewayapi

import (
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwv1alpha2 "sigs.k8s.io/gateway-api/apis/v1alpha2"
	gwv1alpha3 "sigs.k8s.io/gateway-api/apis/v1alpha3"
	gwv1beta1 "sigs.k8s.io/gateway-api/apis/v1beta1"

	"ramjet.dev/ramjet/compile"
	"ramjet.dev/ramjet/compile/manifest"
)

// Extension is the manifest.Extension that reads Gateway API objects
// (GatewayClass, Gateway, HTTPRoute and ReferenceGrant, v1 and v1beta1;
// GRPCRoute v1; TLSRoute v1, v1alpha3 and v1alpha2)
// and Namespaces, whose labels allowedRoutes selectors match, and
// translates them into the snapshot's HTTPRoutes and Warnings. Register
// installs it.
type Extension struct{}

var _ manifest.Extension = Extension{}

// Register registers Extension with the manifest loader, once however
// often it is called, so that manifest.Load and Decode, the case runner
// (router/routertest) and every tool built on them read Gateway API
// objects.
func Register() { registerOnce() }

var registerOnce = sync.OnceFunc(func() { manifest.Register(Extension{}) })

// Kinds lists the kinds read: the Gateway API's in v1 and v1beta1 (the
// versions the conformance suite's manifests use), TLSRoute in v1,
// v1alpha3 and v1alpha2 (the experimental channel's), and v1 Namespace.
func (Extension) Kinds() map[schema.GroupVersionKind]bool {
	kinds := map[schema.GroupVersionKind]bool{
		corev1.SchemeGroupVersion.WithKind("Namespace"): false,
	}
	for _, v := range []string{gwv1.GroupVersion.Version, gwv1beta1.GroupVersion.Version} {
		gv := schema.GroupVersion{Group: Group, Version: v}
		kinds[gv.WithKind("GatewayClass")] = false
		kinds[gv.WithKind("Gateway")] = true
		kinds[gv.WithKind("HTTPRoute")] = true
		kinds[gv.WithKind("ReferenceGrant")] = true
	}
	kinds[schema.GroupVersion{Group: Group, Version: gwv1.GroupVersion.Version}.WithKind("GRPCRoute")] = true
	for _, v := range tlsRouteVersions {
		kinds[schema.GroupVersion{Group: Group, Version: v}.WithKind(tlsRouteKind)] = true
	}
	return kinds
}

// AddToScheme registers the Gateway API's v1 and v1beta1 types and the
// core ones (for Namespace).
func (Extension) AddToScheme(s *runtime.Scheme) error {
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, gwv1.Install, gwv1beta1.Install, gwv1alpha2.Install, gwv1alpha3.Install} {
		if err := add(s); err != nil {
			return err
		}
	}
	return nil
}

// Finish translates the objects (TranslateAll) into snap.HTTPRoutes,
// snap.ListenerCertificates and snap.Warnings. v1beta1 objects are read
// as v1, whose shape they share.
func (Extension) Finish(objects []runtime.Object, snap *compile.Snapshot) {
	var o Objects
	for _, obj := range objects {
		switch x := obj.(type) {
		case *corev1.Namespace:
			o.Namespaces = append(o.Namespaces, x)
		case *gwv1.GatewayClass:
			o.GatewayClasses = append(o.GatewayClasses, x)
		case *gwv1beta1.GatewayClass:
			o.GatewayClasses = append(o.GatewayClasses, (*gwv1.GatewayClass)(x))
		case *gwv1.Gateway:
			o.Gateways = append(o.Gateways, x)
		case *gwv1beta1.Gateway:
			o.Gateways = append(o.Gateways, (*gwv1.Gateway)(x))
		case *gwv1.HTTPRoute:
			o.HTTPRoutes = append(o.HTTPRoutes, x)
		case *gwv1beta1.HTTPRoute:
			o.HTTPRoutes = append(o.HTTPRoutes, (*gwv1.HTTPRoute)(x))
		case *gwv1.GRPCRoute:
			o.GRPCRoutes = append(o.GRPCRoutes, x)
		case *gwv1.ReferenceGrant:
			o.ReferenceGrants = append(o.ReferenceGrants, x)
		case *gwv1.TLSRoute, *gwv1alpha2.TLSRoute, *gwv1alpha3.TLSRoute:
			o.TLSRoutes = append(o.TLSRoutes, TLSRouteV1(x))
		case *gwv1beta1.ReferenceGrant:
			o.ReferenceGrants = append(o.ReferenceGrants, (*gwv1.ReferenceGrant)(x))
		}
	}
	// Services and Secrets are the loader's own kinds; the status that
	// TranslateAll also decides is for a controller to write, not here.
	o.Services, o.Secrets = snap.Services, snap.Secrets
	tr := TranslateAll(o)
	tr.AddTo(snap)
}
