package compile

import (
	"cmp"
	"slices"
	"strings"

	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"

	"ramjet.dev/ramjet/classify"
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
// so does a change to anything but Ingresses, Services, EndpointSlices and
// Gateway listeners and TLS passthrough, or a snapshot with HTTPRoutes.
// The splice is checked against what the small compile produced, and a
// surprise is a full compile too.
//
// Gateway listeners and TLS passthrough are table-wide, and few: every
// recompile reaches the Services of every TLSRoute, before the change and
// after, so that the small compile has all of them; its passthrough routes
// and TLSRoute warnings replace the previous ones whole, and the
// listeners' hosts (each listener's catch-all and its hostnames no host
// serves) are made again from the new table's hosts.

// ingressFacts are what couples an Ingress to others.
type ingressFacts struct {
	// hosts are its rule hosts and the names it acts on without a rule:
	// its server-alias names, the www twins of from-to-www-redirect and
	// its spec.tls hosts. A change on any of them must reach it; such an
	// Ingress is global, so reaching it compiles everything.
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
	addHost := func(h string) {
		if !slices.Contains(f.hosts, h) {
			f.hosts = append(f.hosts, h)
		}
	}
	touch := func(h string) {
		if h = strings.ToLower(strings.TrimSuffix(strings.TrimSpace(h), ".")); h != "" {
			addHost(h)
		}
	}
	for _, t := range spec.TLS {
		for _, h := range t.Hosts {
			touch(h)
		}
	}
	www := false
	for k, v := range ing.Annotations {
		name := k[strings.LastIndexByte(k, '/')+1:]
		if slices.Contains(couplingAnnotations, name) || strings.Contains(name, "secret") {
			f.global = true
		}
		switch name {
		case "default-backend":
			// The Service it names must reach this Ingress when it changes.
			addSvc(strings.TrimSpace(v))
		case "server-alias":
			for item := range strings.SplitSeq(v, ",") {
				touch(item)
			}
		case "from-to-www-redirect":
			www = true
		}
	}
	for _, r := range spec.Rules {
		if r.Host == "" || strings.HasPrefix(r.Host, "*") {
			f.global = true
		}
		addHost(r.Host)
		if www && r.Host != "" {
			if bare, ok := strings.CutPrefix(r.Host, "www."); ok {
				touch(bare)
			} else {
				touch("www." + r.Host)
			}
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
	if c.slicesBySvc == nil || p.classes.changed || p.secrets.changed || p.configMaps.changed || p.otherChanged ||
		len(s.HTTPRoutes) > 0 || len(s.ListenerCertificates) > 0 || len(s.Warnings) > 0 ||
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
	gateway := p.gatewayChanged || len(s.Listeners) > 0 || len(s.TLSRoutes) > 0 || len(s.PassthroughListeners) > 0
	tlsServices := routeServices(p.oldTLSRoutes, s.TLSRoutes)
	if len(p.ingresses.changes) == 0 && len(p.services.changes) == 0 && !p.gatewayChanged {
		if r, ok := c.endpointsOnly(o, global, tlsServices, len(s.Listeners) > 0); ok {
			c.endpointOnly++
			if r.Table.VirtualHostByName("") == c.last.Table.VirtualHostByName("") {
				c.shared++
			}
			return r, true
		}
	}
	for k := range tlsServices {
		addSvc(k)
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
	sub := Snapshot{IngressClasses: s.IngressClasses, Secrets: s.Secrets, ConfigMaps: s.ConfigMaps,
		Listeners: s.Listeners, TLSRoutes: s.TLSRoutes, PassthroughListeners: s.PassthroughListeners}
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
	for k := range services {
		for _, sk := range c.slicesBySvc[k] {
			if e := p.slices.m[sk]; e != nil {
				sub.EndpointSlices = append(sub.EndpointSlices, e.obj)
			}
		}
	}
	if global != nil && !affectedGlobalOK(c, *global) {
		return c.fullCompile("global default backend changed")
	}
	// TCP and UDP services are kept from the previous table, with their
	// warnings, unless the change reached one's Service.
	streams := streamServices(c.last.Table)
	for k := range services {
		if streams[k] {
			return c.fullCompile("TCP/UDP service")
		}
	}
	streamRefs := streamConfigMaps(o)
	subOpts := c.Options
	subOpts.TCPServices, subOpts.UDPServices = "", ""
	small := Compile(sub, subOpts)

	// Check that the small compile stayed within what it was given.
	sliceKeys := map[objKey]bool{}
	for _, sl := range sub.EndpointSlices {
		sliceKeys[objKey{sl.Namespace, sl.Name}] = true
	}
	// A removed slice, or one now of another Service, takes its
	// warnings along.
	for _, ch := range p.slices.changes {
		if ch.old != nil {
			sliceKeys[ch.key] = true
		}
	}
	var subHosts []*match.VirtualHost
	subNames := map[string]bool{}
	for vh := range small.Table.VirtualHosts() {
		if vh.Name == "" || vh.Listener != (match.Listener{}) {
			continue // the catch-all and the listeners' hosts are the previous table's, or made below
		}
		subNames[vh.Name] = true
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
	var subBackends, globalBackends []*match.Backend
	for be := range small.Table.Backends() {
		k := objKey{be.Namespace, be.Name}
		if global != nil && k == *global {
			globalBackends = append(globalBackends, be)
			continue
		}
		if !services[k] {
			return c.fullCompile("backend outside")
		}
		subBackends = append(subBackends, be)
	}
	// The small compile's catch-all never has the rules-less Ingress whose
	// spec.defaultBackend the table's catch-all may serve, so it falls
	// back to the global default backend (using it, or warning that it
	// cannot) where the table's does not. That says nothing unless a host
	// the change reached falls back to it as well; with no host reached,
	// nothing that uses it changed.
	keepGlobal := false
	if global != nil && c.last.Table.VirtualHostByName("").FallbackSource.Field == defaultBackendField &&
		!slices.ContainsFunc(subHosts, func(vh *match.VirtualHost) bool { return vh.FallbackSource.Field != defaultBackendField }) {
		if len(hosts) > 0 {
			return c.fullCompile("global default backend use")
		}
		keepGlobal, globalBackends = true, nil
	}
	if global != nil && !keepGlobal {
		// The table lists the global default backend while something
		// uses it (response.go). The previous table's entry stays when
		// the small compile uses it too, and the small compile's goes in
		// when it is the first user; whether a host the change did not
		// reach still uses it the previous table does not say.
		prevListed := false
		for be := range c.last.Table.BackendsWithIDPrefix(global.ns + "/" + global.name + ":") {
			prevListed = prevListed || be.Namespace == global.ns && be.Name == global.name
		}
		switch {
		case len(globalBackends) > 0 && !prevListed:
			subBackends = append(subBackends, globalBackends...)
		case len(globalBackends) == 0 && prevListed:
			return c.fullCompile("global default backend use")
		}
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
	// With keepGlobal the warnings about the global default backend are
	// the previous ones.
	aboutGlobal := func(w Warning) bool {
		return keepGlobal && w.Field == GlobalDefaultBackendField && w.Object == Ref{Kind: "Service", Namespace: global.ns, Name: global.name}
	}
	small.Warnings = slices.DeleteFunc(small.Warnings, aboutGlobal)
	var others, subOthers []Warning
	for _, w := range small.Warnings {
		switch {
		case streamRefs[w.Object]:
			// The ConfigMap's own warnings, which the previous result has.
		case w.Object.Kind == TLSRouteKind:
			// Every TLSRoute was compiled: their warnings replace the previous ones.
		case !inSet(w.Object) && w.Object.Kind != "Ingress" && w.Object.Kind != "Service" && w.Object.Kind != "EndpointSlice":
			subOthers = append(subOthers, w)
		case !inSet(w.Object) || w.Winner.Kind != "" && !inSet(w.Winner) && w.Winner.Kind == "Ingress":
			return c.fullCompile("warning outside")
		}
	}
	warnings := make([]Warning, 0, len(c.last.Warnings)+len(small.Warnings))
	for _, w := range c.last.Warnings {
		switch {
		case streamRefs[w.Object], aboutGlobal(w):
			warnings = append(warnings, w)
		case w.Object.Kind == TLSRouteKind:
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
	warnings = mergeWarnings(warnings, small.Warnings)

	// The table: the previous one with the hosts the change reached
	// replaced by the small compile's, and the backends of the Services
	// it reached.
	prev := c.last.Table
	ch := match.Changes{VirtualHosts: subHosts, Backends: subBackends}
	for h := range hosts {
		ch.RemoveHosts = append(ch.RemoveHosts, h)
	}
	for k := range services {
		if global != nil && k == *global {
			continue
		}
		for be := range prev.BackendsWithIDPrefix(k.ns + "/" + k.name + ":") {
			if be.Namespace == k.ns && be.Name == k.name {
				ch.RemoveBackends = append(ch.RemoveBackends, be.ID)
			}
		}
	}
	if gateway {
		// The listeners' hosts of the new table's hosts: the previous
		// ones but those recompiled, and the small compile's.
		served := func(h string) bool {
			return subNames[h] || !hosts[h] && prev.VirtualHostByName(h) != nil
		}
		ch.Gateway = &match.GatewayChanges{
			Listeners:            s.Listeners,
			ListenerHosts:        gatewayViews(s.Listeners, prev.VirtualHostByName(""), served),
			PassthroughRoutes:    small.Table.PassthroughRoutes(),
			PassthroughListeners: s.PassthroughListeners,
		}
	}
	table, err := prev.Update(ch)
	if err != nil {
		return c.fullCompile("match.Update")
	}
	if table.VirtualHostByName("") == prev.VirtualHostByName("") {
		c.shared++ // Update shared the hosts it did not change
	}

	// Ingress order: the previous claims the change did not reach, merged
	// with the small compile's.
	subClaims := make([]claimOrder, 0, len(small.Claimed))
	for _, r := range small.Claimed {
		subClaims = append(subClaims, orderOf(p.ingresses.m[objKey{r.Namespace, r.Name}].obj))
	}
	slices.SortFunc(subClaims, compareClaims)
	claimed, refs := c.mergeClaims(affected, subClaims)
	c.splice = &splice{claims: claimed}
	return Result{Table: table, Warnings: warnings, Claimed: refs, Unclaimed: c.unclaimed(s, o)}, true
}

// mergeClaims returns the previous claims without those of the affected
// Ingresses, with sub (sorted) merged in, and their Refs. The previous
// ones are found by binary search, from the objects the previous compile
// saw; when they are sub, the previous claims are the answer.
func (c *Compiler) mergeClaims(affected map[objKey]bool, sub []claimOrder) ([]claimOrder, []Ref) {
	prev := c.splice.claims
	oldObj := map[objKey]*networkingv1.Ingress{}
	for _, ch := range c.seen.ingresses.changes {
		oldObj[ch.key] = ch.old
	}
	var gone []int // positions in prev, sorted
	for k := range affected {
		ing, changed := oldObj[k]
		if !changed {
			ing = c.seen.ingresses.m[k].obj
		}
		if ing == nil {
			continue
		}
		o := orderOf(ing)
		if i, ok := slices.BinarySearchFunc(prev, o, compareClaims); ok && prev[i] == o {
			gone = append(gone, i)
		}
	}
	slices.Sort(gone)
	if len(gone) == len(sub) {
		same := true
		for i, g := range gone {
			same = same && prev[g] == sub[i]
		}
		if same {
			return prev, c.last.Claimed
		}
	}
	claims := make([]claimOrder, 0, len(prev)-len(gone)+len(sub))
	at := 0 // next in prev
	// copyTo copies prev[at:end] but the positions in gone.
	copyTo := func(end int) {
		for len(gone) > 0 && gone[0] < end {
			claims = append(claims, prev[at:gone[0]]...)
			at = gone[0] + 1
			gone = gone[1:]
		}
		claims = append(claims, prev[at:end]...)
		at = end
	}
	for _, cl := range sub {
		end, _ := slices.BinarySearchFunc(prev, cl, compareClaims)
		copyTo(max(end, at))
		claims = append(claims, cl)
	}
	copyTo(len(prev))
	refs := make([]Ref, len(claims))
	for i, cl := range claims {
		refs[i] = cl.ref
	}
	return claims, refs
}

// unclaimed is SummarizeUnclaimed of s: the previous summary with the
// count of Ingresses moved, when every changed Ingress is claimed before
// and after (the classes did not change, or the compile is full).
func (c *Compiler) unclaimed(s *Snapshot, o Options) Unclaimed {
	cl := classify.New(s.IngressClasses, o.claimOptions())
	u := c.last.Unclaimed
	for _, ch := range c.seen.ingresses.changes {
		for _, ing := range []*networkingv1.Ingress{ch.old, ch.new} {
			if ing == nil {
				continue
			}
			if claimed, _ := cl.Decide(ing); !claimed {
				return SummarizeUnclaimed(s.Ingresses, s.IngressClasses, o)
			}
		}
		switch {
		case ch.old == nil:
			u.Read++
			u.Claimed++
		case ch.new == nil:
			u.Read--
			u.Claimed--
		}
	}
	u.Groups = slices.Clone(u.Groups)
	return u
}

// fullCompile counts why a recompile was not possible, and says so.
func (c *Compiler) fullCompile(why string) (Result, bool) {
	if c.fullReasons == nil {
		c.fullReasons = map[string]int{}
	}
	c.fullReasons[why]++
	return Result{}, false
}

// routeServices are the Services the TLSRoutes of a and b send to.
func routeServices(a, b []*TLSRoute) map[objKey]bool {
	var m map[objKey]bool
	for _, routes := range [][]*TLSRoute{a, b} {
		for _, tr := range routes {
			if tr == nil {
				continue
			}
			for _, wb := range tr.Backends {
				if m == nil {
					m = map[objKey]bool{}
				}
				m[objKey{wb.Service.Namespace, wb.Service.Name}] = true
			}
		}
	}
	return m
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

// mergeWarnings merges two sorted lists of warnings as sortWarnings sorts
// their concatenation: in order, duplicates once.
func mergeWarnings(a, b []Warning) []Warning {
	out := make([]Warning, 0, len(a)+len(b))
	for len(a) > 0 && len(b) > 0 {
		if compareWarnings(b[0], a[0]) < 0 {
			out, b = append(out, b[0]), b[1:]
		} else {
			out, a = append(out, a[0]), a[1:]
		}
	}
	out = append(append(out, a...), b...)
	return slices.Compact(out)
}

// streamServices are the Services the table's TCP and UDP services name,
// found or not.
func streamServices(t *match.Table) map[objKey]bool {
	var m map[objKey]bool
	for l4 := range t.L4Services() {
		if m == nil {
			m = map[objKey]bool{}
		}
		m[objKey{l4.Backend.Namespace, l4.Backend.Name}] = true
	}
	return m
}

// streamConfigMaps are the TCP and UDP services ConfigMaps of o, whose
// warnings a recompile keeps.
func streamConfigMaps(o Options) map[Ref]bool {
	m := map[Ref]bool{}
	for _, ref := range []string{o.TCPServices, o.UDPServices} {
		if ref != "" {
			ns, name, _ := strings.Cut(ref, "/")
			m[Ref{Kind: "ConfigMap", Namespace: ns, Name: name}] = true
		}
	}
	return m
}
