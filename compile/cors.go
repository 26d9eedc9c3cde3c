package compile

import (
	"regexp"
	"strconv"
	"strings"

	"ramjet.dev/ramjet/match"
)

// CORS (SPEC §11.6): enable-cors and the cors-* annotations, read as
// ingress-nginx reads them (internal/ingress/annotations/cors/main.go):
// each value is checked on its own, and one that does not validate falls
// back to that key's default, with a warning, rather than turning CORS
// off. A blank value is the default, as if unset. In cors-allow-origin an
// entry that is no origin is skipped and the others still apply; a value
// that fails ingress-nginx's check of the whole list allows any origin,
// as there, and says so in its warning.

var (
	// corsOriginListRE is ingress-nginx's validator of a whole
	// cors-allow-origin value, its spaces removed (main.go:46, 77).
	corsOriginListRE = regexp.MustCompile(`^((((([a-z]+://)?(\*\.)?[A-Za-z0-9\-.]*(:\d+)?,?)|null)+)|\*)?$`)
	// corsOriginRE is its check of each entry (main.go:48, 214).
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
	// get is the key's value unless it is blank, which is the default
	// (ingress-nginx's parser refuses an empty value).
	get := func(key string) (accessValue, bool) {
		a, ok := raw.get(key)
		return a, ok && strings.TrimSpace(a.value) != ""
	}
	if a, ok := get("cors-allow-origin"); ok {
		origins, skipped, anyOrigin, invalid := parseCORSOrigins(a.value)
		switch {
		case invalid:
			b.rejectAccess(ing, a.key, strconv.Quote(a.value)+" is not a list of scheme://host[:port], scheme://*.host[:port] and null; any origin is allowed, as ingress-nginx allows it")
		case anyOrigin:
		case len(origins) == 0:
			// ingress-nginx then sets no origin check: CORS serves no one.
			b.rejectAccess(ing, a.key, strconv.Quote(a.value)+" names no origin (scheme://host[:port], scheme://*.host[:port] or null); no origin is allowed")
			c.AnyOrigin, c.Closed = false, a.key
		default:
			c.AnyOrigin, c.Origins = false, origins
			if len(skipped) > 0 {
				b.rejectAccess(ing, a.key, "skipped "+quoteList(skipped)+", which "+isOrAre(skipped)+" no origin (scheme://host[:port], scheme://*.host[:port] or null)")
			}
		}
	}
	if a, ok := get("cors-allow-methods"); ok {
		if v, valid := corsValue(a.value, corsMethodsRE); valid {
			c.Methods = v
		} else {
			b.rejectAccess(ing, a.key, strconv.Quote(a.value)+" is not a list of method names; the default "+strconv.Quote(match.DefaultCORSMethods)+" is sent")
		}
	}
	if a, ok := get("cors-allow-headers"); ok {
		if v, valid := corsValue(a.value, corsHeadersRE); valid {
			c.Headers = v
		} else {
			b.rejectAccess(ing, a.key, strconv.Quote(a.value)+" is not a list of header names (letters, digits, '-', '_'); the default list is sent")
		}
	}
	if a, ok := get("cors-allow-credentials"); ok {
		// Validated and parsed as written, spaces included (main.go:238).
		if v, err := strconv.ParseBool(a.value); err == nil {
			c.Credentials = v
		} else {
			b.rejectAccess(ing, a.key, strconv.Quote(a.value)+" is not a boolean; credentials are allowed, the default")
		}
	}
	if a, ok := get("cors-expose-headers"); ok {
		if v, valid := corsValue(a.value, corsExposeRE); valid {
			c.ExposeHeaders = v
		} else {
			b.rejectAccess(ing, a.key, strconv.Quote(a.value)+" is not a list of header names or *; no Access-Control-Expose-Headers is sent")
		}
	}
	if a, ok := get("cors-max-age"); ok {
		// Any whole number, as written (main.go:253): strconv.Atoi there.
		if v, err := strconv.Atoi(a.value); err == nil {
			c.MaxAge = v
		} else {
			b.rejectAccess(ing, a.key, strconv.Quote(a.value)+" is not a whole number of seconds; the default 1728000 is sent")
		}
	}
	if c.Closed != "" {
		c = match.CORS{Closed: c.Closed, Methods: c.Methods, Headers: c.Headers}
	}
	return match.NewCORS(c)
}

// corsValue reads a cors-* list as ingress-nginx does
// (parser.checkAnnotation, ValidateRegex and parseString, then the check
// in cors/main.go): the value with its spaces removed must match re and
// hold no line break, and the value trimmed must match it too; that is
// the value used.
func corsValue(raw string, re *regexp.Regexp) (string, bool) {
	if strings.ContainsAny(raw, "\r\n") || !re.MatchString(strings.ReplaceAll(raw, " ", "")) {
		return "", false
	}
	v := strings.TrimSpace(raw)
	return v, re.MatchString(v)
}

// parseCORSOrigins reads a non-blank cors-allow-origin value as
// ingress-nginx does (cors/main.go:200-226): a value that fails the check
// of the whole list (invalid) allows any origin; otherwise it is split at
// commas, spaces trimmed, empty entries skipped, "*" allowing any origin,
// and an entry that is no origin skipped.
func parseCORSOrigins(v string) (origins, skipped []string, anyOrigin, invalid bool) {
	if strings.ContainsAny(v, "\r\n") || !corsOriginListRE.MatchString(strings.ReplaceAll(v, " ", "")) {
		return nil, nil, true, true
	}
	for o := range strings.SplitSeq(v, ",") {
		o = strings.TrimSpace(o)
		switch {
		case o == "":
		case o == "*":
			return nil, skipped, true, false
		case !corsOriginRE.MatchString(o):
			skipped = append(skipped, o)
		default:
			origins = append(origins, o)
		}
	}
	return origins, skipped, false, false
}

// quoteList quotes each of vs, comma-separated.
func quoteList(vs []string) string {
	q := make([]string, len(vs))
	for i, v := range vs {
		q[i] = strconv.Quote(v)
	}
	return strings.Join(q, ", ")
}

func isOrAre(vs []string) string {
	if len(vs) == 1 {
		return "is"
	}
	return "are"
}
