package gatewayapi

import (
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"ramjet.dev/ramjet/compile"
)

// corsFilter translates a CORS filter; compile checks its values
// (compile.CORSFilter).
func corsFilter(field string, f *gwv1.HTTPCORSFilter) *compile.CORSFilter {
	out := &compile.CORSFilter{Field: field, AllowCredentials: deref(f.AllowCredentials, false), MaxAge: f.MaxAge}
	for _, o := range f.AllowOrigins {
		out.AllowOrigins = append(out.AllowOrigins, string(o))
	}
	for _, m := range f.AllowMethods {
		out.AllowMethods = append(out.AllowMethods, string(m))
	}
	for _, h := range f.AllowHeaders {
		out.AllowHeaders = append(out.AllowHeaders, string(h))
	}
	for _, h := range f.ExposeHeaders {
		out.ExposeHeaders = append(out.ExposeHeaders, string(h))
	}
	return out
}
