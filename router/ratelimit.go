package router

import (
	"hash/maphash"
	"math/bits"
	"net/netip"
	"sync"
	"time"
	"unsafe"
)

// DefaultRateLimitEntries is how many (zone, client address) counters the
// rate limiter holds unless Options.RateLimitEntries says otherwise:
// 65,536 entries of 64 bytes, 4 MiB per Router, about what ingress-nginx's
// 5 MB zone holds per Ingress.
const DefaultRateLimitEntries = 1 << 16

// limiter holds the counters of limit-rps, limit-rpm and limit-connections
// (SPEC §11) for every zone and client address, in a table of fixed size
// allocated once: memory does not grow with the number of addresses,
// however many send requests. The table is set-associative: a key hashes
// (with a per-Router random seed, so clients cannot aim at one set) to a
// set of 8 slots under one lock; a key not in its set takes a free slot or
// the least recently used one. Evicting an idle counter loses nothing; an
// evicted rate counter starts again from empty, as nginx's limit_req does
// when its zone is full and it drops the oldest states. A connection
// counter with requests in flight is never evicted; a request that finds
// its set full of them is refused (503), as nginx refuses when its zone
// has no room.
//
// Counters are keyed by zone name, not by table: they survive every
// rebuild, and a zone whose Ingress is gone simply ages out.
type limiter struct {
	seed  maphash.Seed
	sets  []limitSet
	shift uint // 64 - log2(len(sets))
	start time.Time
	// clock returns milliseconds on a monotonic clock; tests replace it.
	clock func() int64
}

const limitWays = 8

type limitSet struct {
	mu    sync.Mutex
	slots [limitWays]limitSlot
}

// limitSlot is one counter. key 0 marks a free slot.
type limitSlot struct {
	key  uint64 // zone and kind; never 0 when used
	addr [16]byte
	// excess is nginx's limit_req excess in thousandths of a request,
	// last the time it was computed (ms); conns counts requests in flight.
	excess, last int64
	used         int64 // last use (ms), for eviction
	conns        int32
}

func newLimiter(entries int) *limiter {
	if entries <= 0 {
		entries = DefaultRateLimitEntries
	}
	sets := max(1, entries/limitWays)
	n := 1 << bits.Len(uint(sets-1)) // a power of two, at least entries
	l := &limiter{
		seed:  maphash.MakeSeed(),
		sets:  make([]limitSet, n),
		shift: uint(64 - bits.TrailingZeros(uint(n))),
		start: time.Now(),
	}
	if n == 1 {
		l.shift = 63 // any hash lands in set 0 (h>>63 is 0 or 1; see set)
	}
	l.clock = l.sinceStart
	return l
}

func (l *limiter) sinceStart() int64 { return time.Since(l.start).Milliseconds() }

// Entries reports the capacity and the slots in use, and the bytes the
// table holds; for tests and metrics.
func (l *limiter) usage() (capacity, used int, bytes uintptr) {
	for i := range l.sets {
		s := &l.sets[i]
		s.mu.Lock()
		for j := range s.slots {
			if s.slots[j].key != 0 {
				used++
			}
		}
		s.mu.Unlock()
	}
	return len(l.sets) * limitWays, used, uintptr(len(l.sets)) * unsafe.Sizeof(limitSet{})
}

// zoneKey names one kind of limit of one zone; never 0.
func (l *limiter) zoneKey(zone string, kind uint64) uint64 {
	return (maphash.String(l.seed, zone) + kind*0x9e3779b97f4a7c15) | 1
}

// Kinds of limit, mixed into the zone key.
const (
	kindRPS uint64 = iota + 1
	kindRPM
	kindConn
)

func (l *limiter) set(key uint64, addr *[16]byte) *limitSet {
	h := maphash.Bytes(l.seed, addr[:]) ^ key
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	return &l.sets[(h>>l.shift)&uint64(len(l.sets)-1)]
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
	*victim = limitSlot{key: key, addr: *addr, last: now, used: now}
	return victim, true
}

// rate applies one limit_req check to the key (nginx's leaky bucket with
// burst and nodelay): a request adds one to the excess, which drains at
// perSec requests a second (perMin a minute for RPM); a request that would
// take the excess past burst is refused and changes nothing. With account
// false the state is only checked, for a first limit whose accounting
// waits until every limit passed (see commit).
func (l *limiter) rate(key uint64, addr *[16]byte, milliPerSec int64, burst int, now int64, account bool) bool {
	s := l.set(key, addr)
	s.mu.Lock()
	defer s.mu.Unlock()
	var c *limitSlot
	fresh := false
	if account {
		if c, fresh = s.slot(key, addr, now); c == nil {
			return false
		}
	} else if c = s.find(key, addr); c == nil {
		return true // a first request always passes
	}
	excess := int64(0)
	if !fresh {
		excess = drain(c.excess, c.last, now, milliPerSec)
		if excess > int64(burst)*1000 {
			return false
		}
	}
	if account {
		c.excess, c.last = excess, now
	}
	return true
}

// find returns the key's slot in s, nil when it has none. s is locked.
func (s *limitSet) find(key uint64, addr *[16]byte) *limitSlot {
	for i := range s.slots {
		if c := &s.slots[i]; c.key == key && c.addr == *addr {
			return c
		}
	}
	return nil
}

// commit accounts a request on a limit checked earlier without accounting.
func (l *limiter) commit(key uint64, addr *[16]byte, milliPerSec int64, now int64) {
	s := l.set(key, addr)
	s.mu.Lock()
	if c, fresh := s.slot(key, addr, now); c != nil && !fresh {
		c.excess, c.last = drain(c.excess, c.last, now, milliPerSec), now
	}
	s.mu.Unlock()
}

// drain is the excess with one more request, after the time since last
// has drained it at the given rate, exactly as nginx computes it: the
// request is added before the floor at zero, so a bucket that has fully
// drained takes a request for free and passes 1 + burst again. A clock
// that went backwards counts as no time.
func drain(excess, last, now, milliPerSec int64) int64 {
	ms := max(now-last, 0)
	excess = excess - milliPerSec*ms/1000 + 1000
	return max(excess, 0)
}

// connTicket is a request in flight counted against limit-connections;
// release ends it. The zero ticket releases nothing.
type connTicket struct {
	set  *limitSet
	slot *limitSlot
}

// acquire counts a request in flight for the key unless limit are already;
// the ticket must be released when the request ends.
func (l *limiter) acquire(key uint64, addr *[16]byte, limit int, now int64) (connTicket, bool) {
	s := l.set(key, addr)
	s.mu.Lock()
	defer s.mu.Unlock()
	c, _ := s.slot(key, addr, now)
	if c == nil || int(c.conns) >= limit {
		return connTicket{}, false
	}
	c.conns++
	return connTicket{set: s, slot: c}, true
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
