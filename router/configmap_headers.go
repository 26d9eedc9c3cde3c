package router

import (
	"log/slog"
	"maps"
	"net/http"
	"slices"

	"ramjet.dev/ramjet/match"
)

// The headers of ingress-nginx's add-headers and proxy-set-headers
// ConfigMaps (Options.AddHeaders, Options.ProxySetHeaders): nginx sets the
// first on every answer at the http level (more_set_headers, over the
// backend's) and the second on every request it proxies (proxy_set_header,
// over the client's), expanding the variables in their values per request
// (match.HeaderValue). A value that is empty, as written or expanded,
// clears the header: proxy_set_header does not pass it, more_set_headers
// removes it. An add-headers Server is sent only with server tokens on:
// nginx.tmpl's "more_clear_headers Server" for server-tokens "false"
// follows the add-headers' more_set_headers at the http level, and
// headers-more runs them in order, a location's own after the http
// level's (ngx_http_headers_more_merge_loc_conf prepends the parent's):
// so a location's CORS and snippet headers go over the add-headers.

// configMapHeaders are the two sets, canonical names; nil when both are
// empty, so a request without them reads one pointer. A name whose value
// is nil is cleared rather than set.
type configMapHeaders struct {
	add, proxy http.Header
	// vars are the headers whose values hold variables, expanded for each
	// request (forRequest); nil when none does, and then the sets are
	// shared by every request.
	vars []varHeader
	// noServer is the sets without an add-headers Server, for a router
	// without server tokens; nil when add has none.
	noServer *configMapHeaders
}

// varHeader is a header whose values hold variables: of proxy, else add.
type varHeader struct {
	name  string
	proxy bool
	vals  []match.HeaderValue
}

// newConfigMapHeaders makes the sets. A value that is no valid header
// value (a control byte: CR and LF would split the head) is not sent, as
// Options.HSTS and ServerTokens are not: it clears the header. A value
// with a variable the router cannot expand is left out rather than sent
// as written (compile.ConfigMap.ReadHeaders warns of it). Both are logged.
func newConfigMapHeaders(add, proxy http.Header, logger *slog.Logger) *configMapHeaders {
	if len(add) == 0 && len(proxy) == 0 {
		return nil
	}
	c := new(configMapHeaders)
	read := func(h http.Header, option string, isProxy bool) http.Header {
		out := make(http.Header, len(h))
	headers:
		for k, vs := range h {
			k = http.CanonicalHeaderKey(k)
			var vals []string
			var tmpl []match.HeaderValue
			for _, v := range vs {
				if !match.ValidHeaderValue(v) {
					logger.Warn("a header value with a control byte is not sent", "option", option, "header", k)
					out[k] = nil
					continue headers
				}
				t, err := match.ParseHeaderValue(v)
				if err != nil {
					logger.Warn("a header value with a variable the router cannot expand is not sent", "option", option, "header", k, "error", err)
					continue headers
				}
				tmpl = append(tmpl, t)
				if v != "" {
					vals = append(vals, v)
				}
			}
			if slices.ContainsFunc(tmpl, match.HeaderValue.HasVariables) {
				c.vars = append(c.vars, varHeader{name: k, proxy: isProxy, vals: tmpl})
				continue
			}
			// Clipped: the slice is shared by every request, so an append
			// to one answer's header must copy it.
			out[k] = slices.Clip(vals)
		}
		return out
	}
	c.add, c.proxy = read(add, "AddHeaders", false), read(proxy, "ProxySetHeaders", true)
	isServer := func(h varHeader) bool { return !h.proxy && h.name == "Server" }
	if _, ok := c.add["Server"]; ok || slices.ContainsFunc(c.vars, isServer) {
		ns := *c
		ns.add = maps.Clone(c.add)
		delete(ns.add, "Server")
		ns.vars = slices.DeleteFunc(slices.Clone(c.vars), isServer)
		if len(ns.vars) == 0 {
			ns.vars = nil // forRequest's shared sets
		}
		c.noServer = &ns
	}
	return c
}

// withoutServer is c for a router without server tokens (see above).
func (c *configMapHeaders) withoutServer() *configMapHeaders {
	if c.noServer != nil {
		return c.noServer
	}
	return c
}

// SetConfigMapHeaders replaces the Options.AddHeaders and
// Options.ProxySetHeaders the Router was made with, from the next request
// on: the ConfigMaps they come from can change without a restart.
func (r *Router) SetConfigMapHeaders(add, proxy http.Header) {
	r.cmHeaders.Store(newConfigMapHeaders(add, proxy, r.logger))
}

// forRequest is c with its variables expanded for the request s: c itself
// when it has none, so that only a ConfigMap with variables costs a
// request anything. An expanded value that is no valid header value
// clears the header, and is counted (Stats.HeadersDropped).
func (r *Router) forRequest(c *configMapHeaders, s *requestState) *configMapHeaders {
	if c.vars == nil {
		return c
	}
	sr := r.snippetRequest(s.req, &s.d, false)
	out := &configMapHeaders{add: maps.Clone(c.add), proxy: maps.Clone(c.proxy)}
	for _, h := range c.vars {
		var vals []string
		for _, t := range h.vals {
			v := t.Expand(sr)
			if !match.ValidHeaderValue(v) {
				r.headersDropped.Add(1)
				vals = nil
				break
			}
			if v != "" {
				vals = append(vals, v)
			}
		}
		set := &out.add
		if h.proxy {
			set = &out.proxy
		}
		if *set == nil {
			*set = make(http.Header, len(c.vars))
		}
		(*set)[h.name] = vals
	}
	return out
}

// decorConfigMap puts the add-headers on every answer and keeps the
// proxy-set-headers for the backend's request.
var decorConfigMap = decoration{name: "configmap headers", headers: []string{"*"}}

// setAdded puts the add-headers on h, over what is there.
func (c *configMapHeaders) setAdded(h http.Header) { setOver(h, c.add) }

// setProxied puts the proxy-set-headers on the request to the backend.
func (c *configMapHeaders) setProxied(h http.Header) { setOver(h, c.proxy) }

func setOver(h, set http.Header) {
	for k, v := range set {
		if v == nil {
			delete(h, k)
		} else {
			h[k] = v
		}
	}
}
