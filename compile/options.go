// Package compile turns a snapshot of Kubernetes objects into an immutable
// routing table plus structured warnings (SPEC §1–§15). Compile is a pure
// function: it reads only its arguments, does no I/O and keeps no state, and
// the same objects in any order give the same table, warnings and digest.
package compile

import (
	"encoding/binary"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"ramjet.dev/ramjet/classify"
	"ramjet.dev/ramjet/match"
)

// Defaults of SPEC §1.
const (
	DefaultIngressClass   = classify.DefaultIngressClass
	DefaultControllerName = classify.DefaultControllerName
)

// Snapshot is every object a table is compiled from. Order does not matter.
type Snapshot struct {
	Ingresses      []*networkingv1.Ingress
	IngressClasses []*networkingv1.IngressClass
	Services       []*corev1.Service
	EndpointSlices []*discoveryv1.EndpointSlice
	Secrets        []*corev1.Secret
	ConfigMaps     []*corev1.ConfigMap
	// HTTPRoutes are routes from a route source other than Ingresses,
	// already attached to their hosts (SPEC §20): the Gateway API's
	// HTTPRoutes as compile/gatewayapi translates them.
	HTTPRoutes []*HTTPRoute
	// Warnings are what a route source's translation refused (those of
	// compile/gatewayapi). Compile reports them in Result.Warnings,
	// sorted and deduplicated with its own, so a caller shows one list.
	Warnings []Warning
	// ListenerCertificates are certificates for the TLS listener from a
	// route source other than Ingresses: Gateway HTTPS listeners' (§20).
	ListenerCertificates []*ListenerCertificate
	// Listeners are the Gateway listeners routes are attached to
	// (HTTPRoute.Listener), with their hostnames: each listener's view
	// of the table claims its hostnames and tells misdirected requests
	// (match.Table.Misdirected, SPEC §20).
	Listeners []match.ListenerHost
	// TLSRoutes are TLS passthrough routes by server name (SPEC §20): the
	// Gateway API's TLSRoutes as compile/gatewayapi translates them, on
	// the listeners PassthroughListeners names (with or without routes).
	TLSRoutes            []*TLSRoute
	PassthroughListeners []match.ListenerHost
}

// ServiceRef names a Service port: "namespace/name:port", the port a
// number or a port name.
type ServiceRef struct {
	Namespace string
	Name      string
	Port      string // as written: "8080" or "http"
}

func (r ServiceRef) String() string { return r.Namespace + "/" + r.Name + ":" + r.Port }

// PortNumber returns the port as a number, or 0 when it is a port name.
func (r ServiceRef) PortNumber() int32 {
	n, ok := decimal(r.Port)
	if !ok || n > 65535 {
		return 0
	}
	return int32(n)
}

// ParseServiceRef parses "namespace/name:port" strictly.
func ParseServiceRef(s string) (ServiceRef, error) {
	ns, rest, ok := strings.Cut(s, "/")
	if !ok {
		return ServiceRef{}, fmt.Errorf("service reference %q: want namespace/name:port", s)
	}
	name, port, ok := strings.Cut(rest, ":")
	if !ok {
		return ServiceRef{}, fmt.Errorf("service reference %q: missing :port (want namespace/name:port)", s)
	}
	if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
		return ServiceRef{}, fmt.Errorf("service reference %q: namespace %q: %s", s, ns, strings.Join(errs, "; "))
	}
	if errs := validation.IsDNS1035Label(name); len(errs) > 0 {
		return ServiceRef{}, fmt.Errorf("service reference %q: name %q: %s", s, name, strings.Join(errs, "; "))
	}
	if n, ok := decimal(port); ok {
		if n < 1 || n > 65535 {
			return ServiceRef{}, fmt.Errorf("service reference %q: port %d out of range 1-65535", s, n)
		}
	} else if errs := validation.IsValidPortName(port); len(errs) > 0 {
		return ServiceRef{}, fmt.Errorf("service reference %q: port %q: %s", s, port, strings.Join(errs, "; "))
	}
	return ServiceRef{Namespace: ns, Name: name, Port: port}, nil
}

// Options are the routing options of SPEC §1. The zero value is usable:
// empty names take the defaults. Build them from flags or files with
// Validate (or ParseServiceRef for the default backend) so that a malformed
// value is an error before any table exists.
type Options struct {
	// IngressClass is answered for the kubernetes.io/ingress.class
	// annotation; "" means DefaultIngressClass.
	IngressClass string
	// ControllerName is matched against IngressClass.spec.controller; ""
	// means DefaultControllerName.
	ControllerName string
	// DefaultBackend is the global default backend, or nil for none.
	DefaultBackend *ServiceRef
	// WatchIngressWithoutClass also claims Ingresses that name no class.
	WatchIngressWithoutClass bool
	// DisableSSLRedirect turns off the plain-HTTP → HTTPS redirect for TLS
	// hosts (--ssl-redirect=false). The per-Ingress annotations still apply.
	DisableSSLRedirect bool
	// RelativeRedirects is the ConfigMap key relative-redirects, nginx's
	// http-level absolute_redirect off: every location's redirects to a
	// path starting with "/" stay relative, whatever its relative-redirects
	// annotation says (a location writes absolute_redirect off only for
	// "true", and inherits the http level otherwise).
	RelativeRedirects bool
	// ProxySSLLocationOnly is the ConfigMap key proxy-ssl-location-only:
	// a host's first Ingress with a proxy-ssl-secret CA sets backend TLS
	// for its own paths only, not at the server level for the host's
	// fallback and the other Ingresses' paths.
	ProxySSLLocationOnly bool
	// AllowLoopbackEndpoints keeps loopback endpoint addresses (127.0.0.0/8,
	// ::1), which are otherwise dropped with EndpointRejected (SPEC §8):
	// for offline demos and tests whose backends listen on this machine.
	// Every other address that can never be a pod is dropped regardless.
	AllowLoopbackEndpoints bool
	// ExtensionPrefixes are the annotation prefixes an embedder reads
	// itself, each a DNS subdomain ("example.com" or "example.com/"):
	// annotations under them are carried into the table on the locations
	// of their Ingress, its routes and the fallbacks it supplies
	// (match.Location.Extensions), for a router.Hook, and never
	// warned about. ramjet.dev/ and nginx.ingress.kubernetes.io/ are
	// reserved.
	ExtensionPrefixes []string
	// GlobalAuth is the global-auth-* ConfigMap keys (authoptions.go): nil
	// or without a URL, no global authentication.
	GlobalAuth *GlobalAuth
	// EnableSSLPassthrough serves the ssl-passthrough annotation
	// (ingress-nginx's --enable-ssl-passthrough); off, it warns and the
	// host's TLS is terminated as any other's.
	EnableSSLPassthrough bool
	// CustomHTTPErrors are the backend statuses every location without
	// its own custom-http-errors replaces with the global default
	// backend's answer (the ConfigMap key custom-http-errors; see
	// ParseHTTPErrors); each from 300 to 599.
	CustomHTTPErrors []int
	// AllowSnippetAnnotations and AnnotationsRiskLevel are ingress-nginx's
	// allow-snippet-annotations (default false) and annotations-risk-level
	// ("" is its default, High): snippet annotations are translated only
	// when the first is true and the second Critical, as ingress-nginx
	// v1.15 applies them only then (doc §11.9).
	AllowSnippetAnnotations bool
	AnnotationsRiskLevel    string
	// AllowCrossNamespaceResources is ingress-nginx's
	// allow-cross-namespace-resources (default false): auth-secret,
	// auth-proxy-set-headers, auth-tls-secret and proxy-ssl-secret may
	// name a Secret or ConfigMap of another namespace, as its parsers
	// allow only then; otherwise such a location is denied.
	AllowCrossNamespaceResources bool
	// ConfigMap is the ingress-nginx ConfigMap (ParseConfigMap), nil for
	// none: its location keys are the defaults of every location's
	// annotations, its option keys override the fields above (ssl-redirect
	// over DisableSSLRedirect; name the key in ParseConfigMap's keep to let
	// the field win), and its warnings join the result's.
	ConfigMap *ConfigMap
	// ExtensionKeys are ingress-nginx annotations, named without prefix
	// ("enable-modsecurity"), that ramjet does not implement and the
	// embedder serves itself through a router.Hook: set on an Ingress,
	// under either prefix (ramjet.dev/ winning), they are carried into the
	// table on its routes under the name alone, and never warned about.
	ExtensionKeys []string
	// TCPServices and UDPServices are ingress-nginx's
	// --tcp-services-configmap and --udp-services-configmap: "namespace/name"
	// of a ConfigMap among the snapshot's whose entries are the table's TCP
	// and UDP services (SPEC §22, stream.go); "" for none.
	TCPServices, UDPServices string
	// ReservedPorts are the ports the embedder listens on itself (HTTP,
	// HTTPS, metrics): an entry naming one is refused, as ingress-nginx
	// refuses its own ports.
	ReservedPorts []int
	// StreamSettings are the proxy-stream-* keys of the ConfigMap (nil:
	// ingress-nginx's defaults, match.DefaultStreamSettings).
	StreamSettings *match.StreamSettings
	// Tracing is the ConfigMap's OpenTelemetry keys (tracing.go): the
	// default of every location's tracing.
	Tracing TracingOptions
}

// Validate reports the first malformed option, naming it.
func (o Options) Validate() error {
	if o.IngressClass != "" {
		if errs := validation.IsDNS1123Subdomain(o.IngressClass); len(errs) > 0 {
			return fmt.Errorf("option ingress-class %q: %s", o.IngressClass, strings.Join(errs, "; "))
		}
	}
	if o.ControllerName != "" {
		if errs := validation.IsDomainPrefixedPath(field.NewPath("controllerName"), o.ControllerName); len(errs) > 0 {
			return fmt.Errorf("option controller-name %q: %s", o.ControllerName, errs.ToAggregate())
		}
	}
	if o.DefaultBackend != nil {
		if _, err := ParseServiceRef(o.DefaultBackend.String()); err != nil {
			return fmt.Errorf("option default-backend: %w", err)
		}
	}
	if _, err := o.GlobalAuth.external(); err != nil {
		return fmt.Errorf("option %w", err)
	}
	for _, c := range o.CustomHTTPErrors {
		if c < 300 || c > 599 {
			return fmt.Errorf("option custom-http-errors: %d is not a status code from 300 to 599", c)
		}
	}
	switch strings.ToLower(o.AnnotationsRiskLevel) {
	case "", "critical", "high", "medium", "low":
	default:
		return fmt.Errorf("option annotations-risk-level %q: not Critical, High, Medium or Low", o.AnnotationsRiskLevel)
	}
	for _, ref := range []struct{ flag, v string }{{"tcp-services-configmap", o.TCPServices}, {"udp-services-configmap", o.UDPServices}} {
		if ref.v == "" {
			continue
		}
		ns, name, ok := strings.Cut(ref.v, "/")
		if !ok || len(validation.IsDNS1123Label(ns)) > 0 || len(validation.IsDNS1123Subdomain(name)) > 0 {
			return fmt.Errorf("option %s %q: want namespace/name of a ConfigMap", ref.flag, ref.v)
		}
	}
	if err := o.validateExtensionPrefixes(); err != nil {
		return err
	}
	if _, err := match.ParseSpanName(o.Tracing.OperationName); err != nil {
		return fmt.Errorf("option opentelemetry-operation-name %q: %w", o.Tracing.OperationName, err)
	}
	return o.validateExtensionKeys()
}

// claimOptions are the options classify claims with, defaults filled in.
func (o Options) claimOptions() classify.Options {
	return classify.Options{
		IngressClass:      o.IngressClass,
		ControllerName:    o.ControllerName,
		WatchWithoutClass: o.WatchIngressWithoutClass,
	}.WithDefaults()
}

// digestInputs encodes the options for the table's digest (SPEC §15): each
// string length-prefixed, each flag one byte, as match encodes the table.
func (o Options) digestInputs() []byte {
	str := func(b []byte, s string) []byte {
		return append(binary.BigEndian.AppendUint64(b, uint64(len(s))), s...)
	}
	flag := func(b []byte, v bool) []byte {
		if v {
			return append(b, 1)
		}
		return append(b, 0)
	}
	claim := o.claimOptions()
	b := str(nil, claim.IngressClass)
	b = str(b, claim.ControllerName)
	b = flag(b, o.DefaultBackend != nil)
	if o.DefaultBackend != nil {
		b = str(b, o.DefaultBackend.String())
	}
	b = flag(b, o.WatchIngressWithoutClass)
	return flag(b, o.DisableSSLRedirect)
}
