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
	if !d.Proxied() && d.LeavesToServing(rec.Reason) {
		// A step only serving decides (the location's limits, CORS
		// preflight and authentication, the hook) answered before the
		// step that writes Lookup's answer.
		return ""
	}
	switch {
	case rec.Generation != d.Generation:
		return fmt.Sprintf("generation %d, served with %d", d.Generation, rec.Generation)
	case rec.Backend != backend && (d.Canary == nil || rec.Backend != d.Canary.ID) && !splitChose(d, rec.Backend):
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
	// Proxied: only what serving decides may differ.
	if rec.Reason == "" || d.LeavesToServing(rec.Reason) {
		return ""
	}
	return fmt.Sprintf("proxied to %q, served %d %s", backend, status, rec.Reason)
}

// splitChose reports whether backend is one a route's weighted split may
// choose when serving, where Lookup names its first valid alternative
// (match.Split); "" is an invalid alternative's share.
func splitChose(d router.Decision, backend string) bool {
	if d.Route == nil || d.Route.Split == nil {
		return false
	}
	for _, a := range d.Route.Split.Alternatives {
		if a.Backend == nil && backend == "" || a.Backend != nil && a.Backend.ID == backend {
			return true
		}
	}
	return false
}
