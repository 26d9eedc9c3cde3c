package gatewayapi

import (
	"strconv"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"ramjet.dev/ramjet/compile"
)

// backendFilters translates the filters of a backendRef, which apply
// only to the requests sent to that backend, after the rule's
// (compile.WeightedBackend): RequestHeaderModifier,
// ResponseHeaderModifier, URLRewrite and RequestRedirect, once each, and
// RequestMirror, as often as given. Any other filter
// there warns and says why (unserved), and the backend's share answers
// 500, as a filter that cannot be applied must not be skipped (Gateway
// API, HTTPRouteFilter).
func (t *translator) backendFilters(r *gwv1.HTTPRoute, field string, filters []gwv1.HTTPRouteFilter, wb *compile.WeightedBackend) (unserved string) {
	for j, f := range filters {
		ff := field + ".filters[" + strconv.Itoa(j) + "]"
		switch {
		case f.Type == gwv1.HTTPRouteFilterRequestHeaderModifier && f.RequestHeaderModifier != nil && wb.RequestHeaders == nil:
			wb.RequestHeaders = headerModifier(ff, f.RequestHeaderModifier)
			continue
		case f.Type == gwv1.HTTPRouteFilterResponseHeaderModifier && f.ResponseHeaderModifier != nil && wb.ResponseHeaders == nil:
			wb.ResponseHeaders = headerModifier(ff, f.ResponseHeaderModifier)
			continue
		case f.Type == gwv1.HTTPRouteFilterURLRewrite && f.URLRewrite != nil && wb.Rewrite == nil:
			if wb.Rewrite, wb.RewriteField = urlRewrite(f.URLRewrite), ff; wb.Rewrite != nil {
				continue
			}
			unserved = "path modifier " + strconv.Quote(string(f.URLRewrite.Path.Type)) + " without its value"
			ff += ".urlRewrite.path"
		case f.Type == gwv1.HTTPRouteFilterRequestMirror && f.RequestMirror != nil:
			wb.Mirrors = append(wb.Mirrors, t.mirror(r, ff, f.RequestMirror, "the backend"))
			continue
		case f.Type == gwv1.HTTPRouteFilterRequestRedirect && f.RequestRedirect != nil && wb.Redirect == nil:
			if wb.Redirect = redirect(ff, f.RequestRedirect); wb.Redirect != nil {
				continue
			}
			unserved = "a path modifier without its value"
			ff += ".requestRedirect.path"
		default:
			unserved = "filter " + string(f.Type) + " on a backendRef is not served (the header modifiers are, and an HTTPRoute's URLRewrite and RequestRedirect, once each, and RequestMirror)"
		}
		t.warn(Unsupported, r, ff, unserved+"; its share of the requests answers 500")
		return unserved
	}
	return ""
}
