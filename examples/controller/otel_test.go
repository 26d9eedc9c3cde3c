package main

import (
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
	"k8s.io/apimachinery/pkg/types"
)

// otlpReceiver is an OTLP/gRPC trace collector on loopback: it keeps the
// spans exported to it with their resource's service.name.
type otlpReceiver struct {
	collectortrace.UnimplementedTraceServiceServer
	addr string

	mu    sync.Mutex
	spans []receivedSpan
}

type receivedSpan struct {
	service string
	span    *tracepb.Span
}

func newOTLPReceiver(t testing.TB) *otlpReceiver {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	r := &otlpReceiver{addr: l.Addr().String()}
	s := grpc.NewServer()
	collectortrace.RegisterTraceServiceServer(s, r)
	go func() { _ = s.Serve(l) }()
	t.Cleanup(s.Stop)
	return r
}

func (r *otlpReceiver) Export(_ context.Context, req *collectortrace.ExportTraceServiceRequest) (*collectortrace.ExportTraceServiceResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rs := range req.ResourceSpans {
		service := ""
		for _, a := range rs.GetResource().GetAttributes() {
			if a.Key == "service.name" {
				service = a.GetValue().GetStringValue()
			}
		}
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				r.spans = append(r.spans, receivedSpan{service, s})
			}
		}
	}
	return &collectortrace.ExportTraceServiceResponse{}, nil
}

func (r *otlpReceiver) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.spans)
}

// wait returns the span whose span ID is the one in traceparent tp,
// waiting for the exporter's batch.
func (r *otlpReceiver) wait(t *testing.T, tp string) receivedSpan {
	t.Helper()
	require.Len(t, tp, 55, "traceparent %q", tp)
	id := tp[36:52]
	var found receivedSpan
	require.Eventually(t, func() bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		for _, s := range r.spans {
			if hex.EncodeToString(s.span.SpanId) == id {
				found = s
				return true
			}
		}
		return false
	}, 10*time.Second, 20*time.Millisecond, "no span %s exported", id)
	return found
}

func attrsOf(s *tracepb.Span) map[string]any {
	m := make(map[string]any)
	for _, a := range s.Attributes {
		switch v := a.GetValue(); {
		case v.GetStringValue() != "":
			m[a.Key] = v.GetStringValue()
		default:
			m[a.Key] = v.GetIntValue()
		}
	}
	return m
}

// traceHeaders is a loopback server that answers 200 and keeps the
// traceparent and tracestate of each request by path.
type traceHeaders struct {
	port string
	mu   sync.Mutex
	seen map[string][2]string
}

func newTraceHeaders(t *testing.T) *traceHeaders {
	h := &traceHeaders{seen: make(map[string][2]string)}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		h.seen[r.URL.Path] = [2]string{r.Header.Get("Traceparent"), r.Header.Get("Tracestate")}
		h.mu.Unlock()
		io.WriteString(w, "ok")
	}))
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)
	h.port = u.Port()
	return h
}

func (h *traceHeaders) get(path string) (traceparent, tracestate string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	v := h.seen[path]
	return v[0], v[1]
}

func tracingManifests(backendPort, authPort string) string {
	ing := func(name, path string, ann string) string {
		return fmt.Sprintf(`---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: %s
  namespace: t
  annotations: {%s}
spec:
  ingressClassName: ramjet
  rules:
    - host: app.test
      http: {paths: [{path: %s, pathType: Prefix, backend: {service: {name: app, port: {number: 80}}}}]}
`, name, ann, path)
	}
	return appManifests(backendPort) +
		ing("untrusted", "/untrusted", `nginx.ingress.kubernetes.io/enable-opentelemetry: "true", nginx.ingress.kubernetes.io/opentelemetry-trust-incoming-span: "false"`) +
		ing("named", "/named", `nginx.ingress.kubernetes.io/enable-opentelemetry: "true", nginx.ingress.kubernetes.io/opentelemetry-operation-name: checkout`) +
		ing("quiet", "/quiet", `nginx.ingress.kubernetes.io/enable-opentelemetry: "false"`) +
		ing("guarded", "/guarded", `nginx.ingress.kubernetes.io/auth-url: "http://127.0.0.1:`+authPort+`/check"`)
}

func otelConfigMap(data map[string]string) string {
	s := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: nginx, namespace: ingress}\ndata:\n"
	for _, k := range []string{"enable-opentelemetry", "otlp-collector-host", "otlp-collector-port", "otel-service-name",
		"otel-schedule-delay-millis", "otel-sampler", "otel-sampler-ratio", "otel-sampler-parent-based"} {
		if v, ok := data[k]; ok {
			s += "  " + k + ": " + strconv.Quote(v) + "\n"
		}
	}
	return s
}

const clientTraceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

// TestOpenTelemetryExport runs the controller offline with ingress-nginx's
// OpenTelemetry keys (docs/user-guide/third-party-addons/opentelemetry.md)
// against an in-process OTLP collector: each traced request's server span
// arrives with the module's name and attributes, in the trace the backend
// was told of (the auth service is told of none); trust-incoming-span
// decides the parent; a sampler ratio of 0 exports nothing.
func TestOpenTelemetryExport(t *testing.T) {
	rcv := newOTLPReceiver(t)
	_, rcvPort, _ := net.SplitHostPort(rcv.addr)
	backend, auth := newTraceHeaders(t), newTraceHeaders(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "app.yaml"), tracingManifests(backend.port, auth.port))
	cmFile := filepath.Join(dir, "configmap.yaml")
	keys := map[string]string{"enable-opentelemetry": "true", "otlp-collector-host": "127.0.0.1", "otlp-collector-port": rcvPort,
		"otel-service-name": "edge", "otel-schedule-delay-millis": "50"}
	writeFile(t, cmFile, otelConfigMap(keys))

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	inst, err := start(ctx, config{
		manifests:    dir,
		configMap:    &types.NamespacedName{Namespace: "ingress", Name: "nginx"},
		httpAddr:     "127.0.0.1:0",
		httpsAddr:    "127.0.0.1:0",
		debugAddr:    "127.0.0.1:0",
		pollInterval: 20 * time.Millisecond,
	}, slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	require.NoError(t, err)
	defer func() { cancel(); _ = inst.Wait() }()
	client := &http.Client{Timeout: 10 * time.Second}
	defer client.CloseIdleConnections()
	send := func(path string, h map[string]string) {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, "http://"+inst.HTTPAddr+path, nil)
		require.NoError(t, err)
		req.Host = "app.test"
		req.Header.Set("User-Agent", "otel-test")
		for k, v := range h {
			req.Header.Set(k, v)
		}
		res, err := client.Do(req)
		require.NoError(t, err)
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		require.Equal(t, http.StatusOK, res.StatusCode, path)
	}

	// The ConfigMap traces every location and trusts the client's span
	// (config.go: opentelemetry-trust-incoming-span defaults to true).
	send("/traced/a?x=1", map[string]string{"Traceparent": clientTraceparent, "Tracestate": "vendor=1"})
	tp, ts := backend.get("/traced/a")
	s := rcv.wait(t, tp)
	assert.Equal(t, "edge", s.service, "otel-service-name")
	assert.Equal(t, "/", s.span.Name, "the location \"/\" (appManifests' path)")
	assert.Equal(t, tracepb.Span_SPAN_KIND_SERVER, s.span.Kind)
	assert.Equal(t, "4bf92f3577b34da6a3ce929d0e0e4736", hex.EncodeToString(s.span.TraceId), "in the client's trace")
	assert.Equal(t, "00f067aa0ba902b7", hex.EncodeToString(s.span.ParentSpanId), "the client's span is the parent")
	assert.Equal(t, "vendor=1", ts, "the client's tracestate goes on")
	assert.Equal(t, tracepb.Status_STATUS_CODE_OK, s.span.Status.GetCode())
	a := attrsOf(s.span)
	_, httpPort, _ := net.SplitHostPort(inst.HTTPAddr)
	port, _ := strconv.Atoi(httpPort)
	for k, v := range map[string]any{
		"http.method": "GET", "http.flavor": "1.1", "http.target": "/traced/a?x=1", "http.server_name": "app.test",
		"http.host": "app.test", "http.user_agent": "otel-test", "http.status_code": int64(200), "http.scheme": "http",
		"net.host.port": int64(port), "net.peer.ip": "127.0.0.1",
	} {
		assert.Equal(t, v, a[k], "attribute %s", k)
	}
	assert.Contains(t, a, "net.peer.port")

	// opentelemetry-trust-incoming-span "false" on the Ingress: a trace of
	// its own, and the client's headers do not reach the backend.
	send("/untrusted/b", map[string]string{"Traceparent": clientTraceparent, "Tracestate": "vendor=1"})
	tp, ts = backend.get("/untrusted/b")
	s = rcv.wait(t, tp)
	assert.Empty(t, s.span.ParentSpanId, "a root span")
	assert.NotEqual(t, "4bf92f3577b34da6a3ce929d0e0e4736", hex.EncodeToString(s.span.TraceId))
	assert.Equal(t, tp[3:35], hex.EncodeToString(s.span.TraceId))
	assert.Empty(t, ts)
	assert.Equal(t, "/untrusted/", s.span.Name)

	// opentelemetry-operation-name names the span.
	send("/named/c", nil)
	tp, _ = backend.get("/named/c")
	assert.Equal(t, "checkout", rcv.wait(t, tp).span.Name)

	// The backend is told of the span, the auth service of no trace, as
	// ingress-nginx's module tells its auth subrequest of none.
	send("/guarded/d", map[string]string{"Traceparent": clientTraceparent})
	tp, _ = backend.get("/guarded/d")
	authTP, _ := auth.get("/check")
	assert.Empty(t, authTP, "the auth subrequest carries no trace context")
	s = rcv.wait(t, tp)
	assert.Equal(t, "4bf92f3577b34da6a3ce929d0e0e4736", hex.EncodeToString(s.span.TraceId))

	// enable-opentelemetry "false" on the Ingress: no span, the client's
	// header passes as it is.
	send("/quiet/e", map[string]string{"Traceparent": clientTraceparent})
	tp, _ = backend.get("/quiet/e")
	assert.Equal(t, clientTraceparent, tp)

	// A sampler ratio of 0 (TraceIdRatioBased, not parent-based) exports
	// nothing, while the context still goes on, unsampled. The exporter
	// follows the ConfigMap without a restart.
	keys["otel-sampler"], keys["otel-sampler-ratio"], keys["otel-sampler-parent-based"] = "TraceIdRatioBased", "0", "false"
	writeFile(t, cmFile, otelConfigMap(keys))
	require.Eventually(t, func() bool {
		send("/sampled/f", nil)
		tp, _ := backend.get("/sampled/f")
		return tp[53:] == "00"
	}, 10*time.Second, 50*time.Millisecond, "the sampler did not change")
	time.Sleep(300 * time.Millisecond) // the old provider's last batch
	before := rcv.count()
	for range 20 {
		send("/sampled/g", map[string]string{"Traceparent": clientTraceparent})
	}
	tp, _ = backend.get("/sampled/g")
	assert.True(t, tp[53:] == "00", "unsampled: %s", tp)
	time.Sleep(300 * time.Millisecond) // six schedule delays
	assert.Equal(t, before, rcv.count(), "a ratio of 0 exports no span")
	require.NotEmpty(t, rcv.targets("/named/c"), "spans are found by their target")
	assert.Empty(t, rcv.targets("/quiet/e"), "the location that is not traced exported no span")
}

// targets are the spans received for the request-target.
func (r *otlpReceiver) targets(target string) []*tracepb.Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*tracepb.Span
	for _, s := range r.spans {
		if attrsOf(s.span)["http.target"] == target {
			out = append(out, s.span)
		}
	}
	return out
}

// TestOpenTelemetryShutdownFlush: the span of the last request before
// the controller stops reaches the collector with the shutdown, not
// after the batch delay (here an hour), and the shutdown waits for it.
func TestOpenTelemetryShutdownFlush(t *testing.T) {
	rcv := newOTLPReceiver(t)
	_, rcvPort, _ := net.SplitHostPort(rcv.addr)
	backend, auth := newTraceHeaders(t), newTraceHeaders(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "app.yaml"), tracingManifests(backend.port, auth.port))
	writeFile(t, filepath.Join(dir, "configmap.yaml"), otelConfigMap(map[string]string{"enable-opentelemetry": "true",
		"otlp-collector-host": "127.0.0.1", "otlp-collector-port": rcvPort, "otel-schedule-delay-millis": "3600000"}))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	inst, err := start(ctx, config{
		manifests:    dir,
		configMap:    &types.NamespacedName{Namespace: "ingress", Name: "nginx"},
		httpAddr:     "127.0.0.1:0",
		pollInterval: time.Hour,
		drain:        50 * time.Millisecond,
	}, slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	require.NoError(t, err)
	client := &http.Client{Timeout: 10 * time.Second}
	defer client.CloseIdleConnections()
	req, err := http.NewRequest(http.MethodGet, "http://"+inst.HTTPAddr+"/traced/last", nil)
	require.NoError(t, err)
	req.Host = "app.test"
	res, err := client.Do(req)
	require.NoError(t, err)
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	tp, _ := backend.get("/traced/last")
	time.Sleep(100 * time.Millisecond)
	require.Zero(t, rcv.count(), "no span is exported before the batch delay or the shutdown")

	cancel()
	require.NoError(t, inst.Wait())
	require.Equal(t, 1, rcv.count(), "the shutdown exported the span")
	rcv.mu.Lock()
	defer rcv.mu.Unlock()
	assert.Equal(t, tp[36:52], hex.EncodeToString(rcv.spans[0].span.SpanId), "the last request's span")
}

// TestOpenTelemetryServiceNameFromEnv: the module reads the environment
// before its toml for both (agent_config.cpp SetupService and
// SetupOtlpExporter): OTEL_SERVICE_NAME wins over otel-service-name
// ("nginx" by default, always written by ingress-nginx) and
// OTEL_EXPORTER_OTLP_ENDPOINT over the collector keys.
func TestOpenTelemetryServiceNameFromEnv(t *testing.T) {
	s := defaultOtelSettings()
	s.CollectorHost, s.ServiceName = "collector.invalid", "edge"
	for _, c := range []struct{ env, want string }{{"", "edge"}, {"from-env", "from-env"}} {
		t.Setenv("OTEL_SERVICE_NAME", c.env)
		t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "127.0.0.1:1")
		assert.Equal(t, "127.0.0.1:1", s.endpoint())
		p, err := newOtelProvider(nil, s)
		require.NoError(t, err)
		require.NotNil(t, p.batcher)
		assert.Equal(t, resourceField(c.want), p.batcher.resource, "OTEL_SERVICE_NAME=%q", c.env)
		require.NoError(t, p.shutdown(context.Background()))
	}
}

// TestOpenTelemetryBatchKeysClamped: ingress-nginx types the batch keys
// as 32-bit integers and its module clamps them (agent_config.cpp: the
// queue and batch sizes to at least 1, the delay to at least 0), so "0"
// is a value it takes, not one to warn about and replace by the default.
func TestOpenTelemetryBatchKeysClamped(t *testing.T) {
	c := flagsWith(t)
	warns := applyConfigMap(&c, cmData(map[string]string{"otel-schedule-delay-millis": "0", "otel-max-queuesize": "0", "otel-max-export-batch-size": "-3"}), c.flagsSet)
	assert.Empty(t, warns)
	assert.Equal(t, time.Duration(0), c.otel.ScheduleDelay)
	assert.Equal(t, 1, c.otel.MaxQueueSize)
	assert.Equal(t, 1, c.otel.MaxExportBatchSize)
	warns = applyConfigMap(&c, cmData(map[string]string{"otel-max-queuesize": "many"}), c.flagsSet)
	require.Len(t, warns, 1)
	assert.Equal(t, 2048, c.otel.MaxQueueSize, "a value that is no number keeps the default")
}

// TestOpenTelemetrySamplerRatioClamped: ingress-nginx types
// otel-sampler-ratio as a float and writes it into the module's toml as
// it is; the SDK's TraceIdRatioBasedSampler clamps it to [0, 1]. So "1.5"
// samples every trace and "-0.5" none, rather than warn and fall back to
// the default 0.01; a value that is no finite number still warns.
func TestOpenTelemetrySamplerRatioClamped(t *testing.T) {
	def := defaultOtelSettings()
	def.Sampler = "TraceIdRatioBased"
	for _, c := range []struct {
		v    string
		want otelSampler
		warn bool
	}{
		{"1.5", otelSampler{parentBased: true, all: true}, false},
		{"-0.5", otelSampler{parentBased: true, none: true}, false},
		{"0.5", otelSampler{parentBased: true, bound: 1 << 62}, false},
		{"NaN", def.sampler(), true},
		{"half", def.sampler(), true},
	} {
		cfg := flagsWith(t)
		warns := applyConfigMap(&cfg, cmData(map[string]string{"otel-sampler": "TraceIdRatioBased", "otel-sampler-ratio": c.v}), cfg.flagsSet)
		assert.Equal(t, c.warn, len(warns) == 1, "%s: %v", c.v, warns)
		assert.Equal(t, c.want, cfg.otel.sampler(), c.v)
	}
}

// TestOpenTelemetryKeysWeaklyTyped: ingress-nginx decodes its ConfigMap
// with mapstructure's weak typing, as the router's keys are read
// (router/configmap): a number in any base strconv.ParseInt's base 0
// reads, and "" as false.
func TestOpenTelemetryKeysWeaklyTyped(t *testing.T) {
	c := flagsWith(t)
	warns := applyConfigMap(&c, cmData(map[string]string{"otel-max-queuesize": "0x800", "otel-max-export-batch-size": "010", "otel-sampler-parent-based": ""}), c.flagsSet)
	assert.Empty(t, warns)
	assert.Equal(t, 2048, c.otel.MaxQueueSize)
	assert.Equal(t, 8, c.otel.MaxExportBatchSize)
	assert.False(t, c.otel.ParentBased)
}
