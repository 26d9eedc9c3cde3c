package router

import (
	"net/http"
	"slices"

	"ramjet.dev/ramjet/balance"
	"ramjet.dev/ramjet/match"
)

// ReasonNoValidBackend is the Record.Reason of a 500 for a route whose
// weighted backends are all invalid or of weight 0, or that names none:
// the Gateway API's rule for a rule without a valid backendRef (SPEC §20).
const ReasonNoValidBackend = "no-valid-backend"

var ansNoValidBackend = answer{http.StatusInternalServerError, ReasonNoValidBackend,
	"500 Internal Server Error: the route has no valid backend\n"}

// routeSplits builds the rotation of every route's weighted backends in
// t (match.Split), identified by host and declaration, so a rebuilt table
// continues the rotation and the shares stay exact across swaps.
func (r *Router) routeSplits(t *match.Table) map[*match.Split]*balance.Split {
	var m map[*match.Split]*balance.Split
	for vh := range t.VirtualHosts() {
		for _, rt := range vh.Routes {
			if rt.Split == nil {
				continue
			}
			if m == nil {
				m = make(map[*match.Split]*balance.Split)
			}
			if m[rt.Split] == nil {
				m[rt.Split] = r.registry.Split("route "+vh.Name+" "+rt.Source.String()+" "+rt.Type.String()+" "+rt.Path, rt.Split.Weights())
			}
		}
	}
	return r.passthroughSplits(t, m)
}

// Share is one backend of a route's weighted split as Lookup reports it
// (Decision.Shares): the rotation sends it Weight of every sum of the
// weights of requests, and serving proxies them to Backend, or answers
// them itself with Status and Reason, as it does a route's only backend:
// 500 (ReasonInvalidBackend) for an invalid alternative (Backend nil), 503
// for a backend without ready endpoints or whose Service or port does not
// exist, 502 for a gRPC request to a backend not marked for gRPC.
type Share struct {
	Backend *match.Backend
	Weight  int
	Status  int // 0: proxied
	Reason  string
}

// splitShares are the split's alternatives of positive weight, each with
// the answer splitRequest makes when it chooses it (backendFor's, which
// is the same for every request of the decision); nil when the decision
// has no split or answers before the split chooses.
func (d *decision) splitShares(grpc bool) []Share {
	if d.st == nil || d.ans.status != 0 || d.backend == nil || d.res.Route == nil || d.res.Route.Split == nil {
		return nil
	}
	var out []Share
	for _, a := range d.res.Route.Split.Alternatives {
		if a.Weight <= 0 {
			continue
		}
		ans := ansInvalidBackend
		switch {
		case a.Backend != nil && a.Redirect != 0:
			ans = answer{status: a.Redirect, reason: ReasonBackendRedirect}
		case a.Backend != nil:
			_, ans = d.st.backendFor(a.Backend, grpc)
		}
		out = append(out, Share{Backend: a.Backend, Weight: a.Weight, Status: ans.status, Reason: ans.reason})
	}
	return out
}

// sharesAnswer reports whether serving answers reason for one of d's
// shares.
func (d Decision) sharesAnswer(reason string) bool {
	for _, s := range d.Shares {
		if s.Status != 0 && s.Reason == reason {
			return true
		}
	}
	return false
}

// ReasonBackendRedirect is the Record.Reason of the redirect a route's
// weighted backend answers its share of the requests with (the Gateway
// API's RequestRedirect on a backendRef, match.Alternative.Redirect).
const ReasonBackendRedirect = "backend-redirect"

// splitRequest chooses the route's backend for this request by weight:
// an invalid one answers 500 (ReasonInvalidBackend), one that redirects
// answers its redirect, whether or not it has endpoints, as a route's
// redirect does, and any other is checked as decide checks a route's
// backend (backendFor), then its own filters apply, after the route's;
// its mirrors copy the request as it is proxied (forward).
// It reports whether it answered.
func (r *Router) splitRequest(s *requestState, sp *match.Split) bool {
	s.alt = nil
	i, ok := 0, false
	if bs := s.d.st.routeSplits[sp]; bs != nil {
		i, ok = bs.Next()
	}
	if !ok || sp.Alternatives[i].Backend == nil {
		s.d.backend = nil // the record names no backend: none was chosen
		r.refuse(s, ansInvalidBackend)
		return true
	}
	alt := &sp.Alternatives[i]
	s.d.backend = alt.Backend
	if alt.Redirect != 0 {
		return r.backendRedirect(s, alt.Snippet)
	}
	var a answer
	if s.d.bal, a = s.d.st.backendFor(alt.Backend, s.grpc); a.status != 0 {
		r.refuse(s, a)
		return true
	}
	s.alt = alt
	if alt.Snippet != nil {
		r.backendHeaders(s, alt.Snippet)
	}
	if alt.Rewrite != nil {
		return r.backendRewrite(s, alt.Rewrite)
	}
	return false
}

// backendRedirect answers the redirect of the alternative chosen, whose
// snippet sn holds its header edits and its return, with the route's
// response header edits and then its own.
func (r *Router) backendRedirect(s *requestState, sn *match.Snippet) bool {
	res := sn.Run(r.snippetRequest(s.req, &s.d, false))
	if res.Status == 0 {
		// compile's snippet returns for every request its route matches.
		r.refuse(s, ansInvalidBackend)
		return true
	}
	if s.snippet != nil && len(s.snippet.Response) > 0 {
		res.Response = append(slices.Clip(s.snippet.Response), res.Response...)
	}
	s.snippet = &res
	r.snippetAnswer(s, res.Status, ReasonBackendRedirect, res.Location, res.Body)
	return true
}

// backendRewrite rewrites the request for the alternative chosen: the
// request-target and Host its rewrite sets replace the route's. A target
// over match.MaxRewriteTarget answers 500, as the route's does.
func (r *Router) backendRewrite(s *requestState, rw *match.Rewrite) bool {
	clean, err := match.NormalizePath(beforeFragment(s.d.path))
	if err != nil {
		return false // decide answered such a path already
	}
	act, a, _ := routeActionOf(s.req, &s.d.res, rw, s.d.host, clean, s.d.query, s.d.proto)
	if a.status != 0 {
		r.refuse(s, a)
		return true
	}
	if act.target != "" {
		s.d.act.target = act.target
	}
	if act.host != "" {
		s.d.act.host = act.host
	}
	return false
}

// backendHeaders makes the header edits of the alternative chosen (a
// Gateway API backendRef's filters), after the route's own: on the
// request sent to it, and on its answer (policyHeaders.snippet, after the
// route's).
func (r *Router) backendHeaders(s *requestState, sn *match.Snippet) {
	res := sn.Run(r.snippetRequest(s.req, &s.d, false))
	if len(res.Request) > 0 {
		r.editRequest(s, res.Request)
	}
	if len(res.Response) > 0 {
		if s.ph.snippet != nil {
			// After the route's own edits, which this request keeps.
			merged := *s.ph.snippet
			merged.Response = append(merged.Response[:len(merged.Response):len(merged.Response)], res.Response...)
			res = merged
		}
		s.ph.snippet = &res
	}
}
