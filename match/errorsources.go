package match

import "slices"

// errorSourcesSection is the Ingress a location names to the backend that
// answers its error pages or stands in for its Service (X-Namespace,
// X-Ingress-Name: nginx.tmpl's custom-default-backend- and error_page
// locations), and the port its Service was written with (X-Service-Port).
// Elsewhere a route's source and port spelling reach no answer and stays out
// of the digest, so renaming an Ingress publishes nothing; there it must
// publish, or the error backend goes on hearing of an Ingress that is
// gone.
var errorSourcesSection = section{
	name:  "error-page-sources",
	route: []string{"Source", "PortName"},
	host:  []string{"FallbackSource", "FallbackPortName"},
	digest: []digestPart{{
		tag: "error-page-sources",
		hostHas: func(vh *VirtualHost) bool {
			return namesSource(vh.FallbackLocation.Response) || slices.ContainsFunc(vh.Routes, func(r *Route) bool { return namesSource(r.Response) })
		},
		host:  func(e *encoder, vh *VirtualHost) { e.errorSource(vh.FallbackSource, vh.FallbackLocation.Response) },
		route: func(e *encoder, r *Route) { e.errorSource(r.Source, r.Response) },
	}, {
		// X-Service-Port too is the port as the location wrote it
		// ($service_port): a name is told only where one is written.
		tag: "error-page-ports",
		hostHas: func(vh *VirtualHost) bool {
			return vh.FallbackPortName != 0 && namesSource(vh.FallbackLocation.Response) ||
				slices.ContainsFunc(vh.Routes, func(r *Route) bool { return r.PortName != 0 && namesSource(r.Response) })
		},
		host: func(e *encoder, vh *VirtualHost) {
			e.errorPort(vh.Fallback, vh.FallbackPortName, vh.FallbackLocation.Response)
		},
		route: func(e *encoder, r *Route) { e.errorPort(r.Backend, r.PortName, r.Response) },
	}},
}

func (e *encoder) errorPort(be *Backend, name uint8, r *Response) {
	named := name != 0 && namesSource(r)
	e.flag(named)
	if named {
		e.str(be.WrittenPort(name))
	}
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
