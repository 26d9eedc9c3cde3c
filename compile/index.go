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
// against it so far. One index probe per reference finds it all.
type serviceEntry struct {
	svc *corev1.Service
	// missing names the Service when svc is nil.
	missing *objKey
	slices  []*discoveryv1.EndpointSlice
	// refs memoizes resolutions by the port as written, a list through
	// resolution.next: a Service has few ports.
	refs *resolution
	// Room for the usual one slice, in place of an allocation.
	slicesBuf [1]*discoveryv1.EndpointSlice
}

// key is the namespace and name the entry is under.
func (e *serviceEntry) key() (ns, name string) {
	if e.svc != nil {
		return e.svc.Namespace, e.svc.Name
	}
	return e.missing.ns, e.missing.name
}

// indexObjects indexes Services with their EndpointSlices (by the Service
// their kubernetes.io/service-name label names), and Secrets, by namespace
// and name.
func (b *builder) indexObjects() {
	entries := make([]serviceEntry, 0, len(b.snap.Services))
	b.backendList = make([]*backendInfo, 0, len(b.snap.Services)) // most Services have one backend
	b.services = newNameIndex(len(b.snap.Services), (*serviceEntry).key)
	for _, svc := range b.snap.Services {
		if svc == nil {
			continue
		}
		entries = append(entries, serviceEntry{svc: svc}) // within its capacity: entries never move
		if e, dup := b.services.add(svc.Namespace, svc.Name, &entries[len(entries)-1]); dup {
			entries = entries[:len(entries)-1]
			if precedes(svc, e.svc) {
				e.svc = svc
			}
		}
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
	e, ok := b.services.get(ns, name)
	if !ok {
		e = &serviceEntry{missing: &objKey{ns, name}}
		b.services.add(ns, name, e)
	}
	b.lastService, b.lastKey = e, objKey{ns, name}
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
