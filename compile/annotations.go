package compile

import (
	"fmt"
	"strconv"
	"strings"

	"ramjet.dev/ramjet/match"
)

// The two annotation prefixes ramjet reads (SPEC §11). Any other prefix is
// another controller's business.
const (
	NativePrefix = "ramjet.dev/"
	NginxPrefix  = "nginx.ingress.kubernetes.io/"
)

// annotationValues are the parsed annotations of one Ingress.
type annotationValues struct {
	// protocol is backend-protocol (backends.go); protocolKey is the
	// annotation that set it, "" when defaulted.
	protocol    match.Protocol
	protocolKey string

	// ssl-redirect, force-ssl-redirect and preserve-trailing-slash
	// (sslredirect.go). sslRedirect is nil when not set: the options decide.
	sslRedirect      *bool
	forceSSLRedirect bool
	// preserveTrailingSlash keeps the trailing slash in that redirect.
	preserveTrailingSlash bool
	// usePortInRedirects names the HTTPS port in that redirect
	// (use-port-in-redirects).
	usePortInRedirects bool

	// balancing holds load-balance and upstream-hash-by (balance.go); nil
	// when the Ingress sets neither: the default.
	balancing *balanceValues
	// subset holds upstream-hash-by-subset and -subset-size (balance.go);
	// nil when the Ingress sets neither, which is most of them.
	subset *subsetValues

	// request holds the request policy annotations (see policy.go).
	request *policyValues

	// extensions are the embedder's annotations (see extensions.go).
	extensions *match.Extensions
	// redirect holds the redirect and host annotations (withhold.go); nil
	// when the Ingress sets none, which is most of them.
	redirect *redirectAnnotations
	// rewrite holds rewrite-target, use-regex, upstream-vhost and
	// x-forwarded-prefix (rewrite.go); nil when the Ingress sets none.
	rewrite *rewriteValues
	// traffic holds the canary and session affinity annotations (canary.go,
	// affinity.go).
	traffic *trafficValues

	// access holds CORS and authentication (cors.go, auth.go).
	access accessAnnotations
	// response holds the error page, bandwidth, mirror and log
	// annotations (response.go); nil when the Ingress sets none.
	response *responseValues
	// snippet holds the snippet annotations and their translations
	// (snippet.go); nil when the Ingress sets none.
	snippet *snippetValues
	// tracing holds the OpenTelemetry annotations (tracing.go); nil when
	// the Ingress sets none.
	tracing *tracingValues
}

// The larger annotation areas are held by pointer and made on first
// write: most Ingresses set none of them, and a compile of 10,000
// Ingresses held them all by value. trafficR reads an area never set as
// its zero value, which is shared and so never written through.
var noTraffic trafficValues

func (v *annotationValues) requestW() *policyValues {
	if v.request == nil {
		v.request = new(policyValues)
	}
	return v.request
}

func (v *annotationValues) trafficW() *trafficValues {
	if v.traffic == nil {
		v.traffic = new(trafficValues)
	}
	return v.traffic
}

func (v *annotationValues) trafficR() *trafficValues {
	if v.traffic == nil {
		return &noTraffic
	}
	return v.traffic
}

// annotationSpec describes one known annotation key, without prefix.
type annotationSpec struct {
	// apply parses value into v. Nil means the key is known (ingress-nginx
	// routes by it) but this version does not implement it.
	apply func(v *annotationValues, key, value string) error
}

// knownAnnotations is the one registry of annotation keys ramjet knows.
// Implementing a key is registering its apply function from its area's
// file (registerAnnotations).
var knownAnnotations = map[string]annotationSpec{
	// Known but not implemented: ingress-nginx routes, rewrites or refuses
	// requests by these, so they warn and a migration report counts them as
	// moving traffic (Warning.Severity).
}

// registerAnnotations adds the keys of one area (routing, canary, policy)
// from the file that implements them, replacing a known-but-unimplemented
// entry. It runs from init functions, before any Compile.
func registerAnnotations(m map[string]annotationSpec) {
	for k, spec := range m {
		knownAnnotations[k] = spec
	}
}

// readAnnotations parses each claimed Ingress's ramjet.dev/ and
// nginx.ingress.kubernetes.io/ annotations (SPEC §11).
//
//   - ramjet.dev/<key> that is unknown, not implemented, or does not parse:
//     AnnotationRejected, not applied.
//   - nginx.ingress.kubernetes.io/<key> that ramjet implements: applied like
//     the native one, unless ramjet.dev/<key> is also set, which shadows it
//     (even when the native value is rejected, so a typo never silently
//     falls back to the other prefix). A value that does not parse:
//     AnnotationRejected.
//   - nginx.ingress.kubernetes.io/<key> that ramjet does not implement:
//     AnnotationUnsupported, one warning per key and Ingress, each naming
//     its annotation as the field, so a migration lists exactly what will
//     not carry over.
//
// Every key sets its own value, so the order keys are visited in does not
// matter; the warnings are sorted at the end.
func (b *builder) readAnnotations() {
	for _, ing := range b.ingresses {
		b.readLocationDefaults(ing)
		for key, value := range ing.obj.Annotations {
			switch {
			case strings.HasPrefix(key, NativePrefix):
				b.nativeAnnotation(ing, key, key[len(NativePrefix):], value)
			case strings.HasPrefix(key, NginxPrefix):
				if b.criticalOff(ing, key, key[len(NginxPrefix):]) {
					continue
				}
				b.nginxAnnotation(ing, key, key[len(NginxPrefix):], value)
			}
		}
		b.readSnippets(ing)
		b.applyBlockCIDRs(ing)
		b.resolveBalancing(ing)
		b.resolveAccess(ing)
		b.resolveProxying(ing)
		b.applyGlobalAuth(ing)
		b.readExtensions(ing)
		b.resolveTracing(ing)
	}
}

func (b *builder) nativeAnnotation(ing *ingress, key, name, value string) {
	spec, known := knownAnnotations[name]
	switch {
	case b.embedderServes(name): // carried for the hook (extensions.go)
	case !known:
		b.warn(AnnotationRejected, ing.ref(), annotationField(key),
			"unknown annotation "+key+"; not applied")
	case spec.apply == nil:
		b.warn(AnnotationRejected, ing.ref(), annotationField(key),
			key+" is not implemented in this version of ramjet; not applied")
	default:
		if err := spec.apply(&ing.ann, key, value); err != nil {
			b.rejectValue(ing, key, err)
		}
	}
}

func (b *builder) nginxAnnotation(ing *ingress, key, name, value string) {
	spec, known := knownAnnotations[name]
	if b.embedderServes(name) {
		return // carried for the hook (extensions.go)
	}
	if !known || spec.apply == nil {
		msg := key + " is not supported by ramjet and has no effect"
		switch {
		case !nginxAnnotations[name]:
			// A ConfigMap key or an old name: the migration report must not
			// count it as a feature that goes missing.
			msg = key + " is not an annotation ingress-nginx reads (a ConfigMap key, or a removed or misspelled name): no effect under ingress-nginx either"
		case AsRamjetDoes(name, value):
			msg = key + " " + strconv.Quote(value) + " asks for what ramjet does anyway; no effect needed"
		case name == "satisfy":
			msg = key + " " + strconv.Quote(value) + " is not supported by ramjet: every access check must pass (allowlist and authentication), where ingress-nginx admits a request either one admits"
		case name == "enable-opentracing":
			msg = key + " is not supported by ramjet: requests are not traced with OpenTracing (enable-opentelemetry traces them)"
		}
		b.warn(AnnotationUnsupported, ing.ref(), annotationField(key), msg)
		return
	}
	if _, shadowed := ing.obj.Annotations[NativePrefix+name]; shadowed {
		return
	}
	if nginxTrimmed[name] {
		value = strings.TrimSpace(value)
	}
	if err := spec.apply(&ing.ann, key, value); err != nil {
		b.rejectValue(ing, key, err)
	}
}

// ratedError is an annotation value not applied whose warning has a
// severity of its own, rather than AnnotationRejected's.
type ratedError struct {
	error
	sev Severity
}

// rejectValue warns that key's value is not applied: err says why,
// and its severity when it is a ratedError.
func (b *builder) rejectValue(ing *ingress, key string, err error) {
	b.warn(AnnotationRejected, ing.ref(), annotationField(key), err.Error())
	if re, ok := err.(ratedError); ok {
		b.warnings[len(b.warnings)-1].Rated = re.sev
	}
}

// nginxTrimmed are the string annotations whose ingress-nginx validator
// ignores spaces (it removes them, or trims the value) and whose value
// its parser then trims (parser.GetStringAnnotation): " GRPC" is GRPC
// there. Booleans and numbers are read as written (a space refuses them
// there too); the other keys' parsers take spaces as ingress-nginx does.
var nginxTrimmed = setOf("backend-protocol", "load-balance", "upstream-hash-by", "canary-by-header", "canary-by-cookie",
	"session-cookie-name", "session-cookie-path", "session-cookie-domain")

// boolAnnotation applies a boolean annotation through set.
func boolAnnotation(set func(v *annotationValues, key string, on bool)) func(v *annotationValues, key, value string) error {
	return func(v *annotationValues, key, value string) error {
		on, err := strconv.ParseBool(value)
		if err != nil {
			return fmt.Errorf("%s %q is not a boolean (true or false); not applied", key, value)
		}
		set(v, key, on)
		return nil
	}
}

// accessAnnotations holds an Ingress's CORS (cors.go) and authentication
// (auth.go) annotations as written, keyed by name without prefix, until
// resolveAccess reads them together; then the policies every route of the
// Ingress shares.
type accessAnnotations struct {
	raw  map[string]accessValue
	cors *match.CORS
	auth *match.Auth
}

type accessValue struct{ key, value string }

func (a *accessAnnotations) get(name string) (accessValue, bool) {
	v, ok := a.raw[name]
	return v, ok
}

// keepAccessAnnotation records the value; resolveAccess parses it, since
// what one key means depends on others (auth-secret on auth-type).
func keepAccessAnnotation(v *annotationValues, key, value string) error {
	if v.access.raw == nil {
		v.access.raw = make(map[string]accessValue)
	}
	name := key[strings.IndexByte(key, '/')+1:]
	v.access.raw[name] = accessValue{key: key, value: value}
	return nil
}

func (b *builder) rejectAccess(ing *ingress, key, why string) {
	b.warn(AnnotationRejected, ing.ref(), annotationField(key), key+": "+why)
}

// resolveAccess builds the Ingress's CORS policy (cors.go) and
// authentication (auth.go) once its annotations are all read.
func (b *builder) resolveAccess(ing *ingress) {
	a := &ing.ann.access
	if len(a.raw) == 0 {
		return
	}
	a.cors = b.resolveCORS(ing)
	a.auth = b.resolveAuth(ing)
}
