package router

import "net/http"

// CloseIdleConnections closes the idle keep-alive connections to backends
// of the transports the Router built (or of Options.Transport, if it has
// such a method). Connections in use are left alone. Call it when the
// Router is retired, so that nothing it opened outlives it.
func (r *Router) CloseIdleConnections() {
	if r.h1 != nil {
		r.h1.CloseIdle()
		r.h1s.CloseIdle()
	}
	up, ok := r.proxy.Transport.(*upstream)
	if !ok {
		return
	}
	if up.backendTLS != nil {
		up.backendTLS.closeIdle()
	}
	if up.variants != nil {
		up.variants.closeIdle()
	}
	// With Options.Transport all three are the same transport; closing its
	// idle connections again is harmless.
	for _, rt := range []http.RoundTripper{up.h1, up.h2c, up.h2} {
		closeIdle(rt)
	}
}
