package compile

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Add appends objects to the snapshot by type. It accepts only the six
// kinds of SPEC §1, as pointers; on an unsupported or nil object it adds
// nothing and names the offender.
func (s *Snapshot) Add(objs ...runtime.Object) error {
	for i, obj := range objs {
		supported, isNil := snapshotKind(obj)
		switch {
		case !supported:
			return fmt.Errorf("snapshot: object %d is a %T: want *v1.Ingress, *v1.IngressClass, *v1.Service, *v1.EndpointSlice, *v1.Secret or *v1.ConfigMap", i, obj)
		case isNil:
			return fmt.Errorf("snapshot: object %d is a nil %T", i, obj)
		}
	}
	for _, obj := range objs {
		switch o := obj.(type) {
		case *networkingv1.Ingress:
			s.Ingresses = append(s.Ingresses, o)
		case *networkingv1.IngressClass:
			s.IngressClasses = append(s.IngressClasses, o)
		case *corev1.Service:
			s.Services = append(s.Services, o)
		case *discoveryv1.EndpointSlice:
			s.EndpointSlices = append(s.EndpointSlices, o)
		case *corev1.Secret:
			s.Secrets = append(s.Secrets, o)
		case *corev1.ConfigMap:
			s.ConfigMaps = append(s.ConfigMaps, o)
		}
	}
	return nil
}

// snapshotKind reports whether a Snapshot holds obj's type, and whether
// obj is a nil pointer of it.
func snapshotKind(obj runtime.Object) (supported, isNil bool) {
	switch o := obj.(type) {
	case *networkingv1.Ingress:
		return true, o == nil
	case *networkingv1.IngressClass:
		return true, o == nil
	case *corev1.Service:
		return true, o == nil
	case *discoveryv1.EndpointSlice:
		return true, o == nil
	case *corev1.Secret:
		return true, o == nil
	case *corev1.ConfigMap:
		return true, o == nil
	}
	return false, false
}

// Merge appends every object of o to s. A nil o adds nothing.
func (s *Snapshot) Merge(o *Snapshot) {
	if o == nil {
		return
	}
	s.Ingresses = append(s.Ingresses, o.Ingresses...)
	s.IngressClasses = append(s.IngressClasses, o.IngressClasses...)
	s.Services = append(s.Services, o.Services...)
	s.EndpointSlices = append(s.EndpointSlices, o.EndpointSlices...)
	s.Secrets = append(s.Secrets, o.Secrets...)
	s.ConfigMaps = append(s.ConfigMaps, o.ConfigMaps...)
	s.HTTPRoutes = append(s.HTTPRoutes, o.HTTPRoutes...)
	s.Warnings = append(s.Warnings, o.Warnings...)
	s.ListenerCertificates = append(s.ListenerCertificates, o.ListenerCertificates...)
	s.TLSRoutes = append(s.TLSRoutes, o.TLSRoutes...)
	s.PassthroughListeners = append(s.PassthroughListeners, o.PassthroughListeners...)
}

// Refs names every object of the snapshot, in snapshot order: Ingresses,
// IngressClasses, Services, EndpointSlices, Secrets, ConfigMaps.
func (s *Snapshot) Refs() []Ref {
	refs := make([]Ref, 0, len(s.Ingresses)+len(s.IngressClasses)+len(s.Services)+len(s.EndpointSlices)+len(s.Secrets)+len(s.ConfigMaps))
	// A nil entry, which Compile skips, names nothing.
	for _, o := range s.Ingresses {
		if o != nil {
			refs = append(refs, Ref{Kind: "Ingress", Namespace: o.Namespace, Name: o.Name})
		}
	}
	for _, o := range s.IngressClasses {
		if o != nil {
			refs = append(refs, Ref{Kind: "IngressClass", Name: o.Name})
		}
	}
	for _, o := range s.Services {
		if o != nil {
			refs = append(refs, Ref{Kind: "Service", Namespace: o.Namespace, Name: o.Name})
		}
	}
	for _, o := range s.EndpointSlices {
		if o != nil {
			refs = append(refs, Ref{Kind: "EndpointSlice", Namespace: o.Namespace, Name: o.Name})
		}
	}
	for _, o := range s.Secrets {
		if o != nil {
			refs = append(refs, Ref{Kind: "Secret", Namespace: o.Namespace, Name: o.Name})
		}
	}
	for _, o := range s.ConfigMaps {
		if o != nil {
			refs = append(refs, Ref{Kind: "ConfigMap", Namespace: o.Namespace, Name: o.Name})
		}
	}
	return refs
}
