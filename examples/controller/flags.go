package main

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"

	"ramjet.dev/ramjet/compile"
	"ramjet.dev/ramjet/router/configmap"
	"ramjet.dev/ramjet/status"
)

// Fixed timings of the cluster loop (SPEC §17) and client-go's usual
// leader election timings.
const (
	defaultDebounce      = 200 * time.Millisecond
	defaultMaxWait       = time.Second
	defaultLeaseDuration = 15 * time.Second
	defaultRenewDeadline = 10 * time.Second
	defaultRetryPeriod   = 2 * time.Second

	// nginx's keepalive_timeout and client_header_timeout (SPEC §13).
	defaultIdleTimeout   = 75 * time.Second
	defaultHeaderTimeout = 60 * time.Second
	// keepaliveRequests is ingress-nginx's keep-alive-requests default
	// (nginx's keepalive_requests): the requests an HTTP/1 connection
	// serves before it closes, the streams an HTTP/2 one serves before
	// GOAWAY (router/h1 and router/h2 count them, net/http's servers
	// through countRequests).
	keepaliveRequests = 1000
	// The values of -http1-server.
	http1Ramjet  = "ramjet"
	http1NetHTTP = "net/http"
	// defaultShutdownTimeout bounds how long requests still in flight when
	// the drain ends may take before their connections are closed:
	// ingress-nginx's worker-shutdown-timeout default. A stop with nothing
	// in flight does not wait for it.
	defaultShutdownTimeout = 240 * time.Second
)

// config is everything the command line decides. parseFlags validates it
// completely, so a malformed value stops the process before any listener
// opens or any table exists (SPEC §1).
type config struct {
	options compile.Options
	// untrimmedCache keeps whole objects in the informer caches (see
	// trimObject); only the scale benchmark sets it, to measure the trim.
	untrimmedCache bool
	httpAddr       string
	httpsAddr      string
	debugAddr      string

	// defaultBackendService is --default-backend-service: the global
	// default backend is its first port, looked up at every compile.
	defaultBackendService *types.NamespacedName
	// defaultCertificate is --default-ssl-certificate: the Secret served
	// to TLS names no Ingress covers, reloaded at every compile.
	defaultCertificate *types.NamespacedName
	// useForwardedHeaders is --use-forwarded-headers: X-Forwarded-Proto
	// and, from -proxy-real-ip-cidr peers, X-Forwarded-For are believed.
	useForwardedHeaders bool
	// computeFullForwardedFor is --compute-full-forwarded-for: with
	// useForwardedHeaders the backend's X-Forwarded-For is the client's
	// with the peer appended, not the client address alone.
	computeFullForwardedFor bool
	// proxyRealIPCIDR is --proxy-real-ip-cidr: the peers whose
	// X-Forwarded-For, and PROXY header, say who the client is.
	proxyRealIPCIDR []netip.Prefix
	// useProxyProtocol is --use-proxy-protocol: the HTTP and HTTPS
	// listeners read a PROXY protocol v1/v2 header on each connection.
	useProxyProtocol bool
	healthPath       string
	// maxBodySize is --proxy-body-size in bytes, router.Options.MaxBodySize:
	// negative for "0", no limit.
	maxBodySize int64
	// configMap is --configmap: the ingress-nginx ConfigMap whose keys
	// set what no flag given on the command line (flagsSet) sets.
	configMap *types.NamespacedName
	flagsSet  []string
	// routerKeys are the ConfigMap's router keys, which
	// configMapRouterOptions applies over the flags' settings (zero: none).
	routerKeys configmap.Settings
	// logKeys are the ConfigMap's access log keys (accesslog.go).
	logKeys accessLogKeys
	// accessLog is the access log whose format follows
	// log-format-upstream (configmap.go); nil without --configmap, shared
	// by the copies of the configuration.
	accessLog *liveAccessLog
	// modSecurity is the ConfigMap's ModSecurity settings (modsecurity.go).
	modSecurity modSecuritySettings
	// otel is the ConfigMap's OpenTelemetry exporter settings, tracing the
	// router's Tracer that follows them (otel.go); nil without a ConfigMap.
	otel    otelSettings
	tracing *liveTracer
	// nginxStatus is the ConfigMap's /nginx_status allow lists, and
	// liveNginxStatus the catch-all's, as the latest rebuild left them
	// (healthz.go); nil without a ConfigMap.
	nginxStatus     nginxStatusAllow
	liveNginxStatus *atomic.Pointer[nginxStatusAllow]

	// Metrics on the debug listener, as ingress-nginx's flags.
	enableMetrics           bool
	metricsPerHost          bool
	metricsPerUndefinedHost bool
	reportStatusClasses     bool
	// The request histograms' buckets (--time-buckets, --length-buckets,
	// --size-buckets) and the request metrics left out
	// (--exclude-socket-metrics, without the nginx_ingress_controller_
	// prefix), as ingress-nginx's flags; nil buckets are its defaults.
	timeBuckets, lengthBuckets, sizeBuckets []float64
	excludeSocketMetrics                    []string
	// podName and podNamespace are $POD_NAME and $POD_NAMESPACE (else
	// "default"): the controller_pod and controller_namespace labels.
	podName, podNamespace string

	// The access log: one line per request to accessLogOut (run's
	// stdout; nil: os.Stdout), unless enableAccessLog is false.
	enableAccessLog bool
	accessLogFormat string
	accessLogOut    io.Writer
	// reopenLogs delivers run's SIGUSR1: the access log files are opened
	// anew, as nginx reopens its logs (nil: never).
	reopenLogs <-chan os.Signal
	// verbosity is ingress-nginx's --v (klog's), nil when not given:
	// logLevel reads it before RAMJET_LOG.
	verbosity *int
	// drain is how long the listeners keep serving after a stop signal,
	// with /readyz failing, before they close.
	drain time.Duration
	// noop names the ingress-nginx flags given with a value that asks for
	// what ramjet does anyway; logged at start.
	noop []string

	// udpMaxSessions bounds each UDP service port's client sessions
	// (stream_udp.go); 0: defaultUDPSessions. The services ConfigMaps
	// are options.TCPServices and options.UDPServices.
	udpMaxSessions int

	// cpuProfile is where a CPU profile of the whole run goes, for a
	// profile-guided build (default.pgo).
	cpuProfile string

	// Offline mode: set when manifests is not empty.
	manifests    string
	demoBackends bool
	pollInterval time.Duration

	// Cluster mode.
	kubeconfig string
	// namespace limits the namespaced watches; "" watches all namespaces.
	namespace        string
	publishService   *types.NamespacedName
	publishAddresses []string // canonical, from status.ParseAddresses
	noStatusUpdate   bool
	// nodeInternalIP: with neither publish option, status advertises
	// the nodes' InternalIP addresses even where they have ExternalIP
	// ones (ingress-nginx's --report-node-internal-ip-address).
	nodeInternalIP bool
	// statusNodeRefresh is how long those nodes are taken as read; 0:
	// defaultNodeRefresh.
	statusNodeRefresh time.Duration
	resync            time.Duration
	gatewayRecheck    time.Duration // how often to look for the Gateway API CRDs; 0: defaultGatewayRecheck
	gatewaySyncWait   time.Duration // how long the first table waits for their caches; 0: defaultGatewaySyncWait

	// gatewayHTTPPort and gatewayHTTPSPort are the Gateway listener ports
	// the -http-addr and -https-addr listeners serve (SPEC §20).
	gatewayHTTPPort, gatewayHTTPSPort int

	electionID        string
	electionNamespace string
	identity          string

	// The admission webhook (admission.go): ingress-nginx's
	// --validating-webhook address and its certificate and key files,
	// and --admission-reject-severity ("" refuses only as ingress-nginx).
	webhookAddr, webhookCert, webhookKey string
	admissionRejectSeverity              compile.Severity

	// Not flags: fixed by SPEC §17 and client-go's defaults, shortened by
	// tests.
	debounce      time.Duration
	maxWait       time.Duration
	leaseDuration time.Duration
	renewDeadline time.Duration
	retryPeriod   time.Duration
	// http1Server serves HTTP/1 on the traffic listeners: http1Ramjet
	// (or "") the loop of router/h1, http1NetHTTP net/http's.
	http1Server string
	// http2Server serves the HTTP/2 the loop hands over: http1Ramjet (or
	// "") router/h2, http1NetHTTP net/http's.
	http2Server string
	// netHTTP2Client: -http2-client net/http, gRPC backends called through
	// net/http's HTTP/2 transport rather than router/h2's client.
	netHTTP2Client bool
	// Server timeouts (SPEC §13); zero means the default.
	idleTimeout     time.Duration
	headerTimeout   time.Duration
	shutdownTimeout time.Duration
	// backendTransport, when set, carries every proxied request instead
	// of the router's own transports (tests reach their backends with it).
	backendTransport http.RoundTripper
	// streamEndpoint, when set, maps each TCP and UDP service endpoint,
	// and each TLS passthrough endpoint, ("ip:port") to the address
	// dialled (tests reach theirs with it).
	streamEndpoint func(string) string
}

// errUsage marks a command line that could not be parsed; main exits 2.
var errUsage = errors.New("usage")

// Flags that only one mode reads; giving one to the other mode is an error
// rather than silently ignored.
var (
	offlineOnly = []string{"demo-backends", "poll-interval"}
	clusterOnly = []string{
		"kubeconfig", "namespace", "watch-namespace", "publish-service", "publish-address",
		"publish-status-address", "no-status-update", "update-status", "report-node-internal-ip-address", "resync-period", "sync-period",
		"election-id", "election-namespace", "pod-name",
		"validating-webhook", "validating-webhook-certificate", "validating-webhook-key", "admission-reject-severity",
	}
	// aliases are ingress-nginx's spellings of ramjet's flags (SPEC §1);
	// giving both of a pair is an error, not a silent last-one-wins.
	aliases = [][2]string{
		{"controller-name", "controller-class"},
		{"namespace", "watch-namespace"},
		{"publish-address", "publish-status-address"},
		{"no-status-update", "update-status"},
		{"resync-period", "sync-period"},
		{"default-backend", "default-backend-service"},
	}
)

// parseFlags reads the command line. getenv supplies POD_NAMESPACE and
// POD_NAME, the downward-API defaults of the election namespace and
// identity.
func parseFlags(args []string, output io.Writer, getenv func(string) string) (config, error) {
	var (
		c              config
		defaultBackend string
		sslRedirect    bool
		publishService string
		publishAddress string

		defaultBackendService string
		defaultCertificate    string
		updateStatus          bool
		proxyRealIPCIDR       string
		proxyBodySize         string
		configMap             string
		rejectSeverity        string
	)
	fs := flag.NewFlagSet("controller", flag.ContinueOnError)
	// Errors are returned, not printed with the whole usage; -h prints it.
	fs.SetOutput(io.Discard)
	usage := func() {
		fs.SetOutput(output)
		fmt.Fprintf(output, "Usage: controller [flags]\n\n"+
			"Serves the Ingresses of a Kubernetes cluster (in-cluster credentials, else\n"+
			"-kubeconfig, $KUBECONFIG or ~/.kube/config), or with -manifests those in a\n"+
			"folder of manifests with no cluster, recompiling whenever a file changes.\n\nFlags:\n")
		fs.PrintDefaults()
		fmt.Fprintf(output, "\ningress-nginx flags ramjet does not implement stop the process with a note on what to do.\n")
	}
	fs.StringVar(&c.options.IngressClass, "ingress-class", compile.DefaultIngressClass, "class name answered for the kubernetes.io/ingress.class annotation")
	fs.StringVar(&c.options.ControllerName, "controller-name", compile.DefaultControllerName, "controller name matched against IngressClass spec.controller")
	fs.StringVar(&c.options.ControllerName, "controller-class", compile.DefaultControllerName, "ingress-nginx's spelling of -controller-name")
	fs.StringVar(&defaultBackend, "default-backend", "", "global default backend, namespace/name:port (port number or name)")
	fs.StringVar(&defaultBackendService, "default-backend-service", "", "global default backend as namespace/name: the Service's first port, looked up at every compile (ingress-nginx's flag)")
	fs.StringVar(&defaultCertificate, "default-ssl-certificate", "", "namespace/name of the TLS Secret served to names no Ingress covers; default: a self-signed certificate made at start")
	fs.BoolVar(&c.useForwardedHeaders, "use-forwarded-headers", false, "trust X-Forwarded-Proto, and X-Forwarded-For from -proxy-real-ip-cidr peers (only behind a load balancer that sets them, never passing on the client's)")
	fs.BoolVar(&c.computeFullForwardedFor, "compute-full-forwarded-for", false, "with -use-forwarded-headers, send backends the client's X-Forwarded-For with the peer appended instead of the client address alone")
	fs.StringVar(&proxyRealIPCIDR, "proxy-real-ip-cidr", "", "comma-separated CIDRs (or addresses) of the load balancers in front: only their PROXY header (-use-proxy-protocol), and with -use-forwarded-headers their X-Forwarded-For, give the client address; default: none, the client is the peer")
	fs.StringVar(&proxyBodySize, "proxy-body-size", "1m", "the largest request body, nginx size syntax (8m, 512k, 1g, bytes; 0 for no limit): 413 above it; an Ingress's proxy-body-size annotation replaces it for its paths")
	fs.BoolVar(&c.useProxyProtocol, "use-proxy-protocol", false, "read a PROXY protocol v1/v2 header on every HTTP and HTTPS connection (behind a load balancer that sends it, such as an AWS NLB); see -proxy-real-ip-cidr for whose header is believed")
	fs.StringVar(&configMap, "configmap", "", "namespace/name of an ingress-nginx ConfigMap whose keys set what no flag given here sets (see README); with -manifests, a ConfigMap of that name in the folder")
	fs.StringVar(&c.http1Server, "http1-server", "", "who serves HTTP/1 on the traffic listeners: "+http1Ramjet+" (the default: the controller's own loop, which hands HTTP/2 to -http2-server) or "+http1NetHTTP+" (net/http's server for everything)")
	http2Client := fs.String("http2-client", http1Ramjet, "who calls GRPC, GRPCS and H2C backends: "+http1Ramjet+" (the default: router/h2's client, the project's own) or "+http1NetHTTP+" (net/http's HTTP/2 transport, about twice the proxy's CPU per unary call: a way back should a backend and the project's client disagree)")
	fs.StringVar(&c.http2Server, "http2-server", "", "who serves HTTP/2 (over TLS, and cleartext with prior knowledge) when -http1-server is "+http1Ramjet+": "+http1Ramjet+" (the default: router/h2, the project's own server) or "+http1NetHTTP+" (net/http's)")
	fs.BoolVar(&c.enableMetrics, "enable-metrics", false, "serve Prometheus metrics at /metrics on -debug-addr (ingress-nginx's metric names)")
	fs.BoolVar(&c.metricsPerHost, "metrics-per-host", true, "label request metrics with the Ingress rule's host")
	fs.BoolVar(&c.metricsPerUndefinedHost, "metrics-per-undefined-host", false, "also count requests no Ingress rule's host answered, with host=\"_\" (needs -metrics-per-host)")
	fs.BoolVar(&c.reportStatusClasses, "report-status-classes", false, "label request metrics with status classes (2xx, 4xx) instead of codes")
	fs.Var(&bucketsFlag{v: &c.timeBuckets}, "time-buckets", "comma-separated buckets of the request, connect, header and response duration histograms, in seconds (ingress-nginx's flag)")
	fs.Var(&bucketsFlag{v: &c.lengthBuckets}, "length-buckets", "comma-separated buckets of the request_size and response_size histograms (ingress-nginx's flag)")
	fs.Var(&bucketsFlag{v: &c.sizeBuckets}, "size-buckets", "comma-separated buckets of the bytes_sent histogram (ingress-nginx's flag)")
	fs.Var((*socketMetricsFlag)(&c.excludeSocketMetrics), "exclude-socket-metrics", "comma-separated request metrics neither counted nor exported, such as nginx_ingress_controller_bytes_sent (ingress-nginx's flag)")
	fs.BoolVar(&c.enableAccessLog, "enable-access-log", true, "write one line per request to stdout")
	fs.StringVar(&c.accessLogFormat, "access-log-format", accessLogUpstreamInfo, "access log format: upstreaminfo (ingress-nginx's default log-format-upstream), text (key=value) or json")
	fs.StringVar(&c.healthPath, "health-check-path", "/healthz", "path of the liveness check on -debug-addr (readiness is /readyz), also answered 200 on the traffic listeners for names no Ingress rule claims, as ingress-nginx's catch-all server answers load balancers' checks")
	fs.Func("v", "ingress-nginx's (klog's) log verbosity: 0 to 2 log at info, 3 and above at debug; given, it beats RAMJET_LOG", func(s string) error {
		n, err := strconv.ParseUint(s, 10, 31)
		if err != nil {
			return errors.New("want a whole number, 0 or more")
		}
		v := int(n)
		c.verbosity = &v
		return nil
	})
	fs.Var((*gracePeriod)(&c.drain), "shutdown-grace-period", "after SIGTERM, how long /readyz fails while the listeners keep serving, before they close: seconds (ingress-nginx's form) or a duration")
	fs.BoolVar(&c.options.WatchIngressWithoutClass, "watch-ingress-without-class", false, "also serve Ingresses that name no class")
	fs.BoolVar(&sslRedirect, "ssl-redirect", true, "redirect plain HTTP to HTTPS for hosts listed under spec.tls")
	fs.BoolVar(&c.options.EnableSSLPassthrough, "enable-ssl-passthrough", false, "serve the ssl-passthrough annotation: the TLS listener splices such hosts' connections to their backend by SNI, unterminated")
	fs.StringVar(&c.httpAddr, "http-addr", "127.0.0.1:8080", "plain HTTP listen address (HTTP/1.1 and cleartext HTTP/2)")
	fs.StringVar(&c.httpsAddr, "https-addr", "", "TLS listen address; empty turns TLS off")
	fs.IntVar(&c.gatewayHTTPPort, "gateway-http-port", 80, "the Gateway listener port the -http-addr listener serves: Gateway API routes of HTTP listeners on this port are served there (the port a Service publishes it as)")
	fs.IntVar(&c.gatewayHTTPSPort, "gateway-https-port", 443, "the Gateway listener port the -https-addr listener serves: Gateway API routes of HTTPS listeners on this port are served there")
	fs.StringVar(&c.cpuProfile, "cpuprofile", "", "write a CPU profile of the run, from start to shutdown, to this file: for a profile-guided build (default.pgo, see README); empty writes none")
	fs.StringVar(&c.debugAddr, "debug-addr", "127.0.0.1:8081", "address of /metrics, /debug/table, /debug/warnings, /healthz and /readyz; empty turns it off")

	fs.StringVar(&c.options.TCPServices, "tcp-services-configmap", "", "namespace/name of ingress-nginx's TCP services ConfigMap (\"port\": \"namespace/service:port[:PROXY][:PROXY]\"): each port is listened on at start; with -manifests, a ConfigMap of that name in the folder")
	fs.StringVar(&c.options.UDPServices, "udp-services-configmap", "", "namespace/name of ingress-nginx's UDP services ConfigMap (\"port\": \"namespace/service:port\"): each port is listened on at start; with -manifests, a ConfigMap of that name in the folder")
	fs.IntVar(&c.udpMaxSessions, "udp-max-sessions", defaultUDPSessions, "the most client addresses each UDP service port keeps a session for; beyond it a new address takes the place of a session with no exchange in progress, and its datagrams are dropped while every session has one")
	fs.StringVar(&c.manifests, "manifests", "", "offline mode: folder (or single file) of YAML/JSON manifests to serve instead of a cluster; watched for changes")
	fs.BoolVar(&c.demoBackends, "demo-backends", false, "offline mode: start an echo server on every 127.0.0.0/8 endpoint named by the loaded EndpointSlices (UDP for a port of protocol UDP)")
	c.pollInterval = 500 * time.Millisecond
	fs.Var((*durationFlag)(&c.pollInterval), "poll-interval", "offline mode: how often the manifests folder is checked for changes, a `duration`")

	fs.StringVar(&c.kubeconfig, "kubeconfig", "", "kubeconfig file; default: in-cluster credentials, else $KUBECONFIG, else ~/.kube/config")
	fs.StringVar(&c.namespace, "namespace", "", "watch Ingresses, Services, EndpointSlices and Secrets in this namespace only; default: all namespaces")
	fs.StringVar(&c.namespace, "watch-namespace", "", "ingress-nginx's spelling of -namespace")
	fs.StringVar(&publishService, "publish-service", "", "namespace/name of the Service whose addresses are written to Ingress status")
	fs.StringVar(&publishAddress, "publish-address", "", "comma-separated IPs and host names written to Ingress status (instead of -publish-service)")
	fs.StringVar(&publishAddress, "publish-status-address", "", "ingress-nginx's spelling of -publish-address")
	fs.BoolVar(&c.noStatusUpdate, "no-status-update", false, "never write Ingress or Gateway API status")
	fs.BoolVar(&c.nodeInternalIP, "report-node-internal-ip-address", false, "with neither -publish-service nor -publish-address, advertise the InternalIP of the nodes running the controller's ready pods even where they have an ExternalIP")
	fs.BoolVar(&updateStatus, "update-status", true, "ingress-nginx's form of -no-status-update: false never writes Ingress status")
	fs.Var((*durationFlag)(&c.resync), "resync-period", "how often the watches re-deliver every object, a `duration`; 0 never (the digest makes a resync publish nothing anyway)")
	fs.Var((*durationFlag)(&c.resync), "sync-period", "ingress-nginx's spelling of -resync-period, a `duration`")
	fs.StringVar(&c.electionID, "election-id", "ramjet-leader", "name of the Lease the replicas elect a status writer with")
	fs.StringVar(&c.electionNamespace, "election-namespace", "", "namespace of the election Lease; default: $POD_NAMESPACE, else \"default\"")
	fs.StringVar(&c.webhookAddr, "validating-webhook", "", "serve the validating admission webhook (TLS) on this address, e.g. :8443: Ingresses and HTTPRoutes being applied are compiled with the current snapshot, refused where ingress-nginx refuses them, and answered with their warnings")
	fs.StringVar(&c.webhookCert, "validating-webhook-certificate", "", "PEM certificate file of -validating-webhook (read again when it changes)")
	fs.StringVar(&c.webhookKey, "validating-webhook-key", "", "PEM private key file of -validating-webhook")
	fs.StringVar(&rejectSeverity, "admission-reject-severity", "", "with -validating-webhook, also refuse objects with a warning of this severity or worse: traffic-moves, feature-missing or cosmetic; default: refuse only what ingress-nginx refuses")
	fs.StringVar(&c.identity, "pod-name", "", "this replica's identity in the election and in Events; default: $POD_NAME, else the host name")

	args, noop, err := foreignFlags(fs, args)
	if err != nil {
		return config{}, err
	}
	c.noop = noop
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			usage()
			return config{}, err
		}
		return config{}, fmt.Errorf("%w: %v", errUsage, err)
	}
	if fs.NArg() > 0 {
		return config{}, fmt.Errorf("%w: unexpected argument %q (manifests are given with -manifests)", errUsage, fs.Arg(0))
	}
	var set []string
	fs.Visit(func(f *flag.Flag) { set = append(set, f.Name) })
	wrongMode, mode := clusterOnly, "a cluster (without -manifests)"
	if c.manifests == "" {
		wrongMode, mode = offlineOnly, "-manifests"
	}
	for _, name := range set {
		if slices.Contains(wrongMode, name) {
			return config{}, fmt.Errorf("%w: -%s applies only with %s", errUsage, name, mode)
		}
	}
	for _, pair := range aliases {
		if slices.Contains(set, pair[0]) && slices.Contains(set, pair[1]) {
			return config{}, fmt.Errorf("%w: -%s and -%s are the same setting: give one", errUsage, pair[0], pair[1])
		}
	}
	// spelled is the name a flag was given by, an alias's when the
	// command line used it, so that an error names what was written.
	spelled := func(name string) string {
		for _, pair := range aliases {
			if pair[0] == name && slices.Contains(set, pair[1]) {
				return pair[1]
			}
		}
		return name
	}

	for _, p := range []struct {
		name string
		v    int
	}{{"gateway-http-port", c.gatewayHTTPPort}, {"gateway-https-port", c.gatewayHTTPSPort}} {
		if p.v < 1 || p.v > 65535 {
			return config{}, fmt.Errorf("%w: -%s %d is not a port", errUsage, p.name, p.v)
		}
	}
	switch *http2Client {
	case http1Ramjet:
	case http1NetHTTP:
		c.netHTTP2Client = true
	default:
		return config{}, fmt.Errorf("%w: -http2-client %q is neither %q nor %q", errUsage, *http2Client, http1Ramjet, http1NetHTTP)
	}
	for _, s := range []struct{ name, v string }{{"http1-server", c.http1Server}, {"http2-server", c.http2Server}} {
		// Checked here, not when the listeners start, so a typo exits 2
		// before anything is loaded or bound.
		if s.v != "" && s.v != http1Ramjet && s.v != http1NetHTTP {
			return config{}, fmt.Errorf("%w: -%s %q is neither %q nor %q", errUsage, s.name, s.v, http1Ramjet, http1NetHTTP)
		}
	}
	for _, a := range []struct{ name, v string }{{"http-addr", c.httpAddr}, {"https-addr", c.httpsAddr}, {"debug-addr", c.debugAddr}, {"validating-webhook", c.webhookAddr}} {
		// Checked here so that a typo exits 2 before anything is loaded
		// or bound, not 1 once the manifests compiled.
		if a.v == "" {
			continue
		}
		_, port, err := net.SplitHostPort(a.v)
		if err == nil {
			_, err = net.LookupPort("tcp", port)
		}
		if err != nil {
			return config{}, fmt.Errorf("%w: -%s %q: %v", errUsage, a.name, a.v, err)
		}
	}
	if c.httpAddr == "" && c.httpsAddr == "" {
		return config{}, fmt.Errorf("%w: -http-addr and -https-addr are both empty: nothing would serve traffic", errUsage)
	}
	if c.pollInterval <= 0 {
		return config{}, fmt.Errorf("%w: -poll-interval %v: must be positive", errUsage, c.pollInterval)
	}
	if defaultBackend != "" {
		ref, err := compile.ParseServiceRef(defaultBackend)
		if err != nil {
			return config{}, fmt.Errorf("%w: -default-backend: %v", errUsage, err)
		}
		c.options.DefaultBackend = &ref
	}
	if defaultBackendService != "" {
		ref, err := parseNamespacedName(defaultBackendService, validation.IsDNS1035Label)
		if err != nil {
			return config{}, fmt.Errorf("%w: -default-backend-service %q: %v", errUsage, defaultBackendService, err)
		}
		c.defaultBackendService = &ref
	}
	if defaultCertificate != "" {
		ref, err := parseNamespacedName(defaultCertificate, validation.IsDNS1123Subdomain)
		if err != nil {
			return config{}, fmt.Errorf("%w: -default-ssl-certificate %q: %v", errUsage, defaultCertificate, err)
		}
		c.defaultCertificate = &ref
	}
	if !strings.HasPrefix(c.healthPath, "/") || slices.Contains([]string{"/readyz", "/metrics", "/debug/table", "/debug/warnings"}, c.healthPath) {
		return config{}, fmt.Errorf("%w: -health-check-path %q: want a path starting with / that the debug listener does not already serve", errUsage, c.healthPath)
	}
	if c.enableMetrics && c.debugAddr == "" {
		// Metrics collected that nothing serves would look like a
		// scrape target gone quiet.
		return config{}, fmt.Errorf("%w: -enable-metrics: /metrics is served on -debug-addr, which is empty: give it an address, or leave metrics off", errUsage)
	}
	if c.metricsPerUndefinedHost && !c.metricsPerHost {
		// As ingress-nginx refuses it.
		return config{}, fmt.Errorf("%w: -metrics-per-undefined-host=true must be passed with -metrics-per-host=true", errUsage)
	}
	if c.accessLogFormat != accessLogUpstreamInfo && c.accessLogFormat != accessLogText && c.accessLogFormat != accessLogJSON {
		return config{}, fmt.Errorf("%w: -access-log-format %q: want upstreaminfo, text or json", errUsage, c.accessLogFormat)
	}
	cidrs, err := parseCIDRs(proxyRealIPCIDR)
	if err != nil {
		return config{}, fmt.Errorf("%w: -proxy-real-ip-cidr: %v", errUsage, err)
	}
	c.proxyRealIPCIDR = cidrs
	size, err := compile.ParseSize(proxyBodySize)
	if err != nil {
		return config{}, fmt.Errorf("%w: -proxy-body-size %q: %v", errUsage, proxyBodySize, err)
	}
	c.maxBodySize = size
	if size == 0 {
		c.maxBodySize = -1 // nginx's 0: no limit
	}
	if configMap != "" {
		ref, err := parseNamespacedName(configMap, validation.IsDNS1123Subdomain)
		if err != nil {
			return config{}, fmt.Errorf("%w: -configmap %q: %v", errUsage, configMap, err)
		}
		c.configMap = &ref
		c.flagsSet = set
	}
	c.podName = getenv("POD_NAME")
	c.podNamespace = cmp.Or(getenv("POD_NAMESPACE"), "default")
	c.options.DisableSSLRedirect = !sslRedirect
	if c.udpMaxSessions < 1 {
		return config{}, fmt.Errorf("%w: -udp-max-sessions %d: must be at least 1", errUsage, c.udpMaxSessions)
	}
	if c.options.IngressClass == "" {
		// The library reads "" as its default class; ingress-nginx does not.
		return config{}, fmt.Errorf(`%w: -ingress-class "": ingress-nginx would then claim only Ingresses annotated kubernetes.io/ingress.class: "", not those of a default class; give the class name, or leave the flag out for %q`, errUsage, compile.DefaultIngressClass)
	}
	if c.options.ControllerName == "" {
		// The library reads "" as its default controller name; ingress-nginx
		// compares IngressClass spec.controller with "", which none has.
		return config{}, fmt.Errorf(`%w: -controller-name (-controller-class) "": ingress-nginx would then own no IngressClass, serving only Ingresses claimed by the kubernetes.io/ingress.class annotation or -watch-ingress-without-class; give the controller name, or leave the flag out for %q`, errUsage, compile.DefaultControllerName)
	}
	if err := c.options.Validate(); err != nil {
		return config{}, fmt.Errorf("%w: %v", errUsage, err)
	}
	if c.manifests != "" {
		return c, nil
	}

	if c.namespace != "" {
		if errs := validation.IsDNS1123Label(c.namespace); len(errs) > 0 {
			return config{}, fmt.Errorf("%w: -%s %q: %s", errUsage, spelled("namespace"), c.namespace, strings.Join(errs, "; "))
		}
	}
	if publishService != "" && publishAddress != "" {
		return config{}, fmt.Errorf("%w: -publish-service and -publish-address are alternatives: give one", errUsage)
	}
	if publishService != "" {
		ref, err := parseNamespacedName(publishService, validation.IsDNS1035Label)
		if err != nil {
			return config{}, fmt.Errorf("%w: -publish-service %q: want namespace/name of a Service", errUsage, publishService)
		}
		c.publishService = &ref
	}
	c.noStatusUpdate = c.noStatusUpdate || !updateStatus
	addrs, err := status.ParseAddresses(publishAddress)
	if err != nil {
		return config{}, fmt.Errorf("%w: -%s: %v", errUsage, spelled("publish-address"), err)
	}
	c.publishAddresses = addrs
	if c.resync < 0 {
		return config{}, fmt.Errorf("%w: -%s %v: must not be negative", errUsage, spelled("resync-period"), c.resync)
	}
	if errs := validation.IsDNS1123Subdomain(c.electionID); len(errs) > 0 {
		return config{}, fmt.Errorf("%w: -election-id %q: %s", errUsage, c.electionID, strings.Join(errs, "; "))
	}
	if c.electionNamespace == "" {
		c.electionNamespace = cmp.Or(getenv("POD_NAMESPACE"), "default")
	}
	if errs := validation.IsDNS1123Label(c.electionNamespace); len(errs) > 0 {
		return config{}, fmt.Errorf("%w: -election-namespace %q: %s", errUsage, c.electionNamespace, strings.Join(errs, "; "))
	}
	if c.identity == "" {
		c.identity = getenv("POD_NAME")
	}
	if c.identity == "" {
		host, err := os.Hostname()
		if err != nil || host == "" {
			return config{}, fmt.Errorf("%w: no -pod-name, no $POD_NAME and no host name (%v): the election needs an identity", errUsage, err)
		}
		c.identity = host
	}
	if err := c.parseWebhook(rejectSeverity); err != nil {
		return config{}, err
	}
	c.setClusterDefaults()
	return c, nil
}

// parseWebhook checks the admission webhook's flags together.
func (c *config) parseWebhook(rejectSeverity string) error {
	sev, err := parseRejectSeverity(rejectSeverity)
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	c.admissionRejectSeverity = sev
	switch {
	case c.webhookAddr == "" && (c.webhookCert != "" || c.webhookKey != "" || sev != ""):
		return fmt.Errorf("%w: -validating-webhook-certificate, -validating-webhook-key and -admission-reject-severity need -validating-webhook", errUsage)
	case c.webhookAddr != "" && (c.webhookCert == "" || c.webhookKey == ""):
		return fmt.Errorf("%w: -validating-webhook needs -validating-webhook-certificate and -validating-webhook-key (the API server calls webhooks over TLS)", errUsage)
	}
	return nil
}

// parseNamespacedName parses "namespace/name", checking the name with
// validName (Services and Secrets follow different rules).
func parseNamespacedName(s string, validName func(string) []string) (types.NamespacedName, error) {
	ns, name, ok := strings.Cut(s, "/")
	if !ok {
		return types.NamespacedName{}, errors.New("want namespace/name")
	}
	if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
		return types.NamespacedName{}, fmt.Errorf("namespace %q: %s", ns, strings.Join(errs, "; "))
	}
	if errs := validName(name); len(errs) > 0 {
		return types.NamespacedName{}, fmt.Errorf("name %q: %s", name, strings.Join(errs, "; "))
	}
	return types.NamespacedName{Namespace: ns, Name: name}, nil
}

// parseCIDRs reads --proxy-real-ip-cidr: comma-separated CIDRs, or bare
// addresses (one host each), as nginx's set_real_ip_from takes them.
func parseCIDRs(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		if !strings.Contains(part, "/") {
			a, err := netip.ParseAddr(part)
			if err != nil {
				return nil, fmt.Errorf("%q is neither a CIDR nor an IP address", part)
			}
			a = a.Unmap()
			out = append(out, netip.PrefixFrom(a, a.BitLen()))
			continue
		}
		p, err := netip.ParsePrefix(part)
		if err != nil {
			return nil, fmt.Errorf("%q is not a CIDR such as 10.0.0.0/8", part)
		}
		if p.Addr().Is4In6() && p.Bits() >= 96 {
			p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

// bucketsFlag reads a histogram's buckets as ingress-nginx's
// Float64Slice flags do: comma-separated numbers, the first use
// replacing the default and a repeated one adding to it. They must
// increase, as Prometheus requires.
type bucketsFlag struct {
	v       *[]float64
	changed bool
}

func (b *bucketsFlag) String() string {
	if b == nil || b.v == nil {
		return ""
	}
	parts := make([]string, len(*b.v))
	for i, v := range *b.v {
		parts[i] = strconv.FormatFloat(v, 'g', -1, 64)
	}
	return strings.Join(parts, ",")
}

func (b *bucketsFlag) Set(s string) error {
	var out []float64
	if b.changed {
		out = append(out, *b.v...)
	}
	for part := range strings.SplitSeq(s, ",") {
		if part = strings.TrimSpace(part); part == "" {
			continue
		}
		v, err := strconv.ParseFloat(part, 64)
		if err != nil {
			return fmt.Errorf("%q is not a number", part)
		}
		out = append(out, v)
	}
	for i := 1; i < len(out); i++ {
		if !(out[i] > out[i-1]) {
			return fmt.Errorf("buckets must increase: %v after %v", out[i], out[i-1])
		}
	}
	*b.v, b.changed = out, true
	return nil
}

// socketMetricsFlag reads --exclude-socket-metrics: comma-separated
// metric names, the nginx_ingress_controller_ prefix dropped as
// ingress-nginx drops it.
type socketMetricsFlag []string

func (f *socketMetricsFlag) String() string {
	if f == nil {
		return ""
	}
	return strings.Join(*f, ",")
}

func (f *socketMetricsFlag) Set(s string) error {
	for part := range strings.SplitSeq(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			*f = append(*f, strings.TrimPrefix(part, nginxNamespace+"_"))
		}
	}
	return nil
}

// gracePeriod reads --shutdown-grace-period as ingress-nginx writes it, a
// number of seconds, or as a Go duration.
type gracePeriod time.Duration

func (g *gracePeriod) String() string { return time.Duration(*g).String() }

func (g *gracePeriod) Set(s string) error {
	d, err := time.ParseDuration(s)
	if n, nerr := strconv.ParseUint(s, 10, 32); nerr == nil {
		d, err = time.Duration(n)*time.Second, nil
	}
	if err != nil || d < 0 {
		return fmt.Errorf("want seconds or a duration such as 30s, not negative")
	}
	*g = gracePeriod(d)
	return nil
}

// durationFlag is a Go duration flag whose error says what it wants, where
// flag's own says only "parse error".
type durationFlag time.Duration

func (d *durationFlag) String() string { return time.Duration(*d).String() }

func (d *durationFlag) Set(s string) error {
	v, err := time.ParseDuration(s)
	if err != nil {
		return errors.New("want a duration such as 500ms, 30s or 1m")
	}
	*d = durationFlag(v)
	return nil
}

// setClusterDefaults fills the timings that are not flags.
func (c *config) setClusterDefaults() {
	c.debounce = cmp.Or(c.debounce, defaultDebounce)
	c.maxWait = cmp.Or(c.maxWait, defaultMaxWait)
	c.leaseDuration = cmp.Or(c.leaseDuration, defaultLeaseDuration)
	c.renewDeadline = cmp.Or(c.renewDeadline, defaultRenewDeadline)
	c.retryPeriod = cmp.Or(c.retryPeriod, defaultRetryPeriod)
}

// logLevel reads ingress-nginx's --v (verbosity, nil when not given),
// which beats RAMJET_LOG (SPEC §14) as a flag beats the ConfigMap, else
// RAMJET_LOG; neither means info. ingress-nginx logs its detail (each
// event, each configuration) from klog's level 3
// (docs/troubleshooting.md), ramjet's debug.
func logLevel(v string, verbosity *int) (slog.Level, error) {
	if verbosity != nil {
		if *verbosity >= 3 {
			return slog.LevelDebug, nil
		}
		return slog.LevelInfo, nil
	}
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "", "info":
		return slog.LevelInfo, nil
	case "debug":
		return slog.LevelDebug, nil
	case "warn", "warning":
		return slog.LevelWarn, nil
	case "error":
		return slog.LevelError, nil
	}
	return 0, fmt.Errorf("RAMJET_LOG=%q: want debug, info, warn or error", v)
}
