// Package routertest checks routing decisions end to end with case files
// (SPEC §18): each case names some Kubernetes objects and options, compiles
// them, publishes the table to a real router.Router and drives requests
// through its http.Handler. A recording transport stands in for the
// backends, so a case checks the whole path a request takes: which backend
// and endpoint were chosen, what the backend received, and what the client
// got back.
//
// A case file is YAML: one case, or a list of cases.
//
//	name: shop routes by path
//	scenario: free text       # also notes, source
//	options:                  # defaultBackend, ingressClass, controllerName,
//	  sslRedirect: false      # watchIngressWithoutClass, sslRedirect,
//	                          # allowLoopbackEndpoints, trustForwardedProto
//	                          # (also spelled useForwardedHeaders),
//	                          # computeFullForwardedFor,
//	                          # proxyBodySize: 8m, proxyRealIPCIDR: [10.0.0.0/8],
//	                          # defaultSSLCertificate (ns/name of a Secret among the objects),
//	                          # hsts, hstsMaxAge, hstsIncludeSubdomains, hstsPreload,
//	                          # globalAuth: {url: ..., signin: ...} (the global-auth-* keys)
//	                          # customHTTPErrors: "404,503"
//	                          # allowSnippetAnnotations, annotationsRiskLevel: Critical
//	                          # configMap: ns/name of an ingress-nginx ConfigMap among the
//	                          # objects, or its data inline ({proxy-body-size: 8m})
//	objects:                  # required ([] for none): ordinary manifests, as a YAML list
//	- apiVersion: networking.k8s.io/v1
//	  kind: Ingress
//	  ...
//	- include: ../manifests/shop.yaml   # a file or folder, relative to the case file
//	warnings:                 # optional: exactly these, in order ([] for none)
//	- {reason: RouteConflict, object: Ingress prod/b, field: "spec.rules[0].http.paths[0]"}
//	requests:
//	- host: shop.example.com  # "" for a request without Host
//	  path: /api?x=1          # the raw request-target
//	  method: GET             # default GET
//	  scheme: https           # http (default) or https: TLS with SNI = host
//	  headers: {X-A: b}
//	  body: "a=1"             # or bodySize: 1048577 (that many bytes)
//	  clientAddress: 203.0.113.7:5555   # the peer the router sees; default 192.0.2.1:1234
//	  repeat: 10              # default 1
//	  session: true           # send and keep the case's cookies, as a browser
//	  clientCertificate: |    # https: the chain the client presents (PEM, its own first)
//	    -----BEGIN CERTIFICATE-----
//	  scenario: free text     # also notes, source
//	  expect:
//	    status: 200
//	    service: prod/api:80  # the backend that received it; null: not forwarded; absent: not checked
//	    route: prod/shop spec.rules[0].http.paths[0]   # null: nothing matched
//	    forwardedPath: /api?x=1
//	    forwardedHost: shop.example.com
//	    requestHeaders: {X-Real-Ip: 203.0.113.7, X-Debug: null}   # null means absent
//	    responseHeaders: {Location: ...}   # "" means absent
//	    certificateHost: shop.example.com
//	    distinctEndpoints: 3  # over the repeats
//	    services: {prod/api:80: 9, prod/api-canary:80: 1}   # requests per backend over the repeats
//
// Unknown keys are errors. Every check is made on every repeat, except
// distinctEndpoints and services (over all repeats) and certificateHost
// (once). services checks how a weighted split (a canary's weight) shared
// the repeats out: each listed backend must have been chosen exactly that
// many times, as the deterministic rotation makes it exact; backends not
// listed must not have been chosen at all. A request with session sends,
// after any Cookie header of its own, the cookies that the answers to the
// case's earlier session requests (and repeats) set, name=value, a later
// one replacing an earlier one of the same name; the cookies its answers
// set are kept in turn. That is a browser's session, to check session
// affinity across requests.
//
// A request is built exactly as net/http's server would hand it to a
// handler (request line and headers parsed by http.ReadRequest), so odd
// request-targets reach the router unchanged; a request-target the server
// itself would refuse answers 400 without reaching the router. A request
// with no host is sent as HTTP/1.0, the only way a client can omit Host.
//
// # Golden files
//
// RunFiles compares each case file's compiled tables and warnings with its
// golden file; CheckFile does the same for other tools (examples/check), so
// both reach the same verdict.
// To rewrite the goldens instead, run
//
//	go test ./... -run TestCases -update
//
// In a test binary this package registers the boolean flag -update itself,
// unless a flag of that name is already registered (then that flag is read,
// when it is a boolean). A package that registers "update" after this one
// is initialised panics as a flag redefinition, so a test importing
// routertest must not declare its own. Where -update cannot be passed (go
// test over packages that do not import routertest, or another package
// owns the flag), set the environment variable instead:
//
//	RAMJET_UPDATE_GOLDEN=1 go test ./...
package routertest

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"ramjet.dev/ramjet/compile"
	"ramjet.dev/ramjet/compile/manifest"
	"ramjet.dev/ramjet/match"
	"ramjet.dev/ramjet/router"
)

// Case is one routing scenario.
type Case struct {
	// File is the case file the case came from.
	File string
	Name string
	// Scenario, Notes and Source are free text for the reader.
	Scenario, Notes, Source string
	Options                 compile.Options
	// Router holds the router options the case sets (TrustForwardedProto,
	// TrustForwardedFor, ComputeFullForwardedFor, MaxBodySize,
	// ProxyRealIPCIDR, DefaultCertificate); Run supplies the
	// transport, observer and logger.
	Router  router.Options
	Objects compile.Snapshot
	// Skipped lists objects of kinds ramjet does not read.
	Skipped []string
	// CheckWarnings says the case lists the warnings its objects must
	// compile to: exactly Warnings, in order (none when empty).
	CheckWarnings bool
	Warnings      []ExpectedWarning
	Requests      []Request
}

// ExpectedWarning is a compile warning as a case file names it.
type ExpectedWarning struct {
	Reason string `json:"reason"`
	// Object is "Kind namespace/name" ("Ingress prod/shop"), or "Kind
	// name" for an object without a namespace.
	Object string `json:"object"`
	// Field is the field path, "" for a warning about the whole object.
	Field string `json:"field"`
}

// Request is one request of a case, with what it must produce.
type Request struct {
	Host   string `json:"host"`
	Path   string `json:"path"`
	Method string `json:"method"`
	// Headers are sent as written. Host is not a header here: use Host.
	Headers map[string]string `json:"headers,omitempty"`
	// Scheme is "http" or "https".
	Scheme string `json:"scheme"`
	// Port is the local port the request arrives on; 0 is 80, or 443
	// for https. ServerName is the TLS server name (SNI) an https
	// request's connection was made for; "" is the Host's name.
	Port       int    `json:"port,omitempty"`
	ServerName string `json:"serverName,omitempty"`
	// Body is sent as the request body; BodySize sends that many bytes
	// instead. Content-Length is added unless Headers frame the body
	// themselves (Content-Length or Transfer-Encoding), which then goes
	// on the wire as written.
	Body     string `json:"body,omitempty"`
	BodySize int    `json:"bodySize,omitempty"`
	// ClientAddress is the peer address the router sees (RemoteAddr),
	// "ip:port".
	ClientAddress string `json:"clientAddress"`
	// Repeat sends the request this many times (at least 1).
	Repeat int `json:"repeat"`
	// Session sends and keeps the case's cookies (see the package doc).
	Session bool `json:"session,omitempty"`
	// ClientCertificate is the chain the client presented in the TLS
	// handshake (https only), its certificate first; the router verifies
	// it as it would a real handshake's.
	ClientCertificate []*x509.Certificate `json:"-"`
	Expect            Expect              `json:"expect"`
	// Scenario, Notes and Source are free text for the reader.
	Scenario string `json:"scenario,omitempty"`
	Notes    string `json:"notes,omitempty"`
	Source   string `json:"source,omitempty"`

	// Digest, when set, answers a digest challenge first (see digest.go).
	Digest *DigestLogin `json:"digest,omitempty"`
}

// String describes the request on one line, quoting what could hide bytes.
func (r Request) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s host=%q", r.Method, quoteIfOdd(r.Path), r.Host)
	if r.Scheme == "https" {
		b.WriteString(" scheme=https")
	}
	if r.Port != 0 {
		fmt.Fprintf(&b, " port=%d", r.Port)
	}
	if r.ServerName != "" {
		fmt.Fprintf(&b, " sni=%q", r.ServerName)
	}
	if r.ClientAddress != defaultClientAddress {
		fmt.Fprintf(&b, " client=%s", r.ClientAddress)
	}
	switch {
	case r.BodySize > 0:
		fmt.Fprintf(&b, " body=%d bytes", r.BodySize)
	case r.Body != "":
		fmt.Fprintf(&b, " body=%q", r.Body)
	}
	for _, k := range slices.Sorted(maps.Keys(r.Headers)) {
		fmt.Fprintf(&b, " %s=%q", k, r.Headers[k])
	}
	if r.Repeat > 1 {
		fmt.Fprintf(&b, " repeat=%d", r.Repeat)
	}
	if r.Session {
		b.WriteString(" session")
	}
	if len(r.ClientCertificate) > 0 {
		fmt.Fprintf(&b, " client-cert=%q", r.ClientCertificate[0].Subject.String())
	}
	switch d := r.Digest; {
	case d == nil:
	case d.Again:
		b.WriteString(" digest=again")
	default:
		fmt.Fprintf(&b, " digest=%q", d.Username)
	}
	return b.String()
}

// Expect lists the checks of a request; a zero or nil field is not checked.
type Expect struct {
	Status int `json:"status,omitempty"`
	// Service is the backend ID the request was proxied to: the one that
	// received it, not one the router answered for (a redirect, a refusal
	// inside the matched location).
	Service OptionalService `json:"service,omitzero"`
	// ForwardedPath is the request-target the backend received, with query.
	ForwardedPath *string `json:"forwardedPath,omitempty"`
	// ForwardedHost is the Host header the backend received.
	ForwardedHost *string `json:"forwardedHost,omitempty"`
	// ResponseHeaders must each equal the response's first value; "" means
	// the header must be absent.
	ResponseHeaders map[string]string `json:"responseHeaders,omitempty"`
	// CertificateHost is a name the certificate served for the request's
	// SNI must verify for.
	CertificateHost *string `json:"certificateHost,omitempty"`
	// DistinctEndpoints is the number of different endpoints the repeats
	// reached.
	DistinctEndpoints *int `json:"distinctEndpoints,omitempty"`
	// Services counts, per backend ID, the repeats the router chose it for;
	// backends not listed must not be chosen.
	Services map[string]int `json:"services,omitempty"`
	// Route is the declaration the request matched, as the router
	// recorded it.
	Route OptionalRoute `json:"route,omitzero"`
	// RequestHeaders must each equal what the backend received (several
	// values joined with ", "); nil means the header must be absent.
	RequestHeaders map[string]*string `json:"requestHeaders,omitempty"`
	// ErrorPage is what the error backend of an intercepted status
	// (custom-http-errors) received: its ID, and headers as
	// requestHeaders; null means no error page was asked for.
	ErrorPage *ExpectedErrorPage `json:"errorPage,omitempty"`
	// AccessLogged is whether the router's record asks for an access log
	// line (enable-access-log).
	AccessLogged *bool `json:"accessLogged,omitempty"`
	// Span is the name of the server span the request made (SPEC §23);
	// "" means it made none. The case's Tracer (caseTracer) makes span
	// ID b7ad6b7169203331 in the parent's trace, or in trace
	// 0af7651916cd43dd8448eb211c80319c, so the traceparent a backend
	// gets can be written in requestHeaders.
	Span *string `json:"span,omitempty"`
}

// ExpectedErrorPage is expect.errorPage.
type ExpectedErrorPage struct {
	Service        string             `json:"service"`
	RequestHeaders map[string]*string `json:"requestHeaders,omitempty"`
}

func (e Expect) empty() bool { return reflect.ValueOf(e).IsZero() }

// OptionalService is an expected backend ID that distinguishes "not
// checked" (absent in the file) from "not forwarded" (null in the file).
type OptionalService struct {
	Checked bool
	// ID is "namespace/name:port"; "" with Checked means not forwarded.
	ID string

	blank bool // written as "" rather than null: rejected by LoadCases
}

// UnmarshalJSON reads null as "not forwarded" and a string as an ID; LoadCases
// checks the ID's form.
func (s *OptionalService) UnmarshalJSON(data []byte) error {
	if string(data) == "null" {
		*s = OptionalService{Checked: true}
		return nil
	}
	var id string
	if err := json.Unmarshal(data, &id); err != nil {
		return errors.New("want namespace/name:port or null")
	}
	*s = OptionalService{Checked: true, ID: id, blank: id == ""}
	return nil
}

// MarshalJSON writes null for "not forwarded"; an unchecked value is omitted
// by the omitzero tag.
func (s OptionalService) MarshalJSON() ([]byte, error) {
	if s.ID == "" {
		return []byte("null"), nil
	}
	return json.Marshal(s.ID)
}

func (s OptionalService) String() string {
	if s.ID == "" {
		return notForwarded
	}
	return s.ID
}

// OptionalRoute is an expected matched declaration that distinguishes "not
// checked" (absent in the file) from "nothing matched" (null in the file).
type OptionalRoute struct {
	Checked bool
	// Route is "namespace/name field" ("prod/shop
	// spec.rules[0].http.paths[1]", "prod/shop spec.defaultBackend"), or
	// "--default-backend" for the global default backend; "" with Checked
	// means nothing matched.
	Route string

	blank bool // written as "" rather than null: rejected by LoadCases
}

// UnmarshalJSON reads null as "nothing matched" and a string as a route;
// LoadCases checks its form.
func (o *OptionalRoute) UnmarshalJSON(data []byte) error {
	if string(data) == "null" {
		*o = OptionalRoute{Checked: true}
		return nil
	}
	var s string
	if err := json.Unmarshal(data, &s); err != nil {
		return errors.New(`want "namespace/name field" or null`)
	}
	*o = OptionalRoute{Checked: true, Route: s, blank: s == ""}
	return nil
}

// MarshalJSON writes null for "nothing matched".
func (o OptionalRoute) MarshalJSON() ([]byte, error) {
	if o.Route == "" {
		return []byte("null"), nil
	}
	return json.Marshal(o.Route)
}

func (o OptionalRoute) String() string {
	if o.Route == "" {
		return "none"
	}
	return o.Route
}

// routeText renders a router.Record's matched declaration as case files
// write it.
func routeText(s match.Source) string {
	switch {
	case s.Name == "":
		return s.Field // "--default-backend", or "" for nothing
	case s.Field == "":
		return s.Ingress()
	}
	return s.Ingress() + " " + s.Field
}

// checkRoute checks the form of an expected route.
func checkRoute(s string) error {
	if s == "--default-backend" {
		return nil
	}
	ing, field, ok := strings.Cut(s, " ")
	ns, name, _ := strings.Cut(ing, "/")
	if !ok || ns == "" || name == "" || field == "" || strings.ContainsAny(field, " \t") {
		return fmt.Errorf(`%q: want "namespace/name field" (e.g. "prod/shop spec.rules[0].http.paths[1]"), "--default-backend" or null`, s)
	}
	return nil
}

// The file format. Pointers tell absent from zero.
type fileCase struct {
	Name     *string            `json:"name"`
	Scenario string             `json:"scenario"`
	Notes    string             `json:"notes"`
	Source   string             `json:"source"`
	Options  fileOptions        `json:"options"`
	Objects  json.RawMessage    `json:"objects"`
	Warnings *[]ExpectedWarning `json:"warnings"`
	Requests []fileRequest      `json:"requests"`
}

type fileOptions struct {
	DefaultBackend           *string `json:"defaultBackend"`
	IngressClass             *string `json:"ingressClass"`
	ControllerName           *string `json:"controllerName"`
	WatchIngressWithoutClass *bool   `json:"watchIngressWithoutClass"`
	SSLRedirect              *bool   `json:"sslRedirect"`
	AllowLoopbackEndpoints   *bool   `json:"allowLoopbackEndpoints"`
	EnableSSLPassthrough     *bool   `json:"enableSSLPassthrough"`
	TrustForwardedProto      *bool   `json:"trustForwardedProto"`
	DefaultSSLCertificate    *string `json:"defaultSSLCertificate"`
	// The router's client-facing options (SPEC §1): proxyBodySize in
	// nginx's size syntax ("8m", "0" for none); useForwardedHeaders, the
	// controller flag's name for trustForwardedProto, which as the flag
	// also believes X-Forwarded-For from proxyRealIPCIDR, the trusted
	// proxies (ranges or addresses); computeFullForwardedFor, the flag.
	ProxyBodySize           *string  `json:"proxyBodySize"`
	UseForwardedHeaders     *bool    `json:"useForwardedHeaders"`
	ProxyRealIPCIDR         []string `json:"proxyRealIPCIDR"`
	ComputeFullForwardedFor *bool    `json:"computeFullForwardedFor"`
	// hsts, hstsMaxAge, hstsIncludeSubdomains, hstsPreload: ingress-nginx's
	// hsts-* settings, with its defaults (true, 31536000, true, false).
	HSTS                  *bool  `json:"hsts"`
	HSTSMaxAge            *int64 `json:"hstsMaxAge"`
	HSTSIncludeSubdomains *bool  `json:"hstsIncludeSubdomains"`
	HSTSPreload           *bool  `json:"hstsPreload"`
	// globalAuth: the global-auth-* ConfigMap keys, by their names without
	// the prefix in camel case (url, method, signin, signinRedirectParam,
	// responseHeaders, requestRedirect, cacheKey, cacheDuration,
	// alwaysSetCookie).
	GlobalAuth *compile.GlobalAuth `json:"globalAuth"`
	// customHTTPErrors is the ConfigMap key's list ("404,503").
	CustomHTTPErrors *string `json:"customHTTPErrors"`
	// allowSnippetAnnotations and annotationsRiskLevel: ingress-nginx's
	// allow-snippet-annotations and annotations-risk-level, with its
	// defaults (false, High); snippets need true and Critical.
	AllowSnippetAnnotations *bool   `json:"allowSnippetAnnotations"`
	AnnotationsRiskLevel    *string `json:"annotationsRiskLevel"`
	// configMap is the ingress-nginx ConfigMap (SPEC §1): "namespace/name"
	// of a ConfigMap among the objects, or its data inline (a map). Options
	// above that name the same setting win over its keys, as flags do.
	ConfigMap json.RawMessage `json:"configMap"`
	// tcpServices and udpServices are --tcp-services-configmap and
	// --udp-services-configmap: "namespace/name" of a ConfigMap among the
	// objects (SPEC §22).
	TCPServices *string `json:"tcpServices"`
	UDPServices *string `json:"udpServices"`
}

type fileRequest struct {
	Host          *string           `json:"host"`
	Path          *string           `json:"path"`
	Method        string            `json:"method"`
	Headers       map[string]string `json:"headers"`
	Body          *string           `json:"body"`
	BodySize      *int              `json:"bodySize"`
	ClientAddress *string           `json:"clientAddress"`
	Scheme        string            `json:"scheme"`
	Port          int               `json:"port"`
	ServerName    string            `json:"serverName"`
	Repeat        *int              `json:"repeat"`
	Session       bool              `json:"session"`
	Digest        *DigestLogin      `json:"digest"`
	// ClientCertificate is PEM: the client's certificate, then any
	// intermediates.
	ClientCertificate *string `json:"clientCertificate"`
	Expect            *Expect `json:"expect"`
	Scenario          string  `json:"scenario"`
	Notes             string  `json:"notes"`
	Source            string  `json:"source"`
}

// maxRepeat bounds one request's repeats so a typo cannot hang a test run.
const maxRepeat = 100000

// maxBodySize bounds bodySize for the same reason.
const maxBodySize = 1 << 30

// defaultClientAddress is the peer a request comes from unless it says:
// a documentation address (RFC 5737).
const defaultClientAddress = "192.0.2.1:1234"

// LoadCases reads case files. Each path is a file, a glob, or a directory
// (walked recursively for *.yaml and *.yml, skipping hidden entries). It
// returns the cases in file order, or an error naming every bad file, case
// and key.
func LoadCases(paths ...string) ([]Case, error) {
	files, err := CaseFiles(paths...)
	if err != nil {
		return nil, err
	}
	var cases []Case
	var errs []error
	for _, f := range files {
		cs, err := LoadFile(f)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		cases = append(cases, cs...)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return cases, nil
}

// CaseFiles expands paths (files, globs or directories) into case files,
// in order, each once: a directory is walked as manifest.Files walks one,
// keeping *.yaml and *.yml files, and a golden file (x.golden) stands for
// its case file.
func CaseFiles(paths ...string) ([]string, error) {
	if len(paths) == 0 {
		return nil, errors.New("routertest: no case files given")
	}
	var files []string
	var errs []error
	for _, p := range paths {
		info, err := os.Stat(p)
		switch {
		case err != nil && strings.ContainsAny(p, "*?["):
			matches, gerr := filepath.Glob(p)
			if gerr != nil {
				errs = append(errs, fmt.Errorf("routertest: pattern %q: %w", p, gerr))
			} else if len(matches) == 0 {
				errs = append(errs, fmt.Errorf("routertest: no case files match %q", p))
			}
			files = append(files, matches...)
		case err != nil:
			errs = append(errs, fmt.Errorf("routertest: %w", err))
		case !info.IsDir():
			files = append(files, p)
		default:
			found, err := manifest.Files(p)
			found = slices.DeleteFunc(found, func(f string) bool {
				return !strings.HasSuffix(f, ".yaml") && !strings.HasSuffix(f, ".yml")
			})
			if err == nil && len(found) == 0 {
				err = fmt.Errorf("routertest: no *.yaml case files under %s", p)
			}
			if err != nil {
				errs = append(errs, err)
			}
			files = append(files, found...)
		}
	}
	// A golden named among them (cases/* in a shell expands to both)
	// stands for its case file; each file is read once.
	var out []string
	seen := make(map[string]bool)
	for _, f := range files {
		if filepath.Ext(f) == ".golden" {
			c, err := goldenCaseFile(f)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			f = c
		}
		if key := filepath.Clean(f); !seen[key] {
			seen[key] = true
			out = append(out, f)
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}

// goldenCaseFile is the case file whose golden is golden: x.yaml, else
// x.yml, beside it.
func goldenCaseFile(golden string) (string, error) {
	base := strings.TrimSuffix(golden, ".golden")
	for _, ext := range []string{".yaml", ".yml"} {
		if info, err := os.Stat(base + ext); err == nil && !info.IsDir() {
			return base + ext, nil
		}
	}
	return "", fmt.Errorf("routertest: %s is a golden file, and no case file %s is beside it", golden, filepath.Base(base)+".yaml")
}

// LoadFile reads the cases of one case file.
func LoadFile(file string) ([]Case, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("routertest: %w", err)
	}
	return parseCases(file, data)
}

func parseCases(file string, data []byte) ([]Case, error) {
	// The strict parse finds duplicate keys, which YAML→JSON conversion
	// would silently resolve; the tree it yields drives the key check.
	var tree any
	if err := utilyaml.UnmarshalStrict(data, &tree); err != nil {
		return nil, fmt.Errorf("%s: %s", file, manifest.YAMLMessage(err, 1))
	}
	js, err := utilyaml.ToJSON(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %s", file, manifest.YAMLMessage(err, 1))
	}
	if line := secondDocument(data); line > 0 {
		// Both parses above read the first document only.
		return nil, fmt.Errorf("%s: line %d: a second YAML document: a case file is one case or one list of cases; list every case in the first document", file, line)
	}
	var trees []any
	var raws []json.RawMessage
	switch t := tree.(type) {
	case []any:
		trees = t
		if err := json.Unmarshal(js, &raws); err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
	case map[string]any:
		trees = []any{t}
		raws = []json.RawMessage{js}
	case nil:
		return nil, fmt.Errorf("%s: no cases", file)
	default:
		return nil, fmt.Errorf("%s: want a case or a list of cases, got %s", file, describe(tree))
	}
	if len(trees) == 0 {
		return nil, fmt.Errorf("%s: no cases", file)
	}
	var cases []Case
	var errs []error
	seen := make(map[string]int)
	for i := range trees {
		label := fmt.Sprintf("case #%d", i+1)
		if m, ok := trees[i].(map[string]any); ok {
			if n, ok := m["name"].(string); ok && n != "" {
				label = fmt.Sprintf("case %q", n)
				if first, dup := seen[n]; dup {
					errs = append(errs, fmt.Errorf("%s: %s: name already used by case #%d", file, label, first+1))
				} else {
					seen[n] = i
				}
			}
		}
		c, problems := parseCase(file, trees[i], raws[i])
		for _, p := range problems {
			errs = append(errs, fmt.Errorf("%s: %s: %w", file, label, p))
		}
		if len(problems) == 0 {
			cases = append(cases, c)
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return cases, nil
}

// secondDocument is the line where a second YAML document that holds
// anything begins (separators, comments and blank documents aside), or 0.
func secondDocument(data []byte) int {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	lines := bytes.SplitAfter(data, []byte("\n"))
	cursor, held := 0, 0 // cursor: the first line not yet read
	for {
		for cursor < len(lines) && isDocumentSeparator(lines[cursor]) {
			cursor++
		}
		start := cursor + 1
		doc, err := r.Read()
		if err != nil {
			// io.EOF, or "--- content", which the reader refuses and
			// YAML reads as a document: left to the parse.
			return 0
		}
		cursor += bytes.Count(doc, []byte("\n"))
		if js, err := utilyaml.ToJSON(doc); err == nil && string(bytes.TrimSpace(js)) == "null" {
			continue
		}
		if held++; held == 2 {
			return start
		}
	}
}

// isDocumentSeparator is utilyaml.YAMLReader's separator rule: "---" alone
// on its line, or before a comment.
func isDocumentSeparator(line []byte) bool {
	rest, ok := bytes.CutPrefix(line, []byte("---"))
	if !ok {
		return false
	}
	rest = bytes.TrimSpace(rest)
	return len(rest) == 0 || rest[0] == '#'
}

// parseCase returns the case, or every problem found in it.
func parseCase(file string, tree any, raw json.RawMessage) (Case, []error) {
	if m, ok := tree.(map[string]any); ok && m["apiVersion"] != nil && m["kind"] != nil {
		// A manifest where a case belongs: one problem, not one per field.
		what := fmt.Sprint(m["kind"])
		if md, ok := m["metadata"].(map[string]any); ok {
			if ns, ok := md["namespace"].(string); ok && ns != "" {
				what += " " + ns + "/" + fmt.Sprint(md["name"])
			} else if name, ok := md["name"].(string); ok {
				what += " " + name
			}
		}
		return Case{}, []error{fmt.Errorf("a Kubernetes manifest (%s), not a case: list it under a case's objects, or read manifests with check -translate, -explain or -report", what)}
	}
	if problems := checkKeys(tree, reflect.TypeFor[fileCase](), ""); len(problems) > 0 {
		return Case{}, problems
	}
	var fc fileCase // checkKeys found no unknown keys
	if err := json.Unmarshal(raw, &fc); err != nil {
		return Case{}, []error{err}
	}
	if fc.Name == nil || strings.TrimSpace(*fc.Name) == "" {
		return Case{}, []error{errors.New("name: required")}
	}
	c := Case{
		File:     file,
		Name:     *fc.Name,
		Scenario: fc.Scenario,
		Notes:    fc.Notes,
		Source:   fc.Source,
	}
	var errs []error
	var err error
	if c.Options, err = fc.Options.compile(); err != nil {
		errs = append(errs, err)
	}
	if err := fc.Options.router(&c.Router); err != nil {
		errs = append(errs, err)
	}
	snap, skipped, err := decodeObjects(file, fc.Objects)
	if fc.Objects == nil {
		// Without it every request answers 404 and may well pass.
		errs = append(errs, errors.New("objects: required ([] for none)"))
	} else if err != nil {
		errs = append(errs, unjoin(err)...)
	} else {
		c.Objects, c.Skipped = *snap, skipped
		if len(fc.Options.ConfigMap) > 0 {
			cm, err := caseConfigMap(fc.Options.ConfigMap, snap.ConfigMaps)
			if err != nil {
				errs = append(errs, fmt.Errorf("options.configMap: %w", err))
			} else {
				c.Options.ConfigMap = compile.ParseConfigMap(cm, fc.Options.setKeys()...)
				c.Options.ConfigMap.ReadHeaders(snap.ConfigMaps)
				c.Router.ApplyConfigMap(c.Options.ConfigMap.Router)
			}
		}
		if ref := fc.Options.DefaultSSLCertificate; ref != nil {
			if c.Router.DefaultCertificate, err = defaultCertificate(*ref, snap.Secrets); err != nil {
				errs = append(errs, fmt.Errorf("options.defaultSSLCertificate: %w", err))
			}
		}
	}
	if fc.Warnings != nil {
		c.CheckWarnings, c.Warnings = true, *fc.Warnings
		for i, w := range c.Warnings {
			if w.Reason == "" || w.Object == "" {
				errs = append(errs, fmt.Errorf("warnings[%d]: reason and object are required", i))
			}
		}
	}
	if len(fc.Requests) == 0 {
		errs = append(errs, errors.New("requests: at least one request is required"))
	}
	for i, fr := range fc.Requests {
		r, err := fr.request()
		if err != nil {
			errs = append(errs, fmt.Errorf("requests[%d].%w", i, err))
			continue
		}
		c.Requests = append(c.Requests, r)
	}
	if len(errs) > 0 {
		return Case{}, errs
	}
	return c, nil
}

func (o fileOptions) compile() (compile.Options, error) {
	var co compile.Options
	if o.DefaultBackend != nil {
		ref, err := compile.ParseServiceRef(*o.DefaultBackend)
		if err != nil {
			return co, fmt.Errorf("options.defaultBackend: %w", err)
		}
		co.DefaultBackend = &ref
	}
	if o.IngressClass != nil {
		if *o.IngressClass == "" {
			return co, errors.New("options.ingressClass: empty (omit it for the default)")
		}
		co.IngressClass = *o.IngressClass
	}
	if o.ControllerName != nil {
		if *o.ControllerName == "" {
			return co, errors.New("options.controllerName: empty (omit it for the default)")
		}
		co.ControllerName = *o.ControllerName
	}
	if o.WatchIngressWithoutClass != nil {
		co.WatchIngressWithoutClass = *o.WatchIngressWithoutClass
	}
	if o.SSLRedirect != nil {
		co.DisableSSLRedirect = !*o.SSLRedirect
	}
	if o.AllowLoopbackEndpoints != nil {
		co.AllowLoopbackEndpoints = *o.AllowLoopbackEndpoints
	}
	co.GlobalAuth = o.GlobalAuth
	if o.EnableSSLPassthrough != nil {
		co.EnableSSLPassthrough = *o.EnableSSLPassthrough
	}
	if o.CustomHTTPErrors != nil {
		codes, err := compile.ParseHTTPErrors(*o.CustomHTTPErrors, false)
		if err != nil {
			return co, fmt.Errorf("options.customHTTPErrors: %w", err)
		}
		co.CustomHTTPErrors = codes
	}
	if o.AllowSnippetAnnotations != nil {
		co.AllowSnippetAnnotations = *o.AllowSnippetAnnotations
	}
	if o.AnnotationsRiskLevel != nil {
		co.AnnotationsRiskLevel = *o.AnnotationsRiskLevel
	}
	if o.TCPServices != nil {
		co.TCPServices = *o.TCPServices
	}
	if o.UDPServices != nil {
		co.UDPServices = *o.UDPServices
	}
	if err := co.Validate(); err != nil {
		return co, fmt.Errorf("options: %w", err)
	}
	return co, nil
}

// caseConfigMap finds the case's ConfigMap: raw is "namespace/name" of one
// among cms, or the data itself, then in ingress-nginx/ingress-nginx-controller.
func caseConfigMap(raw json.RawMessage, cms []*corev1.ConfigMap) (*corev1.ConfigMap, error) {
	var ref string
	if json.Unmarshal(raw, &ref) == nil {
		for _, cm := range cms {
			if cm.Namespace+"/"+cm.Name == ref {
				return cm, nil
			}
		}
		return nil, fmt.Errorf("the ConfigMap %s is not among the objects", ref)
	}
	var data map[string]string
	if err := json.Unmarshal(raw, &data); err != nil {
		return nil, errors.New("want namespace/name or a map of keys to string values")
	}
	cm := &corev1.ConfigMap{Data: data}
	cm.Namespace, cm.Name = "ingress-nginx", "ingress-nginx-controller"
	return cm, nil
}

// setKeys are the ConfigMap keys of the settings the case's options set,
// which win over the ConfigMap as flags do.
func (o fileOptions) setKeys() []string {
	var keys []string
	add := func(set bool, k ...string) {
		if set {
			keys = append(keys, k...)
		}
	}
	add(o.SSLRedirect != nil, "ssl-redirect")
	add(o.TrustForwardedProto != nil || o.UseForwardedHeaders != nil, "use-forwarded-headers")
	add(o.ComputeFullForwardedFor != nil, "compute-full-forwarded-for")
	add(o.ProxyRealIPCIDR != nil, "proxy-real-ip-cidr")
	add(o.ProxyBodySize != nil, "proxy-body-size")
	add(o.HSTS != nil || o.HSTSMaxAge != nil || o.HSTSIncludeSubdomains != nil || o.HSTSPreload != nil,
		"hsts", "hsts-max-age", "hsts-include-subdomains", "hsts-preload")
	return keys
}

// router sets the router options a case names.
func (o fileOptions) router(ro *router.Options) error {
	trust := o.TrustForwardedProto
	if u := o.UseForwardedHeaders; u != nil {
		if trust != nil && *trust != *u {
			return errors.New("options: useForwardedHeaders and trustForwardedProto say different things (they are one setting)")
		}
		trust = u
	}
	ro.TrustForwardedProto = trust != nil && *trust
	ro.TrustForwardedFor = ro.TrustForwardedProto
	ro.ComputeFullForwardedFor = o.ComputeFullForwardedFor != nil && *o.ComputeFullForwardedFor
	ro.DisableHSTS = o.HSTS != nil && !*o.HSTS
	if o.HSTSMaxAge != nil || o.HSTSIncludeSubdomains != nil || o.HSTSPreload != nil {
		age, sub := int64(31536000), true
		if o.HSTSMaxAge != nil {
			if *o.HSTSMaxAge < 0 {
				return fmt.Errorf("options.hstsMaxAge: %d is negative", *o.HSTSMaxAge)
			}
			age = *o.HSTSMaxAge
		}
		if o.HSTSIncludeSubdomains != nil {
			sub = *o.HSTSIncludeSubdomains
		}
		ro.HSTS = router.HSTSHeader(age, sub, o.HSTSPreload != nil && *o.HSTSPreload)
	}
	if o.ProxyBodySize != nil {
		n, err := compile.ParseSize(*o.ProxyBodySize)
		if err != nil {
			return fmt.Errorf("options.proxyBodySize: %q: %w", *o.ProxyBodySize, err)
		}
		ro.MaxBodySize = n
		if n == 0 {
			ro.MaxBodySize = -1 // nginx's 0: no limit
		}
	}
	for i, v := range o.ProxyRealIPCIDR {
		ps, err := compile.ParseSourceRanges(v)
		if err != nil {
			return fmt.Errorf("options.proxyRealIPCIDR[%d]: %w", i, err)
		}
		ro.ProxyRealIPCIDR = append(ro.ProxyRealIPCIDR, ps...)
	}
	return nil
}

// decodeObjects decodes the objects list with the manifest loader, so a
// case reads objects exactly as a folder of manifests would. An item that
// is only {include: path} reads the manifest files at path (a file or a
// folder, relative to the case file). One manifest.Reader reads them all,
// so an object defined twice across them is an error naming both, and a
// registered manifest.Extension sees every piece together (a Gateway
// included from one file, its HTTPRoutes inline).
func decodeObjects(file string, raw json.RawMessage) (*compile.Snapshot, []string, error) {
	var items []json.RawMessage
	if len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &items); err != nil {
			return nil, nil, errors.New("objects: want a list of manifests")
		}
	}
	var stream []byte
	var inline []int // inline[d] is the objects index of stream document d+1
	type include struct {
		index int
		path  string
	}
	var includes []include
	var errs []error
	for i, it := range items {
		if path, ok, err := includePath(it); ok || err != nil {
			if err != nil {
				errs = append(errs, fmt.Errorf("objects[%d].include: %w", i, err))
			}
			includes = append(includes, include{i, path})
			continue
		}
		stream = append(stream, it...)
		stream = append(stream, '\n')
		inline = append(inline, i)
	}
	r := manifest.NewReader()
	if err := r.Decode(file, stream); err != nil {
		// Restate each problem in the case's own terms: objects[i].
		for _, e := range unjoin(err) {
			var me *manifest.Error
			if !errors.As(e, &me) {
				errs = append(errs, e)
				continue
			}
			where := objectsIndex(inline, me.Position)
			if obj := me.Object(); obj != "" {
				where += " (" + obj + ")"
			}
			msg := me.Err.Error()
			if me.Previous != nil {
				msg += ": first at " + objectsIndex(inline, *me.Previous)
			}
			errs = append(errs, fmt.Errorf("%s: %s", where, msg))
		}
	}
	// origin names, per file read, the piece of the case it came from.
	origin := map[string]string{file: "the inline objects"}
	for _, inc := range includes {
		if inc.path == "" {
			continue
		}
		path := inc.path
		if !filepath.IsAbs(path) {
			path = filepath.Join(filepath.Dir(file), path)
		}
		label := fmt.Sprintf("objects[%d] (include %s)", inc.index, inc.path)
		if found, err := manifest.Files(path); err == nil {
			for _, f := range found {
				if _, seen := origin[f]; !seen {
					origin[f] = label
				}
			}
		}
		err := r.Load(path)
		for _, e := range unjoin(err) {
			if e == nil {
				continue
			}
			var me *manifest.Error
			if errors.As(e, &me) && me.Previous != nil && errors.Is(me.Err, manifest.ErrDefinedTwice) && origin[me.Previous.File] != label {
				errs = append(errs, fmt.Errorf("%s (%s): %w: first in %s", label, me.Object(), manifest.ErrDefinedTwice, origin[me.Previous.File]))
				continue
			}
			errs = append(errs, fmt.Errorf("%s: %w", label, e))
		}
	}
	if len(errs) > 0 {
		return nil, nil, errors.Join(errs...)
	}
	snap, skipped := r.Snapshot()
	return snap, skipped, nil
}

// includePath reports whether an objects item is an include, and its path.
func includePath(item json.RawMessage) (string, bool, error) {
	var m map[string]json.RawMessage
	if json.Unmarshal(item, &m) != nil {
		return "", false, nil
	}
	raw, ok := m["include"]
	if !ok {
		return "", false, nil
	}
	if len(m) != 1 {
		return "", true, errors.New("an include item holds only include: path")
	}
	var path string
	if err := json.Unmarshal(raw, &path); err != nil || path == "" {
		return "", true, errors.New("want the path of a manifest file or folder")
	}
	return path, true, nil
}

// defaultCertificate is the key pair of the kubernetes.io/tls Secret ref
// ("namespace/name") among the case's objects, as router.Options takes it.
func defaultCertificate(ref string, secrets []*corev1.Secret) (*tls.Certificate, error) {
	ns, name, ok := strings.Cut(ref, "/")
	if !ok || ns == "" || name == "" {
		return nil, fmt.Errorf("%q: want namespace/name of a kubernetes.io/tls Secret", ref)
	}
	for _, s := range secrets {
		if s.Namespace != ns || s.Name != name {
			continue
		}
		if s.Type != corev1.SecretTypeTLS {
			return nil, fmt.Errorf("the Secret %s is of type %q, not %s", ref, s.Type, corev1.SecretTypeTLS)
		}
		cert, err := tls.X509KeyPair(s.Data[corev1.TLSCertKey], s.Data[corev1.TLSPrivateKeyKey])
		if err != nil {
			return nil, fmt.Errorf("the Secret %s: %w", ref, err)
		}
		return &cert, nil
	}
	return nil, fmt.Errorf("the Secret %s is not among the objects", ref)
}

// parseCertificates reads the CERTIFICATE blocks of PEM text, in order.
func parseCertificates(text string) ([]*x509.Certificate, error) {
	var out []*x509.Certificate
	rest := []byte(text)
	for {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			return nil, fmt.Errorf("a %s block; want CERTIFICATE blocks only", block.Type)
		}
		c, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	if len(out) == 0 || strings.TrimSpace(string(rest)) != "" {
		return nil, errors.New("want PEM CERTIFICATE blocks")
	}
	return out, nil
}

// objectsIndex names a document of the inline objects: objects[i], and the
// item of a List document.
func objectsIndex(inline []int, p manifest.Position) string {
	i := p.Document - 1
	if i >= 0 && i < len(inline) {
		i = inline[i]
	}
	s := fmt.Sprintf("objects[%d]", i)
	if p.Item >= 0 {
		s += fmt.Sprintf(".items[%d]", p.Item)
	}
	return s
}

func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

func (fr fileRequest) request() (Request, error) {
	r := Request{
		Method: fr.Method, Headers: fr.Headers, Scheme: fr.Scheme, Repeat: 1, Session: fr.Session, Digest: fr.Digest, ClientAddress: defaultClientAddress,
		Scenario: fr.Scenario, Notes: fr.Notes, Source: fr.Source,
	}
	if fr.Host == nil {
		return r, errors.New(`host: required ("" for a request without Host)`)
	}
	r.Host = *fr.Host
	if strings.ContainsFunc(r.Host, badHostRune) {
		return r, fmt.Errorf("host: %q holds whitespace or control characters", r.Host)
	}
	if fr.Path == nil || *fr.Path == "" {
		return r, errors.New("path: required (the raw request-target, e.g. /)")
	}
	r.Path = *fr.Path
	if strings.ContainsAny(r.Path, "\r\n") {
		return r, fmt.Errorf("path: %q holds a line break", r.Path)
	}
	if r.Method == "" {
		r.Method = http.MethodGet
	}
	if !isToken(r.Method) {
		return r, fmt.Errorf("method: %q is not an HTTP method token", r.Method)
	}
	if fr.Port < 0 || fr.Port > 65535 {
		return r, fmt.Errorf("port: %d is not a port", fr.Port)
	}
	r.Port, r.ServerName = fr.Port, fr.ServerName
	if r.ServerName != "" && fr.Scheme != "https" {
		return r, errors.New("serverName: only an https request has one")
	}
	switch r.Scheme {
	case "":
		r.Scheme = "http"
	case "http", "https":
	default:
		return r, fmt.Errorf("scheme: %q: want http or https", r.Scheme)
	}
	for _, k := range slices.Sorted(maps.Keys(r.Headers)) {
		v := r.Headers[k]
		switch {
		case !isToken(k):
			return r, fmt.Errorf("headers: %q is not a header name", k)
		case http.CanonicalHeaderKey(k) == "Host":
			return r, errors.New("headers: Host is set with host, not as a header")
		case strings.ContainsAny(v, "\r\n\x00"):
			return r, fmt.Errorf("headers.%s: value holds a line break or NUL", k)
		}
	}
	if err := r.setBody(fr); err != nil {
		return r, err
	}
	if d := r.Digest; d != nil && d.Again && *d != (DigestLogin{Again: true}) {
		return r, errors.New("digest.again: sends the previous digest request's Authorization; no other digest field applies")
	} else if d != nil && !d.Again && d.Username == "" {
		return r, errors.New("digest.username: required")
	}
	if fr.ClientAddress != nil {
		a, err := parseClientAddress(*fr.ClientAddress)
		if err != nil {
			return r, fmt.Errorf("clientAddress: %w", err)
		}
		r.ClientAddress = a
	}
	if fr.ClientCertificate != nil {
		if r.Scheme != "https" {
			return r, errors.New("clientCertificate: only over https")
		}
		certs, err := parseCertificates(*fr.ClientCertificate)
		if err != nil {
			return r, fmt.Errorf("clientCertificate: %w", err)
		}
		r.ClientCertificate = certs
	}
	if fr.Repeat != nil {
		r.Repeat = *fr.Repeat
		if r.Repeat < 1 || r.Repeat > maxRepeat {
			return r, fmt.Errorf("repeat: %d: want 1 to %d", r.Repeat, maxRepeat)
		}
	}
	if fr.Expect == nil || fr.Expect.empty() {
		return r, errors.New("expect: at least one check is required")
	}
	r.Expect = *fr.Expect
	e := &r.Expect
	if e.Status != 0 && (e.Status < 100 || e.Status > 599) {
		return r, fmt.Errorf("expect.status: %d is not an HTTP status", e.Status)
	}
	if e.Service.Checked && e.Service.ID != "" {
		if _, err := compile.ParseServiceRef(e.Service.ID); err != nil {
			return r, fmt.Errorf("expect.service: %w", err)
		}
	} else if e.Service.blank {
		return r, errors.New(`expect.service: "" is not a backend: write null for none`)
	}
	if e.DistinctEndpoints != nil && (*e.DistinctEndpoints < 0 || *e.DistinctEndpoints > r.Repeat) {
		return r, fmt.Errorf("expect.distinctEndpoints: %d: want 0 to repeat (%d)", *e.DistinctEndpoints, r.Repeat)
	}
	for _, id := range slices.Sorted(maps.Keys(e.Services)) {
		if _, err := compile.ParseServiceRef(id); err != nil {
			return r, fmt.Errorf("expect.services: %w", err)
		}
		if n := e.Services[id]; n < 0 || n > r.Repeat {
			return r, fmt.Errorf("expect.services.%s: %d: want 0 to repeat (%d)", id, n, r.Repeat)
		}
	}
	for k := range e.ResponseHeaders {
		if !isToken(k) {
			return r, fmt.Errorf("expect.responseHeaders: %q is not a header name", k)
		}
	}
	for k := range e.RequestHeaders {
		switch {
		case !isToken(k):
			return r, fmt.Errorf("expect.requestHeaders: %q is not a header name", k)
		case http.CanonicalHeaderKey(k) == "Host":
			return r, errors.New("expect.requestHeaders: the Host the backend received is checked with forwardedHost")
		}
	}
	if e.Route.blank {
		return r, errors.New(`expect.route: "" is not a route: write null for none`)
	}
	if e.Route.Route != "" {
		if err := checkRoute(e.Route.Route); err != nil {
			return r, fmt.Errorf("expect.route: %w", err)
		}
	}
	return r, nil
}

// setBody takes body or bodySize, never both.
func (r *Request) setBody(fr fileRequest) error {
	framed := false
	for k := range r.Headers {
		switch http.CanonicalHeaderKey(k) {
		case "Content-Length", "Transfer-Encoding":
			framed = true
		}
	}
	switch {
	case fr.Body != nil && fr.BodySize != nil:
		return errors.New("body, bodySize: give one or the other")
	case fr.BodySize != nil:
		if *fr.BodySize < 0 || *fr.BodySize > maxBodySize {
			return fmt.Errorf("bodySize: %d: want 0 to %d", *fr.BodySize, maxBodySize)
		}
		if framed {
			return errors.New("bodySize: sent with its own Content-Length; drop the Content-Length and Transfer-Encoding headers, or write the body with body")
		}
		r.BodySize = *fr.BodySize
	case fr.Body != nil:
		r.Body = *fr.Body
	}
	return nil
}

// parseClientAddress takes "ip:port", or an IP alone (port 1234).
func parseClientAddress(s string) (string, error) {
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.String(), nil
	}
	if a, err := netip.ParseAddr(s); err == nil {
		return netip.AddrPortFrom(a, 1234).String(), nil
	}
	return "", fmt.Errorf("%q: want an IP address, or ip:port", s)
}

func badHostRune(r rune) bool { return r <= ' ' || r == 0x7f }

// isToken reports an RFC 9110 token (method and header names).
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range []byte(s) {
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return true
}

// checkKeys walks a parsed YAML tree along the Go type it will be decoded
// into and lists every unknown key and wrongly typed value by path, so the
// error says where instead of only what.
func checkKeys(v any, t reflect.Type, path string) []error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if v == nil {
		return nil // null: absent, or "none" for OptionalService
	}
	want := func(what string) []error {
		msg := fmt.Sprintf("want %s, got %s", what, describe(v))
		if path != "" {
			msg = path + ": " + msg
		}
		return []error{errors.New(msg)}
	}
	var out []error
	switch {
	case t == reflect.TypeFor[json.RawMessage]():
		return nil // objects: checked by the manifest loader
	case t == reflect.TypeFor[OptionalService]():
		if _, ok := v.(string); !ok {
			return want("namespace/name:port or null")
		}
		return nil
	case t == reflect.TypeFor[OptionalRoute]():
		if _, ok := v.(string); !ok {
			return want(`"namespace/name field" or null`)
		}
		return nil
	case t.Kind() == reflect.Struct:
		m, ok := v.(map[string]any)
		if !ok {
			return want("a mapping")
		}
		fields := make(map[string]reflect.Type)
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			fields[name] = f.Type
		}
		for _, k := range slices.Sorted(maps.Keys(m)) {
			if ft, ok := fields[k]; ok {
				out = append(out, checkKeys(m[k], ft, join(path, k))...)
			} else {
				out = append(out, fmt.Errorf("unknown key %q", join(path, k)))
			}
		}
	case t.Kind() == reflect.Slice:
		s, ok := v.([]any)
		if !ok {
			return want("a list")
		}
		for i, e := range s {
			out = append(out, checkKeys(e, t.Elem(), fmt.Sprintf("%s[%d]", path, i))...)
		}
	case t.Kind() == reflect.Map:
		m, ok := v.(map[string]any)
		if !ok {
			return want("a mapping")
		}
		for _, k := range slices.Sorted(maps.Keys(m)) {
			out = append(out, checkKeys(m[k], t.Elem(), join(path, k))...)
		}
	case t.Kind() == reflect.String:
		if _, ok := v.(string); !ok {
			return want("a string")
		}
	case t.Kind() == reflect.Bool:
		if _, ok := v.(bool); !ok {
			return want("true or false")
		}
	case t.Kind() == reflect.Int:
		if _, ok := v.(int64); !ok {
			return want("a whole number")
		}
	}
	return out
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func describe(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case string:
		return fmt.Sprintf("string %q", v)
	case bool:
		return fmt.Sprintf("boolean %v", v)
	case int64, float64:
		return fmt.Sprintf("number %v", v)
	case []any:
		return "a list"
	case map[string]any:
		return "a mapping"
	}
	return fmt.Sprintf("%T", v)
}

// quoteIfOdd quotes s when it holds bytes that would not show plainly.
func quoteIfOdd(s string) string {
	for _, c := range []byte(s) {
		if c <= ' ' || c >= 0x7f || c == '"' {
			return fmt.Sprintf("%q", s)
		}
	}
	return s
}
