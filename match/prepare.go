package match

import (
	"errors"
	"net/netip"
	"strconv"
	"strings"

	"ramjet.dev/ramjet/balance"
	"ramjet.dev/ramjet/match/urltemplate"
)

// ValueError is a value in a Spec that New can neither serve nor prepare.
// It names where the value is: the virtual host and, for a route's value,
// the route (its type, path and source); for a backend's value, the
// backend's ID instead.
type ValueError struct {
	Host  string
	Route *Route // nil for a host's own value or a backend's
	// Backend is the backend's ID, for a value of a backend.
	Backend string
	// Field is the value's field, from the route, host or backend:
	// "Rewrite", "FallbackLocation.Auth.External.URL",
	// "Traffic.Canary.Backend".
	Field string
	Err   error
}

func (e *ValueError) Error() string {
	var b strings.Builder
	b.WriteString("match: ")
	if e.Backend != "" {
		b.WriteString("backend " + strconv.Quote(e.Backend))
	} else {
		b.WriteString("host " + strconv.Quote(e.Host))
		if r := e.Route; r != nil {
			b.WriteString(" route " + r.Type.String() + " " + strconv.Quote(r.Path))
			if r.Source != (Source{}) {
				b.WriteString(" (" + r.Source.String() + ")")
			}
		}
	}
	b.WriteString(" " + e.Field + ": " + e.Err.Error())
	return b.String()
}

func (e *ValueError) Unwrap() error { return e.Err }

// preparer makes the feature values of a Spec what their constructors
// make: a value written as a struct literal gets the fields its
// constructor derives, or New fails naming it. A value already built by
// its constructor is used as it is. New never writes to a feature value,
// which may be shared by several tables built at once: it prepares a copy
// and points the route, host or backend (which belong to the one table) at
// it. A literal shared by several routes is prepared once and stays
// shared.
type preparer struct {
	cors    map[*CORS]*CORS
	auth    map[*Auth]*Auth
	rewrite map[*Rewrite]*Rewrite
	policy  map[*Policy]*Policy
}

// fieldError is a problem with a field inside a feature value; the caller
// names the value.
type fieldError struct {
	field string
	err   error
}

func (e *fieldError) Error() string { return e.field + ": " + e.err.Error() }

// A feature is a value of a host, route or backend that New prepares
// (or only checks), named by its field, the ValueError's Field. prepare
// points the field at the prepared copy of a value written as a literal.
// Preparing a value that holds prepared values (a literal Response with a
// Mirror from NewMirror, as compile builds them) gives what preparing the
// literals does: TestPrepareTwice holds every feature listed here to it.
type feature[T any] struct {
	field   string
	prepare func(*preparer, T) error
}

// locationFeatures are prepared on every host's fallback and on every
// route routeHasFeatures reports. A route's are named as its own fields
// ("Auth"), which Route's embedded Location makes them; a fallback's
// within FallbackLocation.
var locationFeatures = []feature[*Location]{
	{"CORS", func(p *preparer, l *Location) error { p.prepareCORS(&l.CORS); return nil }},
	{"Auth", func(p *preparer, l *Location) error { return p.prepareAuth(&l.Auth) }},
	{"Rewrite", func(p *preparer, l *Location) error { return p.prepareRewrite(&l.Rewrite) }},
	{"Policy", func(p *preparer, l *Location) error { return p.preparePolicy(&l.Policy) }},
	{"Response", func(p *preparer, l *Location) error { return p.prepareResponse(&l.Response) }},
}

var hostFeatures = []feature[*VirtualHost]{
	{"Actions.Fallback", func(_ *preparer, vh *VirtualHost) error {
		if a := vh.Actions; a != nil {
			return checkRedirect(a.Fallback)
		}
		return nil
	}},
}

// routeFeatures are prepared only on a route routeHasFeatures reports.
var routeFeatures = []feature[*Route]{
	{"Redirect", func(_ *preparer, r *Route) error { return checkRedirect(r.Redirect) }},
	{"Regexp", func(_ *preparer, r *Route) error { return prepareRegexp(r) }},
	{"When", func(_ *preparer, r *Route) error {
		if c := r.When; c != nil && !c.ready {
			out, err := NewConditions(*c)
			if err != nil {
				return err
			}
			r.When = out
		}
		return nil
	}},
	{"Split", func(p *preparer, r *Route) error {
		if r.Split != nil {
			return p.prepareSplit(r.Split)
		}
		return nil
	}},
}

// routeHasFeatures reports whether r has a value of locationFeatures or
// routeFeatures: most routes have none, and are checked without a call.
func routeHasFeatures(r *Route) bool {
	return r.CORS != nil || r.Auth != nil || r.Rewrite != nil || r.Policy != nil || r.Response != nil || r.Redirect != nil ||
		r.Type == Regex || r.CaseSensitive || r.When != nil || r.Split != nil
}

// inField is err's field within the feature's field, and err without it.
func inField(field string, err error) (string, error) {
	var fe *fieldError
	if errors.As(err, &fe) {
		return field + "." + fe.field, fe.err
	}
	return field, err
}

// host prepares every value of the host and its routes, in table order,
// and returns the first it cannot.
func (p *preparer) host(vh *VirtualHost) error {
	if field, err := prepareAll(p, locationFeatures, &vh.FallbackLocation); err != nil {
		return &ValueError{Host: vh.Name, Field: "FallbackLocation." + field, Err: err}
	}
	if field, err := prepareAll(p, hostFeatures, vh); err != nil {
		return &ValueError{Host: vh.Name, Field: field, Err: err}
	}
	for _, r := range vh.Routes {
		if !routeHasFeatures(r) {
			continue
		}
		field, err := prepareAll(p, locationFeatures, &r.Location)
		if err == nil {
			field, err = prepareAll(p, routeFeatures, r)
		}
		if err != nil {
			return &ValueError{Host: vh.Name, Route: r, Field: field, Err: err}
		}
	}
	return nil
}

// prepareAll prepares v's value of each feature and returns the first it
// cannot, with its field.
func prepareAll[T any](p *preparer, features []feature[T], v T) (string, error) {
	for _, f := range features {
		if err := f.prepare(p, v); err != nil {
			return inField(f.field, err)
		}
	}
	return "", nil
}

// The prepare methods take the field holding a value and point it at the
// prepared copy; they write nothing when the value is ready, as it is in a
// table compile built.

// prepareCORS cannot fail: every CORS literal has a policy NewCORS serves.
func (p *preparer) prepareCORS(field **CORS) {
	c := *field
	if c == nil || c.hdr.maxAge != nil {
		return
	}
	out, ok := p.cors[c]
	if !ok {
		if p.cors == nil {
			p.cors = make(map[*CORS]*CORS)
		}
		out = NewCORS(*c)
		p.cors[c] = out
	}
	*field = out
}

func (p *preparer) prepareRewrite(field **Rewrite) error {
	rw := *field
	if rw == nil || rw.ready {
		return nil
	}
	out, ok := p.rewrite[rw]
	if !ok {
		var err error
		if out, err = NewRewrite(*rw); err != nil {
			return err
		}
		if p.rewrite == nil {
			p.rewrite = make(map[*Rewrite]*Rewrite)
		}
		p.rewrite[rw] = out
	}
	*field = out
	return nil
}

// prepareAuth prepares the basic authentication's challenge and parses
// the external service's URLs, as NewBasicAuth, ParseAuthURL and
// SigninURL do: a sign-in URL written as a literal is taken as the whole
// URL, redirect parameter included.
func (p *preparer) prepareAuth(field **Auth) error {
	a := *field
	if a == nil || authReady(a) {
		return nil
	}
	if out, ok := p.auth[a]; ok {
		*field = out
		return nil
	}
	out := *a
	if b := a.Basic; b != nil && b.challenge == nil {
		out.Basic = NewBasicAuth(*b)
	}
	if x := a.External; x != nil {
		ext := *x
		if !x.URL.Parsed() {
			u, err := urltemplate.ParseAuthURL(x.URL.Raw, false)
			if err != nil {
				return &fieldError{"External.URL", err}
			}
			ext.URL = u
		}
		if x.Signin != nil && !x.Signin.Parsed() {
			u, err := urltemplate.ParseAuthURL(x.Signin.Raw, true)
			if err != nil {
				return &fieldError{"External.Signin", err}
			}
			ext.Signin = &u
		}
		out.External = &ext
	}
	if p.auth == nil {
		p.auth = make(map[*Auth]*Auth)
	}
	p.auth[a] = &out
	*field = &out
	return nil
}

func authReady(a *Auth) bool {
	if a.Basic != nil && a.Basic.challenge == nil {
		return false
	}
	x := a.External
	return x == nil || x.URL.Parsed() && (x.Signin == nil || x.Signin.Parsed())
}

// prepareRegexp compiles a Regex route's pattern from its Path when the
// route has none, as compile does with CompileRegex; a route keeps a
// Regexp it was given.
func prepareRegexp(r *Route) error {
	if r.Type != Regex {
		if r.CaseSensitive {
			return errors.New("CaseSensitive is for Regex routes; " + r.Type.String() + " paths are matched as written")
		}
		return nil
	}
	if r.Regexp != nil && (r.Regexp.linear != nil || r.Regexp.backtrk != nil) {
		if r.Regexp.caseSensitive != r.CaseSensitive {
			return errors.New("CaseSensitive is " + strconv.FormatBool(r.CaseSensitive) + " but the Regexp given was compiled otherwise")
		}
		return nil
	}
	compile := CompileRegex
	if r.CaseSensitive {
		compile = CompileCaseSensitiveRegex
	}
	re, err := compile(r.Path, 0)
	if err != nil {
		return err
	}
	r.Regexp = re
	return nil
}

// checkRedirect refuses a status the router cannot answer a redirect with.
func checkRedirect(r *Redirect) error {
	if r != nil && (r.Code < 300 || r.Code > 308) {
		return &fieldError{"Code", errors.New(strconv.Itoa(r.Code) + " is not a redirect status (300 to 308)")}
	}
	return nil
}

// preparePolicy masks the source ranges and writes IPv4 ones in their
// 4-byte form, as compile does and as Policy.Admits compares them; a range
// that is not valid is refused, and so is a rate limit without the zone
// its counters are kept by.
func (p *preparer) preparePolicy(field **Policy) error {
	pol := *field
	if pol == nil {
		return nil
	}
	if out, ok := p.policy[pol]; ok {
		*field = out
		return nil
	}
	if err := checkRetry(retryOf(pol)); err != nil {
		return err
	}
	if err := checkRouteTimeouts(proxyingOf(pol)); err != nil {
		return err
	}
	if err := checkHeaderRewrites(proxyingOf(pol)); err != nil {
		return err
	}
	allow, err := canonicalRanges(pol.Allow)
	if err != nil {
		return &fieldError{"Allow", err}
	}
	deny, err := canonicalRanges(pol.Deny)
	if err != nil {
		return &fieldError{"Deny", err}
	}
	var exempt []netip.Prefix
	if rl := pol.RateLimit; rl != nil {
		if rl.Zone == "" {
			return &fieldError{"RateLimit.Zone", errors.New("is empty: a limit's counters are kept by zone")}
		}
		if exempt, err = canonicalRanges(rl.Exempt); err != nil {
			return &fieldError{"RateLimit.Exempt", err}
		}
	}
	if allow == nil && deny == nil && exempt == nil {
		return nil
	}
	out := *pol
	if allow != nil {
		out.Allow = allow
	}
	if deny != nil {
		out.Deny = deny
	}
	if exempt != nil {
		rl := *pol.RateLimit
		rl.Exempt = exempt
		out.RateLimit = &rl
	}
	if p.policy == nil {
		p.policy = make(map[*Policy]*Policy)
	}
	p.policy[pol] = &out
	*field = &out
	return nil
}

// canonicalRanges returns the ranges masked and unmapped, or nil when they
// already are.
func canonicalRanges(ranges []netip.Prefix) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for i, r := range ranges {
		if !r.IsValid() {
			return nil, errors.New("holds a range that is not valid (" + r.String() + ")")
		}
		c := r.Masked()
		if a := c.Addr(); a.Is4In6() {
			c = netip.PrefixFrom(a.Unmap(), c.Bits()-96)
		}
		if c != r && out == nil {
			out = make([]netip.Prefix, len(ranges))
			copy(out, ranges[:i])
		}
		if out != nil {
			out[i] = c
		}
	}
	return out, nil
}

// backendFeatures check the backends' canaries and session affinity, and
// give a canary weight total under 100 the 100 CanaryTotal reads it as.
var backendFeatures = []feature[*Backend]{
	{"HashSubset", func(_ *preparer, be *Backend) error {
		if be.HashSubset < 0 || be.HashSubset > 0 && be.Algorithm != balance.Hash {
			return errors.New("is set without the Hash algorithm, or negative")
		}
		return nil
	}},
	{"Traffic", func(_ *preparer, be *Backend) error { return prepareTraffic(be) }},
}

func prepareTraffic(be *Backend) error {
	t := be.Traffic
	if t == nil {
		return nil
	}
	if c := t.Canary; c != nil {
		switch {
		case c.Backend == nil:
			return &fieldError{"Canary.Backend", errors.New("is nil")}
		case c.Sticky && (c.Backend.Traffic == nil || c.Backend.Traffic.Affinity == nil):
			return &fieldError{"Canary.Sticky", errors.New("is set, but the canary's backend has no session affinity to keep a session by")}
		}
		if c.WeightTotal != CanaryTotal(c.WeightTotal) {
			canary := *c
			canary.WeightTotal = CanaryTotal(c.WeightTotal)
			traffic := *t
			traffic.Canary = &canary
			be.Traffic = &traffic
		}
	}
	if a := t.Affinity; a != nil && a.CookieName == "" {
		return &fieldError{"Affinity.CookieName", errors.New("is empty")}
	}
	return nil
}

// backends prepares the backends' values, in order.
func (p *preparer) backends(backends []*Backend) error {
	for _, be := range backends {
		for _, f := range backendFeatures {
			if err := f.prepare(p, be); err != nil {
				field, err := inField(f.field, err)
				return &ValueError{Backend: be.ID, Field: field, Err: err}
			}
		}
	}
	return nil
}
