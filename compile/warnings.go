package compile

import (
	"cmp"
	"slices"
	"strconv"
)

// Reason is a stable warning code (SPEC §14).
type Reason string

// The warning reasons of SPEC §2–§12.
const (
	ClassNotFound             Reason = "ClassNotFound"
	ClassConflict             Reason = "ClassConflict"
	RuleRejected              Reason = "RuleRejected"
	PathRejected              Reason = "PathRejected"
	PathTypeUnknown           Reason = "PathTypeUnknown"
	PathCaseInsensitive       Reason = "PathCaseInsensitive" // an ImplementationSpecific path matched as a regex where ingress-nginx matches a prefix (§4, §19)
	BackendUnsupported        Reason = "BackendUnsupported"
	RouteConflict             Reason = "RouteConflict"
	DefaultBackendConflict    Reason = "DefaultBackendConflict"
	DefaultBackendUnavailable Reason = "DefaultBackendUnavailable"
	ServiceNotFound           Reason = "ServiceNotFound"
	ServicePortNotFound       Reason = "ServicePortNotFound"
	ServicePortConflict       Reason = "ServicePortConflict"
	PortMatchedTargetPort     Reason = "PortMatchedTargetPort"
	ExternalNameUnsupported   Reason = "ExternalNameUnsupported"
	EndpointRejected          Reason = "EndpointRejected"
	AnnotationRejected        Reason = "AnnotationRejected"
	AnnotationUnsupported     Reason = "AnnotationUnsupported"
	AnnotationConflict        Reason = "AnnotationConflict"
	AnnotationSubstituted     Reason = "AnnotationSubstituted"
	RegexModeHost             Reason = "RegexModeHost"
	SecretNotFound            Reason = "SecretNotFound"
	SecretInvalid             Reason = "SecretInvalid"
	// CertificateHostMismatch: a spec.tls Secret's certificate is not valid
	// for a host listed with it, so it is not served for that host.
	CertificateHostMismatch Reason = "CertificateHostMismatch"

	// Canary (SPEC §10). CanaryWithoutPrimary: a canary path (or default
	// backend) has no primary route with its host, path and path type, or
	// names the primary's own backend; it serves nothing, and on a host an
	// Ingress serves it withdraws its canary backend (withdrawCanary).
	// CanaryConflict: the primary's backend already has the canary of an
	// Ingress that comes first in Ingress order.
	CanaryWithoutPrimary Reason = "CanaryWithoutPrimary"
	CanaryConflict       Reason = "CanaryConflict"

	// The ingress-nginx ConfigMap (SPEC §1), each about one key (Field
	// "data[key]"). ConfigMapKeyRejected: the value does not parse, the
	// default stays. ConfigMapKeyUnsupported: a key ramjet does not
	// implement. ConfigMapKeyIgnored: a key that changes no answer here (it
	// tunes nginx, or a command-line flag decided the setting).
	ConfigMapKeyRejected    Reason = "ConfigMapKeyRejected"
	ConfigMapKeyUnsupported Reason = "ConfigMapKeyUnsupported"
	ConfigMapKeyIgnored     Reason = "ConfigMapKeyIgnored"

	// AnnotationUnanchored: an annotation's regular expression matches
	// anywhere in what it tests, as under ingress-nginx, where the value
	// reads as an exact match (auth-tls-match-cn).
	AnnotationUnanchored Reason = "AnnotationUnanchored"

	// TCP and UDP services (SPEC §22), each about one entry of the
	// ConfigMap (Field "data[port]"). L4ServiceRejected: the entry is not
	// served (a malformed key or value, a port taken). L4ServicePartIgnored:
	// a part of it is ignored, as ingress-nginx ignores it.
	// L4ServicesNotFound: the ConfigMap a flag names does not exist.
	// L4ServiceDiffers: the entry is served otherwise than by ingress-nginx
	// (SPEC §19): a PROXY header decoded and sent on names the client
	// where ingress-nginx, without enable-real-ip, names the peer.
	L4ServiceRejected    Reason = "L4ServiceRejected"
	L4ServicePartIgnored Reason = "L4ServicePartIgnored"
	L4ServicesNotFound   Reason = "L4ServicesNotFound"
	L4ServiceDiffers     Reason = "L4ServiceDiffers"
)

// Ref names a Kubernetes object: what a warning is about, or who won a
// conflict. Kind is the object's kind ("Ingress", "Service", ...).
type Ref struct {
	Kind      string
	Namespace string
	Name      string
}

// IsZero reports whether r names nothing.
func (r Ref) IsZero() bool { return r == Ref{} }

// String renders r as "Kind namespace/name" ("Ingress prod/shop"), or
// "Kind name" for an object without a namespace; "" for the zero Ref.
func (r Ref) String() string {
	switch {
	case r.IsZero():
		return ""
	case r.Namespace == "":
		return r.Kind + " " + r.Name
	}
	return r.Kind + " " + r.Namespace + "/" + r.Name
}

func ingressRef(namespace, name string) Ref {
	return Ref{Kind: "Ingress", Namespace: namespace, Name: name}
}

// Warning is one problem found while compiling, as a value (SPEC §14).
type Warning struct {
	Reason Reason
	// Object is the object the warning is about.
	Object Ref
	// Field is the field path within Object, e.g. "spec.rules[0].http.paths[1].path".
	Field   string
	Message string
	// Winner and WinnerField name the declaration that won, for conflicts;
	// both are zero otherwise.
	Winner      Ref
	WinnerField string
	// Rated is the warning's severity for a migration from ingress-nginx
	// as Compile decided it, with the object's annotations and the
	// options in hand (SeverityFor); empty on a warning made elsewhere,
	// which SeverityFor rates by its reason.
	Rated Severity
}

// String renders the warning on one line:
// "RouteConflict Ingress prod/b spec.rules[0].http.paths[0]: ... (winner: Ingress prod/a spec.rules[0].http.paths[0])".
func (w Warning) String() string {
	s := string(w.Reason) + " " + w.Object.String()
	if w.Field != "" {
		s += " " + w.Field
	}
	s += ": " + w.Message
	if winner := w.WinnerText(); winner != "" {
		s += " (winner: " + winner + ")"
	}
	return s
}

// WinnerText renders the winner, "Ingress prod/a spec.rules[0].http.paths[0]";
// "" when the warning is not a conflict.
func (w Warning) WinnerText() string {
	s := w.Winner.String()
	if w.WinnerField != "" {
		if s != "" {
			s += " "
		}
		s += w.WinnerField
	}
	return s
}

// warn records a warning about object at field.
func (b *builder) warn(reason Reason, object Ref, field, message string) {
	b.warnings = append(b.warnings, Warning{Reason: reason, Object: object, Field: field, Message: message})
}

// conflict records a warning that names the declaration that won.
func (b *builder) conflict(reason Reason, object Ref, field, message string, winner Ref, winnerField string) {
	b.warnings = append(b.warnings, Warning{Reason: reason, Object: object, Field: field, Message: message, Winner: winner, WinnerField: winnerField})
}

// sortWarnings orders warnings by object, field, reason, message and winner
// (objects and winners as rendered), and drops exact repeats, so the list
// depends only on the objects.
func sortWarnings(ws []Warning) []Warning {
	slices.SortFunc(ws, compareWarnings)
	return slices.Compact(ws)
}

func compareWarnings(a, b Warning) int {
	return cmp.Or(
		cmp.Compare(a.Object.String(), b.Object.String()),
		cmp.Compare(a.Field, b.Field),
		cmp.Compare(a.Reason, b.Reason),
		cmp.Compare(a.Message, b.Message),
		cmp.Compare(a.WinnerText(), b.WinnerText()),
	)
}

// Field paths, built without fmt: they are made for every declaration.

func ruleField(i int) string { return "spec.rules[" + strconv.Itoa(i) + "]" }

func pathField(i, j int) string {
	if i < len(pathFields) && j < len(pathFields[i]) {
		return pathFields[i][j]
	}
	return pathFieldText(i, j)
}

func pathFieldText(i, j int) string {
	return "spec.rules[" + strconv.Itoa(i) + "].http.paths[" + strconv.Itoa(j) + "]"
}

func tlsField(i int) string { return "spec.tls[" + strconv.Itoa(i) + "]" }

func annotationField(key string) string { return "metadata.annotations[" + key + "]" }

// pathFields are the fields of the first rules' first paths, which nearly
// every route has: one string each, not one per route.
var pathFields = func() (f [4][32]string) {
	for i := range f {
		for j := range f[i] {
			f[i][j] = pathFieldText(i, j)
		}
	}
	return f
}()
