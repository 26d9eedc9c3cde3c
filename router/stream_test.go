package router

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/match"
)

func streamTable(t *testing.T, endpoints ...string) *match.Table {
	t.Helper()
	be := &match.Backend{ID: "tcp-db-pg-5432", Namespace: "db", Name: "pg", Port: 5432, Endpoints: endpoints}
	gone := &match.Backend{ID: "tcp-db-gone-1", Namespace: "db", Name: "gone", State: match.ServiceNotFound}
	tab, err := match.New(match.Spec{L4Services: []*match.L4Service{
		{Protocol: match.TCP, Port: 5432, Backend: be, ServicePort: "5432"},
		{Protocol: match.TCP, Port: 5433, Backend: gone, ServicePort: "1"},
	}})
	require.NoError(t, err)
	return tab
}

// A stream's connections are balanced round-robin by the registry the
// HTTP backends use: in flight per address while open, the cursor kept
// across tables.
func TestStreamBalancing(t *testing.T) {
	r := New(Options{})
	_, ok := r.Stream(match.TCP, 5432)
	assert.False(t, ok, "no table yet")
	r.Publish(streamTable(t, "10.0.0.1:5432", "10.0.0.2:5432"))

	s, ok := r.Stream(match.TCP, 5432)
	require.True(t, ok)
	require.NotNil(t, s.Balancer)
	assert.Equal(t, match.DefaultStreamSettings, s.Settings)
	e1, ok := s.Balancer.Pick("")
	require.True(t, ok)
	assert.Equal(t, int64(1), r.InFlight(e1.Addr))

	// A new table with one more endpoint: the cursor goes on, the count stays.
	r.Publish(streamTable(t, "10.0.0.1:5432", "10.0.0.2:5432", "10.0.0.3:5432"))
	s2, _ := r.Stream(match.TCP, 5432)
	e2, _ := s2.Balancer.Pick("")
	assert.NotEqual(t, e1.Addr, e2.Addr, "round-robin continues across tables")
	assert.Equal(t, int64(1), r.InFlight(e1.Addr))
	e1.Release()
	e2.Release()
	assert.Equal(t, int64(0), r.InFlight(e1.Addr))

	// Retries exclude what was tried.
	a, _ := s2.Balancer.Pick("")
	b, _ := s2.Balancer.Pick("", a)
	c, _ := s2.Balancer.Pick("", a, b)
	_, ok = s2.Balancer.Pick("", a, b, c)
	assert.False(t, ok)
	assert.NotEqual(t, a.Addr, b.Addr)
	assert.NotEqual(t, b.Addr, c.Addr)

	gone, ok := r.Stream(match.TCP, 5433)
	require.True(t, ok)
	assert.Nil(t, gone.Balancer, "a Service not found has no balancer")
	_, ok = r.Stream(match.UDP, 5432)
	assert.False(t, ok)
}
