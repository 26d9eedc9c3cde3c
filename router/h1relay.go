package router

import "ramjet.dev/ramjet/router/h1"

// relay writes the backend's response head to the client straight from
// res when the client is served by router/h1's server and nothing has to
// see that head as a header map: it is what respond's CopyTo and
// x.WriteHeader would send, without filling the map and reading it back
// (h1.Relayer). It reports false, having done nothing, when the head needs
// the map: announced trailers, headers the route's policies, the request
// ID, HSTS or the ConfigMap put on the answer, the location's header
// rewrites (rewriteHead), a writer wrapped by
// compression, tracing or error pages, or anything already in the map.
func (x *exchange) relay(res *h1.Response, declared []string) bool {
	if len(declared) > 0 || x.status != 0 || x.returnID || x.hsts || x.cmh != nil || !x.added.none() || x.proxying().HasHeaderRewrites() {
		return false
	}
	rl, ok := x.w.(h1.Relayer)
	if !ok || !rl.Relay(res, x.headers()) {
		return false
	}
	x.status = res.Status // as WriteHeader records it
	return true
}

// Hidden is hidden: the settings are the h1.Hider Relay takes.
func (hs *headerSettings) Hidden(k string) bool { return hs.hidden(k) }

// none reports that apply sets nothing, whatever the status.
func (p *policyHeaders) none() bool {
	return p.cors == nil && len(p.cookies) == 0 && p.snippet == nil
}

// relaysEventStream is isEventStream of the header relay left unfilled:
// the first Content-Type the client gets is of server-sent events. Only
// a response with such a field at all is looked at further.
func relaysEventStream(res *h1.Response, hs *headerSettings) bool {
	for _, f := range res.Fields {
		if f.Key == "Content-Type" && isEventStreamType(f.Value) {
			return isEventStreamType(res.ForwardedValue("Content-Type", hs.hidden))
		}
	}
	return false
}
