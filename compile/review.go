package compile

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"

	"ramjet.dev/ramjet/classify"
	"ramjet.dev/ramjet/match"
)

// Admission review (SPEC §21): an Ingress about to be created or changed
// is compiled with the snapshot it joins, replacing its old version, and
// judged as ingress-nginx's validating webhook judges it.
//
// A Reviewer indexes one snapshot once; each Review then compiles only
// the Ingresses that can change what the reviewed one compiles to (those
// sharing a host or a Service with it, the catch-all's for a catch-all),
// with the Services, EndpointSlices and Secrets they name. Its warnings
// about the reviewed Ingress are those of compiling the whole snapshot
// (a test compares the two over every case file).

// Reviewer reviews Ingresses against one snapshot. It is read-only once
// built: any number of goroutines may call Review.
type Reviewer struct {
	snap     Snapshot
	opts     Options
	settings AdmissionSettings
	classes  *classify.Classifier
	level    nginxRisk
	crossNS  bool // allow-cross-namespace-resources

	byHost    map[string][]*networkingv1.Ingress // claimed, by each host they name ("" the catch-all)
	byService map[objKey][]*networkingv1.Ingress // claimed, by each Service they name: the first two in order of each backendSignature
	stored    map[objKey]bool                    // claimed, whether ingress-nginx stores each (nginxStored)
	order     map[objKey]int                     // claimed, their position in ingress-nginx's order (nginxOrder)
	ingresses map[objKey]*networkingv1.Ingress
	services  map[objKey]*corev1.Service
	slices    map[objKey][]*discoveryv1.EndpointSlice // by Service
	secrets   map[objKey]*corev1.Secret
	routes    map[string][]*HTTPRoute // by hostname
}

// NewReviewer indexes s for reviews under o and s's admission settings.
// The snapshot's objects are shared, never written.
func NewReviewer(s Snapshot, o Options, settings AdmissionSettings) *Reviewer {
	r := &Reviewer{
		snap: s, opts: o, settings: settings,
		classes:   classify.New(s.IngressClasses, o.claimOptions()),
		level:     riskLevel(o.WithConfigMap().AnnotationsRiskLevel),
		crossNS:   o.WithConfigMap().AllowCrossNamespaceResources,
		byHost:    make(map[string][]*networkingv1.Ingress, len(s.Ingresses)),
		byService: make(map[objKey][]*networkingv1.Ingress, len(s.Ingresses)),
		stored:    make(map[objKey]bool, len(s.Ingresses)),
		ingresses: make(map[objKey]*networkingv1.Ingress, len(s.Ingresses)),
		services:  make(map[objKey]*corev1.Service, len(s.Services)),
		slices:    make(map[objKey][]*discoveryv1.EndpointSlice, len(s.EndpointSlices)),
		secrets:   make(map[objKey]*corev1.Secret, len(s.Secrets)),
		routes:    map[string][]*HTTPRoute{},
	}
	for _, ing := range s.Ingresses {
		if ing != nil {
			keepOne(r.ingresses, objKey{ing.Namespace, ing.Name}, ing)
		}
	}
	// Before the claimed Ingresses: whether ingress-nginx stores one can
	// depend on its Secrets (nginxStore).
	for _, sec := range s.Secrets {
		if sec != nil {
			keepOne(r.secrets, objKey{sec.Namespace, sec.Name}, sec)
		}
	}
	for _, ing := range r.ingresses {
		if ok, _ := r.classes.Decide(ing); !ok {
			continue
		}
		// Once here rather than per review: every review of an Ingress
		// sharing a Service with a thousand others would validate theirs.
		r.stored[objKey{ing.Namespace, ing.Name}] = nginxStored(ing, r.settings, r.level, r.store(ing.Namespace))
		for _, h := range ingressHosts(ing) {
			r.byHost[h] = append(r.byHost[h], ing)
		}
		for _, k := range ingressServices(ing) {
			r.byService[k] = append(r.byService[k], ing)
		}
	}
	r.order = nginxOrder(r.ingresses, r.stored)
	for k, list := range r.byService {
		r.byService[k] = r.firstOfEachSignature(list)
	}
	for _, svc := range s.Services {
		if svc != nil {
			keepOne(r.services, objKey{svc.Namespace, svc.Name}, svc)
		}
	}
	for _, sl := range s.EndpointSlices {
		if sl != nil && sl.Labels[discoveryv1.LabelServiceName] != "" {
			k := objKey{sl.Namespace, sl.Labels[discoveryv1.LabelServiceName]}
			r.slices[k] = append(r.slices[k], sl)
		}
	}
	for _, rt := range s.HTTPRoutes {
		hosts := rt.Hostnames
		if len(hosts) == 0 {
			hosts = []string{""}
		}
		for _, h := range hosts {
			r.routes[h] = append(r.routes[h], rt)
		}
	}
	return r
}

// store is ingress-nginx's store as the parsers of an Ingress in ns see it.
func (r *Reviewer) store(ns string) nginxStore {
	return nginxStore{ns: ns, crossNS: r.crossNS, secret: func(ns, name string) *corev1.Secret { return r.secrets[objKey{ns, name}] }}
}

// Review is the verdict on one object.
type Review struct {
	// Claimed is false for an Ingress of another class: admitted
	// untouched, with nothing else set.
	Claimed bool
	// Refusal is why ingress-nginx's webhook refuses the object, "" when
	// it admits it.
	Refusal string
	// Warnings are the compile's warnings about the object, with the
	// snapshot it joins.
	Warnings []Warning
}

// Review judges ing, to be created or to replace the Ingress of its
// namespace and name.
func (r *Reviewer) Review(ing *networkingv1.Ingress) Review {
	if ok, _ := r.classes.Decide(ing); !ok {
		return Review{}
	}
	related := r.related(ing)
	rv := Review{Claimed: true, Refusal: r.refusal(ing, related)}
	res := Compile(r.subset(append(related, ing), nil), r.opts)
	rv.Warnings = warningsAbout(res.Warnings, ingressRef(ing.Namespace, ing.Name))
	return rv
}

// Refusal is Review's Refusal alone, without the compile Review runs for
// the warnings: reviewing every Ingress of a snapshot that way compiles
// all the Ingresses sharing a Service once per Ingress.
func (r *Reviewer) Refusal(ing *networkingv1.Ingress) string {
	if ok, _ := r.classes.Decide(ing); !ok {
		return ""
	}
	return r.refusal(ing, r.related(ing))
}

func (r *Reviewer) refusal(ing *networkingv1.Ingress, related []*networkingv1.Ingress) string {
	if ing.DeletionTimestamp != nil {
		return ""
	}
	if refusal := nginxRefusal(ing, r.opts, r.settings, r.store(ing.Namespace)); refusal != "" {
		return refusal
	}
	return r.overlap(ing, related)
}

// ReviewRoute returns the warnings about the route ref that compiling
// routes (the route source's whole translation, with the route under
// review in it) and warnings (the translation's) together with the
// Ingresses on the route's hosts gives.
func (r *Reviewer) ReviewRoute(ref Ref, routes []*HTTPRoute, warnings []Warning) []Warning {
	var related []*networkingv1.Ingress
	seen := map[objKey]bool{}
	for _, rt := range routes {
		if rt.Namespace != ref.Namespace || rt.Name != ref.Name {
			continue
		}
		hosts := rt.Hostnames
		if len(hosts) == 0 {
			hosts = []string{""}
		}
		for _, h := range hosts {
			for _, ing := range r.byHost[h] {
				if k := (objKey{ing.Namespace, ing.Name}); !seen[k] {
					seen[k] = true
					related = append(related, ing)
				}
			}
		}
	}
	s := r.subset(related, routes)
	s.Warnings = warnings
	return warningsAbout(Compile(s, r.opts).Warnings, ref)
}

// ReviewTLSRoute returns the warnings about the TLSRoute ref that
// compiling routes (the translation's TLSRoutes, with the route under
// review in it) on listeners (its passthrough listeners) and warnings
// (the translation's) gives, with the Ingresses that name the route's
// hostnames (an ssl-passthrough host shares the server names).
func (r *Reviewer) ReviewTLSRoute(ref Ref, routes []*TLSRoute, listeners []match.ListenerHost, warnings []Warning) []Warning {
	var related []*networkingv1.Ingress
	seen := map[objKey]bool{}
	for _, rt := range routes {
		if rt.Namespace != ref.Namespace || rt.Name != ref.Name {
			continue
		}
		for _, h := range rt.Hostnames {
			for _, ing := range r.byHost[h] {
				if k := (objKey{ing.Namespace, ing.Name}); !seen[k] {
					seen[k] = true
					related = append(related, ing)
				}
			}
		}
	}
	s := r.subset(related, []*HTTPRoute{})
	s.TLSRoutes, s.PassthroughListeners, s.Warnings = routes, listeners, warnings
	services := map[objKey]bool{}
	for _, svc := range s.Services {
		services[objKey{svc.Namespace, svc.Name}] = true
	}
	for _, rt := range routes {
		for _, b := range rt.Backends {
			if k := (objKey{b.Service.Namespace, b.Service.Name}); !services[k] && b.Service.Name != "" {
				services[k] = true
				if svc := r.services[k]; svc != nil {
					s.Services = append(s.Services, svc)
				}
				s.EndpointSlices = append(s.EndpointSlices, r.slices[k]...)
			}
		}
	}
	return warningsAbout(Compile(s, r.opts).Warnings, ref)
}

func warningsAbout(ws []Warning, ref Ref) []Warning {
	var out []Warning
	for _, w := range ws {
		if w.Object == ref {
			out = append(out, w)
		}
	}
	return out
}

// firstOfEachSignature keeps, of the Ingresses naming one Service, the
// first two in order of each backendSignature. An Ingress related to the
// one reviewed only through a Service changes its warnings and refusal
// only through the backends they share, where the oldest Ingress that
// asks for a setting decides (and, for the refusal, the oldest naming an
// upstream): of Ingresses alike there, the first decides for all, and the
// second stands in when the first is the one under review. A thousand
// tenants' Ingresses on one Service, alike but for their hosts, then cost
// the review two compiles' worth, not a thousand.
func (r *Reviewer) firstOfEachSignature(list []*networkingv1.Ingress) []*networkingv1.Ingress {
	slices.SortFunc(list, func(a, b *networkingv1.Ingress) int {
		return cmp.Compare(r.order[objKey{a.Namespace, a.Name}], r.order[objKey{b.Namespace, b.Name}])
	})
	seen := make(map[string]int, 1)
	out := list[:0:0]
	var buf []byte
	for _, ing := range list {
		buf = backendSignature(buf[:0], ing, r.stored[objKey{ing.Namespace, ing.Name}])
		if n := seen[string(buf)]; n < 2 {
			seen[string(buf)] = n + 1
			out = append(out, ing)
		}
	}
	return out
}

// backendSignature appends what of ing can decide a backend it shares
// with other Ingresses: its annotations, whether ingress-nginx stores it,
// and its backends with the paths and kinds of host that declare them
// (not the host names, which only relate Ingresses through byHost).
func backendSignature(buf []byte, ing *networkingv1.Ingress, stored bool) []byte {
	keys := make([]string, 0, len(ing.Annotations))
	for k := range ing.Annotations {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		buf = append(buf, k...)
		buf = append(buf, 0)
		buf = append(buf, ing.Annotations[k]...)
		buf = append(buf, 0)
	}
	buf = strconv.AppendBool(buf, stored)
	backend := func(b *networkingv1.IngressBackend) {
		buf = append(buf, 1)
		if b.Service != nil {
			buf = append(buf, b.Service.Name...)
			buf = append(buf, 0)
			buf = append(buf, b.Service.Port.Name...)
			buf = append(buf, 0)
			buf = strconv.AppendInt(buf, int64(b.Service.Port.Number), 10)
		}
		if b.Resource != nil {
			buf = append(buf, 2)
			buf = append(buf, b.Resource.Kind...)
			buf = append(buf, 0)
			buf = append(buf, b.Resource.Name...)
		}
	}
	if b := ing.Spec.DefaultBackend; b != nil {
		backend(b)
	}
	for _, rule := range ing.Spec.Rules {
		// The kind of host: hostless rules share the catch-all, a wildcard
		// matches otherwise, and a host compile refuses claims nothing.
		switch h := rule.Host; {
		case h == "":
			buf = append(buf, 3)
		case invalidHost(h) != "":
			buf = append(buf, 4)
		case strings.HasPrefix(h, "*."):
			buf = append(buf, 5)
		default:
			buf = append(buf, 6)
		}
		if rule.HTTP == nil {
			continue
		}
		for _, p := range rule.HTTP.Paths {
			buf = append(buf, p.Path...)
			buf = append(buf, 0)
			if p.PathType != nil {
				buf = append(buf, *p.PathType...)
			}
			backend(&p.Backend)
		}
	}
	return buf
}

// related are the claimed Ingresses other than ing (by namespace and
// name) that share a host or a Service with it, sorted by namespace and
// name.
func (r *Reviewer) related(ing *networkingv1.Ingress) []*networkingv1.Ingress {
	self := objKey{ing.Namespace, ing.Name}
	seen := map[objKey]bool{self: true}
	var out []*networkingv1.Ingress
	add := func(list []*networkingv1.Ingress) {
		for _, other := range list {
			if k := (objKey{other.Namespace, other.Name}); !seen[k] {
				seen[k] = true
				out = append(out, other)
			}
		}
	}
	for _, h := range relatedHosts(ing) {
		add(r.byHost[h])
	}
	for _, k := range ingressServices(ing) {
		add(r.byService[k])
	}
	slices.SortFunc(out, func(a, b *networkingv1.Ingress) int {
		return cmp.Or(strings.Compare(a.Namespace, b.Namespace), strings.Compare(a.Name, b.Name))
	})
	return out
}

// subset is the snapshot to compile ings with: the objects they (and
// routes) name, and every object a compile reads whatever it compiles.
func (r *Reviewer) subset(ings []*networkingv1.Ingress, routes []*HTTPRoute) Snapshot {
	s := Snapshot{
		Ingresses:            ings,
		IngressClasses:       r.snap.IngressClasses,
		ConfigMaps:           r.snap.ConfigMaps,
		ListenerCertificates: r.snap.ListenerCertificates,
		HTTPRoutes:           routes,
	}
	if routes == nil {
		hosts := map[string]bool{}
		for _, ing := range ings {
			for _, h := range ingressHosts(ing) {
				hosts[h] = true
			}
		}
		seen := map[*HTTPRoute]bool{}
		for h := range hosts {
			for _, rt := range r.routes[h] {
				if !seen[rt] {
					seen[rt] = true
					s.HTTPRoutes = append(s.HTTPRoutes, rt)
				}
			}
		}
		slices.SortFunc(s.HTTPRoutes, func(a, b *HTTPRoute) int {
			return cmp.Or(strings.Compare(a.Namespace, b.Namespace), strings.Compare(a.Name, b.Name))
		})
	}
	services := map[objKey]bool{}
	if db := r.opts.DefaultBackend; db != nil {
		services[objKey{db.Namespace, db.Name}] = true
	}
	secrets := map[objKey]bool{}
	for _, ing := range ings {
		for _, k := range ingressServices(ing) {
			services[k] = true
		}
		for _, tls := range ing.Spec.TLS {
			secrets[objKey{ing.Namespace, tls.SecretName}] = true
		}
		for k, v := range ing.Annotations {
			if strings.HasSuffix(k, "-secret") {
				// Trimmed as the compile reads it (auth.go, secretRef), or
				// the review would find no Secret the compile finds.
				v = strings.TrimSpace(v)
				ns, name, ok := strings.Cut(v, "/")
				if !ok {
					ns, name = ing.Namespace, v
				}
				secrets[objKey{ns, name}] = true
			}
		}
	}
	for _, rt := range s.HTTPRoutes {
		for _, rule := range rt.Rules {
			for _, b := range rule.Backends {
				services[objKey{b.Service.Namespace, b.Service.Name}] = true
			}
		}
	}
	for k := range services {
		if svc := r.services[k]; svc != nil {
			s.Services = append(s.Services, svc)
		}
		s.EndpointSlices = append(s.EndpointSlices, r.slices[k]...)
	}
	for k := range secrets {
		if sec := r.secrets[k]; sec != nil {
			s.Secrets = append(s.Secrets, sec)
		}
	}
	return s
}

// ingressHosts are the hosts an Ingress names: its rules' (the catch-all
// "" for a rule without one, or for spec.defaultBackend) and its TLS
// hosts.
func ingressHosts(ing *networkingv1.Ingress) []string {
	var hosts []string
	if ing.Spec.DefaultBackend != nil {
		hosts = append(hosts, "")
	}
	for _, rule := range ing.Spec.Rules {
		hosts = append(hosts, rule.Host)
	}
	for _, tls := range ing.Spec.TLS {
		hosts = append(hosts, tls.Hosts...)
	}
	slices.Sort(hosts)
	return slices.Compact(hosts)
}

// relatedHosts are the hosts whose Ingresses can change what ing compiles
// to: its own, their www twins (from-to-www-redirect), its server-alias
// names, and the wildcards that cover its names.
func relatedHosts(ing *networkingv1.Ingress) []string {
	hosts := ingressHosts(ing)
	for _, h := range slices.Clone(hosts) {
		if h == "" {
			continue
		}
		if bare, ok := strings.CutPrefix(h, "www."); ok {
			hosts = append(hosts, bare)
		} else {
			hosts = append(hosts, "www."+h)
		}
		if _, parent, ok := strings.Cut(h, "."); ok {
			hosts = append(hosts, "*."+parent)
		}
	}
	for _, prefix := range []string{NginxPrefix, NativePrefix} {
		for alias := range strings.SplitSeq(ing.Annotations[prefix+"server-alias"], ",") {
			if alias = strings.TrimSpace(alias); alias != "" {
				hosts = append(hosts, alias)
			}
		}
	}
	slices.Sort(hosts)
	return slices.Compact(hosts)
}

// ingressServices are the Services an Ingress names: its paths' and
// default backend's, and its default-backend annotation's.
func ingressServices(ing *networkingv1.Ingress) []objKey {
	var out []objKey
	add := func(b *networkingv1.IngressBackend) {
		if b != nil && b.Service != nil {
			out = append(out, objKey{ing.Namespace, b.Service.Name})
		}
	}
	add(ing.Spec.DefaultBackend)
	for _, rule := range ing.Spec.Rules {
		if rule.HTTP == nil {
			continue
		}
		for i := range rule.HTTP.Paths {
			add(&rule.HTTP.Paths[i].Backend)
		}
	}
	for _, prefix := range []string{NginxPrefix, NativePrefix} {
		if name := ing.Annotations[prefix+"default-backend"]; name != "" {
			out = append(out, objKey{ing.Namespace, name})
		}
	}
	slices.SortFunc(out, func(a, b objKey) int { return cmp.Or(strings.Compare(a.ns, b.ns), strings.Compare(a.name, b.name)) })
	return slices.Compact(out)
}

// The host/path check of ingress-nginx's webhook (checkOverlap): the
// reviewed Ingress joins the others last, ingress-nginx builds its
// servers' locations from them all, and a path of the reviewed Ingress
// whose host already has a location of that path string (whatever its
// type) from another Ingress is refused, unless exactly one of the two is
// a canary (or one says canary "false": ingress-nginx compares the
// annotations' presence).

// nginxLocation is one location of an ingress-nginx server.
type nginxLocation struct {
	path, pathType string
	owner          *networkingv1.Ingress // nil: the default backend's
}

// nginxOrder numbers the claimed Ingresses (stored's keys) in the order
// ingress-nginx builds its servers from them: oldest first, then by
// namespace/name descending. Once per Reviewer, so that each review sorts
// its related Ingresses by number rather than building keys to compare.
func nginxOrder(ingresses map[objKey]*networkingv1.Ingress, claimed map[objKey]bool) map[objKey]int {
	type keyed struct {
		ing *networkingv1.Ingress
		key string
	}
	all := make([]keyed, 0, len(claimed))
	for k := range claimed {
		ing := ingresses[k]
		all = append(all, keyed{ing, ing.Namespace + "/" + ing.Name})
	}
	slices.SortFunc(all, func(a, b keyed) int {
		if c := a.ing.CreationTimestamp.Time.Compare(b.ing.CreationTimestamp.Time); c != 0 {
			return c
		}
		return strings.Compare(b.key, a.key)
	})
	order := make(map[objKey]int, len(all))
	for i, k := range all {
		order[objKey{k.ing.Namespace, k.ing.Name}] = i
	}
	return order
}

// overlap is the refusal of ing's host/path check against related, "" for none.
func (r *Reviewer) overlap(ing *networkingv1.Ingress, related []*networkingv1.Ingress) string {
	var ings []*networkingv1.Ingress
	for _, other := range related {
		if r.stored[objKey{other.Namespace, other.Name}] {
			ings = append(ings, other)
		}
	}
	slices.SortFunc(ings, func(a, b *networkingv1.Ingress) int {
		return cmp.Compare(r.order[objKey{a.Namespace, a.Name}], r.order[objKey{b.Namespace, b.Name}])
	})
	ings = append(ings, ing)
	servers := nginxServers(ings)
	canary, canarySet := nginxCanary(ing)
	for _, rule := range ing.Spec.Rules {
		if rule.HTTP == nil {
			continue
		}
		host := cmp.Or(rule.Host, "_")
		for _, p := range rule.HTTP.Paths {
			if p.Backend.Service == nil {
				continue
			}
			path := cmp.Or(p.Path, "/")
			for _, loc := range servers[host] {
				o := loc.owner
				if loc.path != path || o == nil || o.Namespace == ing.Namespace && o.Name == ing.Name {
					continue
				}
				otherCanary, otherSet := nginxCanary(o)
				if canary && otherCanary || !canarySet && !otherSet {
					return fmt.Sprintf("host %q and path %q is already defined in ingress %s/%s", host, path, o.Namespace, o.Name)
				}
			}
		}
	}
	return ""
}

// nginxCanary reads the canary annotation as ingress-nginx does: whether
// it is on, and whether it is there at all.
func nginxCanary(ing *networkingv1.Ingress) (on, set bool) {
	v, set := ing.Annotations[NginxPrefix+"canary"]
	on, _ = strconv.ParseBool(v)
	return on, set
}

func nginxPathType(p networkingv1.HTTPIngressPath) string {
	if p.PathType == nil {
		return string(networkingv1.PathTypePrefix)
	}
	return string(*p.PathType)
}

func nginxUpstream(ns string, b *networkingv1.IngressServiceBackend) string {
	port := b.Port.Name
	if port == "" {
		port = strconv.Itoa(int(b.Port.Number))
	}
	return ns + "-" + b.Name + "-" + port
}

// nginxServers builds ingress-nginx's servers' locations from ings, in
// its order: each host gets a root location of the default backend, an
// Ingress with a default backend and no rules takes the catch-all's, and
// the first Ingress with a path string and type on a host owns its
// location. A canary's paths make no location.
func nginxServers(ings []*networkingv1.Ingress) map[string][]*nginxLocation {
	noServer := map[string]bool{}
	for _, ing := range ings {
		canary, _ := nginxCanary(ing)
		mark := func(b *networkingv1.IngressBackend) {
			if b == nil || b.Service == nil {
				return
			}
			if name := nginxUpstream(ing.Namespace, b.Service); !hasKey(noServer, name) {
				noServer[name] = canary
			}
		}
		mark(ing.Spec.DefaultBackend)
		for _, rule := range ing.Spec.Rules {
			if rule.HTTP != nil {
				for i := range rule.HTTP.Paths {
					mark(&rule.HTTP.Paths[i].Backend)
				}
			}
		}
	}
	root := func(owner *networkingv1.Ingress) *nginxLocation {
		return &nginxLocation{path: "/", pathType: string(networkingv1.PathTypePrefix), owner: owner}
	}
	catchAll := root(nil)
	servers := map[string][]*nginxLocation{"_": {catchAll}}
	defaults := map[*nginxLocation]bool{catchAll: true}
	for _, ing := range ings {
		if canary, _ := nginxCanary(ing); canary {
			continue
		}
		if b := ing.Spec.DefaultBackend; b != nil && b.Service != nil && defaults[catchAll] && len(ing.Spec.Rules) == 0 {
			catchAll.owner = ing
			delete(defaults, catchAll)
		}
		for _, rule := range ing.Spec.Rules {
			host := cmp.Or(rule.Host, "_")
			if _, ok := servers[host]; !ok {
				loc := root(ing)
				defaults[loc] = true
				servers[host] = []*nginxLocation{loc}
			}
		}
	}
	for _, ing := range ings {
		for _, rule := range ing.Spec.Rules {
			host := cmp.Or(rule.Host, "_")
			if _, ok := servers[host]; !ok {
				host = "_"
			}
			if rule.HTTP == nil {
				continue
			}
			for _, p := range rule.HTTP.Paths {
				if p.Backend.Service == nil || noServer[nginxUpstream(ing.Namespace, p.Backend.Service)] {
					continue
				}
				path, typ := cmp.Or(p.Path, "/"), nginxPathType(p)
				add := true
				for _, loc := range servers[host] {
					if loc.path != path {
						continue
					}
					if loc.pathType == typ {
						add = false
						if defaults[loc] {
							loc.owner = ing
							delete(defaults, loc)
						}
					}
					break
				}
				if add {
					servers[host] = append(servers[host], &nginxLocation{path: path, pathType: typ, owner: ing})
				}
			}
		}
	}
	// A root location still on the default backend serves no Ingress.
	for loc := range defaults {
		loc.owner = nil
	}
	return servers
}

func hasKey[K comparable, V any](m map[K]V, k K) bool { _, ok := m[k]; return ok }
