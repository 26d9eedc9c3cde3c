package match

import "strings"

// Result is where a request goes.
type Result struct {
	// Host is the chosen virtual host; never nil.
	Host *VirtualHost
	// Route is the matching route; nil means the host's fallback answered.
	Route *Route
	// Backend is the route's or fallback's backend; nil means 404.
	Backend *Backend
	// RegexTimedOut reports that a regex match timed out and counted as no
	// match; RegexBudgetExceeded that the request's regex budget ran out
	// (RegexBudget), which leaves it unmatched with no fallback: a 404.
	RegexTimedOut, RegexBudgetExceeded bool
}

// Location returns the settings of the location r chose: the matched
// route's, or, when the host's fallback answers, the fallback's (SPEC §6),
// so the two are applied alike. A route without backend TLS of its own
// has its host's.
func (r Result) Location() Location {
	switch {
	case r.Route != nil:
		loc := r.Route.Location
		if loc.BackendTLS == nil && r.Host != nil {
			loc.BackendTLS = r.Host.FallbackLocation.BackendTLS
		}
		return loc
	case r.Host != nil:
		return r.Host.FallbackLocation
	}
	return Location{}
}

// Lookup picks the virtual host, then the route within it (SPEC §5). host
// and path must already be normalized (NormalizeHost, NormalizePath); other
// input never panics but may match nothing. Lookup does not allocate.
//
// Host: exact name, else a wildcard for one more label, else the catch-all.
// Path within that host only: Exact, else the longest Prefix over whole path
// elements, else the first Regex in controller order, else the host's
// fallback. A host that matched by name never falls through to a wildcard or
// the catch-all.
//
// A route with conditions (Route.When) never matches here: LookupRequest
// is the lookup that checks them.
func (t *Table) Lookup(host, path string) (res Result) {
	hi := t.hostSet.host(host)
	if hi.chains != nil {
		r, re := t.routeWhen(hi, path, nil)
		hi.result(&res, r, re)
		return res
	}
	r, re := t.route(hi, path)
	hi.result(&res, r, re)
	return res
}

// LookupRequest is Lookup for a request that may meet route conditions
// (Route.When): a route whose conditions q does not meet is passed over
// for the next candidate, as if its path had not matched. A host without
// such routes is looked up exactly as Lookup does. A nil q meets no
// condition.
func (t *Table) LookupRequest(host, path string, q *Request) (res Result) {
	hi := t.hostSet.host(host)
	if hi.chains != nil {
		r, re := t.routeWhen(hi, path, q)
		hi.result(&res, r, re)
		return res
	}
	r, re := t.route(hi, path)
	hi.result(&res, r, re)
	return res
}

// result sets res, which is zero, to the Result of a route search in the
// host, field by field: Result is too large for the compiler to keep in
// registers, and a Result built whole was zeroed and copied through the
// stack, read back in words its 16-byte stores could not forward.
func (hi *hostIndex) result(res *Result, r *Route, re regexOutcome) {
	res.Host, res.RegexTimedOut = hi.vh, re.timedOut
	switch {
	case r != nil:
		res.Route, res.Backend = r, r.Backend
	case re.exhausted:
		res.RegexBudgetExceeded = true
	default:
		res.Backend = hi.vh.Fallback
	}
}

func (t *Table) host(name string) *hostIndex { return t.hostSet.host(name) }

// host is the virtual host of name: its exact host, else a wildcard's or
// the catch-all (notExact). Small enough to inline into Lookup,
// LookupRequest and LookupOn, so that an exact host costs them the map
// access alone and the record's one cache line, never a copy of it.
func (t *hostSet) host(name string) *hostIndex {
	if hi := t.exactHosts[name]; hi != nil {
		return hi
	}
	return t.notExact(name)
}

// notExact is the virtual host of a name no exact host has.
func (t *hostSet) notExact(name string) *hostIndex {
	if len(t.wildcardHosts) > 0 && !isIPv4(name) {
		// One label: everything up to the first dot, which must be non-empty.
		// An IP literal is never a wildcard's name ("*.0.0.1" is a valid
		// host), so it goes to the catch-all (SPEC §5).
		if i := strings.IndexByte(name, '.'); i > 0 {
			if hi, ok := t.wildcardHosts[name[i+1:]]; ok && (wordLabel(name[:i]) || hi.vh.DeepWildcard || !ownWildcard(hi.vh.Name, name[i+1:])) {
				return hi
			}
		}
		if t.deepWildcards {
			if hi, ok := t.deepWildcard(name); ok {
				return hi
			}
		}
	}
	return &t.catchAll
}

func (t *Table) route(hi *hostIndex, path string) (*Route, regexOutcome) {
	// The whole path answers both tiers: an Exact key, or a Prefix key equal
	// to the path (a path ending in '/' never equals a Prefix key).
	if hi.keyLens.has(len(path)) {
		if s := t.paths.find(hi.id, path); s != nil {
			if s.exact != nil {
				return s.exact, regexOutcome{}
			}
			return s.prefix, regexOutcome{}
		}
	}
	// Shorter Prefix candidates end just before a '/', longest first, so
	// "/foo" is tried for "/foo/bar" and "/foo/" but never for "/foobar".
	for i := min(len(path)-1, int(hi.maxPrefix)); i > 0; i-- {
		if path[i] == '/' && hi.prefixLens.has(i) {
			if s := t.paths.find(hi.id, path[:i]); s != nil && s.prefix != nil {
				return s.prefix, regexOutcome{}
			}
		}
	}
	if hi.rootPrefix != nil {
		return hi.rootPrefix, regexOutcome{}
	}
	if len(hi.vh.regex) == 0 {
		return nil, regexOutcome{}
	}
	out := matchRegexRoutes(hi.vh.regex, hi.vh.regexIdx, path, nil)
	return out.route, out
}

// routeWhen is route for a host with conditional routes: each candidate
// key's routes are tried in their chain's order, and a key none of whose
// routes q meets passes the request on to the next key.
func (t *Table) routeWhen(hi *hostIndex, path string, q *Request) (*Route, regexOutcome) {
	hc := hi.chains
	method := methodAny
	if q != nil {
		method = methodCode(q.Method)
	}
	if hi.keyLens.has(len(path)) {
		if hc.byKeys {
			if off := hc.key(path); off != 0 {
				if r := hc.met(off-1, true, q, method); r != nil {
					return r, regexOutcome{}
				}
			}
		} else if s := t.paths.find(hi.id, path); s != nil {
			if s.chains != 0 {
				if r := hc.met(s.chains-1, true, q, method); r != nil {
					return r, regexOutcome{}
				}
			} else if s.exact != nil {
				return s.exact, regexOutcome{}
			} else if s.prefix != nil {
				return s.prefix, regexOutcome{}
			}
		}
	}
	for i := min(len(path)-1, int(hi.maxPrefix)); i > 0; i-- {
		if path[i] != '/' || !hi.prefixLens.has(i) {
			continue
		}
		if hc.byKeys {
			if off := hc.key(path[:i]); off != 0 {
				if r := hc.met(off-1, false, q, method); r != nil {
					return r, regexOutcome{}
				}
			}
		} else if s := t.paths.find(hi.id, path[:i]); s != nil {
			if s.chains != 0 {
				if r := hc.met(s.chains-1, false, q, method); r != nil {
					return r, regexOutcome{}
				}
			} else if s.prefix != nil {
				return s.prefix, regexOutcome{}
			}
		}
	}
	if hc.root != 0 {
		if r := hc.met(hc.root-1, false, q, method); r != nil {
			return r, regexOutcome{}
		}
	} else if hi.rootPrefix != nil {
		return hi.rootPrefix, regexOutcome{}
	}
	if len(hi.vh.regex) == 0 {
		return nil, regexOutcome{}
	}
	out := matchRegexRoutes(hi.vh.regex, hi.vh.regexIdx, path, q)
	return out.route, out
}

// wordLabel reports whether a first label is one an Ingress wildcard host
// takes: ingress-nginx writes "*.rest" as the server_name regex
// ^(?<subdomain>[\w-]+)\.rest$, so another byte there (a quote, '%', '*',
// non-ASCII) leaves the name to the catch-all. The name is lower case.
func wordLabel(l string) bool {
	for i := 0; i < len(l); i++ {
		if c := l[i]; !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// ownWildcard reports whether the wildcard key suffix is the host's own
// name "*.suffix" rather than one of its aliases, which nginx reads as a
// server_name wildcard of its own.
func ownWildcard(name, suffix string) bool {
	return len(name) == len(suffix)+2 && name[2:] == suffix
}

// isIPv4 reports whether s is a dotted-quad IPv4 address, cheaply enough to
// run on every lookup that reaches the wildcards.
func isIPv4(s string) bool {
	if len(s) < 7 || len(s) > 15 || s[len(s)-1] < '0' || s[len(s)-1] > '9' {
		return false
	}
	parts, n, digits := 0, 0, 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == '.' {
			if digits == 0 || n > 255 {
				return false
			}
			parts, n, digits = parts+1, 0, 0
			continue
		}
		c := s[i]
		if c < '0' || c > '9' || digits == 3 {
			return false
		}
		n, digits = n*10+int(c-'0'), digits+1
	}
	return parts == 4
}
