package match

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// updateModel describes hosts and backends, built afresh for each table:
// New and Update own what they are given.
type updateModel struct {
	hosts    map[string]hostModel
	backends map[string]int // ID → endpoint count; b0..b4 absent: not found
	spare    bool           // b9, named by no host, is in the table
}

type hostModel struct {
	routes   []routeModel
	fallback string // backend ID, "" for none
	tls      bool
	deep     bool
	pass     string // passthrough backend ID
	alias    string
}

type routeModel struct {
	typ     PathType
	path    string
	backend string
}

var updatePaths = []string{"", "a", "a/b", "/a", "/a/b", "/b", "/c/d", "/a/"}

func (m *updateModel) backend(id string) *Backend {
	if id == "" {
		return nil
	}
	n, ok := m.backends[id]
	if !ok {
		return &Backend{ID: id, Namespace: "ns", Name: id, State: ServiceNotFound}
	}
	be := &Backend{ID: id, Namespace: "ns", Name: id, Port: 80}
	for i := range n {
		be.Endpoints = append(be.Endpoints, "10.0.0."+strconv.Itoa(i+1)+":80")
	}
	return be
}

// build returns the named hosts and backends as new values, the routes
// pointing at the returned backends.
func (m *updateModel) build(t testing.TB, hostNames, backendIDs []string, all map[string]*Backend) ([]*VirtualHost, []*Backend) {
	var bes []*Backend
	for _, id := range backendIDs {
		be := m.backend(id)
		all[id] = be
		bes = append(bes, be)
	}
	ref := func(id string) *Backend {
		if id == "" {
			return nil
		}
		be := all[id]
		require.NotNil(t, be, "backend %s", id)
		return be
	}
	var hosts []*VirtualHost
	for _, name := range hostNames {
		hm := m.hosts[name]
		vh := &VirtualHost{Name: name, Fallback: ref(hm.fallback), TLS: hm.tls, DeepWildcard: hm.deep && len(name) > 2 && name[0] == '*', Passthrough: ref(hm.pass)}
		if hm.alias != "" {
			vh.Actions = &HostActions{Aliases: []string{hm.alias}}
		}
		for i, rm := range hm.routes {
			r := &Route{Type: rm.typ, Path: rm.path, Backend: ref(rm.backend), Order: int32(i)}
			if rm.typ == Regex {
				re, err := CompileRegex(rm.path, 0)
				require.NoError(t, err)
				r.Regexp = re
			}
			hosts = append(hosts, vh)
			vh.Routes = append(vh.Routes, r)
		}
		if len(hm.routes) == 0 {
			hosts = append(hosts, vh)
		}
	}
	return dedupHosts(hosts), bes
}

func dedupHosts(hosts []*VirtualHost) []*VirtualHost {
	var out []*VirtualHost
	for _, vh := range hosts {
		if len(out) == 0 || out[len(out)-1] != vh {
			out = append(out, vh)
		}
	}
	return out
}

func (m *updateModel) names() (hosts, backends []string) {
	for h := range m.hosts {
		hosts = append(hosts, h)
	}
	backends = []string{"b0", "b1", "b2", "b3", "b4"}
	if m.spare {
		backends = append(backends, "b9")
	}
	return hosts, backends
}

var updateHostNames = []string{"", "a.test", "b.test", "c.test", "*.test", "*.b.test", "d.test", "e.test"}

// randomHost is a host of random routes over backends b0..b4.
func randomHost(r *rand.Rand, name string, features bool) hostModel {
	var hm hostModel
	for range r.IntN(5) {
		rm := routeModel{typ: PathType(r.IntN(3)), path: updatePaths[r.IntN(len(updatePaths))], backend: "b" + strconv.Itoa(r.IntN(5))}
		if rm.typ != Regex && rm.path != "" && rm.path[0] != '/' {
			rm.path = "/" + rm.path
		}
		if rm.typ == Prefix && rm.path == "/" {
			rm.path = ""
		}
		hm.routes = append(hm.routes, rm)
	}
	if r.IntN(3) == 0 {
		hm.fallback = "b" + strconv.Itoa(r.IntN(5))
	}
	hm.tls = r.IntN(4) == 0
	if features && r.IntN(6) == 0 {
		switch r.IntN(3) {
		case 0:
			hm.deep = true
		case 1:
			if name != "" && name[0] != '*' {
				hm.pass = "b" + strconv.Itoa(r.IntN(5))
			}
		case 2:
			if name != "" {
				hm.alias = "alias-" + name
			}
		}
	}
	return hm
}

// TestUpdateEqualsNew applies random changes to random tables with Update
// and checks each result against New of the whole spec: the same text,
// digest and answers.
func TestUpdateEqualsNew(t *testing.T) {
	for seed := range uint64(200) {
		checkUpdates(t, seed)
	}
	require.Greater(t, fastUpdates, 300, "Update took its own path")
	require.Greater(t, endpointUpdates, 200, "endpoint-only changes")
}

var fastUpdates, endpointUpdates int

func FuzzUpdate(f *testing.F) {
	for seed := range uint64(8) {
		f.Add(seed)
	}
	f.Fuzz(checkUpdates)
}

func checkUpdates(t *testing.T, seed uint64) {
	r := rand.New(rand.NewPCG(seed, seed^0x5eed))
	features := seed%2 == 1
	m := &updateModel{hosts: map[string]hostModel{}, backends: map[string]int{}}
	for i := range 5 {
		if r.IntN(4) > 0 {
			m.backends["b"+strconv.Itoa(i)] = r.IntN(3)
		}
	}
	names := updateHostNames
	if seed%40 == 0 {
		// Enough hosts for a path table of several pages.
		names = slices.Clone(names)
		for i := range 1200 {
			names = append(names, "h"+strconv.Itoa(i)+".test")
		}
	}
	for _, name := range names {
		if r.IntN(2) == 0 {
			m.hosts[name] = randomHost(r, name, features)
		}
	}
	full := func() *Table {
		hn, bn := m.names()
		hosts, bes := m.build(t, hn, bn, map[string]*Backend{})
		tab, err := New(Spec{VirtualHosts: hosts, Backends: bes, TLSHosts: []string{"a.test"}, Inputs: []byte("in")})
		require.NoError(t, err)
		return tab
	}
	tab := full()
	// The backends the current table's routes point at, by ID.
	current := map[string]*Backend{}
	for be := range tab.Backends() {
		current[be.ID] = be
	}
	for step := range 12 {
		var c Changes
		changedHosts := map[string]bool{}
		changedBackends := map[string]bool{}
		endpointsOnly := r.IntN(4) == 0
		copied := map[string]bool{} // hosts Update copies for Endpoints
		if endpointsOnly {
			// Backends' endpoints alone change: Update copies the hosts
			// naming them, as Changes.EndpointHosts says.
			c.Endpoints = map[string][]string{}
			for range 1 + r.IntN(2) {
				id := "b" + strconv.Itoa(r.IntN(5))
				n, ok := m.backends[id]
				if !ok {
					continue
				}
				m.backends[id] = (n + 1 + r.IntN(2)) % 3
				c.Endpoints[id] = m.backend(id).Endpoints
			}
			for name, hm := range m.hosts {
				if slices.ContainsFunc(hostBackends(hm), func(id string) bool { _, ok := c.Endpoints[id]; return ok }) {
					c.EndpointHosts = append(c.EndpointHosts, name)
					copied[name] = true
				}
			}
			endpointUpdates++
		}
		for range 1 + r.IntN(3) {
			if endpointsOnly {
				break
			}
			switch r.IntN(4) {
			case 0, 1: // a host replaced or added
				name := names[r.IntN(len(names))]
				m.hosts[name] = randomHost(r, name, features)
				changedHosts[name] = true
			case 2: // a host removed
				name := names[r.IntN(len(names))]
				if _, ok := m.hosts[name]; ok {
					delete(m.hosts, name)
					c.RemoveHosts = append(c.RemoveHosts, name)
					delete(changedHosts, name)
				}
			case 3: // a backend's endpoints or state changed
				id := "b" + strconv.Itoa(r.IntN(5))
				if r.IntN(3) == 0 {
					delete(m.backends, id)
				} else {
					m.backends[id] = r.IntN(3)
				}
				changedBackends[id] = true
			}
		}
		// A changed backend is a new value: every host naming it is
		// replaced, as a caller must (the table's hosts are shared).
		for name, hm := range m.hosts {
			for _, id := range hostBackends(hm) {
				if changedBackends[id] {
					changedHosts[name] = true
				}
			}
		}
		var hn []string
		for name := range changedHosts {
			hn = append(hn, name)
		}
		var bn []string
		for id := range changedBackends {
			bn = append(bn, id)
		}
		if r.IntN(4) == 0 {
			if m.spare {
				c.RemoveBackends = append(c.RemoveBackends, "b9")
			} else {
				bn = append(bn, "b9")
			}
			m.spare = !m.spare
		}
		refs := map[string]*Backend{}
		for id, be := range current {
			if !changedBackends[id] {
				refs[id] = be
			}
		}
		c.VirtualHosts, c.Backends = m.build(t, hn, bn, refs)
		routes := 0
		for _, vh := range c.VirtualHosts {
			routes += len(vh.Routes)
		}
		fast := tab.canUpdate(c) && !tab.paths.full(routes)
		if endpointsOnly {
			ec, err := tab.withEndpoints(c)
			require.NoError(t, err)
			routes = 0
			for _, vh := range ec.VirtualHosts {
				routes += len(vh.Routes)
			}
			fast = tab.canUpdate(ec) && !tab.paths.full(routes)
		}
		next, err := tab.Update(c)
		require.NoError(t, err)
		want := full()
		require.Equal(t, want.String(), next.String(), "seed %d step %d", seed, step)
		require.Equal(t, want.Digest(), next.Digest(), "seed %d step %d", seed, step)
		probe := []string{"", "a.test", "b.test", "x.test", "x.b.test", "y.x.b.test", "d.test", "alias-a.test", "alias-c.test"}
		if len(names) > len(updateHostNames) {
			for range 20 {
				probe = append(probe, names[r.IntN(len(names))])
			}
		}
		for _, host := range probe {
			for _, path := range []string{"/", "/a", "/a/", "/a/b", "/a/b/c", "/b", "/c/d", "/x", "/A"} {
				w, g := want.Lookup(host, path), next.Lookup(host, path)
				require.Equal(t, describe(w), describe(g), "seed %d step %d (endpoints %v %v): %s%s", seed, step, c.Endpoints, c.EndpointHosts, host, path)
			}
		}
		if fast {
			fastUpdates++
			// The path table holds the current hosts' keys only.
			ids := map[uint32]bool{next.catchAll.id: true}
			for _, hi := range next.exactHosts {
				ids[hi.id] = true
			}
			for _, hi := range next.wildcardHosts {
				ids[hi.id] = true
			}
			used := 0
			for i := range next.paths.mask + 1 {
				if sl := next.paths.at(i); sl.hash != 0 {
					used++
					require.True(t, ids[sl.host], "seed %d step %d: a removed host's key %q", seed, step, sl.keyString())
				}
			}
			require.Equal(t, used, next.paths.used)
			// Update shared the hosts it did not change.
			for name := range m.hosts {
				if !changedHosts[name] && !copied[name] {
					require.Same(t, tab.VirtualHostByName(name), next.VirtualHostByName(name), "seed %d step %d: %q", seed, step, name)
				}
			}
		}
		tab = next
		current = map[string]*Backend{}
		for be := range tab.Backends() {
			current[be.ID] = be
		}
	}
}

func hostBackends(hm hostModel) []string {
	ids := []string{hm.fallback, hm.pass}
	for _, rm := range hm.routes {
		ids = append(ids, rm.backend)
	}
	return ids
}

// describe is what a lookup answered, by name.
func describe(r Result) string {
	s := "host " + r.Host.Name
	if r.Route != nil {
		s += " route " + r.Route.Type.String() + " " + r.Route.Path
	}
	if r.Backend != nil {
		s += " -> " + r.Backend.ID + " " + strconv.Itoa(len(r.Backend.Endpoints))
	}
	return s
}

// TestUpdateGateway: Changes.Gateway replaces a table's listeners, its
// hosts with a Listener and its TLS passthrough, keeping its other hosts
// and backends: the result is New's of the spec so changed, in text,
// digest and answers.
func TestUpdateGateway(t *testing.T) {
	https, plain := Listener{Port: 443, TLS: true}, Listener{Port: 80}
	db := func() *Backend {
		return &Backend{ID: "ns/db:5432", Namespace: "ns", Name: "db", Port: 5432, Endpoints: []string{"10.0.1.1:5432"}}
	}
	web := func() *Backend {
		return &Backend{ID: "ns/web:80", Namespace: "ns", Name: "web", Port: 80, Endpoints: []string{"10.0.0.1:8080"}}
	}
	type gateway struct {
		listeners []ListenerHost
		views     []string // listener hosts by name, on https
		routes    []string // passthrough hostnames on https
	}
	spec := func(g gateway) Spec {
		be, dbe := web(), db()
		s := Spec{
			VirtualHosts: []*VirtualHost{
				{Name: "", Routes: []*Route{{Type: Prefix, Backend: be}}},
				{Name: "a.test", Routes: []*Route{{Type: Exact, Path: "/a", Backend: be}}},
			},
			Backends:  []*Backend{be, dbe},
			Listeners: g.listeners,
			Inputs:    []byte("in"),
		}
		for _, name := range g.views {
			s.VirtualHosts = append(s.VirtualHosts, &VirtualHost{Name: name, Listener: https})
		}
		for _, h := range g.routes {
			s.PassthroughRoutes = append(s.PassthroughRoutes, &PassthroughRoute{Listener: https, ListenerHostname: "db.tls", Hostname: h,
				Source: Source{Kind: "TLSRoute", Namespace: "ns", Name: "db"}, Split: &Split{Alternatives: []Alternative{{Backend: dbe, Weight: 1}}}})
		}
		if len(g.routes) > 0 {
			s.PassthroughListeners = []PassthroughListener{{Listener: https, Hostname: "db.tls"}}
		}
		return s
	}
	gateways := []gateway{
		{},
		{listeners: []ListenerHost{{Listener: https, Hostname: "b.test"}}, views: []string{"", "b.test"}},
		{listeners: []ListenerHost{{Listener: https}, {Listener: plain, Hostname: "a.test"}}, views: []string{""}, routes: []string{"db.tls"}},
		{routes: []string{"db.tls", "*.tls"}},
	}
	for i, from := range gateways {
		for j, to := range gateways {
			old, err := New(spec(from))
			require.NoError(t, err)
			want, err := New(spec(to))
			require.NoError(t, err)
			next := spec(to)
			var listenerHosts []*VirtualHost
			for _, vh := range next.VirtualHosts {
				if vh.Listener != (Listener{}) {
					listenerHosts = append(listenerHosts, vh)
				}
			}
			// The passthrough routes' backend is the one the table keeps.
			dbe := old.backends[slices.IndexFunc(old.backends, func(be *Backend) bool { return be.ID == "ns/db:5432" })]
			for _, r := range next.PassthroughRoutes {
				r.Split.Alternatives[0].Backend = dbe
			}
			got, err := old.Update(Changes{Gateway: &GatewayChanges{Listeners: next.Listeners, ListenerHosts: listenerHosts,
				PassthroughRoutes: next.PassthroughRoutes, PassthroughListeners: next.PassthroughListeners}})
			require.NoError(t, err)
			require.Equal(t, want.String(), got.String(), "%d → %d", i, j)
			require.Equal(t, want.Digest(), got.Digest(), "%d → %d", i, j)
			for _, l := range []Listener{{}, https, plain} {
				for _, host := range []string{"a.test", "b.test", "c.test"} {
					w, g := want.LookupOn(l, host, "/a", nil), got.LookupOn(l, host, "/a", nil)
					require.Equal(t, w.Host.Name, g.Host.Name, "%d → %d: %s on %s", i, j, host, l)
					require.Equal(t, w.Backend == nil, g.Backend == nil, "%d → %d: %s on %s", i, j, host, l)
				}
			}
			for _, name := range []string{"db.tls", "x.tls"} {
				w, wc := want.PassthroughOn(https, name)
				g, gc := got.PassthroughOn(https, name)
				require.Equal(t, w == nil, g == nil, "%d → %d: %s", i, j, name)
				require.Equal(t, wc, gc, "%d → %d: %s", i, j, name)
			}
		}
	}
}

// TestSortByKey holds sortByKey to slices.SortStableFunc.
func TestSortByKey(t *testing.T) {
	type item struct {
		k       string
		tie, id int
	}
	r := rand.New(rand.NewPCG(1, 2))
	for n := range 200 {
		s := make([]*item, n)
		for i := range s {
			s[i] = &item{k: strconv.Itoa(r.IntN(n/3 + 1)), tie: r.IntN(3), id: i}
		}
		want := slices.Clone(s)
		slices.SortStableFunc(want, func(a, b *item) int {
			if c := strings.Compare(a.k, b.k); c != 0 {
				return c
			}
			return a.tie - b.tie
		})
		sortByKey(s, func(x *item) string { return x.k }, func(a, b *item) int { return a.tie - b.tie })
		require.Equal(t, want, s)
		// Sorted already: left as it is.
		sortByKey(s, func(x *item) string { return x.k }, func(a, b *item) int { return a.tie - b.tie })
		require.Equal(t, want, s)
		// Ties left to position, on sorted keys.
		sortByKey(s, func(x *item) string { return x.k }, nil)
		require.Equal(t, want, s)
	}
}
