package compile

import (
	"cmp"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"regexp/syntax"
	"slices"
	"strconv"
	"strings"

	networkingv1 "k8s.io/api/networking/v1"

	"ramjet.dev/ramjet/match"
)

// Canary (SPEC §10): ingress-nginx's canary annotations. A canary Ingress
// creates no hosts, routes, fallbacks or certificates; each of its paths
// attaches its backend, with the canary rules, to the backend of the
// primary route with the same host, path and path type, which then carries
// it wherever that backend is used. Session affinity (SPEC §9) is in
// affinity.go; both share trafficValues.

func init() {
	registerAnnotations(map[string]annotationSpec{
		"canary":                   {apply: applyCanary},
		"canary-weight":            {apply: applyCanaryWeight},
		"canary-weight-total":      {apply: applyCanaryWeightTotal},
		"canary-by-header":         {apply: applyCanaryHeader},
		"canary-by-header-value":   {apply: applyCanaryHeaderValue},
		"canary-by-header-pattern": {apply: applyCanaryHeaderPattern},
		"canary-by-cookie":         {apply: applyCanaryCookie},
	})
}

// trafficValues are an Ingress's canary and session affinity annotations.
type trafficValues struct {
	// canaryKey is the annotation that made the Ingress a canary (value
	// true), "" for an ordinary Ingress.
	canaryKey string
	// canaryRules holds the canary rules as parsed; canaryRuleKeys the
	// annotations that set any, for the warning when the Ingress is not a
	// canary.
	canaryRules    match.Canary
	weightTotal    int // as written; 0 when unset
	canaryRuleKeys []string

	affinity affinityValues
}

func (v *trafficValues) ruleSet(key string) { v.canaryRuleKeys = append(v.canaryRuleKeys, key) }

var applyCanary = boolAnnotation(func(v *annotationValues, key string, on bool) {
	v.trafficW().canaryKey = ""
	if on {
		v.trafficW().canaryKey = key
	}
})

// canaryInt parses an integer as ingress-nginx's canary-weight does:
// decimal, optionally signed, as written (strconv.Atoi), so that a value
// it refuses, a space around the digits included, is refused here too
// (it then weighs 0, of a total of 100).
func canaryInt(key, value string) (int, error) {
	n, err := strconv.Atoi(value)
	if err != nil || n < -1<<31 || n > 1<<31-1 {
		return 0, fmt.Errorf("%s %q is not a whole number; not applied", key, value)
	}
	return n, nil
}

func applyCanaryWeight(v *annotationValues, key, value string) error {
	n, err := canaryInt(key, value)
	if err != nil {
		return err
	}
	v.trafficW().canaryRules.Weight = n
	v.trafficW().ruleSet(key)
	return nil
}

func applyCanaryWeightTotal(v *annotationValues, key, value string) error {
	n, err := canaryInt(key, value)
	if err != nil {
		return err
	}
	v.trafficW().weightTotal = n
	v.trafficW().ruleSet(key)
	return nil
}

// canaryName checks a header or cookie name: an HTTP token, as nginx can
// only look up such names, and under ingress-nginx's prefix one its
// validator passes (canary/main.go, parser.BasicCharsRegex): a name it
// refuses is unset there, so its rule decides nothing.
func canaryName(key, value, what string) (string, error) {
	if value == "" || !isToken(value) {
		return "", fmt.Errorf("%s %q is not a valid %s name; not applied", key, value, what)
	}
	if !native(key) && !matches(reBasicChars, true)(value) {
		return "", fmt.Errorf("%s %q holds a byte ingress-nginx's validator refuses (only letters, digits and /-._~:); not applied, as there", key, value)
	}
	return value, nil
}

func applyCanaryHeader(v *annotationValues, key, value string) error {
	name, err := canaryName(key, value, "header")
	if err != nil {
		return err
	}
	// nginx finds the header through $http_<name>, where '-' and '_'
	// are the same character: X_Canary reads the X-Canary header.
	v.trafficW().canaryRules.Header = http.CanonicalHeaderKey(strings.ReplaceAll(name, "_", "-"))
	v.trafficW().ruleSet(key)
	return nil
}

// applyCanaryHeaderValue reads the value; under ingress-nginx's prefix as
// its validator (canary/main.go, parser.BasicCharsRegex with spaces
// removed) and parser (trimmed) read it: a value it refuses is unset
// there, so the header decides by "always" and "never", as here.
func applyCanaryHeaderValue(v *annotationValues, key, value string) error {
	if !native(key) {
		if !matches(reBasicChars, true)(value) {
			return fmt.Errorf("%s %q holds a byte ingress-nginx's validator refuses (only letters, digits and /-._~:); not applied, so the header decides by \"always\" and \"never\"", key, value)
		}
		value = strings.TrimSpace(value)
	}
	if strings.ContainsAny(value, "\r\n\x00") {
		return fmt.Errorf("%s %q holds a line break or NUL, which no header value can; not applied", key, value)
	}
	v.trafficW().canaryRules.HeaderValue = value
	v.trafficW().ruleSet(key)
	return nil
}

// applyCanaryHeaderPattern reads the pattern as ingress-nginx does. Its
// validator (canary/main.go:76-77, parser.IsValidRegex) refuses a value
// with other bytes than letters, digits and /-._~:^$[](){}*+?|&=\, and the
// pattern is then unset: the header decides by "always" and "never" only.
// Otherwise the pattern is compiled as Go's regexp (RE2), matching
// anywhere in the value, case-sensitively, as nginx's ngx.re.match does.
// One that PCRE cannot compile either (an unclosed group or class, a
// repeat of nothing) makes balancer.lua:243-250 send every request with
// the header to the primary, the cookie and weight unasked: so does the
// router (match.Canary.HeaderPatternError). One only PCRE can run
// (look-ahead, back-references, possessive repeats) is not applied.
func applyCanaryHeaderPattern(v *annotationValues, key, value string) error {
	if value == "" {
		return fmt.Errorf("%s is empty; not applied", key)
	}
	if !canaryPatternRE.MatchString(value) {
		return fmt.Errorf("%s %q holds a byte ingress-nginx's validator refuses (only letters, digits and /-._~:^$[](){}*+?|&=\\); not applied, so the header decides by \"always\" and \"never\"", key, value)
	}
	re, err := regexp.Compile(value)
	if err != nil {
		if pcreRefuses(err) {
			v.trafficW().canaryRules.HeaderPatternError = true
			v.trafficW().ruleSet(key)
			return fmt.Errorf("%s %q does not compile: %v; a request with the header goes to the primary, as ingress-nginx's balancer sends it", key, value, err)
		}
		return fmt.Errorf("%s %q is not a usable regular expression: %v; not applied, so the header decides by \"always\" and \"never\"", key, value, err)
	}
	v.trafficW().canaryRules.HeaderPattern = re
	v.trafficW().ruleSet(key)
	return nil
}

// canaryPatternRE is ingress-nginx's parser.IsValidRegex
// (parser/validators.go:46-55).
var canaryPatternRE = regexp.MustCompile(`^[/\-._~a-zA-Z0-9:^$\[\](){}*+?|&=\\]*$`)

// pcreRefuses reports whether PCRE refuses a pattern too that Go's regexp
// refused with err: an unbalanced group or class, a repeat of nothing, a
// repeat of a repeat other than a possessive one ("a**", not "a*+"), a
// backwards range, a repeat count out of order or over PCRE's 65535, a
// trailing backslash or an unknown POSIX class. The rest of what RE2
// refuses (look-around, back-references, PCRE's escapes) PCRE runs.
func pcreRefuses(err error) bool {
	var se *syntax.Error
	if !errors.As(err, &se) {
		return false
	}
	switch se.Code {
	case syntax.ErrMissingParen, syntax.ErrUnexpectedParen, syntax.ErrMissingBracket,
		syntax.ErrMissingRepeatArgument, syntax.ErrInvalidCharRange, syntax.ErrTrailingBackslash,
		syntax.ErrInvalidCharClass:
		return true
	case syntax.ErrInvalidRepeatOp:
		return !strings.HasSuffix(se.Expr, "+")
	case syntax.ErrInvalidRepeatSize:
		// Over RE2's 1000, or out of order: se.Expr is "{n}", "{n,}" or
		// "{n,m}" (a repeat nested too deep for RE2 says something else).
		lo, hi, comma := strings.Cut(strings.TrimSuffix(strings.TrimPrefix(se.Expr, "{"), "}"), ",")
		n, err := strconv.Atoi(lo)
		if err != nil {
			return false
		}
		m := n
		if comma && hi != "" {
			if m, err = strconv.Atoi(hi); err != nil {
				return false
			}
		}
		return m < n || m > 65535
	}
	return false
}

func applyCanaryCookie(v *annotationValues, key, value string) error {
	name, err := canaryName(key, value, "cookie")
	if err != nil {
		return err
	}
	v.trafficW().canaryRules.Cookie = name
	v.trafficW().ruleSet(key)
	return nil
}

// isToken reports an RFC 9110 token.
func isToken(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return s != ""
}

// splitCanaries takes canary Ingresses out of the ordinary build (SPEC §10):
// they create no hosts, routes, fallbacks or certificates, and are attached
// by attachCanaries instead. A canary rule annotation on an Ingress that is
// not a canary has no effect, as in ingress-nginx, and says so.
func (b *builder) splitCanaries() {
	kept := b.ingresses[:0]
	for _, ing := range b.ingresses {
		if ing.ann.trafficR().canaryKey != "" {
			b.canaries = append(b.canaries, ing)
			b.warnCanaryLocationAnnotations(ing)
			b.warnHeaderlessCanaryRules(ing)
			continue
		}
		for _, key := range ing.ann.trafficR().canaryRuleKeys {
			b.warn(AnnotationRejected, ing.ref(), annotationField(key),
				key+" has no effect: the Ingress is not a canary (the canary annotation is not \"true\")")
		}
		kept = append(kept, ing)
	}
	clear(b.ingresses[len(kept):])
	b.ingresses = kept
}

// warnHeaderlessCanaryRules says that canary-by-header-value and
// canary-by-header-pattern do nothing without a canary-by-header applied:
// balancer.lua reads them only for a request carrying that header
// (route_to_alternative_balancer), as the annotation's documentation in
// canary/main.go says.
func (b *builder) warnHeaderlessCanaryRules(ing *ingress) {
	t := ing.ann.trafficR()
	if t.canaryRules.Header != "" {
		return
	}
	for _, key := range t.canaryRuleKeys {
		if name := key[strings.LastIndexByte(key, '/')+1:]; name == "canary-by-header-value" || name == "canary-by-header-pattern" {
			b.warn(AnnotationRejected, ing.ref(), annotationField(key),
				key+" has no effect without canary-by-header, as in ingress-nginx: no header is named for it to match")
			b.warnings[len(b.warnings)-1].Rated = Cosmetic
		}
	}
}

// canaryReads reports an annotation ingress-nginx reads from a canary
// Ingress (internal/ingress/controller/controller.go): the canary rules
// and the canary upstream's balancing and service-upstream
// (createUpstreams), affinity-canary-behavior (mergeAlternativeBackend),
// auth-tls-* and proxy-ssl-* (the host's server takes them when no other
// Ingress set them, getBackendServers) and stream-snippet. Session
// affinity and backend-protocol have warnings of their own
// (warnCanaryAffinity, decideProtocols).
func canaryReads(name string) bool {
	switch {
	case strings.HasPrefix(name, "canary"), strings.HasPrefix(name, "upstream-hash-by"),
		strings.HasPrefix(name, "auth-tls-"), strings.HasPrefix(name, "proxy-ssl-"),
		strings.HasPrefix(name, "session-cookie-"), strings.HasPrefix(name, "affinity"):
		return true
	}
	switch name {
	case "load-balance", "service-upstream", "backend-protocol", "stream-snippet":
		return true
	}
	return false
}

// warnCanaryLocationAnnotations says of each of a canary Ingress's
// annotations that only a location reads that it has no effect: a canary
// has no location of its own, the requests it takes are served with its
// primary location's settings, as in ingress-nginx, where a canary makes
// no location (createServers, and getBackendServers skips its NoServer
// upstream). A warning already given about the value (one that does not
// parse, which would deny a location, or a key ramjet does not serve) is
// replaced: it would tell of a consequence the canary does not have.
// Nothing changes against ingress-nginx, so each is cosmetic.
func (b *builder) warnCanaryLocationAnnotations(ing *ingress) {
	var fields []string
	for key := range ing.obj.Annotations {
		name, ok := strings.CutPrefix(key, NginxPrefix)
		if !ok {
			if name, ok = strings.CutPrefix(key, NativePrefix); !ok {
				continue
			}
		}
		if _, known := knownAnnotations[name]; canaryReads(name) || b.embedderServes(name) || !known && !nginxAnnotations[name] {
			continue
		}
		fields = append(fields, annotationField(key))
	}
	if len(fields) == 0 {
		return
	}
	ref := ing.ref()
	b.warnings = slices.DeleteFunc(b.warnings, func(w Warning) bool {
		return w.Object == ref && (w.Reason == AnnotationRejected || w.Reason == AnnotationUnsupported) && slices.Contains(fields, w.Field)
	})
	slices.Sort(fields)
	for _, f := range fields {
		key := strings.TrimSuffix(strings.TrimPrefix(f, "metadata.annotations["), "]")
		b.warn(AnnotationRejected, ref, f,
			key+" has no effect on a canary Ingress, which has no location of its own: the requests its canary takes are served with its primary location's settings, as in ingress-nginx")
		b.warnings[len(b.warnings)-1].Rated = Cosmetic
	}
}

// attachCanaries attaches each canary Ingress's paths to their primaries,
// oldest canary first. A canary path needs a primary route with the same
// host, path (as written) and path type (ingress-nginx's merge); its spec.defaultBackend
// attaches to every route of the catch-all host and to the catch-all's
// fallback when an Ingress set it. Each primary backend takes one canary:
// the oldest that names it wins, later ones get CanaryConflict. A canary
// path with no primary serves nothing and warns CanaryWithoutPrimary; on
// a host an Ingress serves, it also withdraws its canary backend
// (withdrawCanary), which settleCanaries then takes off every primary.
func (b *builder) attachCanaries() {
	b.canaryRuleOwners()
	for _, ing := range b.canaries {
		// ingress-nginx merges the default backend before the rules.
		if be := ing.obj.Spec.DefaultBackend; be != nil && b.checkBackendShape(ing, "spec.defaultBackend", "", be) {
			b.attachDefault(ing, be.Service)
		}
		for i := range ing.obj.Spec.Rules {
			rule := &ing.obj.Spec.Rules[i]
			if rule.HTTP == nil {
				continue
			}
			v := b.vhostOf(rule.Host)
			for j := range rule.HTTP.Paths {
				b.attachPath(ing, v, rule.Host, pathField(i, j), &rule.HTTP.Paths[j])
			}
		}
	}
	b.settleCanaries()
}

// canaryWithdrawal is the canary declaration that withdrew a canary
// backend.
type canaryWithdrawal struct {
	ing   *ingress
	field string
}

// canaryAttachment is a canary backend attached to a primary, settled
// once every canary is read.
type canaryAttachment struct {
	ing             *ingress
	svc             *networkingv1.IngressServiceBackend
	primary, canary *match.Backend
}

// withdrawn reports a canary backend an earlier declaration withdrew, and
// warns that this one takes nothing: ingress-nginx finds its upstream
// deleted ("has already been removed").
func (b *builder) withdrawn(ing *ingress, field string, canary *match.Backend, where string) bool {
	w, ok := b.canaryWithdrawn[canary]
	if !ok {
		return false
	}
	b.warn(CanaryWithoutPrimary, ing.ref(), field,
		fmt.Sprintf("%s: the canary backend %s was withdrawn by Ingress %s %s, a canary declaration with no primary; this one takes nothing",
			where, canary.ID, w.ing.name(), w.field))
	return true
}

// withdrawCanary records that a canary declaration on v found no primary.
// When v is a host some Ingress serves (an ingress-nginx server) whose
// routes do not use the canary's backend, ingress-nginx deletes the
// canary's upstream (mergeAlternativeBackends: "unable to find real
// backend for alternative backend ... Deleting."): the primaries it
// joined find no balancer for it and serve every request themselves
// (balancer.lua route_to_alternative_balancer), and later declarations
// naming it find it removed. It returns the consequence for the warning.
func (b *builder) withdrawCanary(ing *ingress, field string, v *vhost, canary *match.Backend) string {
	if v == nil || v != b.catchAll && v.creator == nil || canary == nil {
		return ""
	}
	if fb := v.vh.Fallback; fb == canary && v.vh.FallbackSource.Name != "" {
		return ""
	}
	for _, r := range v.vh.Routes {
		if r.Backend == canary {
			return ""
		}
	}
	if _, ok := b.canaryWithdrawn[canary]; !ok {
		if b.canaryWithdrawn == nil {
			b.canaryWithdrawn = make(map[*match.Backend]canaryWithdrawal)
		}
		b.canaryWithdrawn[canary] = canaryWithdrawal{ing, field}
	}
	return "; as in ingress-nginx, which then deletes the canary's upstream, backend " + canary.ID +
		" takes no canary traffic anywhere, from this or any other canary Ingress"
}

// settleCanaries takes withdrawn canaries off their primaries: a primary
// keeps its first canary, so a newer one stays out (CanaryConflict told
// it), as ingress-nginx's balancer reads only the first alternative.
// The canaries left are served: listed in the table, and the canary
// Ingress has a say in their balancing (not their protocol:
// decideProtocols).
func (b *builder) settleCanaries() {
	for _, a := range b.canaryAttached {
		if _, ok := b.canaryWithdrawn[a.canary]; ok {
			if t := a.primary.Traffic; t != nil && t.Canary != nil && t.Canary.Backend == a.canary {
				t.Canary = nil
				if *t == (match.Traffic{}) {
					a.primary.Traffic = nil
				}
			}
			continue
		}
		bi := b.resolve(a.ing.obj.Namespace, a.svc.Name, servicePort(a.svc.Port)).backend
		bi.used = true
		if !slices.Contains(bi.claims, a.ing) {
			bi.claims = append(bi.claims, a.ing)
		}
	}
	b.canaryAttached = nil
}

func (b *builder) attachPath(ing *ingress, v *vhost, host, field string, p *networkingv1.HTTPIngressPath) {
	typ, key, re, pathOK := b.routePath(ing, field, p)
	if !b.checkBackendShape(ing, field, ".backend", &p.Backend) || !pathOK {
		return
	}
	var primary *match.Route
	if v != nil {
		// On a host in regex mode the primary's path became the patterns
		// modeKeys makes of it; the canary's is looked up the same way.
		var buf [3]pathKey
		keys, ok := b.modeKeys(ing, v, field, p, pathKey{typ, key, re}, buf[:0])
		if !ok {
			return
		}
		if raw := declaredPath(p); v.regex != nil && typ == match.Prefix && !strings.HasSuffix(raw, "/") &&
			!slices.ContainsFunc(keys, func(k pathKey) bool { return k.key == raw+"/" }) {
			// A primary Prefix path that did not ask for regex mode has
			// the slashed pattern, whether or not this canary asked.
			keys = append(keys, pathKey{match.Regex, raw + "/", nil})
		}
		for _, k := range keys {
			// There an Exact path's pattern can be a Prefix path's too:
			// ingress-nginx merges only into a location of the canary's
			// path type.
			if r := v.route(routeKey{typ: k.typ, path: k.key}); r != nil && b.sameExactness(r.Source, p) {
				primary = r
				break
			}
		}
	}
	canary := b.canaryBackend(ing, p.Backend.Service, field, ".backend.service")
	where := fmt.Sprintf("%s %s path %q", hostLabel(host), typ, p.Path)
	if b.withdrawn(ing, field, canary, where) {
		return
	}
	if primary != nil {
		// ingress-nginx merges a canary only into a location whose path is
		// the canary's as written (controller.go mergeAlternativeBackends):
		// /shop does not take from /shop/, one route here.
		if written, ok := b.writtenPath(primary.Source); ok && written != p.Path {
			b.warn(CanaryWithoutPrimary, ing.ref(), field,
				fmt.Sprintf("%s: the %s path %q is served by %s, whose path is written %q; as in ingress-nginx a canary path attaches only to the same path as written, so this one serves nothing%s",
					hostLabel(host), typ, p.Path, primary.Source.String(), written, b.withdrawCanary(ing, field, v, canary)))
			return
		}
	}
	if primary == nil && v != nil && typ == match.Prefix && p.Path == "/" && v.vh.Fallback != nil && v.vh.FallbackSource.Name != "" {
		// The fallback from an Ingress's spec.defaultBackend is
		// ingress-nginx's default location, a Prefix "/" with that
		// upstream, which a canary path finds like any other; the global
		// default backend takes no canary there (canMergeBackend).
		b.attach(ing, field, p.Backend.Service, v.vh.Fallback, canary, hostLabel(host)+" default location")
		return
	}
	if primary == nil {
		b.warn(CanaryWithoutPrimary, ing.ref(), field,
			fmt.Sprintf("%s: no Ingress serves %s path %q, so this canary path has no primary to take traffic from and serves nothing%s",
				hostLabel(host), typ, p.Path, b.withdrawCanary(ing, field, v, canary)))
		return
	}
	b.attach(ing, field, p.Backend.Service, primary.Backend, canary, where)
}

// writtenPath is the path of the Ingress path that declared src as
// ingress-nginx names its location: as written, "/" for none. ok is false
// for what an Ingress path did not declare.
func (b *builder) writtenPath(src match.Source) (string, bool) {
	decl := b.declaredPathOf(src)
	if decl == nil {
		return "", false
	}
	return declaredPath(decl), true
}

// declaredPathOf is the Ingress path that declared src, nil for what no
// Ingress path declared.
func (b *builder) declaredPathOf(src match.Source) *networkingv1.HTTPIngressPath {
	ing := b.ingressOf(src)
	var i, j int
	if ing == nil || ing.obj == nil {
		return nil
	}
	if n, err := fmt.Sscanf(src.Field, "spec.rules[%d].http.paths[%d]", &i, &j); n != 2 || err != nil {
		return nil
	}
	rules := ing.obj.Spec.Rules
	if i >= len(rules) || rules[i].HTTP == nil || j >= len(rules[i].HTTP.Paths) {
		return nil
	}
	return &rules[i].HTTP.Paths[j]
}

// sameExactness reports whether the Ingress path that declared src has
// the path type of p as ingress-nginx compares them, where a missing or
// ImplementationSpecific type reads as Prefix (SetDefaultNGINXPathType).
// What no Ingress path declared passes.
func (b *builder) sameExactness(src match.Source, p *networkingv1.HTTPIngressPath) bool {
	decl := b.declaredPathOf(src)
	if decl == nil {
		return true
	}
	exact := func(t *networkingv1.PathType) bool { return t != nil && *t == networkingv1.PathTypeExact }
	return exact(decl.PathType) == exact(p.PathType)
}

// attachDefault attaches a canary's spec.defaultBackend to the catch-all.
func (b *builder) attachDefault(ing *ingress, svc *networkingv1.IngressServiceBackend) {
	canary := b.canaryBackend(ing, svc, "spec.defaultBackend", ".service")
	if b.withdrawn(ing, "spec.defaultBackend", canary, "the catch-all host") {
		return
	}
	var primaries []*match.Backend
	for _, r := range b.catchAll.vh.Routes {
		primaries = append(primaries, r.Backend)
	}
	if fb := b.catchAll.vh.Fallback; fb != nil && b.catchAll.vh.FallbackSource.Name != "" {
		primaries = append(primaries, fb)
	}
	if len(primaries) == 0 {
		b.warn(CanaryWithoutPrimary, ing.ref(), "spec.defaultBackend",
			"the catch-all host has no route and no fallback from an Ingress, so this canary default backend has no primary to take traffic from and serves nothing"+
				b.withdrawCanary(ing, "spec.defaultBackend", b.catchAll, canary))
		return
	}
	seen := make(map[*match.Backend]bool, len(primaries))
	for _, p := range primaries {
		if !seen[p] {
			seen[p] = true
			b.attach(ing, "spec.defaultBackend", svc, p, canary, "the catch-all host")
		}
	}
}

// canaryBackend resolves a canary's Service port and warns, like
// useBackend, about one that does not resolve: the requests the canary's
// rules choose answer 500 then (SPEC §10), not 503.
func (b *builder) canaryBackend(ing *ingress, svc *networkingv1.IngressServiceBackend, field, suffix string) *match.Backend {
	r := b.resolve(ing.obj.Namespace, svc.Name, servicePort(svc.Port))
	const consequence = "; the requests this canary's rules choose answer 500"
	switch r.issue().problem {
	case ServiceNotFound, ExternalNameUnsupported:
		b.warn(r.issue().problem, ing.ref(), field+suffix+".name", r.issue().message+consequence)
	case ServicePortNotFound:
		b.warn(r.issue().problem, ing.ref(), field+suffix+".port", r.issue().message+consequence)
	}
	if r.issue().targetMsg != "" {
		b.warn(PortMatchedTargetPort, ing.ref(), field+suffix+".port", r.issue().targetMsg)
	}
	return r.backend.b
}

// attach makes canary the canary of primary for ing's rules, unless an
// older canary holds primary already or the two are one backend.
func (b *builder) attach(ing *ingress, field string, svc *networkingv1.IngressServiceBackend, primary, canary *match.Backend, where string) {
	if primary == canary {
		b.warn(CanaryWithoutPrimary, ing.ref(), field,
			where+": the canary names the primary's own backend "+primary.ID+"; it takes nothing")
		return
	}
	if primary.Traffic == nil {
		primary.Traffic = &match.Traffic{}
	}
	if held := primary.Traffic.Canary; held != nil {
		if held.Source.Namespace == ing.obj.Namespace && held.Source.Name == ing.obj.Name && held.Backend == canary {
			return // another path of this canary on the same primary
		}
		b.conflict(CanaryConflict, ing.ref(), field,
			fmt.Sprintf("%s: backend %s already has the canary %s from Ingress %s, which comes first in Ingress order and wins; this canary takes nothing there",
				where, primary.ID, held.Backend.ID, held.Source.Ingress()),
			ingressRef(held.Source.Namespace, held.Source.Name), held.Source.Field)
		return
	}
	var c match.Canary // a copy: each primary owns its canary
	total := 0
	if rules := b.canaryRulesOf(ing, canary); rules != nil {
		c, total = rules.ann.trafficR().canaryRules, rules.ann.trafficR().weightTotal
	}
	c.Backend = canary
	c.Source = ing.source(field)
	c.PortName = portName(canary, svc.Port)
	c.WeightTotal = match.CanaryTotal(total)
	c.Sticky = ing.ann.trafficR().affinity.canaryBehavior != legacyCanary
	primary.Traffic.Canary = &c
	b.canaryAttached = append(b.canaryAttached, canaryAttachment{ing, svc, primary, canary})
}

// canaryRuleOwners finds, for each canary backend, the Ingress whose
// rules it serves: as ingress-nginx keeps the rules on the canary's
// upstream, made by the oldest Ingress that names its Service port
// (createUpstreams), whether or not that one finds a primary. That may be
// an ordinary Ingress, whose upstream has no rules.
func (b *builder) canaryRuleOwners() {
	own := func(ing *ingress, svc *networkingv1.IngressServiceBackend) {
		if svc == nil {
			return
		}
		be := b.resolve(ing.obj.Namespace, svc.Name, servicePort(svc.Port)).backend.b
		if be == nil {
			return
		}
		if b.canaryRules == nil {
			b.canaryRules = make(map[*match.Backend]*ingress)
		}
		if b.canaryRules[be] == nil {
			b.canaryRules[be] = ing
		}
	}
	all := make([]*ingress, 0, len(b.ingresses)+len(b.canaries))
	for _, ing := range b.ingresses {
		if ing.obj != nil {
			all = append(all, ing)
		}
	}
	all = append(all, b.canaries...)
	slices.SortFunc(all, func(x, y *ingress) int { return cmp.Compare(x.rank, y.rank) })
	for _, ing := range all {
		if be := ing.obj.Spec.DefaultBackend; be != nil {
			own(ing, be.Service)
		}
		for i := range ing.obj.Spec.Rules {
			if rule := &ing.obj.Spec.Rules[i]; rule.HTTP != nil {
				for j := range rule.HTTP.Paths {
					own(ing, rule.HTTP.Paths[j].Backend.Service)
				}
			}
		}
	}
}

// canaryRulesOf returns the canary Ingress whose rules canary serves with
// (canaryRuleOwners), nil for none: its upstream is an ordinary
// Ingress's. A newer canary Ingress whose own rules differ is told once.
func (b *builder) canaryRulesOf(ing *ingress, canary *match.Backend) *ingress {
	owner := b.canaryRules[canary]
	if owner == nil {
		return ing
	}
	if owner.ann.trafficR().canaryKey == "" {
		if !b.canaryRulesTold[ing] {
			b.tellCanaryRules(ing)
			b.conflict(AnnotationConflict, ing.ref(), annotationField(ing.ann.trafficR().canaryKey),
				fmt.Sprintf("the canary backend %s is the backend of Ingress %s, the first in Ingress order to name it, which is not a canary; as in ingress-nginx, where the canary rules belong to the upstream that Ingress made, this Ingress's canary-by-header, canary-by-cookie and canary-weight annotations are not applied: no request goes to this canary by them",
					canary.ID, owner.name()),
				owner.ref(), "")
			b.warnings[len(b.warnings)-1].Rated = Cosmetic // as ingress-nginx serves it
		}
		return nil
	}
	if owner != ing && !b.canaryRulesTold[ing] && !sameCanaryRules(owner.ann.trafficR(), ing.ann.trafficR()) {
		b.tellCanaryRules(ing)
		key := ing.ann.trafficR().canaryKey
		b.conflict(AnnotationConflict, ing.ref(), annotationField(key),
			fmt.Sprintf("the canary backend %s serves the canary rules of Ingress %s, the first in Ingress order to name it; as in ingress-nginx, where the rules belong to the canary's upstream, this Ingress's canary-by-header, canary-by-cookie and canary-weight annotations are not applied",
				canary.ID, owner.name()),
			owner.ref(), annotationField(owner.ann.trafficR().canaryKey))
		b.warnings[len(b.warnings)-1].Rated = Cosmetic // as ingress-nginx serves it
	}
	return owner
}

func (b *builder) tellCanaryRules(ing *ingress) {
	if b.canaryRulesTold == nil {
		b.canaryRulesTold = make(map[*ingress]bool)
	}
	b.canaryRulesTold[ing] = true
}

// sameCanaryRules reports whether two canary Ingresses ask for the same
// rules.
func sameCanaryRules(x, y *trafficValues) bool {
	a, b := x.canaryRules, y.canaryRules
	pattern := func(c *match.Canary) string {
		if c.HeaderPattern == nil {
			return ""
		}
		return c.HeaderPattern.String()
	}
	return a.Header == b.Header && a.HeaderValue == b.HeaderValue && pattern(&a) == pattern(&b) &&
		a.HeaderPatternError == b.HeaderPatternError && a.Cookie == b.Cookie && a.Weight == b.Weight &&
		match.CanaryTotal(x.weightTotal) == match.CanaryTotal(y.weightTotal)
}
