package compile

import (
	"regexp"
	"strconv"
	"strings"

	"ramjet.dev/ramjet/match"
)

// CORS (SPEC §11.6): enable-cors and the cors-* annotations, read as
// ingress-nginx reads them. Where ingress-nginx falls back to a wider
// setting on a value it cannot use (any origin, credentials allowed, every
// default method or header), ramjet rejects the annotation and closes the
// policy instead: no origin qualifies, so responses carry no CORS headers
// and a browser keeps its same-origin rules. A rejected cors-expose-headers
// or cors-max-age falls back as in ingress-nginx (none, 1728000 s), which
// widens nothing.

var (
	corsOriginRE  = regexp.MustCompile(`^([a-z]+://(\*\.)?[A-Za-z0-9\-.]*(:\d+)?|null)$`)
	corsMethodsRE = regexp.MustCompile(`^([A-Za-z]+,?\s?)+$`)
	corsHeadersRE = regexp.MustCompile(`^[A-Za-z0-9\-_, ]*$`)
	corsExposeRE  = regexp.MustCompile(`^(([A-Za-z0-9\-_]+|\*),?\s?)+$`)
)

func init() {
	keys := map[string]annotationSpec{}
	for _, k := range []string{"enable-cors", "cors-allow-origin", "cors-allow-methods", "cors-allow-headers",
		"cors-expose-headers", "cors-allow-credentials", "cors-max-age"} {
		keys[k] = annotationSpec{apply: keepAccessAnnotation}
	}
	registerAnnotations(keys)
}

// resolveCORS builds the Ingress's CORS policy; nil when enable-cors is
// not true.
func (b *builder) resolveCORS(ing *ingress) *match.CORS {
	raw := &ing.ann.access
	enable, ok := raw.get("enable-cors")
	if !ok {
		return nil
	}
	on, err := strconv.ParseBool(enable.value)
	if err != nil {
		b.rejectAccess(ing, enable.key, strconv.Quote(enable.value)+" is not a boolean; CORS stays off")
		return nil
	}
	if !on {
		return nil
	}
	c := match.CORS{
		AnyOrigin:   true,
		Methods:     match.DefaultCORSMethods,
		Headers:     match.DefaultCORSHeaders,
		Credentials: true,
		MaxAge:      match.DefaultCORSMaxAge,
	}
	closed := ""
	closeOn := func(a accessValue, why string) {
		b.rejectAccess(ing, a.key, why+"; CORS on this Ingress's paths allows no origin")
		if closed == "" || a.key < closed {
			closed = a.key
		}
	}
	if a, ok := raw.get("cors-allow-origin"); ok {
		origins, bad := parseCORSOrigins(a.value)
		switch {
		case bad != "":
			closeOn(a, "origin "+strconv.Quote(bad)+" is not scheme://host[:port], scheme://*.host[:port], null or *")
		case len(origins) == 0:
			closeOn(a, "names no origin")
		case len(origins) == 1 && origins[0] == "*":
		default:
			c.AnyOrigin, c.Origins = false, origins
		}
	}
	if a, ok := raw.get("cors-allow-methods"); ok {
		if v := strings.TrimSpace(a.value); corsMethodsRE.MatchString(v) {
			c.Methods = a.value
		} else {
			closeOn(a, strconv.Quote(a.value)+" is not a list of method names")
		}
	}
	if a, ok := raw.get("cors-allow-headers"); ok && a.value != "" {
		if corsHeadersRE.MatchString(a.value) {
			c.Headers = a.value
		} else {
			closeOn(a, strconv.Quote(a.value)+" is not a list of header names (letters, digits, '-', '_')")
		}
	}
	if a, ok := raw.get("cors-allow-credentials"); ok {
		if v, err := strconv.ParseBool(a.value); err == nil {
			c.Credentials = v
		} else {
			closeOn(a, strconv.Quote(a.value)+" is not a boolean")
		}
	}
	if a, ok := raw.get("cors-expose-headers"); ok && a.value != "" {
		if corsExposeRE.MatchString(a.value) {
			c.ExposeHeaders = a.value
		} else {
			b.rejectAccess(ing, a.key, strconv.Quote(a.value)+" is not a list of header names or *; no Access-Control-Expose-Headers is sent")
		}
	}
	if a, ok := raw.get("cors-max-age"); ok {
		if v, err := strconv.Atoi(strings.TrimSpace(a.value)); err == nil && v >= 0 {
			c.MaxAge = v
		} else {
			b.rejectAccess(ing, a.key, strconv.Quote(a.value)+" is not a number of seconds; the default 1728000 is sent")
		}
	}
	if closed != "" {
		c = match.CORS{Closed: closed, Methods: c.Methods, Headers: c.Headers}
	}
	return match.NewCORS(c)
}

// parseCORSOrigins splits a cors-allow-origin list as ingress-nginx does:
// comma-separated, spaces trimmed, empty entries skipped, and any "*"
// making the whole list "*". bad is the first entry that is no origin.
func parseCORSOrigins(v string) (origins []string, bad string) {
	for _, o := range strings.Split(v, ",") {
		o = strings.TrimSpace(o)
		switch {
		case o == "":
			continue
		case o == "*":
			return []string{"*"}, ""
		case !corsOriginRE.MatchString(o):
			if bad == "" {
				bad = o
			}
			continue
		}
		origins = append(origins, o)
	}
	return origins, bad
}
