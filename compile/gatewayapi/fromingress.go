package gatewayapi

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	"sigs.k8s.io/yaml"

	"ramjet.dev/ramjet/compile"
	"ramjet.dev/ramjet/match"
)

// FromIngressOptions configure FromIngress.
type FromIngressOptions struct {
	// Compile are the options the Ingresses are compiled under: which
	// Ingresses are claimed and how their annotations read (SPEC §1, §2).
	Compile compile.Options
	// GatewayClassName is every Gateway's gatewayClassName; "" names it
	// after the IngressClass, as ingress2gateway does.
	GatewayClassName string
	// GatewayNamespace, when set, puts one Gateway per IngressClass in
	// that namespace, admitting routes from all namespaces, with a
	// ReferenceGrant in each namespace whose TLS Secrets it uses. ""
	// makes one Gateway per namespace and class (ingress2gateway's).
	GatewayNamespace string
}

// Migration is the Gateway API equivalent of the Ingresses of a snapshot.
type Migration struct {
	// Gateways, one per namespace and IngressClass served, or per class
	// (FromIngressOptions.GatewayNamespace), sorted by namespace/name.
	Gateways []*gwv1.Gateway
	// ReferenceGrants let a Gateway in GatewayNamespace use TLS Secrets
	// of other namespaces, sorted by namespace/name.
	ReferenceGrants []*gwv1.ReferenceGrant
	// HTTPRoutes, sorted by namespace/name.
	HTTPRoutes []*gwv1.HTTPRoute
	// Unconverted lists what the objects above do not carry over, sorted
	// by Ingress, then annotation.
	Unconverted []Unconverted
}

// Unconverted is an Ingress annotation (or field) that the migration does
// not carry over, and why.
type Unconverted struct {
	Namespace, Name string
	// Annotation is the key, or a field of the Ingress
	// ("spec.rules[0].http.paths[1].backend").
	Annotation string
	Why        string
}

// Ingress-nginx's listeners: ramjet's Gateway listens where it does.
const (
	httpPort  = 80
	httpsPort = 443
	// sslRedirectCode is ingress-nginx's http-redirect-code default, the
	// status of its plain-HTTP → HTTPS redirect.
	sslRedirectCode = 308
	nginxPrefix     = "nginx.ingress.kubernetes.io/"
	ramjetPrefix    = "ramjet.dev/"
)

// converted are the annotation names (without prefix) whose effect the
// migration expresses in Gateway API terms when ramjet serves it; a value
// it cannot express is listed with the reason instead.
var converted = map[string]bool{
	"ssl-redirect": true, "force-ssl-redirect": true, "use-regex": true, "rewrite-target": true,
	"upstream-vhost": true, "x-forwarded-prefix": true,
	"permanent-redirect": true, "permanent-redirect-code": true, "temporal-redirect": true, "temporal-redirect-code": true,
	"canary": true, "canary-weight": true, "canary-weight-total": true,
	"canary-by-header": true, "canary-by-header-value": true, "canary-by-header-pattern": true,
	"mirror-target": true, "configuration-snippet": true, "app-root": true, "server-alias": true,
}

// unconvertedWhy says why an annotation (without prefix), or a family of
// them ("auth" for auth-*), has no Gateway API equivalent; others take
// noEquivalent.
var unconvertedWhy = map[string]string{
	"affinity":                affinityWhy,
	"affinity-mode":           affinityWhy,
	"session":                 affinityWhy,
	"auth":                    "authentication would be the ExternalAuth filter, which ramjet's Gateway API translation does not serve",
	"enable-cors":             "CORS would be the CORS filter, which ramjet's Gateway API translation does not serve",
	"cors":                    "CORS would be the CORS filter, which ramjet's Gateway API translation does not serve",
	"limit":                   "rate and connection limits are not part of HTTPRoute",
	"whitelist-source-range":  "HTTPRoute cannot match or refuse by client address",
	"denylist-source-range":   "HTTPRoute cannot match or refuse by client address",
	"proxy-connect-timeout":   "nginx's timeouts bound each connect, read or write; HTTPRoute timeouts bound the whole request, which would cut long responses",
	"proxy-read-timeout":      "nginx's timeouts bound each connect, read or write; HTTPRoute timeouts bound the whole request, which would cut long responses",
	"proxy-send-timeout":      "nginx's timeouts bound each connect, read or write; HTTPRoute timeouts bound the whole request, which would cut long responses",
	"proxy":                   "proxy buffering, sizes and retries are the implementation's, not HTTPRoute's",
	"proxy-ssl":               "TLS to the backend is a BackendTLSPolicy, not the route's",
	"auth-tls":                "client certificates are the Gateway listener's frontend TLS validation, not the route's",
	"backend-protocol":        "the backend protocol is the Service port's appProtocol (and a BackendTLSPolicy), not the route's",
	"load-balance":            "load balancing is the implementation's, not HTTPRoute's",
	"upstream-hash-by":        "load balancing is the implementation's, not HTTPRoute's",
	"server-snippet":          "nginx configuration has no Gateway API form",
	"canary-by-cookie":        "HTTPRoute matches no cookie",
	"from-to-www-redirect":    "a redirect between host names needs a route per twin host, not generated",
	"custom-http-errors":      "error pages are not part of HTTPRoute",
	"default-backend":         "a backend for error pages and for Services without endpoints has no HTTPRoute form",
	"ssl-passthrough":         "passthrough is a TLSRoute on a TLS listener, not an HTTPRoute",
	"service-upstream":        "HTTPRoute always sends to the Service's endpoints or address as the implementation does",
	"preserve-trailing-slash": "Gateway API's RequestRedirect keeps a trailing slash, which ingress-nginx's HTTPS redirect drops without this set to \"true\"",
	"use-port-in-redirects":   "Gateway API's HTTPS RequestRedirect leaves the port 443 out of its Location, which ingress-nginx's names with this set to \"true\"",
	"mirror-request-body":     "RequestMirror always mirrors the body",
	"mirror-host":             "RequestMirror sends the request's own Host",
	"modsecurity":             "a web application firewall is not part of Gateway API",
	"enable-modsecurity":      "a web application firewall is not part of Gateway API",
	"client-body-buffer-size": "request body handling is the implementation's",
	"proxy-body-size":         "request size limits are not part of HTTPRoute",
	"ssl-ciphers":             "TLS settings are the Gateway listener's tls.options, implementation-specific",
	"configuration-snippet":   "nginx configuration that ramjet does not reduce to header modifiers",
}

const noEquivalent = "no Gateway API field or filter expresses it"

// affinityWhy: the affinity annotations of an Ingress none of whose
// routes sets a session cookie (sessionpersistence.go lists the others
// with what differs, or converts them).
const affinityWhy = "cookie session affinity is not carried over: HTTPRoute sessionPersistence, which ramjet serves, " +
	"always keeps a session on its endpoint (affinity-mode persistent, where ingress-nginx's default is balanced), " +
	"has a lifetime only as absoluteTimeout of a Permanent cookie, no cookie path, domain, SameSite, Secure or change-on-failure, " +
	"and none on a rule split among weighted backends; write sessionPersistence by hand where that is enough"

// FromIngress converts the Ingresses a compile of s claims into Gateway
// API objects: what ingress2gateway does, read as ramjet reads the
// Ingresses. It compiles s with o.Compile and converts the table, so
// every route is the one ramjet serves (conflicts already decided, canaries
// attached to their primaries, paths in regex mode where ingress-nginx
// would put them) rather than a second reading of the annotations.
//
//   - One Gateway per namespace and IngressClass, named after the class
//     (as ingress2gateway does, so routes, Gateway and TLS Secrets share a
//     namespace and need no ReferenceGrant), or with GatewayNamespace one
//     per class there, with ReferenceGrants for the Secrets of other
//     namespaces. Each has an HTTP listener on port 80 per host and an
//     HTTPS listener on 443 per host that its Ingresses list under
//     spec.tls, the oldest one's Secret as certificateRef; past the 64
//     listeners a Gateway holds, the class's next Gateway (<class>-2 …)
//     takes the hosts that do not fit. A GatewayClass is not generated.
//   - One HTTPRoute per Ingress and host, named <ingress>-<host>
//     (ingress2gateway's naming): each Ingress's annotations apply to its
//     own paths, so keeping them apart keeps what each one asks for, and
//     who owns it, on its own object. A host whose routes redirect plain
//     HTTP to HTTPS (ssl-redirect, force-ssl-redirect) gets a second
//     route, <ingress>-<host>-http, on the HTTP listener with a
//     RequestRedirect (the ConfigMap's http-redirect-code, 308 by
//     default, as ingress-nginx answers) on those rules (past
//     the 16 rules a route holds, more routes, <name>-2 …); it
//     keeps a trailing slash (a query's too), which ingress-nginx drops
//     unless preserve-trailing-slash is "true".
//   - Paths: Exact stays Exact, Prefix becomes PathPrefix, a regular
//     expression (ImplementationSpecific, use-regex, a host in
//     ingress-nginx's regex mode) becomes RegularExpression with ramjet's
//     pattern, which ramjet reads case-insensitively and anchored at the
//     start only; another implementation may read it otherwise.
//   - server-alias names join the hostnames of every route of the host,
//     with listeners of their own (the host's certificate on HTTPS); an
//     alias of a TLS host that its certificate does not cover is
//     converted as a host of its own without TLS, never redirected.
//   - A host's fallback from an Ingress's spec.defaultBackend becomes a
//     PathPrefix "/" rule of that Ingress's route, where no route of the
//     host already matches every path and no regular expression would be
//     shadowed by it.
//   - Annotations with an equivalent: ssl-redirect, force-ssl-redirect,
//     app-root (an Exact "/" rule with a 302 RequestRedirect),
//     rewrite-target without captures (URLRewrite ReplaceFullPath),
//     upstream-vhost (URLRewrite hostname), x-forwarded-prefix
//     (RequestHeaderModifier), permanent-redirect and temporal-redirect
//     (RequestRedirect; the query is kept where nginx drops it, so they
//     and app-root are listed too), canary
//     by weight (weighted backendRefs) and by header (rules with a header
//     match: the value, the pattern, or "always" and "never"),
//     mirror-target to a cluster Service (RequestMirror), a
//     configuration-snippet ramjet reduces to header edits
//     (RequestHeaderModifier, ResponseHeaderModifier), and cookie
//     affinity in the form sessionPersistence serves (affinity-mode
//     persistent, session-cookie-name, session-cookie-max-age as a
//     Permanent cookie's absoluteTimeout, the cookie path the rule's own
//     path gives; sessionpersistence.go).
//
// Every other nginx.ingress.kubernetes.io/ or ramjet.dev/ annotation of a
// claimed Ingress, and each of those above whose value has no equivalent,
// is listed in Unconverted with the reason. It never fails open: what
// checks a request with no Gateway API form keeps its Ingress (guard.go)
// or host (guardedHost) out of the objects altogether; a host listed
// under spec.tls without a rule of its own gets listeners and routes
// under its name (tlsHostsWithoutRules); the ConfigMap's
// no-tls-redirect-locations (/.well-known/acme-challenge by default) are
// served unredirected on the HTTP listener as ingress-nginx serves them
// (acme.go).
func FromIngress(s compile.Snapshot, o FromIngressOptions) Migration {
	s.HTTPRoutes = nil // the migration is of the Ingresses alone
	res := compile.Compile(s, o.Compile)
	c := converter{opts: o, ingresses: make(map[nsName]*networkingv1.Ingress), notes: make(map[nsName]map[string]string),
		routes: make(map[routeKey]*routeGroup), gateways: make(map[nsName]*gatewayHosts), snippets: make(map[nsName]bool),
		affinity: make(map[nsName]string)}
	c.exempt = c.exemptPaths()
	claimed := make(map[nsName]bool, len(res.Claimed))
	for _, r := range res.Claimed {
		claimed[nsName{r.Namespace, r.Name}] = true
	}
	for _, ing := range s.Ingresses {
		if k := (nsName{ing.Namespace, ing.Name}); claimed[k] {
			c.ingresses[k] = ing
		}
	}
	c.classes(s.IngressClasses)
	c.guarded(res.Table)
	for vh := range res.Table.VirtualHosts() {
		for _, h := range splitUncoveredAliases(res.Table, vh) {
			c.host(h)
		}
	}
	c.tlsHostsWithoutRules(res.Table)
	return c.finish()
}

// tlsHostsWithoutRules converts, for each host listed under spec.tls that
// has no rule of its own, the host that serves its requests (a wildcard,
// or the catch-all) once more under its name: ingress-nginx serves it
// there with its certificate and redirects its plain HTTP (SPEC §12), and
// only a listener pair of its own, HTTPS with the certificate and HTTP
// with the redirect, does that in Gateway API terms. Without them its
// plain HTTP would be served by the catch-all's HTTP listener, unredirected.
func (c *converter) tlsHostsWithoutRules(tab *match.Table) {
	for h := range tab.TLSHosts() {
		if tab.VirtualHostByName(h) != nil {
			continue
		}
		vh := tab.ServerFor(h)
		if vh == nil || vh.Name == h || vh.Actions != nil && slices.Contains(vh.Actions.Aliases, h) {
			continue // no host serves it, or it is a name of one already
		}
		as := *vh
		as.Name, as.TLS = h, true
		if vh.Actions != nil {
			acts := *vh.Actions
			acts.Aliases = nil // the serving host's names have their listeners
			as.Actions = &acts
		}
		c.host(&as)
	}
}

// splitUncoveredAliases returns vh to convert, with the server-alias
// names of a TLS host that its certificate does not cover split off as a
// host of their own without TLS: ramjet, as ingress-nginx, has no
// certificate for them and does not redirect their plain HTTP, which a
// route redirecting every hostname of the host would.
func splitUncoveredAliases(tab *match.Table, vh *match.VirtualHost) []*match.VirtualHost {
	if !vh.TLS || vh.Actions == nil || len(vh.Actions.Aliases) == 0 {
		return []*match.VirtualHost{vh}
	}
	var covered, plain []string
	for _, a := range vh.Actions.Aliases {
		if tab.IsTLSHost(a) || tab.Certificate(a) != nil {
			covered = append(covered, a)
		} else {
			plain = append(plain, a)
		}
	}
	if len(plain) == 0 {
		return []*match.VirtualHost{vh}
	}
	tls, open := *vh, *vh
	tlsActs, openActs := *vh.Actions, *vh.Actions
	tlsActs.Aliases, openActs.Aliases = covered, plain[1:]
	tls.Actions, open.Actions = &tlsActs, &openActs
	open.Name, open.TLS = plain[0], false
	return []*match.VirtualHost{&tls, &open}
}

type routeKey struct {
	ns, name, host string
}

// routeGroup is what one Ingress serves on one host.
type routeGroup struct {
	key   routeKey
	class string
	// hosts are the route's hostnames: the host, then its server-alias
	// names, which ramjet serves as the host.
	hosts    []string
	rules    []gwv1.HTTPRouteRule // on HTTPS, and on HTTP unless redirected
	httpOnly []gwv1.HTTPRouteRule // on HTTP: the rules above, redirected where asked
	redirect bool                 // some rule is redirected on HTTP
}

// gatewayHosts is one Gateway's hosts and the TLS Secret of each.
type gatewayHosts struct {
	hosts map[string]bool
	tls   map[string]nsName
	label map[string]string // the host's part of listener and route names
	// gateway names the Gateway whose listeners serve the host.
	gateway map[string]string
}

// The Gateway API's bounds: listeners of a Gateway, rules of a route.
const (
	maxListeners = 64
	maxRules     = 16
	maxHostnames = 16
)

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

type converter struct {
	// literal: the host being converted matches every path as written
	// (literalHost).
	literal   bool
	opts      FromIngressOptions
	ingresses map[nsName]*networkingv1.Ingress
	class     map[nsName]string
	notes     map[nsName]map[string]string // Ingress → key → why not converted
	snippets  map[nsName]bool              // Ingresses with a route ramjet applies a snippet on
	routes    map[routeKey]*routeGroup
	gateways  map[nsName]*gatewayHosts // namespace, class
	withheld  map[nsName]bool          // Ingresses not converted at all (guard.go)
	// acme are the rules of the host being converted that can serve an
	// exempt path (acme.go).
	acme []acmeRule
	// exempt are the paths the HTTPS redirect leaves alone (exemptPaths).
	exempt []string
	// exacts are the Exact path values of the host being converted's
	// rules (acme.go).
	exacts []string
	// affinity says, for an Ingress whose routes set a session cookie,
	// why its affinity is not carried over, "" when it is
	// (sessionpersistence.go).
	affinity map[nsName]string
}

// classes finds each claimed Ingress's class as ramjet reads it: the
// kubernetes.io/ingress.class annotation, spec.ingressClassName, else the
// default IngressClass.
func (c *converter) classes(ics []*networkingv1.IngressClass) {
	def := ""
	for _, ic := range ics {
		if ic.Annotations[networkingv1.AnnotationIsDefaultIngressClass] == "true" && (def == "" || ic.Name < def) {
			def = ic.Name
		}
	}
	if def == "" {
		def = cmp.Or(c.opts.Compile.IngressClass, compile.DefaultIngressClass)
	}
	c.class = make(map[nsName]string, len(c.ingresses))
	for k, ing := range c.ingresses {
		cl := def
		if ing.Spec.IngressClassName != nil && *ing.Spec.IngressClassName != "" {
			cl = *ing.Spec.IngressClassName
		}
		if v := ing.Annotations["kubernetes.io/ingress.class"]; v != "" {
			cl = v // decisive in ramjet (SPEC §2)
		}
		c.class[k] = cl
	}
}

func (c *converter) note(ns, name, key, why string) {
	k := nsName{ns, name}
	m := c.notes[k]
	if m == nil {
		m = make(map[string]string)
		c.notes[k] = m
	}
	if _, ok := m[key]; !ok {
		m[key] = why
	}
}

// group returns the route of the Ingress src names on host, making it
// and the Gateway's listeners for the host as needed.
func (c *converter) group(src match.Source, vh *match.VirtualHost) *routeGroup {
	key := routeKey{src.Namespace, src.Name, vh.Name}
	if g := c.routes[key]; g != nil {
		return g
	}
	ing := c.ingresses[nsName{src.Namespace, src.Name}]
	if ing == nil {
		return nil
	}
	g := &routeGroup{key: key, class: c.class[nsName{src.Namespace, src.Name}], hosts: []string{vh.Name}}
	if vh.Actions != nil {
		aliases := vh.Actions.Aliases
		if len(aliases) > maxHostnames-1 {
			c.note(src.Namespace, src.Name, nginxPrefix+"server-alias", hostName(vh.Name)+" has more aliases than the "+
				strconv.Itoa(maxHostnames)+" hostnames a route holds; the first "+strconv.Itoa(maxHostnames-1)+" are kept")
			aliases = aliases[:maxHostnames-1]
		}
		g.hosts = append(g.hosts, aliases...)
	}
	c.routes[key] = g
	gh := c.gateway(g)
	if gh == nil {
		gh = &gatewayHosts{hosts: make(map[string]bool), tls: make(map[string]nsName)}
		c.gateways[c.gatewayOf(g)] = gh
	}
	var secret nsName
	tls := false
	if vh.TLS {
		secret, tls = c.tlsSecret(src.Namespace, g.class, vh.Name)
	}
	for _, h := range g.hosts {
		// An alias is a name of the host's server block: its certificate
		// too.
		gh.hosts[h] = true
		if tls {
			gh.tls[h] = secret
		}
	}
	return g
}

// holdHost keeps the name of a host that is not converted as listeners
// without routes in the Gateways of its Ingresses: a listener's hostname
// goes before a wildcard's and the catch-all's, so the host's requests
// answer 404 rather than reach another host's routes unchecked.
func (c *converter) holdHost(vh *match.VirtualHost) {
	hold := func(src match.Source) {
		k := nsName{src.Namespace, src.Name}
		if src.Kind != "" || c.ingresses[k] == nil {
			return
		}
		g := &routeGroup{key: routeKey{src.Namespace, src.Name, vh.Name}, class: c.class[k]}
		gh := c.gateway(g)
		if gh == nil {
			gh = &gatewayHosts{hosts: make(map[string]bool), tls: make(map[string]nsName)}
			c.gateways[c.gatewayOf(g)] = gh
		}
		gh.hosts[vh.Name] = true
		if vh.TLS {
			if secret, ok := c.tlsSecret(src.Namespace, g.class, vh.Name); ok {
				gh.tls[vh.Name] = secret
			}
		}
	}
	for _, r := range vh.Routes {
		hold(r.Source)
	}
	if vh.Fallback != nil {
		hold(vh.FallbackSource)
	}
}

// gatewayOf is the namespace and name of the route's Gateway.
func (c *converter) gatewayOf(g *routeGroup) nsName {
	return nsName{cmp.Or(c.opts.GatewayNamespace, g.key.ns), g.class}
}

func (c *converter) gateway(g *routeGroup) *gatewayHosts { return c.gateways[c.gatewayOf(g)] }

// tlsSecret is the Secret the oldest claimed Ingress of the class (and of
// the namespace, with a Gateway per namespace) lists for host (SPEC §12:
// the oldest wins).
func (c *converter) tlsSecret(ns, class, host string) (nsName, bool) {
	var best *networkingv1.Ingress
	var secret nsName
	for k, ing := range c.ingresses {
		if c.opts.GatewayNamespace == "" && k.ns != ns || c.class[k] != class {
			continue
		}
		for _, t := range ing.Spec.TLS {
			if t.SecretName == "" || !slices.Contains(t.Hosts, host) {
				continue
			}
			if best == nil || olderIngress(ing, best) {
				best, secret = ing, nsName{k.ns, t.SecretName}
			}
		}
	}
	return secret, best != nil
}

func olderIngress(a, b *networkingv1.Ingress) bool {
	return cmp.Or(a.CreationTimestamp.Compare(b.CreationTimestamp.Time), cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name)) < 0
}

// host converts one virtual host's routes and fallback, unless a check
// of the whole host has no Gateway API form (guardedHost).
func (c *converter) host(vh *match.VirtualHost) {
	if c.guardedHost(vh) || c.sharesWithheld(vh) {
		c.holdHost(vh)
		return
	}
	c.acme, c.exacts = c.acme[:0], c.exacts[:0]
	c.hostRules(vh)
	c.acmeTwins()
}

// hostRules converts the host's routes and fallback.
func (c *converter) hostRules(vh *match.VirtualHost) {
	matchesAll, regex := false, false
	c.literal = c.literalHost(vh)
	for _, r := range vh.Routes {
		if r.Source.Kind != "" || r.Source.Name == "" || c.withheld[nsName{r.Source.Namespace, r.Source.Name}] {
			continue
		}
		matchesAll = matchesAll || r.Type == match.Prefix && r.Path == ""
		if r.Type == match.Regex {
			if p := c.declared(r.Source); c.literal && p != nil {
				matchesAll = matchesAll || cmp.Or(p.Path, "/") == "/"
			} else {
				regex = true
			}
		}
		g := c.group(r.Source, vh)
		if g == nil {
			continue
		}
		rule, ok := c.rule(r)
		if !ok {
			continue
		}
		c.add(g, vh, rule, r.ForceSSLRedirect || r.SSLRedirect && vh.TLS, r.ForceSSLRedirect)
		if cr, ok := c.canaryHeaderRule(r, rule); ok {
			c.add(g, vh, cr, r.ForceSSLRedirect || r.SSLRedirect && vh.TLS, r.ForceSSLRedirect)
		}
		if nr, ok := canaryNeverRule(r, rule); ok {
			c.add(g, vh, nr, r.ForceSSLRedirect || r.SSLRedirect && vh.TLS, r.ForceSSLRedirect)
		}
	}
	c.appRoot(vh)
	src := vh.FallbackSource
	if vh.Fallback == nil || src.Name == "" || src.Kind != "" || c.withheld[nsName{src.Namespace, src.Name}] {
		return
	}
	if matchesAll || regex {
		if !matchesAll {
			c.note(src.Namespace, src.Name, src.Field,
				hostName(vh.Name)+" has regular expression paths, which a PathPrefix \"/\" rule would outrank in ramjet")
		}
		return
	}
	g := c.group(src, vh)
	if g == nil {
		return
	}
	fl := vh.FallbackLocation
	r := &match.Route{Type: match.Prefix, Backend: vh.Fallback, Source: src,
		Location: match.Location{Rewrite: fl.Rewrite, Response: fl.Response, Snippet: fl.Snippet}}
	if rule, ok := c.rule(r); ok {
		redirect := vh.ForceSSLRedirect || vh.SSLRedirect && vh.TLS
		c.add(g, vh, rule, redirect, vh.ForceSSLRedirect)
		if cr, ok := c.canaryHeaderRule(r, rule); ok {
			c.add(g, vh, cr, redirect, vh.ForceSSLRedirect)
		}
		if nr, ok := canaryNeverRule(r, rule); ok {
			c.add(g, vh, nr, redirect, vh.ForceSSLRedirect)
		}
	}
}

// literalHost reports whether ingress-nginx matches every Ingress path of
// vh as written: the host is not in regex mode (no use-regex or
// rewrite-target among its Ingresses, none of its Exact or Prefix paths
// made a pattern) and no ImplementationSpecific path has regular
// expression syntax ("." aside, which such a path mostly means
// literally). Its paths then become PathPrefix and Exact matches, which
// every implementation reads alike, where a RegularExpression would
// outrank nothing a PathPrefix "/" does.
func (c *converter) literalHost(vh *match.VirtualHost) bool {
	for _, r := range vh.Routes {
		if r.Source.Kind != "" || r.Source.Name == "" {
			continue
		}
		ing := c.ingresses[nsName{r.Source.Namespace, r.Source.Name}]
		if ing == nil {
			continue
		}
		a := ing.Annotations
		if a[nginxPrefix+"use-regex"] == "true" || a[nginxPrefix+"rewrite-target"] != "" || a[ramjetPrefix+"use-regex"] == "true" {
			return false
		}
		p := c.declared(r.Source)
		if r.Type != match.Regex || p == nil {
			continue
		}
		if p.PathType != nil && (*p.PathType == networkingv1.PathTypePrefix || *p.PathType == networkingv1.PathTypeExact) ||
			strings.ContainsAny(p.Path, `*+?()[]{}|\^$`) {
			return false
		}
	}
	return true
}

// declared is the Ingress path a route of the table was declared by, nil
// for another route (a host's default backend, app-root).
func (c *converter) declared(src match.Source) *networkingv1.HTTPIngressPath {
	ing := c.ingresses[nsName{src.Namespace, src.Name}]
	if ing == nil || src.Kind != "" {
		return nil
	}
	var i, j int
	if n, err := fmt.Sscanf(src.Field, "spec.rules[%d].http.paths[%d]", &i, &j); n != 2 || err != nil ||
		src.Field != pathFieldOf(i, j) || i >= len(ing.Spec.Rules) || ing.Spec.Rules[i].HTTP == nil || j >= len(ing.Spec.Rules[i].HTTP.Paths) {
		return nil
	}
	return &ing.Spec.Rules[i].HTTP.Paths[j]
}

func pathFieldOf(i, j int) string {
	return "spec.rules[" + strconv.Itoa(i) + "].http.paths[" + strconv.Itoa(j) + "]"
}

// appRoot is app-root as an Exact "/" rule that redirects (302) to it,
// on both listeners, as ingress-nginx answers it before any location.
func (c *converter) appRoot(vh *match.VirtualHost) {
	a := vh.Actions
	if a == nil || a.AppRoot == "" || a.AppRootSource.Name == "" {
		return
	}
	src := a.AppRootSource
	if strings.ContainsAny(a.AppRoot, "?#$") || !strings.HasPrefix(a.AppRoot, "/") {
		c.note(src.Namespace, src.Name, nginxPrefix+"app-root", "path "+strconv.Quote(a.AppRoot)+" is not a literal path, which is all RequestRedirect can set")
		return
	}
	g := c.group(src, vh)
	if g == nil {
		return
	}
	rule := gwv1.HTTPRouteRule{
		Matches: []gwv1.HTTPRouteMatch{{Path: &gwv1.HTTPPathMatch{Type: ptr(gwv1.PathMatchExact), Value: ptr("/")}}},
		Filters: []gwv1.HTTPRouteFilter{{Type: gwv1.HTTPRouteFilterRequestRedirect, RequestRedirect: &gwv1.HTTPRequestRedirectFilter{
			Path: &gwv1.HTTPPathModifier{Type: gwv1.FullPathHTTPPathModifier, ReplaceFullPath: ptr(a.AppRoot)}, StatusCode: ptr(302)}}},
	}
	c.note(src.Namespace, src.Name, nginxPrefix+"app-root", "ingress-nginx's redirect drops the request's query and keeps the Host header's port; "+
		"the RequestRedirect keeps the query and writes the listener's port, and no Gateway API field does otherwise")
	c.add(g, vh, rule, false, false)
}

func hostName(h string) string {
	if h == "" {
		return "the catch-all host"
	}
	return "host " + h
}

// add places a rule on the route, and its HTTP twin, redirected to HTTPS
// when the route asks and the Gateway has an HTTPS listener for the host.
func (c *converter) add(g *routeGroup, vh *match.VirtualHost, rule gwv1.HTTPRouteRule, sslRedirect, force bool) {
	g.rules = append(g.rules, rule)
	if _, tls := c.gateway(g).tls[vh.Name]; sslRedirect && !tls {
		key := nginxPrefix + "ssl-redirect"
		if force {
			key = nginxPrefix + "force-ssl-redirect"
		}
		c.note(g.key.ns, g.key.name, key, hostName(vh.Name)+" has no TLS Secret the Gateway can use, so it has no HTTPS listener to redirect to")
		sslRedirect = false
	}
	// A rule that answers with a redirect of its own (permanent-redirect,
	// temporal-redirect, app-root) answers so on plain HTTP too: the
	// router, as ingress-nginx, answers it before the HTTPS redirect. So
	// does one whose paths are all HTTP-01 challenges, never redirected.
	ownRedirect := slices.ContainsFunc(rule.Filters, func(f gwv1.HTTPRouteFilter) bool { return f.Type == gwv1.HTTPRouteFilterRequestRedirect })
	exempt := c.underExempt(rule)
	c.acmeCandidate(g, rule, sslRedirect && !ownRedirect && !exempt)
	if !sslRedirect || ownRedirect || exempt {
		g.httpOnly = append(g.httpOnly, rule)
		return
	}
	g.redirect = true
	g.httpOnly = append(g.httpOnly, gwv1.HTTPRouteRule{Matches: rule.Matches, Filters: c.httpsRedirect()})
}

// httpsRedirect is the filter of the HTTP listener's redirect to HTTPS.
func (c *converter) httpsRedirect() []gwv1.HTTPRouteFilter {
	scheme, code := "https", c.redirectCode()
	return []gwv1.HTTPRouteFilter{{Type: gwv1.HTTPRouteFilterRequestRedirect,
		RequestRedirect: &gwv1.HTTPRequestRedirectFilter{Scheme: &scheme, StatusCode: &code}}}
}

// pathValue writes an Ingress's Exact or Prefix path as an HTTPPathMatch
// value: an Ingress path is matched as written against the decoded request
// path, an HTTPRoute value decoded (compile), so a "%" is escaped, and so
// is every byte the API's pattern leaves out (a non-ASCII one).
func pathValue(path string) string {
	var b strings.Builder
	for i := 0; i < len(path); i++ {
		c := path[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-/._~!$&'()*+,;=:@", c) >= 0 {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	return b.String()
}

// rule converts one route of the table.
func (c *converter) rule(r *match.Route) (gwv1.HTTPRouteRule, bool) {
	ns, name := r.Source.Namespace, r.Source.Name
	var rule gwv1.HTTPRouteRule
	m := gwv1.HTTPRouteMatch{Path: &gwv1.HTTPPathMatch{}}
	switch p := c.declared(r.Source); {
	case r.Type == match.Exact:
		m.Path.Type, m.Path.Value = ptr(gwv1.PathMatchExact), ptr(pathValue(r.Path))
	case r.Type == match.Prefix:
		m.Path.Type, m.Path.Value = ptr(gwv1.PathMatchPathPrefix), ptr(pathValue(cmp.Or(r.Path, "/")))
	case c.literal && p != nil && p.PathType != nil && *p.PathType == networkingv1.PathTypeExact:
		m.Path.Type, m.Path.Value = ptr(gwv1.PathMatchExact), ptr(pathValue(p.Path))
	case c.literal && p != nil:
		// A literal path of a host ingress-nginx does not match by regular
		// expression: the prefix it is there. ramjet's own reading of an
		// ImplementationSpecific path (§4) matches more, and so does
		// nginx's prefix of bytes.
		path := cmp.Or(p.Path, "/")
		m.Path.Type, m.Path.Value = ptr(gwv1.PathMatchPathPrefix), ptr(pathValue(path))
		if path != "/" {
			other := strings.TrimSuffix(path, "/") // what a prefix of bytes matches and PathPrefix does not, or the other way
			if strings.HasSuffix(path, "/") {
				other = " and " + other + " too, which ingress-nginx's prefix of bytes does not"
			} else {
				other = ", not " + other + "x (ingress-nginx's prefix of bytes)"
			}
			c.note(ns, name, r.Source.Field+".pathType", "ImplementationSpecific path "+strconv.Quote(path)+
				" becomes PathPrefix: it matches the paths below it"+other+", not other letter cases (ramjet's case-insensitive regular expression)")
		}
	default:
		// The Gateway API's RegularExpression is case-sensitive (SPEC §20);
		// the Ingress's pattern is not (§4).
		re := r.Path
		if strings.IndexFunc(re, func(c rune) bool { return 'a' <= c|0x20 && c|0x20 <= 'z' }) >= 0 {
			re = "(?i)" + re
		}
		m.Path.Type, m.Path.Value = ptr(gwv1.PathMatchRegularExpression), ptr(re)
	}
	rule.Matches = []gwv1.HTTPRouteMatch{m}
	if rd := r.Redirect; rd != nil {
		key := nginxPrefix + "temporal-redirect" // which wins when both are set
		if ing := c.ingresses[nsName{ns, name}]; ing != nil && ing.Annotations[key] == "" {
			key = nginxPrefix + "permanent-redirect"
		}
		f, why := requestRedirect(rd)
		if why != "" {
			c.note(ns, name, key, why)
			return rule, false
		}
		// nginx's return drops the request's query; a RequestRedirect
		// keeps it and has no field that drops it.
		c.note(ns, name, key, "ingress-nginx redirects to the URL as written, dropping the request's query; the RequestRedirect keeps it, and no Gateway API field drops it")
		rule.Filters = append(rule.Filters, gwv1.HTTPRouteFilter{Type: gwv1.HTTPRouteFilterRequestRedirect, RequestRedirect: f})
		return rule, true
	}
	if ing := c.ingresses[nsName{ns, name}]; r.Policy != nil && r.Policy.MaxBodySize != 0 && ing != nil && ing.Annotations[nginxPrefix+"proxy-body-size"] == "" {
		// The ConfigMap's proxy-body-size bounds the Ingress's requests;
		// HTTPRoute has no field for a limit, and a route keeps the
		// implementation's own (the annotation is listed as it is).
		bound := "bounds this Ingress's request bodies"
		if r.Policy.MaxBodySize < 0 {
			bound = "lifts the limit on this Ingress's request bodies"
		}
		c.note(ns, name, nginxPrefix+"proxy-body-size", "the ConfigMap's proxy-body-size "+bound+"; "+
			"HTTPRoute has no body limit, so a route keeps the implementation's (ramjet's router: 1m)")
	}
	if ing := c.ingresses[nsName{ns, name}]; ing != nil && r.Policy != nil && r.Policy.Proxy.HasHeaderRewrites() {
		// The ConfigMap's proxy-redirect-* and proxy-cookie-* rewrite
		// this Ingress's answers (its own annotations are listed as
		// they are); HTTPRoute rewrites no response Location or
		// Set-Cookie attribute.
		for _, key := range []string{"proxy-redirect-from", "proxy-cookie-domain", "proxy-cookie-path"} {
			if _, set := ing.Annotations[nginxPrefix+key]; !set && headerRewriteOf(r.Policy.Proxy, key) != nil {
				c.note(ns, name, nginxPrefix+key, "the ConfigMap's "+key+" rewrites this Ingress's answers; "+
					"HTTPRoute has no filter that rewrites a response's Location or Set-Cookie attributes")
			}
		}
	}
	if rw := r.Rewrite; rw != nil {
		c.rewrite(&rule, r, rw)
	}
	if r.Snippet != nil {
		c.snippet(&rule, r)
	}
	if r.Response != nil && r.Response.Mirror != nil {
		if ref, why := mirrorService(r.Response.Mirror, ns); why != "" {
			c.note(ns, name, nginxPrefix+"mirror-target", why)
		} else {
			rule.Filters = append(rule.Filters, gwv1.HTTPRouteFilter{Type: gwv1.HTTPRouteFilterRequestMirror,
				RequestMirror: &gwv1.HTTPRequestMirrorFilter{BackendRef: ref}})
		}
	}
	b := r.Backend
	if b == nil {
		return rule, true
	}
	if backendPort(b) == 0 {
		c.note(ns, name, r.Source.Field+".backend", "Service port "+b.ID+" is named and does not resolve, and a backendRef needs a port number")
		return rule, true
	}
	rule.BackendRefs = []gwv1.HTTPBackendRef{backendRef(b, ns, nil)}
	c.sessionPersistence(&rule, r)
	if cn := canary(b); cn != nil {
		c.canaryNotes(r, cn)
	}
	if cn := canary(b); cn != nil && cn.Weight > 0 {
		w := min(cn.Weight, cn.WeightTotal)
		rule.BackendRefs[0].Weight = ptr(int32(cn.WeightTotal - w))
		rule.BackendRefs = append(rule.BackendRefs, backendRef(cn.Backend, ns, ptr(int32(w))))
	}
	return rule, true
}

func canary(b *match.Backend) *match.Canary {
	if b.Traffic == nil || b.Traffic.Canary == nil || b.Traffic.Canary.Backend == nil {
		return nil
	}
	return b.Traffic.Canary
}

// canaryNotes lists what of a canary no rule carries: its cookie (on the
// primary too, whose route then splits its requests with the cookie by
// the weight alone) and a session kept on it.
func (c *converter) canaryNotes(r *match.Route, cn *match.Canary) {
	cs := cn.Source
	if cn.Cookie != "" {
		c.note(cs.Namespace, cs.Name, nginxPrefix+"canary-by-cookie", unconvertedWhy["canary-by-cookie"])
		c.note(r.Source.Namespace, r.Source.Name, nginxPrefix+"canary-by-cookie", "canary Ingress "+cs.Namespace+"/"+cs.Name+
			" sends requests with cookie "+cn.Cookie+" by its value, which HTTPRoute cannot match; on the route they go by the weight")
	}
	if cn.Sticky {
		c.note(cs.Namespace, cs.Name, nginxPrefix+"affinity-canary-behavior", "a session kept on the canary needs session persistence, which HTTPRoute does not serve")
	}
}

// canaryHeaderRule is the rule that sends requests carrying the canary
// header to the canary (canary-by-header, -value, -pattern): the route's
// rule with a header match and the canary as its only backend. Gateway
// API ranks a rule with a header match above the same path without one.
func (c *converter) canaryHeaderRule(r *match.Route, rule gwv1.HTTPRouteRule) (gwv1.HTTPRouteRule, bool) {
	if r.Backend == nil || len(rule.BackendRefs) == 0 {
		return rule, false
	}
	cn := canary(r.Backend)
	if cn == nil {
		return rule, false
	}
	if cn.Header == "" {
		return rule, false
	}
	hm := gwv1.HTTPHeaderMatch{Name: gwv1.HTTPHeaderName(cn.Header)}
	switch {
	case cn.HeaderValue != "":
		hm.Value = cn.HeaderValue
	case cn.HeaderPattern != nil:
		hm.Type, hm.Value = ptr(gwv1.HeaderMatchRegularExpression), cn.HeaderPattern.String()
	case cn.HeaderPatternError:
		return rule, false
	default:
		// "always" goes to the canary; "never" to the primary, which
		// needs its own rule only when the weight would send some away.
		hm.Value = "always"
	}
	out := rule
	out.Matches = slices.Clone(rule.Matches)
	for i := range out.Matches {
		out.Matches[i].Headers = []gwv1.HTTPHeaderMatch{hm}
	}
	out.BackendRefs = []gwv1.HTTPBackendRef{backendRef(cn.Backend, r.Source.Namespace, nil)}
	return out, true
}

// canaryNeverRule keeps a request with the canary header set to "never"
// on the primary when a weight would send some of it to the canary; with
// a canary-by-header-pattern that does not compile, a request with the
// header at all (ingress-nginx's balancer.lua gives up on the canary when
// ngx.re.match fails).
func canaryNeverRule(r *match.Route, rule gwv1.HTTPRouteRule) (gwv1.HTTPRouteRule, bool) {
	if r.Backend == nil || len(rule.BackendRefs) == 0 {
		return rule, false
	}
	cn := canary(r.Backend)
	if cn == nil || cn.Header == "" || cn.HeaderValue != "" || cn.HeaderPattern != nil || len(rule.BackendRefs) < 2 {
		return rule, false
	}
	hm := gwv1.HTTPHeaderMatch{Name: gwv1.HTTPHeaderName(cn.Header), Value: "never"}
	if cn.HeaderPatternError {
		hm.Type, hm.Value = ptr(gwv1.HeaderMatchRegularExpression), ".*"
	}
	out := rule
	out.Matches = slices.Clone(rule.Matches)
	for i := range out.Matches {
		out.Matches[i].Headers = []gwv1.HTTPHeaderMatch{hm}
	}
	primary := rule.BackendRefs[0]
	primary.Weight = nil
	out.BackendRefs = []gwv1.HTTPBackendRef{primary}
	return out, true
}

// backendPort is the backend's Service port number: the resolved one, or
// the number the Ingress wrote when the Service is not in the input; 0
// for a port name that did not resolve.
func backendPort(b *match.Backend) int32 {
	if b.Port != 0 {
		return b.Port
	}
	_, p, _ := strings.Cut(b.ID, ":")
	n, err := strconv.ParseInt(p, 10, 32)
	if err != nil || n < 1 || n > 65535 {
		return 0
	}
	return int32(n)
}

func backendRef(b *match.Backend, routeNS string, weight *int32) gwv1.HTTPBackendRef {
	ref := gwv1.HTTPBackendRef{BackendRef: gwv1.BackendRef{Weight: weight, BackendObjectReference: gwv1.BackendObjectReference{
		Name: gwv1.ObjectName(b.Name), Port: ptr(gwv1.PortNumber(backendPort(b)))}}}
	if b.Namespace != routeNS {
		ref.Namespace = ptr(gwv1.Namespace(b.Namespace))
	}
	return ref
}

// requestRedirect is permanent-redirect or temporal-redirect as a
// RequestRedirect filter, or why it cannot be one.
func requestRedirect(rd *match.Redirect) (*gwv1.HTTPRequestRedirectFilter, string) {
	switch rd.Code {
	case 301, 302, 303, 307, 308:
	default:
		return nil, "status " + strconv.Itoa(rd.Code) + " is not a RequestRedirect status (301, 302, 303, 307, 308)"
	}
	u, err := url.Parse(rd.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.Fragment != "" || u.RawQuery != "" || u.ForceQuery || strings.Contains(rd.URL, "$") {
		return nil, "redirect URL " + strconv.Quote(rd.URL) + " is not an absolute http(s) URL without query or variables, which is all RequestRedirect can say"
	}
	f := &gwv1.HTTPRequestRedirectFilter{Scheme: ptr(u.Scheme), Hostname: ptr(gwv1.PreciseHostname(u.Hostname())), StatusCode: ptr(rd.Code)}
	if p := u.Port(); p != "" {
		n, _ := strconv.Atoi(p)
		f.Port = ptr(gwv1.PortNumber(n))
	}
	f.Path = &gwv1.HTTPPathModifier{Type: gwv1.FullPathHTTPPathModifier, ReplaceFullPath: ptr(cmp.Or(u.EscapedPath(), "/"))}
	return f, ""
}

// rewrite converts rewrite-target, upstream-vhost and x-forwarded-prefix.
func (c *converter) rewrite(rule *gwv1.HTTPRouteRule, r *match.Route, rw *match.Rewrite) {
	ns, name := r.Source.Namespace, r.Source.Name
	prefix := nginxPrefix
	if rw.Syntax == match.NativeSyntax {
		prefix = ramjetPrefix
	}
	var u gwv1.HTTPURLRewriteFilter
	if rw.Target != "" {
		switch {
		case r.Type == match.Regex && rw.Target == "/$2" && strings.HasSuffix(r.Path, "(/|$)(.*)"):
			c.note(ns, name, prefix+"rewrite-target", "path "+strconv.Quote(r.Path)+" with target \"/$2\" would be PathPrefix "+
				strconv.Quote(strings.TrimSuffix(r.Path, "(/|$)(.*)"))+" with ReplacePrefixMatch \"/\", which matches case-sensitively where ramjet's regular expression does not; write it by hand")
		case strings.ContainsAny(rw.Target, "$?") || !strings.HasPrefix(rw.Target, "/"):
			c.note(ns, name, prefix+"rewrite-target", "target "+strconv.Quote(rw.Target)+" uses captures, variables, a query or a URL; URLRewrite replaces a whole path or a matched prefix with literal text")
		case rw.Syntax == match.NativeSyntax && r.Type == match.Prefix:
			u.Path = &gwv1.HTTPPathModifier{Type: gwv1.PrefixMatchHTTPPathModifier, ReplacePrefixMatch: ptr(rw.Target)}
		default:
			u.Path = &gwv1.HTTPPathModifier{Type: gwv1.FullPathHTTPPathModifier, ReplaceFullPath: ptr(rw.Target)}
		}
	}
	if rw.Host != "" {
		if h, why := rewriteHostname(rw.Host); why != "" {
			c.note(ns, name, prefix+"upstream-vhost", why)
		} else {
			u.Hostname = ptr(gwv1.PreciseHostname(h))
		}
	}
	if u.Path != nil || u.Hostname != nil {
		rule.Filters = append(rule.Filters, gwv1.HTTPRouteFilter{Type: gwv1.HTTPRouteFilterURLRewrite, URLRewrite: &u})
	}
	if rw.ForwardedPrefixSet {
		if strings.Contains(rw.ForwardedPrefix, "$") {
			c.note(ns, name, prefix+"x-forwarded-prefix", "value "+strconv.Quote(rw.ForwardedPrefix)+" uses captures; a header modifier sets literal text")
		} else {
			addRequestHeader(rule, gwv1.HTTPHeader{Name: "X-Forwarded-Prefix", Value: rw.ForwardedPrefix}, "")
		}
	}
}

// rewriteHostname is upstream-vhost as URLRewrite's hostname, or why it
// cannot be one. The hostname is a PreciseHostname: a lower-case DNS name
// or IPv4 address without a port (a Host header is case-insensitive, so
// the name is lower-cased). A port has no form: URLRewrite takes none, and
// a RequestHeaderModifier on Host is refused by Envoy Gateway and Istio
// and ignored by others, so a route that sent another Host than the
// Ingress does would be a guess; the Host is left as the client sent it
// and the Ingress is listed.
func rewriteHostname(host string) (string, string) {
	if strings.Contains(host, "$") {
		return "", "host " + strconv.Quote(host) + " uses variables; URLRewrite sets a literal hostname"
	}
	h := strings.ToLower(host)
	if len(validation.IsDNS1123Subdomain(h)) == 0 {
		return h, ""
	}
	if name, port, err := net.SplitHostPort(host); err == nil && port != "" {
		return "", "host " + strconv.Quote(host) + " has a port (" + port + "), which URLRewrite's hostname cannot carry (" + strconv.Quote(name) +
			" without it would be another Host than ingress-nginx sends, and a RequestHeaderModifier on Host is refused by Envoy Gateway and Istio); the requests keep the Host the client sent"
	}
	return "", "host " + strconv.Quote(host) + " is not a DNS name or IPv4 address, which is all URLRewrite's hostname takes; the requests keep the Host the client sent"
}

// addRequestHeader sets (or with remove, removes) a request header in the
// rule's RequestHeaderModifier.
func addRequestHeader(rule *gwv1.HTTPRouteRule, set gwv1.HTTPHeader, remove string) {
	f := filterOf(rule, gwv1.HTTPRouteFilterRequestHeaderModifier)
	if f.RequestHeaderModifier == nil {
		f.RequestHeaderModifier = &gwv1.HTTPHeaderFilter{}
	}
	if remove != "" {
		f.RequestHeaderModifier.Remove = append(f.RequestHeaderModifier.Remove, remove)
	} else {
		f.RequestHeaderModifier.Set = append(f.RequestHeaderModifier.Set, set)
	}
}

func filterOf(rule *gwv1.HTTPRouteRule, t gwv1.HTTPRouteFilterType) *gwv1.HTTPRouteFilter {
	for i := range rule.Filters {
		if rule.Filters[i].Type == t {
			return &rule.Filters[i]
		}
	}
	rule.Filters = append(rule.Filters, gwv1.HTTPRouteFilter{Type: t})
	return &rule.Filters[len(rule.Filters)-1]
}

// snippet converts a configuration-snippet that ramjet translated to
// literal header edits alone; anything else is listed.
func (c *converter) snippet(rule *gwv1.HTTPRouteRule, r *match.Route) {
	c.snippets[nsName{r.Source.Namespace, r.Source.Name}] = true
	sn := r.Snippet
	ok := len(sn.Access) == 0
	for _, op := range sn.Ops {
		ok = ok && op.Cond == nil && len(op.Then) == 0 && len(op.Statuses) == 0 && len(op.Types) == 0 &&
			!strings.Contains(op.Value, "$") && !strings.HasSuffix(op.Name, "*")
		switch op.Kind {
		case match.OpSetInput, match.OpSetUpstream:
			// proxy_set_header edits only what the backend gets; a
			// RequestHeaderModifier does that too.
			ok = ok && op.Always
		case match.OpSetHeader, match.OpClearHeader, match.OpClearInput:
		default:
			ok = false
		}
	}
	if !ok {
		c.note(r.Source.Namespace, r.Source.Name, nginxPrefix+"configuration-snippet", unconvertedWhy["configuration-snippet"])
		return
	}
	var resp gwv1.HTTPHeaderFilter
	for _, op := range sn.Ops {
		switch {
		case (op.Kind == match.OpSetInput || op.Kind == match.OpSetUpstream) && op.Value != "":
			addRequestHeader(rule, gwv1.HTTPHeader{Name: gwv1.HTTPHeaderName(op.Name), Value: op.Value}, "")
		case op.Kind == match.OpSetInput, op.Kind == match.OpSetUpstream, op.Kind == match.OpClearInput:
			addRequestHeader(rule, gwv1.HTTPHeader{}, op.Name)
		case op.Kind == match.OpSetHeader && op.Value != "":
			resp.Set = append(resp.Set, gwv1.HTTPHeader{Name: gwv1.HTTPHeaderName(op.Name), Value: op.Value})
		default:
			resp.Remove = append(resp.Remove, op.Name)
		}
	}
	if len(resp.Set)+len(resp.Remove) > 0 {
		rule.Filters = append(rule.Filters, gwv1.HTTPRouteFilter{Type: gwv1.HTTPRouteFilterResponseHeaderModifier, ResponseHeaderModifier: &resp})
	}
}

// clusterService is a Service's cluster DNS name.
var clusterService = regexp.MustCompile(`^([a-z0-9]([-a-z0-9]*[a-z0-9])?)\.([a-z0-9]([-a-z0-9]*[a-z0-9])?)\.svc(\.cluster\.local)?$`)

// mirrorService is a mirror-target naming a cluster Service, whole
// request-URI kept, as the RequestMirror's backendRef.
func mirrorService(m *match.Mirror, routeNS string) (gwv1.BackendObjectReference, string) {
	u, err := url.Parse(strings.TrimSuffix(m.Target, "$request_uri"))
	why := "target " + strconv.Quote(m.Target) + " is not http://<service>.<namespace>.svc[:port][$request_uri], and RequestMirror sends to a Service with the request as it is"
	if err != nil || u.Scheme != "http" || u.RawQuery != "" || u.Path != "" || u.User != nil {
		return gwv1.BackendObjectReference{}, why
	}
	sm := clusterService.FindStringSubmatch(u.Hostname())
	if sm == nil {
		return gwv1.BackendObjectReference{}, why
	}
	port := 80
	if p := u.Port(); p != "" {
		port, _ = strconv.Atoi(p)
	}
	ref := gwv1.BackendObjectReference{Name: gwv1.ObjectName(sm[1]), Port: ptr(gwv1.PortNumber(port))}
	if sm[3] != routeNS {
		ref.Namespace = ptr(gwv1.Namespace(sm[3]))
	}
	return ref, ""
}

func ptr[T any](v T) *T { return &v }

// hostLabel is ingress2gateway's name for a host: its letters and digits,
// other runs as "-", "all-hosts" for the catch-all; a wildcard's "*."
// reads "wildcard-", so that it differs from the name it covers.
func hostLabel(host string) string {
	if host == "" || host == "*" {
		return "all-hosts"
	}
	if rest, ok := strings.CutPrefix(host, "*."); ok {
		host = "wildcard." + rest
	}
	return fitName(strings.Trim(nonAlnum.ReplaceAllString(strings.ToLower(host), "-"), "-"), maxLabel)
}

// Name lengths: a host's label leaves room in a listener's name
// ("https-" + label + "-NN") and a route's name (Ingress name, label and
// "-http-NN" suffixes) for the 253 bytes an object or section name holds.
const (
	maxLabel     = 200
	maxRouteName = 240
)

// fitName is name when it has at most n bytes, else its first bytes and
// a hash of the whole, so that two long names stay apart and the result
// is still a valid name (ending in a letter or digit).
func fitName(name string, n int) string {
	if len(name) <= n {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	return strings.TrimRight(name[:n-9], "-.") + "-" + hex.EncodeToString(sum[:4])
}

// objectName is name when it is a valid object name (a DNS-1123
// subdomain) of at most n bytes. Otherwise (an IngressClass named in an
// annotation, "Nginx_Public"; an Ingress read from a file no API server
// checked) it is name lower-cased, each dot-separated part's other bytes
// as "-", followed by a hash of name, so that two names made valid stay
// apart and differ from every valid one but by chance; then fitName.
func objectName(name string, n int) string {
	if len(validation.IsDNS1123Subdomain(name)) == 0 {
		return fitName(name, n)
	}
	var parts []string
	for _, p := range strings.Split(strings.ToLower(name), ".") {
		if p = strings.Trim(nonLowerAlnum.ReplaceAllString(p, "-"), "-"); p != "" {
			parts = append(parts, p)
		}
	}
	sum := sha256.Sum256([]byte(name))
	out := strings.Join(parts, ".")
	if out == "" {
		out = "x"
	}
	return fitName(out+"-"+hex.EncodeToString(sum[:4]), n)
}

var nonLowerAlnum = regexp.MustCompile(`[^a-z0-9]+`)

// unique returns name, or name-2, name-3 … when used has it already, and
// records what it returns: two hosts can share a label ("a-b.io",
// "a.b.io"), and listener and route names must not.
func unique(used map[string]bool, name string) string {
	out := name
	for i := 2; used[out]; i++ {
		out = name + "-" + strconv.Itoa(i)
	}
	used[out] = true
	return out
}

var nonAlnum = regexp.MustCompile(`[^a-zA-Z0-9]+`)

// finish assembles the objects and the list, sorted.
func (c *converter) finish() Migration {
	var m Migration
	grants := make(map[nsName]bool) // Secret namespace, Gateway namespace
	gkeys := make([]nsName, 0, len(c.gateways))
	gwNames := make(map[string]bool) // namespace/name of the Gateways
	for k := range c.gateways {
		gkeys = append(gkeys, k)
	}
	slices.SortFunc(gkeys, func(a, b nsName) int { return cmp.Or(cmp.Compare(a.ns, b.ns), cmp.Compare(a.name, b.name)) })
	// Each class's first Gateway is named after it (made a valid name);
	// the names are all taken before a class's next Gateway picks one.
	first := make(map[nsName]string, len(gkeys))
	for _, k := range gkeys {
		first[k] = strings.TrimPrefix(unique(gwNames, k.ns+"/"+objectName(k.name, maxRouteName)), k.ns+"/")
	}
	for _, k := range gkeys {
		gh := c.gateways[k]
		hosts := make([]string, 0, len(gh.hosts))
		for h := range gh.hosts {
			hosts = append(hosts, h)
		}
		slices.Sort(hosts)
		used := make(map[string]bool)
		gh.label = make(map[string]string, len(hosts))
		gh.gateway = make(map[string]string, len(hosts))
		var gw *gwv1.Gateway
		for _, h := range hosts {
			_, tls := gh.tls[h]
			if gw == nil || len(gw.Spec.Listeners)+1+btoi(tls) > maxListeners {
				// A Gateway holds 64 listeners: the class's next one
				// takes the hosts that do not fit.
				name := first[k]
				if gw != nil {
					name = strings.TrimPrefix(unique(gwNames, k.ns+"/"+first[k]), k.ns+"/")
				}
				gw = &gwv1.Gateway{TypeMeta: metav1.TypeMeta{APIVersion: gwv1.GroupVersion.String(), Kind: "Gateway"},
					ObjectMeta: metav1.ObjectMeta{Namespace: k.ns, Name: name}}
				gw.Spec.GatewayClassName = gwv1.ObjectName(cmp.Or(c.opts.GatewayClassName, objectName(k.name, maxRouteName)))
				m.Gateways = append(m.Gateways, gw)
			}
			gh.label[h], gh.gateway[h] = unique(used, hostLabel(h)), gw.Name
			gw.Spec.Listeners = append(gw.Spec.Listeners, c.gatewayListener(k.ns, h, gh.label[h], gwv1.HTTPProtocolType, nsName{}))
			if s, ok := gh.tls[h]; ok {
				gw.Spec.Listeners = append(gw.Spec.Listeners, c.gatewayListener(k.ns, h, gh.label[h], gwv1.HTTPSProtocolType, s))
				if s.ns != k.ns {
					grants[nsName{s.ns, k.ns}] = true
				}
			}
		}
	}
	for g := range grants {
		m.ReferenceGrants = append(m.ReferenceGrants, &gwv1.ReferenceGrant{
			TypeMeta:   metav1.TypeMeta{APIVersion: gwv1.GroupVersion.String(), Kind: "ReferenceGrant"},
			ObjectMeta: metav1.ObjectMeta{Namespace: g.ns, Name: "gateways-from-" + g.name},
			Spec: gwv1.ReferenceGrantSpec{
				From: []gwv1.ReferenceGrantFrom{{Group: Group, Kind: "Gateway", Namespace: gwv1.Namespace(g.name)}},
				To:   []gwv1.ReferenceGrantTo{{Group: "", Kind: "Secret"}},
			},
		})
	}
	keys := make([]routeKey, 0, len(c.routes))
	for k := range c.routes {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b routeKey) int {
		return cmp.Or(cmp.Compare(a.ns, b.ns), cmp.Compare(a.name, b.name), cmp.Compare(a.host, b.host))
	})
	names := make(map[string]bool) // namespace/name of the routes so far
	for _, k := range keys {
		g := c.routes[k]
		gh, gk := c.gateway(g), c.gatewayOf(g)
		name := strings.TrimPrefix(unique(names, g.key.ns+"/"+objectName(g.key.name+"-"+gh.label[g.key.host], maxRouteName)), g.key.ns+"/")
		parent := func(h string, proto gwv1.ProtocolType) gwv1.ParentReference {
			p := gwv1.ParentReference{Name: gwv1.ObjectName(gh.gateway[h]), SectionName: ptr(gwv1.SectionName(listenerName(gh.label[h], proto)))}
			if gk.ns != g.key.ns {
				p.Namespace = ptr(gwv1.Namespace(gk.ns))
			}
			return p
		}
		var parents, httpParents []gwv1.ParentReference
		for _, h := range g.hosts {
			if _, ok := gh.tls[h]; ok {
				parents = append(parents, parent(h, gwv1.HTTPSProtocolType))
			}
			httpParents = append(httpParents, parent(h, gwv1.HTTPProtocolType))
		}
		if !g.redirect {
			parents = append(parents, httpParents...)
		}
		// A route holds 16 rules: the rest go to more routes, name-2 …
		emit := func(name string, parents []gwv1.ParentReference, rules []gwv1.HTTPRouteRule) {
			for i := 0; i < len(rules); i += maxRules {
				n := name
				if i > 0 {
					n = strings.TrimPrefix(unique(names, g.key.ns+"/"+name), g.key.ns+"/")
				}
				m.HTTPRoutes = append(m.HTTPRoutes, httpRouteOf(g, n, parents, rules[i:min(i+maxRules, len(rules))]))
			}
		}
		if len(parents) > 0 {
			emit(name, parents, g.rules)
		}
		if g.redirect {
			emit(strings.TrimPrefix(unique(names, g.key.ns+"/"+name+"-http"), g.key.ns+"/"), httpParents, g.httpOnly)
		}
	}
	sortObjects(m.Gateways, func(g *gwv1.Gateway) metav1.Object { return g })
	sortObjects(m.ReferenceGrants, func(g *gwv1.ReferenceGrant) metav1.Object { return g })
	sortObjects(m.HTTPRoutes, func(r *gwv1.HTTPRoute) metav1.Object { return r })
	for k, ing := range c.ingresses {
		keys := make([]string, 0, len(ing.Annotations))
		for key := range ing.Annotations {
			keys = append(keys, key)
		}
		slices.Sort(keys)
		for _, key := range keys {
			short, ok := strings.CutPrefix(key, nginxPrefix)
			if !ok {
				short, ok = strings.CutPrefix(key, ramjetPrefix)
			}
			if !ok {
				continue
			}
			if why, listed := c.notes[k][key]; listed {
				m.Unconverted = append(m.Unconverted, Unconverted{Namespace: k.ns, Name: k.name, Annotation: key, Why: why})
				delete(c.notes[k], key)
				continue
			}
			if short == "configuration-snippet" && !c.snippets[k] && !c.withheld[k] {
				m.Unconverted = append(m.Unconverted, Unconverted{Namespace: k.ns, Name: k.name, Annotation: key,
					Why: "ramjet does not apply it under these options (allow-snippet-annotations, annotations-risk-level), so neither do the objects"})
				continue
			}
			if why, ok := c.affinity[k]; ok && affinityKey(short) {
				if why != "" {
					m.Unconverted = append(m.Unconverted, Unconverted{Namespace: k.ns, Name: k.name, Annotation: key, Why: why})
				}
				continue
			}
			if converted[short] || short == "preserve-trailing-slash" && ing.Annotations[key] == "true" {
				continue // a RequestRedirect keeps the slash too
			}
			if short == "use-port-in-redirects" && ing.Annotations[key] == "false" {
				continue // nor does a RequestRedirect name port 443
			}
			m.Unconverted = append(m.Unconverted, Unconverted{Namespace: k.ns, Name: k.name, Annotation: key, Why: whyNot(short)})
		}
		for key, why := range c.notes[k] { // fields, and keys the Ingress does not set itself
			m.Unconverted = append(m.Unconverted, Unconverted{Namespace: k.ns, Name: k.name, Annotation: key, Why: why})
		}
	}
	slices.SortFunc(m.Unconverted, func(a, b Unconverted) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name), cmp.Compare(a.Annotation, b.Annotation))
	})
	return m
}

// whyNot is the reason for the annotation, or for the longest family
// ("proxy-ssl" of "proxy-ssl-verify") that has one.
func whyNot(short string) string {
	why, best := noEquivalent, -1
	for k, w := range unconvertedWhy {
		if (short == k || strings.HasPrefix(short, k+"-")) && len(k) > best {
			why, best = w, len(k)
		}
	}
	return why
}

func httpRouteOf(g *routeGroup, name string, parents []gwv1.ParentReference, rules []gwv1.HTTPRouteRule) *gwv1.HTTPRoute {
	r := &gwv1.HTTPRoute{TypeMeta: metav1.TypeMeta{APIVersion: gwv1.GroupVersion.String(), Kind: "HTTPRoute"},
		ObjectMeta: metav1.ObjectMeta{Namespace: g.key.ns, Name: name}}
	r.Spec.ParentRefs = parents
	if g.key.host != "" {
		for _, h := range g.hosts {
			r.Spec.Hostnames = append(r.Spec.Hostnames, gwv1.Hostname(h))
		}
	}
	r.Spec.Rules = rules
	return r
}

func listenerName(label string, p gwv1.ProtocolType) string {
	return strings.ToLower(string(p)) + "-" + label
}

func (c *converter) gatewayListener(ns, host, label string, p gwv1.ProtocolType, secret nsName) gwv1.Listener {
	from := gwv1.NamespacesFromSame
	if c.opts.GatewayNamespace != "" {
		from = gwv1.NamespacesFromAll
	}
	l := gwv1.Listener{Name: gwv1.SectionName(listenerName(label, p)), Protocol: p, Port: httpPort,
		AllowedRoutes: &gwv1.AllowedRoutes{Namespaces: &gwv1.RouteNamespaces{From: ptr(from)}}}
	if host != "" {
		l.Hostname = ptr(gwv1.Hostname(host))
	}
	if p == gwv1.HTTPSProtocolType {
		l.Port = httpsPort
		ref := gwv1.SecretObjectReference{Name: gwv1.ObjectName(secret.name)}
		if secret.ns != ns {
			ref.Namespace = ptr(gwv1.Namespace(secret.ns))
		}
		l.TLS = &gwv1.ListenerTLSConfig{Mode: ptr(gwv1.TLSModeTerminate), CertificateRefs: []gwv1.SecretObjectReference{ref}}
	}
	return l
}

func sortObjects[T any](s []T, meta func(T) metav1.Object) {
	slices.SortFunc(s, func(a, b T) int {
		x, y := meta(a), meta(b)
		return cmp.Or(cmp.Compare(x.GetNamespace(), y.GetNamespace()), cmp.Compare(x.GetName(), y.GetName()))
	})
}

// WriteYAML writes the Gateways, ReferenceGrants and HTTPRoutes, in that
// order, as one YAML stream
// kubectl apply takes: documents separated by "---", without status or
// empty creation timestamps.
func (m Migration) WriteYAML(w io.Writer) error {
	var objs []any
	for _, g := range m.Gateways {
		objs = append(objs, g)
	}
	for _, g := range m.ReferenceGrants {
		objs = append(objs, g)
	}
	for _, r := range m.HTTPRoutes {
		objs = append(objs, r)
	}
	for i, o := range objs {
		j, err := json.Marshal(o)
		if err != nil {
			return err
		}
		var doc map[string]any
		if err := json.Unmarshal(j, &doc); err != nil {
			return err
		}
		delete(doc, "status")
		if md, ok := doc["metadata"].(map[string]any); ok {
			delete(md, "creationTimestamp")
		}
		y, err := yaml.Marshal(doc)
		if err != nil {
			return err
		}
		if i > 0 {
			if _, err := io.WriteString(w, "---\n"); err != nil {
				return err
			}
		}
		if _, err := w.Write(y); err != nil {
			return err
		}
	}
	return nil
}

// headerRewriteOf is p's rewrite for the key of that name.
func headerRewriteOf(p *match.Proxying, key string) *match.HeaderRewrite {
	switch key {
	case "proxy-redirect-from":
		return p.Redirect
	case "proxy-cookie-domain":
		return p.CookieDomain
	}
	return p.CookiePath
}
