package compile

import (
	"strconv"
	"strings"

	"ramjet.dev/ramjet/match"
)

// The redirect and host annotations (SPEC §11.1): app-root,
// permanent-redirect(-code), temporal-redirect(-code), relative-redirects,
// from-to-www-redirect, server-alias, service-upstream and default-backend.
// Each area registers its keys from its own file (route_redirect.go,
// host_actions.go, backend_annotations.go) into one record per Ingress.
// Their values are recorded as read and judged together once every
// annotation of the Ingress is known (resolveRedirectAnnotations), because
// ingress-nginx reads some only in the absence of others (the -code of
// permanent-redirect is not read when temporal-redirect is set), and where
// its validation refuses one of them it ignores the whole Ingress, which
// ramjet then withholds.

// recordRedirect is the apply function of one of these keys: it records
// the value as written in field of the Ingress's record.
func recordRedirect(field func(*redirectAnnotations) *annValue) func(v *annotationValues, key, value string) error {
	return func(v *annotationValues, key, value string) error {
		if v.redirect == nil {
			v.redirect = new(redirectAnnotations)
		}
		*field(v.redirect) = annValue{key: key, value: value}
		return nil
	}
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
