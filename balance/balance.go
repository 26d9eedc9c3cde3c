// Package balance picks an endpoint for each request and owns the counters
// that must outlive any one routing table (SPEC §9): round-robin cursors
// keyed by backend identity and in-flight counts keyed by socket address.
//
// A Registry belongs to whoever serves traffic (the router) and lives as
// long as it does. Each published table gets one Balancer per backend from
// the registry; balancers for the same backend identity share one cursor,
// and balancers naming the same address share one in-flight count, so a
// rebuild never resets either. After publishing a table its owner calls
// Sweep with the table's balancers, which releases counters that nothing
// references any more once they are idle.
//
// Algorithms (Policy): round-robin (the default), least-conn and consistent
// hashing on a request key (HashKey), with cookie session affinity on top
// (Session). Splits across weighted backends (Split, for canary, SPEC §10)
// follow a deterministic interleaved rotation whose position, like a
// cursor, outlives tables.
//
// Picking is lock-free and allocation-free: an atomic addition to the
// cursor and one to the chosen endpoint's count, plus a scan of the
// in-flight counts for LeastConn or a bucketed ring lookup for Hash.
package balance

import (
	"fmt"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
)

// Registry holds the counters shared by successive tables. It is safe for
// concurrent use. Its zero value is not usable; call NewRegistry.
type Registry struct {
	mu       sync.RWMutex
	cursors  map[string]*backendState
	splits   map[string]*backendState
	inflight map[string]*counter
	// epoch counts sweeps. Whatever a balancer is built with, or a sweep
	// finds live, is stamped with it; Sweep releases only what is stamped
	// older than the previous sweep.
	epoch uint64
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{
		cursors:  make(map[string]*backendState),
		splits:   make(map[string]*backendState),
		inflight: make(map[string]*counter),
	}
}

// cursor is padded to a cache line of its own: every pick of a backend adds
// to it, and it must not slow down its neighbours.
type cursor struct {
	n atomic.Uint64
	_ [56]byte
}

// turn advances the cursor and returns whose turn it is among n
// alternatives: the next index, or the next entry of rotation when there
// is one.
func (c *cursor) turn(rotation []uint32, n int) int {
	t := c.n.Add(1) - 1
	if rotation != nil {
		return int(rotation[t%uint64(len(rotation))])
	}
	return int(t % uint64(n))
}

// backendState is what the registry keeps per backend (or split) identity:
// the cursor, and the rotation and ring last built for it, reused while its
// endpoints and weights stay the same.
type backendState struct {
	cursor *cursor
	seen   uint64

	rotationOf []int // the weights rotation was built from
	rotation   []uint32
	ringAddrs  []string
	ringShares []int
	ring       *ring
	// subsets were last built for this many endpoints in sets of this size.
	subsets *subsets
}

// counter is the number of requests in flight to one socket address. It is
// padded to a cache line of its own, being written by every pick and
// release of its address.
type counter struct {
	n    atomic.Int64
	seen uint64 // guarded by Registry.mu
	_    [48]byte
}

// Config describes one backend for one table.
type Config struct {
	// ID is the backend identity ("namespace/name:port"): the cursor key.
	ID string
	// Endpoints are "ip:port" addresses, sorted.
	Endpoints []string
	// Algorithm chooses among the endpoints; the zero value is RoundRobin.
	Algorithm Algorithm
	// HashKey is what the Hash algorithm hashes; other algorithms ignore it.
	HashKey HashKey
	// HashSubset, when more than 0, makes Hash choose a subset of that
	// many endpoints by the key, then go round-robin within it (see
	// subsets.go). Other algorithms ignore it.
	HashSubset int
	// Affinity, when set, makes PickSession keep a session on one endpoint
	// (cookie session affinity, SPEC §9).
	Affinity Affinity
	// weights, when not nil, are aligned with Endpoints: relative shares of
	// traffic, 0 (or less) for none. nil or all equal means uniform.
	// Registry.Balancer panics if the lengths differ.
	weights []int
}

// Balancer picks endpoints for one backend in one table. It is immutable
// apart from the shared counters it points at, and safe for concurrent use.
type Balancer struct {
	id        string
	algorithm Algorithm
	key       HashKey
	endpoints []Endpoint
	// loads are the pickable endpoints' counters and shares, packed densely
	// for LeastConn's scan.
	loads  []load
	cursor *cursor
	live   int // endpoints that may be picked (weight > 0)
	// shares are the reduced weights, nil when uniform.
	shares []int
	// rotation interleaves the endpoints by weight; nil when uniform or
	// exact.
	rotation []uint32
	// exact deals the turns of weights too long for a rotation, each
	// endpoint exactly its share of every period (exactTurns); nil
	// otherwise.
	exact *exactTurns
	// ring is set for the Hash algorithm, and for balanced session affinity,
	// when some endpoint is live.
	ring *ring
	// session is the cookie session affinity state; nil without affinity.
	session *session
	// subsets is set for Hash with Config.HashSubset over uniform
	// endpoints: the ring places a key on a subset, not an endpoint.
	subsets *subsets
}

type load struct {
	counter *counter
	share   int64 // 1 when uniform
	index   int   // in endpoints
}

// Endpoint is one address of a backend, with its shared in-flight count.
type Endpoint struct {
	Addr     string
	inflight *counter
}

// inFlight returns the endpoint's current in-flight count.
func (e Endpoint) inFlight() int64 {
	if e.inflight == nil {
		return 0
	}
	return e.inflight.n.Load()
}

// Balancer returns the balancer for cfg, wired to the registry's counters
// for its identity and addresses. A rotation (weighted round-robin) or hash
// ring is built only when the endpoints or weights differ from the last ones
// seen for cfg.ID, so an unchanged backend costs no rebuilding.
func (r *Registry) Balancer(cfg Config) *Balancer {
	if cfg.weights != nil && len(cfg.weights) != len(cfg.Endpoints) {
		panic(fmt.Sprintf("balance: backend %s has %d weights for %d endpoints", cfg.ID, len(cfg.weights), len(cfg.Endpoints)))
	}
	b := &Balancer{
		id:        cfg.ID,
		algorithm: cfg.Algorithm,
		key:       cfg.HashKey,
		endpoints: make([]Endpoint, len(cfg.Endpoints)),
		live:      len(cfg.Endpoints),
	}
	weighted := cfg.weights != nil && !uniform(cfg.weights)
	if weighted {
		b.shares = reduceWeights(cfg.weights, maxRotation)
		b.live = 0
		for _, s := range b.shares {
			if s > 0 {
				b.live++
			}
		}
	}

	needRotation := weighted && b.algorithm != LeastConn // Hash falls back to it without a key
	if needRotation {
		// Past maxRotation a rotation scales the shares down: turns are
		// dealt exactly instead.
		if b.exact = newExactTurns(cfg.weights, maxRotation); b.exact != nil {
			needRotation = false
		}
	}
	subsetting := b.algorithm == Hash && cfg.HashSubset > 0 && !weighted && b.live > 0
	needRing := (b.algorithm == Hash && !subsetting || cfg.Affinity == Balanced) && b.live > 0

	r.mu.Lock()
	st := r.state(r.cursors, cfg.ID, nil)
	b.cursor = st.cursor
	for i, addr := range cfg.Endpoints {
		b.endpoints[i] = Endpoint{Addr: addr, inflight: r.counter(addr, nil)}
	}
	if needRotation && slices.Equal(st.rotationOf, cfg.weights) {
		b.rotation = st.rotation
	}
	if needRing && slices.Equal(st.ringAddrs, cfg.Endpoints) && slices.Equal(st.ringShares, b.shares) {
		b.ring = st.ring
	}
	r.mu.Unlock()

	if b.algorithm == LeastConn {
		b.loads = make([]load, 0, b.live)
		for i, e := range b.endpoints {
			if b.pickable(i) {
				b.loads = append(b.loads, load{counter: e.inflight, share: int64(b.share(i)), index: i})
			}
		}
	}
	// Build outside the lock: a large ring takes milliseconds, and InFlight
	// must not wait for it.
	if needRotation && b.rotation == nil {
		b.rotation = rotationOf(b.shares) // buildRotation without reducing the weights again
		r.mu.Lock()
		st.rotationOf, st.rotation = slices.Clone(cfg.weights), b.rotation
		r.mu.Unlock()
	}
	if needRing && b.ring == nil {
		b.ring = newRing(cfg.Endpoints, b.shares)
		r.mu.Lock()
		st.ringAddrs, st.ringShares, st.ring = slices.Clone(cfg.Endpoints), b.shares, b.ring
		r.mu.Unlock()
	}
	if cfg.Affinity != NoAffinity {
		b.session = newSession(cfg.ID, cfg.Affinity, cfg.Endpoints)
	}
	if subsetting {
		b.subsets = r.subsetsFor(st, len(cfg.Endpoints), cfg.HashSubset)
	}
	return b
}

// state returns the entry for id in m, stamped with the current epoch. A
// missing entry is created with cursor c, or a new cursor when c is nil.
// r.mu must be held.
func (r *Registry) state(m map[string]*backendState, id string, c *cursor) *backendState {
	st, ok := m[id]
	if !ok {
		if c == nil {
			c = new(cursor)
		}
		st = &backendState{cursor: c}
		m[id] = st
	}
	st.seen = r.epoch
	return st
}

// counter returns the in-flight counter for addr, stamped with the current
// epoch. A missing one is created as c, or as a new counter when c is nil.
// r.mu must be held.
func (r *Registry) counter(addr string, c *counter) *counter {
	n, ok := r.inflight[addr]
	if !ok {
		if c == nil {
			c = new(counter)
		}
		n = c
		r.inflight[addr] = n
	}
	n.seen = r.epoch
	return n
}

// InFlight returns the in-flight count for addr (0 if unknown).
func (r *Registry) InFlight(addr string) int64 {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if c, ok := r.inflight[addr]; ok {
		return c.n.Load()
	}
	return 0
}

// Sweep is SweepSplits without splits.
func (r *Registry) Sweep(live []*Balancer) (cursors, counters int) {
	return r.SweepSplits(live, nil)
}

// SweepSplits releases what the live balancers (those of the table just
// published, plus any other table still being served) no longer reference:
// cursors of backends, and in-flight counters of addresses. It returns how
// many of each it released.
//
// Something is released only when it was not referenced at this sweep nor at
// the previous one, nor handed out since the previous one, so a table built
// before a sweep and published after it loses nothing, and a request still
// picking from a table one generation old finds its counters in place. A
// counter is released only at zero: a request in flight keeps it until a
// later sweep finds it idle, and until then new balancers for its address
// share it. A released counter stays valid for whoever holds it; Release
// still decrements it.
// Rotation positions of splits are released like cursors: those of the
// live splits are kept.
//
// Call it after each publish, from the goroutine that publishes.
func (r *Registry) SweepSplits(live []*Balancer, splits []*Split) (cursors, counters int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.epoch++
	// A cursor or counter released while a live balancer or split still
	// used it is taken back, so the identity keeps one cursor and the
	// address one count.
	for _, b := range live {
		r.state(r.cursors, b.id, b.cursor)
		for _, e := range b.endpoints {
			r.counter(e.Addr, e.inflight)
		}
	}
	for _, s := range splits {
		r.state(r.splits, s.id, s.cursor)
	}
	for _, m := range []map[string]*backendState{r.cursors, r.splits} {
		for id, st := range m {
			if st.seen+1 < r.epoch {
				delete(m, id)
				cursors++
			}
		}
	}
	for addr, c := range r.inflight {
		if c.seen+1 < r.epoch && c.n.Load() == 0 {
			delete(r.inflight, addr)
			counters++
		}
	}
	return cursors, counters
}

// Len returns the number of endpoints, including any with weight 0.
func (b *Balancer) Len() int { return len(b.endpoints) }

// Algorithm returns the balancer's algorithm.
func (b *Balancer) Algorithm() Algorithm { return b.algorithm }

// HashKey returns the key expression the Hash algorithm uses.
func (b *Balancer) HashKey() HashKey { return b.key }

// Key returns the request's hash key when the algorithm is Hash, else "".
// It allocates only for a header key sent on several field lines.
func (b *Balancer) Key(r *http.Request) string {
	if b.algorithm != Hash {
		return ""
	}
	return b.key.extract(r)
}

// Pick returns the next endpoint for a request and counts it in flight.
// The caller must call the endpoint's Release exactly once, on every path
// out. ok is false when the backend has no endpoint that may be picked, or
// none that is not among tried.
//
// key is the request's hash key (see Key). Algorithms other than Hash ignore
// it; under Hash an empty key goes round-robin, because a request without
// the key has no affinity to keep and sending all such requests to one
// endpoint would overload it.
//
// tried, for a retry, are the endpoints already returned for this request
// (by this balancer, or another of the same registry); Pick never returns
// one whose address is among them. Round-robin takes the next endpoint in
// Config order after a tried one; least-conn considers only untried
// endpoints; hash walks the ring onwards from the key to the next untried
// endpoint, so a key's retries are deterministic too. Pick does not
// allocate: pass the endpoints already tried from a small array (SPEC §13
// allows at most 3 tries).
func (b *Balancer) Pick(key string, tried ...Endpoint) (e Endpoint, ok bool) {
	if b.live == 0 {
		return Endpoint{}, false
	}
	var i int
	switch {
	case b.algorithm == LeastConn:
		i = b.leastConn(tried)
	case b.algorithm == Hash && key != "" && b.subsets != nil:
		i = b.inSubset(key, tried)
	case b.algorithm == Hash && key != "" && b.ring != nil:
		i = b.hashed(key, tried)
	default:
		i = b.roundRobin(tried)
	}
	if i < 0 {
		return Endpoint{}, false
	}
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

func (b *Balancer) roundRobin(tried []Endpoint) int {
	var i int
	if b.exact != nil {
		i = b.exact.at(b.cursor.n.Add(1) - 1)
	} else {
		i = b.cursor.turn(b.rotation, len(b.endpoints))
	}
	if len(tried) == 0 || !isTried(b.endpoints[i].inflight, tried) {
		return i
	}
	n := len(b.endpoints)
	for k := 1; k < n; k++ {
		j := i + k
		if j >= n {
			j -= n
		}
		if b.pickable(j) && !isTried(b.endpoints[j].inflight, tried) {
			return j
		}
	}
	return -1
}

// leastConn finds the fewest requests in flight (per unit of weight when
// weighted), then takes the cursor's turn among the endpoints tied at that
// load, so that equally loaded endpoints are served round-robin. Counts may
// move between the two passes; if the turn is no longer tied, the first
// endpoint found is as good a choice.
func (b *Balancer) leastConn(tried []Endpoint) int {
	c := b.cursor.n.Add(1) - 1
	if b.shares == nil && len(tried) == 0 {
		return leastLoaded(b.loads, c)
	}
	best, ties := -1, uint64(0)
	bestLoad, bestShare := int64(0), int64(1)
	for k := range b.loads {
		l := &b.loads[k]
		if len(tried) > 0 && isTried(l.counter, tried) {
			continue
		}
		n := l.counter.n.Load()
		switch {
		case best < 0 || n*bestShare < bestLoad*l.share:
			best, ties, bestLoad, bestShare = k, 1, n, l.share
		case n*bestShare == bestLoad*l.share:
			ties++
		}
	}
	if best < 0 {
		return -1
	}
	if ties > 1 {
		turn := c % ties
		for k := best; k < len(b.loads); k++ {
			l := &b.loads[k]
			if len(tried) > 0 && isTried(l.counter, tried) ||
				l.counter.n.Load()*bestShare != bestLoad*l.share {
				continue
			}
			if turn == 0 {
				return l.index
			}
			turn--
		}
	}
	return b.loads[best].index
}

// leastLoaded is leastConn for uniform weights and no exclusions.
func leastLoaded(loads []load, c uint64) int {
	best, ties := 0, uint64(1)
	bestLoad := loads[0].counter.n.Load()
	for k := 1; k < len(loads); k++ {
		if n := loads[k].counter.n.Load(); n < bestLoad {
			best, ties, bestLoad = k, 1, n
		} else if n == bestLoad {
			ties++
		}
	}
	if ties > 1 {
		turn := c % ties
		for k := best; k < len(loads); k++ {
			if loads[k].counter.n.Load() == bestLoad {
				if turn == 0 {
					return loads[k].index
				}
				turn--
			}
		}
	}
	return loads[best].index
}

func (b *Balancer) hashed(key string, tried []Endpoint) int {
	points := b.ring.points
	pos := b.ring.search(hashString(key))
	if len(tried) == 0 {
		return int(uint32(points[pos]))
	}
	for range points {
		i := int(uint32(points[pos]))
		if !isTried(b.endpoints[i].inflight, tried) {
			return i
		}
		if pos++; pos == len(points) {
			pos = 0
		}
	}
	return -1
}

func (b *Balancer) pickable(i int) bool {
	return b.share(i) > 0
}

// share is endpoint i's reduced weight, 1 when uniform.
func (b *Balancer) share(i int) int {
	if b.shares == nil {
		return 1
	}
	return b.shares[i]
}

// isTried matches endpoints by their counter, cheaper than comparing
// addresses: the registry keeps one counter per address while anything that
// could still pick from it is live.
func isTried(c *counter, tried []Endpoint) bool {
	for _, t := range tried {
		if t.inflight == c {
			return true
		}
	}
	return false
}
