package router

import (
	"hash/maphash"
	"math/bits"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"ramjet.dev/ramjet/match"
)

// DefaultRateLimitEntries is how many client address counters the zones
// (each Ingress's limits) share unless Options.RateLimitEntries says
// otherwise: 65,536 entries of 89 bytes, 5.6 MiB, split evenly among the
// zones of the serving table, each given at least minZoneEntries. A
// zone's table is allocated when a request first meets its limits.
const DefaultRateLimitEntries = 1 << 16

// minZoneEntries is the least a zone gets when many share the budget
// (356 KiB): enough sets of 8 that a few thousand clients in flight at
// once rarely fill one. So the memory a table's limits can take grows
// with its rate-limited Ingresses past the budget, by at most this each,
// rather than by a whole budget each: with 1,000 such Ingresses, 348 MiB
// once all have had traffic, where ingress-nginx reserves 5 MB a zone.
const minZoneEntries = 4096

// limiter holds the counters of limit-rps, limit-rpm and limit-connections
// (SPEC §11.5): one table per zone, as ingress-nginx gives each Ingress its
// own limit_req_zone and limit_conn_zone, so that no Ingress's clients can
// push another's out or take the room another's need. Each table has a
// fixed size, allocated once: memory does not grow with the number of
// addresses, however many send requests. A table is set-associative: an
// address hashes (with a per-Router random seed, so clients cannot aim at
// one set) to a set of 8 slots under one lock; an address not in its set
// takes a free slot or the least recently used one. Evicting an idle
// counter loses nothing; an evicted rate counter starts again from empty,
// as nginx's limit_req does when its zone is full and it drops the oldest
// states. A connection counter with requests in flight is never evicted; a
// request that finds its set full of them is refused (503), as nginx
// refuses when its zone has no room.
//
// Zones are kept by name, not by table: their counters survive every
// rebuild that keeps their Ingress, and Publish drops the zones its table
// no longer has.
type limiter struct {
	seed  maphash.Seed
	n     int // sets in all zones together, a power of two
	start time.Time
	// clock returns milliseconds on a monotonic clock; tests replace it.
	clock func() int64
	// zones is read without a lock; mu orders its replacements.
	mu    sync.Mutex
	zones atomic.Pointer[map[string]*limitZone]
}

// limitZone is one zone's table.
type limitZone struct {
	key   uint64    // the zone's hash, mixed into its sets' (set)
	alloc sync.Once // sets are allocated on first use
	n     int
	shift uint
	sets  []limitSet
}

const limitWays = 8

type limitSet struct {
	mu    sync.Mutex
	slots [limitWays]limitSlot
}

// limitSlot holds one zone's counters for one client address: the
// limit_req state of each rate and the requests in flight, so that one
// lock admits a request. key 0 marks a free slot.
type limitSlot struct {
	key  uint64 // the zone; never 0 when used
	addr [16]byte
	// rps and rpm are nginx's limit_req states, conns the requests in
	// flight; used is the last use (ms), for eviction.
	rps, rpm rateState
	used     int64
	conns    int32
}

// rateState is nginx's limit_req node: the excess in thousandths of a
// request, and when it was last computed (ms).
type rateState struct {
	excess, last int64
	counted      bool // some request was counted
}

func newLimiter(entries int) *limiter {
	if entries <= 0 {
		entries = DefaultRateLimitEntries
	}
	sets := max(1, entries/limitWays)
	l := &limiter{
		seed:  maphash.MakeSeed(),
		n:     1 << bits.Len(uint(sets-1)), // a power of two, at least entries
		start: time.Now(),
	}
	l.clock = l.sinceStart
	return l
}

func (l *limiter) sinceStart() int64 { return time.Since(l.start).Milliseconds() }

// zone returns the named zone's table, made on its first request when
// Publish did not make it (a request still on a replaced table).
func (l *limiter) zone(name string) *limitZone {
	if m := l.zones.Load(); m != nil {
		if z := (*m)[name]; z != nil {
			return z
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	old := l.zones.Load()
	if old != nil && (*old)[name] != nil {
		return (*old)[name]
	}
	m := make(map[string]*limitZone, 1)
	if old != nil {
		m = make(map[string]*limitZone, len(*old)+1)
		for k, z := range *old {
			m[k] = z
		}
	}
	z := l.newZone(name, len(m)+1)
	m[name] = z
	l.zones.Store(&m)
	return z
}

// newZone makes a zone that is one of zones sharing the budget: its share
// of the sets, a power of two, at least minZoneEntries' worth (or the
// whole budget when that is smaller). A zone keeps its size while it
// lives, so that its counters survive rebuilds that change the count.
func (l *limiter) newZone(name string, zones int) *limitZone {
	least := min(l.n, minZoneEntries/limitWays)
	n := max(least, l.n/max(1, zones))
	n = 1 << (bits.Len(uint(n)) - 1) // down to a power of two
	shift := uint(64 - bits.TrailingZeros(uint(n)))
	if n == 1 {
		shift = 63 // any hash lands in set 0 (h>>63 is 0 or 1; see set)
	}
	return &limitZone{key: maphash.String(l.seed, name) | 1, n: n, shift: shift}
}

// retain makes the zones of t's rate limits, keeping the counters of those
// the serving table has, and drops the others: a zone whose Ingress is gone
// holds no memory past the requests still in flight under it.
func (l *limiter) retain(t *match.Table) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var old map[string]*limitZone
	if p := l.zones.Load(); p != nil {
		old = *p
	}
	m := make(map[string]*limitZone)
	add := func(p *match.Policy) {
		if p != nil && p.RateLimit != nil && !p.RateLimit.Closed {
			m[p.RateLimit.Zone] = old[p.RateLimit.Zone] // nil for a new zone
		}
	}
	for vh := range t.VirtualHosts() {
		add(vh.FallbackLocation.Policy)
		for _, rt := range vh.Routes {
			add(rt.Policy)
		}
	}
	for name, z := range m {
		if z == nil {
			m[name] = l.newZone(name, len(m))
		}
	}
	l.zones.Store(&m)
}

// allocate makes the zone's table, once: a zone that meets no request
// never holds it.
func (z *limitZone) allocate() {
	z.alloc.Do(func() { z.sets = make([]limitSet, z.n) })
}

// usage reports the capacity and the slots in use, and the bytes the
// zone's table holds; for tests and metrics.
func (z *limitZone) usage() (capacity, used int, bytes uintptr) {
	z.allocate()
	for i := range z.sets {
		s := &z.sets[i]
		s.mu.Lock()
		for j := range s.slots {
			if s.slots[j].key != 0 {
				used++
			}
		}
		s.mu.Unlock()
	}
	return len(z.sets) * limitWays, used, uintptr(len(z.sets)) * unsafe.Sizeof(limitSet{})
}

// set is where a client's counters live. The address is hashed with the
// Router's seed (see client), the zone mixed in.
func (z *limitZone) set(c *client) *limitSet {
	h := c.hash ^ z.key
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	return &z.sets[(h>>z.shift)&uint64(len(z.sets)-1)]
}

// client is a client address as the limiter counts it, hashed once per
// request.
type client struct {
	addr [16]byte
	hash uint64
}

func (l *limiter) client(a netip.Addr) client {
	c := client{addr: addrKey(a)}
	c.hash = maphash.Bytes(l.seed, c.addr[:])
	return c
}

// slot finds the key's slot in s, or takes a free or the least recently
// used idle one; nil when every slot has requests in flight. s is locked.
func (s *limitSet) slot(key uint64, addr *[16]byte, now int64) (sl *limitSlot, fresh bool) {
	var victim *limitSlot
	for i := range s.slots {
		c := &s.slots[i]
		if c.key == key && c.addr == *addr {
			c.used = now
			return c, false
		}
		if c.conns > 0 {
			continue
		}
		if c.key == 0 {
			if victim == nil || victim.key != 0 {
				victim = c
			}
			continue
		}
		if victim == nil || (victim.key != 0 && c.used < victim.used) {
			victim = c
		}
	}
	if victim == nil {
		return nil, false
	}
	*victim = limitSlot{key: key, addr: *addr, used: now}
	return victim, true
}

// rateLimits are the limits of one zone, as take applies them.
type rateLimits struct {
	// milliRPS and milliRPM are the rates in thousandths of a request a
	// second (nginx's own unit; 0 for none), burstRPS and burstRPM the
	// bursts in thousandths; conns bounds requests in flight (0: none).
	milliRPS, milliRPM int64
	burstRPS, burstRPM int64
	conns              int32
}

// take admits one request of the client to the zone, in nginx's order:
// the rates (limit_req with burst and nodelay, a leaky bucket: a request
// adds one to the excess, which drains at the rate; a request that would
// take an excess past its burst is refused), each accounted only when all
// pass, then the requests in flight (limit_conn). The ticket is held until
// the request ends; the zero ticket when no limit_conn applies.
func (z *limitZone) take(cl *client, lim *rateLimits, now int64) (connTicket, bool) {
	z.allocate()
	s := z.set(cl)
	s.mu.Lock()
	defer s.mu.Unlock()
	c, fresh := s.slot(z.key, &cl.addr, now)
	if c == nil {
		// Every slot of the set is in flight. The client has no counter,
		// so nginx's limit_req, whose zone is its own, would admit it as
		// new; limit_conn then has no room and answers its status.
		return connTicket{connRefused: lim.conns > 0 || lim.milliRPS == 0 && lim.milliRPM == 0}, false
	}
	var rps, rpm int64
	if lim.milliRPS > 0 {
		if rps = c.rps.next(fresh, now, lim.milliRPS); rps > lim.burstRPS {
			return connTicket{}, false
		}
	}
	if lim.milliRPM > 0 {
		if rpm = c.rpm.next(fresh, now, lim.milliRPM); rpm > lim.burstRPM {
			return connTicket{}, false
		}
	}
	if lim.milliRPS > 0 {
		c.rps = rateState{excess: rps, last: now, counted: true}
	}
	if lim.milliRPM > 0 {
		c.rpm = rateState{excess: rpm, last: now, counted: true}
	}
	if lim.conns == 0 {
		return connTicket{}, true
	}
	if c.conns >= lim.conns {
		return connTicket{connRefused: true}, false
	}
	c.conns++
	return connTicket{set: s, slot: c}, true
}

// next is the excess with one more request, after the time since last has
// drained it at the given rate, exactly as nginx computes it: the request
// is added before the floor at zero, so a bucket that has fully drained
// takes a request for free and passes 1 + burst again; a new state starts
// at zero. A clock that went backwards counts as no time.
func (r rateState) next(fresh bool, now, milliPerSec int64) int64 {
	if fresh || !r.counted {
		return 0
	}
	ms := max(now-r.last, 0)
	return max(r.excess-milliPerSec*ms/1000+1000, 0)
}

// connTicket is a request in flight counted against limit-connections;
// release ends it. The zero ticket releases nothing.
type connTicket struct {
	set  *limitSet
	slot *limitSlot
	// connRefused: a refusal came from limit-connections (limit_conn),
	// which answers Options.LimitConnStatusCode.
	connRefused bool
}

func (t connTicket) release() {
	if t.set == nil {
		return
	}
	t.set.mu.Lock()
	t.slot.conns--
	t.set.mu.Unlock()
}

// addrKey is the form addresses are counted under: IPv4 and IPv4-mapped
// IPv6 alike.
func addrKey(a netip.Addr) [16]byte {
	return a.Unmap().As16()
}

// find returns the key's slot in s, nil when it has none. s is locked, or
// the caller alone uses the limiter (tests).
func (s *limitSet) find(key uint64, addr *[16]byte) *limitSlot {
	for i := range s.slots {
		if c := &s.slots[i]; c.key == key && c.addr == *addr {
			return c
		}
	}
	return nil
}
