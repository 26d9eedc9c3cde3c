// Package balance picks an endpoint for each request and owns the counters
// that must outlive any one routing table (SPEC §9): round-robin cursors
// keyed by backend identity and in-flight counts keyed by socket address.
//
// A Registry belongs to whoever serves traffic (the router) and lives as
// long as it does. Each published table gets one Balancer per backend from
// the registry; balancers for the same backend identity share one cursor,
// and balancers naming the same address share one in-flight count, so a
// rebuild never resets either.
package balance

import (
	"sync"
	"sync/atomic"
)

// Registry holds the counters shared by successive tables. It is safe for
// concurrent use. Its zero value is not usable; call NewRegistry.
type Registry struct {
	mu       sync.Mutex
	cursors  map[string]*cursor
	inflight map[string]*Counter
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{
		cursors:  make(map[string]*cursor),
		inflight: make(map[string]*Counter),
	}
}

type cursor struct{ n atomic.Uint64 }

// Counter is the number of requests in flight to one socket address.
type Counter struct{ n atomic.Int64 }

// Load returns the current count.
func (c *Counter) Load() int64 { return c.n.Load() }

// Config describes one backend for one table.
type Config struct {
	// ID is the backend identity ("namespace/name:port"): the cursor key.
	ID string
	// Endpoints are "ip:port" addresses, sorted.
	Endpoints []string
}

// Balancer picks endpoints for one backend in one table. It is immutable
// apart from the shared counters it points at, and safe for concurrent use.
type Balancer struct {
	id        string
	endpoints []Endpoint
	cursor    *cursor
}

// Endpoint is one address of a backend, with its shared in-flight count.
type Endpoint struct {
	Addr     string
	inflight *Counter
}

// InFlight returns the endpoint's current in-flight count.
func (e Endpoint) InFlight() int64 {
	if e.inflight == nil {
		return 0
	}
	return e.inflight.Load()
}

// Balancer returns the balancer for cfg, wired to the registry's counters
// for its identity and addresses.
func (r *Registry) Balancer(cfg Config) *Balancer {
	r.mu.Lock()
	defer r.mu.Unlock()
	c, ok := r.cursors[cfg.ID]
	if !ok {
		c = new(cursor)
		r.cursors[cfg.ID] = c
	}
	b := &Balancer{id: cfg.ID, cursor: c, endpoints: make([]Endpoint, len(cfg.Endpoints))}
	for i, addr := range cfg.Endpoints {
		n, ok := r.inflight[addr]
		if !ok {
			n = new(Counter)
			r.inflight[addr] = n
		}
		b.endpoints[i] = Endpoint{Addr: addr, inflight: n}
	}
	return b
}

// InFlight returns the in-flight count for addr (0 if unknown).
func (r *Registry) InFlight(addr string) int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	if c, ok := r.inflight[addr]; ok {
		return c.Load()
	}
	return 0
}

// ID returns the backend identity.
func (b *Balancer) ID() string { return b.id }

// Len returns the number of endpoints.
func (b *Balancer) Len() int { return len(b.endpoints) }

// Pick returns the next endpoint round-robin and counts it in flight. The
// caller must call the endpoint's Release exactly once, on every
// path out. ok is false when the backend has no endpoints.
func (b *Balancer) Pick() (e Endpoint, ok bool) {
	if len(b.endpoints) == 0 {
		return Endpoint{}, false
	}
	i := (b.cursor.n.Add(1) - 1) % uint64(len(b.endpoints))
	e = b.endpoints[i]
	e.inflight.n.Add(1)
	return e, true
}

// Release ends a request that Pick counted. It decrements the same counter
// Pick incremented, even if a newer table has been published since.
func (e Endpoint) Release() {
	if e.inflight != nil {
		e.inflight.n.Add(-1)
	}
}
