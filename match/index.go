package match

import (
	"cmp"
	"math"
	"slices"
	"strings"
)

// Spec is everything a Table is built from. New takes ownership of what it
// points to: the hosts' Routes are sorted in place and their indexes built,
// so a VirtualHost, Route, Backend or Certificate belongs to exactly one
// table (and to the tables Update builds from it, which share what they do
// not change) and is never modified once New returns. The feature values they
// point to (CORS, Auth, Rewrite, Policy, Extensions, ...) may be shared by
// any number of tables, built at once or not: New only reads them.
type Spec struct {
	// VirtualHosts in any order. A catch-all (Name "") with no routes and
	// no fallback (404) is added when none is given. Of two hosts with the
	// same name the first given is kept.
	VirtualHosts []*VirtualHost
	// Backends in any order: every backend a host or route refers to.
	Backends []*Backend
	// Certificates in order of precedence: when two list the same host,
	// the one given first wins. compile passes them oldest Ingress first,
	// which is SPEC §12's rule.
	Certificates []*Certificate
	// TLSHosts are the valid hosts listed under some claimed Ingress's
	// spec.tls (exact or "*.rest"), whether or not they have a rule or a
	// usable Secret: the hosts a plain-HTTP request is redirected from
	// (SPEC §12).
	TLSHosts []string
	// Listeners are the Gateway listeners' hostnames on each Listener
	// some host serves alone (VirtualHost.Listener), in any order: they
	// decide Misdirected. Those of a Listener without such a host are
	// left out.
	Listeners []ListenerHost
	// Inputs is a canonical encoding of whatever else decided the table's
	// content (compile's options). It is hashed into the digest before the
	// table, so tables built under different inputs never share a digest.
	Inputs []byte
	// L4Services are the TCP and UDP services (SPEC §22), in any order;
	// of two with one protocol and port the first given is kept.
	// StreamSettings are their settings; nil: DefaultStreamSettings.
	L4Services     []*L4Service
	StreamSettings *StreamSettings
	// PassthroughRoutes are the Gateway TLSRoutes' hostnames on TLS
	// passthrough listeners, PassthroughListeners those listeners'
	// hostnames (with or without routes), in any order (tlsroute.go).
	// Listeners' hostnames on the same ports are the HTTPS listeners'
	// there, which keep the names they match more specifically.
	PassthroughRoutes    []*PassthroughRoute
	PassthroughListeners []PassthroughListener
}

// New builds a Table from s in one step: it sorts the hosts, routes,
// backends and certificates, builds the lookup index, and computes the
// digest (SPEC §15) over the finished table.
//
//   - VirtualHosts are sorted by name, the catch-all first.
//   - Each host's Routes are sorted with CompareRoutes. Of two routes with the
//     same key (type and path) only the first is kept (the lower Order,
//     unless OrderPath places them apart): compile resolves such conflicts
//     with a warning first, so this is a defence, not a second policy.
//   - Backends are sorted by ID, Certificates by Secret, both stably;
//     TLSHosts sorted and made unique.
//
// The index: exact and wildcard host names in maps whose slots carry what a
// lookup needs of the host; the Exact and Prefix keys of all hosts in one
// hash table keyed by (host, key), so one probe answers both tiers for a
// candidate; Regex routes in a slice per host.
//
// A table built from struct literals answers as one built with the
// constructors (NewCORS, NewBasicAuth, NewRewrite, urltemplate.ParseAuthURL,
// CompileRegex, ...): New prepares a feature value written as a literal as
// its constructor would, in a copy it points the route, host or backend
// at, and checks what the router relies on. A value it can neither serve
// nor prepare fails New with a *ValueError naming the host, the route or
// backend, and the field.
func New(s Spec) (*Table, error) {
	t := &Table{
		hostSet:       hostSet{wildcardHosts: make(map[string]*hostIndex)},
		exactCerts:    make(map[string]*Certificate),
		wildcardCerts: make(map[string]*Certificate),
	}
	var p preparer
	if err := t.indexHosts(s.VirtualHosts, s.Listeners, &p); err != nil {
		return nil, err
	}

	t.backends = make([]*Backend, 0, len(s.Backends))
	for _, b := range s.Backends {
		if b != nil {
			t.backends = append(t.backends, b)
		}
	}
	sortByKey(t.backends, func(be *Backend) string { return be.ID }, nil)
	if err := p.backends(t.backends); err != nil {
		return nil, err
	}

	t.indexCertificates(s.Certificates)
	t.indexTLSHosts(s.TLSHosts)
	t.indexPassthrough()
	if err := t.indexPassthroughRoutes(s.PassthroughRoutes, s.Listeners, s.PassthroughListeners); err != nil {
		return nil, err
	}
	if err := t.indexL4(s.L4Services, s.StreamSettings); err != nil {
		return nil, err
	}
	var sm summer
	t.hostSums = make([]sum, len(t.hosts))
	for i, vh := range t.hosts {
		t.hostSums[i] = sm.host(vh)
	}
	t.backendSums = make([]sum, len(t.backends))
	for i, be := range t.backends {
		t.backendSums[i] = sm.backend(be)
	}
	t.nextID = uint32(len(t.hosts))
	t.spec = Spec{Certificates: s.Certificates, TLSHosts: s.TLSHosts, Listeners: s.Listeners,
		Inputs: s.Inputs, L4Services: s.L4Services, StreamSettings: s.StreamSettings,
		PassthroughRoutes: s.PassthroughRoutes, PassthroughListeners: s.PassthroughListeners}
	t.digest = digest(t, s.Inputs)
	return t, nil
}

func (t *Table) indexHosts(hosts []*VirtualHost, ls []ListenerHost, p *preparer) error {
	t.hosts = make([]*VirtualHost, 0, len(hosts)+1)
	for _, vh := range hosts {
		if vh != nil {
			t.hosts = append(t.hosts, vh)
		}
	}
	sortByKey(t.hosts, func(vh *VirtualHost) string { return vh.Name }, func(a, b *VirtualHost) int {
		return compareListeners(a.Listener, b.Listener)
	})
	t.hosts = slices.CompactFunc(t.hosts, func(a, b *VirtualHost) bool { return a.Name == b.Name && a.Listener == b.Listener })
	if len(t.hosts) == 0 || t.hosts[0].Name != "" || t.hosts[0].Listener != (Listener{}) {
		t.hosts = slices.Insert(t.hosts, 0, &VirtualHost{})
	}

	keys, exact := 0, 0
	for _, vh := range t.hosts {
		vh.sortRoutes()
		// While the host's routes are in cache: a pass of its own over
		// every route would miss the cache again on large tables.
		if err := p.host(vh); err != nil {
			return err
		}
		for _, r := range vh.Routes {
			if r.Type == Exact || r.Type == Prefix && r.Path != "" {
				keys++
			}
		}
		if suffix, wild := strings.CutPrefix(vh.Name, "*."); vh.Listener == (Listener{}) && vh.Name != "" && (!wild || suffix == "") {
			exact++
		}
	}
	// Sized for the keys and exact hosts there are: grown one doubling at
	// a time, the map of a large table was allocated about twice over, and
	// Regex routes and root prefixes take no slot.
	t.exactHosts = make(map[string]*hostIndex, exact)
	t.paths = newPathTable(keys)
	seenRegexp := make(map[*Regexp]bool)
	var own map[Listener][]*hostIndex
	// The records in one array: a table's are each one cache line once
	// it is a large allocation, which is page-aligned (hostIndex).
	his := make([]hostIndex, len(t.hosts))
	for id, vh := range t.hosts {
		hi := &his[id]
		*hi = t.indexHost(uint32(id), vh)
		for _, r := range vh.regex {
			if !seenRegexp[r.Regexp] {
				seenRegexp[r.Regexp] = true
				t.regexps = append(t.regexps, r.Regexp)
			}
		}
		if vh.Listener != (Listener{}) {
			if own == nil {
				own = make(map[Listener][]*hostIndex)
			}
			own[vh.Listener] = append(own[vh.Listener], hi)
			continue
		}
		t.add(hi)
	}
	t.indexAliases()
	t.indexViews(own, ls)
	return nil
}

func (t *Table) indexCertificates(certs []*Certificate) {
	t.certs = make([]*Certificate, 0, len(certs))
	for _, c := range certs {
		if c == nil {
			continue
		}
		t.certs = append(t.certs, c)
		for _, h := range c.Hosts {
			if h == AnyName {
				t.anyCert = cmp.Or(t.anyCert, c)
				continue
			}
			m, key := t.exactCerts, h
			if suffix, ok := strings.CutPrefix(h, "*."); ok && suffix != "" {
				m, key = t.wildcardCerts, suffix
			}
			if _, taken := m[key]; !taken {
				m[key] = c
			}
		}
	}
	slices.SortStableFunc(t.certs, func(a, b *Certificate) int { return strings.Compare(a.Secret, b.Secret) })
}

func (t *Table) indexTLSHosts(hosts []string) {
	t.tlsHosts = slices.Clone(hosts)
	slices.Sort(t.tlsHosts)
	t.tlsHosts = slices.Compact(t.tlsHosts)
	t.tlsExact = make(map[string]bool, len(t.tlsHosts))
	t.tlsWildcard = make(map[string]bool)
	for _, h := range t.tlsHosts {
		if suffix, ok := strings.CutPrefix(h, "*."); ok {
			t.tlsWildcard[suffix] = true
		} else {
			t.tlsExact[h] = true
		}
	}
}

// CompareRoutes orders routes by precedence within a virtual host (SPEC §5):
// Exact before Prefix before Regex; Exact by path; Prefix longest first, then
// by path; Regex in ingress-nginx's controller order, path (OrderPath when
// set) length descending, then path descending in byte order. Ties go to
// the lower Order, the older declaration, and then, for the routes one
// declared path made, to the longer key ("p/" before "p").
func CompareRoutes(a, b *Route) int {
	if c := cmp.Compare(a.Type, b.Type); c != 0 {
		return c
	}
	switch a.Type {
	case Exact:
		if c := strings.Compare(a.Path, b.Path); c != 0 {
			return c
		}
	case Prefix:
		if c := cmp.Compare(len(b.Path), len(a.Path)); c != 0 {
			return c
		}
		if c := strings.Compare(a.Path, b.Path); c != 0 {
			return c
		}
	default:
		if a.When != nil || b.When != nil {
			if c := cmp.Or(compareRegexOrder(a, b), compareConditions(a.When, b.When)); c != 0 {
				return c
			}
		}
		ap, bp := a.orderPath(), b.orderPath()
		if c := cmp.Compare(len(bp), len(ap)); c != 0 {
			return c
		}
		if c := strings.Compare(bp, ap); c != 0 {
			return c
		}
		if c := cmp.Compare(a.Order, b.Order); c != 0 {
			return c
		}
		if c := cmp.Compare(len(b.Path), len(a.Path)); c != 0 {
			return c
		}
		return strings.Compare(b.Path, a.Path)
	}
	return cmp.Or(compareConditions(a.When, b.When), cmp.Compare(a.Order, b.Order))
}

// compareRegexOrder is controller order's part before Order.
func compareRegexOrder(a, b *Route) int {
	ap, bp := a.orderPath(), b.orderPath()
	return cmp.Or(cmp.Compare(len(bp), len(ap)), strings.Compare(bp, ap))
}

// orderPath is the path that places a Regex route in controller order.
func (r *Route) orderPath() string {
	if r.OrderPath != "" {
		return r.OrderPath
	}
	return r.Path
}

// hostIndex is what a lookup needs of one virtual host: 64 bytes, which
// the host maps point to, so that a lookup reads the record where it lies
// (one cache line when aligned) and copies none of it.
type hostIndex struct {
	vh         *VirtualHost
	rootPrefix *Route    // the Prefix "/" route, key ""
	keyLens    lengthSet // lengths of the host's Exact and Prefix keys
	prefixLens lengthSet // lengths of its Prefix keys
	id         uint32    // the host's number in the path table
	// maxPrefix is the longest Prefix key's length (at most MaxInt32,
	// which no request path reaches), beside id, where it costs the record
	// no space.
	maxPrefix int32
	// chains, when some route of the host has conditions, are its keys'
	// routes as a lookup that checks them tries them (routeWhen); nil
	// for none.
	chains *hostChains
}

// lengthSet records which key lengths exist, so a lookup skips probes for
// candidates no key could equal. Lengths from 127 up share the last bit.
type lengthSet [2]uint64

func (s *lengthSet) add(n int) {
	n = min(n, 127)
	s[n>>6] |= 1 << (n & 63)
}

func (s *lengthSet) has(n int) bool {
	n = min(n, 127)
	return s[n>>6]&(1<<(n&63)) != 0
}

// sortRoutes sorts the routes by precedence and drops same-key duplicates,
// keeping the first: with OrderPath, two Regex routes of one key need not
// be neighbours, and the one nginx tries first is the one that answers.
func (vh *VirtualHost) sortRoutes() {
	// The host is New's to sort: its routes are sorted in place unless
	// nil ones must be dropped first.
	routes := vh.Routes
	ordered := false
	for _, r := range vh.Routes {
		if r == nil {
			routes = slices.DeleteFunc(slices.Clone(vh.Routes), func(r *Route) bool { return r == nil })
			break
		}
	}
	for _, r := range routes {
		ordered = ordered || r.OrderPath != ""
	}
	slices.SortStableFunc(routes, CompareRoutes)
	routes = slices.CompactFunc(routes, func(a, b *Route) bool {
		return a.Type == b.Type && a.Path == b.Path && sameConditions(a.When, b.When)
	})
	if ordered {
		seen := make(map[string]bool)
		routes = slices.DeleteFunc(routes, func(r *Route) bool {
			// Routes with conditions are told apart by them (compile
			// keeps one per path and conditions).
			if r.Type != Regex || r.When != nil {
				return false
			}
			dup := seen[r.Path]
			seen[r.Path] = true
			return dup
		})
	}
	vh.Routes = routes
}

// indexHost adds the host's Exact and Prefix keys to the path table,
// collects its Regex routes and lays out its chains (chains.go).
func (t *Table) indexHost(id uint32, vh *VirtualHost) hostIndex {
	hi := hostIndex{vh: vh, id: id}
	vh.regex, vh.regexIdx = nil, nil
	routes := vh.Routes
	// Only a host with conditions, or with several routes of one key,
	// has chains; the others keep their keys in the slots alone, without
	// allocating.
	chained := false
	for i, r := range routes {
		if r.When != nil || i > 0 && r.Type != Regex && routes[i-1].Type == r.Type && routes[i-1].Path == r.Path {
			chained = true
			break
		}
	}
	var keys []keyRoutes
	for i := 0; i < len(routes); {
		r := routes[i]
		if r.Type == Regex {
			if r.Regexp != nil {
				vh.regex = append(vh.regex, r)
			}
			i++
			continue
		}
		// The routes of one key and type follow each other (sortRoutes).
		k := keyRoutes{start: i, end: i + 1, exact: r.Type == Exact}
		for k.end < len(routes) && routes[k.end].Type == r.Type && routes[k.end].Path == r.Path {
			k.end++
		}
		i = k.end
		switch {
		case r.Type == Exact:
			k.slot = t.paths.slot(id, r.Path)
			k.slot.exact = r
			k.slot.chains = 0
			if chained {
				// Until buildChains, the index of these routes in keys.
				k.slot.chains = uint32(len(keys)) + 1
			}
			hi.keyLens.add(len(r.Path))
		case r.Path == "":
			hi.rootPrefix = r
		default:
			k.slot = t.paths.slot(id, r.Path)
			if chained && k.slot.exact != nil {
				keys[k.slot.chains-1].pair = len(keys) + 1
				k.paired = true
			}
			k.slot.prefix = r
			k.slot.chains = 0
			hi.keyLens.add(len(r.Path))
			hi.prefixLens.add(len(r.Path))
			hi.maxPrefix = int32(min(max(int(hi.maxPrefix), len(r.Path)), math.MaxInt32))
		}
		if chained {
			keys = append(keys, k)
		}
	}
	if chained {
		hi.chains = buildChains(routes, keys)
	}
	if len(vh.regex) >= regexIndexMin {
		vh.regexIdx = newRegexIndex(vh.regex)
	}
	return hi
}

// VirtualHostByName returns the host with exactly this name: an exact name,
// a wildcard ("*.example.com"), or "" for the catch-all; nil if none.
func (t *Table) VirtualHostByName(name string) *VirtualHost {
	if name == "" {
		return t.catchAll.vh
	}
	if suffix, ok := strings.CutPrefix(name, "*."); ok && suffix != "" {
		if hi := t.wildcardHosts[suffix]; hi != nil {
			return hi.vh
		}
		return nil
	}
	if hi := t.exactHosts[name]; hi != nil {
		return hi.vh
	}
	return nil
}

// AnyName, among a Certificate's Hosts, chooses it for every server name
// (and a ClientHello without one) no other certificate is chosen for: a
// Gateway HTTPS listener without a hostname (SPEC §20).
const AnyName = "*"

// Certificate selects the certificate for a TLS ClientHello's server name
// (SPEC §12): lower-cased, one trailing dot dropped, then the exact name,
// then "*.<rest>" for one more label, then one for AnyName. Nil means none
// matched and the caller serves its default certificate.
func (t *Table) Certificate(serverName string) *Certificate {
	name := trimDot(lowerASCII(serverName))
	if name == "" {
		return t.anyCert
	}
	if c, ok := t.exactCerts[name]; ok {
		return c
	}
	// An IPv4 literal is no name under a wildcard, as in routing
	// (IsTLSHost, notExact): "*.0.0.1" must not answer for 10.0.0.1.
	if i := strings.IndexByte(name, '.'); i > 0 && !isIPv4(name) {
		if c, ok := t.wildcardCerts[name[i+1:]]; ok {
			return c
		}
	}
	return t.anyCert
}

// IsTLSHost reports whether the normalized request host is a TLS host: listed
// under spec.tls by name, or by a "*.<rest>" entry one label up.
func (t *Table) IsTLSHost(host string) bool {
	if t.tlsExact[host] {
		return true
	}
	if len(t.tlsWildcard) == 0 {
		return false
	}
	if i := strings.IndexByte(host, '.'); i > 0 && !isIPv4(host) {
		return t.tlsWildcard[host[i+1:]]
	}
	return false
}

// RegexTimeouts sums the timed-out matches of every regex route in the
// table, counting a pattern shared by several routes once.
func (t *Table) RegexTimeouts() uint64 {
	var n uint64
	for _, re := range t.regexps {
		n += re.Timeouts()
	}
	return n
}
