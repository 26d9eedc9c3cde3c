package router

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"

	"ramjet.dev/ramjet/match"
)

// Of several tracestate lines the first is the parent's trace state, as
// the module's propagator reads the first header of the name
// (propagate.cpp FindHeader, the carrier's Get), not the lines joined;
// the backend gets that one line.
func TestTracingRepeatedTracestate(t *testing.T) {
	r, tt := tracingRouter(t, &match.Tracing{TrustIncomingSpan: true}, Options{})
	res := traced(r, "/api/x", http.Header{"Traceparent": {clientParent}, "Tracestate": {"a=1", "b=2"}})
	s := tt.last(t)
	assert.Equal(t, "a=1", s.parent.State)
	assert.Equal(t, []string{"a=1"}, res.Header["Seen-Tracestate"])
}
