package router

import (
	"io"
	"net/http"
	"strconv"

	"ramjet.dev/ramjet/match"
	"ramjet.dev/ramjet/match/vars"
)

// Snippets (doc §11.9): the location's match.Snippet, translated from its
// configuration-snippet and its host's server-snippet, runs where nginx
// runs the rewrite module. The server-snippet's steps run first, in the
// server's rewrite phase before any location is chosen (stepServerSnippet):
// their return answers before everything of the location, with none of its
// headers. The location's run after the CORS preflight, which
// ingress-nginx writes first in the location, and before the location's
// redirects, which it writes after the snippet: return and rewrite answer
// or change the URI the backend gets, and the header edits are made on the
// request to the backend and on the answer. Its allow/deny rules run in
// the access phase, after the rate limits and before authentication. A
// server-snippet location block that nginx would choose over the route
// answers with its own steps, or 404, as nginx serves files there and
// ramjet has none. A rewrite after which nginx searches the location again
// routes the request again (relocate), so the new URI never escapes its
// location's policies.

// Record.Reason values of the answers snippets make.
const (
	ReasonSnippetServerReturn = "snippet-server-return"
	ReasonSnippetReturn       = "snippet-return"
	ReasonSnippetDenied       = "snippet-denied"
	ReasonSnippetNoLocation   = "snippet-location-no-content"
	ReasonSnippetCycle        = "snippet-rewrite-cycle"
)

var (
	stepServerSnippet = step{name: "server snippet", kind: kindServerSnippet, reasons: []string{ReasonSnippetServerReturn}}
	stepSnippet       = step{name: "snippet", kind: kindSnippet, reasons: []string{ReasonSnippetReturn, ReasonSnippetNoLocation, ReasonSnippetCycle}}
	stepAllowDeny     = step{name: "snippet access", kind: kindAllowDeny, reasons: []string{ReasonSnippetDenied}}
)

// runServerSnippet runs the host's server-snippet steps, in nginx's
// server rewrite phase, and reports whether they answered. A return there
// answers before the location is chosen: before its body size check, its
// denial, its CORS preflight and its own snippet, and without its headers
// (HSTS is its header filter's); the server's and the http level's apply.
// A URI they change is routed again (relocate).
func (r *Router) runServerSnippet(s *requestState) bool {
	if s.uriChanges > 0 || !serverPhaseRuns(&s.d) {
		// A relocated request's server phase ran; an earlier answer ends it.
		return false
	}
	sn, _ := snippetOf(&s.d, s.loc.Snippet)
	if sn == nil || sn.Server == 0 {
		return false
	}
	res := sn.RunServer(r.serverRequest(s.req, &s.d))
	switch {
	case res.Relocate:
		return r.relocate(s, res.Target, true)
	case res.Status != 0:
		dropHSTS(s)
		s.snippet = &res
		r.snippetAnswer(s, res.Status, ReasonSnippetServerReturn, res.Location, res.Body)
		return true
	}
	return false
}

// serverPhaseRuns reports whether nginx runs the server's rewrite phase
// for a request decide answered as d: every answer decide writes at
// stepUnlocated comes before it (nginx refuses the request before any
// phase, ingress-nginx writes the block-* "if" first in the server, and the
// www twin is a server of its own) but app-root's, a server-level "if"
// written after the server-snippet (nginx.tmpl).
func serverPhaseRuns(d *decision) bool {
	return d.st != nil && (d.at != &stepUnlocated || d.ans.status == 0 || d.ans.reason == ReasonAppRoot || d.ans == ansNoHostToRedirect)
}

// runSnippet runs the location's snippet and reports whether it answered.
func (r *Router) runSnippet(s *requestState) bool {
	sn, sl := snippetOf(&s.d, s.loc.Snippet)
	if sn == nil && sl == nil {
		return false
	}
	var res match.SnippetResult
	if sn != nil {
		// The server's rewrite phase has run (stepServerSnippet).
		res = sn.Run(r.snippetRequest(s.req, &s.d, true))
	}
	if res.Relocate {
		return r.relocate(s, res.Target, res.ServerPhase)
	}
	s.snippet = &res
	if sl != nil && res.Status == 0 {
		// No return: nginx would serve a file from its root.
		if sn != nil && !sn.Allows(r.ClientAddr(s.req)) {
			r.snippetAnswer(s, http.StatusForbidden, ReasonSnippetDenied, "", "")
			return true
		}
		r.snippetAnswer(s, http.StatusNotFound, ReasonSnippetNoLocation, "", "")
		return true
	}
	if res.Status != 0 {
		r.snippetAnswer(s, res.Status, ReasonSnippetReturn, res.Location, res.Body)
		return true
	}
	if len(res.Request) > 0 {
		// proxy_set_header edits wait for the proxying (forward): what
		// runs before it reads the client's request, as nginx's access
		// phase and auth subrequest do.
		var now []match.HeaderEdit
		for _, e := range res.Request {
			if e.Kind == match.OpSetUpstream {
				s.upstreamEdits = append(s.upstreamEdits, e)
			} else {
				now = append(now, e)
			}
		}
		if len(now) > 0 {
			r.editRequest(s, now)
		}
	}
	if res.Target != "" {
		s.d.act.target = res.Target
	}
	if len(res.Response) > 0 {
		s.ph.snippet = &res
	}
	return false
}

// maxURIChanges is how many times nginx lets a request's URI be rewritten
// and its location searched again (NGX_HTTP_MAX_URI_CHANGES).
const maxURIChanges = 10

var ansRewriteCycle = answer{http.StatusInternalServerError, ReasonSnippetCycle, "500 Internal Server Error: rewrite cycle\n"}

// relocate routes the request again for the URI a snippet's rewrite left,
// as nginx searches the location again: the steps start over with the
// location the URI lands in, so its redirects, limits and authentication
// run, and its snippet runs without the server's rewrite phase (app-root
// is checked only after a server-snippet's rewrite). One change past
// maxURIChanges answers 500, as nginx's rewrite cycle does.
func (r *Router) relocate(s *requestState, target string, serverPhase bool) bool {
	if s.uriChanges == maxURIChanges {
		r.refuse(s, ansRewriteCycle)
		return true
	}
	s.uriChanges++
	s.d = decision{}
	r.decideTarget(&s.d, s.req, s.grpc, target, serverPhase)
	s.loc = s.d.res.Location()
	if s.ph.cors != nil {
		// The first location's CORS headers are on the answer already;
		// the new location's policy alone decides what goes out.
		clearCORSHeaders(s.w.Header())
	}
	s.ph, s.snippet, s.relocated, s.upstreamEdits = policyHeaders{}, nil, true, nil
	return false
}

// snippetOf is the snippet that runs for a request decided as d, whose
// location's snippet is locSnippet: that of the server-snippet location
// block nginx would choose over the route (sl), else the location's own.
func snippetOf(d *decision, locSnippet *match.Snippet) (sn *match.Snippet, sl *match.SnippetLocation) {
	sn = locSnippet
	if vh := d.res.Host; vh != nil && len(vh.SnippetLocations) > 0 {
		if clean, err := match.NormalizePath(beforeFragment(d.path)); err == nil {
			if sl = match.SnippetLocationFor(vh, d.res, clean); sl != nil {
				sn = sl.Snippet
			}
		}
	}
	return sn, sl
}

// followRewrites is d once the snippet rewrites that move the request to
// another location are followed, as serving follows them (relocate), for
// Lookup, with the target the last one left ("" when none moved it). The
// snippet runs unless decide's answer comes before it.
func (r *Router) followRewrites(req *http.Request, grpc bool, d decision) (_ decision, target string) {
	for n := 0; n < maxURIChanges && d.st != nil; n++ {
		sn, _ := snippetOf(&d, d.res.Location().Snippet)
		if sn == nil {
			break
		}
		var res match.SnippetResult
		if n == 0 && serverPhaseRuns(&d) {
			res = sn.RunServer(r.serverRequest(req, &d))
		}
		if !res.Relocate && res.Status == 0 && !answersBefore(&d, &stepSnippet) {
			res = sn.Run(r.snippetRequest(req, &d, true))
		}
		if !res.Relocate {
			break
		}
		target = res.Target
		d = decision{}
		r.decideTarget(&d, req, grpc, target, res.ServerPhase)
	}
	return d, target
}

// answersBefore reports that decide's answer in d is written by a step
// before st.
func answersBefore(d *decision, st *step) bool {
	if d.ans.status == 0 {
		return false
	}
	for _, s := range requestSteps {
		switch s {
		case d.at:
			return true
		case st:
			return false
		}
	}
	return false
}

// snippetRequest is what a snippet, or a ConfigMap header, reads of req,
// decided as d; relocated: a snippet's rewrite already moved it to this
// location. The location's variables are empty where no host matched.
func (r *Router) snippetRequest(req *http.Request, d *decision, relocated bool) *match.SnippetRequest {
	clean, _ := match.NormalizePath(beforeFragment(d.path))
	// $http_host is the Host field as sent, not an absolute-form target's.
	sent, _ := httpHost(req)
	sr := &match.SnippetRequest{
		Host: d.host, URI: clean, RequestURI: vars.RequestURIOf(req.RequestURI), Args: d.query, Scheme: connScheme(req),
		RemoteAddr: r.ClientAddr(req).String(), Method: req.Method, Header: req.Header, HTTPHost: sent,
		UnderscoreNames: r.live.Load().headers.underscoreNames(), Relocated: relocated,
	}
	res := d.res
	var src *match.Source
	sr.ServerName = "_" // ingress-nginx's catch-all server
	if res.Host != nil {
		src = &res.Host.FallbackSource
		if res.Host.Name != "" {
			sr.ServerName = res.Host.Name
		}
	}
	be := res.Backend
	sr.LocationPath = match.LocationPath(res.Route)
	if rt := res.Route; rt != nil {
		src = &rt.Source
	}
	if src != nil {
		sr.Namespace, sr.IngressName = src.Namespace, src.Name
	}
	if be != nil {
		sr.ServiceName = be.Name
		sr.ServicePort = be.WrittenPort(declaredPortName(res, be))
	}
	return sr
}

// serverRequest is what the server-snippet's rewrite phase reads of req:
// the variables ingress-nginx sets in each location ("set $namespace …",
// nginx.tmpl) are empty there, as no location's directives have run.
func (r *Router) serverRequest(req *http.Request, d *decision) *match.SnippetRequest {
	sr := r.snippetRequest(req, d, false)
	sr.Namespace, sr.IngressName, sr.ServiceName, sr.ServicePort, sr.LocationPath = "", "", "", "", ""
	return sr
}

// checkSnippetAccess applies the snippet's allow and deny rules.
func (r *Router) checkSnippetAccess(s *requestState) bool {
	sn := s.loc.Snippet
	if sn == nil || len(sn.Access) == 0 || sn.Allows(r.ClientAddr(s.req)) {
		return false
	}
	r.snippetAnswer(s, http.StatusForbidden, ReasonSnippetDenied, "", "")
	return true
}

// snippetAnswer writes an answer a snippet made: a return's text as the
// body (nginx's default_type, which ingress-nginx sets to text/html), or
// nginx's short status text, with the snippet's response headers.
func (r *Router) snippetAnswer(s *requestState, status int, reason, location, body string) {
	if status == statusClose {
		// return 444: nginx closes the connection and sends nothing.
		if s.d.backend == nil {
			s.d.backend = s.d.res.Backend
		}
		r.closeConn(s, answer{status: status, reason: reason})
	}
	h := s.w.Header()
	if location != "" {
		h.Set("Location", location)
	}
	if body == "" && location == "" && status >= 300 {
		body = strconv.Itoa(status) + " " + http.StatusText(status) + "\n"
	}
	if body != "" {
		h.Set("Content-Type", "text/html")
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	if s.snippet != nil {
		match.ApplyResponse(s.snippet.Response, h, status)
	}
	if s.ph.cors != nil {
		s.ph.cors.SetHeaders(h, s.ph.origin)
	}
	s.w.WriteHeader(status)
	if s.req.Method != http.MethodHead {
		_, _ = io.WriteString(s.w, body)
	}
	if r.observer != nil {
		if s.d.backend == nil {
			s.d.backend = s.d.res.Backend
		}
		rec := r.record(s)
		rec.Status, rec.Reason = status, reason
		rec.BytesOut = int64(len(body))
		r.observe(s.w, rec)
	}
}

// editRequest makes a snippet's (or a backendRef's) request header edits
// on a copy of the request, which the exchange sends from then on: a Host
// edit becomes the upstream Host; edits ApplyRequest drops are counted
// in headersDropped.
func (r *Router) editRequest(s *requestState, edits []match.HeaderEdit) {
	s.traceHeaders()
	h := s.req.Header.Clone()
	if h == nil {
		h = http.Header{}
	}
	host, dropped := match.ApplyRequest(edits, h)
	if host != "" {
		s.d.act.host = host
	}
	if dropped > 0 {
		r.headersDropped.Add(uint64(dropped))
	}
	out := *s.req
	out.Header = h
	s.req = &out
}
