package compile

import (
	"maps"
	"reflect"
	"slices"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"ramjet.dev/ramjet/match"
)

// Compiler compiles one snapshot after another, reusing what it computed
// for the previous one where the inputs are the same (SPEC §17). Its
// Result is always the one Compile gives for the same snapshot and
// options: the same table text, warnings and digest. A Compiler is for
// one goroutine at a time; the zero value is ready to use.
//
// The objects of a snapshot must not be modified once compiled, as the
// objects of an informer's cache never are: a changed object is a new
// object (a new pointer). A Compiler recognises an unchanged object by its
// pointer, and a replaced one whose compiled fields are equal by content.
type Compiler struct {
	// Options are the options of the next Compile; they may change
	// between calls, and reuse then stops where they matter.
	Options Options

	seen      *seenSnapshot
	couplings *couplings // nil until rebuilt after a snapshot with duplicates
	// slicesBySvc are the EndpointSlices' keys by their Service; nil
	// until rebuilt after a snapshot with duplicates.
	slicesBySvc map[objKey][]objKey
	splice      *splice // nil when the last result cannot be spliced into
	last        Result
	lastOpts    Options
	compiled    bool

	// reuses counts the compiles answered with the previous result, and
	// recompiles those that compiled only what a change reached.
	reuses, recompiles int
	// shared counts the recompiles whose table shared the previous one's
	// unchanged hosts.
	shared int
	// endpointOnly counts the recompiles that changed backends' endpoint
	// lists alone.
	endpointOnly int
	// listenerRecompiles and passthroughRecompiles count the recompiles
	// of snapshots with Gateway listeners and with TLSRoutes.
	listenerRecompiles, passthroughRecompiles int
	fullReasons                               map[string]int
}

// Compile compiles s with c.Options: Compile(s, c.Options), reusing the
// previous compile's work where s and the options allow.
func (c *Compiler) Compile(s Snapshot) Result {
	o := c.Options
	if c.seen == nil {
		c.seen = newSeenSnapshot()
	}
	same := c.seen.update(&s)
	c.updateCouplings()
	c.updateSlices()
	if c.compiled && sameOptions(c.lastOpts, o) {
		if same {
			c.reuses++
			return c.last.clone()
		}
		if r, ok := c.recompile(&s, o); ok {
			c.recompiles++
			if len(s.Listeners) > 0 {
				c.listenerRecompiles++
			}
			if len(s.TLSRoutes) > 0 {
				c.passthroughRecompiles++
			}
			c.last = r
			return c.last.clone()
		}
	}
	c.last = Compile(s, o)
	c.lastOpts = cloneOptions(o)
	c.compiled = true
	c.splice = nil
	if !c.seen.ingresses.dup {
		c.splice = newSplice(c.last, &c.seen.ingresses)
	}
	return c.last.clone()
}

// updateCouplings brings the Ingresses' couplings up to the snapshot.
func (c *Compiler) updateCouplings() {
	k := &c.seen.ingresses
	switch {
	case k.dup:
		c.couplings = nil
	case c.couplings == nil:
		c.couplings = newCouplings()
		for key, e := range k.m {
			c.couplings.add(key, e.obj)
		}
	default:
		for _, ch := range k.changes {
			c.couplings.remove(ch.key)
			if ch.new != nil {
				c.couplings.add(ch.key, ch.new)
			}
		}
	}
}

// updateSlices brings the EndpointSlices' index up to the snapshot.
func (c *Compiler) updateSlices() {
	k := &c.seen.slices
	svc := func(sl *discoveryv1.EndpointSlice) objKey {
		return objKey{sl.Namespace, sl.Labels[discoveryv1.LabelServiceName]}
	}
	switch {
	case k.dup:
		c.slicesBySvc = nil
	case c.slicesBySvc == nil:
		c.slicesBySvc = make(map[objKey][]objKey, len(k.m))
		for key, e := range k.m {
			c.slicesBySvc[svc(e.obj)] = append(c.slicesBySvc[svc(e.obj)], key)
		}
	default:
		for _, ch := range k.changes {
			if ch.old != nil {
				s := svc(ch.old)
				if c.slicesBySvc[s] = deleteKey(c.slicesBySvc[s], ch.key); len(c.slicesBySvc[s]) == 0 {
					delete(c.slicesBySvc, s)
				}
			}
			if ch.new != nil {
				c.slicesBySvc[svc(ch.new)] = append(c.slicesBySvc[svc(ch.new)], ch.key)
			}
		}
	}
}

// clone gives the caller its own slices, so that one appending to the
// warnings of a Result (as a controller adds its own) cannot write into
// the kept one.
func (r Result) clone() Result {
	c := r
	c.Warnings, c.Claimed = slices.Clip(r.Warnings), slices.Clip(r.Claimed)
	return c
}

// sameOptions reports whether two Options compile alike: equal values,
// the ConfigMap compared by what it was parsed from.
func sameOptions(a, b Options) bool {
	if !sameConfigMap(a.ConfigMap, b.ConfigMap) {
		return false
	}
	a.ConfigMap, b.ConfigMap = nil, nil
	return reflect.DeepEqual(a, b)
}

func sameConfigMap(a, b *ConfigMap) bool {
	if a == nil || b == nil {
		return a == b
	}
	// The options functions come from the source alone, when parsed; every
	// other field is compared as well, as ReadHeaders and a caller may
	// change them after parsing.
	if len(a.options) != len(b.options) || len(a.options) > 0 && (a.src == nil || b.src == nil) {
		return false
	}
	return reflect.DeepEqual(a.src, b.src) && a.Ref == b.Ref && slices.Equal(a.Keys, b.Keys) &&
		maps.Equal(a.Extensions, b.Extensions) && reflect.DeepEqual(a.Router, b.Router) &&
		maps.Equal(a.locations, b.locations) && slices.Equal(a.blockCIDRs, b.blockCIDRs) && slices.Equal(a.warnings, b.warnings)
}

// cloneOptions copies the slices and pointers of o that a caller might
// modify in place after the compile.
func cloneOptions(o Options) Options {
	o.ExtensionPrefixes = slices.Clone(o.ExtensionPrefixes)
	o.ExtensionKeys = slices.Clone(o.ExtensionKeys)
	o.CustomHTTPErrors = slices.Clone(o.CustomHTTPErrors)
	if o.DefaultBackend != nil {
		d := *o.DefaultBackend
		o.DefaultBackend = &d
	}
	if o.GlobalAuth != nil {
		g := *o.GlobalAuth
		o.GlobalAuth = &g
	}
	if o.ConfigMap != nil {
		// A copy: the caller's may be read into again (ReadHeaders).
		cm := *o.ConfigMap
		cm.Keys, cm.warnings = slices.Clone(cm.Keys), slices.Clone(cm.warnings)
		cm.locations, cm.Extensions = maps.Clone(cm.locations), maps.Clone(cm.Extensions)
		o.ConfigMap = &cm
	}
	return o
}

// configMapSource is what ParseConfigMapFor read: equal sources parse to
// equal ConfigMaps.
type configMapSource struct {
	namespace, name string
	data            map[string]string
	opts            ConfigMapOptions
	absent          bool
}

func newConfigMapSource(cm *corev1.ConfigMap, o ConfigMapOptions) *configMapSource {
	o.Keep, o.ExtensionKeys = slices.Clone(o.Keep), slices.Clone(o.ExtensionKeys)
	if cm == nil {
		return &configMapSource{absent: true, opts: o}
	}
	return &configMapSource{namespace: cm.Namespace, name: cm.Name, data: maps.Clone(cm.Data), opts: o}
}

// seenSnapshot is the previous snapshot's objects by kind and name, to
// tell which objects of the next one are new.
type seenSnapshot struct {
	gen           uint64
	ingresses     seenKind[networkingv1.Ingress]
	classes       seenKind[networkingv1.IngressClass]
	services      seenKind[corev1.Service]
	slices        seenKind[discoveryv1.EndpointSlice]
	secrets       seenKind[corev1.Secret]
	configMaps    seenKind[corev1.ConfigMap]
	httpRoutes    []*HTTPRoute
	listenerCerts []*ListenerCertificate
	warnings      []Warning
	// The Gateway listeners and TLS passthrough routes (§20), and the
	// routes of the snapshot before.
	listeners, passthroughListeners []match.ListenerHost
	tlsRoutes, oldTLSRoutes         []*TLSRoute
	initialised                     bool
	// otherChanged: the route sources' routes, certificates or warnings;
	// gatewayChanged: the listeners or TLS passthrough routes.
	otherChanged, gatewayChanged bool
}

func newSeenSnapshot() *seenSnapshot {
	return &seenSnapshot{
		ingresses:  seenKind[networkingv1.Ingress]{same: sameIngress},
		classes:    seenKind[networkingv1.IngressClass]{same: sameClass},
		services:   seenKind[corev1.Service]{same: sameService},
		slices:     seenKind[discoveryv1.EndpointSlice]{same: sameSlice},
		secrets:    seenKind[corev1.Secret]{same: sameSecret},
		configMaps: seenKind[corev1.ConfigMap]{same: sameConfigMapObject},
	}
}

// update records s and reports whether it holds the same objects as the
// previous snapshot: the same pointers, or objects equal in every field a
// compile reads.
func (p *seenSnapshot) update(s *Snapshot) bool {
	p.gen++
	same := p.initialised
	p.otherChanged = false
	same = p.ingresses.update(p.gen, s.Ingresses, ingressKey) && same
	same = p.classes.update(p.gen, s.IngressClasses, classKey) && same
	same = p.services.update(p.gen, s.Services, serviceKey) && same
	same = p.slices.update(p.gen, s.EndpointSlices, sliceKey) && same
	same = p.secrets.update(p.gen, s.Secrets, secretKey) && same
	same = p.configMaps.update(p.gen, s.ConfigMaps, configMapKey) && same
	if !slices.Equal(p.httpRoutes, s.HTTPRoutes) {
		p.httpRoutes, p.otherChanged = slices.Clone(s.HTTPRoutes), true
	}
	if !slices.Equal(p.listenerCerts, s.ListenerCertificates) {
		p.listenerCerts, p.otherChanged = slices.Clone(s.ListenerCertificates), true
	}
	if !slices.Equal(p.warnings, s.Warnings) {
		p.warnings, p.otherChanged = slices.Clone(s.Warnings), true
	}
	p.gatewayChanged = false
	if !slices.Equal(p.listeners, s.Listeners) || !slices.Equal(p.passthroughListeners, s.PassthroughListeners) {
		p.listeners, p.passthroughListeners, p.gatewayChanged = slices.Clone(s.Listeners), slices.Clone(s.PassthroughListeners), true
	}
	p.oldTLSRoutes = p.tlsRoutes
	// By content: a translation makes new values for the same routes.
	if !slices.EqualFunc(p.tlsRoutes, s.TLSRoutes, func(a, b *TLSRoute) bool { return a == b || a != nil && b != nil && reflect.DeepEqual(*a, *b) }) {
		p.tlsRoutes, p.gatewayChanged = slices.Clone(s.TLSRoutes), true
	}
	same = same && !p.otherChanged && !p.gatewayChanged
	p.initialised = true
	return same
}

// seenKind is one kind's objects of the previous snapshot, by pointer
// (an unchanged object is found by a cheap lookup) and by key (to tell a
// replaced object from an added one).
type seenKind[T any] struct {
	m     map[objKey]*seenObject[T]
	byPtr map[*T]*seenObject[T]
	same  func(a, b *T) bool
	// dup is set when the snapshot held two objects of one name, and
	// prevDup when the one before did: which one Compile keeps depends on
	// both, so such snapshots are compiled in full.
	dup, prevDup bool
	// changed says the last update found a change, and changes lists
	// them: added (old nil), replaced, removed (new nil).
	changed bool
	changes []seenChange[T]
	fresh   []int // positions in objs
	// order is the previous objs, and entries their entries by position:
	// a caller that lists its objects in the same order each time has
	// them found without a map lookup.
	order   []*T
	entries []*seenObject[T]
	next    []*seenObject[T]
}

type seenObject[T any] struct {
	obj *T
	key objKey
	gen uint64
}

type seenChange[T any] struct {
	key      objKey
	old, new *T
}

// update records objs under gen and reports whether they are the
// previous objects, no more and no fewer.
func (k *seenKind[T]) update(gen uint64, objs []*T, key func(*T) objKey) bool {
	if k.m == nil {
		k.m = make(map[objKey]*seenObject[T], len(objs))
		k.byPtr = make(map[*T]*seenObject[T], len(objs))
	}
	k.changes = k.changes[:0]
	k.fresh = k.fresh[:0]
	dup := false
	n := 0
	inOrder := len(k.order) == len(objs)
	next := slices.Grow(k.next[:0], len(objs))[:len(objs)]
	for i, o := range objs {
		if o == nil {
			next[i] = nil
			continue
		}
		n++
		var e *seenObject[T]
		if inOrder && k.order[i] == o && k.entries[i] != nil && k.entries[i].obj == o {
			e = k.entries[i]
		} else {
			e = k.byPtr[o]
		}
		next[i] = e
		switch {
		case e == nil:
			k.fresh = append(k.fresh, i)
		case e.gen == gen:
			dup = true // the same object twice
		default:
			e.gen = gen
		}
	}
	for _, i := range k.fresh {
		o := objs[i]
		kk := key(o)
		e := k.m[kk]
		switch {
		case e == nil:
			e = &seenObject[T]{obj: o, key: kk, gen: gen}
			k.m[kk] = e
			k.byPtr[o] = e
			k.changes = append(k.changes, seenChange[T]{key: kk, new: o})
		case e.gen == gen:
			dup = true
			delete(k.byPtr, e.obj)
			e.obj = o
			k.byPtr[o] = e
		default:
			if !k.same(e.obj, o) {
				k.changes = append(k.changes, seenChange[T]{key: kk, old: e.obj, new: o})
			}
			delete(k.byPtr, e.obj)
			e.obj, e.gen = o, gen
			k.byPtr[o] = e
		}
		next[i] = e
	}
	if len(k.m) != n || dup {
		for kk, e := range k.m {
			if e.gen != gen {
				k.changes = append(k.changes, seenChange[T]{key: kk, old: e.obj})
				delete(k.m, kk)
				delete(k.byPtr, e.obj)
			}
		}
	}
	k.order = append(k.order[:0], objs...)
	k.entries, k.next = next, k.entries
	clear(k.next) // the entries of removed objects go
	k.prevDup, k.dup = k.dup, dup
	k.changed = len(k.changes) > 0 || dup || k.prevDup
	return !k.changed
}

func ingressKey(o *networkingv1.Ingress) objKey    { return objKey{o.Namespace, o.Name} }
func classKey(o *networkingv1.IngressClass) objKey { return objKey{"", o.Name} }
func serviceKey(o *corev1.Service) objKey          { return objKey{o.Namespace, o.Name} }
func sliceKey(o *discoveryv1.EndpointSlice) objKey {
	return objKey{o.Namespace, o.Name}
}
func secretKey(o *corev1.Secret) objKey       { return objKey{o.Namespace, o.Name} }
func configMapKey(o *corev1.ConfigMap) objKey { return objKey{o.Namespace, o.Name} }

// compiledMeta is an object's metadata without what no compile reads:
// the resourceVersion, generation and managed fields change on every
// write, status writes included.
func compiledMeta(m metav1.ObjectMeta) metav1.ObjectMeta {
	m.ResourceVersion, m.Generation, m.ManagedFields = "", 0, nil
	return m
}

// The same* functions report whether two versions of an object compile
// alike: equal but for what compiledMeta drops and, for Ingresses and
// Services, the status.
func sameIngress(a, b *networkingv1.Ingress) bool {
	return reflect.DeepEqual(a.Spec, b.Spec) && reflect.DeepEqual(compiledMeta(a.ObjectMeta), compiledMeta(b.ObjectMeta)) && a.TypeMeta == b.TypeMeta
}

func sameClass(a, b *networkingv1.IngressClass) bool {
	return reflect.DeepEqual(a.Spec, b.Spec) && reflect.DeepEqual(compiledMeta(a.ObjectMeta), compiledMeta(b.ObjectMeta)) && a.TypeMeta == b.TypeMeta
}

func sameService(a, b *corev1.Service) bool {
	return reflect.DeepEqual(a.Spec, b.Spec) && reflect.DeepEqual(compiledMeta(a.ObjectMeta), compiledMeta(b.ObjectMeta)) && a.TypeMeta == b.TypeMeta
}

func sameSlice(a, b *discoveryv1.EndpointSlice) bool {
	return a.AddressType == b.AddressType && reflect.DeepEqual(a.Endpoints, b.Endpoints) && reflect.DeepEqual(a.Ports, b.Ports) &&
		reflect.DeepEqual(compiledMeta(a.ObjectMeta), compiledMeta(b.ObjectMeta)) && a.TypeMeta == b.TypeMeta
}

func sameSecret(a, b *corev1.Secret) bool {
	return a.Type == b.Type && reflect.DeepEqual(a.Data, b.Data) && reflect.DeepEqual(a.StringData, b.StringData) &&
		reflect.DeepEqual(a.Immutable, b.Immutable) && reflect.DeepEqual(compiledMeta(a.ObjectMeta), compiledMeta(b.ObjectMeta)) && a.TypeMeta == b.TypeMeta
}

func sameConfigMapObject(a, b *corev1.ConfigMap) bool {
	return reflect.DeepEqual(a.Data, b.Data) && reflect.DeepEqual(a.BinaryData, b.BinaryData) &&
		reflect.DeepEqual(a.Immutable, b.Immutable) && reflect.DeepEqual(compiledMeta(a.ObjectMeta), compiledMeta(b.ObjectMeta)) && a.TypeMeta == b.TypeMeta
}
