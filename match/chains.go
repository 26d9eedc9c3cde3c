package match

import (
	"math"
	"unsafe"

	"ramjet.dev/ramjet/match/vars"
)

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
// holds. A host of at most inlineKeys keys besides the root chains every
// key and lists them in keys (byKeys), where a lookup finds them by
// comparing the candidate with each, rather than by hashing it and probing
// the path table. Built by indexHost; never copied, as entries and checks
// may point into it.
type hostChains struct {
	keys    [inlineKeys]chainKey
	entries []chainEntry
	checks  []valueCheck
	// others, when some check is neither an exact header nor an exact
	// query parameter (otherCheck), is beside checks: others[j] says how
	// to match checks[j].
	others []otherCheck
	root   uint32
	byKeys bool

	inlineEntries [inlineEntries]chainEntry
	inlineChecks  [inlineChecks]valueCheck
}

// The keys, entries and checks a hostChains holds itself: 640 bytes in
// all, its checks at a 32-byte offset. Allocated alone, as it is, a
// hostChains begins 8 bytes into a cache line, after the header the
// runtime puts before an object of over 512 bytes with pointers, so
// every other check straddles two lines (holding them in one aligned
// array measured no faster).
const (
	inlineKeys    = 6
	inlineEntries = 13
	inlineChecks  = 8
)

// chainKey is a key of a byKeys host and its chain's offset + 1; an
// unused one has no key. The key is held as its bytes and a 32-bit
// length, as a path slot holds it, so that it takes 16 bytes.
type chainKey struct {
	key    *byte
	keyLen uint32
	chains uint32
}

// key is the chains of key p in a byKeys host, 0 if it has none.
func (hc *hostChains) key(p string) uint32 {
	for i := range hc.keys {
		k := &hc.keys[i]
		if int(k.keyLen) == len(p) {
			if s := (stringHeader{k.key, len(p)}); *(*string)(unsafe.Pointer(&s)) == p {
				return k.chains
			}
		}
	}
	return 0
}

// chainEntry is a route of a chain: its method condition as a methodCode,
// and its checks, which begin at checks in hostChains.checks: headers
// header checks, then queries query parameter checks. With entryOthers
// some of them are others (otherCheck); with entrySlow, too many for a
// count's byte, the route's conditions are matched as Conditions.Matches
// does instead.
type chainEntry struct {
	r                *Route
	checks           uint32
	method           uint8
	flags            uint8
	headers, queries uint8
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
	// entryOthers: some of its checks are others.
	entryOthers
	// entrySlow: its checks are its conditions, matched with Matches.
	entrySlow
)

// valueCheck is a header or query parameter condition as a lookup checks
// it: the name (canonical for a header) and the exact value ("" for a
// pattern). 32 bytes, two to a cache line.
type valueCheck struct {
	name, value string
}

// otherCheck is how to match a check of an entry with others: checks
// that are neither an exact header value (a pattern, or the header Host,
// which the Host line gives) nor an exact query parameter whose name can
// be a pair's name as written. The zero value is an exact check. A
// header's is read only once the header is found.
type otherCheck struct {
	pattern *ValueMatch // nil for an exact value
	notPair bool        // !pairName(name), for a query parameter
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
// q's methodCode (methodAny for a nil q). The exact checks are written out
// here, as every candidate runs them; othersMet matches a route's checks
// when some are others.
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
			if ok && e.flags&(entryOthers|entrySlow) != 0 {
				ok = hc.othersMet(e, q)
			} else {
				j := int(e.checks)
				for end := j + int(e.headers); ok && j < end && j < len(checks); j++ {
					c := &checks[j]
					vs := q.Header[c.name]
					ok = len(vs) == 1 && vs[0] == c.value || len(vs) > 1 && joinedIs(q, c.name, c.value)
				}
				for end := j + int(e.queries); ok && j < end && j < len(checks); j++ {
					c := &checks[j]
					ok = queryNameMatches(q.Query, c.name, true, c.value, nil)
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

// othersMet reports whether q (not nil) meets the checks of e, some of
// which are others, or e's conditions when e is slow.
func (hc *hostChains) othersMet(e *chainEntry, q *Request) bool {
	if e.flags&entrySlow != 0 {
		return e.r.When.Matches(q)
	}
	j := int(e.checks)
	for end := j + int(e.headers); j < end; j++ {
		c := &hc.checks[j]
		v, found := vars.Header(q.Header, q.Host, c.name)
		if !found {
			return false
		}
		if o := &hc.others[j]; o.pattern != nil && !o.pattern.matchValue(v) || o.pattern == nil && v != c.value {
			return false
		}
	}
	for end := j + int(e.queries); j < end; j++ {
		c, o := &hc.checks[j], &hc.others[j]
		if !queryNameMatches(q.Query, c.name, !o.notPair, c.value, o.pattern) {
			return false
		}
	}
	return true
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
	n := 0
	for i := range keys {
		if keys[i].slot != nil && !keys[i].paired {
			n++
		}
	}
	hc.byKeys = n <= inlineKeys
	n = 0
	for i := range keys {
		k := &keys[i]
		if k.paired {
			continue
		}
		var pair *keyRoutes
		if k.pair > 0 {
			pair = &keys[k.pair-1]
		}
		if hc.byKeys && k.slot != nil {
			p := routes[k.start].Path
			hc.keys[n] = chainKey{key: unsafe.StringData(p), keyLen: uint32(len(p)), chains: uint32(len(hc.entries)) + 1}
			n++
		} else if !k.chained(routes) && (pair == nil || !pair.chained(routes)) {
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
	if hc.others != nil {
		hc.others = append(hc.others, make([]otherCheck, len(hc.checks)-len(hc.others))...)
	}
	return hc
}

// addRoutes appends the routes and their checks: headers, then query
// parameters, each kind exact values first, in their conditions' order.
func (hc *hostChains) addRoutes(routes []*Route, exact bool) {
	for _, r := range routes {
		e := chainEntry{r: r, checks: uint32(len(hc.checks))}
		if exact {
			e.flags |= entryExact
		}
		if c := r.When; c != nil {
			e.method = methodCode(c.Method)
			switch {
			case len(c.Headers) > math.MaxUint8 || len(c.Query) > math.MaxUint8:
				e.flags |= entryChecks | entrySlow
			case len(c.Headers)+len(c.Query) > 0:
				e.flags |= entryChecks
				e.headers, e.queries = uint8(len(c.Headers)), uint8(len(c.Query))
				for k, vs := range [][]ValueMatch{c.Headers, c.Query} {
					for _, regex := range []bool{false, true} {
						for i := range vs {
							if v := &vs[i]; v.Regex == regex {
								hc.addCheck(&e, v, k == 1)
							}
						}
					}
				}
			}
		}
		hc.entries = append(hc.entries, e)
	}
}

// addCheck appends the check of v, a query parameter's when query, to
// e's.
func (hc *hostChains) addCheck(e *chainEntry, v *ValueMatch, query bool) {
	c := valueCheck{name: v.Name, value: v.Value}
	o := otherCheck{notPair: query && !pairName(v.Name)}
	if v.Regex {
		o.pattern, c.value = v, ""
	}
	hc.checks = append(hc.checks, c)
	if o != (otherCheck{}) || !query && v.Name == "Host" {
		e.flags |= entryOthers
		hc.others = append(hc.others, make([]otherCheck, len(hc.checks)-1-len(hc.others))...)
		hc.others = append(hc.others, o)
	}
}

// joinedIs: header name, sent on several lines, reads as value once joined
// as nginx's $http_<name> joins it.
func joinedIs(q *Request, name, value string) bool {
	v, _ := vars.Header(q.Header, q.Host, name)
	return v == value
}
