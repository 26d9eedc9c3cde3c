package compile

import "strings"

// Severity is what a warning means for traffic moving from ingress-nginx
// to ramjet: the migration report (examples/check -report) sorts by it.
type Severity string

const (
	// TrafficMoves: some request goes elsewhere or is answered otherwise
	// than under ingress-nginx (another backend, another path, a 404
	// where ingress-nginx served, a check ingress-nginx made skipped).
	TrafficMoves Severity = "traffic-moves"
	// FeatureMissing: requests reach the same backend, without something
	// ingress-nginx added (a header, a timeout, a limit, a log setting).
	FeatureMissing Severity = "feature-missing"
	// Cosmetic: nothing a client sees changes; ingress-nginx answers the
	// same, or the object is broken under both.
	Cosmetic Severity = "cosmetic"
)

// reasonSeverity is each reason's severity. AnnotationUnsupported is
// decided per key (see Warning.Severity); a reason missing here counts as
// FeatureMissing, and TestEveryReasonHasSeverity names it.
var reasonSeverity = map[Reason]Severity{
	ClassNotFound:             Cosmetic,     // neither controller serves it
	ClassConflict:             TrafficMoves, // claimed where ingress-nginx would not (§19)
	RuleRejected:              TrafficMoves, // the rule is not served
	PathRejected:              TrafficMoves, // the path is not served
	PathTypeUnknown:           TrafficMoves, // matched as a regex
	BackendUnsupported:        FeatureMissing,
	RouteConflict:             TrafficMoves, // which one serves may differ (§19)
	DefaultBackendConflict:    TrafficMoves,
	DefaultBackendUnavailable: Cosmetic, // 503 or 404 under both
	ServiceNotFound:           Cosmetic, // 503 under both
	ServicePortNotFound:       Cosmetic,
	ServicePortConflict:       TrafficMoves,
	PortMatchedTargetPort:     Cosmetic, // served, with a hint to fix the manifest
	ExternalNameUnsupported:   FeatureMissing,
	EndpointRejected:          TrafficMoves, // an endpoint ingress-nginx dials is dropped (§19)
	AnnotationRejected:        FeatureMissing,
	AnnotationConflict:        TrafficMoves, // another Ingress's setting applies to the shared backend
	AnnotationSubstituted:     FeatureMissing,
	RegexModeHost:             TrafficMoves,
	SecretNotFound:            Cosmetic, // the default certificate under both
	SecretInvalid:             Cosmetic,
	CertificateHostMismatch:   Cosmetic,
	CanaryWithoutPrimary:      Cosmetic, // ingress-nginx skips such a canary too
	CanaryConflict:            Cosmetic, // one canary per backend under both, the oldest
}

// Severity is the warning's severity for a migration from ingress-nginx.
// An unsupported nginx annotation moves traffic when ingress-nginx routes
// or refuses requests by it (a key the annotation registry knows but does
// not implement), and is a missing feature otherwise.
func (w Warning) Severity() Severity {
	if w.Reason == AnnotationUnsupported {
		key, ok := strings.CutPrefix(w.Field, "metadata.annotations["+NginxPrefix)
		if _, known := knownAnnotations[strings.TrimSuffix(key, "]")]; ok && known {
			return TrafficMoves
		}
		return FeatureMissing
	}
	if s, ok := reasonSeverity[w.Reason]; ok {
		return s
	}
	return FeatureMissing
}
