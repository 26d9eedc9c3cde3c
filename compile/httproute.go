package compile

import (
	"cmp"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"ramjet.dev/ramjet/match"
	"ramjet.dev/ramjet/match/vars"
)

// HTTPRoute is one route of a route source other than Ingress (SPEC §20),
// in compile's own terms: a translator (compile/gatewayapi for the Gateway
// API) has already attached it to its parents, chosen its host names and
// checked its references, so compile only places its rules in the table
// beside the Ingresses' paths. It is not annotation-shaped: every setting
// is a field.
type HTTPRoute struct {
	// Namespace and Name name the route in warnings and in the table.
	Namespace, Name string
	// Created is the creation timestamp: among routes the oldest wins a
	// tie, then namespace/name (the Gateway API's tie-break), and against
	// an Ingress the older object wins (SPEC §20).
	Created time.Time
	// Hostnames are the virtual hosts the rules are served on: names or
	// "*." wildcards, "" for the catch-all. Empty means the catch-all.
	Hostnames []string
	// Rules in declaration order; among equal matches the first wins.
	Rules []HTTPRouteRule
	// Kind is the route's Kind in warnings and sources: HTTPRoute when
	// "", or GRPCRouteKind, whose matches carry GRPC and whose backends
	// are dialled as gRPC.
	Kind string
	// Listener, when not zero, is the Gateway listener port and protocol
	// the route is attached to: its hosts are served only to requests
	// that arrived there (match.Listener, SPEC §20). Zero serves them on
	// every listener, as an Ingress's.
	Listener match.Listener
}

// HTTPRouteRule is one rule: its matches, any of which selects it, and
// the backend it sends to.
type HTTPRouteRule struct {
	// Field locates the rule in its object ("spec.rules[0]").
	Field string
	// Matches are ORed; none means a PathPrefix "/" match.
	Matches []HTTPRouteMatch
	// Backends share the rule's requests by weight (match.Split); an
	// invalid one's share answers 500, and so does every request of a
	// rule without a valid backend of positive weight.
	Backends []WeightedBackend
	// Rewrite, when set, changes the request before it is proxied (the
	// Gateway API's URLRewrite filter); FilterField locates it.
	Rewrite     *URLRewrite
	FilterField string
	// RequestHeaders and ResponseHeaders edit the headers the backend
	// receives and the client is answered with (the Gateway API's
	// RequestHeaderModifier and ResponseHeaderModifier filters).
	RequestHeaders, ResponseHeaders *HeaderModifier
	// Redirect, when set, answers with a redirect instead of proxying
	// (the Gateway API's RequestRedirect filter).
	Redirect *RequestRedirect
	// CORS, when set, is the rule's cross-origin policy (the Gateway
	// API's CORS filter, route_cors.go).
	CORS *CORSFilter
	// Mirrors copy each request, or a share of them, to other Services
	// (the Gateway API's RequestMirror filters); their answers are
	// dropped.
	Mirrors []RequestMirror
	// RequestTimeout and BackendRequestTimeout are the Gateway API's
	// timeouts; 0 keeps the router's. The first bounds the whole exchange
	// with the backend, retries included, the second each try to its last
	// response byte (match.Proxying); one that runs out before the
	// response head answers 504.
	RequestTimeout, BackendRequestTimeout time.Duration
	// Retry is the rule's retry (match.Retry), nil for none.
	Retry *match.Retry
	// Affinity, when set, is the rule's session persistence as the
	// session affinity ramjet has (SPEC §9): its backend's cookie, set
	// by this rule's routes (routeaffinity.go); AffinityField locates it.
	Affinity      *match.SessionAffinity
	AffinityField string
	// Refused, when set, is the warning the route's translator gave for a
	// value of the rule it does not serve (a filter type it lacks, one
	// given twice or without its settings): every request the rule
	// matches answers 500, as the Gateway API asks of a filter that
	// cannot be applied, and RefusedRules names the rule with it.
	Refused *Warning
}

// RequestMirror copies requests to a Service port: Numerator of
// Denominator requests, every one when Denominator is 0.
type RequestMirror struct {
	// Field locates the filter ("spec.rules[0].filters[2]").
	Field                  string
	Service                ServiceRef
	Numerator, Denominator int32
	// Invalid, when set, says why the Service cannot be mirrored to; the
	// rule is then served without this mirror.
	Invalid string
}

// RequestRedirect answers a request with a redirect to the same URL with
// the given parts replaced.
type RequestRedirect struct {
	// Field locates the filter ("spec.rules[0].filters[0]").
	Field string
	// Scheme and Hostname replace the request's; "" keeps them.
	Scheme, Hostname string
	// Port, when not 0, is written into the Location unless it is the
	// scheme's default; 0 writes none.
	Port int32
	// Path, when PathSet, replaces the whole path, or with ReplacePrefix
	// the part a PathPrefix match matched; the query is kept.
	Path                   string
	PathSet, ReplacePrefix bool
	// StatusCode is 301, 302, 303, 307 or 308; 0 means 302.
	StatusCode int
}

// HeaderModifier sets, adds to (appending ",value" to a present header)
// and removes headers, in that order.
type HeaderModifier struct {
	// Field locates the filter ("spec.rules[0].filters[1]").
	Field    string
	Set, Add []HeaderValue
	Remove   []string
}

// HeaderValue is a header name and value.
type HeaderValue struct{ Name, Value string }

// URLRewrite rewrites a request's host and path on its way to the backend.
type URLRewrite struct {
	// Hostname is the Host header the backend receives; "" keeps the
	// client's.
	Hostname string
	// Path, when PathSet, replaces the whole path, or with ReplacePrefix
	// only the part a PathPrefix match matched (the rest follows). The
	// query is kept.
	Path          string
	PathSet       bool
	ReplacePrefix bool
}

// HTTPRouteMatch is one match of a rule.
type HTTPRouteMatch struct {
	// Field locates the match ("spec.rules[0].matches[1]"), "" for the
	// implied match of a rule without any.
	Field string
	// Type is match.Exact, match.Prefix or match.Regex (the Gateway API's
	// Exact, PathPrefix and RegularExpression); Path is the value.
	Type match.PathType
	Path string
	// Method, Headers and QueryParams must match too ("" and nil: any);
	// a request that matches the path but not these goes on to the next
	// candidate by the Gateway API's precedence (match.Conditions).
	Method               string
	Headers, QueryParams []match.ValueMatch
	// GRPC, on a GRPCRoute's match, is its method match; compile sets
	// Type and Path from it (grpcPath). Nil there matches every method.
	GRPC *GRPCMethodMatch
}

// WeightedBackend is a Service port and its share of a rule's requests.
type WeightedBackend struct {
	Service ServiceRef
	Weight  int32
	// Field locates the backend reference ("spec.rules[0].backendRefs[0]").
	Field string
	// Invalid, when set, says why the reference cannot be followed (a
	// kind that is not a Service, a namespace no ReferenceGrant opens):
	// its share of the requests answers 500. A Service or port that does
	// not exist is found invalid by compile.
	Invalid string
	// RequestHeaders and ResponseHeaders edit the headers of the requests
	// sent to this backend and of its answers only, after the rule's (the
	// Gateway API's filters on a backendRef; match.Alternative.Snippet).
	RequestHeaders, ResponseHeaders *HeaderModifier
	// Rewrite, when set, rewrites the requests sent to this backend after
	// the rule's Rewrite, what it sets replacing what that set; Redirect
	// answers them with a redirect instead (the Gateway API's URLRewrite
	// and RequestRedirect on a backendRef; match.Alternative).
	// RewriteField locates the rewrite's filter.
	Rewrite      *URLRewrite
	RewriteField string
	Redirect     *RequestRedirect
	// Mirrors copy the requests sent to this backend, or a share of
	// them, to other Services, after the rule's Mirrors (the Gateway
	// API's RequestMirror on a backendRef; match.Alternative.Mirrors).
	Mirrors []RequestMirror
}

// HTTPRouteKind is the Kind of an HTTPRoute in warnings and sources.
const HTTPRouteKind = "HTTPRoute"

func (r *HTTPRoute) ref() Ref { return Ref{Kind: r.kind(), Namespace: r.Namespace, Name: r.Name} }

// buildHTTPRoutes places the routes' rules after the Ingresses' paths,
// routes oldest first, then by namespace/name, then in rule and match
// order, so that the first declaration of a key wins among routes as the
// Gateway API's precedence asks. Against an Ingress path with the same
// host and key the older object wins, the Ingress on equal age (SPEC §20).
func (b *builder) buildHTTPRoutes() {
	if len(b.snap.HTTPRoutes) == 0 {
		return
	}
	routes := slices.Clone(b.snap.HTTPRoutes)
	slices.SortStableFunc(routes, compareHTTPRoutes)
	var order int32
	for _, v := range b.vhostOrder {
		for _, r := range v.vh.Routes {
			order = max(order, r.Order)
		}
	}
	seen := make(map[condKey]*match.Route) // the routes with conditions
	for _, hr := range routes {
		if hr == nil {
			continue
		}
		hosts := hr.Hostnames
		if len(hosts) == 0 {
			hosts = []string{""}
		}
		for _, host := range hosts {
			if why := invalidHost(host); why != "" {
				b.warn(RuleRejected, hr.ref(), "spec.hostnames",
					"host "+strconv.Quote(host)+" "+why+"; the route is not served there")
				continue
			}
			v := b.routeVhost(hr.Listener, host)
			// A Gateway API wildcard matches any depth; the host, shared
			// with an Ingress of the same name, then does for both.
			if strings.HasPrefix(host, "*.") {
				v.vh.DeepWildcard = true
			}
			for i := range hr.Rules {
				rule := &hr.Rules[i]
				to, rws, sn, ok := b.ruleFilters(hr, rule)
				if ok {
					to.policy = ruleTimeouts(rule)
					to.backend, to.split = b.ruleBackend(hr, rule)
				}
				matches := rule.Matches
				if len(matches) == 0 {
					matches = []HTTPRouteMatch{{Field: rule.Field, Type: match.Prefix, Path: "/"}}
				}
				for _, m := range matches {
					order++
					m = servedMatch(hr, m)
					mto, msn := to, sn
					if ok && rule.Redirect != nil {
						var built bool
						if msn, built = b.redirectSnippet(hr, rule.Redirect, sn, m, "answer 500"); !built {
							mto, msn = refusedTarget(), nil
						}
					}
					if ok && mto.split != nil && slices.ContainsFunc(rule.Backends, func(wb WeightedBackend) bool { return wb.Redirect != nil }) {
						mto.split = b.matchRedirects(hr, rule, mto.split, m)
					}
					if r := b.declareHTTPRouteMatch(hr, v, m, mto, rws[m.Type], msn, order, seen); r != nil {
						b.noteRouteAffinity(hr, rule, r)
					}
				}
			}
		}
	}
}

// ruleFilters builds what the rule's filters do: mirrors, rewrites, header
// edits, CORS, and checks its redirect. A filter it refuses is not skipped:
// ok is false and the target answers the rule's requests 500, as the
// Gateway API asks of a filter that cannot be applied (HTTPRouteFilter),
// rather than let them fall through to another rule that lacks it.
func (b *builder) ruleFilters(hr *HTTPRoute, rule *HTTPRouteRule) (to routeTarget, rws map[match.PathType]*match.Rewrite, sn *match.Snippet, ok bool) {
	if to.response, ok = b.ruleMirrors(hr, rule); !ok {
		return refusedTarget(), nil, nil, false
	}
	if rws, sn, to.cors, ok = b.ruleOwnFilters(hr, rule); !ok {
		return refusedTarget(), nil, nil, false
	}
	return to, rws, sn, true
}

// ruleOwnFilters is ruleFilters less the mirrors: what the rule's own
// values decide, whatever the other objects (RefusedRules).
func (b *builder) ruleOwnFilters(hr *HTTPRoute, rule *HTTPRouteRule) (rws map[match.PathType]*match.Rewrite, sn *match.Snippet, cors *match.CORS, ok bool) {
	if rule.Refused != nil {
		return nil, nil, nil, false // the translator warned
	}
	if rws, ok = b.ruleRewrites(hr, rule); !ok {
		return nil, nil, nil, false
	}
	if sn, ok = b.ruleHeaders(hr, rule); !ok || !b.checkRedirect(hr, rule) {
		return nil, nil, nil, false
	}
	if cors, ok = b.ruleCORS(hr, rule); !ok {
		return nil, nil, nil, false
	}
	return rws, sn, cors, true
}

// servedMatch is m as the table holds it: a GRPCRoute's method match
// placed as a path (grpcPath).
func servedMatch(hr *HTTPRoute, m HTTPRouteMatch) HTTPRouteMatch {
	if hr.kind() == GRPCRouteKind {
		m.Type, m.Path, _ = grpcPath(m.GRPC)
	}
	return m
}

// backendRefused says what a backend's refused filters do.
const backendRefused = "the backend, whose share of the requests answers 500, is not served"

// RuleRefusal is a rule compile refuses as written, every request it
// matches answering 500, one backend of a rule, whose share does, or one
// match of a rule, which is not served (or, for a redirect that does not
// build, answers 500). Warning is the one Compile gives for it.
type RuleRefusal struct {
	// Rule is the rule's index in HTTPRoute.Rules.
	Rule int
	// Backend is the index in the rule's Backends of the backend refused
	// for its filters; -1 when the whole rule or a match is refused.
	Backend int
	// Match is the index in the rule's Matches of the match refused (0
	// for the implied match of a rule without any); -1 when the whole
	// rule or a backend is refused. A rule whose every match is refused
	// serves nothing.
	Match int
	// Incompatible: the whole rule is refused because its filters cannot
	// be combined (RequestRedirect beside URLRewrite).
	Incompatible bool
	Warning      Warning
}

// RefusedRules are the rules of hr, and the matches and backends of its
// other rules, that Compile refuses for their own values (a filter value
// it cannot apply as written, RequestRedirect beside URLRewrite, a
// mirror's share above one, a path or condition pattern that does not
// compile, a rule its translator refused, HTTPRouteRule.Refused), which
// no other object changes: a translator's status learns
// from them, rather than deciding again, what is not served.
func RefusedRules(hr *HTTPRoute) []RuleRefusal {
	var out []RuleRefusal
	for i := range hr.Rules {
		var b builder
		rule := &hr.Rules[i]
		last := func() Warning { return b.warnings[len(b.warnings)-1] }
		_, sn, _, ok := b.ruleOwnFilters(hr, rule)
		if ok {
			ok = b.checkMirrorShares(hr, rule)
		}
		if !ok {
			if rule.Refused != nil {
				out = append(out, RuleRefusal{Rule: i, Backend: -1, Match: -1, Warning: *rule.Refused})
			} else if len(b.warnings) > 0 {
				out = append(out, RuleRefusal{Rule: i, Backend: -1, Match: -1, Warning: last(),
					Incompatible: rule.Redirect != nil && rule.Rewrite != nil})
			}
			continue
		}
		matches := rule.Matches
		if len(matches) == 0 {
			matches = []HTTPRouteMatch{{Field: rule.Field, Type: match.Prefix, Path: "/"}}
		}
		for j, m := range matches {
			m = servedMatch(hr, m)
			n := len(b.warnings)
			if rule.Redirect != nil {
				b.redirectSnippet(hr, rule.Redirect, sn, m, "answer 500")
			}
			if len(b.warnings) == n {
				b.matchKey(hr, m)
			}
			if len(b.warnings) > n {
				out = append(out, RuleRefusal{Rule: i, Backend: -1, Match: j, Warning: last()})
			}
		}
		for j := range rule.Backends {
			wb := &rule.Backends[j]
			if wb.Invalid != "" {
				continue
			}
			if _, _, ok := b.backendFilters(hr, rule, wb); !ok && len(b.warnings) > 0 {
				out = append(out, RuleRefusal{Rule: i, Backend: j, Match: -1, Warning: last()})
			}
		}
	}
	return out
}

// refusedTarget answers 500: one invalid alternative takes every request.
func refusedTarget() routeTarget {
	return routeTarget{split: &match.Split{Alternatives: []match.Alternative{{Weight: 1}}}}
}

// compareHTTPRoutes orders routes oldest first, then by namespace/name.
func compareHTTPRoutes(x, y *HTTPRoute) int {
	if x == nil || y == nil {
		return 0
	}
	return cmp.Or(x.Created.Compare(y.Created), cmp.Compare(x.Namespace, y.Namespace), cmp.Compare(x.Name, y.Name))
}

// ruleBackend resolves the rule's backends: one valid backend of
// positive weight and nothing else is the route's Backend; otherwise the
// route shares its requests by a Split, in which an invalid reference
// (refused by the translator, or a Service or port that does not exist)
// answers 500 for its share, as the Gateway API asks (SPEC §20). A rule
// without backends answers 500 too, unless it redirects.
func (b *builder) ruleBackend(hr *HTTPRoute, rule *HTTPRouteRule) (*match.Backend, *match.Split) {
	if len(rule.Backends) == 0 {
		if rule.Redirect != nil {
			return nil, nil
		}
		b.warn(BackendUnsupported, hr.ref(), rule.Field+".backendRefs",
			"the rule names no backend; its requests answer 500")
		return nil, &match.Split{Alternatives: []match.Alternative{{Weight: 1}}}
	}
	// A backend with filters of its own is an alternative of a split,
	// even alone, which carries them (match.Alternative).
	filtered := slices.ContainsFunc(rule.Backends, func(wb WeightedBackend) bool {
		return wb.Invalid == "" && (wb.RequestHeaders != nil || wb.ResponseHeaders != nil || wb.Rewrite != nil || wb.Redirect != nil || len(wb.Mirrors) > 0)
	})
	var alts []match.Alternative
	if len(rule.Backends) > 1 || filtered {
		alts = make([]match.Alternative, len(rule.Backends))
	}
	var first, be *match.Backend
	positive, invalid := 0, 0
	for i := range rule.Backends {
		wb := &rule.Backends[i]
		if wb.Weight > 0 {
			positive++
		}
		be = b.ruleBackendRef(hr, wb)
		var sn *match.Snippet
		var rw *match.Rewrite
		var mirrors []*match.Mirror
		if be != nil {
			var ok bool
			if sn, rw, ok = b.backendFilters(hr, rule, wb); ok {
				mirrors, ok = b.backendMirrors(hr, wb)
			}
			if !ok {
				be = nil // its share answers 500, as an invalid reference's
			}
		}
		if be == nil {
			invalid++
		} else if first == nil && wb.Weight > 0 {
			first = be
		}
		if alts != nil {
			alts[i] = match.Alternative{Backend: be, Weight: int(max(wb.Weight, 0)), Snippet: sn, Rewrite: rw, Mirrors: mirrors}
			if be != nil && wb.Redirect != nil {
				alts[i].Redirect = cmp.Or(wb.Redirect.StatusCode, 302) // its snippet is the match's (matchRedirects)
			}
		}
	}
	if positive == 0 {
		b.warn(BackendUnsupported, hr.ref(), rule.Field+".backendRefs",
			"every backend has weight 0; the rule's requests answer 500")
	}
	if positive == 1 && invalid == 0 && first != nil && !filtered {
		return first, nil
	}
	if alts == nil { // one backend, invalid or of weight 0
		alts = []match.Alternative{{Backend: be, Weight: int(max(rule.Backends[0].Weight, 0))}}
	}
	return first, &match.Split{Alternatives: alts}
}

// backendFilters builds what a valid backendRef's own filters do to the
// requests sent to it: the header edits, its URLRewrite, and checks its
// RequestRedirect, which matchRedirects builds per match. ok is false,
// with a warning, when one cannot be applied as written: that backend's
// share then answers 500.
func (b *builder) backendFilters(hr *HTTPRoute, rule *HTTPRouteRule, wb *WeightedBackend) (sn *match.Snippet, rw *match.Rewrite, ok bool) {
	if sn, ok = b.headerSnippet(hr, wb.RequestHeaders, wb.ResponseHeaders, wb.Field+".filters", backendRefused); !ok {
		return nil, nil, false
	}
	if wb.Rewrite != nil {
		if rw, ok = b.urlRewrite(hr, wb.Rewrite, wb.RewriteField, rule.Matches, backendRefused); !ok {
			return nil, nil, false
		}
	}
	if rd := wb.Redirect; rd != nil {
		if why := redirectProblem(rd, wb.Rewrite != nil, rule.Matches); why != "" {
			b.warn(RuleRejected, hr.ref(), rd.Field+".requestRedirect", why+"; "+backendRefused)
			return nil, nil, false
		}
	}
	if !b.checkShares(hr, wb.Mirrors, backendRefused) {
		return nil, nil, false
	}
	return sn, rw, true
}

// backendMirrors builds a valid backendRef's mirrors as ruleMirrors does
// the rule's: one whose Service cannot be followed is left out with a
// warning, the backend served without it. ok is false, with a warning,
// when the rest does not build: the backend's share then answers 500.
func (b *builder) backendMirrors(hr *HTTPRoute, wb *WeightedBackend) ([]*match.Mirror, bool) {
	var out []*match.Mirror
	for _, rm := range wb.Mirrors {
		m, ok := b.mirrorTo(hr, rm, "the backend is served without this mirror")
		if !ok {
			continue
		}
		pm, err := match.NewMirror(*m)
		if err != nil {
			b.warn(RuleRejected, hr.ref(), rm.Field+".requestMirror", err.Error()+"; "+backendRefused)
			return nil, false
		}
		out = append(out, pm)
	}
	return out, true
}

// matchRedirects is split, the rule's, for its match m when a backendRef
// redirects: each such alternative's snippet is its header edits and
// then the redirect as m's requests build it (redirectSnippet). One that
// does not build answers its share 500.
func (b *builder) matchRedirects(hr *HTTPRoute, rule *HTTPRouteRule, split *match.Split, m HTTPRouteMatch) *match.Split {
	out := &match.Split{Alternatives: slices.Clone(split.Alternatives)}
	for i := range out.Alternatives {
		a := &out.Alternatives[i]
		if a.Redirect == 0 || i >= len(rule.Backends) || rule.Backends[i].Redirect == nil {
			continue
		}
		sn, built := b.redirectSnippet(hr, rule.Backends[i].Redirect, a.Snippet, m, "sent to "+rule.Backends[i].Field+" answer 500")
		if !built {
			*a = match.Alternative{Weight: a.Weight}
			continue
		}
		a.Snippet = sn
	}
	return out
}

// ruleBackendRef resolves one backendRef, or warns and returns nil when
// it is invalid.
func (b *builder) ruleBackendRef(hr *HTTPRoute, wb *WeightedBackend) *match.Backend {
	if wb.Invalid != "" {
		return nil // the translator warned
	}
	svc := wb.Service
	r := b.resolve(svc.Namespace, svc.Name, svc.Port)
	switch r.issue().problem {
	case ServiceNotFound, ExternalNameUnsupported:
		b.warn(r.issue().problem, hr.ref(), wb.Field+".name", r.issue().message+"; its share of the requests answers 500")
		return nil
	case ServicePortNotFound:
		b.warn(r.issue().problem, hr.ref(), wb.Field+".port", r.issue().message+"; its share of the requests answers 500")
		return nil
	}
	r.backend.used = true
	b.noteGRPCBackend(hr, wb.Field, r.backend)
	b.noteRouteBackend(hr, wb.Field, r.backend)
	return r.backend.b
}

// routeTarget is where a rule's routes send requests and what they do
// around the exchange: mirrors and timeouts.
type routeTarget struct {
	backend  *match.Backend
	split    *match.Split
	response *match.Response
	policy   *match.Policy
	cors     *match.CORS
}

// ruleMirrors builds the Response that sends the rule's mirrored copies,
// nil for none; a mirror whose Service cannot be followed is left out with
// a warning, and ok is false only when the rest does not build. A mirror goes to the Service port's
// endpoints (match.Mirror.Backend), with the request's Host and path.
func (b *builder) ruleMirrors(hr *HTTPRoute, rule *HTTPRouteRule) (*match.Response, bool) {
	if len(rule.Mirrors) == 0 {
		return nil, true
	}
	if !b.checkMirrorShares(hr, rule) {
		return nil, false
	}
	resp := match.Response{}
	for _, rm := range rule.Mirrors {
		m, ok := b.mirrorTo(hr, rm, "the rule is served without this mirror")
		if !ok {
			continue
		}
		if resp.Mirror == nil {
			resp.Mirror = m
		} else {
			resp.Mirrors = append(resp.Mirrors, m)
		}
	}
	if resp.Mirror == nil {
		return nil, true
	}
	out, err := match.NewResponse(resp)
	if err != nil {
		b.warn(RuleRejected, hr.ref(), rule.Mirrors[0].Field, err.Error()+"; the rule's requests answer 500")
		return nil, false
	}
	return out, true
}

// mirrorTo is the mirror rm copies to, or false when its Service cannot
// be followed: it is dropped, and the requests are served without it
// (Gateway API, RequestMirror backendRef), which without says.
func (b *builder) mirrorTo(hr *HTTPRoute, rm RequestMirror, without string) (*match.Mirror, bool) {
	if rm.Invalid != "" {
		return nil, false // the translator warned
	}
	svc := rm.Service
	r := b.resolve(svc.Namespace, svc.Name, svc.Port)
	if r.issue().problem != "" {
		b.warn(r.issue().problem, hr.ref(), rm.Field+".requestMirror.backendRef", r.issue().message+"; "+without)
		return nil, false
	}
	r.backend.used = true
	b.noteGRPCBackend(hr, rm.Field, r.backend)
	b.noteRouteBackend(hr, rm.Field, r.backend)
	return &match.Mirror{
		Target:    "http://" + svc.Name + "." + svc.Namespace + ".svc$request_uri",
		Backend:   r.backend.b,
		Numerator: int(rm.Numerator), Denominator: int(rm.Denominator),
	}, true
}

// checkMirrorShares refuses, warning, a rule with a mirror whose share is
// not between none and every request, whether or not its Service can be
// followed: the share is the rule's own value.
func (b *builder) checkMirrorShares(hr *HTTPRoute, rule *HTTPRouteRule) bool {
	return b.checkShares(hr, rule.Mirrors, "the rule's requests answer 500")
}

// checkShares is checkMirrorShares for mirrors; refused says what a
// refusal does.
func (b *builder) checkShares(hr *HTTPRoute, mirrors []RequestMirror, refused string) bool {
	for _, rm := range mirrors {
		if rm.Numerator < 0 || rm.Denominator < 0 || rm.Denominator > 0 && rm.Numerator > rm.Denominator {
			b.warn(RuleRejected, hr.ref(), rm.Field+".requestMirror",
				fmt.Sprintf("mirror share %d/%d is not between 0 and 1; %s", rm.Numerator, rm.Denominator, refused))
			return false
		}
	}
	return true
}

// ruleTimeouts is the rule's timeouts as a request policy, nil for none.
func ruleTimeouts(rule *HTTPRouteRule) *match.Policy {
	d := rule.RequestTimeout
	if t := rule.BackendRequestTimeout; t > 0 && (d == 0 || t < d) {
		d = t
	}
	if d <= 0 && rule.Retry == nil {
		return nil
	}
	// The exact bounds are the Proxying's, which bound each dial too; the
	// read timeout only keeps the router's own from cutting a longer one
	// short. The connect timeout stays the router's: raised to a long
	// route timeout it would hold a request on a dead endpoint's dial
	// rather than fail over to the next (proxy_next_upstream).
	return &match.Policy{ReadTimeout: d, Proxy: &match.Proxying{MaxTempFileSize: -1, Retry: rule.Retry,
		RequestTimeout: max(rule.RequestTimeout, 0), TryTimeout: max(rule.BackendRequestTimeout, 0)}}
}

// condKey identifies a route with conditions: of two with the same host,
// key and conditions the first declared is served.
type condKey struct {
	v    *vhost
	key  routeKey
	cond string
}

// conditions are m's method, header and query matches, or nil for none.
func conditions(m HTTPRouteMatch) *match.Conditions {
	if m.Method == "" && len(m.Headers) == 0 && len(m.QueryParams) == 0 {
		return nil
	}
	return &match.Conditions{Method: m.Method, Headers: m.Headers, Query: m.QueryParams}
}

// declareHTTPRouteMatch validates one match and adds its route to v unless
// an earlier declaration of the same key wins; it returns the route added,
// nil for none.
func (b *builder) declareHTTPRouteMatch(hr *HTTPRoute, v *vhost, m HTTPRouteMatch, to routeTarget, rw *match.Rewrite, sn *match.Snippet, order int32, seen map[condKey]*match.Route) *match.Route {
	key, re, c, ok := b.matchKey(hr, m)
	if !ok {
		return nil
	}
	r := b.routeSlab.new()
	*r = match.Route{
		Type:   m.Type,
		Path:   key,
		Source: match.Source{Kind: hr.kind(), Namespace: hr.Namespace, Name: hr.Name, Field: m.Field},
		Order:  order,
		Regexp: re,
		// Exact and PathPrefix are case-sensitive as every table path is.
		CaseSensitive: m.Type == match.Regex,
		Backend:       to.backend,
		Split:         to.split,
		Location:      match.Location{Response: to.response, Policy: to.policy, Rewrite: rw, Snippet: sn, CORS: to.cors},
	}
	if hr.kind() == GRPCRouteKind {
		_, _, r.OrderPath = grpcPath(m.GRPC)
	}
	if c != nil {
		r.When = c
		// A route with conditions never takes another's place: only one
		// with the same conditions is the same route.
		k := condKey{v, routeKey{m.Type, key}, conditionsKey(c)}
		if w := seen[k]; w != nil {
			b.conflict(RouteConflict, hr.ref(), m.Field,
				fmt.Sprintf("%s: %s path %q with the same method, header and query matches is declared by %s %s/%s %s, which goes first; this one is not served",
					hostLabel(v.vh.Name), m.Type, m.Path, w.Source.Kind, w.Source.Namespace, w.Source.Name, w.Source.Field),
				Ref{Kind: w.Source.Kind, Namespace: w.Source.Namespace, Name: w.Source.Name}, w.Source.Field)
			return nil
		}
		seen[k] = r
		v.vh.Routes = append(v.vh.Routes, r)
		return r
	}
	winner := v.route(routeKey{m.Type, key})
	if winner == nil && v.vh.Listener != (match.Listener{}) {
		// A listener's host holds only routes; the Ingresses' paths of
		// the same name are served there too (assembleViews).
		if base := b.vhostOf(v.vh.Name); base != nil {
			if w := base.route(routeKey{m.Type, key}); w != nil && !b.views.displaced[v.vh.Listener][w] {
				winner = w
			}
		}
	}
	if winner == nil {
		v.addRoute(r)
		return r
	}
	src := winner.Source
	if src.Kind == "" {
		// An Ingress path: the older object wins, the Ingress on equal age.
		if ing := b.ingressOf(src); ing != nil && hr.Created.Before(ing.obj.CreationTimestamp.Time) {
			where := "this one is not served"
			if l := v.vh.Listener; l != (match.Listener{}) {
				where = "this one is not served on listener " + l.String()
			}
			b.conflict(RouteConflict, ing.ref(), src.Field,
				fmt.Sprintf("%s: %s path %q is the same route as the older %s %s/%s; %s",
					hostLabel(v.vh.Name), m.Type, m.Path, hr.kind(), hr.Namespace, hr.Name, where),
				hr.ref(), m.Field)
			if v.route(routeKey{m.Type, key}) == winner {
				v.replaceRoute(winner, r)
			} else {
				b.views.displace(v.vh.Listener, winner)
				v.addRoute(r)
			}
			return r
		}
		b.conflict(RouteConflict, hr.ref(), m.Field,
			fmt.Sprintf("%s: %s path %q is the same route as Ingress %s, which is as old or older; this one is not served",
				hostLabel(v.vh.Name), m.Type, m.Path, src.Ingress()),
			ingressRef(src.Namespace, src.Name), src.Field)
		return nil
	}
	why := "an older " + src.Kind + ", or one as old that goes first by namespace/name"
	if src.Namespace == hr.Namespace && src.Name == hr.Name {
		why = "an earlier rule or match of this " + hr.kind()
	}
	b.conflict(RouteConflict, hr.ref(), m.Field,
		fmt.Sprintf("%s: %s path %q is the same route as %s; this one is not served", hostLabel(v.vh.Name), m.Type, m.Path, why),
		Ref{Kind: src.Kind, Namespace: src.Namespace, Name: src.Name}, src.Field)
	return nil
}

// matchKey is the table key of match m and its prepared conditions (nil
// for none), or false, with a warning, when the match is not served.
func (b *builder) matchKey(hr *HTTPRoute, m HTTPRouteMatch) (key string, re *match.Regexp, c *match.Conditions, ok bool) {
	key, re, why := b.routeKeyOf(hr, m)
	if why != "" {
		b.warn(PathRejected, hr.ref(), m.Field+".path", "path "+strconv.Quote(m.Path)+" "+why+"; it is not served")
		return "", nil, nil, false
	}
	if when := conditions(m); when != nil {
		var err error
		if c, err = match.NewConditions(*when); err != nil {
			b.warn(RuleRejected, hr.ref(), m.Field, err.Error()+"; this match is not served")
			return "", nil, nil, false
		}
	}
	return key, re, c, true
}

// conditionsKey encodes conditions prepared by match.NewConditions.
func conditionsKey(c *match.Conditions) string {
	var sb strings.Builder
	sb.WriteString(c.Method)
	for _, vs := range [][]match.ValueMatch{c.Headers, c.Query} {
		sb.WriteString("\x00")
		for _, v := range vs {
			fmt.Fprintf(&sb, "%q%q%t", v.Name, v.Value, v.Regex)
		}
	}
	return sb.String()
}

// httpRouteKey is routePath for a route match: the key the table matches,
// or why the path is refused.
func (b *builder) httpRouteKey(m HTTPRouteMatch) (key string, re *match.Regexp, why string) {
	path := m.Path
	// A pattern need not begin with "/" ("(?i)/api", ".*/v1"): the API
	// asks that only of Exact and PathPrefix values.
	if path == "" || path[0] != '/' && m.Type != match.Regex {
		return "", nil, "does not begin with /"
	}
	switch m.Type {
	case match.Exact, match.Prefix:
		if why := badSegment(path); why != "" {
			return "", nil, why
		}
		if path, why = decodedRoutePath(path); why != "" || m.Type == match.Exact {
			return path, nil, why
		}
		return strings.TrimRight(path, "/"), nil, ""
	case match.Regex:
		// The Gateway API's RegularExpression is case-sensitive, unlike an
		// Ingress pattern (SPEC §20).
		path = strings.TrimPrefix(path, "^")
		re, why := b.caseSensitiveRegex(path)
		return path, re, why
	}
	return "", nil, "has an unknown match type"
}

// decodedRoutePath is an Exact or PathPrefix value as the normalized
// request path it matches (SPEC §13), which is decoded: the Gateway API
// lets the value carry %XX escapes (HTTPPathMatch, all but %2F), the only
// way to write a space or a non-ASCII byte there. A decoding that is
// malformed, or has a NUL or a dot segment, matches no request.
func decodedRoutePath(path string) (string, string) {
	if strings.IndexByte(path, '%') < 0 {
		return path, ""
	}
	d, err := url.PathUnescape(path)
	switch {
	case err != nil:
		return "", "has a malformed percent-encoding"
	case strings.IndexByte(d, 0) >= 0:
		return "", "has an encoded NUL (%00), which a request path never matches (it answers 400)"
	}
	if why := dotSegment(d); why != "" {
		return "", "decoded " + why
	}
	return d, ""
}

// quoteBytes is regexp.QuoteMeta for a decoded path, which may hold bytes
// that are not UTF-8: each such byte is written as U+FFFD, which is what
// the regexp package reads it as in the subject (the table matched the
// exact bytes already).
func quoteBytes(s string) string {
	if utf8.ValidString(s) {
		return regexp.QuoteMeta(s)
	}
	var b strings.Builder
	for s != "" {
		r, n := utf8.DecodeRuneInString(s)
		if r == utf8.RuneError && n == 1 {
			b.WriteString(`\x{FFFD}`)
		} else {
			b.WriteString(regexp.QuoteMeta(s[:n]))
		}
		s = s[n:]
	}
	return b.String()
}

// caseSensitiveRegex compiles a Gateway API pattern once per compile, or
// says why it cannot be used.
func (b *builder) caseSensitiveRegex(pattern string) (*match.Regexp, string) {
	if b.caseSensitiveRegexps == nil {
		b.caseSensitiveRegexps = make(map[string]regexResult)
	}
	res, cached := b.caseSensitiveRegexps[pattern]
	if !cached {
		res.re, res.err = match.CompileCaseSensitiveRegex(pattern, 0)
		b.caseSensitiveRegexps[pattern] = res
	}
	if res.err != nil {
		return nil, "is not a usable regular expression: " + res.err.Error()
	}
	return res.re, ""
}

// ruleRewrites prepares the rule's URLRewrite for each kind of match it
// has, or warns and returns false when the rule cannot be served as
// written. A path replacement is literal text (a "$" is sent as written,
// vars.Escape) that keeps the query, and a prefix replacement applies to
// the segments a PathPrefix match matched (match.NativeSyntax on a Prefix
// route); on a regular expression only a full replacement is possible.
func (b *builder) ruleRewrites(hr *HTTPRoute, rule *HTTPRouteRule) (map[match.PathType]*match.Rewrite, bool) {
	if rule.Rewrite == nil {
		return nil, true
	}
	rw, ok := b.urlRewrite(hr, rule.Rewrite, rule.FilterField, rule.Matches, "the rule's requests answer 500")
	if !ok {
		return nil, false
	}
	out := make(map[match.PathType]*match.Rewrite, 1)
	for _, m := range rule.Matches {
		out[m.Type] = rw
	}
	return out, true
}

// urlRewrite prepares URLRewrite u, the filter at field, for a rule with
// matches, or warns and returns false when it cannot be applied as
// written; refused says what a refusal does.
func (b *builder) urlRewrite(hr *HTTPRoute, u *URLRewrite, field string, matches []HTTPRouteMatch, refused string) (*match.Rewrite, bool) {
	refuse := func(f, why string) (*match.Rewrite, bool) {
		b.warn(RuleRejected, hr.ref(), field+f, why+"; "+refused)
		return nil, false
	}
	if u.Hostname != "" {
		if why := invalidHost(u.Hostname); why != "" || strings.HasPrefix(u.Hostname, "*.") {
			return refuse(".urlRewrite.hostname", "hostname "+strconv.Quote(u.Hostname)+" is not a host name")
		}
	}
	if u.PathSet && (u.Path == "" && !u.ReplacePrefix || u.Path != "" && u.Path[0] != '/') {
		return refuse(".urlRewrite.path", "path "+strconv.Quote(u.Path)+" does not begin with /")
	}
	if u.ReplacePrefix {
		if i := slices.IndexFunc(matches, func(m HTTPRouteMatch) bool { return m.Type != match.Prefix }); i >= 0 {
			return refuse(".urlRewrite.path", "replacePrefixMatch needs PathPrefix matches; "+matches[i].Field+" is "+matches[i].Type.String())
		}
	}
	spec := match.Rewrite{Host: u.Hostname}
	if u.PathSet {
		spec.Target, spec.Syntax = vars.Escape(u.Path), match.NginxSyntax
		if u.ReplacePrefix {
			// An empty replacement leaves the rest of the path, which
			// "/" does too: "/foo/bar" → "/bar", "/foo" → "/".
			spec.Target, spec.Syntax = vars.Escape(cmp.Or(u.Path, "/")), match.NativeSyntax
		}
	}
	rw, err := match.NewRewrite(spec)
	if err != nil {
		return refuse(".urlRewrite", err.Error())
	}
	return rw, true
}

// ruleHeaders turns the rule's header modifiers into the steps of a
// snippet (§11.9), which already edits headers both ways: set is
// set_input_header and more_set_headers, add appends to a present request
// header (an if on $http_<name>) and is add_header always on responses,
// remove is more_clear_input_headers and more_clear_headers. A value is
// literal text (a "$" is sent as written, vars.Escape); an empty one would
// clear the header, so it refuses the rule.
func (b *builder) ruleHeaders(hr *HTTPRoute, rule *HTTPRouteRule) (*match.Snippet, bool) {
	return b.headerSnippet(hr, rule.RequestHeaders, rule.ResponseHeaders, rule.Field+".filters", "the rule's requests answer 500")
}

// headerSnippet is ruleHeaders for a request and a response modifier
// (either nil); refused says what a refusal does.
func (b *builder) headerSnippet(hr *HTTPRoute, reqHM, respHM *HeaderModifier, field, refused string) (*match.Snippet, bool) {
	if reqHM == nil && respHM == nil {
		return nil, true
	}
	var ops []match.SnippetOp
	for _, hm := range []*HeaderModifier{reqHM, respHM} {
		if hm == nil {
			continue
		}
		request := hm == reqHM
		for _, name := range hm.Remove {
			if !validHeaderName(name) {
				b.warn(RuleRejected, hr.ref(), hm.Field, "header name "+strconv.Quote(name)+" is not a token; "+refused)
				return nil, false
			}
		}
		for _, h := range slices.Concat(hm.Set, hm.Add) {
			if h.Value == "" || !validHeaderName(h.Name) {
				b.warn(RuleRejected, hr.ref(), hm.Field, "header "+strconv.Quote(h.Name)+": "+strconv.Quote(h.Value)+
					" is not served (an empty value or a name that is not a token); "+refused)
				return nil, false
			}
		}
		for _, h := range hm.Set {
			if request {
				ops = append(ops, match.SnippetOp{Kind: match.OpSetInput, Name: h.Name, Value: vars.Escape(h.Value), Always: true})
			} else {
				ops = append(ops, match.SnippetOp{Kind: match.OpSetHeader, Name: h.Name, Value: vars.Escape(h.Value)})
			}
		}
		for _, h := range hm.Add {
			value := vars.Escape(h.Value)
			if !request {
				ops = append(ops, match.SnippetOp{Kind: match.OpAddHeader, Name: h.Name, Value: value, Always: true})
				continue
			}
			v := "http_" + strings.ReplaceAll(strings.ToLower(h.Name), "-", "_")
			ops = append(ops,
				match.SnippetOp{Kind: match.OpIf, Cond: &match.SnippetCond{Var: v, Op: "=", Operand: ""},
					Then: []match.SnippetOp{{Kind: match.OpSetInput, Name: h.Name, Value: value, Always: true}}},
				match.SnippetOp{Kind: match.OpIf, Cond: &match.SnippetCond{Var: v, Op: "!=", Operand: ""},
					Then: []match.SnippetOp{{Kind: match.OpSetInput, Name: h.Name, Value: "$" + v + "," + value, Always: true}}})
		}
		for _, name := range hm.Remove {
			kind := match.OpClearHeader
			if request {
				kind = match.OpClearInput
			}
			ops = append(ops, match.SnippetOp{Kind: kind, Name: name})
		}
	}
	sn, err := match.NewSnippet(match.Snippet{Ops: ops})
	if err != nil {
		b.warn(RuleRejected, hr.ref(), field, err.Error()+"; "+refused)
		return nil, false
	}
	return sn, true
}

// validHeaderName reports an RFC 9110 token, so no "*" clears a family.
func validHeaderName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#%&'+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}

// checkRedirect refuses a RequestRedirect this table cannot answer as
// asked, warning on its field.
func (b *builder) checkRedirect(hr *HTTPRoute, rule *HTTPRouteRule) bool {
	rd := rule.Redirect
	if rd == nil {
		return true
	}
	if why := redirectProblem(rd, rule.Rewrite != nil, rule.Matches); why != "" {
		b.warn(RuleRejected, hr.ref(), rd.Field+".requestRedirect", why+"; the rule's requests answer 500")
		return false
	}
	return true
}

// redirectProblem says why RequestRedirect rd, beside a URLRewrite when
// rewrites, of a rule with matches cannot be answered as asked; "" when
// it can.
func redirectProblem(rd *RequestRedirect, rewrites bool, matches []HTTPRouteMatch) string {
	switch {
	case rewrites:
		return "RequestRedirect and URLRewrite cannot be combined"
	case strings.ContainsAny(rd.Path, "?#"):
		return "a redirect path with \"?\" or \"#\" is not served"
	case rd.Scheme != "" && rd.Scheme != "http" && rd.Scheme != "https":
		return "scheme " + strconv.Quote(rd.Scheme) + " is not http or https"
	case rd.Hostname != "" && (invalidHost(rd.Hostname) != "" || strings.HasPrefix(rd.Hostname, "*.")):
		return "hostname " + strconv.Quote(rd.Hostname) + " is not a host name"
	case rd.Port < 0 || rd.Port > 65535:
		return "port " + strconv.Itoa(int(rd.Port)) + " is out of range"
	case rd.PathSet && (rd.Path == "" && !rd.ReplacePrefix || rd.Path != "" && rd.Path[0] != '/'):
		return "path " + strconv.Quote(rd.Path) + " does not begin with /"
	case rd.StatusCode != 0 && !slices.Contains([]int{301, 302, 303, 307, 308}, rd.StatusCode):
		return "status " + strconv.Itoa(rd.StatusCode) + " is not 301, 302, 303, 307 or 308"
	case rd.ReplacePrefix && slices.ContainsFunc(matches, func(m HTTPRouteMatch) bool { return m.Type != match.Prefix }):
		return "replacePrefixMatch needs PathPrefix matches"
	}
	return ""
}

// redirectSnippet is the rule's header steps followed by the redirect for
// match m, as snippet returns (§11.9): the Location is built from the
// request's $scheme, $host and $request_uri with the filter's parts, as
// literal text, in their place; a prefix replacement takes the rest of the path from a
// regular expression on $uri, and a replaced path keeps $args.
func (b *builder) redirectSnippet(hr *HTTPRoute, rd *RequestRedirect, headers *match.Snippet, m HTTPRouteMatch, refused string) (*match.Snippet, bool) {
	code := cmp.Or(rd.StatusCode, 302)
	portless := cmp.Or(rd.Scheme, "$scheme") + "://" + cmp.Or(rd.Hostname, "$host")
	base := portless
	// Without a scheme the request's is kept, and without a port too the
	// listener's: on a route of one listener both are known (Gateway API,
	// RequestRedirect port).
	port, scheme := rd.Port, rd.Scheme
	if l := hr.Listener; scheme == "" && l != (match.Listener{}) {
		scheme = "http"
		if l.TLS {
			scheme = "https"
		}
		if port == 0 {
			port = l.Port
		}
	}
	if port != 0 && !(port == 80 && scheme == "http" || port == 443 && scheme == "https") {
		base += ":" + strconv.Itoa(int(port))
	}
	ret := func(v string) match.SnippetOp { return match.SnippetOp{Kind: match.OpReturn, Code: code, Value: v} }
	withArgs := func(v string) []match.SnippetOp {
		return []match.SnippetOp{
			{Kind: match.OpIf, Cond: &match.SnippetCond{Var: "args", Op: "=", Operand: ""}, Then: []match.SnippetOp{ret(v)}},
			{Kind: match.OpIf, Cond: &match.SnippetCond{Var: "args", Op: "!=", Operand: ""}, Then: []match.SnippetOp{ret(v + "?$args")}},
		}
	}
	var ops []match.SnippetOp
	if headers != nil {
		ops = slices.Clone(headers.Ops)
	}
	redirect := func(base string) []match.SnippetOp {
		switch {
		case !rd.PathSet:
			return []match.SnippetOp{ret(base + "$request_uri")}
		case !rd.ReplacePrefix:
			return withArgs(base + vars.Escape(rd.Path))
		}
		// The Gateway API's ReplacePrefixMatch table: the matched prefix
		// alone becomes the replacement ("/" for an empty one), a trailing
		// slash after it is kept, and the rest follows without doubling
		// the slash between them. The rest is taken from the decoded
		// $uri, any byte included, and written encoded again, so the
		// Location names the path the request did.
		// The prefix as the table matches it: $uri is decoded, as the
		// key is (decodedRoutePath).
		prefix := m.Path
		if d, why := decodedRoutePath(prefix); why == "" {
			prefix = d
		}
		key := quoteBytes(strings.TrimRight(prefix, "/"))
		repl := vars.Escape(strings.TrimRight(rd.Path, "/"))
		rest := withArgs(base + repl + "$1")
		for i := range rest {
			rest[i].Then[0].EscapeCaptures = true
		}
		return []match.SnippetOp{
			{Kind: match.OpIf, Cond: &match.SnippetCond{Var: "uri", Op: "~", Operand: "^" + key + "$"},
				Then: withArgs(base + cmp.Or(repl, "/"))},
			{Kind: match.OpIf, Cond: &match.SnippetCond{Var: "uri", Op: "~", Operand: "^" + key + "(/(?s:.*))$"},
				Then: rest},
		}
	}
	if scheme == "" && (rd.Port == 80 || rd.Port == 443) {
		// The request's scheme decides whether the port is its default,
		// which the Location leaves out (Gateway API, RequestRedirect port).
		def := "http"
		if rd.Port == 443 {
			def = "https"
		}
		ops = append(ops, match.SnippetOp{Kind: match.OpIf, Cond: &match.SnippetCond{Var: "scheme", Op: "=", Operand: def}, Then: redirect(portless)})
	}
	ops = append(ops, redirect(base)...)
	sn, err := match.NewSnippet(match.Snippet{Ops: ops})
	if err != nil {
		b.warn(RuleRejected, hr.ref(), rd.Field+".requestRedirect", "the redirect does not build: "+err.Error()+"; "+m.Field+"'s requests "+refused)
		return nil, false
	}
	return sn, true
}
