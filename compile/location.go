package compile

import (
	networkingv1 "k8s.io/api/networking/v1"

	"ramjet.dev/ramjet/match"
)

// location is the one value of what ing's annotations ask of a location
// (SPEC §6, §11): the route of its path p, or, with p nil, the fallback of
// v, a host whose settings ing supplies. Routes and fallbacks are built
// here alike, so a location annotation reaches both. The steps that need
// every Ingress's routes and backends first add the rest to the same
// value: BackendTLS (applyTLSEnds), Response (applyResponses) and Snippet
// (applySnippets).
func (b *builder) location(ing *ingress, p *networkingv1.HTTPIngressPath, v *vhost) match.Location {
	loc := match.Location{Policy: ing.requestPolicy(), CORS: ing.ann.access.cors, Tracing: b.tracing(ing), Extensions: ing.ann.extensions}
	if p != nil {
		loc.Auth = pathAuth(ing, p.Path)
		loc.Rewrite = b.routeRewrite(ing, declaredPath(p))
		return loc
	}
	loc.Auth = ing.ann.access.auth
	if v != b.catchAll {
		// ingress-nginx keeps its catch-all location's own rewrite.
		loc.Rewrite = b.fallbackRewrite(ing)
	}
	return loc
}
