package match

import (
	"slices"
	"strings"
)

// routingSection is where each request goes: the hosts and their routes
// and fallbacks, the backends they lead to with their endpoints, the
// redirect of plain HTTP to HTTPS, and the certificates. It is encoded
// first and always; its text is the lines writeText writes itself, and the
// host's " tls" and the redirect on route and fallback lines.
var routingSection = section{
	name:    "routing",
	route:   []string{"Type", "Path", "Backend", "SSLRedirect", "ForceSSLRedirect"},
	host:    []string{"Name", "Routes", "Fallback", "TLS", "SSLRedirect", "ForceSSLRedirect"},
	backend: []string{"ID", "Namespace", "Name", "Port", "Protocol", "State", "Endpoints"},
	digest:  []digestPart{{host: encodeRoutingHost, route: encodeRoutingRoute, backend: encodeRoutingBackend, table: encodeRoutingTable}},
	text: textParts{
		at: 10,
		hostSuffix: func(b *strings.Builder, vh *VirtualHost) {
			if vh.TLS {
				b.WriteString(" tls")
			}
		},
		fallbackSuffix: func(b *strings.Builder, vh *VirtualHost) {
			b.WriteString(httpsRedirectText(vh.TLS, vh.SSLRedirect, vh.ForceSSLRedirect))
		},
		routeSuffix: func(b *strings.Builder, vh *VirtualHost, r *Route) {
			b.WriteString(httpsRedirectText(vh.TLS, r.SSLRedirect, r.ForceSSLRedirect))
		},
	},
}

func encodeRoutingHost(e *encoder, vh *VirtualHost) {
	e.str(vh.Name)
	e.flag(vh.TLS)
	e.flag(vh.SSLRedirect)
	e.flag(vh.ForceSSLRedirect)
	e.backendRef(vh.Fallback)
	e.num(len(vh.Routes))
}

func encodeRoutingRoute(e *encoder, r *Route) {
	e.num(int(r.Type))
	e.str(r.Path)
	e.backendRef(r.Backend)
	e.flag(r.SSLRedirect)
	e.flag(r.ForceSSLRedirect)
}

func encodeRoutingBackend(e *encoder, be *Backend) {
	e.str(be.ID)
	e.str(be.Namespace)
	e.str(be.Name)
	e.num(int(be.Port))
	e.num(int(be.Protocol))
	e.num(int(be.State))
	e.strs(be.Endpoints)
}

// encodeRoutingTable is what routing holds beyond hosts and backends.
func encodeRoutingTable(e *encoder, t *Table) {
	// TLS hosts decide the redirect even where no virtual host has the name.
	e.strs(t.tlsHosts)

	e.num(len(t.certs))
	for _, c := range t.certs {
		e.str(c.Secret)
		e.str(c.Fingerprint)
		e.strs(c.Hosts)
		// The whole chain: renewing an intermediate changes what is served.
		var chain [][]byte
		if c.Cert != nil {
			chain = c.Cert.Certificate
		}
		e.num(len(chain))
		for _, der := range chain {
			e.bytes(der)
		}
	}
}

// redirectsToHTTPS reports whether a plain-HTTP request is redirected to
// HTTPS under these settings: forced, or on a tls host (SPEC §12).
func redirectsToHTTPS(tls, sslRedirect, force bool) bool {
	return force || tls && sslRedirect
}

// httpsRedirectText marks where a plain-HTTP request is redirected to HTTPS.
func httpsRedirectText(tls, sslRedirect, force bool) string {
	switch {
	case force:
		return " force-ssl-redirect"
	case tls && sslRedirect:
		return " ssl-redirect"
	}
	return ""
}

// redirectSlashSection is how the HTTPS redirect writes its Location:
// whether it keeps the request's trailing slash, which it drops by
// default, and whether it names the HTTPS port, which it leaves out by
// default.
var redirectSlashSection = section{
	name:  "https-redirect-trailing-slash",
	route: []string{"PreserveTrailingSlash", "UsePortInRedirects"},
	host:  []string{"PreserveTrailingSlash", "UsePortInRedirects"},
	digest: []digestPart{{
		tag: "preserve-trailing-slash",
		hostHas: func(vh *VirtualHost) bool {
			return vh.PreserveTrailingSlash || slices.ContainsFunc(vh.Routes, func(r *Route) bool { return r.PreserveTrailingSlash })
		},
		host:  func(e *encoder, vh *VirtualHost) { e.flag(vh.PreserveTrailingSlash) },
		route: func(e *encoder, r *Route) { e.flag(r.PreserveTrailingSlash) },
	}, {
		tag: "use-port-in-redirects",
		hostHas: func(vh *VirtualHost) bool {
			return vh.UsePortInRedirects || slices.ContainsFunc(vh.Routes, func(r *Route) bool { return r.UsePortInRedirects })
		},
		host:  func(e *encoder, vh *VirtualHost) { e.flag(vh.UsePortInRedirects) },
		route: func(e *encoder, r *Route) { e.flag(r.UsePortInRedirects) },
	}},
	text: textParts{
		at: 20, // right after the redirect it qualifies
		fallbackSuffix: func(b *strings.Builder, vh *VirtualHost) {
			b.WriteString(redirectFormText(redirectsToHTTPS(vh.TLS, vh.SSLRedirect, vh.ForceSSLRedirect), vh.PreserveTrailingSlash, vh.UsePortInRedirects))
		},
		routeSuffix: func(b *strings.Builder, vh *VirtualHost, r *Route) {
			b.WriteString(redirectFormText(redirectsToHTTPS(vh.TLS, r.SSLRedirect, r.ForceSSLRedirect), r.PreserveTrailingSlash, r.UsePortInRedirects))
		},
	},
}

func redirectFormText(redirects, preserve, port bool) string {
	s := ""
	if redirects && preserve {
		s += " preserve-trailing-slash"
	}
	if redirects && port {
		s += " use-port-in-redirects"
	}
	return s
}
