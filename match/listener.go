package match

import (
	"cmp"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Listener is where a request arrived as the Gateway API sees it (SPEC
// §20): the Gateway port it was received on and whether TLS was
// terminated there (an HTTPS listener; HTTP otherwise). The zero value is
// no listener in particular.
//
// A host with a Listener (VirtualHost.Listener) serves only requests that
// arrived on it: the hosts of one Listener are a view of the table of
// their own, in which they take the place of the hosts of the same name
// without one (the Ingresses', which every listener serves). A request is
// looked up in its listener's view when the table has one (LookupOn),
// else among the hosts without a Listener.
type Listener struct {
	Port int32
	TLS  bool
}

func (l Listener) String() string {
	s := ":" + strconv.Itoa(int(l.Port))
	if l.TLS {
		s += " tls"
	}
	return s
}

// ListenerHost is one Gateway listener's hostname on a Listener: "" for
// none, a name, or a "*." wildcard of any depth. They decide which
// listener a name belongs to (ListenerOf) when a TLS connection's server
// name and its requests' Host must belong to the same (Misdirected).
type ListenerHost struct {
	Listener Listener
	Hostname string
}

// hostSet is one view's host index: the table's own (hosts without a
// Listener) or a listener's.
type hostSet struct {
	exactHosts    map[string]*hostIndex
	wildcardHosts map[string]*hostIndex // keyed by the suffix after "*."
	// deepWildcards is set when some wildcard host has DeepWildcard, so
	// that only such tables look beyond a name's first label.
	deepWildcards bool
	catchAll      hostIndex
}

// view is a Listener's hosts and the hostnames of its listeners.
type view struct {
	hostSet
	// hostnames are the listeners' hostnames on it, sorted and unique;
	// anyName is set when one has none.
	hostnames map[string]bool
	anyName   bool
}

// HasListeners reports whether some host of the table serves one
// Listener only: then requests are looked up with LookupOn.
func (t *Table) HasListeners() bool { return len(t.views) > 0 }

// Listeners yields, sorted, the Listeners that have a view of their own.
func (t *Table) Listeners() []Listener {
	return slices.SortedFunc(maps.Keys(t.views), compareListeners)
}

func compareListeners(a, b Listener) int {
	if c := cmp.Compare(a.Port, b.Port); c != 0 {
		return c
	}
	switch {
	case a.TLS == b.TLS:
		return 0
	case a.TLS:
		return 1
	}
	return -1
}

// LookupOn is LookupRequest for a request that arrived on listener l: in
// l's view when the table has one, otherwise among the hosts without a
// Listener, as LookupRequest looks.
func (t *Table) LookupOn(l Listener, host, path string, q *Request) (res Result) {
	hs := &t.hostSet
	if len(t.views) > 0 {
		if v := t.views[l]; v != nil {
			hs = &v.hostSet
		}
	}
	hi := hs.host(host)
	if hi.chains != nil {
		r, re := t.routeWhen(hi, path, q)
		hi.result(&res, r, re)
		return res
	}
	r, re := t.route(hi, path)
	hi.result(&res, r, re)
	return res
}

// Misdirected reports whether a request on TLS listener l whose
// connection named serverName (SNI, lower-case, without a trailing dot)
// carries a Host (normalized) that belongs to another of l's listeners
// than the server name does: the Gateway API answers such a request 421
// (SPEC §20). Without a server name, or on a Listener without a view, no
// request is misdirected.
func (t *Table) Misdirected(l Listener, serverName, host string) bool {
	v := t.views[l]
	if v == nil || serverName == "" || serverName == host || len(v.hostnames) == 0 {
		return false
	}
	return v.listenerOf(serverName) != v.listenerOf(host)
}

// ListenerOf returns the hostname of the listener on l that name belongs
// to by the Gateway API's precedence (an exact hostname, else the
// wildcard with the most labels, else the listener without one) and
// true, or false when none of l's listeners accepts it.
func (t *Table) ListenerOf(l Listener, name string) (string, bool) {
	v := t.views[l]
	if v == nil {
		return "", false
	}
	h := v.listenerOf(name)
	return h, h != "\x00"
}

// listenerOf is ListenerOf's hostname, "\x00" for none.
func (v *view) listenerOf(name string) string {
	if v.hostnames[name] {
		return name
	}
	for i := strings.IndexByte(name, '.'); i > 0 && i < len(name)-1; {
		if w := "*" + name[i:]; v.hostnames[w] {
			return w
		}
		j := strings.IndexByte(name[i+1:], '.')
		if j < 0 {
			break
		}
		i += j + 1
	}
	if v.anyName {
		return ""
	}
	return "\x00"
}

// indexViews builds each Listener's view after the table's own hosts are
// indexed: the hosts without a Listener, with the Listener's own in place
// of those of the same name, and its listeners' hostnames from ls.
func (t *Table) indexViews(own map[Listener][]*hostIndex, ls []ListenerHost) {
	if len(own) == 0 {
		return
	}
	t.views = make(map[Listener]*view, len(own))
	for l, his := range own {
		v := &view{hostSet: hostSet{
			exactHosts:    maps.Clone(t.exactHosts),
			wildcardHosts: maps.Clone(t.wildcardHosts),
			deepWildcards: t.deepWildcards,
			catchAll:      t.catchAll,
		}, hostnames: map[string]bool{}}
		for _, hi := range his {
			v.add(hi)
		}
		t.views[l] = v
	}
	for _, lh := range ls {
		v := t.views[lh.Listener]
		if v == nil {
			continue // no host of its own: it answers as the table's
		}
		if lh.Hostname == "" {
			v.anyName = true
		} else {
			v.hostnames[lh.Hostname] = true
		}
	}
	t.listenerHosts = make([]ListenerHost, 0, len(ls))
	for _, lh := range ls {
		if t.views[lh.Listener] != nil {
			t.listenerHosts = append(t.listenerHosts, lh)
		}
	}
	slices.SortFunc(t.listenerHosts, func(a, b ListenerHost) int {
		return cmp.Or(compareListeners(a.Listener, b.Listener), strings.Compare(a.Hostname, b.Hostname))
	})
	t.listenerHosts = slices.Compact(t.listenerHosts)
}

// add indexes a host in the set, in place of one of the same name.
func (s *hostSet) add(hi *hostIndex) {
	switch suffix, wildcard := strings.CutPrefix(hi.vh.Name, "*."); {
	case hi.vh.Name == "":
		s.catchAll = *hi
	case wildcard && suffix != "":
		s.wildcardHosts[suffix] = hi
		s.deepWildcards = s.deepWildcards || hi.vh.DeepWildcard
	default:
		s.exactHosts[hi.vh.Name] = hi
	}
}

// listenerSection is the Listener a host serves alone, and the listeners'
// hostnames on each (SPEC §20). A table without such hosts encodes as if
// the section did not exist.
var listenerSection = section{
	name: "listener",
	host: []string{"Listener"},
	digest: []digestPart{{
		tag:     "listener",
		hostHas: func(vh *VirtualHost) bool { return vh.Listener != Listener{} },
		host: func(e *encoder, vh *VirtualHost) {
			e.num(int(vh.Listener.Port))
			e.flag(vh.Listener.TLS)
		},
	}, {
		tag: "listener-hosts",
		// Views are built where some host has a Listener.
		tableHas: func(t *Table) bool { return len(t.views) > 0 },
		table: func(e *encoder, t *Table) {
			e.num(len(t.listenerHosts))
			for _, lh := range t.listenerHosts {
				e.num(int(lh.Listener.Port))
				e.flag(lh.Listener.TLS)
				e.str(lh.Hostname)
			}
		},
	}},
	text: textParts{
		at: 13, // after " any-depth"
		hostSuffix: func(b *strings.Builder, vh *VirtualHost) {
			if vh.Listener != (Listener{}) {
				b.WriteString(" on listener " + vh.Listener.String())
			}
		},
	},
}
