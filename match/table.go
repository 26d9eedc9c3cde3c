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
	"iter"
	"strconv"
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
	// H2C is HTTP/2 with prior knowledge over cleartext, any request
	// (a Service port with appProtocol kubernetes.io/h2c, SPEC §20); GRPC
	// is dialled so too, for gRPC requests only.
	H2C
	// AutoHTTP is HTTPS for a request whose client connection is TLS and
	// HTTP otherwise (ingress-nginx's backend-protocol AUTO_HTTP:
	// proxy_pass $scheme://).
	AutoHTTP
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
	case H2C:
		return "H2C"
	case AutoHTTP:
		return "AUTO_HTTP"
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
	// Algorithm chooses among the endpoints (SPEC §9, load-balance); the zero
	// value is round-robin. HashKey is the request key the Hash algorithm
	// hashes (upstream-hash-by); zero for the other algorithms.
	Algorithm balance.Algorithm
	// HashSubset, when more than 0, is the size of the endpoint subsets
	// the Hash algorithm hashes onto, a request then going round-robin
	// within its subset (upstream-hash-by-subset and -subset-size). An
	// int32 beside Algorithm costs the Backend no space.
	HashSubset int32
	HashKey    balance.HashKey
	// Traffic is the backend's canary and session affinity (SPEC §9,
	// §10); nil for neither.
	Traffic *Traffic
	// PortNames are the port names Ingresses wrote for this Service port
	// (backend.service.port.name), in the order compiling met them; a
	// declaration names its spelling by index (a PortName field, see
	// WrittenPort). ingress-nginx names an upstream and $service_port by
	// the port as written: "prod-web-http", not "prod-web-80". Like a
	// Source it changes no answer, so the digest leaves it out.
	PortNames []string
}

// WrittenPort is the Service port as a declaration referring to b by
// name (a PortName field: 0 for the number, else 1 + an index into
// PortNames) wrote it: the name, else the number, else, for a port that
// did not resolve, the ID's port as written.
func (b *Backend) WrittenPort(name uint8) string {
	switch {
	case b == nil:
		return ""
	case name > 0 && int(name) <= len(b.PortNames):
		return b.PortNames[name-1]
	case b.Port != 0:
		return strconv.Itoa(int(b.Port))
	}
	if i := strings.LastIndexByte(b.ID, ':'); i >= 0 {
		return b.ID[i+1:]
	}
	return ""
}

// Servable reports whether a request for this backend can be proxied.
func (b *Backend) Servable() bool {
	return b != nil && b.State == Serving && len(b.Endpoints) > 0
}

// Source says which declaration in which Ingress produced something, for
// the text rendering and debugging.
type Source struct {
	// Kind is the declaring object's kind when it is not an Ingress
	// ("HTTPRoute", SPEC §20); "" for an Ingress.
	Kind string
	// Namespace and Name are the Ingress's; both empty for what no Ingress
	// declared (the global default backend).
	Namespace string
	Name      string
	Field     string // "spec.rules[0].http.paths[1]" or "spec.defaultBackend"
}

// Ingress returns "namespace/name", or "" when no Ingress declared it.
func (s Source) Ingress() string {
	if s.Name == "" {
		return ""
	}
	return s.Namespace + "/" + s.Name
}

func (s Source) String() string {
	kind := "Ingress"
	if s.Kind != "" {
		kind = s.Kind
	}
	if s.Field == "" {
		return kind + " " + s.Ingress()
	}
	return kind + " " + s.Ingress() + " " + s.Field
}

// Location is what a location asks of a request besides its backend: the
// one value of a route's settings (Route embeds it) and of a host's
// fallback's (VirtualHost.FallbackLocation), so the two are built,
// digested and applied alike (SPEC §6). Each field is nil for none.
type Location struct {
	// Rewrite is what the location does to the request besides choosing
	// the backend (rewrite-target, upstream-vhost, x-forwarded-prefix).
	// The catch-all's fallback has none: ingress-nginx keeps its catch-all
	// location's own.
	Rewrite *Rewrite
	// Policy is the declaring Ingress's request policy (SPEC §11.4, §11.5).
	Policy *Policy
	// CORS and Auth are the cross-origin policy and authentication
	// (cors.go, auth.go).
	CORS *CORS
	Auth *Auth
	// BackendTLS is how the location's HTTPS or GRPCS backend is dialled
	// (proxy-ssl-*, tlsends.go). A fallback's is its host's, as
	// ingress-nginx writes it in the server block, and a route without
	// one of its own uses it (Result.Location).
	BackendTLS *BackendTLS
	// Response is the error pages, response bandwidth, mirror and logging
	// (response.go); the global error pages' where the declaring Ingress
	// sets none.
	Response *Response
	// Snippet is what the snippet annotations translate to (snippet.go).
	Snippet *Snippet
	// Tracing is the location's OpenTelemetry server span (tracing.go);
	// nil: the location is not traced.
	Tracing *Tracing
	// Extensions are the embedder's own annotations of the declaring
	// Ingress (see Extensions), which its router.Hook serves by, on the
	// host's fallback as on the routes; nil when it has none. Shared by
	// the Ingress's locations: read it, never change it.
	Extensions *Extensions
}

// Route is one declared path within a virtual host.
type Route struct {
	// Type, then the flags, which share its word: 224 bytes a route, not
	// 232, in the size class below.
	Type PathType
	// CaseSensitive, on a Regex route, matches the pattern's letters only
	// as written (a Gateway API RegularExpression, SPEC §20) instead of
	// folding ASCII case as an Ingress pattern does (§4). A Regexp given
	// with the route must agree (CompileCaseSensitiveRegex).
	CaseSensitive bool

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
	// UsePortInRedirects names the HTTPS port in that redirect's Location
	// (use-port-in-redirects); by default it names none.
	UsePortInRedirects bool
	// NoAffinityCookie: the declaring Ingress does not ask for affinity:
	// cookie although its backend has session affinity (another Ingress
	// asked). A request here follows a session cookie it carries but is
	// never given one, as ingress-nginx sets the cookie only on the
	// locations of Ingresses with affinity (SPEC §9).
	NoAffinityCookie bool
	// CookieSlash: the Prefix path was declared with the trailing slash
	// its key drops ("/p/"), and its backend has session affinity. The
	// session cookie is then for "/p/", the path as declared, which
	// ingress-nginx writes (SPEC §9).
	CookieSlash bool

	// Path is the key the route is matched on: the path as declared for
	// Exact; the prefix with trailing slashes stripped for Prefix ("" for
	// "/"); the pattern without a leading "^" for Regex.
	Path    string
	Backend *Backend
	Source  Source
	// Order is the declaration's rank in Ingress order, then rule index,
	// then path index (SPEC §7): the last tie-breaker of controller order.
	// An int32, so that PortName shares its word.
	Order int32
	// PortName is how the path wrote its Service port: 0 by number, n by
	// Backend.PortNames[n-1] (Backend.WrittenPort).
	PortName uint8
	// NginxLocation, on a Regex route that a host in ingress-nginx's regex
	// mode made of a Prefix or Exact path, is the type of the location
	// ingress-nginx writes for it, whose path is Path; 0 otherwise
	// (nginxlocation.go).
	NginxLocation NginxLocationType
	// OrderPath, for a Regex route, is the path that places it in
	// controller order when that is not Path: the path as declared, for a
	// route a host in ingress-nginx's regex mode made of a declared path
	// (a Prefix path's "p/" and "p", a pattern's leading "^"), as
	// ingress-nginx sorts the declared paths before it adds the "p"
	// twin. "" means Path.
	OrderPath string

	// Regexp is the compiled pattern; set only for Regex routes.
	Regexp *Regexp
	// Redirect, when set, is answered instead of proxying (permanent-redirect,
	// temporal-redirect); Backend is still resolved and listed.
	Redirect *Redirect
	// Location is the route's settings besides its backend (rewrite,
	// request policy, CORS, authentication, backend TLS, response,
	// snippets), read as the route's own fields (r.Policy); a host's
	// fallback holds the same value (VirtualHost.FallbackLocation).
	Location
	// When is what a request must carry besides its path (method, header
	// and query parameter matches, conditions.go); nil for nothing.
	When *Conditions
	// Split shares the route's requests among weighted backends, some of
	// which may be invalid (split.go); nil when Backend takes them all.
	Split *Split
}

// LocationPath is the route's path as its declaration wrote it, which
// ingress-nginx sets as the location's $location_path (nginx.tmpl, from
// getIngressInformation): a regex-mode host's declared path rather than
// the pattern made of it, and "/" for the root Prefix and for a host's
// fallback (rt nil). A Prefix path declared with a trailing slash reads
// without it: the key dropped it.
func LocationPath(rt *Route) string {
	switch {
	case rt == nil || rt.Type == Prefix && rt.Path == "":
		return "/"
	case rt.Type == Regex:
		return rt.orderPath()
	}
	return rt.Path
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
	// FallbackPortName is how FallbackSource wrote the fallback's Service
	// port (Route.PortName).
	FallbackPortName uint8
	// Creator is the Ingress that created the host (Namespace and Name):
	// ingress-nginx's default location of the host is that Ingress's,
	// whichever backend serves it, and requests there are logged and
	// counted under it. Zero for the catch-all and hosts no Ingress names.
	Creator Source
	// TLS reports that some claimed Ingress lists this host under spec.tls
	// (used for the plain-HTTP redirect, SPEC §12), whether or not its
	// Secret is usable.
	TLS bool
	// DeepWildcard makes a "*." host match names any number of labels
	// below it, as a Gateway API hostname does (wildcard.go); otherwise it
	// matches one label, as an Ingress host does under ingress-nginx.
	DeepWildcard bool
	// SSLRedirect and ForceSSLRedirect are the redirect settings for
	// requests no route matches (see Route.SSLRedirect): those of the
	// Ingress that created the host, for the catch-all those of the Ingress
	// whose spec.defaultBackend is its fallback, else the options.
	SSLRedirect      bool
	ForceSSLRedirect bool
	// PreserveTrailingSlash is the matching preserve-trailing-slash
	// setting (see Route.PreserveTrailingSlash).
	PreserveTrailingSlash bool
	// UsePortInRedirects is the matching use-port-in-redirects setting
	// (see Route.UsePortInRedirects).
	UsePortInRedirects bool
	// Actions are the host-wide redirects and aliases (app-root,
	// server-alias, from-to-www-redirect); nil when there are none.
	Actions *HostActions
	// FallbackLocation is the settings of requests no route matches: those
	// of the Ingress the redirect settings come from, as ingress-nginx
	// applies an Ingress's annotations to the default location of the host
	// it creates, so no request reaches a Service without the checks the
	// Ingress that named it asks for (SPEC §6); the options' where no
	// Ingress supplies them.
	FallbackLocation Location
	// ClientTLS is the client certificate authentication (auth-tls-*) and
	// Passthrough the backend its TLS connections are spliced to
	// (ssl-passthrough); nil for none (tlsends.go).
	ClientTLS   *ClientTLS
	Passthrough *Backend
	// ServerTLS is the host's own TLS settings (the ssl-ciphers
	// annotation); nil for the listener's (servertls.go).
	ServerTLS *ServerTLS
	// SnippetLocations are the server-snippet's location blocks
	// (snippet.go).
	SnippetLocations []*SnippetLocation
	// Listener, when not zero, is the one Gateway listener port and
	// protocol whose requests this host serves (listener.go); a host
	// without one serves every request no such host of its name takes.
	Listener Listener

	// regex holds the Regex routes in controller order, built by New,
	// and regexIdx their index (nil below regexIndexMin); the Exact and
	// Prefix index lives in the Table (see index.go).
	regex    []*Route
	regexIdx *regexIndex
}

// Certificate is a parsed TLS key pair and the host names it is served for.
type Certificate struct {
	// Secret is "namespace/name" of the kubernetes.io/tls Secret.
	Secret string
	// Hosts are the names (exact or "*.<rest>") this certificate is chosen
	// for, or AnyName: every name no other certificate is chosen for.
	Hosts []string
	// Fingerprint is the hex SHA-256 of the leaf certificate's DER bytes.
	Fingerprint string
	Cert        *tls.Certificate
}

// Table is an immutable compiled routing table: build it with New. Every
// method is safe for concurrent use.
type Table struct {
	hosts    []*VirtualHost // sorted by name; the catch-all ("") first
	backends []*Backend     // sorted by ID
	certs    []*Certificate // sorted by Secret
	tlsHosts []string       // sorted, unique
	digest   string

	// The lookup index, built once by New (see index.go): the hosts
	// without a Listener, and each Listener's view (listener.go).
	hostSet
	views         map[Listener]*view
	listenerHosts []ListenerHost // sorted, unique, of the views only
	paths         pathTable      // Exact and Prefix keys of every host
	exactCerts    map[string]*Certificate
	wildcardCerts map[string]*Certificate // keyed by the suffix after "*."
	anyCert       *Certificate            // the first with AnyName among its Hosts
	regexps       []*Regexp               // each distinct compiled pattern once
	tlsExact      map[string]bool
	tlsWildcard   map[string]bool // keyed by the suffix after "*."
	passthrough   map[string]*Backend
	// The Gateway TLS passthrough listeners by port, their routes and
	// listeners (tlsroute.go).
	tlsPorts             map[Listener]*tlsPort
	passthroughRoutes    []*PassthroughRoute
	passthroughListeners []ListenerHost
	terminatingListeners []ListenerHost
	// l4 are the TCP and UDP services by protocol and port, stream their
	// settings (stream.go).
	l4     []*L4Service
	stream StreamSettings

	// hostSums and backendSums are the digest's sums of each host and
	// backend, in the order of hosts and backends (digest.go).
	hostSums, backendSums []sum
	// nextID is the path table's number for a host Update adds: hosts
	// keep theirs from table to table (update.go).
	nextID uint32
	// aliases: some host has aliases (indexAliases).
	aliases bool
	// spec is what New was given besides hosts and backends, for Update.
	spec Spec
}

// Digest is the hex SHA-256 of everything that affects a response
// (SPEC §15): equal digests answer every request alike.
func (t *Table) Digest() string { return t.digest }

// VirtualHosts yields the hosts sorted by name, the catch-all ("") first.
func (t *Table) VirtualHosts() iter.Seq[*VirtualHost] { return seq(t.hosts) }

// Backends yields the backends sorted by ID.
func (t *Table) Backends() iter.Seq[*Backend] { return seq(t.backends) }

// Certificates yields the certificates sorted by Secret.
func (t *Table) Certificates() iter.Seq[*Certificate] { return seq(t.certs) }

// TLSHosts yields, sorted, the hosts listed under some claimed Ingress's
// spec.tls: the hosts a plain-HTTP request is redirected from (SPEC §12).
func (t *Table) TLSHosts() iter.Seq[string] { return seq(t.tlsHosts) }

// Size counts what a table holds, for logs and metrics.
type Size struct {
	VirtualHosts, Routes, Backends, Certificates int
}

// Size returns the table's counts.
func (t *Table) Size() Size {
	s := Size{VirtualHosts: len(t.hosts), Backends: len(t.backends), Certificates: len(t.certs)}
	for _, vh := range t.hosts {
		s.Routes += len(vh.Routes)
	}
	return s
}

func seq[T any](s []T) iter.Seq[T] {
	return func(yield func(T) bool) {
		for _, v := range s {
			if !yield(v) {
				return
			}
		}
	}
}
