package main

import (
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The informer caches hold every watched object for the life of the
// process, and at tens of thousands of objects they are most of its
// memory. trimObject keeps of each object what the compile, the status
// writer and the event handlers read, and drops the rest before it is
// cached: managedFields everywhere; kubectl's last-applied-configuration
// (a second copy of the whole object on everything created by
// kubectl apply) everywhere but on Ingresses; of a Service, the selector
// and the spec fields no route or status address reads; of an
// EndpointSlice, its annotations, labels other than the Service name and
// manager, and each endpoint's topology and pod reference; of a
// Namespace, all but its name and labels.
//
// Ingress annotations stay: they are the routing, statusOnly compares
// them, and a status write sends them back.
func trimObject(obj any) (any, error) {
	a, err := meta.Accessor(obj)
	if err != nil {
		// A DeletedFinalStateUnknown tombstone: nothing to trim.
		return obj, nil
	}
	a.SetManagedFields(nil)
	if _, ok := obj.(*networkingv1.Ingress); ok {
		// The status writer sends the cached Ingress back whole, and an
		// Ingress status update takes its metadata too: without the
		// annotation it would erase it, and kubectl apply's next merge.
		return obj, nil
	}
	if ann := a.GetAnnotations(); ann != nil {
		if _, ok := ann[corev1.LastAppliedConfigAnnotation]; ok {
			delete(ann, corev1.LastAppliedConfigAnnotation)
			if len(ann) == 0 {
				a.SetAnnotations(nil)
			}
		}
	}
	switch o := obj.(type) {
	case *corev1.Service:
		trimService(o)
	case *discoveryv1.EndpointSlice:
		trimEndpointSlice(o)
	case *corev1.Namespace:
		// allowedRoutes selectors read the labels only (SPEC §20).
		*o = corev1.Namespace{TypeMeta: o.TypeMeta, ObjectMeta: metav1.ObjectMeta{
			Name: o.Name, Labels: o.Labels, ResourceVersion: o.ResourceVersion, Generation: o.Generation, UID: o.UID}}
	case *networkingv1.Ingress, *networkingv1.IngressClass, *corev1.Secret, *corev1.ConfigMap:
		// Read whole: spec, annotations, data. So are the Gateway API's
		// kinds: their status is compared with the decided one.
	}
	return obj, nil
}

// trimService keeps the spec fields routing and the status address read
// (type, cluster IP, external name, ports, external IPs) and the
// load-balancer status.
func trimService(s *corev1.Service) {
	s.Labels = nil
	s.Spec = corev1.ServiceSpec{
		Type:         s.Spec.Type,
		ClusterIP:    s.Spec.ClusterIP,
		ExternalName: s.Spec.ExternalName,
		Ports:        s.Spec.Ports,
		ExternalIPs:  s.Spec.ExternalIPs,
	}
	s.Status = corev1.ServiceStatus{LoadBalancer: s.Status.LoadBalancer}
}

// trimEndpointSlice keeps the Service name label, the address type, the
// ports and each endpoint's addresses and conditions.
func trimEndpointSlice(s *discoveryv1.EndpointSlice) {
	s.Annotations = nil
	var keep map[string]string
	for _, k := range []string{discoveryv1.LabelServiceName, discoveryv1.LabelManagedBy} {
		if v, ok := s.Labels[k]; ok {
			if keep == nil {
				keep = make(map[string]string, 2)
			}
			keep[k] = v
		}
	}
	s.Labels = keep
	for i := range s.Endpoints {
		ep := &s.Endpoints[i]
		*ep = discoveryv1.Endpoint{Addresses: ep.Addresses, Conditions: ep.Conditions}
	}
}
