package compile

import (
	"errors"
	"regexp"
	"slices"
	"strconv"
	"strings"

	networkingv1 "k8s.io/api/networking/v1"

	"ramjet.dev/ramjet/match"
)

func init() {
	registerAnnotations(map[string]annotationSpec{
		"rewrite-target":     {apply: applyRewriteTarget},
		"use-regex":          {apply: applyUseRegex},
		"upstream-vhost":     {apply: applyUpstreamVhost},
		"x-forwarded-prefix": {apply: applyXForwardedPrefix},
	})
}

// Regex mode and route rewrites (SPEC §5, §11.1, §13): rewrite-target,
// use-regex, upstream-vhost and x-forwarded-prefix.
//
// Under nginx.ingress.kubernetes.io/, use-regex "true" or a rewrite-target
// that differs from a path puts that path's whole host in ingress-nginx's
// regex mode: every path there, from every Ingress, becomes a
// case-insensitive regular expression anchored at the start, tried in
// controller order (length descending, then path descending). As
// ingress-nginx does, a Prefix path of an Ingress that did not ask for it
// becomes two patterns, the path with a trailing slash and the path itself
// (the latter left out when some Ingress declares that path Exact), and an
// Exact path is no longer anchored at the end.
//
// Under ramjet.dev/ nothing is host-wide: use-regex turns only the
// Ingress's own paths into patterns, and rewrite-target (with ${1}
// captures) rewrites only its own paths.

// rewriteValues are an Ingress's rewrite annotations as parsed; each key
// is the annotation that set the value, "" when unset.
type rewriteValues struct {
	target, targetKey string
	useRegex          bool
	useRegexKey       string
	vhost, vhostKey   string
	prefix, prefixKey string
	// built holds the route rewrite without and with the target, once
	// built: every route of the Ingress shares one of the two.
	built     [2]*match.Rewrite
	builtDone [2]bool
}

func (v *annotationValues) rewriteW() *rewriteValues {
	if v.rewrite == nil {
		v.rewrite = new(rewriteValues)
	}
	return v.rewrite
}

// rewriteR reads an Ingress's rewrite annotations; noRewrite, shared and
// never written, when it sets none.
func (v *annotationValues) rewriteR() *rewriteValues {
	if v.rewrite == nil {
		return &noRewrite
	}
	return v.rewrite
}

var noRewrite rewriteValues

func native(key string) bool { return strings.HasPrefix(key, NativePrefix) }

func syntaxOf(key string) match.RewriteSyntax {
	if native(key) {
		return match.NativeSyntax
	}
	return match.NginxSyntax
}

// ingress-nginx's validators for these annotations (RegexPathWithCapture
// and the server-name characters), so that a value it refuses is refused
// here too.
var (
	nginxPathWithCapture = regexp.MustCompile(`^/?[-._~a-zA-Z0-9/:$]*$`)
	nginxServerName      = regexp.MustCompile(`^[/\-._~a-zA-Z0-9:^$\[\](){}*+?|&=\\]*$`)
)

func applyRewriteTarget(v *annotationValues, key, value string) error {
	if value == "" && !native(key) {
		// ingress-nginx reads an empty value as unset.
		rw := v.rewriteW()
		rw.target, rw.targetKey = "", ""
		return nil
	}
	if !native(key) && (!nginxPathWithCapture.MatchString(value) || strings.ContainsAny(value, "\r\n")) {
		return errors.New(key + " " + strconv.Quote(value) +
			" has a character ingress-nginx does not accept there (it allows letters, digits, -._~/: and $ captures), and ignores it too; not applied")
	}
	if value == "" {
		return errors.New(key + " is empty; not applied")
	}
	if _, err := match.NewRewrite(match.Rewrite{Target: value, Syntax: syntaxOf(key)}); err != nil {
		return errors.New(key + ": " + err.Error() + "; not applied")
	}
	rw := v.rewriteW()
	rw.target, rw.targetKey = value, key
	return nil
}

var applyUseRegex = boolAnnotation(func(v *annotationValues, key string, on bool) {
	rw := v.rewriteW()
	rw.useRegex, rw.useRegexKey = on, key
})

func applyUpstreamVhost(v *annotationValues, key, value string) error {
	h := value
	if !native(key) {
		h = strings.TrimSpace(value)
		if h == "" {
			rw := v.rewriteW()
			rw.vhost, rw.vhostKey = "", ""
			return nil
		}
		if !nginxServerName.MatchString(h) {
			return errors.New(key + " " + strconv.Quote(value) +
				" has a character ingress-nginx does not accept there; not applied (ingress-nginx would not serve the Ingress at all)")
		}
		if _, err := vhostPlace.Parse(h); err != nil {
			return errors.New(key + " " + valueError(value, err) + "; not applied, the backend receives the client's Host")
		}
	}
	if _, err := match.NewRewrite(match.Rewrite{Host: sampleVhost(h)}); err != nil {
		return errors.New(key + ": " + err.Error() + "; not applied, the backend receives the client's Host")
	}
	rw := v.rewriteW()
	rw.vhost, rw.vhostKey = h, key
	return nil
}

func applyXForwardedPrefix(v *annotationValues, key, value string) error {
	p := value
	if !native(key) {
		p = strings.TrimSpace(value)
		if p == "" {
			// ingress-nginx sets no header for an empty value.
			rw := v.rewriteW()
			rw.prefix, rw.prefixKey = "", ""
			return nil
		}
		if !nginxPathWithCapture.MatchString(strings.ReplaceAll(p, " ", "")) || strings.ContainsAny(p, "\r\n") {
			return errors.New(key + " " + strconv.Quote(value) +
				" has a character ingress-nginx does not accept there (it allows letters, digits, -._~/: and $ captures); not applied (ingress-nginx would not serve the Ingress at all)")
		}
	} else if p == "" {
		return errors.New(key + " is empty; not applied")
	}
	if _, err := match.NewRewrite(match.Rewrite{ForwardedPrefix: p, ForwardedPrefixSet: true, Syntax: syntaxOf(key)}); err != nil {
		return errors.New(key + ": " + err.Error() + "; not applied")
	}
	rw := v.rewriteW()
	rw.prefix, rw.prefixKey = p, key
	return nil
}

// regexMode is a host in ingress-nginx's regex mode.
type regexMode struct {
	// causes are the Ingresses that put the host in regex mode, in Ingress
	// order, each with the annotation that did.
	causes []regexCause
	// exact holds every Exact path declared on the host: a Prefix path
	// gets no pattern of its own where one exists (ingress-nginx's rule).
	exact map[string]bool
}

type regexCause struct {
	ing *ingress
	key string
}

// declaredPath is a path as ingress-nginx reads it: "" is "/".
func declaredPath(p *networkingv1.HTTPIngressPath) string {
	if p.Path == "" {
		return "/"
	}
	return p.Path
}

// nginxRewrites reports whether the Ingress's nginx-syntax rewrite-target
// applies to a path: ingress-nginx leaves a path whose target equals it
// alone.
func (v *rewriteValues) nginxRewrites(path string) bool {
	return v.targetKey != "" && !native(v.targetKey) && v.target != path
}

// nginxRegex reports whether the Ingress asks for regex mode on a path,
// and by which annotation.
func (v *rewriteValues) nginxRegex(path string) (string, bool) {
	if v.useRegex && v.useRegexKey != "" && !native(v.useRegexKey) {
		return v.useRegexKey, true
	}
	if v.nginxRewrites(path) {
		return v.targetKey, true
	}
	return "", false
}

// nginxPathRegex is nginxRegex for a declared path and the location
// ingress-nginx adds for it: a Prefix path its Ingress does not rewrite
// becomes the location "p/" (updateServerLocations, location.go), which a
// rewrite-target equal to "p" no longer equals, so that location rewrites
// and puts the host in regex mode.
func (v *rewriteValues) nginxPathRegex(p *networkingv1.HTTPIngressPath) (string, bool) {
	if key, ok := v.nginxRegex(declaredPath(p)); ok {
		return key, true
	}
	if twin, ok := prefixTwin(p); ok {
		return v.nginxRegex(twin)
	}
	return "", false
}

// prefixTwin is the path ingress-nginx's updateServerLocations gives the
// location of a Prefix path that does not end in "/" (normalizePrefixPath:
// "p/"), beside an Exact copy that keeps "p".
func prefixTwin(p *networkingv1.HTTPIngressPath) (string, bool) {
	raw := declaredPath(p)
	if p.PathType == nil || *p.PathType != networkingv1.PathTypePrefix || strings.HasSuffix(raw, "/") {
		return "", false
	}
	return raw + "/", true
}

// markRegexHosts finds the hosts in regex mode and warns RegexModeHost on
// every Ingress with paths there: the ones that caused it, naming their
// annotation, and the others, naming the oldest cause. Only Ingresses with
// an nginx use-regex or rewrite-target are looked at until some host is in
// regex mode, so a build without them pays one pass over the Ingresses.
func (b *builder) markRegexHosts() {
	var regexHosts []*vhost
	var rootPrefix map[*vhost]bool
	var kept *nginxLocations
	for _, ing := range b.ingresses {
		rv := ing.ann.rewriteR()
		if (rv.useRegexKey == "" || native(rv.useRegexKey)) && (rv.targetKey == "" || native(rv.targetKey)) {
			continue
		}
		for i := range ing.obj.Spec.Rules {
			rule := &ing.obj.Spec.Rules[i]
			v := ing.rules[i].vhost
			if v == nil {
				continue
			}
			key, ok := "", false
			if rule.HTTP != nil {
				for j := range rule.HTTP.Paths {
					if key, ok = rv.nginxPathRegex(&rule.HTTP.Paths[j]); !ok {
						continue
					}
					if kept == nil {
						kept = b.keptNginxLocations()
					}
					if ok = kept.keeps(ing, v, i, j); ok {
						break
					}
				}
			}
			if !ok && v.creator == ing {
				// The host's default location "/" carries its creator's
				// annotations until a Prefix "/" path takes it over, and
				// ingress-nginx counts it like any location.
				if key, ok = rv.nginxRegex("/"); ok {
					if rootPrefix == nil {
						rootPrefix = b.rootPrefixHosts()
					}
					ok = !rootPrefix[v]
				}
			}
			if !ok {
				continue
			}
			if v.regex == nil {
				v.regex = &regexMode{exact: make(map[string]bool)}
				regexHosts = append(regexHosts, v)
			}
			if n := len(v.regex.causes); n == 0 || v.regex.causes[n-1].ing != ing {
				v.regex.causes = append(v.regex.causes, regexCause{ing, key})
			}
		}
	}
	if len(regexHosts) == 0 {
		return
	}
	for _, v := range regexHosts {
		for _, c := range v.regex.causes {
			b.warn(RegexModeHost, c.ing.ref(), annotationField(c.key),
				hostLabel(v.vh.Name)+" is in ingress-nginx's regex mode because of "+c.key+
					": every path there, from every Ingress, is a case-insensitive regular expression anchored at the start, tried longest first")
		}
	}
	// Every Ingress with paths on such a host: its Exact paths, and a
	// warning on each that did not ask, once per host, on its first rule
	// there.
	for _, ing := range b.ingresses {
		var told []*vhost
		for i := range ing.obj.Spec.Rules {
			rule := &ing.obj.Spec.Rules[i]
			v := ing.rules[i].vhost
			if v == nil || v.regex == nil || rule.HTTP == nil || len(rule.HTTP.Paths) == 0 {
				continue
			}
			for j := range rule.HTTP.Paths {
				p := &rule.HTTP.Paths[j]
				if p.PathType != nil && *p.PathType == networkingv1.PathTypeExact {
					v.regex.exact[declaredPath(p)] = true
				}
			}
			if v.regex.caused(ing) || slices.Contains(told, v) {
				continue
			}
			told = append(told, v)
			first := v.regex.causes[0]
			b.conflict(RegexModeHost, ing.ref(), ruleField(i)+".host",
				hostLabel(v.vh.Name)+" is in ingress-nginx's regex mode because Ingress "+first.ing.name()+" sets "+first.key+
					": this Ingress's Exact and Prefix paths there are matched as case-insensitive regular expressions anchored at the start (a Prefix /p as ^/p/ and ^/p, an Exact /p as ^/p), tried longest first",
				first.ing.ref(), annotationField(first.key))
		}
	}
}

// nginxLocations finds the declared paths ingress-nginx makes a location
// of: getBackendServers keeps the first location for a path and type on a
// server (a missing or ImplementationSpecific type read as Prefix) and
// drops later ones with their Ingress's annotations, a path without a
// Service backend makes none, and the catch-all's root location, once an
// Ingress without rules holds it, is kept against every path "/".
type nginxLocations struct {
	first map[locationKey]declaration
	// rootTaken: the catch-all's root location is an Ingress's without rules.
	rootTaken bool
	catchAll  *vhost
}

type locationKey struct {
	v     *vhost
	path  string
	exact bool
}

type declaration struct {
	ing  *ingress
	i, j int
}

func (b *builder) keptNginxLocations() *nginxLocations {
	k := &nginxLocations{first: make(map[locationKey]declaration), catchAll: b.catchAll}
	for _, ing := range b.ingresses {
		spec := &ing.obj.Spec
		if len(spec.Rules) == 0 && spec.DefaultBackend != nil && spec.DefaultBackend.Service != nil {
			k.rootTaken = true
		}
		for i := range spec.Rules {
			rule := &spec.Rules[i]
			v := ing.rules[i].vhost
			if v == nil || rule.HTTP == nil {
				continue
			}
			for j := range rule.HTTP.Paths {
				p := &rule.HTTP.Paths[j]
				if p.Backend.Service == nil {
					continue
				}
				at := locationKey{v, declaredPath(p), pathTypeOf(p) == networkingv1.PathTypeExact}
				if _, seen := k.first[at]; !seen {
					k.first[at] = declaration{ing, i, j}
				}
			}
		}
	}
	return k
}

// keeps reports whether ingress-nginx makes a location of path j of rule
// i of ing, on v.
func (k *nginxLocations) keeps(ing *ingress, v *vhost, i, j int) bool {
	p := &ing.obj.Spec.Rules[i].HTTP.Paths[j]
	at := locationKey{v, declaredPath(p), pathTypeOf(p) == networkingv1.PathTypeExact}
	if v == k.catchAll && k.rootTaken && at.path == "/" && !at.exact {
		return false
	}
	return k.first[at] == declaration{ing, i, j}
}

// rootPrefixHosts are the hosts some Ingress declares a path "/" on that
// ingress-nginx reads as Prefix: it gives that path the host's default
// location. Its SetDefaultNGINXPathType (internal/k8s/main.go) makes a
// missing or ImplementationSpecific pathType Prefix first.
func (b *builder) rootPrefixHosts() map[*vhost]bool {
	hosts := make(map[*vhost]bool)
	for _, ing := range b.ingresses {
		for i := range ing.obj.Spec.Rules {
			rule := &ing.obj.Spec.Rules[i]
			if v := ing.rules[i].vhost; v != nil && rule.HTTP != nil {
				for j := range rule.HTTP.Paths {
					p := &rule.HTTP.Paths[j]
					if declaredPath(p) == "/" && (p.PathType == nil || *p.PathType == networkingv1.PathTypePrefix || *p.PathType == networkingv1.PathTypeImplementationSpecific) {
						hosts[v] = true
					}
				}
			}
		}
	}
	return hosts
}

func (m *regexMode) caused(ing *ingress) bool {
	for _, c := range m.causes {
		if c.ing == ing {
			return true
		}
	}
	return false
}

// pathKey is one route a declared path becomes.
type pathKey struct {
	typ match.PathType
	key string
	re  *match.Regexp
}

// modeKeys returns the routes a valid declared path becomes (SPEC §11.1):
// itself, unless its host is in regex mode or its Ingress sets
// ramjet.dev/use-regex, when Exact and Prefix paths become patterns.
// ok is false when a pattern does not compile (PathRejected).
func (b *builder) modeKeys(ing *ingress, v *vhost, field string, p *networkingv1.HTTPIngressPath, k pathKey, buf []pathKey) ([]pathKey, bool) {
	rv := ing.ann.rewriteR()
	scoped := rv.useRegex && native(rv.useRegexKey)
	if k.typ == match.Regex || (v.regex == nil && !scoped) {
		return append(buf, k), true
	}
	raw := declaredPath(p)
	patterns := [2]string{raw}
	n := 1
	_, asks := rv.nginxRegex(raw)
	if v.regex != nil && k.typ == match.Prefix && raw != "/" && !asks && !scoped {
		// ingress-nginx's extra location: the path with a trailing slash,
		// and the path itself unless it is declared Exact on the host.
		patterns[0] = raw
		if !strings.HasSuffix(raw, "/") {
			patterns[0] = raw + "/"
		}
		if !v.regex.exact[raw] && patterns[0] != raw {
			patterns[1], n = raw, 2
		}
	}
	for _, pat := range patterns[:n] {
		res, cached := b.regexps[pat]
		if !cached {
			res.re, res.err = match.CompileRegex(pat, 0)
			b.regexps[pat] = res
		}
		if res.err != nil {
			why := "its host is in regex mode"
			if v.regex == nil {
				why = "ramjet.dev/use-regex is set"
			}
			b.warn(PathRejected, ing.ref(), field+".path", "path "+strconv.Quote(p.Path)+" is matched as a regular expression ("+why+") and is not a usable one: "+res.err.Error()+"; it is not served")
			return buf, false
		}
		buf = append(buf, pathKey{match.Regex, pat, res.re})
	}
	return buf, true
}

// routeRewrite is the Rewrite of a route the Ingress declares for path
// (nil for none). An nginx-syntax target leaves a path equal to it alone,
// and an nginx x-forwarded-prefix takes effect only where the target
// applies, as in ingress-nginx; the ramjet.dev/ ones apply everywhere.
// fallbackRewrite is the rewrite of the host's default location, a Prefix
// "/": ingress-nginx applies the Ingress's rewrite-target, x-forwarded-prefix
// and upstream-vhost there too. A ramjet.dev/ rewrite affects only the
// Ingress's own paths (SPEC §11.1), so with one the fallback keeps only the
// upstream-vhost.
func (b *builder) fallbackRewrite(ing *ingress) *match.Rewrite {
	rv := ing.ann.rewriteR()
	if !native(rv.targetKey) && !native(rv.prefixKey) {
		return b.routeRewrite(ing, "/")
	}
	if rv.vhost == "" {
		return nil
	}
	rw, err := match.NewRewrite(match.Rewrite{Host: sampleVhost(rv.vhost)}) // expandRouteVhost expands it
	if err != nil {
		return nil // the value parsed when read
	}
	return rw
}

func (b *builder) routeRewrite(ing *ingress, path string) *match.Rewrite {
	rv := ing.ann.rewrite
	if rv == nil {
		return nil // nothing to rewrite: no annotation set one
	}
	withTarget := rv.targetKey != "" && (native(rv.targetKey) || rv.nginxRewrites(path))
	i := 0
	if withTarget {
		i = 1
	}
	if rv.builtDone[i] {
		return rv.built[i]
	}
	rv.builtDone[i] = true
	spec := match.Rewrite{Host: sampleVhost(rv.vhost)} // expandRouteVhost expands it
	if withTarget {
		spec.Target, spec.Syntax = rv.target, syntaxOf(rv.targetKey)
	}
	if rv.prefixKey != "" && (withTarget || native(rv.prefixKey)) {
		if !withTarget {
			spec.Syntax = syntaxOf(rv.prefixKey)
		}
		spec.ForwardedPrefix, spec.ForwardedPrefixSet = rv.prefix, true
	}
	if spec.Target == "" && spec.Host == "" && !spec.ForwardedPrefixSet {
		return nil
	}
	rw, err := match.NewRewrite(spec)
	if err != nil && spec.ForwardedPrefixSet {
		// The prefix was written for the other prefix's capture syntax.
		b.warn(AnnotationRejected, ing.ref(), annotationField(rv.prefixKey),
			rv.prefixKey+" does not parse with "+rv.targetKey+"'s capture syntax: "+err.Error()+"; not applied")
		spec.ForwardedPrefix, spec.ForwardedPrefixSet = "", false
		if spec.Target == "" && spec.Host == "" && !spec.ForwardedPrefixSet {
			return nil
		}
		rw, err = match.NewRewrite(spec)
	}
	if err != nil {
		// Each value parsed on its own when read; nothing else can fail.
		return nil
	}
	rv.built[i] = rw
	return rw
}

// checkRewrites warns about what an Ingress's rewrite annotations will not
// do as written: an nginx x-forwarded-prefix on an Ingress none of whose
// paths rewrite-target rewrites (ingress-nginx sets the header only
// together with a rewrite), and a target that is not an absolute path or
// URL, which nginx would send as is and ramjet sends with a leading "/".
func (b *builder) checkRewrites() {
	for _, ing := range b.ingresses {
		rv := ing.ann.rewriteR()
		if t := rv.target; rv.targetKey != "" && !strings.HasPrefix(t, "/") {
			rw, err := match.NewRewrite(match.Rewrite{Target: t, Syntax: syntaxOf(rv.targetKey)})
			if err == nil && !rw.Redirect() {
				b.warn(AnnotationSubstituted, ing.ref(), annotationField(rv.targetKey),
					rv.targetKey+" "+strconv.Quote(t)+" does not begin with /: the backend is sent the rewritten path with a leading /, where nginx would send a request-target that is not a path")
			}
		}
		if rv.prefixKey == "" || native(rv.prefixKey) {
			continue
		}
		used := false
		if rv.targetKey != "" {
			for i := range ing.obj.Spec.Rules {
				rule := &ing.obj.Spec.Rules[i]
				if rule.HTTP == nil {
					continue
				}
				for j := range rule.HTTP.Paths {
					p := &rule.HTTP.Paths[j]
					twin, _ := prefixTwin(p)
					used = used || native(rv.targetKey) || rv.nginxRewrites(declaredPath(p)) || twin != "" && rv.nginxRewrites(twin)
				}
			}
		}
		if !used {
			b.warn(AnnotationRejected, ing.ref(), annotationField(rv.prefixKey),
				rv.prefixKey+" takes effect only on paths rewrite-target rewrites, as in ingress-nginx, and this Ingress rewrites none; not applied")
		}
	}
}
