package compile

import (
	"net/url"
	"slices"
	"strconv"
	"strings"

	"ramjet.dev/ramjet/match"
)

// The redirect and host annotations (SPEC §11): app-root,
// permanent-redirect(-code), temporal-redirect(-code), relative-redirects,
// from-to-www-redirect, server-alias, service-upstream and default-backend.
// Their values are recorded as read and judged together once every
// annotation of the Ingress is known (resolveRedirectAnnotations), because
// ingress-nginx reads some only in the absence of others: the -code of
// permanent-redirect is not read when temporal-redirect is set.
func init() {
	rec := func(field func(*redirectAnnotations) *annValue) func(v *annotationValues, key, value string) error {
		return func(v *annotationValues, key, value string) error {
			if v.redirect == nil {
				v.redirect = new(redirectAnnotations)
			}
			*field(v.redirect) = annValue{key: key, value: value}
			return nil
		}
	}
	registerAnnotations(map[string]annotationSpec{
		"app-root":                {apply: rec(func(r *redirectAnnotations) *annValue { return &r.appRoot })},
		"permanent-redirect":      {apply: rec(func(r *redirectAnnotations) *annValue { return &r.permanent })},
		"permanent-redirect-code": {apply: rec(func(r *redirectAnnotations) *annValue { return &r.permanentCode })},
		"temporal-redirect":       {apply: rec(func(r *redirectAnnotations) *annValue { return &r.temporal })},
		"temporal-redirect-code":  {apply: rec(func(r *redirectAnnotations) *annValue { return &r.temporalCode })},
		"relative-redirects":      {apply: rec(func(r *redirectAnnotations) *annValue { return &r.relative })},
		"from-to-www-redirect":    {apply: rec(func(r *redirectAnnotations) *annValue { return &r.fromToWWW })},
		"server-alias":            {apply: rec(func(r *redirectAnnotations) *annValue { return &r.alias })},
		"service-upstream":        {apply: rec(func(r *redirectAnnotations) *annValue { return &r.serviceUpstream })},
		"default-backend":         {apply: rec(func(r *redirectAnnotations) *annValue { return &r.defaultBackend })},
	})
}

// annValue is one annotation as written; key "" means unset.
type annValue struct{ key, value string }

func (a annValue) set() bool    { return a.key != "" }
func (a annValue) native() bool { return strings.HasPrefix(a.key, NativePrefix) }

// redirectAnnotations are one Ingress's redirect and host annotations: as
// written, then as resolved.
type redirectAnnotations struct {
	appRoot, permanent, permanentCode, temporal, temporalCode   annValue
	relative, fromToWWW, alias, serviceUpstream, defaultBackend annValue

	// route is the redirect the Ingress's routes answer (nil: proxy).
	route *match.Redirect
	// fromToWWW: from-to-www-redirect is on for the Ingress's hosts.
	wwwOn bool
	// appRootPath is the app-root to apply ("" when unset or rejected).
	appRootPath string
	// aliases are the accepted server-alias names, sorted, unique.
	aliases []string
	// upstream: service-upstream is on.
	upstream bool
	// defaultService names the default-backend Service ("" when unset).
	defaultService string
	// withheld is the annotation whose value made ingress-nginx ignore
	// the whole Ingress ("" when none).
	withheld string
}

// noRedirects stands for an Ingress without any of these annotations. It
// is never written.
var noRedirects redirectAnnotations

// redirectAnns returns the Ingress's redirect and host annotations.
func (ing *ingress) redirectAnns() *redirectAnnotations {
	if ing.ann.redirect == nil {
		return &noRedirects
	}
	return ing.ann.redirect
}

// Status code ranges ingress-nginx accepts for the -code annotations; any
// other number falls back to the default.
const (
	defaultPermanentCode = 301
	defaultTemporalCode  = 302
	maxPermanentCode     = 308
	maxTemporalCode      = 307
)

// resolveRedirectAnnotations judges every claimed Ingress's redirect and
// host annotations, then takes out of the build the Ingresses ingress-nginx
// would ignore altogether.
//
// Under ramjet.dev/ an invalid value is rejected on its own
// (AnnotationRejected) and the rest of the Ingress compiles. Under
// nginx.ingress.kubernetes.io/ each value is judged as ingress-nginx does:
// where its annotation validation refuses a value (characters outside the
// annotation's set, a boolean or number that does not parse) ingress-nginx
// ignores the whole Ingress, so ramjet does too, with AnnotationRejected
// saying so; where it merely drops the annotation, so does ramjet, with a
// warning.
func (b *builder) resolveRedirectAnnotations() {
	kept := b.ingresses[:0]
	for _, ing := range b.ingresses {
		r := ing.ann.redirect
		if r == nil {
			kept = append(kept, ing)
			continue
		}
		b.resolveRedirect(ing, r)
		b.resolveAppRoot(ing, r)
		b.resolveAliases(ing, r)
		b.resolveBackendAnnotations(ing, r)
		if r.withheld == "" {
			kept = append(kept, ing)
		}
	}
	clear(b.ingresses[len(kept):])
	b.ingresses = kept
}

// withhold marks the Ingress as ignored over the annotation at a.
func (b *builder) withhold(ing *ingress, r *redirectAnnotations, a annValue, why string) {
	b.warn(AnnotationRejected, ing.ref(), annotationField(a.key),
		a.key+" "+strconv.Quote(a.value)+" "+why+
			"; ingress-nginx ignores the whole Ingress over it, and so does ramjet: this Ingress creates no hosts, routes, fallbacks or certificates")
	if r.withheld == "" {
		r.withheld = a.key
	}
}

func (b *builder) rejectAnnotation(ing *ingress, a annValue, why, consequence string) {
	b.warn(AnnotationRejected, ing.ref(), annotationField(a.key), a.key+" "+strconv.Quote(a.value)+" "+why+"; "+consequence)
}

// resolveRedirect follows ingress-nginx's redirect annotation parser: the
// booleans first, then temporal-redirect with its code, which wins, else
// permanent-redirect with its code. The first problem ends the parse, as
// there; a nginx-prefixed value that fails validation withholds the
// Ingress, one that is merely unusable drops every redirect annotation.
func (b *builder) resolveRedirect(ing *ingress, r *redirectAnnotations) {
	p := redirectParse{b: b, ing: ing, r: r, ok: true}
	www := p.boolean(r.fromToWWW)
	relative := p.boolean(r.relative)
	dest, status := p.target(r.temporal), 0
	if dest != "" {
		status = p.code(r.temporalCode, defaultTemporalCode, maxTemporalCode)
		if p.ok && !r.temporal.native() && !nginxTemporalURL(dest) {
			// Checked after the code, as there.
			p.drop(r.temporal, "is not an http or https URL")
		}
		if r.permanent.set() && p.ok {
			b.conflict(AnnotationConflict, ing.ref(), annotationField(r.permanent.key),
				r.permanent.key+" is not applied: "+r.temporal.key+" is set too and wins, as in ingress-nginx",
				ing.ref(), annotationField(r.temporal.key))
		}
	} else if !r.temporal.set() || r.temporal.native() && p.ok {
		dest = p.target(r.permanent)
		status = p.code(r.permanentCode, defaultPermanentCode, maxPermanentCode)
	}
	if !p.ok {
		return
	}
	if dest != "" {
		r.route = &match.Redirect{Code: status, URL: dest, Relative: relative}
	}
	r.wwwOn = www
}

// redirectParse reads one Ingress's redirect annotations in
// ingress-nginx's order; ok turns false at the first problem that ends
// the parse there.
type redirectParse struct {
	b   *builder
	ing *ingress
	r   *redirectAnnotations
	ok  bool
}

// drop ends the parse over a, dropping every redirect annotation.
func (p *redirectParse) drop(a annValue, why string) {
	p.ok = false
	p.b.rejectAnnotation(p.ing, a, why,
		"no redirect annotation of this Ingress is applied (from-to-www-redirect and relative-redirects included), as in ingress-nginx")
}

// withhold ends the parse over a and withholds the Ingress.
func (p *redirectParse) withhold(a annValue, why string) {
	p.ok = false
	p.b.withhold(p.ing, p.r, a, why)
}

func (p *redirectParse) boolean(a annValue) bool {
	if !p.ok || !a.set() {
		return false
	}
	on, err := strconv.ParseBool(a.value)
	switch {
	case err == nil:
		return on
	case a.native():
		p.b.rejectAnnotation(p.ing, a, "is not a boolean (true or false)", "not applied")
	case a.value == "":
		p.drop(a, "is empty")
	default:
		p.withhold(a, "is not a boolean (true or false)")
	}
	return false
}

func (p *redirectParse) target(a annValue) string {
	if !p.ok || !a.set() {
		return ""
	}
	switch {
	case a.native():
		if why := badNativeRedirectURL(a.value); why != "" {
			p.b.rejectAnnotation(p.ing, a, why, "not applied")
			return ""
		}
		return a.value
	case a.value == "":
		p.drop(a, "is empty")
	case !onlyBytes(a.value, nginxURLBytes):
		p.withhold(a, "has a character outside ingress-nginx's URL set (letters, digits and -._~/:,?&=)")
	default:
		return a.value
	}
	return ""
}

// code reads a -code annotation: a status from 300 to highest, else def.
func (p *redirectParse) code(a annValue, def, highest int) int {
	if !p.ok || !a.set() {
		return def
	}
	n, err := strconv.Atoi(a.value)
	outOfRange := "is not a redirect status from 300 to " + strconv.Itoa(highest)
	switch {
	case err == nil && n >= 300 && n <= highest:
		return n
	case a.native():
		p.b.rejectAnnotation(p.ing, a, outOfRange, "the default "+strconv.Itoa(def)+" is used")
	case err == nil:
		p.b.rejectAnnotation(p.ing, a, outOfRange, "the default "+strconv.Itoa(def)+" is used, as in ingress-nginx")
	case a.value == "":
		p.drop(a, "is empty")
	default:
		p.withhold(a, "is not a number")
	}
	return def
}

// nginxURLBytes is ingress-nginx's character set for redirect URLs.
const nginxURLBytes = "-._~/:,?&="

// onlyBytes reports whether s holds only ASCII letters, digits and the
// bytes in extra.
func onlyBytes(s, extra string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte(extra, c) >= 0 {
			continue
		}
		return false
	}
	return true
}

// nginxTemporalURL is ingress-nginx's check on temporal-redirect: it parses
// as a URL whose scheme starts with "http" (so a path alone is refused).
func nginxTemporalURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && strings.HasPrefix(u.Scheme, "http")
}

// badNativeRedirectURL says why s is not a redirect target ramjet.dev/
// accepts: an absolute http or https URL with a host, or a path starting
// with a single "/"; "" when it is one.
func badNativeRedirectURL(s string) string {
	if why := unsafeHeaderValue(s); why != "" {
		return why
	}
	if strings.HasPrefix(s, "/") {
		if strings.HasPrefix(s, "//") {
			return "starts with //, which browsers read as another host; write the URL with its scheme"
		}
		if _, err := url.Parse(s); err != nil {
			return "is not a valid URL path"
		}
		return ""
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return "is not an absolute http or https URL with a host, or a path starting with /"
	}
	return ""
}

// unsafeHeaderValue refuses what cannot go into a Location header as is.
func unsafeHeaderValue(s string) string {
	if s == "" {
		return "is empty"
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c >= 0x7f {
			return "contains a space, control or non-ASCII character"
		}
	}
	return ""
}

// resolveAppRoot follows ingress-nginx: a value outside its character set,
// one that is not a request URI, or an absolute URL is ignored with a
// warning. A "$" (an nginx variable there) is refused here (§19).
func (b *builder) resolveAppRoot(ing *ingress, r *redirectAnnotations) {
	a := r.appRoot
	if !a.set() {
		return
	}
	consequence := "not applied"
	if !a.native() {
		consequence = "not applied, as in ingress-nginx"
	}
	switch {
	case a.value == "":
		b.rejectAnnotation(ing, a, "is empty", consequence)
	case strings.Contains(a.value, "$"):
		b.rejectAnnotation(ing, a, "contains $, which nginx would expand as a variable; ramjet does not expand variables", "not applied")
	case a.native() && badAppRoot(a.value) != "":
		b.rejectAnnotation(ing, a, badAppRoot(a.value), consequence)
	case !a.native() && !onlyBytes(strings.TrimPrefix(a.value, "/"), "-._~/:"):
		b.rejectAnnotation(ing, a, "has a character outside ingress-nginx's app-root set (letters, digits and -._~/:)", consequence)
	case !a.native() && badAppRoot(a.value) != "":
		b.rejectAnnotation(ing, a, badAppRoot(a.value), consequence)
	default:
		r.appRootPath = a.value
	}
}

// badAppRoot says why s is not an app-root: it must be a path starting with
// a single "/".
func badAppRoot(s string) string {
	if why := unsafeHeaderValue(s); why != "" {
		return why
	}
	if !strings.HasPrefix(s, "/") || strings.HasPrefix(s, "//") {
		return "is not a path starting with a single /"
	}
	if _, err := url.ParseRequestURI(s); err != nil {
		return "is not a valid request URI"
	}
	return ""
}

// resolveAliases reads server-alias: comma-separated names, trimmed, empty
// ones skipped, sorted and unique (ingress-nginx's parse). Under the nginx
// prefix a name with a character outside nginx's server-name set withholds
// the Ingress. Names are matched without regard to case, as nginx does.
// ramjet serves exact names and "*.<rest>" wildcards (one label, like rule
// hosts, AnnotationSubstituted); nginx's regex ("~...") and other wildcard
// forms are refused name by name (§19).
func (b *builder) resolveAliases(ing *ingress, r *redirectAnnotations) {
	a := r.alias
	if !a.set() {
		return
	}
	var names []string
	for item := range strings.SplitSeq(a.value, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		if !a.native() && !onlyBytes(item, `-._~/:^$[](){}*+?|&=\`) {
			b.withhold(ing, r, a, "has a server name ("+strconv.Quote(item)+") with a character nginx does not accept")
			return
		}
		names = append(names, item)
	}
	slices.Sort(names)
	names = slices.Compact(names)
	for _, n := range names {
		name := strings.ToLower(n)
		switch why := invalidHost(name); {
		case strings.HasPrefix(n, "~"):
			b.rejectAnnotation(ing, a, "names the regular expression "+strconv.Quote(n)+"; ramjet serves exact alias names and *.<domain> wildcards only", "that alias is not served")
			continue
		case why != "":
			b.rejectAnnotation(ing, a, "names "+strconv.Quote(n)+", which "+why, "that alias is not served")
			continue
		case strings.HasPrefix(name, "*."):
			b.warn(AnnotationSubstituted, ing.ref(), annotationField(a.key),
				"the alias "+strconv.Quote(n)+" matches exactly one more label here, as rule hosts do; nginx matches any number of labels")
		}
		r.aliases = append(r.aliases, name)
	}
	slices.Sort(r.aliases)
	r.aliases = slices.Compact(r.aliases)
}

// resolveBackendAnnotations reads service-upstream and default-backend.
// ingress-nginx reads a service-upstream that is not a boolean as false,
// and ignores the whole Ingress over a default-backend that is not a
// DNS-1035 label.
func (b *builder) resolveBackendAnnotations(ing *ingress, r *redirectAnnotations) {
	if a := r.serviceUpstream; a.set() {
		on, err := strconv.ParseBool(a.value)
		switch {
		case err == nil:
			r.upstream = on
		case a.native():
			b.rejectAnnotation(ing, a, "is not a boolean (true or false)", "not applied")
		default:
			b.rejectAnnotation(ing, a, "is not a boolean (true or false)", "read as false, as in ingress-nginx")
		}
	}
	if a := r.defaultBackend; a.set() {
		switch why := invalidDNSLabel(a.value); {
		case why == "":
			r.defaultService = a.value
		case a.native() || a.value == "":
			b.rejectAnnotation(ing, a, why, "not applied")
		default:
			b.withhold(ing, r, a, why)
		}
	}
}

// invalidDNSLabel checks a Service name: a DNS-1035 label.
func invalidDNSLabel(s string) string {
	switch {
	case s == "":
		return "is empty"
	case len(s) > 63:
		return "is longer than 63 characters, so it names no Service"
	case s[0] < 'a' || s[0] > 'z':
		return "does not start with a lower-case letter, so it names no Service"
	case s[len(s)-1] == '-':
		return "ends in '-', so it names no Service"
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return "contains " + strconv.QuoteRune(rune(c)) + ", so it names no Service (a DNS-1035 label)"
		}
	}
	return ""
}
