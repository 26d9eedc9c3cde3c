package main

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"ramjet.dev/ramjet/router"
)

// sdkSampler is the SDK sampler the settings name, as the module builds
// it: what otelSampler decides as.
func (s otelSettings) sdkSampler() sdktrace.Sampler {
	var root sdktrace.Sampler
	switch s.Sampler {
	case "AlwaysOff":
		root = sdktrace.NeverSample()
	case "TraceIdRatioBased":
		root = sdktrace.TraceIDRatioBased(s.Ratio)
	default:
		root = sdktrace.AlwaysSample()
	}
	if s.ParentBased {
		return sdktrace.ParentBased(root)
	}
	return root
}

// TestSamplerMatchesSDK: for every sampler the keys can name, parent-based
// or not, the controller's sampler decides as the SDK's for roots and
// remote parents sampled or not, over random trace IDs and those at the
// ratio's bound; and a span's trace state is the one the SDK's sampler
// gives it (the parent's as the SDK reads it, none for one it cannot).
func TestSamplerMatchesSDK(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	parents := []router.TraceContext{
		{},
		{TraceID: [16]byte{1}, SpanID: [8]byte{2}, Flags: 1},
		{TraceID: [16]byte{1}, SpanID: [8]byte{2}, Flags: 0},
		{TraceID: [16]byte{1}, SpanID: [8]byte{2}, Flags: 3, State: "vendor=a,other=b"},
		{TraceID: [16]byte{1}, SpanID: [8]byte{2}, Flags: 2, State: "not a state"},
		{TraceID: [16]byte{1}, SpanID: [8]byte{2}, Flags: 1, State: " a=1 ,, b=2"},
	}
	var settings []otelSettings
	for _, based := range []bool{true, false} {
		for _, name := range []string{"AlwaysOn", "AlwaysOff"} {
			s := defaultOtelSettings()
			s.Sampler, s.ParentBased = name, based
			settings = append(settings, s)
		}
		// The ratios as the key reads them (32 bits).
		for _, r := range []float32{0, 0.01, 0.1, 0.5, 0.999, 1} {
			s := defaultOtelSettings()
			s.Sampler, s.Ratio, s.ParentBased = "TraceIdRatioBased", float64(r), based
			settings = append(settings, s)
		}
	}
	for _, s := range settings {
		ours, sdk := s.sampler(), s.sdkSampler()
		name := fmt.Sprintf("%s ratio %g parent-based %t", s.Sampler, s.Ratio, s.ParentBased)
		var ids []trace.TraceID
		for range 2000 {
			var id trace.TraceID
			binary.BigEndian.PutUint64(id[:8], rng.Uint64())
			binary.BigEndian.PutUint64(id[8:], rng.Uint64())
			ids = append(ids, id)
		}
		if ours.bound > 0 {
			for _, x := range []uint64{ours.bound - 1, ours.bound, ours.bound + 1} {
				for _, low := range []uint64{0, 1} {
					var id trace.TraceID
					id[0] = 1
					binary.BigEndian.PutUint64(id[8:], x<<1|low)
					ids = append(ids, id)
				}
			}
		}
		sampled := 0
		for _, parent := range parents {
			for i, id := range ids {
				if parent.IsValid() {
					// A child's trace is its parent's.
					parent.TraceID = id
				}
				ctx := context.Background()
				if parent.IsValid() {
					ts, _ := trace.ParseTraceState(parent.State)
					ctx = trace.ContextWithRemoteSpanContext(ctx, trace.NewSpanContext(trace.SpanContextConfig{
						TraceID: parent.TraceID, SpanID: parent.SpanID, TraceFlags: trace.TraceFlags(parent.Flags), TraceState: ts, Remote: true,
					}))
				}
				res := sdk.ShouldSample(sdktrace.SamplingParameters{ParentContext: ctx, TraceID: id, Name: "/", Kind: trace.SpanKindServer})
				want := res.Decision == sdktrace.RecordAndSample
				if got := ours.sample(parent, id); got != want {
					t.Fatalf("%s: parent %+v, trace ID %s: sampled %t, the SDK's %t", name, parent, id, got, want)
				}
				if want {
					sampled++
				}
				if i == 0 && parent.IsValid() {
					// The state the span gets and propagates.
					l := newLiveTracer(nil)
					l.cur.Store(&otelProvider{sampler: ours})
					sp := l.StartSpan(parent, "/", time.Unix(1700000000, 0))
					c := sp.Context()
					sp.End(&router.SpanEnd{})
					if c.State != res.Tracestate.String() || c.Sampled() != want {
						t.Fatalf("%s: parent %+v: span state %q sampled %t, the SDK's %q %t", name, parent, c.State, c.Sampled(), res.Tracestate.String(), want)
					}
				}
			}
		}
		t.Logf("%s: %d sampled", name, sampled)
	}
}

// The records' ID generators make distinct IDs whose sampled share under
// TraceIdRatioBased is the ratio, as random ones are.
func TestIDSource(t *testing.T) {
	s := defaultOtelSettings()
	s.Sampler, s.Ratio = "TraceIdRatioBased", 0.25
	smp := s.sampler()
	traces := map[trace.TraceID]bool{}
	spans := map[trace.SpanID]bool{}
	sampled := 0
	const n = 200000
	gens := []idSource{idSource(rand.Uint64()), idSource(rand.Uint64()), idSource(rand.Uint64()), idSource(rand.Uint64())}
	for i := range n {
		g := &gens[i%len(gens)]
		id, sid := g.traceID(), g.spanID()
		traces[id], spans[sid] = true, true
		if smp.sample(router.TraceContext{}, id) {
			sampled++
		}
	}
	assert.Len(t, traces, n, "distinct trace IDs")
	assert.Len(t, spans, n, "distinct span IDs")
	assert.InDelta(t, 0.25, float64(sampled)/n, 0.01, "the sampled share")
}
