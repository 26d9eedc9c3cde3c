package router

import (
	"net/http"
	"slices"
	"strconv"
	"time"

	"ramjet.dev/ramjet/balance"
	"ramjet.dev/ramjet/match"
)

// step is one stage of serving a request: its declaration lives in its
// feature's file, its place in requestSteps.
type step struct {
	name string
	// reasons are the Record.Reason values of the answers the step makes
	// itself; each Reason constant is declared by exactly one step
	// (TestReasonsDeclared), so an answer a step repeats from another
	// (the canary's gRPC and endpoint checks are decide's) stays with
	// the one that owns it.
	reasons []string
	// decided: the step writes the answer decide made, which Lookup
	// reports too. The other steps' answers are decided only by serving:
	// they count requests, ask a service, read the body, or are the
	// hook's or the canary's (see Decision.LeavesToServing).
	decided bool
	// kind is what run switches on: a small number, so that the switch is
	// one indexed jump rather than a comparison per step before it.
	kind stepKind
}

// stepKind numbers the steps run calls a function for.
type stepKind uint8

const (
	kindNone stepKind = iota // a decided step, or not in requestSteps
	kindClientCert
	kindPreflight
	kindLimits
	kindAuth
	kindHook
	kindBodyHook
	kindSteer
	kindBodySize
	kindBody
	kindSnippet
	kindAllowDeny
	kindServerSnippet
)

// requestSteps are what ServeHTTP does with a request once decide has
// routed it, in order: each may answer the request and end it; the
// request none answers is proxied (stepProxy).
//
// The order is ingress-nginx's: the server-snippet's rewrite phase runs
// before any location is chosen, after nginx's own refusals and the
// block-* "if" and before app-root's "if", which ingress-nginx writes
// after the snippet; the server-level redirects (the unlocated answers)
// come before the location; a declared body over the location's
// limit is refused as soon as the location is found, as nginx checks
// client_max_body_size then, before any of the location's own answers; a
// location ingress-nginx denies answers 503 before any other of its
// directives, as its template writes it as a lone "return 503"; the
// location's CORS headers go on
// every answer from the preflight on, and the preflight is answered
// before the location's redirects and authentication, as ingress-nginx
// answers it in its rewrite phase; the hook runs where ModSecurity does
// (its request-head phase in nginx's rewrite phase), and then a backend
// without ready endpoints answers 503, as ingress-nginx's balancer does at
// the end of the rewrite phase, both before the location's limits and
// access checks; the body hook runs next, where ModSecurity-nginx reads
// the body and runs its request-body phase (first in nginx's preaccess
// phase, before limit_req and limit_conn); the rate limits and source ranges
// (nginx's preaccess and access phases) come before authentication, and
// authentication guards the fallback as it guards a route (SPEC §6) and
// comes before a 404, as nginx's default location answers only past its
// access phase; the canary and the body come last,
// so a request refused before them neither moves a weight rotation nor
// has its body read. A location snippet's return, rewrite and if run
// after the preflight and before the location's redirects, and its
// allow/deny after the rate limits, where nginx's rewrite and access
// modules run them (snippet.go).
var requestSteps = [...]*step{
	&stepClientCert,    // clienttls.go
	&stepServerSnippet, // snippet.go
	&stepUnlocated,     // decide.go
	&stepBodySize,      // body.go
	&stepDenied,        // policy.go
	&stepPreflight,     // cors.go
	&stepSnippet,       // snippet.go
	&stepLocated,       // decide.go
	&stepHook,          // hook.go
	&stepUnavailable,   // decide.go
	&stepBodyHook,      // hook.go
	&stepLimits,        // policy.go
	&stepAllowDeny,     // snippet.go
	&stepAuth,          // auth.go
	&stepNoBackend,     // decide.go
	&stepPending,       // decide.go
	&stepSteer,         // canary.go
	&stepBody,          // body.go
}

// requestStepKinds are requestSteps' kinds (kindNone for a decided
// step), all ServeHTTP reads of a step unless decide's answer is due:
// 18 bytes side by side, where the steps themselves lie apart in memory,
// a cache miss each per request on a busy server.
var requestStepKinds = func() (kinds [len(requestSteps)]stepKind) {
	for i, st := range requestSteps {
		kinds[i] = st.kind
	}
	return kinds
}()

// run runs step st over s and reports whether it answered the request.
func (r *Router) run(st *step, s *requestState) bool {
	if st.decided {
		return s.d.ans.status != 0 && s.d.at == st && r.answerDecided(s)
	}
	return r.runKind(st.kind, s)
}

// runKind runs the step of kind k, one that is not decided, over s. The
// functions are called from a switch rather than held in the steps: the
// request state passed to a function value would escape to the heap, one
// more allocation per request.
func (r *Router) runKind(k stepKind, s *requestState) bool {
	switch k {
	case kindClientCert:
		return r.checkClientCert(s)
	case kindPreflight:
		return r.serveCORS(s)
	case kindLimits:
		return r.applyLimits(s)
	case kindAuth:
		return r.authorize(s)
	case kindHook:
		return r.runHook(s, r.hook, ReasonHook)
	case kindBodyHook:
		return r.runHook(s, r.bodyHook, ReasonBodyHook)
	case kindSteer:
		return r.steerRequest(s)
	case kindBodySize:
		return r.checkBodySize(s)
	case kindBody:
		return r.checkBody(s)
	case kindSnippet:
		return r.runSnippet(s)
	case kindAllowDeny:
		return r.checkSnippetAccess(s)
	case kindServerSnippet:
		return r.runServerSnippet(s)
	}
	panic("router: request step kind " + strconv.Itoa(int(k)) + " has no case in runKind")
}

// requestState is one request on its way through the steps: what they
// read and what they leave for the next ones and for the exchange. It
// lives on ServeHTTP's stack.
type requestState struct {
	w    http.ResponseWriter
	req  *http.Request
	grpc bool // a gRPC request: the router's answers are trailers-only
	d    decision
	loc  match.Location // the matched location's policies
	// start is when the request came (zero without an Observer); id the
	// request ID returned to the client ("" unless
	// Options.ReturnRequestID).
	start time.Time
	id    string
	// ph are the response headers the location's CORS and auth add.
	ph policyHeaders
	// ticket counts the request against limit-connections until
	// ServeHTTP returns.
	ticket connTicket
	// ch is the backend chosen past its canary, with its session, and bal
	// that backend's balancer.
	ch  choice
	bal *balance.Balancer
	// alt is the alternative of the route's split the request was sent
	// to (splitRequest), whose mirrors copy it; nil without a split.
	alt *match.Alternative
	// body wraps the request body (nil when there is none).
	body *clientBody
	// hsts: setHSTS put the Strict-Transport-Security header.
	hsts bool
	// snippet is what the location's snippet did (snippet.go); nil
	// without one. upstreamEdits are its proxy_set_header edits, made on
	// the request as it is proxied (forward).
	snippet       *match.SnippetResult
	upstreamEdits []match.HeaderEdit
	// uriChanges counts the times a snippet's rewrite moved the request to
	// the location of its new URI; relocated says the steps start over.
	uriChanges uint8
	relocated  bool
	// certJudged: the client's certificate failed and auth-tls-error-page
	// moved the request to the location of its path (clientCertRefused);
	// certDN is the certificate's subject DN for auth-tls-match-cn.
	certJudged bool
	certDN     string
	// cmh are the ConfigMap's headers, set on the answer; nil: none.
	cmh *configMapHeaders
	// gz compresses the answer (decorCompress); nil when it is not.
	gz *gzipWriter
	// trace is the request's span and the writer noting its status
	// (decorTrace); nil when the request is not traced.
	trace *tracedWriter
}

// LeavesToServing reports whether serving may end a request that Lookup
// reported as d with an answer of reason instead: the answer of a step
// Lookup cannot decide, read from the steps' declarations. A step that
// runs before one writing decide's answer may take the place of any
// Decision (the location's limits, CORS preflight and authentication,
// Options.Hook); one after them (the canary, the body, the backend's
// answer) only of a proxied one, as does the answer to one of its
// Shares.
func (d Decision) LeavesToServing(reason string) bool {
	if d.Proxied() && d.sharesAnswer(reason) {
		return true
	}
	before := false // a step writing decide's answer comes later
	for i := len(requestSteps) - 1; i >= 0; i-- {
		st := requestSteps[i]
		switch {
		case st.decided:
			before = true
		case slices.Contains(st.reasons, reason):
			return before || d.Proxied()
		}
	}
	return d.Proxied() && slices.Contains(stepProxy.reasons, reason)
}
