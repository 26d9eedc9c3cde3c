package compile

import (
	"bytes"
	"encoding/json"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"ramjet.dev/ramjet/match"
)

// serviceEntry gathers everything known about one Service name: the Service
// (nil when missing), its EndpointSlices, and the port references resolved
// against it so far. One map probe per reference finds it all.
type serviceEntry struct {
	svc    *corev1.Service
	slices []*discoveryv1.EndpointSlice
	// refs memoizes resolutions by the port as written; backends holds the
	// distinct backends they resolved to. Both are short: a Service has few
	// ports.
	refs     []*resolution
	backends []*backendInfo
	// Room for the usual few, in place of an allocation each.
	slicesBuf   [1]*discoveryv1.EndpointSlice
	refsBuf     [2]*resolution
	backendsBuf [1]*backendInfo
}

// indexObjects indexes Services with their EndpointSlices (by the Service
// their kubernetes.io/service-name label names), and Secrets, by namespace
// and name.
func (b *builder) indexObjects() {
	entries := make([]serviceEntry, 0, len(b.snap.Services))
	b.services = make(map[objKey]*serviceEntry, len(b.snap.Services))
	for _, svc := range b.snap.Services {
		if svc == nil {
			continue
		}
		k := objKey{svc.Namespace, svc.Name}
		if e, dup := b.services[k]; dup {
			if precedes(svc, e.svc) {
				e.svc = svc
			}
			continue
		}
		entries = append(entries, serviceEntry{svc: svc})
		b.services[k] = &entries[len(entries)-1]
	}
	// Every slice of a Service contributes; their union does not depend on
	// order, so duplicate slices need no tie-break.
	for _, sl := range b.snap.EndpointSlices {
		if sl == nil {
			continue
		}
		name, ok := sl.Labels[discoveryv1.LabelServiceName]
		if !ok || name == "" {
			continue
		}
		e := b.serviceEntry(sl.Namespace, name)
		if e.slices == nil {
			e.slices = e.slicesBuf[:0]
		}
		e.slices = append(e.slices, sl)
	}

	b.secrets = make(map[objKey]*corev1.Secret, len(b.snap.Secrets))
	for _, sec := range b.snap.Secrets {
		if sec != nil {
			keepOne(b.secrets, objKey{sec.Namespace, sec.Name}, sec)
		}
	}
	b.parsed = make(map[objKey]*parsedSecret)
}

// serviceEntry returns the entry for ns/name, adding an empty one (a
// missing Service) when there is none.
func (b *builder) serviceEntry(ns, name string) *serviceEntry {
	if b.lastService != nil && b.lastKey.name == name && b.lastKey.ns == ns {
		return b.lastService
	}
	k := objKey{ns, name}
	e, ok := b.services[k]
	if !ok {
		e = &serviceEntry{}
		b.services[k] = e
	}
	b.lastService, b.lastKey = e, k
	return e
}

// keepOne stores obj under key. A snapshot from an informer cache never
// holds two objects with one name, but should one arrive twice with
// different contents, the copy with the smaller JSON encoding is kept so the
// choice does not depend on input order.
func keepOne[K comparable, T any](m map[K]*T, key K, obj *T) {
	old, dup := m[key]
	if !dup || precedes(obj, old) {
		m[key] = obj
	}
}

// precedes orders two objects by their JSON encoding. It runs only for
// duplicates, so its cost does not matter.
func precedes(a, b any) bool {
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	if errA != nil || errB != nil {
		return errA == nil
	}
	return bytes.Compare(ja, jb) < 0
}

// ingressOf finds the claimed Ingress that declared src; nil for what no
// Ingress declared.
func (b *builder) ingressOf(src match.Source) *ingress {
	if src.Name == "" || src.Kind != "" {
		return nil
	}
	if b.byKey == nil {
		b.byKey = make(map[objKey]*ingress, len(b.ingresses))
		for _, ing := range b.ingresses {
			b.byKey[objKey{ing.obj.Namespace, ing.obj.Name}] = ing
		}
	}
	return b.byKey[objKey{src.Namespace, src.Name}]
}
