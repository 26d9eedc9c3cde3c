package compile

import (
	"io"
	"net/netip"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"

	"ramjet.dev/ramjet/match"
)

// Compile turns a snapshot into a routing table and the warnings found on
// the way (SPEC §1–§15). It never fails as a whole: a broken object degrades
// only itself and comes back as a warning. The same objects in any order
// give the same table, the same warnings in the same order and the same
// digest.
func Compile(s Snapshot, o Options) Result {
	b := newBuilder(s, o)
	for _, step := range buildSteps {
		step(b)
	}
	ws := append(b.warnings, s.Warnings...) // the builder's own slice: the snapshot's is not reordered
	return Result{Table: b.table, Warnings: rateWarnings(s, sortWarnings(ws)), Claimed: b.claimed, Unclaimed: b.unclaimed}
}

// rateWarnings gives each warning not yet rated its severity, read with
// the annotations of the Ingress it is about (Warning.SeverityFor), so
// that whoever shows it later needs no snapshot to say the same.
func rateWarnings(s Snapshot, ws []Warning) []Warning {
	var ingresses map[Ref]*networkingv1.Ingress
	for i := range ws {
		w := &ws[i]
		if w.Rated != "" {
			continue
		}
		var ann map[string]string
		if w.Reason == AnnotationUnsupported && w.Object.Kind == "Ingress" {
			if ingresses == nil {
				// Of two copies of one Ingress, the one claimIngresses
				// compiled.
				ingresses = make(map[Ref]*networkingv1.Ingress, len(s.Ingresses))
				for _, ing := range s.Ingresses {
					if ing != nil { // skipped, as claimIngresses skips it
						keepOne(ingresses, ingressRef(ing.Namespace, ing.Name), ing)
					}
				}
			}
			if ing := ingresses[w.Object]; ing != nil {
				ann = ing.Annotations
			}
		}
		w.Rated = w.SeverityFor(ann)
	}
	return ws
}

// Result is what Compile produces.
type Result struct {
	// Table is the routing table to publish.
	Table *match.Table
	// Warnings are sorted by object, field, reason, message and winner.
	Warnings []Warning
	// Claimed lists the Ingresses this controller claimed (SPEC §2) in
	// Ingress order (SPEC §7): the ones that get status and Events.
	Claimed []Ref
	// Unclaimed summarises the Ingresses read and not claimed
	// (SummarizeUnclaimed), for a caller to say so.
	Unclaimed Unclaimed
}

// String renders the table (match.Table.String) followed by one line per
// warning, "warning <Warning.String()>", newlines in messages escaped: the
// format of golden files.
func (r Result) String() string {
	var b strings.Builder
	b.WriteString(r.Table.String())
	for _, w := range r.Warnings {
		b.WriteString("warning " + strings.ReplaceAll(w.String(), "\n", `\n`) + "\n")
	}
	return b.String()
}

// WriteText writes String's rendering to w.
func (r Result) WriteText(w io.Writer) error {
	_, err := io.WriteString(w, r.String())
	return err
}

// buildSteps is the build as an ordered list of small processors over one
// build context. Each step reads what the earlier ones left in the builder.
var buildSteps = []func(*builder){
	(*builder).indexObjects,               // Services with their EndpointSlices; Secrets
	(*builder).claimIngresses,             // SPEC §2, and Ingress order (§7)
	(*builder).inspectIngresses,           // withholds what ingress-nginx's deep inspection ignores
	(*builder).prepareDefaults,            // §1: the ConfigMap's warnings and location defaults
	(*builder).readAnnotations,            // §11
	(*builder).resolveRedirectAnnotations, // §11.1: redirect and host annotations; withholds what ingress-nginx ignores
	(*builder).splitCanaries,              // §10: a canary never routes as an ordinary Ingress
	(*builder).warnTracingModuleWide,      // §23: where ingress-nginx would trace every location
	(*builder).buildHosts,                 // §3: virtual hosts and their creators
	(*builder).markRegexHosts,             // §11.1: hosts in ingress-nginx's regex mode
	(*builder).checkRewrites,              // §11.1: rewrites that will not do what they say
	(*builder).buildRoutes,                // §4, §7: paths, route keys, conflicts, backends (§8)
	(*builder).buildHTTPRoutes,            // §20: route sources' rules beside the Ingresses' paths
	(*builder).buildTLSRoutes,             // §20: TLS passthrough routes by SNI
	(*builder).buildDefaultBackends,       // §6
	(*builder).attachCanaries,             // §10: canaries join their primaries' backends
	(*builder).orderClaims,                // each backend's serving Ingresses, oldest first
	(*builder).applyBackendAnnotations,    // §11.1: service-upstream, default-backend
	(*builder).decideProtocols,            // §8, §11.1: backend-protocol, oldest decides
	(*builder).decideRouteProtocols,       // §20: GRPCRoutes' backends are dialled as gRPC
	(*builder).decideAppProtocols,         // §20: HTTPRoutes' backends by their Service port's appProtocol
	(*builder).decideBalancing,            // §9, §11.3: load-balance, upstream-hash-by, oldest decides
	(*builder).decideAffinity,             // §9: session affinity, oldest decides; sticky canaries share it
	(*builder).applyRouteAffinity,         // §20: route sources' session persistence on their backends
	(*builder).buildTLS,                   // §12: TLS hosts and certificates
	(*builder).buildListenerCertificates,  // §20: Gateway listeners' certificates for the hosts left
	(*builder).applyHostActions,           // §11.1: redirects, app-root, aliases, www twins
	(*builder).applyFallbackSettings,      // §6: each host's fallback location settings (§12 redirects, policies)
	(*builder).applyTLSEnds,               // §11, §12: backend TLS, client certificates, passthrough
	(*builder).applyServerTLS,             // §12: a host's ssl-ciphers
	(*builder).applyResponses,             // §11: error pages, bandwidth, mirror, logs of every location
	(*builder).applySnippets,              // §11.9: snippets' translations on routes and hosts
	(*builder).applyCustomHeaders,         // §11: custom-headers, after each location's snippet
	(*builder).buildL4Services,            // §22: TCP and UDP services
	(*builder).assemble,                   // match.New: the table and its digest (§15)
}

// ingress is one claimed Ingress with what the build learned about it.
type ingress struct {
	obj *networkingv1.Ingress
	// key names a pseudo-Ingress (configmap.go), which has no obj; name
	// gives every Ingress's.
	key string
	// rank is the position in Ingress order (SPEC §7), 0 the oldest.
	rank int
	// createdSec and createdNsec are creationTimestamp, the sort key.
	createdSec  int64
	createdNsec int
	ann         annotationValues
	// rules holds, per spec.rules index, the rule's virtual host, or nil
	// when the rule was rejected. It is a window on one shared slice.
	rules []ruleHost
	// defaultBackendOK: spec.defaultBackend is set and names a Service.
	defaultBackendOK bool
	// routed are the backends its rule paths route to, kept only when it
	// asks for affinity: cookie, which reaches no other (decideAffinity).
	routed []*match.Backend
}

// name is "namespace/name", or a pseudo-Ingress's key.
func (ing *ingress) name() string {
	if ing.obj == nil {
		return ing.key
	}
	return ing.obj.Namespace + "/" + ing.obj.Name
}

// ref names the Ingress in warnings.
func (ing *ingress) ref() Ref { return ingressRef(ing.obj.Namespace, ing.obj.Name) }

// source names a declaration of the Ingress in the table.
func (ing *ingress) source(field string) match.Source {
	return match.Source{Namespace: ing.obj.Namespace, Name: ing.obj.Name, Field: field}
}

type ruleHost struct {
	vhost *vhost // nil when the rule was rejected
}

// vhost is a virtual host under construction.
type vhost struct {
	vh *match.VirtualHost
	// creator is the first Ingress in Ingress order that names the host;
	// nil for the catch-all.
	creator *ingress
	// settingsFrom supplies the host-level redirect settings: the creator,
	// or for the catch-all the Ingress whose spec.defaultBackend is its
	// fallback; nil means the options decide.
	settingsFrom *ingress
	// routeIndex finds a route by key once the host has many; a few are
	// scanned (see route).
	routeIndex map[routeKey]*match.Route
	// routeSlices supply the first room for the host's routes.
	routeSlices *window[*match.Route]
	// regex is set when the host is in ingress-nginx's regex mode (rewrite.go).
	regex *regexMode
}

// objKey names a namespaced object.
type objKey struct{ ns, name string }

// builder is the build context shared by the steps.
type builder struct {
	snap Snapshot
	opts Options

	// Indexes by namespace and name.
	services nameIndex[*serviceEntry]
	// lastService is the entry serviceEntry found last: an Ingress's
	// paths mostly name one Service.
	lastService *serviceEntry
	lastKey     objKey
	secrets     map[objKey]*corev1.Secret
	// parsed caches each Secret's key pair, so a Secret that many
	// Ingresses name is parsed once.
	parsed map[objKey]*parsedSecret

	// Claimed Ingresses in Ingress order, and by name once a conflict
	// message needs them.
	ingresses []*ingress
	byKey     map[objKey]*ingress
	// claimed names every claimed Ingress in Ingress order, canaries too.
	claimed []Ref
	// unclaimed summarises the Ingresses not claimed.
	unclaimed Unclaimed
	// canaries are the canary Ingresses in Ingress order, kept out of
	// ingresses (SPEC §10).
	canaries []*ingress
	// canaryRules holds, for each canary backend, the Ingress whose rules
	// it serves, none when that one is not a canary (canaryRuleOwners).
	canaryRules map[*match.Backend]*ingress
	// canaryRulesTold: the canary Ingresses told their rules are not
	// applied.
	canaryRulesTold map[*ingress]bool
	// canaryWithdrawn: the canary backends a declaration without a
	// primary withdrew (withdrawCanary); canaryAttached the attachments
	// settleCanaries settles.
	canaryWithdrawn map[*match.Backend]canaryWithdrawal
	canaryAttached  []canaryAttachment

	// Virtual hosts by name ("" is the catch-all) and in creation order.
	vhosts     nameIndex[*vhost]
	vhostOrder []*vhost
	catchAll   *vhost

	// views are the Gateway listeners' own hosts (listeners.go).
	views viewState
	// routeAffinity are the route sources' routes asking for session
	// affinity (routeaffinity.go).
	routeAffinity []routeAffinity

	// regexps caches compiled patterns (or their error) by pattern.
	regexps map[string]regexResult
	// prefixLike are the served ImplementationSpecific paths ingress-nginx
	// matches as prefixes (paths.go).
	prefixLike []prefixLike
	// grpcBackends are the backends GRPCRoutes send to (grpcroute.go).
	grpcBackends map[*backendInfo]grpcUse
	// routeBackends are the backends HTTPRoutes send to (appprotocol.go).
	routeBackends map[*backendInfo]grpcUse
	// caseSensitiveRegexps are the Gateway API's patterns, made on first use.
	caseSensitiveRegexps map[string]regexResult

	// Backends in creation order, and the global default's resolution.
	backendList []*backendInfo
	global      *resolution
	// globalResp is the Response of locations without their own (response.go).
	globalResp *match.Response
	// tracingDefault is the Tracing of locations without tracing
	// annotations (tracing.go), made on first use.
	tracingDefault *match.Tracing

	// TLS results: certificates oldest first, and every valid host listed
	// under a claimed Ingress's spec.tls, sorted.
	certs    []*match.Certificate
	tlsHosts []string

	// Allocation slabs for what there is one of per declaration.
	routeSlab   slab[match.Route]
	backendSlab slab[match.Backend]
	infoSlab    slab[backendInfo]
	hostSlab    slab[match.VirtualHost]
	vhostSlab   slab[vhost]
	resolveSlab slab[resolution]
	strs        strArena
	strWindows  window[string]
	routeSlices window[*match.Route]
	endpointBuf []netip.AddrPort
	textBuf     []byte

	warnings []Warning
	table    *match.Table
	// l4 are the TCP and UDP services (stream.go).
	l4 []*match.L4Service
	// passthroughRoutes are the TLS passthrough routes (tlsroute.go).
	passthroughRoutes []*match.PassthroughRoute

	// globalAuthX is Options.GlobalAuth parsed (authoptions.go).
	globalAuthX    *match.ExternalAuth
	globalAuthDone bool
	// defaults holds the ConfigMap's location defaults (configmap.go), and
	// fallback those with block-cidrs; nil without.
	defaults, fallback *ingress
}

func newBuilder(s Snapshot, o Options) *builder {
	return &builder{
		snap:       s,
		opts:       o.WithConfigMap(),
		regexps:    make(map[string]regexResult),
		vhosts:     newNameIndex(len(s.Ingresses)+1, vhostKey),
		vhostOrder: make([]*vhost, 0, len(s.Ingresses)+1),
	}
}

// assemble hands the results to match.New, which sorts them, builds the
// lookup index and digests the finished table.
func (b *builder) assemble() {
	hosts := make([]*match.VirtualHost, 0, len(b.vhostOrder))
	for _, v := range b.vhostOrder {
		hosts = append(hosts, v.vh)
	}
	backends := make([]*match.Backend, 0, len(b.backendList))
	for _, bi := range b.backendList {
		if bi.used {
			backends = append(backends, bi.b)
		}
	}
	hosts = b.assembleViews(hosts)
	table, err := match.New(match.Spec{
		Listeners:      b.snap.Listeners,
		VirtualHosts:   hosts,
		Backends:       backends,
		Certificates:   b.certs,
		TLSHosts:       b.tlsHosts,
		Inputs:         b.opts.digestInputs(),
		L4Services:     b.l4,
		StreamSettings: b.opts.StreamSettings,

		PassthroughRoutes:    b.passthroughRoutes,
		PassthroughListeners: b.snap.PassthroughListeners,
	})
	if err != nil {
		// Every value here came from match's constructors or was checked
		// when its annotation was read: a refusal is a bug in compile.
		panic("compile: match.New refused the compiled table: " + err.Error())
	}
	b.table = table
}
