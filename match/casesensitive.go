package match

import (
	"slices"
	"strings"
)

// caseSensitiveSection is whether a Regex route matches its letters only
// as written (Route.CaseSensitive, a Gateway API RegularExpression) rather
// than in either ASCII case, as an Ingress pattern does. A table without
// such routes encodes as if the section did not exist.
var caseSensitiveSection = section{
	name:  "case-sensitive-regex",
	route: []string{"CaseSensitive"},
	digest: []digestPart{{
		tag: "case-sensitive-regex",
		hostHas: func(vh *VirtualHost) bool {
			return slices.ContainsFunc(vh.Routes, func(r *Route) bool { return r.CaseSensitive })
		},
		route: func(e *encoder, r *Route) { e.flag(r.CaseSensitive) },
	}},
	text: textParts{
		at: 14, // on the route's own line, before its conditions
		routeSuffix: func(b *strings.Builder, _ *VirtualHost, r *Route) {
			if r.CaseSensitive {
				b.WriteString(" case-sensitive")
			}
		},
	},
}
