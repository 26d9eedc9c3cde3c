package match

import "ramjet.dev/ramjet/match/vars"

// hostChains holds a host's keys whose routes have conditions (or are
// several) as a lookup tries them. Each such key's routes are a chain of
// entries in precedence order, its Exact routes before its Prefix ones,
// and the chains of all the host's keys lie one after another in entries,
// their header and query parameter checks in checks. A host of a few such
// routes holds them in the header's own arrays, so that a lookup passing
// over several candidates of a host reads a few neighbouring cache lines,
// and no route before it is chosen.
//
// A path slot's chains, or root for the root Prefix, is 1 + the offset of
// its key's chain in entries; 0 means the key has one route of each type
// at most, none with conditions, which the slot (hostIndex.rootPrefix)
// holds. Built by indexHost; never copied, as entries and checks may
// point into it.
type hostChains struct {
	entries []chainEntry
	checks  []valueCheck
	root    uint32

	inlineEntries [inlineEntries]chainEntry
	inlineChecks  [inlineChecks]valueCheck
}

// The entries and checks a hostChains holds itself: 640 bytes in all.
const (
	inlineEntries = 12
	inlineChecks  = 8
)

// chainEntry is a route of a chain: its method condition as a methodCode,
// and where its checks begin in hostChains.checks (the last has last
// set), with entryChecks.
type chainEntry struct {
	r      *Route
	checks uint32
	method uint8
	flags  uint8
}

// chainEntry flags.
const (
	// entryExact: an Exact route, tried only when the key is the whole
	// path.
	entryExact = 1 << iota
	// entryLast: the route ends its key's chain.
	entryLast
	// entryChecks: the route has header or query parameter checks.
	entryChecks
)

// valueCheck is a header or query parameter condition as a lookup checks
// it: the name (canonical for a header) and an exact value, or a pattern
// through its ValueMatch.
type valueCheck struct {
	name, value string
	pattern     *ValueMatch // nil for an exact value
	query       bool
	pairName    bool // pairName(name), for a query parameter
	last        bool // the route's last check
}

// Method codes: a route's method condition and a request's method
// compare as one byte. methodOther stands for every other method, which
// the route's own condition then spells.
const (
	methodAny uint8 = iota
	methodGET
	methodHEAD
	methodPOST
	methodPUT
	methodDELETE
	methodCONNECT
	methodOPTIONS
	methodTRACE
	methodPATCH
	methodOther
)

// methodCode is m's code; "" is methodAny, which no method condition
// equals.
func methodCode(m string) uint8 {
	switch m {
	case "":
		return methodAny
	case "GET":
		return methodGET
	case "HEAD":
		return methodHEAD
	case "POST":
		return methodPOST
	case "PUT":
		return methodPUT
	case "DELETE":
		return methodDELETE
	case "CONNECT":
		return methodCONNECT
	case "OPTIONS":
		return methodOPTIONS
	case "TRACE":
		return methodTRACE
	case "PATCH":
		return methodPATCH
	}
	return methodOther
}

// met is the first route of the chain at off, Exact routes only when
// exact (the key is the whole path), whose conditions q meets; method is
// q's methodCode (methodAny for a nil q). The checks are written out here,
// as every candidate runs them.
func (hc *hostChains) met(off uint32, exact bool, q *Request, method uint8) *Route {
	entries, checks := hc.entries, hc.checks
	for i := int(off); i < len(entries); i++ {
		e := &entries[i]
		if (exact || e.flags&entryExact == 0) &&
			(e.method == methodAny || e.method == method && (method != methodOther || e.r.When.Method == q.Method)) {
			if e.flags&entryChecks == 0 {
				return e.r
			}
			ok := q != nil
			for j := int(e.checks); ok && j < len(checks); j++ {
				c := &checks[j]
				switch {
				case c.query:
					ok = queryNameMatches(q.Query, c.name, c.pairName, c.value, c.pattern)
				case c.pattern == nil:
					v, found := vars.Header(q.Header, q.Host, c.name)
					ok = found && v == c.value
				default:
					v, found := vars.Header(q.Header, q.Host, c.name)
					ok = found && c.pattern.matchValue(v)
				}
				if c.last {
					break
				}
			}
			if ok {
				return e.r
			}
		}
		if e.flags&entryLast != 0 {
			break
		}
	}
	return nil
}

// keyRoutes are the routes of one key and type, vh.Routes[start:end],
// while indexHost builds the chains.
type keyRoutes struct {
	slot       *pathSlot // nil for the root Prefix
	start, end int
	exact      bool
	// pair is 1 + the index of the same slot's Prefix routes, on its
	// Exact routes; paired marks those Prefix routes.
	pair   int
	paired bool
}

// chained reports whether the routes need a chain: several, or one with
// conditions.
func (k *keyRoutes) chained(routes []*Route) bool {
	return k.end-k.start > 1 || routes[k.start].When != nil
}

// buildChains lays out the chains of the keys, given in the order of
// routes, and sets their slots' and the root's offsets.
func buildChains(routes []*Route, keys []keyRoutes) *hostChains {
	hc := new(hostChains)
	hc.entries, hc.checks = hc.inlineEntries[:0], hc.inlineChecks[:0]
	for i := range keys {
		k := &keys[i]
		if k.paired {
			continue
		}
		var pair *keyRoutes
		if k.pair > 0 {
			pair = &keys[k.pair-1]
		}
		if !k.chained(routes) && (pair == nil || !pair.chained(routes)) {
			if k.slot != nil {
				k.slot.chains = 0
			}
			continue
		}
		off := uint32(len(hc.entries)) + 1
		if k.slot != nil {
			k.slot.chains = off
		} else {
			hc.root = off
		}
		hc.addRoutes(routes[k.start:k.end], k.exact)
		if pair != nil {
			hc.addRoutes(routes[pair.start:pair.end], false)
		}
		hc.entries[len(hc.entries)-1].flags |= entryLast
	}
	return hc
}

// addRoutes appends the routes and their checks: exact headers, exact
// query parameters, then patterns.
func (hc *hostChains) addRoutes(routes []*Route, exact bool) {
	for _, r := range routes {
		e := chainEntry{r: r}
		if exact {
			e.flags |= entryExact
		}
		if c := r.When; c != nil {
			e.method = methodCode(c.Method)
			if len(c.Headers)+len(c.Query) > 0 {
				e.checks = uint32(len(hc.checks))
				e.flags |= entryChecks
				for _, regex := range []bool{false, true} {
					for k, vs := range [][]ValueMatch{c.Headers, c.Query} {
						for i := range vs {
							if v := &vs[i]; v.Regex == regex {
								vc := valueCheck{name: v.Name, value: v.Value, query: k == 1, pairName: pairName(v.Name)}
								if regex {
									vc.pattern = v
								}
								hc.checks = append(hc.checks, vc)
							}
						}
					}
				}
				hc.checks[len(hc.checks)-1].last = true
			}
		}
		hc.entries = append(hc.entries, e)
	}
}
