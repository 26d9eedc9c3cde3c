package match

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// Redirect is an answer the router makes itself instead of proxying:
// ingress-nginx's permanent-redirect and temporal-redirect (with their
// -code and relative-redirects), which it writes as nginx's
// "return <code> <url>" in the location.
type Redirect struct {
	// Code is the status, 300–308. Only 301, 302, 303, 307 and 308 carry a
	// Location; nginx answers the others with the URL as the body.
	Code int
	// URL is the annotation's value, sent as written: the request's path
	// and query are not appended.
	URL string
	// Relative (relative-redirects, nginx's absolute_redirect off) keeps a
	// URL that starts with "/" relative; otherwise it is made absolute with
	// the request's scheme and host, as nginx does.
	Relative bool
}

// HasLocation reports whether nginx sends the URL as a Location header for
// this code (rather than as the body).
func (r *Redirect) HasLocation() bool {
	switch r.Code {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther,
		http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		return true
	}
	return false
}

// HostActions are the host-wide settings of a virtual host that change
// what is answered before any route is consulted, or which names reach it.
type HostActions struct {
	// Aliases (server-alias) are further names, exact or "*.<rest>", whose
	// requests this host answers as its own. Sorted, unique; none is the
	// name of another virtual host.
	Aliases []string
	// AppRoot (app-root) is where a request for "/" is sent with a 302, to
	// <scheme>://<Host header><AppRoot>; "" when unset. AppRootSource is the
	// Ingress it came from.
	AppRoot       string
	AppRootSource Source
	// WWWTo (from-to-www-redirect) makes this host a redirect-only name:
	// every request answers 308 to <scheme>://<WWWTo>:<port><request-uri
	// without one trailing slash>. Such a host has no routes.
	WWWTo string
	// Fallback is the redirect of the Ingress that created the host, which
	// ingress-nginx also applies to requests no route matches (the host's
	// default location carries that Ingress's annotations).
	Fallback *Redirect
}

func (h *HostActions) empty() bool {
	return h == nil || len(h.Aliases) == 0 && h.AppRoot == "" && h.WWWTo == "" && h.Fallback == nil
}

// redirectsSection is what a host or route answers itself instead of
// proxying, and the further names a host answers: a route's redirect, and
// a host's aliases, app-root, www redirect and the redirect for requests no
// route matches.
var redirectsSection = section{
	name:  "redirects-and-aliases",
	route: []string{"Redirect"},
	host:  []string{"Actions"},
	digest: []digestPart{{
		tag: "redirect-actions",
		hostHas: func(vh *VirtualHost) bool {
			return !vh.Actions.empty() || slices.ContainsFunc(vh.Routes, func(r *Route) bool { return r.Redirect != nil })
		},
		host: func(e *encoder, vh *VirtualHost) {
			h := vh.Actions
			if h.empty() {
				e.flag(false)
				return
			}
			e.flag(true)
			e.strs(h.Aliases)
			e.str(h.AppRoot)
			e.str(h.WWWTo)
			e.redirect(h.Fallback)
		},
		route: func(e *encoder, r *Route) { e.redirect(r.Redirect) },
	}},
	text: textParts{
		at:        30,
		hostLines: func(b *strings.Builder, vh *VirtualHost) { hostActionsText(b, vh.Actions) },
		routeSuffix: func(b *strings.Builder, _ *VirtualHost, r *Route) {
			b.WriteString(redirectActionText(r.Redirect))
		},
	},
}

// redirectActionText renders a route's or fallback's redirect for
// WriteText: " redirect <code> <url>[ relative]".
func redirectActionText(r *Redirect) string {
	if r == nil {
		return ""
	}
	s := " redirect " + strconv.Itoa(r.Code) + " " + quoteText(r.URL, false)
	if r.Relative {
		s += " relative"
	}
	return s
}

// hostActionsText renders a host's actions, one line each, for WriteText.
func hostActionsText(b *strings.Builder, h *HostActions) {
	if h.empty() {
		return
	}
	if h.WWWTo != "" {
		b.WriteString("  www-redirect -> " + h.WWWTo + "\n")
	}
	for _, a := range h.Aliases {
		b.WriteString("  alias " + a + "\n")
	}
	if h.AppRoot != "" {
		b.WriteString("  app-root " + quoteText(h.AppRoot, false) + sourceText(h.AppRootSource) + "\n")
	}
	if h.Fallback != nil {
		b.WriteString("  unmatched" + redirectActionText(h.Fallback) + "\n")
	}
}

func (e *encoder) redirect(r *Redirect) {
	if r == nil {
		e.flag(false)
		return
	}
	e.flag(true)
	e.num(r.Code)
	e.str(r.URL)
	e.flag(r.Relative)
}

// indexAliases makes each host's aliases find it, after every host's own
// name is indexed: a name that is some host's own never becomes an alias
// (compile drops those with a warning; this is a defence), and of two
// hosts claiming one alias the first in name order keeps it.
func (t *Table) indexAliases() {
	for _, vh := range t.hosts {
		if vh.Actions == nil || len(vh.Actions.Aliases) == 0 || vh.Name == "" {
			continue
		}
		t.aliases = true
		var hi *hostIndex
		if suffix, ok := strings.CutPrefix(vh.Name, "*."); ok {
			hi = t.wildcardHosts[suffix]
		} else {
			hi = t.exactHosts[vh.Name]
		}
		if hi == nil || hi.vh != vh {
			continue
		}
		for _, a := range vh.Actions.Aliases {
			m, key := t.exactHosts, a
			if suffix, ok := strings.CutPrefix(a, "*."); ok && suffix != "" {
				m, key = t.wildcardHosts, suffix
			}
			if _, taken := m[key]; !taken {
				m[key] = hi
			}
		}
	}
}
