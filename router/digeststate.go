package router

import (
	"net/netip"
	"sync"
)

// What digest authentication keeps across requests, in place of the
// module's shared memory zone (auth_digest_shm_size, 4 MiB by default):
// two tables of fixed size, whatever clients send. The module fills its
// zone with every nonce it issues, and once it is full answers every
// challenge 503 until nonces expire; here a challenge keeps nothing, and
// each table has its own rule for a flood.

const (
	// digestNonceEntries bounds the nonces in use a Router tracks: at the
	// module's defaults its 4 MiB zone holds about 82,000 nonces. An
	// entry lives at most digestNonceTimeout+digestNonceExpires seconds
	// (70), so the table keeps up with 900 new nonces a second.
	digestNonceEntries = 1 << 16
	// digestClientEntries bounds the client addresses with failed logins
	// a Router tracks; an entry lives digestEvasionTime (300 s) after the
	// address's last failure.
	digestClientEntries = 1 << 14
)

// nonceTable holds the nonce counts used of each nonce in use, as the
// module's tree of nonces does (module.c:730-782), in at most max
// entries. An entry is made at a nonce's first use, since a signed nonce
// needs none before, and may go once the nonce answers stale without it:
// digestNonceExpires after that use and digestNonceTimeout after its
// issue. Entries are kept in the order they were made. When the table is
// full, the oldest goes, needed or not, and floor rises to its ID: a nonce
// issued no later than floor that the table does not hold answers stale,
// so that no nonce count is ever accepted twice. Under a flood of logins
// the cost is a stale challenge, which browsers answer without asking the
// user, for nonces issued before the flood and not yet used.
type nonceTable struct {
	mu  sync.Mutex
	max int
	m   map[nonceID]nonceUse
	// order is a ring of max IDs holding those of m in the order they
	// were made, the oldest at head; both are allocated at the first use.
	order []nonceID
	head  int
	floor nonceID
}

// nonceUse is what the table keeps of a nonce: when it expires, in
// seconds, and its nonce counts used, bit n for count n, as the module's
// bit vector (module.c:761-775), bit 0 also marking its first use, so
// that count 0 is accepted only as that.
type nonceUse struct {
	expires int64
	used    uint32
}

// use records the use of nonce count nc (below digestReplays) of nonce
// id at now (Unix seconds), and reports the module's verdict: ok; stale,
// a nonce expired, unknown and older than digestNonceTimeout, or issued
// before floor; or neither, a count already used.
func (t *nonceTable) use(id nonceID, nc uint, now int64) (ok, stale bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if e, found := t.m[id]; found {
		switch {
		case now >= e.expires:
			return false, true
		case e.used&(1<<nc) != 0:
			return false, false
		}
		e.used |= 1 << nc
		t.m[id] = e
		return true, false
	}
	if age := nonceAge(id, now); age < 0 || age >= digestNonceTimeout || id <= t.floor {
		return false, true
	}
	if t.m == nil {
		t.m = make(map[nonceID]nonceUse)
		t.order = make([]nonceID, t.max)
	}
	t.makeRoom(now)
	t.order[(t.head+len(t.m))%len(t.order)] = id
	t.m[id] = nonceUse{expires: now + digestNonceExpires, used: 1 | 1<<nc}
	return true, false
}

// nonceAge is the seconds since nonce id was issued; negative for one
// from the future.
func nonceAge(id nonceID, now int64) int64 {
	return int64(int32(uint32(now) - id.issued()))
}

// makeRoom drops the oldest entries that answer as they would without
// them, then, while the table is full, the oldest, raising floor.
func (t *nonceTable) makeRoom(now int64) {
	for len(t.m) > 0 {
		id := t.order[t.head]
		e := t.m[id]
		gone := now >= e.expires && nonceAge(id, now) >= digestNonceTimeout
		if !gone && len(t.m) < len(t.order) {
			return
		}
		if !gone {
			t.floor = max(t.floor, id)
		}
		delete(t.m, id)
		t.head = (t.head + 1) % len(t.order)
	}
}

// size is the number of entries and the ring's length; for tests.
func (t *nonceTable) size() (entries, ring int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.m), len(t.order)
}

// lockoutTable counts the failed logins of each client address, as the
// module's evasion tree does (module.c:1409-1510), in at most max
// entries. An entry goes digestEvasionTime after the address's last
// failure, or at its next login. When the table is full and none has
// gone, a new address is not tracked, as the module tracks none when its
// zone is full (module.c:1443-1451): a flood of addresses cannot free an
// address locked out, it can only keep new ones from being counted. The
// table is swept for gone entries at most once a second, when full.
type lockoutTable struct {
	mu    sync.Mutex
	max   int
	m     map[[16]byte]lockout
	swept int64
}

// lockout is an address's failed logins, and the second its count ends:
// digestEvasionTime after the last.
type lockout struct {
	until int64
	fails int32
}

// lockedOut reports whether client is locked out at now (Unix seconds).
// The zero Addr (no address) never is, as the module tracks only
// network addresses.
func (t *lockoutTable) lockedOut(client netip.Addr, now int64) bool {
	if !client.IsValid() {
		return false
	}
	k := addrKey(client)
	t.mu.Lock()
	e, found := t.m[k]
	t.mu.Unlock()
	return found && e.fails >= digestMaxTries && now < e.until
}

// record counts a failed login of client, or clears its count at a
// login.
func (t *lockoutTable) record(client netip.Addr, login bool, now int64) {
	if !client.IsValid() {
		return
	}
	k := addrKey(client)
	t.mu.Lock()
	defer t.mu.Unlock()
	e, found := t.m[k]
	switch {
	case login:
		if found {
			delete(t.m, k)
		}
		return
	case !found && len(t.m) >= t.max:
		t.sweep(now)
		if len(t.m) >= t.max {
			return
		}
	}
	if now > e.until {
		e.fails = 1
	} else if e.fails < digestMaxTries {
		e.fails++
	}
	e.until = now + digestEvasionTime
	if t.m == nil {
		t.m = make(map[[16]byte]lockout)
	}
	t.m[k] = e
}

// sweep drops the entries whose count has ended, at most once a second.
func (t *lockoutTable) sweep(now int64) {
	if now == t.swept {
		return
	}
	t.swept = now
	for k, e := range t.m {
		if now > e.until {
			delete(t.m, k)
		}
	}
}

// size is the number of entries; for tests.
func (t *lockoutTable) size() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.m)
}
