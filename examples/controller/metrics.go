package main

import (
	"cmp"
	"crypto/tls"
	"encoding/binary"
	"encoding/hex"
	"log/slog"
	"net/http"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/procfs"

	"ramjet.dev/ramjet/compile"
	"ramjet.dev/ramjet/match"
	"ramjet.dev/ramjet/router"
	"ramjet.dev/ramjet/router/h1"
)

// Metric names and labels follow ingress-nginx v1.15
// (internal/ingress/metric/collectors), so that its Grafana dashboards and
// alerts keep working; what only ramjet has is named ramjet_*.
const nginxNamespace = "nginx_ingress_controller"

// ingress-nginx's default histogram buckets, which --time-buckets,
// --length-buckets and --size-buckets replace.
var (
	timeBuckets   = prometheus.DefBuckets
	lengthBuckets = prometheus.LinearBuckets(10, 10, 10)
	sizeBuckets   = prometheus.ExponentialBuckets(10, 10, 7)
)

// undefinedHost is the host label of a request that no Ingress rule's
// host answered (the catch-all, or nothing), counted only with
// --metrics-per-undefined-host. It is nginx's name for the default server:
// the label never takes the client's Host, which anyone can vary.
const undefinedHost = "_"

// metrics holds the Prometheus collectors of one controller. Request
// series are labelled from the table (Ingress, Service, the rule's host,
// the declared path), so their number is bounded by what is declared,
// whatever clients send.
type metrics struct {
	registry *prometheus.Registry
	id       metricsIdentity

	perHost          bool
	perUndefinedHost bool
	statusClasses    bool

	requests                        *prometheus.CounterVec
	requestTime, headerTime, upTime *prometheus.HistogramVec
	connectTime                     *prometheus.HistogramVec
	tables                          tableMetrics // metrics_certs.go
	requestSize, responseSize       *prometheus.HistogramVec
	bytesSent                       *prometheus.HistogramVec
	retries                         *prometheus.CounterVec

	// defaultCert is the default certificate served now and its Secret
	// (servesDefault); lastDefault the one the series were set with.
	defaultCert func() (*tls.Certificate, string)
	lastDefault *tls.Certificate

	configHash, configSuccess, configSuccessTime prometheus.Gauge
	reloads, reloadErrors                        prometheus.Counter
	// hash is config_hash's value while loads succeed.
	hash float64

	// ingress-nginx's admission gauges, set by each Ingress the webhook
	// admits, and its check counters, by each it judges; nil without the
	// webhook.
	admissionTested, admissionTestedTime, admissionRoundtrip prometheus.Gauge
	checkSuccess, checkErrors                                *prometheus.CounterVec

	rebuilds, publishes prometheus.Counter
	warnings            *prometheus.GaugeVec
	tableSize           *prometheus.GaugeVec

	// aliases maps each exact server-alias name of the serving table to
	// its host's name, for the host label.
	aliases atomic.Pointer[map[string]string]

	// mu guards ingresses, the Ingresses whose request series may exist:
	// those of the tables published so far, minus the ones removed.
	mu        sync.Mutex
	ingresses map[[2]string]bool
}

// metricsIdentity are the constant labels ingress-nginx puts on every
// series it owns: where the controller runs and which class it serves,
// named as ingress-nginx names it, by its controller value
// (--controller-class), so its alerts' selectors carry over.
type metricsIdentity struct {
	namespace, class, pod string
}

// metricsIdentityOf is the identity of the controller cfg runs.
func metricsIdentityOf(cfg config) metricsIdentity {
	return metricsIdentity{namespace: cfg.podNamespace, class: cmp.Or(cfg.options.ControllerName, compile.DefaultControllerName), pod: cmp.Or(cfg.identity, cfg.podName)}
}

func (id metricsIdentity) labels() prometheus.Labels {
	return prometheus.Labels{
		"controller_namespace": id.namespace,
		"controller_class":     id.class,
		"controller_pod":       id.pod,
	}
}

// newMetrics registers the collectors, extra ones (the cluster loop's
// counters) included. It returns nil when cfg turns metrics off: a nil
// *metrics observes nothing.
func newMetrics(cfg config, extra ...prometheus.Collector) *metrics {
	if !cfg.enableMetrics {
		return nil
	}
	id := metricsIdentityOf(cfg)
	m := &metrics{
		registry:         prometheus.NewRegistry(),
		id:               id,
		perHost:          cfg.metricsPerHost,
		perUndefinedHost: cfg.metricsPerUndefinedHost,
		statusClasses:    cfg.reportStatusClasses,
		ingresses:        make(map[[2]string]bool),
	}
	constLabels := id.labels()
	requestLabels := []string{"status", "method", "path", "namespace", "ingress", "service", "canary"}
	if m.perHost {
		requestLabels = append(requestLabels, "host")
	}
	or := func(b, def []float64) []float64 {
		if len(b) == 0 {
			return def
		}
		return b
	}
	tb, lb, sb := or(cfg.timeBuckets, timeBuckets), or(cfg.lengthBuckets, lengthBuckets), or(cfg.sizeBuckets, sizeBuckets)
	// --exclude-socket-metrics: an excluded request metric is nil,
	// neither observed nor registered.
	excluded := func(name string) bool { return slices.Contains(cfg.excludeSocketMetrics, name) }
	histogram := func(name, help string, buckets []float64) *prometheus.HistogramVec {
		if excluded(name) {
			return nil
		}
		return prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: nginxNamespace, Name: name, Help: help,
			ConstLabels: constLabels, Buckets: buckets,
		}, requestLabels)
	}
	gauge := func(name, help string) prometheus.Gauge {
		return prometheus.NewGauge(prometheus.GaugeOpts{Namespace: nginxNamespace, Name: name, Help: help, ConstLabels: constLabels})
	}
	if !excluded("requests") {
		m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: nginxNamespace, Name: "requests", Help: "The total number of client requests",
			ConstLabels: constLabels,
		}, requestLabels)
	}
	m.requestTime = histogram("request_duration_seconds", "The request processing time in seconds, from the request's arrival until the answer was written", tb)
	m.headerTime = histogram("header_duration_seconds", "The time spent on receiving the response headers from the upstream server", tb)
	m.connectTime = histogram("connect_duration_seconds", "The time spent on establishing a connection with the upstream server", tb)
	m.tables = newTableMetrics(id)
	m.upTime = histogram("response_duration_seconds", "The time spent on receiving the response from the upstream server", tb)
	m.requestSize = histogram("request_size", "The request length (request line, headers and body)", lb)
	m.responseSize = histogram("response_size", "The response length: head and body as sent to the client ($bytes_sent)", lb)
	m.bytesSent = histogram("bytes_sent", "The number of bytes sent to a client, head and body (ingress-nginx marks it deprecated; use response_size)", sb)
	m.configHash = gauge("config_hash", "Running configuration hash actually running")
	m.configSuccess = gauge("config_last_reload_successful", "Whether the last configuration reload attempt was successful")
	m.configSuccessTime = gauge("config_last_reload_successful_timestamp_seconds", "Timestamp of the last successful configuration reload.")
	m.reloads = prometheus.NewCounter(prometheus.CounterOpts{Namespace: nginxNamespace, Name: "success", Help: "Cumulative number of Ingress controller reload operations (tables published)", ConstLabels: constLabels})
	m.reloadErrors = prometheus.NewCounter(prometheus.CounterOpts{Namespace: nginxNamespace, Name: "errors", Help: "Cumulative number of Ingress controller errors during reload operations (manifests that failed to load or left a manifest unread)", ConstLabels: constLabels})

	m.retries = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "ramjet_upstream_retries_total", Help: "Tries beyond the first: requests sent to another endpoint after connecting to one failed",
		ConstLabels: constLabels,
	}, []string{"namespace", "ingress", "service"})
	m.rebuilds = prometheus.NewCounter(prometheus.CounterOpts{Name: "ramjet_compiles_total", Help: "Compiles of the whole snapshot, whether or not the table changed", ConstLabels: constLabels})
	m.publishes = prometheus.NewCounter(prometheus.CounterOpts{Name: "ramjet_publishes_total", Help: "Tables published: compiles whose table differed from the one serving", ConstLabels: constLabels})
	m.warnings = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "ramjet_compile_warnings", Help: "Warnings of the last compile, by reason", ConstLabels: constLabels}, []string{"reason"})
	m.tableSize = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "ramjet_table_size", Help: "What the serving table holds, by kind", ConstLabels: constLabels}, []string{"kind"})

	for _, c := range m.requestCollectors() {
		m.registry.MustRegister(c)
	}
	m.registry.MustRegister(
		m.configHash, m.configSuccess, m.configSuccessTime, m.reloads, m.reloadErrors,
		m.retries, m.rebuilds, m.publishes, m.warnings, m.tableSize,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	// ingress-nginx's dashboard charts memory and CPU from its nginx
	// process collector (nginx_ingress_controller_nginx_process_*, with
	// the controller_* labels): here, the process that serves.
	prometheus.WrapRegistererWith(constLabels, m.registry).MustRegister(
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{Namespace: nginxNamespace + "_nginx"}),
		newProcessExtras())
	release, build, repo := buildIdentity()
	m.registry.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Namespace: nginxNamespace, Name: "build_info", Help: "A metric with a constant '1' labeled with information about the build.",
		ConstLabels: prometheus.Labels{
			"controller_namespace": id.namespace, "controller_class": id.class, "controller_pod": id.pod,
			"release": release, "build": build, "repository": repo,
		},
	}, func() float64 { return 1 }))
	m.registry.MustRegister(m.tables.collectors()...)
	if cfg.webhookAddr != "" {
		// As ingress-nginx's (collectors/admission.go): gauges, the last
		// admitted review's. Its render and config size series measure
		// nginx.conf, which ramjet has not.
		m.admissionTested = gauge("admission_tested_ingresses", "The length of ingresses processed by the admission controller")
		m.admissionTestedTime = gauge("admission_tested_duration", "The processing duration of the admission controller tests (float seconds)")
		m.admissionRoundtrip = gauge("admission_roundtrip_duration", "The complete duration of the admission controller at the time to process a new event (float seconds)")
		// As ingress-nginx's (collectors/controller.go check_success,
		// check_errors): per Ingress checked, never removed.
		check := func(name, help string) *prometheus.CounterVec {
			return prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: nginxNamespace, Name: name, Help: help, ConstLabels: constLabels},
				[]string{"namespace", "ingress"})
		}
		m.checkSuccess = check("check_success", "Cumulative number of Ingress controller syntax check operations")
		m.checkErrors = check("check_errors", "Cumulative number of Ingress controller errors during syntax check operations")
		m.registry.MustRegister(m.admissionTested, m.admissionTestedTime, m.admissionRoundtrip, m.checkSuccess, m.checkErrors)
	}
	m.registry.MustRegister(extra...)
	return m
}

// admitted records an Ingress (namespace, name) the webhook admitted:
// tested Ingresses compiled together, testing them took tested, the whole
// review roundtrip.
func (m *metrics) admitted(namespace, name string, ingresses int, tested, roundtrip time.Duration) {
	if m == nil || m.admissionTested == nil {
		return
	}
	m.checkSuccess.WithLabelValues(namespace, name).Inc()
	m.admissionTested.Set(float64(ingresses))
	m.admissionTestedTime.Set(tested.Seconds())
	m.admissionRoundtrip.Set(roundtrip.Seconds())
}

// refusedIngress records an Ingress of the controller's class that the
// webhook refused, as ingress-nginx's CheckIngress counts a check that
// failed.
func (m *metrics) refusedIngress(namespace, name string) {
	if m == nil || m.checkErrors == nil {
		return
	}
	m.checkErrors.WithLabelValues(namespace, name).Inc()
}

// buildIdentity is build_info's release, build and repository: as
// --version prints them, the release and the source revision, and the
// module path.
func buildIdentity() (release, build, repo string) {
	release, build, repo = version, revision, "unknown"
	if info, ok := debug.ReadBuildInfo(); ok {
		release = cmp.Or(release, info.Main.Version)
		repo = cmp.Or(info.Main.Path, repo)
		for _, s := range info.Settings {
			if s.Key == "vcs.revision" {
				build = s.Value
			}
		}
	}
	return cmp.Or(release, "(devel)"), cmp.Or(build, "unknown"), repo
}

// watchRouter adds the router's own counters, read at scrape time.
func (m *metrics) watchRouter(rt *router.Router) {
	if m == nil {
		return
	}
	constLabels := m.id.labels()
	m.registry.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "ramjet_table_generation", Help: "Generation of the serving table (0 before the first)", ConstLabels: constLabels},
			func() float64 { return float64(rt.Generation()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "ramjet_regex_timeouts_total", Help: "Requests in which a regex route's match hit its timeout and counted as no match", ConstLabels: constLabels},
			func() float64 { return float64(rt.Stats().RegexTimeouts) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "ramjet_regex_budget_exceeded_total", Help: "Requests answered 404 because their host's regex routes took the whole match budget", ConstLabels: constLabels},
			func() float64 { return float64(rt.Stats().RegexBudgetExceeded) }),
	)
}

// watchConns adds ingress-nginx's nginx status collector
// (collectors/nginx_status.go): the client connections of the traffic
// listeners as nginx's stub_status counts them, read at scrape time.
func (m *metrics) watchConns(conns *h1.ConnStats) {
	if m == nil || conns == nil {
		return
	}
	labels := m.id.labels()
	name := func(n string) string { return prometheus.BuildFQName(nginxNamespace, "nginx_process", n) }
	m.registry.MustRegister(&connCollector{
		conns:    conns,
		total:    prometheus.NewDesc(name("connections_total"), "total number of connections with state {accepted, handled}", []string{"state"}, labels),
		requests: prometheus.NewDesc(name("requests_total"), "total number of client requests", nil, labels),
		now:      prometheus.NewDesc(name("connections"), "current number of client connections with state {active, reading, writing, waiting}", []string{"state"}, labels),
	})
}

// connCollector is ingress-nginx's nginx status collector over conns.
type connCollector struct {
	conns                *h1.ConnStats
	total, requests, now *prometheus.Desc
}

func (c *connCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.total
	ch <- c.requests
	ch <- c.now
}

func (c *connCollector) Collect(ch chan<- prometheus.Metric) {
	n := c.conns.Counts()
	ch <- prometheus.MustNewConstMetric(c.total, prometheus.CounterValue, float64(n.Accepted), "accepted")
	ch <- prometheus.MustNewConstMetric(c.total, prometheus.CounterValue, float64(n.Accepted), "handled")
	ch <- prometheus.MustNewConstMetric(c.requests, prometheus.CounterValue, float64(n.Requests))
	ch <- prometheus.MustNewConstMetric(c.now, prometheus.GaugeValue, float64(n.Active), "active")
	ch <- prometheus.MustNewConstMetric(c.now, prometheus.GaugeValue, float64(n.Reading), "reading")
	ch <- prometheus.MustNewConstMetric(c.now, prometheus.GaugeValue, float64(n.Writing), "writing")
	ch <- prometheus.MustNewConstMetric(c.now, prometheus.GaugeValue, float64(n.Waiting), "waiting")
}

// processExtras are the series of ingress-nginx's nginx process collector
// (collectors/process.go) that Prometheus's process collector has not:
// the number of processes serving (this one), the oldest one's start, and
// the bytes they read and wrote (/proc/<pid>/io read_bytes and
// write_bytes, as process-exporter reads them). Without /proc there are
// none, as with Prometheus's.
type processExtras struct {
	procs, started, read, written *prometheus.Desc
}

func newProcessExtras() *processExtras {
	name := func(n string) string { return prometheus.BuildFQName(nginxNamespace, "nginx_process", n) }
	return &processExtras{
		procs:   prometheus.NewDesc(name("num_procs"), "number of processes", nil, nil),
		started: prometheus.NewDesc(name("oldest_start_time_seconds"), "start time in seconds since 1970/01/01", nil, nil),
		read:    prometheus.NewDesc(name("read_bytes_total"), "number of bytes read", nil, nil),
		written: prometheus.NewDesc(name("write_bytes_total"), "number of bytes written", nil, nil),
	}
}

func (p *processExtras) Describe(ch chan<- *prometheus.Desc) {
	ch <- p.procs
	ch <- p.started
	ch <- p.read
	ch <- p.written
}

func (p *processExtras) Collect(ch chan<- prometheus.Metric) {
	self, err := procfs.Self()
	if err != nil {
		return
	}
	stat, err := self.Stat()
	if err != nil {
		return
	}
	ch <- prometheus.MustNewConstMetric(p.procs, prometheus.GaugeValue, 1)
	if start, err := stat.StartTime(); err == nil {
		ch <- prometheus.MustNewConstMetric(p.started, prometheus.GaugeValue, start)
	}
	if io, err := self.IO(); err == nil {
		ch <- prometheus.MustNewConstMetric(p.read, prometheus.CounterValue, float64(io.ReadBytes))
		ch <- prometheus.MustNewConstMetric(p.written, prometheus.CounterValue, float64(io.WriteBytes))
	}
}

// observer is the router's observer for these metrics; nil when off.
func (m *metrics) observer() func(router.Record) {
	if m == nil {
		return nil
	}
	return m.observe
}

// handler serves the registry in the Prometheus exposition formats; nil
// when metrics are off.
func (m *metrics) handler(log *slog.Logger) http.Handler {
	if m == nil {
		return nil
	}
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{
		ErrorLog:      slog.NewLogLogger(log.Handler(), slog.LevelError),
		ErrorHandling: promhttp.ContinueOnError,
	})
}

// observe counts one answered request. It runs on the request's goroutine
// after the answer was written.
func (m *metrics) observe(r router.Record) {
	if r.Reason == router.ReasonRefused {
		// Refused before any location: ingress-nginx's monitor runs in
		// its locations' log phase (log_by_lua), so nginx logs such a
		// request but no request series counts it.
		return
	}
	host := r.VirtualHost
	if m.perHost && host == "" {
		// No Ingress rule's host answered. ingress-nginx drops such
		// requests unless --metrics-per-undefined-host.
		if !m.perUndefinedHost {
			return
		}
		host = undefinedHost
	} else if al := m.aliases.Load(); m.perHost && al != nil && (*al)[r.Host] == host {
		// ingress-nginx labels $host, and counts a server's aliases as
		// its names: a request for an alias is labelled with it.
		host = r.Host
	}
	status := statusLabel(r.Status)
	if m.statusClasses && len(status) == 3 {
		status = status[:1] + "xx"
	}
	var lv [8]string
	lv[0] = status
	lv[1] = methodLabel(r.Method)
	lv[2] = pathLabel(r)
	lv[3] = r.Route.Namespace
	lv[4] = r.Route.Name
	// As ingress-nginx: the location's Service, whatever answered (its
	// canary, its redirect), and canary names the alternative upstream
	// that took the request.
	lv[5] = locationOf(&r).Name
	if r.Route.Field == compile.GlobalDefaultBackendField {
		// ingress-nginx's default backend location names no Service.
		lv[5] = ""
	}
	if _, ok := servedByCanary(r); ok {
		lv[6] = upstreamName(r.Service.Namespace, r.Service.Name, r.Service.WrittenPort())
	}
	labels := lv[:7]
	if m.perHost {
		lv[7] = host
		labels = lv[:8]
	}
	if m.requests != nil {
		m.requests.WithLabelValues(labels...).Inc()
	}
	observe(m.requestTime, labels, r.Duration.Seconds())
	observe(m.requestSize, labels, float64(requestLength(r)))
	// ingress-nginx's monitor.lua observes $bytes_sent, head and body,
	// for both.
	sent := float64(r.HeaderBytes + r.BytesOut)
	observe(m.responseSize, labels, sent)
	observe(m.bytesSent, labels, sent)
	if r.Tries > 0 {
		// As nginx's $upstream_* variables: only for proxied requests.
		if r.UpstreamHeaderTime > 0 {
			observe(m.headerTime, labels, r.UpstreamHeaderTime.Seconds())
		}
		observe(m.upTime, labels, r.UpstreamTime.Seconds())
		if !r.Unconnected && r.Reason != router.ReasonUpstreamUnreachable {
			// A last try that opened no connection leaves "-" in
			// $upstream_connect_time, which monitor.lua does not observe.
			observe(m.connectTime, labels, r.UpstreamConnectTime.Seconds())
		}
	}
	if r.Tries > 1 {
		m.retries.WithLabelValues(r.Route.Namespace, r.Route.Name, r.Service.Name).Add(float64(r.Tries - 1))
	}
}

// observe adds v to h's series of labels; h nil is an excluded metric.
func observe(h *prometheus.HistogramVec, labels []string, v float64) {
	if h != nil {
		h.WithLabelValues(labels...).Observe(v)
	}
}

// requestCollectors are the request metrics not excluded.
func (m *metrics) requestCollectors() []interface {
	prometheus.Collector
	DeletePartialMatch(prometheus.Labels) int
} {
	var out []interface {
		prometheus.Collector
		DeletePartialMatch(prometheus.Labels) int
	}
	if m.requests != nil {
		out = append(out, m.requests)
	}
	for _, h := range []*prometheus.HistogramVec{m.requestTime, m.headerTime, m.upTime, m.connectTime, m.requestSize, m.responseSize, m.bytesSent} {
		if h != nil {
			out = append(out, h)
		}
	}
	return out
}

// servedByCanary reports whether the matched route's canary served r, and
// the primary backend it took the request from. A host's fallback carries
// no route in the record: its canary served when the Service that answered
// is not the location's (Record.Location) and no stand-in answered, and
// the primary is then nil.
func servedByCanary(r router.Record) (*match.Backend, bool) {
	if r.MatchedRoute == nil && r.Backend != "" && r.Location.Name != "" && !r.StandIn {
		l, s := r.Location, r.Service
		return nil, l.Namespace != s.Namespace || l.Name != s.Name || l.Port != s.Port
	}
	if r.MatchedRoute == nil || r.Backend == "" {
		return nil, false
	}
	primary := r.MatchedRoute.Backend
	if primary == nil || primary.Traffic == nil || primary.Traffic.Canary == nil || primary.Traffic.Canary.Backend == nil {
		return nil, false
	}
	return primary, primary.Traffic.Canary.Backend.ID == r.Backend
}

// upstreamName is ingress-nginx's name for the upstream of a Service
// port, "namespace-name-port" with the port as the Ingress wrote it
// (controller/util.go upstreamName), the label value its canary label
// carries.
func upstreamName(namespace, name, port string) string {
	return namespace + "-" + name + "-" + port
}

// statusLabels holds the label of every three-digit status, so that
// counting a request allocates nothing for it.
var statusLabels = func() (out [1000]string) {
	for i := 100; i < len(out); i++ {
		out[i] = strconv.Itoa(i)
	}
	return out
}()

func statusLabel(status int) string {
	if status >= 100 && status < len(statusLabels) {
		return statusLabels[status]
	}
	return strconv.Itoa(status)
}

// requestLength approximates nginx's $request_length: request line,
// headers and body as received.
func requestLength(r router.Record) int64 {
	n := r.BytesIn
	req := r.Request
	if req == nil || r.Subrequest != "" {
		return n // an auth subrequest reads nothing of the client's
	}
	if r.Reason == router.ReasonRefused && req.Method == "" {
		// Refused before its head was read whole: nginx counts a head
		// only from a request line it parsed.
		return 0
	}
	n += int64(len(req.Method) + 1 + len(req.RequestURI) + 1 + len(req.Proto) + 2)
	n += int64(len("Host: ") + len(req.Host) + 2)
	for k, vs := range req.Header {
		for _, v := range vs {
			n += int64(len(k) + 2 + len(v) + 2)
		}
	}
	return n + 2
}

// methodLabel bounds the method label: any token is a valid method, and a
// client could otherwise make a series per request.
func methodLabel(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodConnect, http.MethodOptions, http.MethodTrace:
		return m
	}
	return "OTHER"
}

// pathLabel is ingress-nginx's path label, monitor.lua's
// $location_path: the matched route's path as declared ("/" for a
// Prefix "/" and for a default backend; a regex-mode host's declared
// path, not the pattern made of it), "" when nothing matched or the
// global default backend answered for the default server (its location
// has no Ingress).
func pathLabel(r router.Record) string {
	switch {
	case r.MatchedRoute != nil:
		return match.LocationPath(r.MatchedRoute)
	case r.Route.Field == compile.GlobalDefaultBackendField && r.VirtualHost == "":
		return ""
	case r.Service.Name != "" || r.Route.Field != "":
		return "/"
	}
	return ""
}

// published records a compile: res its result, changed whether its table
// was published (the digest differed), at now. A published table is
// ingress-nginx's successful reload. The request series of Ingresses no
// longer in the table are removed, so that churn does not grow the
// scrape for ever.
func (m *metrics) published(res *compile.Result, changed bool, now time.Time) {
	if m == nil {
		return
	}
	m.rebuilds.Inc()
	byReason := map[string]int{}
	for _, w := range res.Warnings {
		byReason[string(w.Reason)]++
	}
	m.warnings.Reset()
	for reason, n := range byReason {
		m.warnings.WithLabelValues(reason).Set(float64(n))
	}
	m.configSuccess.Set(1)
	if res.Table == nil {
		return
	}
	m.hash = digestHash(res.Table.Digest())
	m.configHash.Set(m.hash)
	// A rotated default certificate changes its series, not the digest.
	var def *tls.Certificate
	secret := ""
	if m.defaultCert != nil {
		def, secret = m.defaultCert()
	}
	if changed || def != m.lastDefault {
		m.lastDefault = def
		m.tables.set(res.Table, m.id.class, def, secret)
	}
	if !changed {
		return
	}
	m.aliases.Store(exactAliases(res.Table))
	m.publishes.Inc()
	m.reloads.Inc()
	m.configSuccessTime.Set(float64(now.Unix()))
	size := res.Table.Size()
	m.tableSize.WithLabelValues("virtual_hosts").Set(float64(size.VirtualHosts))
	m.tableSize.WithLabelValues("routes").Set(float64(size.Routes))
	m.tableSize.WithLabelValues("backends").Set(float64(size.Backends))
	m.tableSize.WithLabelValues("certificates").Set(float64(size.Certificates))

	now2 := tableIngresses(res.Table)
	m.mu.Lock()
	defer m.mu.Unlock()
	for ing := range m.ingresses {
		if now2[ing] {
			continue
		}
		gone := prometheus.Labels{"namespace": ing[0], "ingress": ing[1]}
		for _, v := range m.requestCollectors() {
			v.DeletePartialMatch(gone)
		}
		m.retries.DeletePartialMatch(gone)
		delete(m.ingresses, ing)
	}
	for ing := range now2 {
		m.ingresses[ing] = true
	}
}

// loadFailed records a reload that failed: offline, a manifests folder
// that did not load (the previous table keeps serving).
func (m *metrics) loadFailed() {
	if m == nil {
		return
	}
	m.configSuccess.Set(0)
	m.configHash.Set(0) // as ingress-nginx's ConfigSuccess(hash, false)
	m.reloadErrors.Inc()
}

// loadRecovered records that the folder reads as the table serving
// again, with nothing to publish.
func (m *metrics) loadRecovered() {
	if m != nil {
		m.configSuccess.Set(1)
		m.configHash.Set(m.hash)
	}
}

// exactAliases maps the exact server-alias names of t's hosts to the
// host's name; nil when there are none. A "*." alias names no single
// host, which ingress-nginx's label, the client's, would.
func exactAliases(t *match.Table) *map[string]string {
	var al map[string]string
	for vh := range t.VirtualHosts() {
		if vh.Actions == nil || vh.Name == "" {
			continue
		}
		for _, a := range vh.Actions.Aliases {
			if strings.HasPrefix(a, "*.") {
				continue
			}
			if al == nil {
				al = map[string]string{}
			}
			if _, taken := al[a]; !taken {
				al[a] = vh.Name // the first host's, as the table's lookup
			}
		}
	}
	if al == nil {
		return nil
	}
	return &al
}

// tableIngresses are the (namespace, name) of every Ingress that declared
// something in t or created one of its hosts.
func tableIngresses(t *match.Table) map[[2]string]bool {
	out := map[[2]string]bool{}
	for vh := range t.VirtualHosts() {
		for _, r := range vh.Routes {
			out[[2]string{r.Source.Namespace, r.Source.Name}] = true
		}
		if vh.Fallback != nil {
			out[[2]string{vh.FallbackSource.Namespace, vh.FallbackSource.Name}] = true
		}
		if vh.Creator.Name != "" {
			// Requests the global default backend answers on the host
			// are counted under it (router.Record.Route).
			out[[2]string{vh.Creator.Namespace, vh.Creator.Name}] = true
		}
	}
	return out
}

// digestHash is the config_hash gauge's value: the first 52 bits of the
// table digest, which a float64 holds exactly (ingress-nginx shows a
// 64-bit hash rounded to a float).
func digestHash(digest string) float64 {
	b, err := hex.DecodeString(digest)
	if err != nil || len(b) < 8 {
		return 0
	}
	return float64(binary.BigEndian.Uint64(b) >> 12)
}

// readInPart records a reload that published what it could read while
// some manifest could not be: not a successful reload, though the table
// it published serves.
func (m *metrics) readInPart() {
	if m != nil {
		m.configSuccess.Set(0)
		m.reloadErrors.Inc()
	}
}
