package compile

import (
	"net/url"
	"strconv"
	"strings"

	"ramjet.dev/ramjet/match"
)

// permanent-redirect and temporal-redirect with their -code,
// relative-redirects and from-to-www-redirect (SPEC §11.1), read together
// as ingress-nginx's redirect annotation parser reads them. The route
// redirect they make is attached in host_actions.go, which also makes the
// www twins, and answered by the router (router/host_actions.go).
func init() {
	registerAnnotations(map[string]annotationSpec{
		"permanent-redirect":      {apply: recordRedirect(func(r *redirectAnnotations) *annValue { return &r.permanent })},
		"permanent-redirect-code": {apply: recordRedirect(func(r *redirectAnnotations) *annValue { return &r.permanentCode })},
		"temporal-redirect":       {apply: recordRedirect(func(r *redirectAnnotations) *annValue { return &r.temporal })},
		"temporal-redirect-code":  {apply: recordRedirect(func(r *redirectAnnotations) *annValue { return &r.temporalCode })},
		"relative-redirects":      {apply: recordRedirect(func(r *redirectAnnotations) *annValue { return &r.relative })},
		"from-to-www-redirect":    {apply: recordRedirect(func(r *redirectAnnotations) *annValue { return &r.fromToWWW })},
	})
}

// Status code ranges ingress-nginx accepts for the -code annotations; any
// other number falls back to the default.
const (
	defaultPermanentCode = 301
	defaultTemporalCode  = 302
	maxPermanentCode     = 308
	maxTemporalCode      = 307
)

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
		r.route = &match.Redirect{Code: status, URL: dest, Relative: relative || b.opts.RelativeRedirects}
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
