package compile

import (
	"fmt"
	"regexp"
	"strconv"

	"ramjet.dev/ramjet/match"
	"ramjet.dev/ramjet/router/configmap"
)

// Tracing (SPEC §23): ingress-nginx's OpenTelemetry settings of a
// location, read as v1.15 reads them and combined as its template does
// (internal/ingress/annotations/opentelemetry/main.go,
// template.go buildOpentelemetryForLocation):
//
//   - The ConfigMap's enable-opentelemetry traces every location; an
//     Ingress's enable-opentelemetry annotation turns its locations on or
//     off over it. Without the key, an Ingress that turns it on is
//     traced alone, where ingress-nginx's module, once loaded for it,
//     traces every location (AnnotationSubstituted on that Ingress).
//   - opentelemetry-trust-incoming-span (default true) and
//     opentelemetry-operation-name as annotations are read only with
//     enable-opentelemetry "true" on the same Ingress, as ingress-nginx's
//     parser reads them; otherwise they warn and have no effect. The
//     annotation's trust decides when set; else the ConfigMap's.
//   - The operation name is the annotation's (letters, digits, '_' and
//     '-' only: ingress-nginx ignores the whole Ingress over another
//     value under its prefix, and so does ramjet), else the ConfigMap's,
//     which may hold nginx variables, else the location's own name
//     (match.LocationSpanName). A request an error page answers is named
//     by the ConfigMap's name alone (match.Tracing.ErrorPageName), as
//     ingress-nginx's @custom_ location inherits only the http block's.
//
// The exporter keys (otlp-collector-host and -port, otel-service-name,
// the otel-sampler and batch keys) are the embedder's: the example
// controller serves them with the OpenTelemetry SDK.

// TracingOptions are the ConfigMap's tracing keys (Options.Tracing).
type TracingOptions struct {
	// Enabled is enable-opentelemetry: every location is traced unless
	// its Ingress turns it off.
	Enabled bool
	// DistrustIncomingSpan is opentelemetry-trust-incoming-span "false"
	// (ingress-nginx's default is true).
	DistrustIncomingSpan bool
	// OperationName is opentelemetry-operation-name, with the variables
	// match.ParseSpanName takes; "" names each span after its location.
	OperationName string
}

// operationNameRE is ingress-nginx's check of the operation name
// annotation (opentelemetry/main.go regexOperationName).
var operationNameRE = regexp.MustCompile(`^[A-Za-z0-9_\-]*$`)

// tracingValues are an Ingress's tracing annotations as written.
type tracingValues struct {
	enable, trust, name annValue
	// out is what the Ingress's locations get (resolveTracing); nil: not
	// traced.
	out *match.Tracing
	// resolved: out is decided.
	resolved bool
	// moduleWide: ingress-nginx would load its OpenTelemetry module for
	// this Ingress alone (warnTracingModuleWide).
	moduleWide bool
}

func (v *annotationValues) tracingW() *tracingValues {
	if v.tracing == nil {
		v.tracing = new(tracingValues)
	}
	return v.tracing
}

// recordTracing records one annotation as written; resolveTracing judges
// them together, since enable-opentelemetry decides whether the others
// are read.
func recordTracing(field func(*tracingValues) *annValue) func(v *annotationValues, key, value string) error {
	return func(v *annotationValues, key, value string) error {
		*field(v.tracingW()) = annValue{key: key, value: value}
		return nil
	}
}

func init() {
	registerAnnotations(map[string]annotationSpec{
		"enable-opentelemetry":              {apply: recordTracing(func(t *tracingValues) *annValue { return &t.enable })},
		"opentelemetry-trust-incoming-span": {apply: recordTracing(func(t *tracingValues) *annValue { return &t.trust })},
		"opentelemetry-operation-name":      {apply: recordTracing(func(t *tracingValues) *annValue { return &t.name })},
	})
	// The exporter's keys are the embedder's Tracer's: an embedder that
	// serves them names them in ConfigMapOptions.ExtensionKeys.
	for _, k := range []string{"otlp-collector-host", "otlp-collector-port", "otel-service-name", "otel-sampler",
		"otel-sampler-ratio", "otel-sampler-parent-based", "otel-max-queuesize", "otel-schedule-delay-millis",
		"otel-max-export-batch-size", "opentelemetry-config"} {
		ConfigMapUnsupported[k] = "spans are exported by the embedder's router.Options.Tracer (the example controller serves this key)"
	}
	ConfigMapKeys["enable-opentelemetry"] = ConfigMapKey{Option: func(o *Options, v string) (err error) {
		o.Tracing.Enabled, err = configmap.ParseBool(v)
		return err
	}}
	ConfigMapKeys["opentelemetry-trust-incoming-span"] = ConfigMapKey{Option: func(o *Options, v string) error {
		on, err := configmap.ParseBool(v)
		o.Tracing.DistrustIncomingSpan = !on
		return err
	}}
	ConfigMapKeys["opentelemetry-operation-name"] = ConfigMapKey{Option: func(o *Options, v string) error {
		if _, err := match.ParseSpanName(v); err != nil {
			return err
		}
		o.Tracing.OperationName = v
		return nil
	}}
}

// resolveTracing judges the Ingress's tracing annotations (after every
// annotation is read) and decides what its locations get.
func (b *builder) resolveTracing(ing *ingress) {
	t := ing.ann.tracing
	if t == nil {
		return
	}
	t.resolved = true
	set, on := false, false
	if t.enable.set() {
		var err error
		on, err = strconv.ParseBool(t.enable.value)
		if err != nil {
			b.rejectAnnotation(ing, t.enable, "is not a boolean (true or false)", "ingress-nginx ignores it, and so does ramjet")
		} else {
			set = true
		}
	}
	if !set || !on {
		for _, a := range []annValue{t.trust, t.name} {
			if a.set() {
				b.rejectAnnotation(ing, a, "has no effect", "ingress-nginx reads it only with enable-opentelemetry \"true\" on the same Ingress")
			}
		}
		if set {
			return // turned off: out stays nil
		}
		t.out = b.globalTracing()
		return
	}
	opts := b.opts.Tracing
	t.moduleWide = !opts.Enabled && !t.enable.native()
	global, _ := match.ParseSpanName(opts.OperationName) // Options.Validate checked it
	trust := !opts.DistrustIncomingSpan
	if t.trust.set() {
		v, err := strconv.ParseBool(t.trust.value)
		if err != nil {
			b.rejectAnnotation(ing, t.trust, "is not a boolean (true or false)", fmt.Sprintf("the ConfigMap's trust (%t) applies", trust))
		} else {
			trust = v
		}
	}
	out := &match.Tracing{TrustIncomingSpan: trust, OperationName: global, ErrorPageName: global}
	if a := t.name; a.set() {
		switch {
		case operationNameRE.MatchString(a.value):
			if a.value != "" {
				out.OperationName, _ = match.ParseSpanName(a.value)
			}
		case a.native():
			b.rejectAnnotation(ing, a, "holds a character other than a letter, digit, '_' or '-'", "not applied")
		default:
			r := ing.ann.redirect
			if r == nil {
				r = new(redirectAnnotations)
				ing.ann.redirect = r
			}
			b.withhold(ing, r, a, "holds a character other than a letter, digit, '_' or '-' (ingress-nginx's check of the annotation)")
		}
	}
	t.out = out
}

// tracing is what ing's locations get; ing nil: a location no Ingress
// declares (a host's fallback without one).
func (b *builder) tracing(ing *ingress) *match.Tracing {
	if ing != nil {
		if t := ing.ann.tracing; t != nil && t.resolved {
			return t.out
		}
	}
	return b.globalTracing()
}

// globalTracing is the tracing of a location whose Ingress sets none of
// the annotations: the ConfigMap's, made once and shared.
func (b *builder) globalTracing() *match.Tracing {
	o := b.opts.Tracing
	if !o.Enabled {
		return nil
	}
	if b.tracingDefault == nil {
		name, _ := match.ParseSpanName(o.OperationName) // Options.Validate checked it
		b.tracingDefault = &match.Tracing{TrustIncomingSpan: !o.DistrustIncomingSpan, OperationName: name, ErrorPageName: name}
	}
	return b.tracingDefault
}

// warnTracingModuleWide warns on each Ingress served (not withheld, not a
// canary) whose enable-opentelemetry "true" is the only tracing asked
// for: ingress-nginx loads its OpenTelemetry module for it, and the
// module traces every location no directive turns off, while without the
// ConfigMap's key its template turns none off
// (buildOpentelemetryForLocation; kubernetes/ingress-nginx#10966). Those
// locations' spans are made and exported without their context sent on
// (no opentelemetry_propagate). ramjet traces the Ingresses that ask.
func (b *builder) warnTracingModuleWide() {
	for _, ing := range b.ingresses {
		if t := ing.ann.tracing; t != nil && t.moduleWide {
			b.warn(AnnotationSubstituted, ing.ref(), annotationField(t.enable.key),
				"traces this Ingress's locations only: for it, ingress-nginx without the ConfigMap's enable-opentelemetry loads its OpenTelemetry module, which then traces every location of every Ingress (kubernetes/ingress-nginx#10966), sending the context on only from those that turn it on")
		}
	}
}
