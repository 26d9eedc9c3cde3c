package match

import "slices"

// errorSourcesSection is the Ingress a location names to the backend that
// answers its error pages or stands in for its Service (X-Namespace,
// X-Ingress-Name: nginx.tmpl's custom-default-backend- and error_page
// locations). Elsewhere a route's source reaches no answer and stays out
// of the digest, so renaming an Ingress publishes nothing; there it must
// publish, or the error backend goes on hearing of an Ingress that is
// gone.
var errorSourcesSection = section{
	name:  "error-page-sources",
	route: []string{"Source"},
	host:  []string{"FallbackSource"},
	digest: []digestPart{{
		tag: "error-page-sources",
		hostHas: func(vh *VirtualHost) bool {
			return namesSource(vh.FallbackLocation.Response) || slices.ContainsFunc(vh.Routes, func(r *Route) bool { return namesSource(r.Response) })
		},
		host:  func(e *encoder, vh *VirtualHost) { e.errorSource(vh.FallbackSource, vh.FallbackLocation.Response) },
		route: func(e *encoder, r *Route) { e.errorSource(r.Source, r.Response) },
	}},
}

// namesSource reports whether a location with r tells a backend its
// Ingress: it has error pages answered by a backend, or a stand-in.
func namesSource(r *Response) bool {
	return r != nil && (r.StandIn != nil || len(r.ErrorCodes) > 0 && r.ErrorBackend != nil)
}

func (e *encoder) errorSource(s Source, r *Response) {
	named := namesSource(r)
	e.flag(named)
	if named {
		e.str(s.Namespace)
		e.str(s.Name)
	}
}
