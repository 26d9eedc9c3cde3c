package match

import (
	"iter"
	"maps"
	"slices"
	"strings"
)

// Changes are what Update changes of a table: hosts and backends added,
// replaced or removed. Everything else (certificates, TLS hosts,
// listeners, inputs, TCP and UDP services) stays the table's.
type Changes struct {
	// VirtualHosts are added, each in place of the table's host of its
	// name (and Listener) if there is one. Update takes ownership of them
	// as New does.
	VirtualHosts []*VirtualHost
	// RemoveHosts are the names of hosts (without a Listener) to drop;
	// dropping the catch-all leaves the empty one New adds.
	RemoveHosts []string
	// Backends are added, each in place of the table's backends of its
	// ID; RemoveBackends are the IDs of backends to drop.
	Backends       []*Backend
	RemoveBackends []string
	// Endpoints give backends of the table new endpoints by ID, the rest
	// of each backend as it was (an endpoint-only change). EndpointHosts
	// must name every host whose routes or fallback refer to one of them:
	// Update copies those hosts to refer to the new backends. A changed
	// backend that something else refers to (a canary, an error backend,
	// a mirror) is an error.
	Endpoints     map[string][]string
	EndpointHosts []string
	// Gateway, when set, replaces the table's Gateway listener parts:
	// nil keeps them.
	Gateway *GatewayChanges
}

// GatewayChanges are what a table holds of Gateway listeners (SPEC §20),
// as New takes them from a Spec: the listeners' hostnames, every host
// with a Listener (Update takes ownership of them as New does), and TLS
// passthrough.
type GatewayChanges struct {
	Listeners            []ListenerHost
	ListenerHosts        []*VirtualHost
	PassthroughRoutes    []*PassthroughRoute
	PassthroughListeners []PassthroughListener
}

// Update returns the table New builds from t's spec with c applied: the
// hosts of c.VirtualHosts before t's hosts that c neither removes nor
// replaces, and the same for backends; t itself does not change. The
// result equals New's in every answer, its text and its digest, and its
// work is proportional to the change where it can be: the unchanged hosts
// and backends are shared with t, not copied, with their index entries
// and digest sums. Where it cannot (a table with Gateway listeners, Gateway
// TLS passthrough, host aliases or passthrough among the changes), it copies t's hosts and
// builds the table with New.
func (t *Table) Update(c Changes) (*Table, error) {
	if len(c.Endpoints) > 0 {
		var err error
		if c, err = t.withEndpoints(c); err != nil {
			return nil, err
		}
	}
	if !t.canUpdate(c) {
		return t.rebuild(c)
	}
	n := &Table{
		hostSet: hostSet{
			exactHosts:    maps.Clone(t.exactHosts),
			wildcardHosts: maps.Clone(t.wildcardHosts),
			deepWildcards: t.deepWildcards,
			catchAll:      t.catchAll,
		},
		certs: t.certs, tlsHosts: t.tlsHosts,
		exactCerts: t.exactCerts, wildcardCerts: t.wildcardCerts, anyCert: t.anyCert,
		tlsExact: t.tlsExact, tlsWildcard: t.tlsWildcard, passthrough: t.passthrough,
		l4: t.l4, stream: t.stream, nextID: t.nextID, spec: t.spec,
		paths: t.paths.clone(),
	}

	// The hosts that go: removed, or replaced by a host of c.
	gone := make(map[string]bool, len(c.RemoveHosts)+len(c.VirtualHosts))
	for _, name := range c.RemoveHosts {
		gone[name] = true
	}
	added := make([]*VirtualHost, 0, len(c.VirtualHosts)+1)
	routes := 0
	seen := make(map[string]bool, len(c.VirtualHosts))
	for _, vh := range c.VirtualHosts {
		if vh != nil && !seen[vh.Name] {
			seen[vh.Name], gone[vh.Name] = true, true
			added = append(added, vh) // of two of one name, the first
			routes += len(vh.Routes)
		}
	}
	if n.paths.full(routes) {
		// Past half full: New sizes the path table afresh.
		return t.rebuild(c)
	}
	regexGone := false
	goneNames := make([]string, 0, len(gone))
	for name := range gone {
		goneNames = append(goneNames, name)
		hi, ok := n.hostOf(name)
		if !ok {
			continue
		}
		regexGone = regexGone || len(hi.vh.regex) > 0
		n.paths.removeHost(hi.id, hi.vh)
		n.remove(name)
	}
	slices.Sort(goneNames)

	var p preparer
	slices.SortStableFunc(added, func(a, b *VirtualHost) int { return strings.Compare(a.Name, b.Name) })
	if gone[""] && (len(added) == 0 || added[0].Name != "") {
		// New adds an empty catch-all when none is given.
		added = slices.Insert(added, 0, &VirtualHost{})
	}
	var sm summer
	addedSums := make([]sum, len(added))
	for i, vh := range added {
		vh.sortRoutes()
		if err := p.host(vh); err != nil {
			return nil, err
		}
		hi := n.indexHost(n.nextID, vh)
		n.add(&hi)
		n.nextID++
		addedSums[i] = sm.host(vh)
	}
	n.hosts, n.hostSums = splice(t.hosts, t.hostSums, added, addedSums, goneNames, func(vh *VirtualHost) string { return vh.Name })

	if regexGone || slices.ContainsFunc(added, func(vh *VirtualHost) bool { return len(vh.regex) > 0 }) {
		seen := make(map[*Regexp]bool)
		for _, vh := range n.hosts {
			for _, r := range vh.regex {
				if !seen[r.Regexp] {
					seen[r.Regexp] = true
					n.regexps = append(n.regexps, r.Regexp)
				}
			}
		}
	} else {
		n.regexps = t.regexps
	}

	// Backends.
	goneIDs := make(map[string]bool, len(c.RemoveBackends)+len(c.Backends))
	for _, id := range c.RemoveBackends {
		goneIDs[id] = true
	}
	var newBackends []*Backend
	for _, be := range c.Backends {
		if be != nil {
			goneIDs[be.ID] = true
			newBackends = append(newBackends, be)
		}
	}
	slices.SortStableFunc(newBackends, func(a, b *Backend) int { return strings.Compare(a.ID, b.ID) })
	if err := p.backends(newBackends); err != nil {
		return nil, err
	}
	newSums := make([]sum, len(newBackends))
	for i, be := range newBackends {
		newSums[i] = sm.backend(be)
	}
	goneList := slices.Sorted(maps.Keys(goneIDs))
	n.backends, n.backendSums = splice(t.backends, t.backendSums, newBackends, newSums, goneList, func(be *Backend) string { return be.ID })

	n.paths.done()
	n.digest = digest(n, n.spec.Inputs)
	return n, nil
}

// canUpdate reports whether Update can apply c in place of New: without
// listeners, aliases or passthrough, which index hosts beyond their name,
// and without dropping a deep wildcard, which the host set remembers.
func (t *Table) canUpdate(c Changes) bool {
	// Gateway TLS passthrough is indexed by listener beside the hosts
	// (tlsroute.go): New indexes it again.
	if len(t.views) > 0 || len(t.tlsPorts) > 0 || len(t.passthroughRoutes) > 0 || t.aliases || t.nextID >= 1<<31 || c.Gateway != nil {
		return false
	}
	for _, vh := range c.VirtualHosts {
		if vh != nil && (vh.Listener != (Listener{}) || vh.Passthrough != nil || vh.Actions != nil && len(vh.Actions.Aliases) > 0) {
			return false
		}
	}
	old := func(name string) bool {
		hi, ok := t.hostOf(name)
		return ok && (hi.vh.Passthrough != nil || hi.vh.DeepWildcard)
	}
	for _, vh := range c.VirtualHosts {
		if vh != nil && old(vh.Name) {
			return false
		}
	}
	return !slices.ContainsFunc(c.RemoveHosts, old)
}

// hostOf returns the index entry of the host named name.
func (s *hostSet) hostOf(name string) (*hostIndex, bool) {
	switch suffix, wildcard := strings.CutPrefix(name, "*."); {
	case name == "":
		return &s.catchAll, s.catchAll.vh != nil
	case wildcard && suffix != "":
		hi, ok := s.wildcardHosts[suffix]
		return hi, ok
	default:
		hi, ok := s.exactHosts[name]
		return hi, ok
	}
}

// remove drops the host named name from the set.
func (s *hostSet) remove(name string) {
	switch suffix, wildcard := strings.CutPrefix(name, "*."); {
	case name == "":
		s.catchAll = hostIndex{}
	case wildcard && suffix != "":
		delete(s.wildcardHosts, suffix)
	default:
		delete(s.exactHosts, name)
	}
}

// rebuild is Update by New, on copies of t's hosts: t's own belong to t.
// The hosts with a Listener are kept unless c.Gateway replaces them.
func (t *Table) rebuild(c Changes) (*Table, error) {
	gone := make(map[string]bool)
	for _, name := range c.RemoveHosts {
		gone[name] = true
	}
	for _, vh := range c.VirtualHosts {
		if vh != nil {
			gone[vh.Name] = true
		}
	}
	kept := func(vh *VirtualHost) bool {
		if vh.Listener != (Listener{}) {
			return c.Gateway == nil
		}
		return !gone[vh.Name]
	}
	var cl hostCloner
	for _, vh := range t.hosts {
		if kept(vh) {
			cl.count(vh)
		}
	}
	hosts := slices.Clone(c.VirtualHosts)
	for _, vh := range t.hosts {
		if kept(vh) {
			hosts = append(hosts, cl.clone(vh))
		}
	}
	goneIDs := make(map[string]bool)
	for _, id := range c.RemoveBackends {
		goneIDs[id] = true
	}
	for _, be := range c.Backends {
		if be != nil {
			goneIDs[be.ID] = true
		}
	}
	backends := slices.Clone(c.Backends)
	for _, be := range t.backends {
		if !goneIDs[be.ID] {
			backends = append(backends, be)
		}
	}
	s := t.spec
	if g := c.Gateway; g != nil {
		hosts = append(hosts, g.ListenerHosts...)
		s.Listeners, s.PassthroughRoutes, s.PassthroughListeners = g.Listeners, g.PassthroughRoutes, g.PassthroughListeners
	}
	s.VirtualHosts, s.Backends = hosts, backends
	return New(s)
}

// hostCloner copies hosts of a table and their routes, for a new table to
// own: New sorts, prepares and indexes what it is given, and the feature
// values they point to, which New never writes, are shared. The copies are
// cut from one allocation each of hosts, routes and route pointers,
// counted first.
type hostCloner struct {
	nhosts, nroutes int
	hosts           []VirtualHost
	routes          []Route
	ptrs            []*Route
}

func (c *hostCloner) count(vh *VirtualHost) {
	c.nhosts++
	c.nroutes += len(vh.Routes)
}

func (c *hostCloner) clone(vh *VirtualHost) *VirtualHost {
	if c.hosts == nil {
		c.hosts = make([]VirtualHost, 0, c.nhosts)
		c.routes = make([]Route, 0, c.nroutes)
		c.ptrs = make([]*Route, 0, c.nroutes)
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

// splice returns old, sorted by key, without the items whose key is in
// gone (sorted), with added (sorted by key) merged in stably: old's before
// added's of one key. The sums go along. Beyond copying the slices, the
// work is binary searches for what goes and what comes.
func splice[T any](old []T, oldSums []sum, added []T, addedSums []sum, gone []string, key func(T) string) ([]T, []sum) {
	out := make([]T, 0, len(old)+len(added))
	outSums := make([]sum, 0, len(old)+len(added))
	lower := func(k string) int {
		i, _ := slices.BinarySearchFunc(old, k, func(x T, k string) int { return strings.Compare(key(x), k) })
		return i
	}
	upper := func(k string) int {
		i, _ := slices.BinarySearchFunc(old, k, func(x T, k string) int {
			if key(x) <= k {
				return -1
			}
			return 1
		})
		return i
	}
	i, g := 0, 0
	// copyTo copies old[i:end] without the ranges of gone keys in it: an
	// insertion point never falls inside such a range.
	copyTo := func(end int) {
		for ; g < len(gone); g++ {
			lo := lower(gone[g])
			if lo >= end {
				break
			}
			if lo > i {
				out, outSums = append(out, old[i:lo]...), append(outSums, oldSums[i:lo]...)
			}
			i = max(i, upper(gone[g]))
		}
		if i < end {
			out, outSums = append(out, old[i:end]...), append(outSums, oldSums[i:end]...)
			i = end
		}
	}
	for j, a := range added {
		copyTo(upper(key(a)))
		out, outSums = append(out, a), append(outSums, addedSums[j])
	}
	copyTo(len(old))
	return out, outSums
}

// BackendsWithIDPrefix yields, sorted, the backends whose ID begins with
// prefix, found by binary search.
func (t *Table) BackendsWithIDPrefix(prefix string) iter.Seq[*Backend] {
	i, _ := slices.BinarySearchFunc(t.backends, prefix, func(be *Backend, p string) int { return strings.Compare(be.ID, p) })
	j := i
	for j < len(t.backends) && strings.HasPrefix(t.backends[j].ID, prefix) {
		j++
	}
	return seq(t.backends[i:j])
}
