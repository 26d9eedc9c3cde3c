package compile

import (
	"cmp"
	"slices"
	"strings"

	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"

	"ramjet.dev/ramjet/match"
)

// A recompile (SPEC §17) compiles only the Ingresses a change can reach
// and splices their hosts into the previous table. What a change reaches
// is closed over the couplings between Ingresses: the hosts they name (one
// virtual host, its creator, conflicts, canaries) and the Services they
// name (one backend per Service port, whose protocol, balancing and
// affinity the oldest Ingress decides). An Ingress coupled in any other
// way (the catch-all, a default backend, TLS, aliases, Secrets and
// Services named by annotations) makes the recompile a full compile, and
// so does a change to anything but Ingresses, Services and EndpointSlices,
// or a snapshot with another route source. The splice is checked against
// what the small compile produced, and a surprise is a full compile too.

// ingressFacts are what couples an Ingress to others.
type ingressFacts struct {
	// hosts are its rule hosts.
	hosts []string
	// services are the Services its rules name, in its namespace.
	services []objKey
	// global is set when it couples in a way a recompile does not follow.
	global bool
}

// couplingAnnotations, by name without prefix, name objects or hosts
// beyond the Ingress's rules: an Ingress with one is compiled with all.
var couplingAnnotations = []string{
	"server-alias", "from-to-www-redirect", "default-backend", "custom-http-errors", "ssl-passthrough",
}

func factsOf(ing *networkingv1.Ingress) ingressFacts {
	var f ingressFacts
	spec := &ing.Spec
	addSvc := func(name string) {
		if k := (objKey{ing.Namespace, name}); !slices.Contains(f.services, k) {
			f.services = append(f.services, k)
		}
	}
	if spec.DefaultBackend != nil || len(spec.TLS) > 0 {
		f.global = true
	}
	if b := spec.DefaultBackend; b != nil && b.Service != nil {
		addSvc(b.Service.Name)
	}
	for k, v := range ing.Annotations {
		name := k[strings.LastIndexByte(k, '/')+1:]
		if slices.Contains(couplingAnnotations, name) || strings.Contains(name, "secret") {
			f.global = true
		}
		if name == "default-backend" {
			// The Service it names must reach this Ingress when it changes.
			addSvc(strings.TrimSpace(v))
		}
	}
	for _, r := range spec.Rules {
		if r.Host == "" || strings.HasPrefix(r.Host, "*") {
			f.global = true
		}
		if !slices.Contains(f.hosts, r.Host) {
			f.hosts = append(f.hosts, r.Host)
		}
		if r.HTTP == nil {
			continue
		}
		for _, p := range r.HTTP.Paths {
			if s := p.Backend.Service; s != nil {
				addSvc(s.Name)
			}
		}
	}
	return f
}

// couplings indexes the snapshot's Ingresses by the hosts and Services
// they name, kept up to date change by change.
type couplings struct {
	facts  map[objKey]*ingressFacts
	byHost map[string][]objKey
	bySvc  map[objKey][]objKey
}

func newCouplings() *couplings {
	return &couplings{facts: map[objKey]*ingressFacts{}, byHost: map[string][]objKey{}, bySvc: map[objKey][]objKey{}}
}

func (c *couplings) remove(k objKey) {
	f := c.facts[k]
	if f == nil {
		return
	}
	for _, h := range f.hosts {
		c.byHost[h] = deleteKey(c.byHost[h], k)
		if len(c.byHost[h]) == 0 {
			delete(c.byHost, h)
		}
	}
	for _, s := range f.services {
		c.bySvc[s] = deleteKey(c.bySvc[s], k)
		if len(c.bySvc[s]) == 0 {
			delete(c.bySvc, s)
		}
	}
	delete(c.facts, k)
}

func (c *couplings) add(k objKey, ing *networkingv1.Ingress) {
	f := factsOf(ing)
	c.facts[k] = &f
	for _, h := range f.hosts {
		c.byHost[h] = append(c.byHost[h], k)
	}
	for _, s := range f.services {
		c.bySvc[s] = append(c.bySvc[s], k)
	}
}

func deleteKey(keys []objKey, k objKey) []objKey {
	if i := slices.Index(keys, k); i >= 0 {
		keys[i] = keys[len(keys)-1]
		keys = keys[:len(keys)-1]
	}
	return keys
}

// claimOrder is a claimed Ingress with its place in Ingress order (SPEC §7).
type claimOrder struct {
	ref    Ref
	key    string // "namespace/name"
	sec    int64
	nsec   int
	objKey objKey
}

func compareClaims(x, y claimOrder) int {
	if c := cmp.Compare(x.sec, y.sec); c != 0 {
		return c
	}
	if c := cmp.Compare(x.nsec, y.nsec); c != 0 {
		return c
	}
	return strings.Compare(y.key, x.key) // descending, as claimIngresses
}

func orderOf(ing *networkingv1.Ingress) claimOrder {
	t := ing.CreationTimestamp.Time
	return claimOrder{
		ref: ingressRef(ing.Namespace, ing.Name), key: ing.Namespace + "/" + ing.Name,
		sec: t.Unix(), nsec: t.Nanosecond(), objKey: objKey{ing.Namespace, ing.Name},
	}
}

// splice is what a recompile needs of the previous result.
type splice struct {
	claims []claimOrder
}

// recompile compiles s by reaching from the changes since the previous
// snapshot; ok is false when it cannot, and the caller compiles in full.
func (c *Compiler) recompile(s *Snapshot, o Options) (Result, bool) {
	p := c.seen
	if p.classes.changed || p.secrets.changed || p.configMaps.changed || p.otherChanged ||
		len(s.HTTPRoutes) > 0 || len(s.ListenerCertificates) > 0 || len(s.Warnings) > 0 ||
		// Gateway listeners and TCP/UDP services are table-wide: their
		// Services' changes reach no host, so nothing here would follow them.
		len(s.Listeners) > 0 || len(s.TLSRoutes) > 0 || len(s.PassthroughListeners) > 0 || o.TCPServices != "" || o.UDPServices != "" ||
		p.ingresses.dup || p.ingresses.prevDup || p.services.dup || p.services.prevDup || p.slices.dup || p.slices.prevDup ||
		c.splice == nil || c.couplings == nil {
		return c.fullCompile("input")
	}
	o = o.WithConfigMap()
	var global *objKey
	if d := o.DefaultBackend; d != nil {
		global = &objKey{d.Namespace, d.Name}
	}
	cp := c.couplings

	// Close over hosts and Services from what changed.
	affected := map[objKey]bool{} // Ingresses
	services := map[objKey]bool{} // Services whose backends are recompiled
	hosts := map[string]bool{}    // hosts recompiled
	var queue []*ingressFacts     // facts to follow
	var svcQueue []objKey         // Services to follow
	var hostQueue []string        // hosts to follow
	addSvc := func(k objKey) {
		if !services[k] {
			services[k] = true
			svcQueue = append(svcQueue, k)
		}
	}
	addIngress := func(k objKey) {
		if !affected[k] {
			affected[k] = true
			if f := cp.facts[k]; f != nil {
				queue = append(queue, f)
			}
		}
	}
	for _, ch := range p.ingresses.changes {
		if ch.old != nil {
			f := factsOf(ch.old)
			queue = append(queue, &f)
		}
		addIngress(ch.key)
	}
	for _, ch := range p.services.changes {
		addSvc(ch.key)
	}
	for _, ch := range p.slices.changes {
		for _, sl := range []*discoveryv1.EndpointSlice{ch.old, ch.new} {
			if sl != nil {
				if name := sl.Labels[discoveryv1.LabelServiceName]; name != "" {
					addSvc(objKey{sl.Namespace, name})
				}
			}
		}
	}
	limit := len(cp.facts)/4 + 16
	for len(queue) > 0 || len(svcQueue) > 0 || len(hostQueue) > 0 {
		if len(affected) > limit {
			return c.fullCompile("too many") // too much to gain
		}
		switch {
		case len(queue) > 0:
			f := queue[0]
			queue = queue[1:]
			if f.global {
				return c.fullCompile("coupled Ingress")
			}
			for _, h := range f.hosts {
				if !hosts[h] {
					hosts[h] = true
					hostQueue = append(hostQueue, h)
				}
			}
			for _, k := range f.services {
				addSvc(k)
			}
		case len(svcQueue) > 0:
			k := svcQueue[0]
			svcQueue = svcQueue[1:]
			if global != nil && *global == k {
				return c.fullCompile("global default backend")
			}
			for _, ik := range cp.bySvc[k] {
				addIngress(ik)
			}
		default:
			h := hostQueue[0]
			hostQueue = hostQueue[1:]
			for _, ik := range cp.byHost[h] {
				addIngress(ik)
			}
		}
	}

	// The small compile: the affected Ingresses with their Services.
	sub := Snapshot{IngressClasses: s.IngressClasses, Secrets: s.Secrets, ConfigMaps: s.ConfigMaps}
	for k := range affected {
		if e := p.ingresses.m[k]; e != nil {
			sub.Ingresses = append(sub.Ingresses, e.obj)
		}
	}
	if global != nil {
		services[*global] = true
	}
	for k := range services {
		if e := p.services.m[k]; e != nil {
			sub.Services = append(sub.Services, e.obj)
		}
	}
	for _, sl := range s.EndpointSlices {
		if sl != nil && services[objKey{sl.Namespace, sl.Labels[discoveryv1.LabelServiceName]}] {
			sub.EndpointSlices = append(sub.EndpointSlices, sl)
		}
	}
	if global != nil && !affectedGlobalOK(c, *global) {
		return c.fullCompile("global default backend changed")
	}
	small := Compile(sub, c.Options)

	// Check that the small compile stayed within what it was given.
	sliceKeys := map[objKey]bool{}
	for _, sl := range sub.EndpointSlices {
		sliceKeys[objKey{sl.Namespace, sl.Name}] = true
	}
	var subHosts []*match.VirtualHost
	for vh := range small.Table.VirtualHosts() {
		if vh.Name == "" {
			continue
		}
		if !hosts[vh.Name] {
			return c.fullCompile("host outside")
		}
		subHosts = append(subHosts, vh)
	}
	if small.Table.Size().Certificates > 0 {
		return c.fullCompile("certificates")
	}
	for range small.Table.TLSHosts() {
		return c.fullCompile("TLS hosts")
	}
	var subBackends []*match.Backend
	for be := range small.Table.Backends() {
		k := objKey{be.Namespace, be.Name}
		if !services[k] || global != nil && k == *global {
			if global != nil && k == *global {
				continue
			}
			return c.fullCompile("backend outside")
		}
		subBackends = append(subBackends, be)
	}
	inSet := func(r Ref) bool {
		switch r.Kind {
		case "Ingress":
			return affected[objKey{r.Namespace, r.Name}]
		case "Service":
			return services[objKey{r.Namespace, r.Name}]
		case "EndpointSlice":
			return sliceKeys[objKey{r.Namespace, r.Name}]
		}
		return false
	}
	var others, subOthers []Warning
	for _, w := range small.Warnings {
		switch {
		case !inSet(w.Object) && w.Object.Kind != "Ingress" && w.Object.Kind != "Service" && w.Object.Kind != "EndpointSlice":
			subOthers = append(subOthers, w)
		case !inSet(w.Object) || w.Winner.Kind != "" && !inSet(w.Winner) && w.Winner.Kind == "Ingress":
			return c.fullCompile("warning outside")
		}
	}
	warnings := make([]Warning, 0, len(c.last.Warnings)+len(small.Warnings))
	for _, w := range c.last.Warnings {
		switch {
		case w.Object.Kind != "Ingress" && w.Object.Kind != "Service" && w.Object.Kind != "EndpointSlice":
			others = append(others, w)
		case inSet(w.Object) || w.Winner.Kind == "Ingress" && inSet(w.Winner):
		default:
			warnings = append(warnings, w)
		}
	}
	if !slices.Equal(others, subOthers) {
		return c.fullCompile("other warnings")
	}
	warnings = append(warnings, small.Warnings...)

	// The table: the previous hosts the change did not reach, copied so
	// that match.New owns them, and the small compile's.
	prev := c.last.Table
	vhosts := make([]*match.VirtualHost, 0, prev.Size().VirtualHosts+len(subHosts))
	var cl hostCloner
	for vh := range prev.VirtualHosts() {
		if !hosts[vh.Name] {
			cl.count(vh)
		}
	}
	for vh := range prev.VirtualHosts() {
		if !hosts[vh.Name] {
			vhosts = append(vhosts, cl.clone(vh))
		}
	}
	vhosts = append(vhosts, subHosts...)
	backends := make([]*match.Backend, 0, prev.Size().Backends+len(subBackends))
	for be := range prev.Backends() {
		if !services[objKey{be.Namespace, be.Name}] || global != nil && (objKey{be.Namespace, be.Name}) == *global {
			backends = append(backends, be)
		}
	}
	backends = append(backends, subBackends...)
	var certs []*match.Certificate
	for ct := range prev.Certificates() {
		certs = append(certs, ct)
	}
	var tlsHosts []string
	for h := range prev.TLSHosts() {
		tlsHosts = append(tlsHosts, h)
	}
	table, err := match.New(match.Spec{VirtualHosts: vhosts, Backends: backends, Certificates: certs, TLSHosts: tlsHosts, Inputs: o.digestInputs()})
	if err != nil {
		return c.fullCompile("match.New")
	}

	// Ingress order: the previous claims the change did not reach, merged
	// with the small compile's.
	claims := make([]claimOrder, 0, len(c.splice.claims)+len(small.Claimed))
	var subClaims []claimOrder
	for _, r := range small.Claimed {
		subClaims = append(subClaims, orderOf(p.ingresses.m[objKey{r.Namespace, r.Name}].obj))
	}
	slices.SortFunc(subClaims, compareClaims)
	i := 0
	for _, cl := range c.splice.claims {
		if affected[cl.objKey] {
			continue
		}
		for i < len(subClaims) && compareClaims(subClaims[i], cl) < 0 {
			claims = append(claims, subClaims[i])
			i++
		}
		claims = append(claims, cl)
	}
	claims = append(claims, subClaims[i:]...)
	refs := make([]Ref, len(claims))
	for i, cl := range claims {
		refs[i] = cl.ref
	}
	c.splice = &splice{claims: claims}
	return Result{Table: table, Warnings: sortWarnings(warnings), Claimed: refs,
		Unclaimed: SummarizeUnclaimed(s.Ingresses, s.IngressClasses, o)}, true
}

// fullCompile counts why a recompile was not possible, and says so.
func (c *Compiler) fullCompile(why string) (Result, bool) {
	if c.fullReasons == nil {
		c.fullReasons = map[string]int{}
	}
	c.fullReasons[why]++
	return Result{}, false
}

// affectedGlobalOK reports whether the global default backend's Service
// is as the previous compile saw it.
func affectedGlobalOK(c *Compiler, k objKey) bool {
	for _, ch := range c.seen.services.changes {
		if ch.key == k {
			return false
		}
	}
	for _, ch := range c.seen.slices.changes {
		for _, sl := range []*discoveryv1.EndpointSlice{ch.old, ch.new} {
			if sl != nil && sl.Namespace == k.ns && sl.Labels[discoveryv1.LabelServiceName] == k.name {
				return false
			}
		}
	}
	return true
}

// hostCloner copies hosts of a published table and their routes, for a
// new table to own: match.New sorts, prepares and indexes what it is
// given, and the feature values they point to, which New never writes,
// are shared. The copies are cut from one allocation each of hosts,
// routes and route pointers, counted first.
type hostCloner struct {
	nhosts, nroutes int
	hosts           []match.VirtualHost
	routes          []match.Route
	ptrs            []*match.Route
}

func (c *hostCloner) count(vh *match.VirtualHost) {
	c.nhosts++
	c.nroutes += len(vh.Routes)
}

func (c *hostCloner) clone(vh *match.VirtualHost) *match.VirtualHost {
	if c.hosts == nil {
		c.hosts = make([]match.VirtualHost, 0, c.nhosts)
		c.routes = make([]match.Route, 0, c.nroutes)
		c.ptrs = make([]*match.Route, 0, c.nroutes)
	}
	c.hosts = append(c.hosts, *vh)
	n := &c.hosts[len(c.hosts)-1]
	start := len(c.ptrs)
	for _, r := range vh.Routes {
		c.routes = append(c.routes, *r)
		c.ptrs = append(c.ptrs, &c.routes[len(c.routes)-1])
	}
	n.Routes = c.ptrs[start:len(c.ptrs):len(c.ptrs)]
	return n
}

// newSplice records the claims of a full compile's result for the next
// recompile.
func newSplice(res Result, ingresses *seenKind[networkingv1.Ingress]) *splice {
	claims := make([]claimOrder, 0, len(res.Claimed))
	for _, r := range res.Claimed {
		e := ingresses.m[objKey{r.Namespace, r.Name}]
		if e == nil {
			return nil
		}
		claims = append(claims, orderOf(e.obj))
	}
	return &splice{claims: claims}
}
