package match

import (
	"slices"
	"strings"
)

// regexCaseSection is whether a Regex route's pattern matches letters only
// as written (CompileRegexExactCase, GRPCRoute's method matches): the same
// pattern folded answers other requests. Route.Regexp is the routing
// section's field; this part adds only its case.
var regexCaseSection = section{
	name: "regex-exact-case",
	digest: []digestPart{{
		tag: "regex-exact-case",
		hostHas: func(vh *VirtualHost) bool {
			return slices.ContainsFunc(vh.Routes, func(r *Route) bool { return r.Regexp != nil && r.Regexp.exactCase })
		},
		route: func(e *encoder, r *Route) { e.flag(r.Regexp != nil && r.Regexp.exactCase) },
	}},
	text: textParts{
		at: 16, // after the route's conditions
		routeSuffix: func(b *strings.Builder, _ *VirtualHost, r *Route) {
			if r.Regexp != nil && r.Regexp.exactCase {
				b.WriteString(" exact-case")
			}
		},
	},
}
