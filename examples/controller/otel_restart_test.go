package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/router"
)

// otherSpan is a span of another Tracer.
type otherSpan struct{}

func (otherSpan) Context() router.TraceContext { return router.TraceContext{} }
func (otherSpan) End(*router.SpanEnd)          {}

// RestartSpan starts a span in the record of one that ended, with IDs,
// parent and trace state of its own, and nothing kept of the last; a
// span it did not make, or none, gets a record anew. An ended span holds
// neither its provider nor the request's trace state.
func TestRestartSpan(t *testing.T) {
	l, _, _ := countingTracer(t)
	parent, ok := router.ParseTraceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	require.True(t, ok)
	parent.State = "vendor=1"
	start := time.Unix(1700000000, 0)
	first := l.RestartSpan(nil, parent, "/", start).(*otelSpan)
	require.Equal(t, parent.TraceID, [16]byte(first.traceID))
	require.Equal(t, "vendor=1", first.state)
	require.True(t, first.remoteParent)
	firstID := first.spanID
	first.End(&router.SpanEnd{Name: "/", Time: start})
	require.Nil(t, first.p, "an ended span keeps its provider")
	require.Empty(t, first.state, "an ended span keeps the request's trace state")

	again := l.RestartSpan(first, router.TraceContext{}, "/", start.Add(time.Second)).(*otelSpan)
	require.Same(t, first, again, "not restarted in the ended span's record")
	require.Same(t, l.cur.Load(), again.p)
	require.NotEqual(t, firstID, again.spanID)
	require.NotEqual(t, parent.TraceID, [16]byte(again.traceID), "a root span in a trace of its own")
	require.False(t, again.remoteParent)
	require.Zero(t, again.parentID)
	require.Empty(t, again.state)
	require.Equal(t, start.Add(time.Second), again.start)
	require.True(t, again.Context().IsValid())
	again.End(&router.SpanEnd{Name: "/", Time: start})

	fresh := l.RestartSpan(otherSpan{}, router.TraceContext{}, "/", start).(*otelSpan)
	require.NotSame(t, first, fresh)
	require.True(t, fresh.Context().IsValid())
}
