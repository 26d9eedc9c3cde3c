package match

import (
	"slices"
	"strconv"
	"strings"

	"ramjet.dev/ramjet/match/vars"
)

// Tracing is a location's OpenTelemetry tracing (SPEC §23): ingress-nginx's
// enable-opentelemetry, opentelemetry-trust-incoming-span and
// opentelemetry-operation-name, the ConfigMap's and the annotations'
// combined as its template combines them (compile/tracing.go). A location
// with a Tracing makes one server span per request and sends its W3C trace
// context to the backend.
type Tracing struct {
	// TrustIncomingSpan makes a valid incoming traceparent (and its
	// tracestate) the parent of the span; otherwise the span starts a
	// trace of its own and the client's trace headers are replaced.
	TrustIncomingSpan bool
	// OperationName names the span. The zero SpanName names it after the
	// location, as ingress-nginx's module names it: the path of the nginx
	// location block ingress-nginx writes (LocationSpanName).
	OperationName SpanName
	// ErrorPageName names the span of a request an error page answered
	// (custom-http-errors): the ConfigMap's opentelemetry-operation-name,
	// which ingress-nginx writes in the http block and its
	// @custom_<upstream>_<code> location inherits, where the module names
	// the span as it ends; never an Ingress's annotation. The zero
	// SpanName names it after that location.
	ErrorPageName SpanName
}

// SpanName is an opentelemetry-operation-name: text with the nginx
// variables a header value takes, expanded per request.
type SpanName struct {
	raw string
	t   template
}

// spanNamePlace is where opentelemetry-operation-name reads its
// variables: those of a ConfigMap header value, as nginx expands any
// variable in opentelemetry_operation_name.
var spanNamePlace = vars.Place{Name: "opentelemetry-operation-name", Vars: headerPlace.Vars}

// ParseSpanName parses an operation name; "" is the zero SpanName, the
// location's own name. It fails, naming it, on a variable ramjet cannot
// expand.
func ParseSpanName(s string) (SpanName, error) {
	if s == "" {
		return SpanName{}, nil
	}
	t, err := spanNamePlace.Parse(s)
	if err != nil {
		return SpanName{}, err
	}
	return SpanName{raw: s, t: t}, nil
}

// String is the name as written, "" for the location's own name.
func (n SpanName) String() string { return n.raw }

// IsZero reports the location's own name.
func (n SpanName) IsZero() bool { return n.raw == "" }

// HasVariables reports whether n needs a request to be expanded.
func (n SpanName) HasVariables() bool { return n.raw != "" && !n.t.Literal() }

// Expand is n for the request r; r may be nil when n has no variables.
func (n SpanName) Expand(r *SnippetRequest) string {
	if !n.HasVariables() {
		return n.raw
	}
	return expand(n.t, r)
}

// LocationSpanName is the name ingress-nginx's module gives a span
// without an operation name: the name of the nginx location that
// answered (ngx_http_core_loc_conf_t.name), as ingress-nginx writes the
// route's location. A Regex route is "^" and its pattern (the host is in
// regex mode: every location is "~* ^path"); an Exact route its path; a
// Prefix route "path/", or "path" for a request to path itself, which the
// exact location ingress-nginx adds beside each prefix answers; the
// fallback (rt nil) and a Prefix "/" are "/". path is the request's
// normalized path.
func LocationSpanName(rt *Route, path string) string {
	switch {
	case rt == nil:
		return "/"
	case rt.Type == Regex:
		return "^" + rt.Path
	case rt.Type == Exact:
		return rt.Path
	case rt.Path == "":
		return "/"
	case path == rt.Path:
		return rt.Path
	}
	return rt.Path + "/"
}

// tracingSection is the server span a location makes and the trace
// context it propagates.
var tracingSection = section{
	name:     "tracing",
	location: []string{"Tracing"},
	digest: []digestPart{{
		tag: "tracing",
		hostHas: func(vh *VirtualHost) bool {
			return vh.FallbackLocation.Tracing != nil || slices.ContainsFunc(vh.Routes, func(r *Route) bool { return r.Tracing != nil })
		},
		host:  func(e *encoder, vh *VirtualHost) { e.tracing(vh.FallbackLocation.Tracing) },
		route: func(e *encoder, r *Route) { e.tracing(r.Tracing) },
	}},
	text: textParts{
		at:            95,
		fallbackLines: func(b *strings.Builder, vh *VirtualHost) { tracingLine(b, vh.FallbackLocation.Tracing) },
		routeLines:    func(b *strings.Builder, _ *VirtualHost, r *Route) { tracingLine(b, r.Tracing) },
	},
}

func (e *encoder) tracing(t *Tracing) {
	e.flag(t != nil)
	if t != nil {
		// Bit 1 of the trust flag's byte says an error page's name
		// follows, one other than the location's: a table with none
		// keeps its digest.
		v := byte(0)
		if t.TrustIncomingSpan {
			v = 1
		}
		differs := t.ErrorPageName.raw != t.OperationName.raw
		if differs {
			v |= 2
		}
		e.buf = append(e.buf, v)
		e.str(t.OperationName.raw)
		if differs {
			e.str(t.ErrorPageName.raw)
		}
	}
}

// tracingLine writes a location's tracing under its line.
func tracingLine(b *strings.Builder, t *Tracing) {
	if t == nil {
		return
	}
	b.WriteString("    tracing trust-incoming-span ")
	if t.TrustIncomingSpan {
		b.WriteString("on")
	} else {
		b.WriteString("off")
	}
	if !t.OperationName.IsZero() {
		b.WriteString(" operation-name " + strconv.Quote(t.OperationName.raw))
	}
	if t.ErrorPageName.raw != t.OperationName.raw && !t.ErrorPageName.IsZero() {
		b.WriteString(" error-page-operation-name " + strconv.Quote(t.ErrorPageName.raw))
	}
	b.WriteString("\n")
}
