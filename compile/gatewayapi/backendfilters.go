package gatewayapi

import (
	"strconv"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"ramjet.dev/ramjet/compile"
)

// backendFilters translates the filters of a backendRef, which apply
// only to the requests sent to that backend: RequestHeaderModifier and
// ResponseHeaderModifier, once each (compile.WeightedBackend). Any other
// filter there warns and says why (unserved), and the backend's share
// answers 500, as a filter that cannot be applied must not be skipped
// (Gateway API, HTTPRouteFilter).
func (t *translator) backendFilters(r *gwv1.HTTPRoute, field string, filters []gwv1.HTTPRouteFilter, wb *compile.WeightedBackend) (unserved string) {
	for j, f := range filters {
		ff := field + ".filters[" + strconv.Itoa(j) + "]"
		switch {
		case f.Type == gwv1.HTTPRouteFilterRequestHeaderModifier && f.RequestHeaderModifier != nil && wb.RequestHeaders == nil:
			wb.RequestHeaders = headerModifier(ff, f.RequestHeaderModifier)
		case f.Type == gwv1.HTTPRouteFilterResponseHeaderModifier && f.ResponseHeaderModifier != nil && wb.ResponseHeaders == nil:
			wb.ResponseHeaders = headerModifier(ff, f.ResponseHeaderModifier)
		default:
			unserved = "filter " + string(f.Type) + " on a backendRef is not served (RequestHeaderModifier and ResponseHeaderModifier are, once each)"
			t.warn(Unsupported, r, ff, unserved+"; its share of the requests answers 500")
			return unserved
		}
	}
	return ""
}
