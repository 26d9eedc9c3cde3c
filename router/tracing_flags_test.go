package router

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/match"
)

// A trusted parent's flags other than sampled are dropped: ingress-nginx's
// module keeps the client's trace and its SDK (opentelemetry-cpp
// tracer.cc) passes on the sampled flag only, W3C's version 00 flags; a
// backend reading "-ff" as OpenTelemetry's Go propagator does would start
// a trace of its own.
func TestTracingParentReservedFlags(t *testing.T) {
	r, tt := tracingRouter(t, &match.Tracing{TrustIncomingSpan: true}, Options{})
	for flags, want := range map[string]byte{"ff": 0x01, "fd": 0x01, "04": 0x00, "02": 0x00, "01": 0x01} {
		traced(r, "/api/x", http.Header{"Traceparent": {"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-" + flags}})
		p := tt.last(t).parent
		assert.True(t, p.IsValid(), flags)
		assert.Equal(t, want, p.Flags, flags)
	}
	c, ok := ParseTraceparent("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-81-future")
	require.True(t, ok)
	assert.Equal(t, byte(0x01), c.Flags, "a later version's unknown flags")
}
