package gatewayapi

import (
	"strconv"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"ramjet.dev/ramjet/compile"
	"ramjet.dev/ramjet/match"
)

// conditions translates a match's method, headers and query parameters
// (Exact and RegularExpression). A type this translation does not know
// refuses the match.
func (t *translator) conditions(r *gwv1.HTTPRoute, field string, m gwv1.HTTPRouteMatch) (compile.HTTPRouteMatch, bool) {
	var cm compile.HTTPRouteMatch
	if m.Method != nil {
		cm.Method = string(*m.Method)
	}
	for i, h := range m.Headers {
		regex, ok := valueType(deref(h.Type, gwv1.HeaderMatchExact))
		if !ok {
			t.warn(Unsupported, r, field+".headers["+strconv.Itoa(i)+"].type", "header match type "+strconv.Quote(string(*h.Type))+" is unknown; this match is not served")
			return cm, false
		}
		cm.Headers = append(cm.Headers, match.ValueMatch{Name: string(h.Name), Value: h.Value, Regex: regex})
	}
	for i, q := range m.QueryParams {
		regex, ok := valueType(deref(q.Type, gwv1.QueryParamMatchExact))
		if !ok {
			t.warn(Unsupported, r, field+".queryParams["+strconv.Itoa(i)+"].type", "query parameter match type "+strconv.Quote(string(*q.Type))+" is unknown; this match is not served")
			return cm, false
		}
		cm.QueryParams = append(cm.QueryParams, match.ValueMatch{Name: string(q.Name), Value: q.Value, Regex: regex})
	}
	return cm, true
}

// valueType reads a header or query parameter match type: regex is true
// for RegularExpression; ok is false for a type neither Exact nor that.
func valueType[T ~string](typ T) (regex, ok bool) {
	switch string(typ) {
	case "Exact":
		return false, true
	case "RegularExpression":
		return true, true
	}
	return false, false
}
