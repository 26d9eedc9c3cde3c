package routertest

import (
	"fmt"

	"ramjet.dev/ramjet/router"
)

// lookupDisagrees compares what Router.Lookup said before a request was
// served with what ServeHTTP then did (its record and answer), and
// describes any difference; "" when they agree. Every request of every
// case is checked this way, so the case files keep Lookup honest.
func lookupDisagrees(d router.Decision, status int, location string, rec router.Record) string {
	backend := ""
	if d.Backend != nil {
		backend = d.Backend.ID
	}
	switch rec.Reason {
	case router.ReasonSourceDenied, router.ReasonRateLimited, router.ReasonCORSPreflight,
		router.ReasonAuthDenied, router.ReasonUnauthorized, router.ReasonAuthForbidden,
		router.ReasonAuthSignin, router.ReasonAuthError, router.ReasonInvalidBackend:
		// The location's source ranges, rate limits, CORS preflight and
		// authentication, and the canary's choice, are applied when
		// serving, never by Lookup.
		return ""
	}
	switch {
	case rec.Generation != d.Generation:
		return fmt.Sprintf("generation %d, served with %d", d.Generation, rec.Generation)
	case rec.Backend != backend && (d.Canary == nil || rec.Backend != d.Canary.ID):
		return fmt.Sprintf("backend %q, served %q", backend, rec.Backend)
	case rec.Route != d.Declaration:
		return fmt.Sprintf("route %v, served %v", d.Declaration, rec.Route)
	}
	if !d.Proxied() {
		if status != d.Status || rec.Reason != d.Reason || location != d.Location {
			return fmt.Sprintf("%d %s %q, served %d %s %q", d.Status, d.Reason, d.Location, status, rec.Reason, location)
		}
		return ""
	}
	// Proxied: only what the body or the backend decides may differ.
	switch rec.Reason {
	case "", router.ReasonBodyTooLarge, router.ReasonClientTimeout, router.ReasonBadBody, router.ReasonClientClosed,
		router.ReasonUpstreamUnreachable, router.ReasonUpstreamTimeout, router.ReasonUpstreamError:
		return ""
	}
	return fmt.Sprintf("proxied to %q, served %d %s", backend, status, rec.Reason)
}
