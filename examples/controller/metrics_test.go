package main

import (
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"ramjet.dev/ramjet/compile"
	"ramjet.dev/ramjet/match"
	"ramjet.dev/ramjet/router"
)

// sample is one series of a scrape: its labels and value. A histogram
// appears as its _count and _sum series.
type sample struct {
	name   string
	labels map[string]string
	value  float64
}

// scrape is a parsed /metrics answer.
type scrape []sample

func parseScrape(t testing.TB, text string) scrape {
	t.Helper()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(text))
	require.NoError(t, err, "the /metrics answer parses as Prometheus text")
	var out scrape
	for name, f := range families {
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			switch {
			case m.Counter != nil:
				out = append(out, sample{name, labels, m.GetCounter().GetValue()})
			case m.Gauge != nil:
				out = append(out, sample{name, labels, m.GetGauge().GetValue()})
			case m.Untyped != nil:
				out = append(out, sample{name, labels, m.GetUntyped().GetValue()})
			case m.Histogram != nil:
				out = append(out, sample{name + "_count", labels, float64(m.GetHistogram().GetSampleCount())})
				out = append(out, sample{name + "_sum", labels, m.GetHistogram().GetSampleSum()})
				for _, b := range m.GetHistogram().GetBucket() {
					bl := maps.Clone(labels)
					bl["le"] = model.FloatString(b.GetUpperBound()).String()
					out = append(out, sample{name + "_bucket", bl, float64(b.GetCumulativeCount())})
				}
			}
		}
	}
	return out
}

// sum adds the series of name whose labels include want, as PromQL's
// sum(name{want}) does.
func (s scrape) sum(name string, want map[string]string) (float64, int) {
	total, n := 0.0, 0
	for _, x := range s {
		if x.name != name || !hasLabels(x.labels, want) {
			continue
		}
		total += x.value
		n++
	}
	return total, n
}

// labelSets lists the label sets of name's series, without the
// controller_* constants.
func (s scrape) labelSets(name string) []map[string]string {
	var out []map[string]string
	for _, x := range s {
		if x.name != name {
			continue
		}
		l := maps.Clone(x.labels)
		delete(l, "controller_namespace")
		delete(l, "controller_class")
		delete(l, "controller_pod")
		out = append(out, l)
	}
	slices.SortFunc(out, func(a, b map[string]string) int { return strings.Compare(labelString(a), labelString(b)) })
	return out
}

func labelString(l map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(l)) {
		parts = append(parts, k+"="+l[k])
	}
	return strings.Join(parts, ",")
}

func hasLabels(have, want map[string]string) bool {
	for k, v := range want {
		if have[k] != v {
			return false
		}
	}
	return true
}

// scrapeMetrics answers /metrics from m's handler.
func scrapeMetrics(t testing.TB, m *metrics) scrape {
	t.Helper()
	rec := httptest.NewRecorder()
	m.handler(slog.New(slog.DiscardHandler)).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	require.Equal(t, http.StatusOK, rec.Code)
	return parseScrape(t, rec.Body.String())
}

func metricsConfig(tweak func(*config)) config {
	cfg := config{
		enableMetrics: true, metricsPerHost: true,
		options:      compile.Options{IngressClass: "ramjet"},
		podName:      "ramjet-0",
		podNamespace: "ingress",
	}
	if tweak != nil {
		tweak(&cfg)
	}
	return cfg
}

// proxied is the record of a request the backend answered.
func proxied(host, vhost string, route *match.Route) router.Record {
	req := httptest.NewRequest(http.MethodGet, "/api/items?x=1", nil)
	req.Host = host
	req.Header.Set("User-Agent", "test")
	return router.Record{
		Method: http.MethodGet, Host: host, Path: "/api/items?x=1", Status: 200,
		Backend: "shop/api:80", Route: route.Source, Endpoint: "10.0.0.7:8080", Tries: 1,
		Request: req, RequestID: "0123456789abcdef0123456789abcdef", ClientAddr: "192.0.2.1",
		VirtualHost: vhost, MatchedRoute: route, Service: router.Service{Namespace: "shop", Name: "api", Port: 80},
		Start: time.Unix(1700000000, 0), Duration: 250 * time.Millisecond,
		UpstreamHeaderTime: 200 * time.Millisecond, UpstreamTime: 240 * time.Millisecond,
		BytesIn: 0, BytesOut: 55, HeaderBytes: 120,
	}
}

var apiRoute = &match.Route{
	Type: match.Prefix, Path: "/api",
	Source: match.Source{Namespace: "shop", Name: "web", Field: "spec.rules[0].http.paths[0]"},
}

func TestMetricsRequestLabels(t *testing.T) {
	shop := map[string]string{"status": "200", "method": "GET", "path": "/api", "namespace": "shop", "ingress": "web", "service": "api", "canary": "", "host": "shop.example.com"}
	with := func(base map[string]string, kv ...string) map[string]string {
		out := maps.Clone(base)
		for i := 0; i < len(kv); i += 2 {
			if kv[i+1] == "-" {
				delete(out, kv[i])
				continue
			}
			out[kv[i]] = kv[i+1]
		}
		return out
	}
	tests := []struct {
		name  string
		tweak func(*config)
		recs  []router.Record
		want  []map[string]string // label sets of nginx_ingress_controller_requests, each counted once
	}{
		{
			name: "labels come from the table",
			recs: []router.Record{proxied("shop.example.com", "shop.example.com", apiRoute)},
			want: []map[string]string{shop},
		},
		{
			name: "a wildcard host is labelled with the rule's host, not the client's",
			recs: []router.Record{proxied("anything-at-all.example.com", "*.example.com", apiRoute)},
			want: []map[string]string{with(shop, "host", "*.example.com")},
		},
		{
			name: "no rule's host answered: not counted, as ingress-nginx",
			recs: []router.Record{proxied("203.0.113.9", "", apiRoute)},
		},
		{
			name:  "no rule's host answered, with -metrics-per-undefined-host",
			tweak: func(c *config) { c.metricsPerUndefinedHost = true },
			recs:  []router.Record{proxied("203.0.113.9", "", apiRoute)},
			want:  []map[string]string{with(shop, "host", "_")},
		},
		{
			name:  "without -metrics-per-host there is no host label and everything counts",
			tweak: func(c *config) { c.metricsPerHost = false },
			recs:  []router.Record{proxied("shop.example.com", "shop.example.com", apiRoute), proxied("203.0.113.9", "", apiRoute)},
			want:  []map[string]string{with(shop, "host", "-"), with(shop, "host", "-")},
		},
		{
			name:  "status classes",
			tweak: func(c *config) { c.reportStatusClasses = true },
			recs: func() []router.Record {
				r := proxied("shop.example.com", "shop.example.com", apiRoute)
				r.Status = 404
				return []router.Record{r}
			}(),
			want: []map[string]string{with(shop, "status", "4xx")},
		},
		{
			name: "an invented method is OTHER; a Prefix / route is path /",
			recs: func() []router.Record {
				r := proxied("shop.example.com", "shop.example.com", &match.Route{Type: match.Prefix, Path: "", Source: apiRoute.Source})
				r.Method = "BREW"
				return []router.Record{r}
			}(),
			want: []map[string]string{with(shop, "method", "OTHER", "path", "/")},
		},
		{
			// monitor.lua's path is $location_path: the path as the
			// Ingress declared it, not the pattern a regex-mode host made
			// of it, and a declared "^" kept.
			name: "a regex route is labelled with its declared path",
			recs: func() []router.Record {
				var out []router.Record
				for _, rt := range []*match.Route{
					{Type: match.Regex, Path: "/api/[0-9]+", OrderPath: "^/api/[0-9]+", Source: apiRoute.Source},
					{Type: match.Regex, Path: "/api/", OrderPath: "/api", Source: apiRoute.Source},
					{Type: match.Regex, Path: "/api/.*", Source: apiRoute.Source},
				} {
					out = append(out, proxied("shop.example.com", "shop.example.com", rt))
				}
				return out
			}(),
			want: []map[string]string{with(shop, "path", "^/api/[0-9]+"), with(shop, "path", "/api"), with(shop, "path", "/api/.*")},
		},
		{
			// ingress-nginx labels a request its canary took with the
			// primary location's Service and the canary's upstream name.
			name: "a request the canary served",
			recs: func() []router.Record {
				canary := &match.Backend{ID: "shop/api-canary:8080", Namespace: "shop", Name: "api-canary", Port: 8080}
				primary := &match.Backend{ID: "shop/api:80", Namespace: "shop", Name: "api", Port: 80,
					Traffic: &match.Traffic{Canary: &match.Canary{Backend: canary, Weight: 10, WeightTotal: 100}}}
				route := &match.Route{Type: apiRoute.Type, Path: apiRoute.Path, Source: apiRoute.Source, Backend: primary}
				toCanary := proxied("shop.example.com", "shop.example.com", route)
				toCanary.Backend = canary.ID
				toCanary.Service = router.Service{Namespace: "shop", Name: "api-canary", Port: 8080}
				return []router.Record{proxied("shop.example.com", "shop.example.com", route), toCanary}
			}(),
			want: []map[string]string{shop, with(shop, "canary", "shop-api-canary-8080")},
		},
		{
			name: "the router's own answer: route and Service when chosen",
			recs: []router.Record{{
				Method: "GET", Host: "shop.example.com", Path: "/nothing", Status: 404, Reason: router.ReasonNoRoute,
				VirtualHost: "shop.example.com", Duration: time.Millisecond,
			}},
			want: []map[string]string{with(shop, "status", "404", "path", "", "namespace", "", "ingress", "", "service", "")},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newMetrics(metricsConfig(tt.tweak))
			for _, r := range tt.recs {
				m.observe(r)
			}
			s := scrapeMetrics(t, m)
			var want []map[string]string
			counts := map[string]float64{}
			for _, l := range tt.want {
				if counts[labelString(l)] == 0 {
					want = append(want, l)
				}
				counts[labelString(l)]++
			}
			slices.SortFunc(want, func(a, b map[string]string) int { return strings.Compare(labelString(a), labelString(b)) })
			if diff := cmp.Diff(want, s.labelSets("nginx_ingress_controller_requests")); diff != "" {
				t.Errorf("request series (-want +got):\n%s", diff)
			}
			for _, l := range want {
				got, _ := s.sum("nginx_ingress_controller_requests", l)
				require.Equal(t, counts[labelString(l)], got, "requests%v", l)
				got, _ = s.sum("nginx_ingress_controller_request_duration_seconds_count", l)
				require.Equal(t, counts[labelString(l)], got, "request_duration_seconds_count%v", l)
			}
			for _, x := range s {
				if strings.HasPrefix(x.name, "nginx_ingress_controller_") && x.labels["controller_pod"] != "" {
					require.Equal(t, map[string]string{"controller_namespace": "ingress", "controller_class": "ramjet.dev/ingress", "controller_pod": "ramjet-0"},
						map[string]string{"controller_namespace": x.labels["controller_namespace"], "controller_class": x.labels["controller_class"], "controller_pod": x.labels["controller_pod"]})
				}
			}
		})
	}
}

func TestMetricsValues(t *testing.T) {
	m := newMetrics(metricsConfig(nil))
	r := proxied("shop.example.com", "shop.example.com", apiRoute)
	m.observe(r)
	r.Tries = 3
	r.Duration = 2 * time.Second
	m.observe(r)
	own := router.Record{Method: "GET", Status: 503, Reason: router.ReasonNoEndpoints, VirtualHost: "shop.example.com",
		Route: apiRoute.Source, MatchedRoute: apiRoute, Service: router.Service{Namespace: "shop", Name: "api", Port: 80}, Duration: time.Millisecond}
	m.observe(own)
	s := scrapeMetrics(t, m)

	ok := map[string]string{"status": "200", "ingress": "web", "host": "shop.example.com"}
	for _, tt := range []struct {
		name string
		want float64
	}{
		{"nginx_ingress_controller_requests", 2},
		{"nginx_ingress_controller_request_duration_seconds_count", 2},
		{"nginx_ingress_controller_request_duration_seconds_sum", 2.25},
		{"nginx_ingress_controller_header_duration_seconds_sum", 0.4},
		{"nginx_ingress_controller_response_duration_seconds_sum", 0.48},
		// Head and body, as ingress-nginx's monitor.lua observes
		// $bytes_sent for both.
		{"nginx_ingress_controller_response_size_sum", 350},
		{"nginx_ingress_controller_bytes_sent_sum", 350},
	} {
		got, n := s.sum(tt.name, ok)
		require.Equal(t, 1, n, "%s: one series", tt.name)
		require.InDelta(t, tt.want, got, 1e-9, tt.name)
	}
	// The request line and headers count in the request size, as in nginx's
	// $request_length.
	size, _ := s.sum("nginx_ingress_controller_request_size_sum", ok)
	require.Greater(t, size, float64(len("GET /api/items?x=1 HTTP/1.1\r\n")))
	// 0.25 s falls in the 0.25 bucket, 2 s in 2.5.
	le := func(b string) float64 {
		v, _ := s.sum("nginx_ingress_controller_request_duration_seconds_bucket", map[string]string{"status": "200", "le": b})
		return v
	}
	require.Equal(t, []float64{0, 1, 1, 2, 2}, []float64{le("0.1"), le("0.25"), le("1"), le("2.5"), le("+Inf")})
	retries, _ := s.sum("ramjet_upstream_retries_total", map[string]string{"namespace": "shop", "ingress": "web", "service": "api"})
	require.Equal(t, 2.0, retries)

	// The router's own 503 was not proxied: no upstream timings.
	failed := map[string]string{"status": "503"}
	n, _ := s.sum("nginx_ingress_controller_requests", failed)
	require.Equal(t, 1.0, n)
	_, series := s.sum("nginx_ingress_controller_header_duration_seconds_count", failed)
	require.Zero(t, series)
	_, series = s.sum("nginx_ingress_controller_response_duration_seconds_count", failed)
	require.Zero(t, series)
}

// TestMetricsConnectNotOpened: a request whose last try opened no
// connection has $upstream_connect_time "-" there, which monitor.lua's
// tonumber cannot read, so ingress-nginx observes no connect time for it;
// its response time, the time spent failing, is observed.
func TestMetricsConnectNotOpened(t *testing.T) {
	m := newMetrics(metricsConfig(nil))
	r := proxied("shop.example.com", "shop.example.com", apiRoute)
	r.Status, r.Reason = 502, router.ReasonUpstreamUnreachable
	r.UpstreamHeaderTime, r.UpstreamTime, r.UpstreamConnectTime, r.BytesOut = 0, 5*time.Second, 5*time.Second, 0
	m.observe(r)
	ok := proxied("shop.example.com", "shop.example.com", apiRoute)
	ok.UpstreamConnectTime = 2 * time.Millisecond
	m.observe(ok)
	s := scrapeMetrics(t, m)

	failed := map[string]string{"status": "502"}
	_, series := s.sum("nginx_ingress_controller_connect_duration_seconds_count", failed)
	require.Zero(t, series, "no connection, no connect time")
	got, _ := s.sum("nginx_ingress_controller_response_duration_seconds_sum", failed)
	require.InDelta(t, 5.0, got, 1e-9)
	got, _ = s.sum("nginx_ingress_controller_connect_duration_seconds_sum", map[string]string{"status": "200"})
	require.InDelta(t, 0.002, got, 1e-9)
}

// metricsSnapshot is Ingresses web and blog, each routing a host to a
// Service of its own, and an Ingress whose path is refused.
func metricsSnapshot(withBlog bool) compile.Snapshot {
	s := compile.Snapshot{
		Ingresses: []*networkingv1.Ingress{
			newIngress("shop", "web", "ramjet", "shop.example.com", "api", "/api"),
			newIngress("shop", "broken", "ramjet", "broken.example.com", "api", "~/a[("),
		},
		IngressClasses: []*networkingv1.IngressClass{{
			ObjectMeta: metav1.ObjectMeta{Name: "ramjet"},
			Spec:       networkingv1.IngressClassSpec{Controller: compile.DefaultControllerName},
		}},
	}
	s.Services = append(s.Services, newService("shop", "api"))
	s.EndpointSlices = append(s.EndpointSlices, newSlice("shop", "api", "api-1", 8080))
	if withBlog {
		s.Ingresses = append(s.Ingresses, newIngress("shop", "blog", "ramjet", "blog.example.com", "blog", "/"))
		s.Services = append(s.Services, newService("shop", "blog"))
		s.EndpointSlices = append(s.EndpointSlices, newSlice("shop", "blog", "blog-1", 8080))
	}
	return s
}

func TestMetricsPublished(t *testing.T) {
	m := newMetrics(metricsConfig(nil))
	opts := compile.Options{IngressClass: "ramjet", ControllerName: compile.DefaultControllerName}
	first := compile.Compile(metricsSnapshot(true), opts)
	require.NotEmpty(t, first.Warnings)
	now := time.Unix(1700000000, 0)
	m.published(&first, true, now)

	blogRoute := &match.Route{Type: match.Prefix, Source: match.Source{Namespace: "shop", Name: "blog", Field: "spec.rules[0].http.paths[0]"}}
	m.observe(proxied("shop.example.com", "shop.example.com", apiRoute))
	m.observe(proxied("blog.example.com", "blog.example.com", blogRoute))

	s := scrapeMetrics(t, m)
	value := func(name string, labels map[string]string) float64 {
		t.Helper()
		v, n := s.sum(name, labels)
		require.Equal(t, 1, n, "%s%v: one series", name, labels)
		return v
	}
	require.Equal(t, digestHash(first.Table.Digest()), value("nginx_ingress_controller_config_hash", nil))
	require.NotZero(t, value("nginx_ingress_controller_config_hash", nil))
	require.Equal(t, 1.0, value("nginx_ingress_controller_config_last_reload_successful", nil))
	require.Equal(t, float64(now.Unix()), value("nginx_ingress_controller_config_last_reload_successful_timestamp_seconds", nil))
	require.Equal(t, 1.0, value("nginx_ingress_controller_success", nil))
	require.Equal(t, 1.0, value("ramjet_publishes_total", nil))
	require.Equal(t, 1.0, value("ramjet_compiles_total", nil))
	var wantWarnings float64
	for _, w := range first.Warnings {
		if w.Reason == first.Warnings[0].Reason {
			wantWarnings++
		}
	}
	require.Equal(t, wantWarnings, value("ramjet_compile_warnings", map[string]string{"reason": string(first.Warnings[0].Reason)}))
	require.Equal(t, 2.0, value("ramjet_table_size", map[string]string{"kind": "backends"}))

	// The same table again is no reload; blog's removal drops its series.
	m.published(&first, false, now.Add(time.Minute))
	second := compile.Compile(metricsSnapshot(false), opts)
	m.published(&second, true, now.Add(2*time.Minute))
	s = scrapeMetrics(t, m)
	require.Equal(t, 2.0, value("nginx_ingress_controller_success", nil))
	require.Equal(t, 3.0, value("ramjet_compiles_total", nil))
	require.Equal(t, float64(now.Add(2*time.Minute).Unix()), value("nginx_ingress_controller_config_last_reload_successful_timestamp_seconds", nil))
	require.Equal(t, 1.0, value("nginx_ingress_controller_requests", map[string]string{"ingress": "web"}))
	_, n := s.sum("nginx_ingress_controller_requests", map[string]string{"ingress": "blog"})
	require.Zero(t, n, "the removed Ingress's series are gone")
	_, n = s.sum("nginx_ingress_controller_request_duration_seconds_count", map[string]string{"ingress": "blog"})
	require.Zero(t, n)

	m.loadFailed()
	s = scrapeMetrics(t, m)
	require.Equal(t, 0.0, value("nginx_ingress_controller_config_last_reload_successful", nil))
	require.Equal(t, 1.0, value("nginx_ingress_controller_errors", nil))
}

func TestMetricsOff(t *testing.T) {
	m := newMetrics(metricsConfig(func(c *config) { c.enableMetrics = false }))
	require.Nil(t, m)
	// A nil *metrics is inert.
	res := compile.Compile(metricsSnapshot(false), compile.Options{IngressClass: "ramjet", ControllerName: compile.DefaultControllerName})
	m.published(&res, true, time.Now())
	m.loadFailed()
	m.watchRouter(router.New(router.Options{}))
	require.Nil(t, m.observer())
	require.Nil(t, m.handler(slog.New(slog.DiscardHandler)))
	require.Nil(t, requestObserver(config{}, m), "no access log, no metrics: the router builds no records")
}

// observe is inlined into every request: a figure for the README.
func BenchmarkMetricsObserve(b *testing.B) {
	m := newMetrics(metricsConfig(nil))
	r := proxied("shop.example.com", "shop.example.com", apiRoute)
	b.ReportAllocs()
	for b.Loop() {
		m.observe(r)
	}
}

func BenchmarkAccessLog(b *testing.B) {
	for _, format := range []string{accessLogText, accessLogJSON} {
		b.Run(format, func(b *testing.B) {
			log := newAccessLog(io.Discard, format)
			r := proxied("shop.example.com", "shop.example.com", apiRoute)
			b.ReportAllocs()
			for b.Loop() {
				log(r)
			}
		})
	}
}

// ingress-nginx's controller_class label (and the certificate metrics'
// class) is its --controller-class, the IngressClass controller value,
// not the class name: a migration that keeps --controller-class keeps the
// series its alerts and dashboards select.
func TestMetricsControllerClassIsControllerValue(t *testing.T) {
	for _, tt := range []struct {
		opts compile.Options
		want string
	}{
		{compile.Options{IngressClass: "nginx", ControllerName: "k8s.io/ingress-nginx"}, "k8s.io/ingress-nginx"},
		{compile.Options{}, compile.DefaultControllerName},
	} {
		m := newMetrics(metricsConfig(func(c *config) { c.options = tt.opts }))
		m.observe(proxied("shop.example.com", "shop.example.com", apiRoute))
		seen := 0
		for _, x := range scrapeMetrics(t, m) {
			if v, ok := x.labels["controller_class"]; ok {
				require.Equal(t, tt.want, v, "%s%v", x.name, x.labels)
				seen++
			}
		}
		require.NotZero(t, seen)
	}
}

// ingress-nginx's leader_election_status carries the controller_*
// constant labels besides name, as every series of its controller
// collector: alerts that select a controller by them find it.
func TestMetricsLeaderElectionLabels(t *testing.T) {
	cfg := metricsConfig(func(c *config) { c.electionID = "ramjet-leader" })
	c := &clusterController{cfg: cfg}
	c.leading.Store(true)
	s := scrapeMetrics(t, newMetrics(cfg, c.collectors()...))
	want := map[string]string{"name": "ramjet-leader", "controller_namespace": "ingress", "controller_class": compile.DefaultControllerName, "controller_pod": "ramjet-0"}
	v, n := s.sum("nginx_ingress_controller_leader_election_status", want)
	require.Equal(t, 1, n, "one series labelled %v", want)
	require.Equal(t, 1.0, v)
}

// ingress-nginx's location of the global default backend names no
// Service: the default server's has no Ingress at all (every label ""),
// a host's own default location has the path "/". The default backend's
// Service is --default-backend-service's, not a label value.
func TestMetricsGlobalDefaultBackendLabels(t *testing.T) {
	m := newMetrics(metricsConfig(func(c *config) { c.metricsPerUndefinedHost = true }))
	viaDefault := func(vhost string) router.Record {
		r := proxied("stranger.test", vhost, apiRoute)
		r.MatchedRoute, r.Route, r.Backend = nil, match.Source{Field: compile.GlobalDefaultBackendField}, "ingress/default-http-backend:80"
		r.Service = router.Service{Namespace: "ingress", Name: "default-http-backend", Port: 80}
		return r
	}
	m.observe(viaDefault(""))
	// A named host's default location is its creator's: the router's
	// record names that Ingress (ingress-nginx's createServers,
	// Ingress: ing), and its template's service is the Ingress's
	// spec.defaultBackend's, none here.
	named := viaDefault("shop.example.com")
	named.Route.Namespace, named.Route.Name = "shop", "web"
	m.observe(named)
	want := []map[string]string{
		{"status": "200", "method": "GET", "path": "", "namespace": "", "ingress": "", "service": "", "canary": "", "host": "_"},
		{"status": "200", "method": "GET", "path": "/", "namespace": "shop", "ingress": "web", "service": "", "canary": "", "host": "shop.example.com"},
	}
	if diff := cmp.Diff(want, scrapeMetrics(t, m).labelSets("nginx_ingress_controller_requests")); diff != "" {
		t.Errorf("request series (-want +got):\n%s", diff)
	}
}

// ingress-nginx's ConfigSuccess sets config_hash to 0 when a reload
// fails and back to the running configuration's hash once it succeeds.
func TestMetricsConfigHashOnFailedLoad(t *testing.T) {
	m := newMetrics(metricsConfig(nil))
	res := compile.Compile(metricsSnapshot(false), compile.Options{IngressClass: "ramjet", ControllerName: compile.DefaultControllerName})
	hash := func() float64 {
		v, n := scrapeMetrics(t, m).sum("nginx_ingress_controller_config_hash", nil)
		require.Equal(t, 1, n)
		return v
	}
	now := time.Unix(1700000000, 0)
	m.published(&res, true, now)
	want := digestHash(res.Table.Digest())
	require.Equal(t, want, hash())
	m.loadFailed()
	require.Zero(t, hash(), "a failed load")
	m.loadRecovered()
	require.Equal(t, want, hash(), "the folder reads as the table serving again")
	m.loadFailed()
	m.published(&res, false, now.Add(time.Minute))
	require.Equal(t, want, hash(), "the same table compiled again")
}

// ingress-nginx's dashboard charts the controller's memory and CPU from
// its nginx process collector (nginx_ingress_controller_nginx_process_*,
// with the controller_* labels); ramjet's process is the one serving.
func TestMetricsNginxProcess(t *testing.T) {
	s := scrapeMetrics(t, newMetrics(metricsConfig(nil)))
	ids := map[string]string{"controller_namespace": "ingress", "controller_class": compile.DefaultControllerName, "controller_pod": "ramjet-0"}
	for _, name := range []string{"nginx_ingress_controller_nginx_process_resident_memory_bytes", "nginx_ingress_controller_nginx_process_cpu_seconds_total"} {
		v, n := s.sum(name, ids)
		require.Equal(t, 1, n, name)
		require.Positive(t, v, name)
	}
	// The rest of ingress-nginx's process collector (process.go), which
	// its monitoring guide lists: one serving process, when it started,
	// the bytes it read and wrote (/proc/<pid>/io).
	if runtime.GOOS != "linux" {
		return
	}
	procs, _ := s.sum("nginx_ingress_controller_nginx_process_num_procs", ids)
	require.Equal(t, 1.0, procs)
	started, n := s.sum("nginx_ingress_controller_nginx_process_oldest_start_time_seconds", ids)
	require.Equal(t, 1, n)
	require.InDelta(t, float64(time.Now().Unix()), started, 24*3600, "this process's start")
	for _, name := range []string{"nginx_ingress_controller_nginx_process_read_bytes_total", "nginx_ingress_controller_nginx_process_write_bytes_total"} {
		_, n := s.sum(name, ids)
		require.Equal(t, 1, n, name)
	}
}

// ingress-nginx's --time-buckets, --length-buckets and --size-buckets set
// the request histograms' buckets (socket.go: time for the durations,
// length for request_size and response_size, size for bytes_sent), and
// --exclude-socket-metrics leaves request metrics out by name, with or
// without the nginx_ingress_controller_ prefix.
func TestMetricsBucketAndExcludeFlags(t *testing.T) {
	cfg, err := parseFlags([]string{"-manifests=x", "-enable-metrics",
		"--time-buckets=0.5,2", "--length-buckets", "100,1000", "--size-buckets=7",
		"--exclude-socket-metrics=nginx_ingress_controller_bytes_sent,header_duration_seconds,nginx_ingress_controller_success"},
		io.Discard, func(string) string { return "" })
	require.NoError(t, err)
	m := newMetrics(cfg)
	m.observe(proxied("shop.example.com", "shop.example.com", apiRoute))
	sc := scrapeMetrics(t, m)
	les := func(name string) []string {
		var out []string
		for _, x := range sc {
			if x.name == name+"_bucket" {
				out = append(out, x.labels["le"])
			}
		}
		return out
	}
	require.Equal(t, []string{"0.5", "2", "+Inf"}, les("nginx_ingress_controller_request_duration_seconds"))
	require.Equal(t, []string{"0.5", "2", "+Inf"}, les("nginx_ingress_controller_connect_duration_seconds"))
	require.Equal(t, []string{"100", "1000", "+Inf"}, les("nginx_ingress_controller_request_size"))
	require.Equal(t, []string{"100", "1000", "+Inf"}, les("nginx_ingress_controller_response_size"))
	for _, gone := range []string{"nginx_ingress_controller_bytes_sent_count", "nginx_ingress_controller_header_duration_seconds_count"} {
		_, n := sc.sum(gone, nil)
		require.Equal(t, 0, n, gone)
	}
	_, n := sc.sum("nginx_ingress_controller_requests", nil)
	require.Equal(t, 1, n)

	cfg, err = parseFlags([]string{"-manifests=x", "--size-buckets=7"}, io.Discard, func(string) string { return "" })
	require.NoError(t, err)
	require.Equal(t, []float64{7}, cfg.sizeBuckets)
	_, err = parseFlags([]string{"-manifests=x", "--time-buckets=2,1"}, io.Discard, func(string) string { return "" })
	require.ErrorIs(t, err, errUsage)
	_, err = parseFlags([]string{"-manifests=x", "--time-buckets=a"}, io.Discard, func(string) string { return "" })
	require.ErrorIs(t, err, errUsage)
}

// build_info is ingress-nginx's constant 1 labelled with the release, the
// build (source revision) and the repository, beside the controller_*
// labels.
func TestMetricsBuildInfo(t *testing.T) {
	sc := scrapeMetrics(t, newMetrics(metricsConfig(nil)))
	var found []map[string]string
	for _, x := range sc {
		if x.name == "nginx_ingress_controller_build_info" {
			require.Equal(t, 1.0, x.value)
			found = append(found, x.labels)
		}
	}
	require.Len(t, found, 1)
	require.ElementsMatch(t, []string{"controller_namespace", "controller_class", "controller_pod", "release", "build", "repository"}, slices.Collect(maps.Keys(found[0])))
	require.NotEmpty(t, found[0]["release"])
	require.NotEmpty(t, found[0]["build"])
}

// A host whose creator declares no path is counted under that Ingress
// when the global default backend answers there; the series go when the
// Ingress does.
func TestMetricsHostCreatorSeriesRemoved(t *testing.T) {
	m := newMetrics(metricsConfig(nil))
	opts := compile.Options{IngressClass: "ramjet", ControllerName: compile.DefaultControllerName}
	snap := metricsSnapshot(false)
	bare := newIngress("shop", "bare", "ramjet", "bare.example.com", "api", "/api")
	bare.Spec.Rules[0].HTTP = nil
	snap.Ingresses = append(snap.Ingresses, bare)
	first := compile.Compile(snap, opts)
	now := time.Unix(1700000000, 0)
	m.published(&first, true, now)
	r := proxied("bare.example.com", "bare.example.com", apiRoute)
	r.MatchedRoute, r.Route = nil, match.Source{Namespace: "shop", Name: "bare", Field: compile.GlobalDefaultBackendField}
	m.observe(r)
	_, n := scrapeMetrics(t, m).sum("nginx_ingress_controller_requests", map[string]string{"ingress": "bare"})
	require.Equal(t, 1, n)

	second := compile.Compile(metricsSnapshot(false), opts)
	m.published(&second, true, now.Add(time.Minute))
	_, n = scrapeMetrics(t, m).sum("nginx_ingress_controller_requests", map[string]string{"ingress": "bare"})
	require.Zero(t, n, "the removed Ingress's series are gone")
}

// A request for a server-alias name is labelled with that name, as
// ingress-nginx's: its monitor sends $host, and the hosts it counts
// (getConfiguration) are each server's name and its aliases. A name
// another rule's host holds stays that host's.
func TestMetricsServerAliasHost(t *testing.T) {
	m := newMetrics(metricsConfig(nil))
	s := metricsSnapshot(true)
	s.Ingresses[0].Annotations = map[string]string{compile.NginxPrefix + "server-alias": "www.shop.example.com, blog.example.com, *.shop.example.org"}
	res := compile.Compile(s, compile.Options{IngressClass: "ramjet", ControllerName: compile.DefaultControllerName})
	m.published(&res, true, time.Now())
	m.observe(proxied("www.shop.example.com", "shop.example.com", apiRoute))
	m.observe(proxied("shop.example.com", "shop.example.com", apiRoute))
	m.observe(proxied("a.shop.example.org", "shop.example.com", apiRoute))
	blog := proxied("blog.example.com", "blog.example.com", apiRoute)
	m.observe(blog)
	sc := scrapeMetrics(t, m)
	for host, want := range map[string]float64{"www.shop.example.com": 1, "shop.example.com": 2, "blog.example.com": 1, "a.shop.example.org": 0} {
		v, _ := sc.sum("nginx_ingress_controller_requests", map[string]string{"host": host})
		require.Equal(t, want, v, host)
	}
}

// TestMetricsConnectTimedOut: a last try whose connect timed out (504)
// opened no connection either: no connect time observed for it.
func TestMetricsConnectTimedOut(t *testing.T) {
	m := newMetrics(metricsConfig(nil))
	r := proxied("shop.example.com", "shop.example.com", apiRoute)
	r.Status, r.Reason, r.Unconnected = 504, router.ReasonUpstreamTimeout, true
	r.UpstreamHeaderTime, r.UpstreamTime, r.UpstreamConnectTime, r.BytesOut = 0, 5*time.Second, 5*time.Second, 0
	m.observe(r)
	s := scrapeMetrics(t, m)
	_, series := s.sum("nginx_ingress_controller_connect_duration_seconds_count", map[string]string{"status": "504"})
	require.Zero(t, series, "no connection, no connect time")
}
