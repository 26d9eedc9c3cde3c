package match

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"ramjet.dev/ramjet/match/vars"
)

// Response is what a location does around its backend's answer besides
// the request policy (SPEC §11 "Also served"): custom-http-errors with
// default-backend, limit-rate and limit-rate-after, mirror-target with
// mirror-request-body and mirror-host, enable-access-log and
// enable-rewrite-log. Every Route and fallback of one Ingress shares one
// Response; nil means none of these is in effect. Build it with
// NewResponse; New prepares one written as a literal the same way.
type Response struct {
	// ErrorCodes are the backend statuses the location replaces with the
	// error backend's answer (custom-http-errors, or the global list of
	// the option of that name), sorted and unique; nil intercepts none.
	// As nginx's proxy_intercept_errors with error_page code =
	// @location: the backend's head and body are dropped and the client
	// gets the error backend's answer, its status included.
	ErrorCodes []int
	// OwnOnly: ErrorCodes replace only the answers the router makes
	// itself (502 unreachable, 503 no endpoints, 504 …), and a backend's
	// pass (disable-proxy-intercept-errors): nginx's error_page without
	// proxy_intercept_errors, which governs only proxied answers.
	OwnOnly bool
	// ErrorBackend answers the intercepted statuses: the Ingress's
	// default-backend Service, else the global default backend. Nil:
	// there is none, and the answer is a 404, as from ingress-nginx's
	// built-in default backend.
	ErrorBackend *Backend
	// OwnErrorBackend: ErrorBackend is the Ingress's default-backend
	// Service (ingress-nginx's custom-default-backend-<namespace>-<name>
	// upstream), not the global default backend, which may be the same
	// Service. It names the upstream in logs and changes no answer, so the
	// digest leaves it out.
	OwnErrorBackend bool
	// LimitRate bounds the response body to this many bytes per second
	// for each request (limit-rate, in KiB there); 0 means no bound.
	// LimitRateAfter bytes are sent at full speed first
	// (limit-rate-after).
	LimitRate, LimitRateAfter int64
	// Mirror copies each request to another URL (mirror-target); nil for
	// none. Mirrors are further copies, each to its own target (the
	// Gateway API's several RequestMirror filters).
	Mirror  *Mirror
	Mirrors []*Mirror
	// NoAccessLog: the location's requests are not to be access-logged
	// (enable-access-log: "false").
	NoAccessLog bool
	// RewriteLog: the location's rewrites are logged
	// (enable-rewrite-log: "true").
	RewriteLog bool
	// HeadersDenied says why the location's custom-headers cannot be
	// served (the ConfigMap is missing, a header is not allowed): every
	// request answers 503, as ingress-nginx denies the location.
	HeadersDenied string
	// StandIn is set on a route whose own Service has no endpoints and
	// whose Ingress's default-backend Service answers in its place: the
	// request carries X-Code: 503, X-Format, X-Namespace, X-Ingress-Name,
	// X-Service-Name and X-Service-Port as ingress-nginx sends them to a
	// custom default backend, the last two naming StandIn's Service and
	// port as the path declares them; nil otherwise.
	StandIn *StandIn

	ready bool
}

// StandIn names the Service a default-backend stands in for.
type StandIn struct {
	Service, Port string
}

// Intercepts reports whether a backend answer of status is replaced.
func (r *Response) Intercepts(status int) bool {
	_, found := slices.BinarySearch(r.ErrorCodes, status)
	return found
}

// MirrorsBody reports whether a mirror of the location sends the request
// body (false for a nil Response).
func (r *Response) MirrorsBody() bool {
	if r == nil {
		return false
	}
	return r.Mirror != nil && !r.Mirror.NoBody || slices.ContainsFunc(r.Mirrors, func(m *Mirror) bool { return !m.NoBody })
}

// Mirror is a location's mirror-target: a copy of each request is sent to
// Target, and its answer ignored.
type Mirror struct {
	// Target is the URL as written: http or https, a literal authority,
	// then a path that may use $request_uri, $uri, $args, $is_args,
	// $host and $scheme. A target without variables keeps nginx's
	// proxy_pass rule: with no path it is sent Source, with one that
	// path, and the request's query follows either. As in nginx's
	// subrequest, $uri is Source (the request's path when Source is "").
	Target string
	// Host is the Host header the copy carries (mirror-host; by default
	// the target's host name).
	Host string
	// Source is the path nginx gives the mirror subrequest,
	// "/_mirror-<Ingress UID>".
	Source string
	// NoBody sends the copy without the request body
	// (mirror-request-body: "off").
	NoBody bool
	// Backend, when set, is the Service the copies go to (the Gateway
	// API's RequestMirror): each copy is sent to one of its ready
	// endpoints in turn in place of Target's authority, with the
	// request's Host when Host is "", and none is sent while it has no
	// endpoints.
	Backend *Backend
	// Numerator of Denominator requests are copied, at random; a
	// Denominator of 0 copies every request.
	Numerator, Denominator int

	// scheme and authority are Target's; path its parts after them.
	scheme, authority string
	path              vars.Template
	vars              bool // path holds a variable
}

// mirrorPlace is where a mirror target's path reads its variables.
var mirrorPlace = vars.Place{Name: "a mirror target", Vars: vars.Of(vars.RequestURI, vars.URI, vars.Args, vars.QueryString,
	vars.IsArgs, vars.Host, vars.Scheme)}

// NewResponse checks r and prepares its mirror target.
func NewResponse(r Response) (*Response, error) {
	out := r
	if !slices.IsSorted(r.ErrorCodes) || len(slices.Compact(slices.Clone(r.ErrorCodes))) != len(r.ErrorCodes) {
		return nil, errors.New("error codes must be sorted and unique")
	}
	for _, c := range r.ErrorCodes {
		if c < 300 || c > 599 {
			return nil, fmt.Errorf("error code %d is not a status from 300 to 599", c)
		}
	}
	if r.LimitRate < 0 || r.LimitRateAfter < 0 {
		return nil, errors.New("limit rate and limit rate after must not be negative")
	}
	if r.Mirror != nil {
		m, err := NewMirror(*r.Mirror)
		if err != nil {
			return nil, err
		}
		out.Mirror = m
	}
	out.Mirrors = make([]*Mirror, len(r.Mirrors))
	for i, m := range r.Mirrors {
		if m == nil {
			return nil, errors.New("a nil mirror")
		}
		pm, err := NewMirror(*m)
		if err != nil {
			return nil, err
		}
		out.Mirrors[i] = pm
	}
	if len(out.Mirrors) == 0 {
		out.Mirrors = nil
	}
	out.ready = true
	return &out, nil
}

// prepared reports a mirror NewMirror made.
func (m *Mirror) prepared() bool { return m.scheme != "" }

// NewMirror parses m's target; the error says what the target lacks.
func NewMirror(m Mirror) (*Mirror, error) {
	out := m
	// m may be prepared already (a Response literal holding a mirror from
	// NewMirror): the path is parsed anew, never added to.
	out.path, out.vars = nil, false
	scheme, after, ok := strings.Cut(m.Target, "://")
	if !ok || (scheme != "http" && scheme != "https") {
		return nil, fmt.Errorf("mirror target %q is not an http or https URL", m.Target)
	}
	authority := after
	if i := strings.IndexAny(after, "/?$"); i >= 0 {
		// A variable ends the host ("https://test.env.com$request_uri",
		// ingress-nginx's example); one in its place is not supported.
		authority = after[:i]
	}
	if u, err := url.Parse(scheme + "://" + authority + "/"); err != nil || u.Host == "" || u.User != nil {
		return nil, fmt.Errorf("mirror target %q has no host", m.Target)
	}
	out.scheme, out.authority = scheme, authority
	path, err := mirrorPlace.Parse(after[len(authority):])
	if err != nil {
		return nil, fmt.Errorf("mirror target %q: %w", m.Target, err)
	}
	out.path, out.vars = path, !path.Literal()
	if m.Denominator < 0 || m.Numerator < 0 || m.Denominator > 0 && m.Numerator > m.Denominator {
		return nil, fmt.Errorf("mirror fraction %d/%d is not between 0 and 1", m.Numerator, m.Denominator)
	}
	if m.Host == "" && m.Backend != nil {
		return &out, nil // the request's Host
	}
	if m.Host == "" || !validMirrorHost(m.Host) {
		return nil, fmt.Errorf("mirror host %q is not a host name with an optional port", m.Host)
	}
	return &out, nil
}

// validMirrorHost reports a Host header value: no space, control byte or
// delimiter that would end it.
func validMirrorHost(h string) bool {
	for i := 0; i < len(h); i++ {
		c := h[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte("/?#@\\\"", c) >= 0 {
			return false
		}
	}
	return true
}

// URL builds the URL a copy of a request is sent to: requestURI is
// $request_uri, the request-target as received, which no rewrite changes;
// escaped path and query are the URI and arguments the request has when
// the copy is sent ($uri, $args), host its normalized host and scheme the
// client's. $uri is Source when set, the subrequest's URI.
func (m *Mirror) URL(requestURI, path, query, scheme, host string) string {
	return m.URLAt(m.authority, requestURI, path, query, scheme, host)
}

// URLAt is URL with another authority in place of Target's: an endpoint
// of Backend.
func (m *Mirror) URLAt(authority, requestURI, path, query, scheme, host string) string {
	var b strings.Builder
	b.Grow(len(m.scheme) + 3 + len(authority) + len(requestURI) + len(path) + len(query) + 16)
	b.WriteString(m.scheme + "://" + authority)
	if !m.vars {
		switch {
		case len(m.path) > 0:
			b.WriteString(m.path[0].Lit)
		default:
			b.WriteString(m.Source)
		}
		if query != "" {
			b.WriteString("?" + query)
		}
		return b.String()
	}
	for _, p := range m.path {
		switch p.Ref.Var.Canon() {
		case vars.None:
			b.WriteString(p.Lit)
		case vars.RequestURI:
			b.WriteString(requestURI)
		case vars.URI:
			if m.Source != "" {
				// nginx's mirror subrequest has the URI Source; it shares
				// the request's $request_uri and arguments.
				b.WriteString(m.Source)
				continue
			}
			b.WriteString(path)
		case vars.Args:
			b.WriteString(query)
		case vars.IsArgs:
			if query != "" {
				b.WriteString("?")
			}
		case vars.Host:
			b.WriteString(host)
		case vars.Scheme:
			b.WriteString(scheme)
		}
	}
	return b.String()
}

// responseSection is what a location does around the backend's answer:
// the error pages, the response bandwidth, the mirror and the logs.
var responseSection = section{
	name:     "response",
	location: []string{"Response"},
	digest: []digestPart{{
		tag: "response",
		hostHas: func(vh *VirtualHost) bool {
			return vh.FallbackLocation.Response != nil || slices.ContainsFunc(vh.Routes, func(r *Route) bool { return r.Response != nil })
		},
		host:  func(e *encoder, vh *VirtualHost) { e.response(vh.FallbackLocation.Response) },
		route: func(e *encoder, r *Route) { e.response(r.Response) },
	}, {
		// The Gateway API's mirrors: to a Service, a share, several.
		tag: "mirror-backends",
		hostHas: func(vh *VirtualHost) bool {
			return mirrorsToBackends(vh.FallbackLocation.Response) || slices.ContainsFunc(vh.Routes, func(r *Route) bool { return mirrorsToBackends(r.Response) })
		},
		host:  func(e *encoder, vh *VirtualHost) { e.mirrorBackends(vh.FallbackLocation.Response) },
		route: func(e *encoder, r *Route) { e.mirrorBackends(r.Response) },
	}},
	text: textParts{
		at:            90,
		fallbackLines: func(b *strings.Builder, vh *VirtualHost) { responseLine(b, vh.FallbackLocation.Response) },
		routeLines:    func(b *strings.Builder, _ *VirtualHost, r *Route) { responseLine(b, r.Response) },
	},
}

// mirrorText is a mirror as the table's text shows it.
func mirrorText(m *Mirror) string {
	s := "mirror " + quoteText(m.Target, false) + " host " + quoteText(m.Host, false)
	if m.Backend != nil {
		s = "mirror " + quoteText(m.Target, false) + " to " + m.Backend.ID
	}
	if !m.vars {
		s += " source " + quoteText(m.Source, false)
	}
	if m.NoBody {
		s += " without body"
	}
	if m.Denominator > 0 {
		s += " " + strconv.Itoa(m.Numerator) + "/" + strconv.Itoa(m.Denominator) + " of requests"
	}
	return s
}

// responseLine writes a location's response settings under its line.
func responseLine(b *strings.Builder, r *Response) {
	if r == nil {
		return
	}
	var parts []string
	if len(r.ErrorCodes) > 0 {
		codes := make([]string, len(r.ErrorCodes))
		for i, c := range r.ErrorCodes {
			codes[i] = strconv.Itoa(c)
		}
		to := "404 (no default backend)"
		if r.ErrorBackend != nil {
			to = r.ErrorBackend.ID
		}
		s := "custom-http-errors " + strings.Join(codes, ",") + " -> " + to
		if r.OwnOnly {
			s += " (the router's own answers only)"
		}
		parts = append(parts, s)
	}
	if r.LimitRate > 0 {
		s := "limit-rate " + strconv.FormatInt(r.LimitRate, 10) + "B/s"
		if r.LimitRateAfter > 0 {
			s += " after " + strconv.FormatInt(r.LimitRateAfter, 10) + "B"
		}
		parts = append(parts, s)
	}
	for _, m := range append([]*Mirror{r.Mirror}, r.Mirrors...) {
		if m != nil {
			parts = append(parts, mirrorText(m))
		}
	}
	if r.NoAccessLog {
		parts = append(parts, "access-log off")
	}
	if r.RewriteLog {
		parts = append(parts, "rewrite-log on")
	}
	if r.HeadersDenied != "" {
		parts = append(parts, "custom-headers denied (503): "+r.HeadersDenied)
	}
	if s := r.StandIn; s != nil {
		parts = append(parts, "default-backend for "+quoteText(s.Service+":"+s.Port, false)+" (X-Code 503)")
	}
	if len(parts) > 0 {
		b.WriteString("    " + strings.Join(parts, "; ") + "\n")
	}
}

func (e *encoder) response(r *Response) {
	e.flag(r != nil)
	if r == nil {
		return
	}
	e.num(len(r.ErrorCodes))
	for _, c := range r.ErrorCodes {
		e.num(c)
	}
	if r.OwnOnly {
		// Only when set, so digests of tables without it stay as they
		// were: no code is negative, nor is backendRef's flag.
		e.num(-1)
	}
	if r.HeadersDenied != "" {
		e.num(-2) // as OwnOnly's
		e.str(r.HeadersDenied)
	}
	e.backendRef(r.ErrorBackend)
	e.num(int(r.LimitRate))
	e.num(int(r.LimitRateAfter))
	e.flag(r.Mirror != nil)
	if m := r.Mirror; m != nil {
		e.str(m.Target)
		e.str(m.Host)
		e.str(m.Source)
		e.flag(m.NoBody)
	}
	e.flag(r.NoAccessLog)
	e.flag(r.RewriteLog)
	e.flag(r.StandIn != nil)
	if s := r.StandIn; s != nil {
		e.str(s.Service)
		e.str(s.Port)
	}
}

// mirrorsToBackends reports a Response using what the mirror-backends
// digest part encodes.
func mirrorsToBackends(r *Response) bool {
	if r == nil {
		return false
	}
	return len(r.Mirrors) > 0 || r.Mirror != nil && (r.Mirror.Backend != nil || r.Mirror.Denominator > 0)
}

func (e *encoder) mirrorBackends(r *Response) {
	e.flag(mirrorsToBackends(r))
	if !mirrorsToBackends(r) {
		return
	}
	e.num(len(r.Mirrors))
	e.mirrorList(append([]*Mirror{r.Mirror}, r.Mirrors...))
}

// mirrorList encodes mirrors, nil ones included, with their Backends and
// shares.
func (e *encoder) mirrorList(ms []*Mirror) {
	for _, m := range ms {
		e.flag(m != nil)
		if m == nil {
			continue
		}
		e.str(m.Target)
		e.str(m.Host)
		e.str(m.Source)
		e.flag(m.NoBody)
		e.backendRef(m.Backend)
		e.num(m.Numerator)
		e.num(m.Denominator)
	}
}

// prepareResponse prepares a Response written as a literal (NewResponse).
func (p *preparer) prepareResponse(field **Response) error {
	r := *field
	if r == nil || r.ready {
		return nil
	}
	out, err := NewResponse(*r)
	if err != nil {
		return err
	}
	*field = out
	return nil
}
