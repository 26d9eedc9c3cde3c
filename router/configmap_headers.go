package router

import (
	"log/slog"
	"net/http"

	"ramjet.dev/ramjet/match"
)

// The headers of ingress-nginx's add-headers and proxy-set-headers
// ConfigMaps (Options.AddHeaders, Options.ProxySetHeaders): nginx sets the
// first on every answer at the http level (more_set_headers, over the
// backend's) and the second on every request it proxies (proxy_set_header,
// over the client's).

// configMapHeaders are the two sets, canonical names; nil when both are
// empty, so a request without them reads one pointer. A name whose value
// is nil is cleared rather than set.
type configMapHeaders struct {
	add, proxy http.Header
}

// newConfigMapHeaders makes the sets. A value that is no valid header
// value (a control byte: CR and LF would split the head) is not sent, as
// Options.HSTS and ServerTokens are not: it clears the header, and is
// logged.
func newConfigMapHeaders(add, proxy http.Header, logger *slog.Logger) *configMapHeaders {
	if len(add) == 0 && len(proxy) == 0 {
		return nil
	}
	canon := func(h http.Header, option string) http.Header {
		out := make(http.Header, len(h))
		for k, vs := range h {
			k = http.CanonicalHeaderKey(k)
			out[k] = vs
			for _, v := range vs {
				if !match.ValidHeaderValue(v) {
					logger.Warn("a header value with a control byte is not sent", "option", option, "header", k)
					out[k] = nil
					break
				}
			}
		}
		return out
	}
	return &configMapHeaders{add: canon(add, "AddHeaders"), proxy: canon(proxy, "ProxySetHeaders")}
}

// SetConfigMapHeaders replaces the Options.AddHeaders and
// Options.ProxySetHeaders the Router was made with, from the next request
// on: the ConfigMaps they come from can change without a restart.
func (r *Router) SetConfigMapHeaders(add, proxy http.Header) {
	r.cmHeaders.Store(newConfigMapHeaders(add, proxy, r.logger))
}

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
