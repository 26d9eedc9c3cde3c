// Package match holds the compiled routing table and the read-only lookup
// structure inside it: host → virtual host → route (SPEC §3, §5, §13).
//
// A Table is built once by package compile and never changes afterwards, so
// any number of goroutines may look up in it without locks. Nothing here
// does I/O or keeps state between tables.
package match

import (
	"crypto/tls"
	"fmt"
	"strings"

	"ramjet.dev/ramjet/balance"
)

// PathType is how a route's path is matched (SPEC §4).
type PathType uint8

const (
	// Exact matches the normalized request path byte for byte.
	Exact PathType = iota
	// Prefix matches whole path elements.
	Prefix
	// Regex is ImplementationSpecific: a case-insensitive ^(?:path) regular expression.
	Regex
)

func (p PathType) String() string {
	switch p {
	case Exact:
		return "Exact"
	case Prefix:
		return "Prefix"
	case Regex:
		return "Regex"
	}
	return fmt.Sprintf("PathType(%d)", p)
}

// Protocol is how a backend is dialled (SPEC §8, backend-protocol).
type Protocol uint8

const (
	HTTP Protocol = iota
	HTTPS
	GRPC
	GRPCS
)

func (p Protocol) String() string {
	switch p {
	case HTTP:
		return "HTTP"
	case HTTPS:
		return "HTTPS"
	case GRPC:
		return "GRPC"
	case GRPCS:
		return "GRPCS"
	}
	return fmt.Sprintf("Protocol(%d)", p)
}

// BackendState says whether a backend can be proxied to and, if not, why.
// Every state but Serving answers 503 (SPEC §8, §13).
type BackendState uint8

const (
	// Serving: the Service port resolved. Endpoints may still be empty
	// (a rollout), in which case the backend answers 503.
	Serving BackendState = iota
	// ServiceNotFound: no Service of that name in the namespace.
	ServiceNotFound
	// PortNotFound: the Service exists but has no such port.
	PortNotFound
	// ExternalName: an ExternalName Service, compiled but never followed.
	ExternalName
)

func (s BackendState) String() string {
	switch s {
	case Serving:
		return "Serving"
	case ServiceNotFound:
		return "ServiceNotFound"
	case PortNotFound:
		return "PortNotFound"
	case ExternalName:
		return "ExternalName"
	}
	return fmt.Sprintf("BackendState(%d)", s)
}

// Backend is one Service port, shared by every route that names it.
type Backend struct {
	// ID is "namespace/name:port" with the Service port number, or with the
	// port as written ("prod/api:http") when it did not resolve. Unique and
	// stable across rebuilds: the key for counters (SPEC §9).
	ID        string
	Namespace string
	Name      string
	Port      int32 // Service port number; 0 when it did not resolve
	Protocol  Protocol
	State     BackendState
	// Endpoints are the ready "ip:port" socket addresses, sorted, unique.
	// IPv6 addresses are bracketed ("[fd00::1]:8080").
	Endpoints []string
	// Policy chooses among the endpoints (SPEC §9, load-balance); the zero
	// value is round-robin. HashKey is the request key the Hash policy
	// hashes (upstream-hash-by); zero for the other policies.
	Policy  balance.Policy
	HashKey balance.HashKey
}

// Servable reports whether a request for this backend can be proxied.
func (b *Backend) Servable() bool {
	return b != nil && b.State == Serving && len(b.Endpoints) > 0
}

// Source says which declaration in which Ingress produced something, for
// warnings, the text rendering and debugging.
type Source struct {
	Ingress string // "namespace/name"
	Field   string // "spec.rules[0].http.paths[1]" or "spec.defaultBackend"
}

func (s Source) String() string {
	if s.Field == "" {
		return "Ingress " + s.Ingress
	}
	return "Ingress " + s.Ingress + " " + s.Field
}

// Route is one declared path within a virtual host.
type Route struct {
	Type PathType
	// Path is the key the route is matched on: the path as declared for
	// Exact; the prefix with trailing slashes stripped for Prefix ("" for
	// "/"); the pattern without a leading "^" for Regex.
	Path    string
	Backend *Backend
	Source  Source
	// Order is the declaration's rank in Ingress order, then rule index,
	// then path index (SPEC §7): the last tie-breaker of controller order.
	Order int

	// Regexp is the compiled pattern; set only for Regex routes.
	Regexp *Regexp

	// SSLRedirect and ForceSSLRedirect are the declaring Ingress's
	// ssl-redirect (default: the --ssl-redirect option) and
	// force-ssl-redirect settings (SPEC §12). ingress-nginx applies them per
	// location, so a matched route's settings decide: a plain-HTTP request
	// is redirected when ForceSSLRedirect is set, or when SSLRedirect is and
	// the host is TLS.
	SSLRedirect      bool
	ForceSSLRedirect bool
	// PreserveTrailingSlash keeps the request's trailing slash in that
	// redirect (preserve-trailing-slash); by default one is dropped.
	PreserveTrailingSlash bool
}

// VirtualHost is everything served under one host name.
type VirtualHost struct {
	// Name is an exact host ("shop.example.com"), a wildcard
	// ("*.example.com"), or "" for the catch-all.
	Name string
	// Routes in precedence order: Exact (by path), Prefix (longest first,
	// then by path), Regex (controller order, SPEC §5).
	Routes []*Route
	// Fallback answers when no route matches; nil means 404 (SPEC §6).
	Fallback *Backend
	// FallbackSource says where the fallback came from: an Ingress's
	// spec.defaultBackend, or Source{Field: "--default-backend"} for the
	// global one.
	FallbackSource Source
	// TLS reports that some claimed Ingress lists this host under spec.tls
	// (used for the plain-HTTP redirect, SPEC §12), whether or not its
	// Secret is usable.
	TLS bool
	// SSLRedirect and ForceSSLRedirect are the redirect settings for
	// requests no route matches (see Route.SSLRedirect): those of the
	// Ingress that created the host, for the catch-all those of the Ingress
	// whose spec.defaultBackend is its fallback, else the options.
	SSLRedirect      bool
	ForceSSLRedirect bool
	// PreserveTrailingSlash is the matching preserve-trailing-slash
	// setting (see Route.PreserveTrailingSlash).
	PreserveTrailingSlash bool

	// regex holds the Regex routes in controller order, built by NewTable;
	// the Exact and Prefix index lives in the Table (see index.go).
	regex []*Route
}

// Certificate is a parsed TLS key pair and the host names it is served for.
type Certificate struct {
	// Secret is "namespace/name" of the kubernetes.io/tls Secret.
	Secret string
	// Hosts are the names (exact or "*.<rest>") this certificate is chosen for.
	Hosts []string
	// Fingerprint is the hex SHA-256 of the leaf certificate's DER bytes.
	Fingerprint string
	Cert        *tls.Certificate
}

// Reason is a stable warning code (SPEC §14).
type Reason string

// The warning reasons of SPEC §2–§12.
const (
	ClassNotFound             Reason = "ClassNotFound"
	ClassConflict             Reason = "ClassConflict"
	RuleRejected              Reason = "RuleRejected"
	PathRejected              Reason = "PathRejected"
	PathTypeUnknown           Reason = "PathTypeUnknown"
	BackendUnsupported        Reason = "BackendUnsupported"
	RouteConflict             Reason = "RouteConflict"
	DefaultBackendConflict    Reason = "DefaultBackendConflict"
	DefaultBackendUnavailable Reason = "DefaultBackendUnavailable"
	ServiceNotFoundReason     Reason = "ServiceNotFound"
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
)

// Warning is one problem found while compiling, as a value (SPEC §14).
type Warning struct {
	Reason Reason
	// Object is "Kind namespace/name", e.g. "Ingress prod/shop".
	Object string
	// Field is the field path within Object, e.g. "spec.rules[0].http.paths[1].path".
	Field   string
	Message string
	// Winner names the declaration that won, for conflicts
	// ("Ingress prod/a spec.rules[0].http.paths[0]"); empty otherwise.
	Winner string
}

// Ref splits Object into its kind, namespace and name ("Ingress prod/shop"
// gives "Ingress", "prod", "shop"), so that a warning can be attached to the
// object it is about. All three are empty when Object does not follow the
// "Kind namespace/name" convention.
func (w Warning) Ref() (kind, namespace, name string) {
	kind, key, ok := strings.Cut(w.Object, " ")
	if !ok || kind == "" || strings.Contains(kind, "/") {
		return "", "", ""
	}
	namespace, name, ok = strings.Cut(key, "/")
	if !ok || namespace == "" || name == "" || strings.Contains(namespace, " ") || strings.ContainsAny(name, "/ ") {
		return "", "", ""
	}
	return kind, namespace, name
}

func (w Warning) String() string {
	s := string(w.Reason) + " " + w.Object
	if w.Field != "" {
		s += " " + w.Field
	}
	s += ": " + w.Message
	if w.Winner != "" {
		s += " (winner: " + w.Winner + ")"
	}
	return s
}

// Table is an immutable compiled routing table. Build it with NewTable.
type Table struct {
	// VirtualHosts sorted by name; the catch-all ("") is always present.
	VirtualHosts []*VirtualHost
	// Backends sorted by ID.
	Backends []*Backend
	// Certificates sorted by Secret.
	Certificates []*Certificate
	// Warnings sorted deterministically (see compile).
	Warnings []Warning
	// TLSHosts are the valid hosts listed under some claimed Ingress's
	// spec.tls, sorted, whether or not they have a rule or a usable Secret:
	// the hosts a plain-HTTP request is redirected from (SPEC §12). Set
	// with SetTLSHosts.
	TLSHosts []string
	// Digest is the hex SHA-256 of everything that affects a response (SPEC §15).
	Digest string

	// The lookup index, built once by NewTable (see index.go).
	exactHosts    map[string]hostIndex
	wildcardHosts map[string]hostIndex // keyed by the suffix after "*."
	catchAll      hostIndex
	paths         pathTable // Exact and Prefix keys of every host
	exactCerts    map[string]*Certificate
	wildcardCerts map[string]*Certificate // keyed by the suffix after "*."
	regexps       []*Regexp               // each distinct compiled pattern once
	tlsExact      map[string]bool
	tlsWildcard   map[string]bool // keyed by the suffix after "*."
}
