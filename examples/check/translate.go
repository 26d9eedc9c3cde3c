package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"ramjet.dev/ramjet/compile"
	"ramjet.dev/ramjet/match"
	"ramjet.dev/ramjet/router/routertest"
)

// translateOptions are the compile options -translate, -explain and
// -report take, named as the example controller's flags.
type translateOptions struct {
	ingressClass, controllerName, defaultBackend  string
	watchWithoutClass, sslRedirect, allowLoopback bool
	sslPassthrough                                bool
	// The source cluster's ingress-nginx ConfigMap settings for snippets.
	allowSnippets bool
	riskLevel     string
	// configMap is -configmap: namespace/name of the ingress-nginx
	// ConfigMap among the manifests.
	configMap string
	// tcpServices and udpServices are -tcp-services-configmap and
	// -udp-services-configmap (SPEC §22): namespace/name of ConfigMaps
	// among the manifests; default: the chart's "<release>-tcp" and
	// "<release>-udp" beside the ingress-nginx ConfigMap.
	tcpServices, udpServices string
}

var translateFlagNames = []string{"ingress-class", "controller-name", "default-backend", "watch-ingress-without-class", "ssl-redirect", "allow-loopback-endpoints", "configmap", "allow-snippet-annotations", "annotations-risk-level", "enable-ssl-passthrough", "tcp-services-configmap", "udp-services-configmap"}

func translateFlags(fs *flag.FlagSet) *translateOptions {
	o := &translateOptions{}
	fs.StringVar(&o.ingressClass, "ingress-class", nginxClass, "class answered for the kubernetes.io/ingress.class annotation (ramjet's when the input holds an IngressClass of ramjet's controller)")
	fs.StringVar(&o.controllerName, "controller-name", nginxController, "matched against IngressClass.spec.controller (ramjet's when the input holds an IngressClass of ramjet's controller)")
	fs.StringVar(&o.defaultBackend, "default-backend", "", "global default backend, namespace/name:port")
	fs.BoolVar(&o.watchWithoutClass, "watch-ingress-without-class", false, "also claim Ingresses that name no class")
	fs.BoolVar(&o.sslRedirect, "ssl-redirect", true, "redirect plain HTTP to HTTPS for TLS hosts")
	fs.BoolVar(&o.allowLoopback, "allow-loopback-endpoints", false, "keep loopback endpoint addresses (the demo manifests' echo servers), which are dropped as in a cluster")
	fs.BoolVar(&o.sslPassthrough, "enable-ssl-passthrough", false, "serve the ssl-passthrough annotation, as the controller's flag")
	fs.BoolVar(&o.allowSnippets, "allow-snippet-annotations", false, "ingress-nginx's allow-snippet-annotations: snippets apply only with it and -annotations-risk-level Critical")
	fs.StringVar(&o.riskLevel, "annotations-risk-level", "", "ingress-nginx's annotations-risk-level (Critical, High, Medium, Low; default High)")
	fs.StringVar(&o.tcpServices, "tcp-services-configmap", "", "namespace/name of ingress-nginx's TCP services ConfigMap among the manifests (default: ingress-nginx-tcp, the chart's, if exactly one, else tcp-services, its guide's)")
	fs.StringVar(&o.udpServices, "udp-services-configmap", "", "namespace/name of ingress-nginx's UDP services ConfigMap among the manifests (default: ingress-nginx-udp, the chart's, if exactly one, else udp-services, its guide's)")
	fs.StringVar(&o.configMap, "configmap", "", "namespace/name of the ingress-nginx ConfigMap among the manifests (default: the one named "+chartConfigMap+", if exactly one)")
	return o
}

// set reports whether any -translate option was given.
func (o *translateOptions) set(fs *flag.FlagSet) bool {
	found := false
	fs.Visit(func(f *flag.Flag) {
		found = found || slices.Contains(translateFlagNames, f.Name)
	})
	return found
}

func (o *translateOptions) compile() (compile.Options, error) {
	// As the controller refuses them: the library reads "" as ramjet's
	// default, which ingress-nginx never does.
	if o.ingressClass == "" {
		return compile.Options{}, errors.New(`-ingress-class "": give the class name (ingress-nginx would claim only Ingresses annotated kubernetes.io/ingress.class: ""), or leave the flag out`)
	}
	if o.controllerName == "" {
		return compile.Options{}, errors.New(`-controller-name "": give the controller name (ingress-nginx would own no IngressClass), or leave the flag out`)
	}
	co := compile.Options{
		IngressClass:             o.ingressClass,
		ControllerName:           o.controllerName,
		WatchIngressWithoutClass: o.watchWithoutClass,
		DisableSSLRedirect:       !o.sslRedirect,
		AllowLoopbackEndpoints:   o.allowLoopback,
		EnableSSLPassthrough:     o.sslPassthrough,
		AllowSnippetAnnotations:  o.allowSnippets,
		AnnotationsRiskLevel:     o.riskLevel,
		TCPServices:              o.tcpServices,
		UDPServices:              o.udpServices,
	}
	if o.defaultBackend != "" {
		ref, err := compile.ParseServiceRef(o.defaultBackend)
		if err != nil {
			return co, fmt.Errorf("-default-backend: %w", err)
		}
		co.DefaultBackend = &ref
	}
	if o.configMap != "" {
		// As the controller's -configmap: a bare name would otherwise
		// match nothing and leave ingress-nginx's defaults in force.
		ns, name, ok := strings.Cut(o.configMap, "/")
		if !ok || len(validation.IsDNS1123Label(ns)) > 0 || len(validation.IsDNS1123Subdomain(name)) > 0 {
			return co, fmt.Errorf("-configmap %q: want namespace/name of a ConfigMap", o.configMap)
		}
	}
	return co, co.Validate()
}

// runTranslate compiles manifests and prints the result.
func runTranslate(paths []string, fs *flag.FlagSet, o *translateOptions, asJSON bool, stdout, stderr io.Writer) int {
	if _, err := o.compile(); err != nil {
		fmt.Fprintln(stderr, "check:", err)
		return 2
	}
	snap, skipped, unreadable, err := loadLenient(paths)
	if errs := loadFailure(paths, snap, unreadable, err); errs != nil {
		return failLoad(errs, asJSON, stdout, stderr)
	}
	opts, notes := claimOptions(fs, o, snap)
	res := compile.Compile(*snap, opts)
	// Notes go to stderr so that stdout is exactly the golden format.
	for _, n := range notes {
		fmt.Fprintln(stderr, "note:", n)
	}
	unclaimed := res.Unclaimed.Describe(checkSpelling)
	if unclaimed != "" {
		fmt.Fprintln(stderr, "warning:", unclaimed)
	}
	// What was read is translated; what was not still fails the run.
	code := 0
	if len(unreadable) > 0 {
		code = 2
	}
	if asJSON {
		tr := translation(res, skipped)
		tr.Unclaimed, tr.Errors = unclaimed, unreadable
		return encode(tr, code, stdout, stderr)
	}
	writeUnreadable(stderr, unreadable)
	// Skips go to stderr so that stdout is exactly the golden format.
	for _, s := range skipped {
		fmt.Fprintln(stderr, s)
	}
	if err := res.WriteText(stdout); err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	return code
}

// writeUnreadable lists the documents that could not be read.
func writeUnreadable(w io.Writer, unreadable []string) {
	for _, u := range unreadable {
		fmt.Fprintln(w, "not read:", u)
	}
}

// The stable JSON form of a compiled table. Lists keep the table's own
// order (hosts by name, routes in precedence order, backends by ID), so
// the same manifests always print the same document.
type translated struct {
	Digest       string            `json:"digest"`
	Hosts        []jsonHost        `json:"hosts"`
	Backends     []jsonBackend     `json:"backends"`
	TLSHosts     []string          `json:"tlsHosts"`
	Certificates []jsonCertificate `json:"certificates"`
	// L4Services are the TCP and UDP services (SPEC §22), TCP then UDP,
	// by port.
	L4Services []jsonL4Service      `json:"l4Services,omitempty"`
	Warnings   []routertest.Warning `json:"warnings"`
	// Claimed are the Ingresses compiled, "namespace/name", oldest first.
	Claimed []string `json:"claimed"`
	// Skipped are the objects of kinds ramjet does not read.
	Skipped []string `json:"skipped"`
	// Unclaimed says how many Ingresses read are not claimed and which
	// flag claims them ("" when all are).
	Unclaimed string `json:"unclaimed,omitempty"`
	// Errors are the documents that could not be read, and so are not
	// in the table (the exit code is then 2).
	Errors []string `json:"errors,omitempty"`
}

// jsonL4Service is a TCP or UDP service: the port listened on and the
// Service port ("namespace/name:port" as the entry writes it).
type jsonL4Service struct {
	Protocol            string   `json:"protocol"`
	Port                int32    `json:"port"`
	Service             string   `json:"service"`
	State               string   `json:"state"`
	Endpoints           []string `json:"endpoints"`
	DecodeProxyProtocol bool     `json:"decodeProxyProtocol"`
	EncodeProxyProtocol bool     `json:"encodeProxyProtocol"`
	// ConfigMap and Field name the entry: "namespace/name", "data[port]".
	ConfigMap string `json:"configMap"`
	Field     string `json:"field"`
}

// l4ServicesOf lists t's TCP and UDP services.
func l4ServicesOf(t *match.Table) []jsonL4Service {
	var out []jsonL4Service
	for s := range t.L4Services() {
		out = append(out, jsonL4Service{
			Protocol: s.Protocol.String(), Port: s.Port, Service: s.Backend.Namespace + "/" + s.Backend.Name + ":" + s.ServicePort,
			State: s.Backend.State.String(), Endpoints: append([]string{}, s.Backend.Endpoints...),
			DecodeProxyProtocol: s.DecodeProxyProtocol, EncodeProxyProtocol: s.EncodeProxyProtocol,
			ConfigMap: s.Source.Namespace + "/" + s.Source.Name, Field: s.Source.Field,
		})
	}
	return out
}

type jsonHost struct {
	// Name is an exact host, a wildcard, or "" for the catch-all.
	Name string `json:"name"`
	TLS  bool   `json:"tls"`
	// Fallback is the backend ID answering when no route matches; null
	// for 404.
	Fallback              *string     `json:"fallback"`
	FallbackSource        *jsonSource `json:"fallbackSource,omitempty"`
	SSLRedirect           bool        `json:"sslRedirect"`
	ForceSSLRedirect      bool        `json:"forceSSLRedirect"`
	PreserveTrailingSlash bool        `json:"preserveTrailingSlash"`
	Routes                []jsonRoute `json:"routes"`
}

type jsonRoute struct {
	Type string `json:"type"`
	// Path is the path as declared ("/" for the root Prefix); for Regex
	// the pattern without its leading "^".
	Path                  string     `json:"path"`
	Backend               string     `json:"backend"`
	Source                jsonSource `json:"source"`
	SSLRedirect           bool       `json:"sslRedirect"`
	ForceSSLRedirect      bool       `json:"forceSSLRedirect"`
	PreserveTrailingSlash bool       `json:"preserveTrailingSlash"`
}

// jsonSource is the declaration something came from: an Ingress and a
// field, or only a field ("--default-backend") for the global default.
type jsonSource struct {
	Ingress string `json:"ingress,omitempty"`
	Field   string `json:"field"`
}

type jsonBackend struct {
	ID        string   `json:"id"`
	Protocol  string   `json:"protocol"`
	State     string   `json:"state"`
	Endpoints []string `json:"endpoints"`
	Policy    string   `json:"policy"`
	HashKey   string   `json:"hashKey,omitempty"`
}

type jsonCertificate struct {
	Secret      string   `json:"secret"`
	Hosts       []string `json:"hosts"`
	Fingerprint string   `json:"fingerprint"`
}

// routePath is the route's path as declared: the root Prefix's key is "".
func routePath(r *match.Route) string {
	if r.Type == match.Prefix && r.Path == "" {
		return "/"
	}
	return r.Path
}

func source(s match.Source) jsonSource { return jsonSource{Ingress: s.Ingress(), Field: s.Field} }

func translation(res compile.Result, skipped []string) translated {
	t := res.Table
	out := translated{
		Digest: t.Digest(), Hosts: []jsonHost{}, Backends: []jsonBackend{}, TLSHosts: []string{},
		Certificates: []jsonCertificate{}, Warnings: []routertest.Warning{}, Claimed: []string{}, Skipped: []string{},
	}
	for vh := range t.VirtualHosts() {
		h := jsonHost{
			Name: vh.Name, TLS: vh.TLS, SSLRedirect: vh.SSLRedirect, ForceSSLRedirect: vh.ForceSSLRedirect,
			PreserveTrailingSlash: vh.PreserveTrailingSlash, Routes: []jsonRoute{},
		}
		if vh.Fallback != nil {
			id, src := vh.Fallback.ID, source(vh.FallbackSource)
			h.Fallback, h.FallbackSource = &id, &src
		}
		for _, r := range vh.Routes {
			jr := jsonRoute{
				Type: r.Type.String(), Path: routePath(r), Source: source(r.Source),
				SSLRedirect: r.SSLRedirect, ForceSSLRedirect: r.ForceSSLRedirect, PreserveTrailingSlash: r.PreserveTrailingSlash,
			}
			if r.Backend != nil {
				jr.Backend = r.Backend.ID
			}
			h.Routes = append(h.Routes, jr)
		}
		out.Hosts = append(out.Hosts, h)
	}
	for b := range t.Backends() {
		out.Backends = append(out.Backends, jsonBackend{
			ID: b.ID, Protocol: b.Protocol.String(), State: b.State.String(),
			Endpoints: append([]string{}, b.Endpoints...), Policy: b.Algorithm.String(), HashKey: b.HashKey.String(),
		})
	}
	out.TLSHosts = append(out.TLSHosts, slices.Collect(t.TLSHosts())...)
	for c := range t.Certificates() {
		out.Certificates = append(out.Certificates, jsonCertificate{Secret: c.Secret, Hosts: append([]string{}, c.Hosts...), Fingerprint: c.Fingerprint})
	}
	out.L4Services = l4ServicesOf(t)
	for _, w := range res.Warnings {
		out.Warnings = append(out.Warnings, routertest.Warning{
			Reason: string(w.Reason), Object: w.Object.String(), Field: w.Field, Message: w.Message, Winner: w.WinnerText(),
		})
	}
	for _, c := range res.Claimed {
		out.Claimed = append(out.Claimed, c.Namespace+"/"+c.Name)
	}
	out.Skipped = append(out.Skipped, skipped...)
	return out
}
