package gatewayapi

import (
	"strconv"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"ramjet.dev/ramjet/compile"
)

// backendFilters translates the filters of a backendRef, which apply
// only to the requests sent to that backend: RequestHeaderModifier and
// ResponseHeaderModifier, once each (compile.WeightedBackend). Any other
// filter there warns and leaves the backend out (ok false), as the API
// leaves their support to the implementation.
func (t *translator) backendFilters(r *gwv1.HTTPRoute, field string, filters []gwv1.HTTPRouteFilter, wb *compile.WeightedBackend) (ok bool) {
	for j, f := range filters {
		ff := field + ".filters[" + strconv.Itoa(j) + "]"
		switch {
		case f.Type == gwv1.HTTPRouteFilterRequestHeaderModifier && f.RequestHeaderModifier != nil && wb.RequestHeaders == nil:
			wb.RequestHeaders = headerModifier(ff, f.RequestHeaderModifier)
		case f.Type == gwv1.HTTPRouteFilterResponseHeaderModifier && f.ResponseHeaderModifier != nil && wb.ResponseHeaders == nil:
			wb.ResponseHeaders = headerModifier(ff, f.ResponseHeaderModifier)
		default:
			t.warn(Unsupported, r, ff, "filter "+string(f.Type)+" on a backendRef is not served (RequestHeaderModifier and ResponseHeaderModifier are, once each); the backend is not served")
			return false
		}
	}
	return true
}
