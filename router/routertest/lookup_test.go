package routertest

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"ramjet.dev/ramjet/match"
	"ramjet.dev/ramjet/router"
)

// The check every case request goes through must catch a Lookup that
// says something else than ServeHTTP did.
func TestLookupDisagrees(t *testing.T) {
	b := &match.Backend{ID: "prod/web:80"}
	rt := &match.Route{Backend: b, Source: match.Source{Namespace: "prod", Name: "web"}}
	proxied := router.Decision{Match: router.Match{Generation: 2, Route: rt, Backend: b}, Declaration: rt.Source}
	served := router.Record{Generation: 2, Backend: b.ID, Route: rt.Source, Status: 200}
	notFound := router.Decision{Match: router.Match{Generation: 2}, Status: 404, Reason: router.ReasonNoRoute}
	redirect := router.Decision{Match: router.Match{Generation: 2, Route: rt}, Declaration: rt.Source, Status: 308, Reason: router.ReasonSSLRedirect, Location: "https://a/"}
	v2 := &match.Backend{ID: "prod/web-v2:80"}
	split := &match.Route{Backend: b, Source: rt.Source, Split: &match.Split{Alternatives: []match.Alternative{{Backend: b, Weight: 1}, {Backend: v2, Weight: 1}, {Weight: 1}}}}
	splitProxied := router.Decision{Match: router.Match{Generation: 2, Route: split, Backend: b}, Declaration: rt.Source}
	empty := &match.Backend{ID: "prod/empty:80"}
	emptySplit := &match.Route{Backend: b, Source: rt.Source, Split: &match.Split{Alternatives: []match.Alternative{{Backend: b, Weight: 1}, {Backend: empty, Weight: 1}}}}
	emptyProxied := router.Decision{Match: router.Match{Generation: 2, Route: emptySplit, Backend: b}, Declaration: rt.Source,
		Shares: []router.Share{{Backend: b, Weight: 1}, {Backend: empty, Weight: 1, Status: 503, Reason: router.ReasonNoEndpoints}}}
	tests := []struct {
		name     string
		d        router.Decision
		status   int
		location string
		rec      router.Record
		disagree bool
	}{
		{"proxied, served", proxied, 200, "", served, false},
		{"proxied, backend failed", proxied, 502, "", with(served, router.ReasonUpstreamUnreachable), false},
		{"proxied, body too large", proxied, 413, "", with(served, router.ReasonBodyTooLarge), false},
		{"proxied, but 404", proxied, 404, "", with(served, router.ReasonNoRoute), true},
		{"other generation", proxied, 200, "", router.Record{Generation: 3, Backend: b.ID, Route: rt.Source}, true},
		{"other backend", proxied, 200, "", router.Record{Generation: 2, Backend: "prod/x:80", Route: rt.Source}, true},
		{"redirect", redirect, 308, "https://a/", router.Record{Generation: 2, Route: rt.Source, Reason: router.ReasonSSLRedirect}, false},
		{"redirect elsewhere", redirect, 308, "https://b/", router.Record{Generation: 2, Route: rt.Source, Reason: router.ReasonSSLRedirect}, true},
		{"redirect, but proxied", redirect, 200, "", router.Record{Generation: 2, Route: rt.Source}, true},
		{"404, but authentication answered first", notFound, 401, "", router.Record{Generation: 2, Reason: router.ReasonUnauthorized}, false},
		{"404, but the hook answered first", notFound, 200, "", router.Record{Generation: 2, Reason: router.ReasonHook}, false},
		{"404, but the declared body refused first", notFound, 413, "", router.Record{Generation: 2, Reason: router.ReasonBodyTooLarge}, false},
		{"404, but the body stalled", notFound, 408, "", router.Record{Generation: 2, Reason: router.ReasonClientTimeout}, true},
		{"404, but the canary invalid", notFound, 500, "", router.Record{Generation: 2, Reason: router.ReasonInvalidBackend}, true},
		{"proxied, canary invalid", proxied, 500, "", with(served, router.ReasonInvalidBackend), false},
		{"proxied, but no endpoints", proxied, 503, "", with(served, router.ReasonNoEndpoints), true},
		{"split, its other backend", splitProxied, 200, "", router.Record{Generation: 2, Backend: v2.ID, Route: rt.Source}, false},
		{"split, the invalid share", splitProxied, 500, "", router.Record{Generation: 2, Route: rt.Source, Status: 500, Reason: router.ReasonInvalidBackend}, false},
		{"split, a backend not among it", splitProxied, 200, "", router.Record{Generation: 2, Backend: "prod/x:80", Route: rt.Source}, true},
		{"split, the share without endpoints", emptyProxied, 503, "", router.Record{Generation: 2, Backend: empty.ID, Route: rt.Source, Status: 503, Reason: router.ReasonNoEndpoints}, false},
		{"split, no share without endpoints", splitProxied, 503, "", router.Record{Generation: 2, Backend: v2.ID, Route: rt.Source, Status: 503, Reason: router.ReasonNoEndpoints}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := lookupDisagrees(tt.d, tt.status, tt.location, tt.rec)
			assert.Equal(t, tt.disagree, got != "", got)
		})
	}
}

func with(r router.Record, reason string) router.Record {
	r.Reason = reason
	return r
}
