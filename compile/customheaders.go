package compile

import (
	"errors"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"ramjet.dev/ramjet/match"
)

// custom-headers, read as ingress-nginx v1.15 reads it
// (internal/ingress/annotations/customheaders): the ConfigMap
// "namespace/name", of any namespace, whose data are response headers set
// on every answer of the Ingress's locations, after its
// configuration-snippet (nginx.tmpl's more_set_headers for
// $location.CustomHeaders). The parser hands the value to the store as its
// key, unchecked (allow-cross-namespace-resources does not gate it), so a
// bare name finds no ConfigMap. A missing ConfigMap, a name or value its
// patterns refuse, or a header the ConfigMap key
// global-allowed-response-headers does not list denies the location: 503
// to every request. Values are sent as written: the template escapes each
// "$".
func init() {
	registerAnnotations(map[string]annotationSpec{"custom-headers": {apply: applyCustomHeaders}})
}

var (
	// customHeadersNameRE is the annotation's validator (BasicCharsRegex).
	customHeadersNameRE = regexp.MustCompile(`^[/\-._~a-zA-Z0-9:]*$`)
	// customHeaderValueRE is customheaders' valueRegexp.
	customHeaderValueRE = regexp.MustCompile(`^[a-zA-Z\d_ :;.,\\/"'?!(){}\[\]@<>=\-+*#$&` + "`" + `|~^%]+$`)
)

func applyCustomHeaders(v *annotationValues, key, value string) error {
	if value == "" || !customHeadersNameRE.MatchString(value) {
		return errors.New(key + " " + strconv.Quote(value) + " is not a ConfigMap namespace/name; no headers are set, as in ingress-nginx")
	}
	r := v.responseW()
	r.headersKey, r.headersFrom = key, value
	return nil
}

// customHeaders resolves ing's custom-headers once: the steps that set
// the headers, or why the location is denied.
func (b *builder) customHeaders(ing *ingress) (ops []match.SnippetOp, denied string) {
	rv := ing.ann.response
	if rv == nil || rv.headersFrom == "" {
		return nil, ""
	}
	if rv.headersDone {
		return rv.headerOps, rv.headersDenied
	}
	rv.headersDone = true
	rv.headerOps, rv.headersDenied = b.resolveCustomHeaders(ing, rv.headersKey, rv.headersFrom)
	return rv.headerOps, rv.headersDenied
}

func (b *builder) resolveCustomHeaders(ing *ingress, key, value string) ([]match.SnippetOp, string) {
	deny := func(why string) ([]match.SnippetOp, string) {
		b.warn(AnnotationRejected, ing.ref(), annotationField(key), key+": "+why+"; every request to this Ingress's paths answers 503")
		return nil, key + ": " + why
	}
	ns, name, found := strings.Cut(value, "/")
	switch {
	case !found:
		return deny(strconv.Quote(value) + " names no namespace: ingress-nginx looks the ConfigMap up by namespace/name and finds none (write " + ing.obj.Namespace + "/" + value + ")")
	case name == "" || ns == "" || strings.Contains(name, "/"):
		return deny(strconv.Quote(value) + " is not a ConfigMap namespace/name")
	}
	cm := findConfigMap(b.snap.ConfigMaps, ns, name)
	if cm == nil {
		return deny("ConfigMap " + ns + "/" + name + " not found")
	}
	allowed := b.opts.ConfigMap.allowedResponseHeaders()
	names := make([]string, 0, len(cm.Data))
	for k := range cm.Data {
		names = append(names, k)
	}
	// The template ranges over the map in key order; the last of two
	// names differing in case wins, as there.
	slices.Sort(names)
	ops := make([]match.SnippetOp, 0, len(names))
	for _, k := range names {
		val := cm.Data[k]
		switch {
		case !authHeaderRE.MatchString(k):
			return deny("ConfigMap " + ns + "/" + name + ": " + strconv.Quote(k) + " is not a header name")
		case !customHeaderValueRE.MatchString(val):
			return deny("ConfigMap " + ns + "/" + name + ": the value of " + k + " is empty or has a character ingress-nginx refuses")
		case !slices.Contains(allowed, k) && len(allowed) == 0:
			return deny("ConfigMap " + ns + "/" + name + ": header " + k + " is not allowed: the ConfigMap key global-allowed-response-headers lists none, its default")
		case !slices.Contains(allowed, k):
			return deny("ConfigMap " + ns + "/" + name + ": header " + k + " is not in the ConfigMap key global-allowed-response-headers (" + strings.Join(allowed, ",") + ")")
		}
		ops = append(ops, match.SnippetOp{Kind: match.OpSetHeader, Name: k, Value: val, Literal: true})
	}
	return ops, ""
}

// applyCustomHeaders puts each Ingress's custom-headers after its
// locations' snippet steps, on its routes and on the fallback it gives
// its hosts' settings to.
func (b *builder) applyCustomHeaders() {
	found := false
	for _, ing := range b.ingresses {
		if rv := ing.ann.response; rv != nil && rv.headersFrom != "" {
			found = true
			break
		}
	}
	if !found {
		return
	}
	for _, v := range b.vhostOrder {
		for _, r := range v.vh.Routes {
			if ing := b.ingressOf(r.Source); ing != nil {
				ops, _ := b.customHeaders(ing)
				r.Snippet = appendOps(r.Snippet, ops)
			}
		}
		if ing := v.settingsFrom; ing != nil {
			ops, _ := b.customHeaders(ing)
			v.vh.FallbackLocation.Snippet = appendOps(v.vh.FallbackLocation.Snippet, ops)
		}
	}
}

// appendOps is s with ops last among its location's steps.
func appendOps(s *match.Snippet, ops []match.SnippetOp) *match.Snippet {
	if len(ops) == 0 {
		return s
	}
	var out match.Snippet
	if s != nil {
		out = *s
	}
	out.Ops = slices.Concat(out.Ops, ops)
	p, err := match.NewSnippet(out)
	if err != nil {
		panic("compile: custom headers: " + err.Error()) // literal values and prepared ops
	}
	return p
}
