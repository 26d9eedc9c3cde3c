package main

import (
	"context"
	"encoding/binary"
	"fmt"
	"log/slog"
	"math"
	"math/bits"
	"math/rand/v2"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/trace"
	corev1 "k8s.io/api/core/v1"

	"ramjet.dev/ramjet/compile"
	"ramjet.dev/ramjet/router"
	"ramjet.dev/ramjet/router/configmap"
)

// OpenTelemetry (SPEC §23): the library decides which locations are
// traced and what each span says (the ConfigMap's enable-opentelemetry,
// opentelemetry-trust-incoming-span and opentelemetry-operation-name,
// and the annotations, compiled into the table); the controller exports
// the spans with OpenTelemetry's SDK over OTLP/gRPC, configured by the
// keys ingress-nginx v1.15 writes into its module's opentelemetry.toml
// (internal/ingress/controller/nginx.go otelTmpl, defaults in
// config.go): otlp-collector-host and -port, otel-service-name, the
// sampler and the batch processor. As the module (agent_config.cpp),
// the environment's OTEL_EXPORTER_OTLP_ENDPOINT wins over the collector
// keys and OTEL_SERVICE_NAME over otel-service-name.
// The exporter follows the ConfigMap's changes: a new provider replaces
// the old, which flushes what it holds.

// otelSettings are the exporter keys, with ingress-nginx's defaults.
type otelSettings struct {
	CollectorHost, CollectorPort string
	ServiceName                  string
	Sampler                      string // AlwaysOn, AlwaysOff, TraceIdRatioBased
	Ratio                        float64
	ParentBased                  bool
	MaxQueueSize                 int
	ScheduleDelay                time.Duration
	MaxExportBatchSize           int
}

func defaultOtelSettings() otelSettings {
	return otelSettings{CollectorPort: "4317", ServiceName: "nginx", Sampler: "AlwaysOn", Ratio: 0.01, ParentBased: true,
		MaxQueueSize: 2048, ScheduleDelay: 5000 * time.Millisecond, MaxExportBatchSize: 512}
}

// otelConfigMapKeys are the exporter keys the controller reads from the
// ConfigMap (compile.ConfigMapOptions.ExtensionKeys); a value that does
// not parse keeps the default, with a warning.
var otelConfigMapKeys = map[string]func(c *config, v string) error{
	"otlp-collector-host": func(c *config, v string) error { c.otel.CollectorHost = v; return nil },
	"otlp-collector-port": func(c *config, v string) error {
		// The module's toml reads the port as an integer.
		if n, err := strconv.ParseUint(v, 10, 16); err != nil || n == 0 {
			return fmt.Errorf("want a port number")
		}
		c.otel.CollectorPort = v
		return nil
	},
	"otel-service-name": func(c *config, v string) error { c.otel.ServiceName = v; return nil },
	"otel-sampler": func(c *config, v string) error {
		switch v {
		case "AlwaysOn", "AlwaysOff", "TraceIdRatioBased":
			c.otel.Sampler = v
			return nil
		}
		return fmt.Errorf("want AlwaysOn, AlwaysOff or TraceIdRatioBased")
	},
	"otel-sampler-ratio": func(c *config, v string) error {
		// ingress-nginx takes any float; the SDK's TraceIdRatioBasedSampler
		// clamps it to [0, 1], as sampler does.
		r, err := strconv.ParseFloat(v, 32)
		if err != nil || math.IsNaN(r) || math.IsInf(r, 0) {
			return fmt.Errorf("want a number from 0 to 1")
		}
		c.otel.Ratio = r
		return nil
	},
	"otel-sampler-parent-based": func(c *config, v string) (err error) {
		c.otel.ParentBased, err = configmap.ParseBool(v)
		return err
	},
	"otel-max-queuesize":         otelInt(func(s *otelSettings, n int) { s.MaxQueueSize = max(n, 1) }),
	"otel-max-export-batch-size": otelInt(func(s *otelSettings, n int) { s.MaxExportBatchSize = max(n, 1) }),
	"otel-schedule-delay-millis": otelInt(func(s *otelSettings, n int) { s.ScheduleDelay = time.Duration(max(n, 0)) * time.Millisecond }),
	// The module's configuration file: the controller configures the SDK
	// itself, so the path names nothing it reads.
	"opentelemetry-config": func(*config, string) error { return nil },
}

// otelInt is a key holding a 32-bit number, as ingress-nginx's ConfigMap
// types them and mapstructure reads them (any base strconv's base 0
// reads); set clamps it as the module does (agent_config.cpp).
func otelInt(set func(*otelSettings, int)) func(c *config, v string) error {
	return func(c *config, v string) error {
		n, err := strconv.ParseInt(v, 0, 32)
		if err != nil {
			return fmt.Errorf("want a whole number")
		}
		set(&c.otel, int(n))
		return nil
	}
}

// otelSampler decides as the SDK sampler the settings name (sdkSampler,
// otel_sampling_test.go: ParentBased around AlwaysOn, AlwaysOff or
// TraceIDRatioBased, as the module builds it) without the SDK's call:
// that needs a context carrying the parent, made and read per span. The
// SDK's samplers keep the parent's trace state; TestSamplerMatchesSDK
// holds the two to the same decisions.
type otelSampler struct {
	// parentBased: a valid (remote) parent's sampled flag decides.
	parentBased bool
	// all samples every root span, none none; else a root span is
	// sampled when the trace ID's last 8 bytes, shifted right once, are
	// below bound (TraceIDRatioBased).
	all, none bool
	bound     uint64
}

// sampler is the sampler s names.
func (s otelSettings) sampler() otelSampler {
	o := otelSampler{parentBased: s.ParentBased}
	switch {
	case s.Sampler == "AlwaysOff":
		o.none = true
	case s.Sampler != "TraceIdRatioBased" || s.Ratio >= 1:
		o.all = true
	case s.Ratio <= 0:
		o.none = true
	default:
		o.bound = uint64(s.Ratio * (1 << 63))
	}
	return o
}

// sample reports whether a span of trace id under parent (the zero
// context for none) is sampled.
func (o otelSampler) sample(parent router.TraceContext, id trace.TraceID) bool {
	switch {
	case o.parentBased && parent.IsValid():
		return parent.Sampled()
	case o.all:
		return true
	case o.none:
		return false
	}
	return binary.BigEndian.Uint64(id[8:16])>>1 < o.bound
}

// endpoint is where spans go, "" for nowhere.
func (s otelSettings) endpoint() string {
	if e := os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT"); e != "" {
		return e
	}
	if s.CollectorHost == "" {
		return ""
	}
	return net.JoinHostPort(s.CollectorHost, s.CollectorPort)
}

// serviceName is the resource's service.name: the module's SetupService
// takes OTEL_SERVICE_NAME before its toml's name.
func (s otelSettings) serviceName() string {
	if n := os.Getenv("OTEL_SERVICE_NAME"); n != "" {
		return n
	}
	return s.ServiceName
}

// liveTracer is the router's Tracer: the provider of the latest settings.
type liveTracer struct {
	log *slog.Logger

	mu       sync.Mutex // serializes set and shutdown
	closed   bool
	settings otelSettings
	cur      atomic.Pointer[otelProvider]
}

// otelProvider makes and exports the spans of one set of settings.
type otelProvider struct {
	sampler otelSampler
	batcher *otlpBatcher // nil: no collector
}

func newLiveTracer(log *slog.Logger) *liveTracer {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &liveTracer{log: log}
}

// set switches to s when it differs from the current settings; a nil l
// does nothing.
func (l *liveTracer) set(s otelSettings) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	old := l.cur.Load()
	if l.closed || old != nil && s == l.settings {
		return
	}
	p, err := newOtelProvider(l.log, s)
	if err != nil {
		l.log.Warn("OpenTelemetry exporter not made; spans are made and propagated but not exported", "error", err)
	}
	l.settings = s
	l.cur.Store(p)
	if old != nil {
		// What the old exporter holds goes out in the background.
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_ = old.shutdown(ctx)
		}()
	}
}

// otelScope is the instrumentation scope of the spans, the module's
// tracer name.
const otelScope = "nginx"

// newOtelProvider builds the provider for s: the sampler the keys name, and spans batched and exported over OTLP/gRPC to the collector
// (otlpbatch.go), or none without a collector. The exporter connects
// lazily: an absent collector never holds up a request.
func newOtelProvider(log *slog.Logger, s otelSettings) (*otelProvider, error) {
	p := &otelProvider{sampler: s.sampler()}
	var err error
	if ep := s.endpoint(); ep != "" {
		p.batcher, err = newOTLPBatcher(log, ep, s.serviceName(), s)
	}
	return p, err
}

// shutdown exports the spans p holds, within ctx.
func (p *otelProvider) shutdown(ctx context.Context) error {
	if p == nil || p.batcher == nil {
		return nil
	}
	return p.batcher.Shutdown(ctx)
}

// The spans are the SDK's as far as the sampler and what is exported go,
// without its span object: a span lives from its start to End only, its
// record restarted for a later request by the router, which keeps it
// (the router reads Context right after the start and ends a span once),
// and is written into the export batch as it ends. The SDK's span, snapshot and exporter cost several times
// the rest of the request (issue 39); TestOTLPMatchesSDK holds the two
// to the same message.

var _ router.SpanRestarter = (*liveTracer)(nil)

// otelSpan is one request's server span.
type otelSpan struct {
	p            *otelProvider
	traceID      trace.TraceID
	spanID       trace.SpanID
	parentID     trace.SpanID
	remoteParent bool
	flags        byte
	state        string
	start        time.Time
	// ids is the record's ID generator.
	ids idSource
}

// StartSpan starts a server span under the parent the router trusted,
// sampled as the SDK's sampler decides, in a record of its own.
func (l *liveTracer) StartSpan(parent router.TraceContext, name string, start time.Time) router.Span {
	return l.RestartSpan(nil, parent, name, start)
}

// RestartSpan is StartSpan in the record of ended, a span of this
// controller that ended (router.SpanRestarter): the router keeps it with
// its own pooled state of a traced request, so that a span costs no pool
// of its own.
func (l *liveTracer) RestartSpan(ended router.Span, parent router.TraceContext, _ string, start time.Time) router.Span {
	p := l.cur.Load()
	s, ok := ended.(*otelSpan)
	if !ok {
		s = &otelSpan{ids: idSource(rand.Uint64())}
	}
	*s = otelSpan{p: p, start: start, ids: s.ids}
	var pflags byte
	if parent.IsValid() {
		s.traceID, s.parentID, s.remoteParent, pflags = parent.TraceID, parent.SpanID, true, parent.Flags
		if parent.State != "" {
			// The parent's trace state as the SDK reads and writes it
			// (none for one it cannot read).
			if ts, err := trace.ParseTraceState(parent.State); err == nil && ts.Len() > 0 {
				s.state = ts.String()
			}
		}
	} else {
		s.traceID = s.ids.traceID()
	}
	s.spanID = s.ids.spanID()
	// As the SDK: the parent's flags, with sampled as decided.
	s.flags = pflags &^ byte(trace.FlagsSampled)
	if p.sampler.sample(parent, s.traceID) {
		s.flags |= byte(trace.FlagsSampled)
	}
	return s
}

// idSource makes random trace and span IDs, never all zero, as the
// SDK's generator does (math/rand, not a cryptographic source): wyrand,
// seeded from the runtime's random source as its record is made. Each
// pooled record has its own, so that a span's three random words cost
// no call into the runtime's generator and no lock.
type idSource uint64

func (g *idSource) next() uint64 {
	*g += 0xa0761d6478bd642f
	hi, lo := bits.Mul64(uint64(*g), uint64(*g^0xe7037ed1a0b428db))
	return hi ^ lo
}

func (g *idSource) traceID() (id trace.TraceID) {
	for !id.IsValid() {
		binary.NativeEndian.PutUint64(id[:8], g.next())
		binary.NativeEndian.PutUint64(id[8:], g.next())
	}
	return id
}

func (g *idSource) spanID() (id trace.SpanID) {
	for !id.IsValid() {
		binary.NativeEndian.PutUint64(id[:], g.next())
	}
	return id
}

func (s *otelSpan) Context() router.TraceContext {
	return router.TraceContext{TraceID: s.traceID, SpanID: s.spanID, Flags: s.flags, State: s.state}
}

// End exports a sampled span with its name, attributes and status (Error
// for a 5xx answer, else Ok, as the module sets it). s keeps nothing of
// the request nor its provider: the router may restart it
// (RestartSpan), or drop it.
func (s *otelSpan) End(e *router.SpanEnd) {
	if s.flags&byte(trace.FlagsSampled) != 0 && s.p.batcher != nil {
		s.p.batcher.add(s, e)
	}
	s.p, s.state = nil, ""
}

// shutdown exports the spans ended so far, within ctx, and stops the
// exporter: the controller's last step once its listeners are shut down,
// inside the shutdown timeout. Spans ended later are dropped; a nil l
// does nothing.
func (l *liveTracer) shutdown(ctx context.Context) error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	return l.cur.Load().shutdown(ctx)
}

// forceFlush exports the spans ended so far.
func (l *liveTracer) forceFlush(ctx context.Context) error {
	if p := l.cur.Load(); p != nil && p.batcher != nil {
		return p.batcher.ForceFlush(ctx)
	}
	return nil
}

// otelWarnings says when tracing is on and nothing will receive the
// spans: they are made and propagated, and dropped.
func otelWarnings(c *config, parsed *compile.ConfigMap, cm *corev1.ConfigMap) []configMapWarning {
	on, _ := strconv.ParseBool(strings.TrimSpace(cm.Data["enable-opentelemetry"]))
	if !on || !slices.Contains(parsed.Keys, "enable-opentelemetry") || c.otel.endpoint() != "" {
		return nil
	}
	return []configMapWarning{{"otlp-collector-host", "enable-opentelemetry is on and no collector is named: spans are made and their context propagated, but not exported", compile.FeatureMissing, false}}
}
