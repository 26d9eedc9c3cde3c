package routertest

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/go-cmp/cmp"

	"ramjet.dev/ramjet/compile"
	"ramjet.dev/ramjet/router"
)

// Result is the outcome of running one case.
type Result struct {
	File string `json:"file"`
	Case string `json:"case"`
	// Error is set when the case could not run at all; every request then
	// counts as failed.
	Error string `json:"error,omitempty"`
	// Warnings are the warnings the case's objects compiled to.
	Warnings []Warning `json:"warnings"`
	// WarningsDiff is set when the case lists the warnings it expects and
	// the compile disagrees: the lists compared (-want +got).
	WarningsDiff string          `json:"warningsDiff,omitempty"`
	Requests     []RequestResult `json:"requests"`
	// Unclaimed says how many of the case's Ingresses its options do not
	// claim and which option claims them ("" when all are claimed);
	// NothingClaimed is set when there are Ingresses and none is claimed.
	Unclaimed      string `json:"unclaimed,omitempty"`
	NothingClaimed bool   `json:"nothingClaimed,omitempty"`
}

// Warning is a compile warning as a case result shows it.
type Warning struct {
	Reason string `json:"reason"`
	// Object is "Kind namespace/name".
	Object  string `json:"object"`
	Field   string `json:"field,omitempty"`
	Message string `json:"message"`
	// Winner is the declaration that won, for conflicts.
	Winner string `json:"winner,omitempty"`
}

func (w Warning) String() string {
	s := w.Reason + " " + w.Object
	if w.Field != "" {
		s += " " + w.Field
	}
	s += ": " + strings.ReplaceAll(w.Message, "\n", `\n`)
	if w.Winner != "" {
		s += " (winner: " + w.Winner + ")"
	}
	return s
}

func warningsOf(ws []compile.Warning) []Warning {
	out := make([]Warning, 0, len(ws))
	for _, w := range ws {
		out = append(out, Warning{Reason: string(w.Reason), Object: w.Object.String(), Field: w.Field, Message: w.Message, Winner: w.WinnerText()})
	}
	return out
}

// warningsDiff compares the warnings a case expects with those it got, on
// reason, object and field, in order, one warning a line.
func warningsDiff(want []ExpectedWarning, got []Warning) string {
	line := func(w ExpectedWarning) string {
		return strings.TrimSuffix(w.Reason+" "+w.Object+" "+w.Field, " ")
	}
	wantLines := make([]string, 0, len(want))
	for _, w := range want {
		wantLines = append(wantLines, line(w))
	}
	gotLines := make([]string, 0, len(got))
	for _, w := range got {
		gotLines = append(gotLines, line(ExpectedWarning{Reason: w.Reason, Object: w.Object, Field: w.Field}))
	}
	return cmp.Diff(wantLines, gotLines, wholeLines)
}

// Passed is the number of requests that met every expectation.
func (r Result) Passed() int {
	n := 0
	for _, rr := range r.Requests {
		if rr.Pass {
			n++
		}
	}
	return n
}

// Failed is the number of requests that did not.
func (r Result) Failed() int { return len(r.Requests) - r.Passed() }

// OK reports whether the case ran, compiled to the warnings it expects,
// and every request passed.
func (r Result) OK() bool { return r.Error == "" && r.WarningsDiff == "" && r.Failed() == 0 }

// Report describes the failures of the case, one block per failing
// request; "" when the case passed.
func (r Result) Report() string {
	if r.OK() {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "case %q (%s)", r.Case, r.File)
	if r.Error != "" {
		fmt.Fprintf(&b, ": %s", r.Error)
	}
	b.WriteString("\n")
	if r.Unclaimed != "" {
		b.WriteString("  warning: " + r.Unclaimed + "\n")
	}
	if r.WarningsDiff != "" {
		b.WriteString("  warnings differ (-want +got):\n    " + strings.ReplaceAll(strings.TrimSuffix(r.WarningsDiff, "\n"), "\n", "\n    ") + "\n")
		if len(r.Warnings) > 0 {
			b.WriteString("  compiled to:\n")
			for _, w := range r.Warnings {
				b.WriteString("    " + w.String() + "\n")
			}
		}
	}
	for _, rr := range r.Requests {
		if !rr.Pass {
			b.WriteString("  " + strings.ReplaceAll(strings.TrimSuffix(rr.Diff(), "\n"), "\n", "\n  ") + "\n")
		}
	}
	return b.String()
}

// RequestResult is the outcome of one request of a case (all its repeats).
type RequestResult struct {
	// Index is the request's position in the case, from 0.
	Index   int     `json:"index"`
	Request Request `json:"request"`
	Pass    bool    `json:"pass"`
	// Mismatches lists each failed check.
	Mismatches []Mismatch `json:"mismatches,omitempty"`
	// Got is what the first failing repeat produced (the last one when
	// all passed).
	Got Outcome `json:"got"`
}

// Diff describes the request and each failed check, expected against
// actual, ending with what the request actually got.
func (rr RequestResult) Diff() string {
	var b strings.Builder
	fmt.Fprintf(&b, "requests[%d]: %s\n", rr.Index, rr.Request)
	width := 0
	for _, m := range rr.Mismatches {
		width = max(width, len(m.Field))
	}
	for _, m := range rr.Mismatches {
		fmt.Fprintf(&b, "  %-*s  want %s\n  %-*s  got  %s", width+1, m.Field+":", m.Want, width+1, "", m.Got)
		if m.Repeat > 0 {
			fmt.Fprintf(&b, "  (repeat %d of %d)", m.Repeat, rr.Request.Repeat)
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "  got: %s\n", rr.Got)
	return b.String()
}

// Mismatch is one failed check.
type Mismatch struct {
	// Field is the expectation's key, e.g. "status" or
	// "responseHeaders.Location".
	Field string `json:"field"`
	Want  string `json:"want"`
	Got   string `json:"got"`
	// Repeat is the repeat (from 1) that first failed the check, for a
	// request sent more than once; 0 for checks over all repeats.
	Repeat int `json:"repeat,omitempty"`
}

// Outcome is what one request produced.
type Outcome struct {
	Status int `json:"status"`
	// Reason is the router's code for an answer it made itself, or why the
	// request never reached it.
	Reason string `json:"reason,omitempty"`
	// Service is the backend that received the request: the one it was
	// proxied to, "" when it was not forwarded (SPEC §18's rule for
	// expect.service, whichever answer the router made instead).
	Service string `json:"service"`
	// Route is the declaration matched, as expect.route writes it ("" when
	// none), from the same record.
	Route string `json:"route,omitempty"`
	// Recorded reports that the router recorded the request.
	Recorded bool `json:"recorded"`
	// Refused reports that net/http's server would answer 400 before any
	// handler runs; no backend is involved.
	Refused bool `json:"refused,omitempty"`
	// Forwarded reports that the request reached a backend; Endpoint,
	// ForwardedPath and ForwardedHost describe what that backend saw.
	Forwarded bool `json:"forwarded"`
	// RecordedBackend is the backend the router's record names ("" when
	// none): for a forwarded request it must be Service.
	RecordedBackend string      `json:"recordedBackend,omitempty"`
	Endpoint        string      `json:"endpoint,omitempty"`
	ForwardedPath   string      `json:"forwardedPath,omitempty"`
	ForwardedHost   string      `json:"forwardedHost,omitempty"`
	ResponseHeaders http.Header `json:"responseHeaders,omitempty"`
	// RequestHeaders are the headers the backend received.
	RequestHeaders http.Header `json:"requestHeaders,omitempty"`
	// ErrorPage is the error backend's exchange for an intercepted status
	// (custom-http-errors); nil when none was asked for.
	ErrorPage *ErrorPageOutcome `json:"errorPage,omitempty"`
	// AccessLogged: the router's record asks for an access log line.
	AccessLogged bool `json:"accessLogged"`
	// Span is the name of the server span the request made, "" for none.
	Span string `json:"span,omitempty"`
	// ForwardedBodySize is the number of body bytes the backend received.
	ForwardedBodySize int64 `json:"forwardedBodySize,omitempty"`
	// Body is the start of the response body.
	Body string `json:"body,omitempty"`
	// DistinctEndpoints counts the endpoints reached over all repeats.
	DistinctEndpoints int `json:"distinctEndpoints"`
	// Certificate lists the names of the certificate served for the
	// request's SNI; set when certificateHost is checked.
	Certificate []string `json:"certificate,omitempty"`
	// lookup says how Router.Lookup disagreed with ServeHTTP ("" when not).
	lookup string
}

func (o Outcome) String() string {
	var parts []string
	status := strconv.Itoa(o.Status)
	if o.Reason != "" {
		status += " " + o.Reason
	}
	parts = append(parts, status)
	if !o.Recorded {
		parts = append(parts, "not recorded by the router")
	}
	if o.Route != "" {
		parts = append(parts, "route "+o.Route)
	}
	if o.Forwarded {
		parts = append(parts, fmt.Sprintf("forwarded to backend %s, endpoint %s, as %q with Host %q", o.Service, o.Endpoint, o.ForwardedPath, o.ForwardedHost))
	} else {
		parts = append(parts, notForwarded)
	}
	if loc := o.ResponseHeaders.Get("Location"); loc != "" {
		parts = append(parts, "Location "+strconv.Quote(loc))
	}
	if o.Body != "" && !o.Forwarded {
		parts = append(parts, "body "+strconv.Quote(o.Body))
	}
	return strings.Join(parts, ", ")
}

// notForwarded is how a result says the request reached no backend,
// whichever answer the router made instead: a redirect, a refusal inside
// the matched location, or a 404.
const notForwarded = "not forwarded"

// maxBody bounds the response body kept in an Outcome.
const maxBody = 200

// The address a harness request arrives at: a documentation address (RFC
// 5737), on the standard ports a load balancer would use.
var serverIP = netip.MustParseAddr("192.0.2.100")

// Run compiles the case, checks its warnings, publishes the table to a new
// router and sends every request through the router's handler.
func Run(c Case) Result {
	result, err := compileCase(c)
	return run(c, result, err)
}

// run is Run on a compiled case.
func run(c Case, result compile.Result, err error) Result {
	res := Result{File: c.File, Case: c.Name}
	if err != nil {
		res.Error = err.Error()
		for i, r := range c.Requests {
			res.Requests = append(res.Requests, RequestResult{Index: i, Request: r})
		}
		return res
	}
	res.Warnings = warningsOf(result.Warnings)
	res.Unclaimed = result.Unclaimed.Describe(compile.CaseSpelling)
	res.NothingClaimed = result.Unclaimed.Read > 0 && result.Unclaimed.Claimed == 0
	if c.CheckWarnings {
		res.WarningsDiff = warningsDiff(c.Warnings, res.Warnings)
	}
	h := newHarness(c.Router)
	h.router.Publish(result.Table)
	for i, r := range c.Requests {
		res.Requests = append(res.Requests, h.run(i, r))
	}
	return res
}

// RenderTable compiles the case and returns the text rendering of the
// result (compile.Result.String): the table, then the warnings.
func RenderTable(c Case) (string, error) {
	result, err := compileCase(c)
	if err != nil {
		return "", fmt.Errorf("case %q: %w", c.Name, err)
	}
	return result.String(), nil
}

// compileCase is the one place routertest compiles.
func compileCase(c Case) (compile.Result, error) {
	if err := c.Options.Validate(); err != nil {
		return compile.Result{}, err
	}
	return compile.Compile(c.Objects, c.Options), nil
}

type harness struct {
	router   *router.Router
	backends *backends

	mu      sync.Mutex
	records []router.Record

	// jar holds the cookies of the case's session requests.
	jar cookieJar
	// lastDigest is the Authorization of the case's last digest request
	// (DigestLogin.Again).
	lastDigest string
	// spans are the names of the spans ended, in order (caseTracer).
	spans []string
}

func newHarness(o router.Options) *harness {
	h := &harness{backends: &backends{}}
	o.Transport = h.backends
	o.Observer = func(r router.Record) {
		h.mu.Lock()
		h.records = append(h.records, r)
		h.mu.Unlock()
	}
	o.Logger = slog.New(slog.DiscardHandler)
	o.Tracer = caseTracer{h}
	h.router = router.New(o)
	return h
}

func (h *harness) run(index int, r Request) RequestResult {
	rr := RequestResult{Index: index, Request: r}
	endpoints := make(map[string]bool)
	services := make(map[string]int)
	jar := &h.jar
	for n := 1; n <= r.Repeat; n++ {
		sent := r
		if r.Session {
			sent = jar.with(r)
		}
		if r.Digest != nil {
			sent = h.withDigest(sent)
		}
		out := h.serve(sent)
		if r.Session {
			jar.keep(out.ResponseHeaders)
		}
		if out.Forwarded {
			endpoints[out.Endpoint] = true
		}
		if out.Service != "" {
			services[out.Service]++
		}
		ms := compare(r.Expect, out)
		if out.lookup != "" {
			ms = append(ms, Mismatch{Field: "lookup", Want: "Router.Lookup agrees with ServeHTTP", Got: out.lookup})
		}
		if len(ms) > 0 && rr.Mismatches == nil {
			if r.Repeat > 1 {
				for i := range ms {
					ms[i].Repeat = n
				}
			}
			rr.Mismatches, rr.Got = ms, out
		}
		if rr.Mismatches == nil {
			rr.Got = out
		}
	}
	rr.Got.DistinctEndpoints = len(endpoints)
	if want := r.Expect.DistinctEndpoints; want != nil && *want != len(endpoints) {
		rr.Mismatches = append(rr.Mismatches, Mismatch{
			Field: "distinctEndpoints", Want: strconv.Itoa(*want),
			Got: fmt.Sprintf("%d over %d requests", len(endpoints), r.Repeat),
		})
	}
	if want := r.Expect.Services; want != nil && !maps.Equal(want, services) {
		rr.Mismatches = append(rr.Mismatches, Mismatch{
			Field: "services", Want: countsText(want),
			Got: countsText(services) + fmt.Sprintf(" over %d requests", r.Repeat),
		})
	}
	if want := r.Expect.CertificateHost; want != nil {
		names, err := h.certificate(r.Host, *want)
		rr.Got.Certificate = names
		if err != nil {
			rr.Mismatches = append(rr.Mismatches, Mismatch{Field: "certificateHost", Want: "a certificate valid for " + strconv.Quote(*want), Got: err.Error()})
		}
	}
	rr.Pass = len(rr.Mismatches) == 0
	return rr
}

// serve sends one request as net/http's server would deliver it.
func (h *harness) serve(r Request) Outcome {
	req, err := buildRequest(r)
	if err != nil {
		// net/http's server answers a request it cannot parse itself.
		return Outcome{Status: http.StatusBadRequest, Refused: true, Reason: "refused by net/http before the handler: " + err.Error()}
	}
	h.mu.Lock()
	seen, spans := len(h.records), len(h.spans)
	h.mu.Unlock()
	h.backends.reset()

	decision := h.router.Lookup(req)
	w := httptest.NewRecorder()
	closed := serveOrClose(h.router, w, req)
	resp := w.Result()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	resp.Body.Close()

	out := Outcome{Status: resp.StatusCode, ResponseHeaders: resp.Header, Body: string(body)}
	if closed {
		// Nothing reached the client; the status is the record's (444).
		out = Outcome{}
	}
	h.mu.Lock()
	if len(h.records) > seen {
		rec := h.records[len(h.records)-1]
		if closed {
			out.Status = rec.Status
		}
		out.Recorded, out.RecordedBackend, out.Reason = true, rec.Backend, rec.Reason
		out.AccessLogged = !rec.NoAccessLog
		out.Route = routeText(rec.Route)
		out.lookup = lookupDisagrees(decision, out.Status, out.ResponseHeaders.Get("Location"), rec)
	}
	if len(h.spans) > spans {
		out.Span = h.spans[len(h.spans)-1]
	}
	h.mu.Unlock()
	if x, ok := h.backends.last(); ok {
		out.Forwarded = true
		out.Service = x.backend
		out.Endpoint, out.ForwardedPath, out.ForwardedHost = x.endpoint, x.target, x.host
		out.RequestHeaders, out.ForwardedBodySize = x.header, x.bodySize
	}
	h.backends.mu.Lock()
	if x := h.backends.errorPage; x != nil {
		out.ErrorPage = &ErrorPageOutcome{Service: x.backend, RequestHeaders: x.header}
	}
	h.backends.mu.Unlock()
	return out
}

// serveOrClose serves req and reports whether the router closed the
// client's connection without an answer (nginx's 444), which it does by
// aborting the handler as net/http's server expects.
func serveOrClose(h http.Handler, w http.ResponseWriter, req *http.Request) (closed bool) {
	defer func() {
		if v := recover(); v != nil {
			if v != http.ErrAbortHandler {
				panic(v)
			}
			closed = true
		}
	}()
	h.ServeHTTP(w, req)
	return false
}

// buildRequest renders the request as bytes on the wire and parses them
// back with http.ReadRequest, so the handler sees exactly what a server
// would give it: RequestURI verbatim, URL parsed from it, Host from the
// header or an absolute-form target.
func buildRequest(r Request) (*http.Request, error) {
	var b strings.Builder
	proto := "HTTP/1.1"
	if r.Host == "" {
		proto = "HTTP/1.0" // HTTP/1.1 requires Host; net/http refuses it without
	}
	fmt.Fprintf(&b, "%s %s %s\r\n", r.Method, r.Path, proto)
	if r.Host != "" {
		fmt.Fprintf(&b, "Host: %s\r\n", r.Host)
	}
	framed := false
	for _, k := range slices.Sorted(maps.Keys(r.Headers)) {
		fmt.Fprintf(&b, "%s: %s\r\n", k, r.Headers[k])
		switch http.CanonicalHeaderKey(k) {
		case "Content-Length", "Transfer-Encoding":
			framed = true
		}
	}
	var body io.Reader = strings.NewReader(r.Body)
	switch {
	case r.BodySize > 0:
		fmt.Fprintf(&b, "Content-Length: %d\r\n", r.BodySize)
		body = io.LimitReader(filler{}, int64(r.BodySize))
	case r.Body != "" && !framed:
		fmt.Fprintf(&b, "Content-Length: %d\r\n", len(r.Body))
	}
	b.WriteString("\r\n")
	req, err := http.ReadRequest(bufio.NewReader(io.MultiReader(strings.NewReader(b.String()), body)))
	if err != nil {
		return nil, err
	}
	req.RemoteAddr = r.ClientAddress
	if req.RemoteAddr == "" {
		req.RemoteAddr = defaultClientAddress
	}
	port := 80
	if r.Scheme == "https" {
		port = 443
		req.TLS = &tls.ConnectionState{
			Version:           tls.VersionTLS13,
			HandshakeComplete: true,
			CipherSuite:       tls.TLS_AES_128_GCM_SHA256,
			ServerName:        orString(r.ServerName, serverName(r.Host)),
			PeerCertificates:  r.ClientCertificate,
		}
	}
	if r.Port != 0 {
		port = r.Port
	}
	local := net.TCPAddrFromAddrPort(netip.AddrPortFrom(serverIP, uint16(port)))
	return req.WithContext(context.WithValue(req.Context(), http.LocalAddrContextKey, local)), nil
}

// filler is an endless body of 'x' bytes, so bodySize costs no memory.
type filler struct{}

func (filler) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	return len(p), nil
}

// serverName is the SNI a client sends for host: no port, no trailing dot,
// nothing for an IP address.
func serverName(host string) string {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(host, ".")
	if _, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		return ""
	}
	return host
}

// certificate reports the names of the certificate served for host's SNI,
// and an error unless it verifies for want.
func (h *harness) certificate(host, want string) ([]string, error) {
	cert, err := h.router.GetCertificate(&tls.ClientHelloInfo{ServerName: serverName(host)})
	if err != nil {
		return nil, fmt.Errorf("no certificate: %v", err)
	}
	if cert == nil || len(cert.Certificate) == 0 {
		return nil, fmt.Errorf("no certificate")
	}
	leaf := cert.Leaf
	if leaf == nil {
		if leaf, err = x509.ParseCertificate(cert.Certificate[0]); err != nil {
			return nil, fmt.Errorf("certificate does not parse: %v", err)
		}
	}
	names := leaf.DNSNames
	if len(names) == 0 && leaf.Subject.CommonName != "" {
		names = []string{"CN=" + leaf.Subject.CommonName}
	}
	if err := leaf.VerifyHostname(want); err != nil {
		return names, fmt.Errorf("certificate for %q", names)
	}
	return names, nil
}

func compare(e Expect, out Outcome) []Mismatch {
	var ms []Mismatch
	if e.Status != 0 && e.Status != out.Status {
		got := strconv.Itoa(out.Status)
		if out.Reason != "" {
			got += " (" + out.Reason + ")"
		}
		ms = append(ms, Mismatch{Field: "status", Want: strconv.Itoa(e.Status), Got: got})
	}
	if e.Service.Checked {
		switch {
		case out.Refused && e.Service.ID == "":
			// Nothing received the request, which is what null asks for.
		case !out.Recorded:
			ms = append(ms, Mismatch{Field: "service", Want: e.Service.String(), Got: "no record of the request from the router"})
		case out.Service != e.Service.ID:
			got := out.Service
			if got == "" {
				got = notForwarded
			}
			ms = append(ms, Mismatch{Field: "service", Want: e.Service.String(), Got: got})
		case out.Forwarded && out.RecordedBackend != out.Service:
			ms = append(ms, Mismatch{Field: "service", Want: e.Service.String(),
				Got: fmt.Sprintf("proxied to %s but recorded as %q", out.Service, out.RecordedBackend)})
		}
	}
	forwarded := func(field string, want *string, got string) {
		switch {
		case want == nil:
		case !out.Forwarded:
			ms = append(ms, Mismatch{Field: field, Want: strconv.Quote(*want), Got: notForwarded})
		case *want != got:
			ms = append(ms, Mismatch{Field: field, Want: strconv.Quote(*want), Got: strconv.Quote(got)})
		}
	}
	forwarded("forwardedPath", e.ForwardedPath, out.ForwardedPath)
	forwarded("forwardedHost", e.ForwardedHost, out.ForwardedHost)
	if e.Route.Checked {
		switch {
		case out.Refused && e.Route.Route == "":
		case !out.Recorded:
			ms = append(ms, Mismatch{Field: "route", Want: e.Route.String(), Got: "no record of the request from the router"})
		case out.Route != e.Route.Route:
			got := out.Route
			if got == "" {
				got = "none"
			}
			ms = append(ms, Mismatch{Field: "route", Want: e.Route.String(), Got: got})
		}
	}
	for _, k := range slices.Sorted(maps.Keys(e.RequestHeaders)) {
		want := e.RequestHeaders[k]
		field := "requestHeaders." + k
		if !out.Forwarded {
			ms = append(ms, Mismatch{Field: field, Want: quoteOrAbsent(want), Got: notForwarded})
			continue
		}
		values := out.RequestHeaders.Values(k)
		got := "absent"
		if len(values) > 0 {
			got = strconv.Quote(strings.Join(values, ", "))
		}
		if got != quoteOrAbsent(want) {
			ms = append(ms, Mismatch{Field: field, Want: quoteOrAbsent(want), Got: got})
		}
	}
	if ep := e.ErrorPage; ep != nil {
		switch got := out.ErrorPage; {
		case got == nil:
			ms = append(ms, Mismatch{Field: "errorPage", Want: ep.Service, Got: "no error page asked for"})
		default:
			if got.Service != ep.Service {
				ms = append(ms, Mismatch{Field: "errorPage.service", Want: ep.Service, Got: got.Service})
			}
			for _, k := range slices.Sorted(maps.Keys(ep.RequestHeaders)) {
				want, values := ep.RequestHeaders[k], got.RequestHeaders.Values(k)
				g := "absent"
				if len(values) > 0 {
					g = strconv.Quote(strings.Join(values, ", "))
				}
				if g != quoteOrAbsent(want) {
					ms = append(ms, Mismatch{Field: "errorPage.requestHeaders." + k, Want: quoteOrAbsent(want), Got: g})
				}
			}
		}
	}
	if want := e.Span; want != nil && *want != out.Span {
		ms = append(ms, Mismatch{Field: "span", Want: quoteOrNone(*want), Got: quoteOrNone(out.Span)})
	}
	if want := e.AccessLogged; want != nil && out.Recorded && *want != out.AccessLogged {
		ms = append(ms, Mismatch{Field: "accessLogged", Want: strconv.FormatBool(*want), Got: strconv.FormatBool(out.AccessLogged)})
	}
	for _, k := range slices.Sorted(maps.Keys(e.ResponseHeaders)) {
		want := e.ResponseHeaders[k]
		values := out.ResponseHeaders.Values(k)
		got := "absent"
		if len(values) > 0 {
			values = append([]string{maskNonce(values[0])}, values[1:]...)
			got = strconv.Quote(values[0])
		}
		switch {
		case want == "" && len(values) > 0:
			ms = append(ms, Mismatch{Field: "responseHeaders." + k, Want: "absent", Got: got})
		case want != "" && (len(values) == 0 || values[0] != want):
			ms = append(ms, Mismatch{Field: "responseHeaders." + k, Want: strconv.Quote(want), Got: got})
		}
	}
	return ms
}

func quoteOrAbsent(s *string) string {
	if s == nil {
		return "absent"
	}
	return strconv.Quote(*s)
}

// backends stands in for every endpoint: it records what each proxied
// request would have put on the wire and answers 200 without dialling.
type backends struct {
	mu   sync.Mutex
	seen []exchange
	// errorPage is the current request's error page exchange; mirrored
	// copies are counted and not kept.
	errorPage *exchange
	mirrored  int
}

// ErrorPageOutcome is what the error backend received.
type ErrorPageOutcome struct {
	Service        string      `json:"service"`
	RequestHeaders http.Header `json:"requestHeaders,omitempty"`
}

type exchange struct {
	backend, endpoint, target, host string
	header                          http.Header
	bodySize                        int64
}

func (b *backends) RoundTrip(req *http.Request) (*http.Response, error) {
	if router.IsExternalAuth(req.Context()) {
		return authService(req), nil
	}
	if router.IsMirror(req.Context()) {
		// Sent on a goroutine of its own, its answer ignored: nothing of
		// the request's outcome may depend on it.
		if req.Body != nil {
			_, _ = io.Copy(io.Discard, req.Body)
			req.Body.Close()
		}
		b.mu.Lock()
		b.mirrored++
		b.mu.Unlock()
		return &http.Response{StatusCode: http.StatusOK, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Header: http.Header{}, Body: http.NoBody, Request: req}, nil
	}
	backend, _, _ := router.EndpointFromContext(req.Context())
	host := req.Host
	if host == "" {
		host = req.URL.Host
	}
	// RequestURI is what http.Transport writes on the request line.
	x := exchange{backend: backend, endpoint: req.URL.Host, target: req.URL.RequestURI(), host: host, header: req.Header.Clone()}
	if req.Body != nil {
		var err error
		x.bodySize, err = io.Copy(io.Discard, req.Body)
		req.Body.Close()
		if err != nil {
			// As http.Transport fails when it cannot read the body it is
			// sending: the router tells the client's fault from the
			// backend's.
			return nil, err
		}
	}
	b.mu.Lock()
	if router.IsErrorPage(req.Context()) {
		b.errorPage = &x
	} else {
		b.seen = append(b.seen, x)
	}
	b.mu.Unlock()
	body := "routertest backend " + x.endpoint + "\n"
	// A request carrying X-Routertest-Status is answered with that status,
	// so that cases can make a backend fail; an error page request (one
	// with X-Code) is answered 200 whatever it carries.
	status := http.StatusOK
	if v := req.Header.Get("X-Routertest-Status"); v != "" && req.Header.Get("X-Code") == "" {
		if n, err := strconv.Atoi(v); err == nil && n >= 200 && n < 600 {
			status = n
		}
	}
	header := http.Header{"Content-Type": {"text/plain; charset=utf-8"}}
	// X-Routertest-Server names a Server header for the backend to send
	// (server-tokens cases).
	if v := req.Header.Get("X-Routertest-Server"); v != "" {
		header["Server"] = []string{v}
	}
	// X-Routertest-Set-Header lists headers for the backend to answer
	// with, "Name:value,Name:value" as the Gateway API suite's echo
	// backend reads its X-Echo-Set-Header (response header filters).
	for _, nv := range strings.Split(req.Header.Get("X-Routertest-Set-Header"), ",") {
		if name, value, ok := strings.Cut(nv, ":"); ok && strings.TrimSpace(name) != "" {
			header.Add(strings.TrimSpace(name), strings.TrimSpace(value))
		}
	}
	return &http.Response{
		Status:        strconv.Itoa(status) + " " + http.StatusText(status),
		StatusCode:    status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        header,
		Body:          io.NopCloser(strings.NewReader(body)),
		ContentLength: int64(len(body)),
		Request:       req,
	}, nil
}

func (b *backends) reset() {
	b.mu.Lock()
	b.seen = b.seen[:0]
	b.errorPage = nil
	b.mu.Unlock()
}

// last is the final exchange of the current request: the one that
// answered, should the router have tried more than one endpoint.
func (b *backends) last() (exchange, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.seen) == 0 {
		return exchange{}, false
	}
	return b.seen[len(b.seen)-1], true
}

// countsText renders requests per backend, sorted by backend ID; zero
// counts are left out, as a backend not chosen is not listed.
func countsText(m map[string]int) string {
	var parts []string
	for _, id := range slices.Sorted(maps.Keys(m)) {
		if m[id] != 0 {
			parts = append(parts, fmt.Sprintf("%s: %d", id, m[id]))
		}
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// cookieJar keeps the cookies a session's answers set, by name, in the
// order first set.
type cookieJar struct {
	names  []string
	values map[string]string
}

// keep takes the name=value of every Set-Cookie in h.
func (j *cookieJar) keep(h http.Header) {
	for _, line := range h.Values("Set-Cookie") {
		pair, _, _ := strings.Cut(line, ";")
		name, value, ok := strings.Cut(strings.TrimSpace(pair), "=")
		if !ok || name == "" {
			continue
		}
		if j.values == nil {
			j.values = make(map[string]string)
		}
		if _, seen := j.values[name]; !seen {
			j.names = append(j.names, name)
		}
		j.values[name] = value
	}
}

// with returns r sending the kept cookies after its own Cookie header.
func (j *cookieJar) with(r Request) Request {
	if len(j.names) == 0 {
		return r
	}
	var parts []string
	for k, v := range r.Headers {
		if http.CanonicalHeaderKey(k) == "Cookie" {
			parts = append(parts, v)
		}
	}
	for _, name := range j.names {
		parts = append(parts, name+"="+j.values[name])
	}
	headers := make(map[string]string, len(r.Headers)+1)
	for k, v := range r.Headers {
		if http.CanonicalHeaderKey(k) != "Cookie" {
			headers[k] = v
		}
	}
	headers["Cookie"] = strings.Join(parts, "; ")
	r.Headers = headers
	return r
}

// authService stands in for every external auth service (auth-url) a case
// names, answering like httpbin, whatever the host:
//
//	/status/<code>                 that status
//	/basic-auth/<user>/<password>  200 when the request's Basic credentials
//	                               are those, else 401 with a challenge
//	/response-headers?<k>=<v>&...  200 with those headers
//
// and 404 to anything else.
func authService(req *http.Request) *http.Response {
	res := &http.Response{StatusCode: http.StatusNotFound, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{}, Body: http.NoBody, Request: req}
	parts := strings.Split(strings.TrimPrefix(req.URL.Path, "/"), "/")
	switch {
	case len(parts) == 2 && parts[0] == "status":
		if code, err := strconv.Atoi(parts[1]); err == nil && code >= 100 && code < 600 {
			res.StatusCode = code
		}
	case len(parts) == 3 && parts[0] == "basic-auth":
		if u, p, ok := req.BasicAuth(); ok && u == parts[1] && p == parts[2] {
			res.StatusCode = http.StatusOK
		} else {
			res.StatusCode = http.StatusUnauthorized
			res.Header.Set("WWW-Authenticate", `Basic realm="Fake Realm"`)
		}
	case len(parts) == 1 && parts[0] == "response-headers":
		res.StatusCode = http.StatusOK
		for k, vs := range req.URL.Query() {
			res.Header[http.CanonicalHeaderKey(k)] = vs
		}
	}
	res.Status = strconv.Itoa(res.StatusCode) + " " + http.StatusText(res.StatusCode)
	return res
}

func quoteOrNone(name string) string {
	if name == "" {
		return "no span"
	}
	return strconv.Quote(name)
}

// caseTracer makes the case's spans: span ID b7ad6b7169203331, in the
// parent's trace (with its tracestate) or in trace
// 0af7651916cd43dd8448eb211c80319c, sampled, so that what a backend
// receives can be written in a case file.
type caseTracer struct{ h *harness }

type caseSpan struct {
	h   *harness
	ctx router.TraceContext
}

var (
	caseTraceID = [16]byte{0x0a, 0xf7, 0x65, 0x19, 0x16, 0xcd, 0x43, 0xdd, 0x84, 0x48, 0xeb, 0x21, 0x1c, 0x80, 0x31, 0x9c}
	caseSpanID  = [8]byte{0xb7, 0xad, 0x6b, 0x71, 0x69, 0x20, 0x33, 0x31}
)

func (t caseTracer) StartSpan(parent router.TraceContext, _ string, _ time.Time) router.Span {
	c := router.TraceContext{TraceID: caseTraceID, SpanID: caseSpanID, Flags: 1}
	if parent.IsValid() {
		c.TraceID, c.State = parent.TraceID, parent.State
	}
	return &caseSpan{h: t.h, ctx: c}
}

func (s *caseSpan) Context() router.TraceContext { return s.ctx }

func (s *caseSpan) End(e *router.SpanEnd) {
	s.h.mu.Lock()
	s.h.spans = append(s.h.spans, e.Name)
	s.h.mu.Unlock()
}

// orString is a unless it is empty, then b.
func orString(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
