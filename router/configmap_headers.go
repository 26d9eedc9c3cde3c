package router

import "net/http"

// The headers of ingress-nginx's add-headers and proxy-set-headers
// ConfigMaps (Options.AddHeaders, Options.ProxySetHeaders): nginx sets the
// first on every answer at the http level (more_set_headers, over the
// backend's) and the second on every request it proxies (proxy_set_header,
// over the client's).

// configMapHeaders are the two sets, canonical names; nil when both are
// empty, so a request without them reads one pointer.
type configMapHeaders struct {
	add, proxy http.Header
}

func newConfigMapHeaders(add, proxy http.Header) *configMapHeaders {
	if len(add) == 0 && len(proxy) == 0 {
		return nil
	}
	canon := func(h http.Header) http.Header {
		out := make(http.Header, len(h))
		for k, v := range h {
			out[http.CanonicalHeaderKey(k)] = v
		}
		return out
	}
	return &configMapHeaders{add: canon(add), proxy: canon(proxy)}
}

// SetConfigMapHeaders replaces the Options.AddHeaders and
// Options.ProxySetHeaders the Router was made with, from the next request
// on: the ConfigMaps they come from can change without a restart.
func (r *Router) SetConfigMapHeaders(add, proxy http.Header) {
	r.cmHeaders.Store(newConfigMapHeaders(add, proxy))
}

// setAdded puts the add-headers on h, over what is there.
func (c *configMapHeaders) setAdded(h http.Header) {
	for k, v := range c.add {
		h[k] = v
	}
}

// setProxied puts the proxy-set-headers on the request to the backend.
func (c *configMapHeaders) setProxied(h http.Header) {
	for k, v := range c.proxy {
		h[k] = v
	}
}
