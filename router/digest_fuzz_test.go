package router

import (
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"ramjet.dev/ramjet/match"
	"ramjet.dev/ramjet/match/htpasswd"
)

// FuzzParseDigestAuthorization: any Authorization value parses without
// panicking, and one that parses has every required parameter.
func FuzzParseDigestAuthorization(f *testing.F) {
	f.Add(`Digest username="Mufasa", realm="testrealm@host.com", nonce="dcd98b7102dd2f0e8b11d0f600bfb0c093", uri="/dir/index.html", qop=auth, nc=00000001, cnonce="0a4f113b", response="6629fae49393a05397450978507c4ef1"`)
	f.Add(`digest username="a\"b\\", realm=r,nonce=n,uri="/",qop=auth,nc=1,cnonce=c,response=x,`)
	f.Add(`Digest username="\`)
	f.Fuzz(func(t *testing.T, v string) {
		f, ok := parseDigestAuthorization(v)
		if !ok {
			return
		}
		for _, p := range []string{f.username, f.realm, f.nonce, f.uri, f.qop, f.nc, f.cnonce, f.response} {
			if p == "" {
				t.Fatalf("parsed %q with an empty parameter: %+v", v, f)
			}
		}
		if !strings.HasPrefix(strings.ToLower(strings.TrimLeft(v, " \t")), "digest ") {
			t.Fatalf("parsed %q without the Digest scheme", v)
		}
	})
}

// FuzzDigestState runs logins, challenges, replays, clock moves and raw
// Authorization values against a Router's digest state with small tables,
// and checks it against a model of the module without bounds: a nonce
// count is never accepted twice; what the router accepts the module
// accepts; until the table first evicts a nonce in use the two answer
// alike; lockouts follow the module's rules over the router's verdicts;
// the tables stay within their sizes.
func FuzzDigestState(f *testing.F) {
	// Each op is 4 bytes: 0 a challenge; 1 a login with nonce a, count
	// b, client c>>1 and, when c is odd, a wrong password; 2 a clock
	// move of a seconds (248 and over: 296 to 303); 3 the rest of the input as the Authorization.
	// The first 4 bytes size the nonce table.
	challenge, login, wait := []byte{0, 0, 0, 0}, func(a, b, c byte) []byte { return []byte{1, a, b, c} }, func(a byte) []byte { return []byte{2, a, 0, 0} }
	seq := func(ops ...[]byte) []byte { return slices.Concat(ops...) }
	f.Add(seq([]byte{7, 0, 0, 0}, challenge, login(0, 1, 0), login(0, 1, 0), wait(9), login(0, 2, 0), wait(1), login(0, 3, 0), login(0, 0, 0)))
	f.Add(seq([]byte{0, 0, 0, 0}, challenge, challenge, challenge, login(0, 1, 0), login(1, 1, 0), login(0, 1, 0), login(2, 0, 0), login(1, 2, 0), login(2, 1, 2)))
	f.Add(seq([]byte{2, 0, 0, 0}, challenge, login(0, 1, 1), login(0, 1, 1), login(0, 1, 1), login(0, 1, 1), login(0, 1, 1), login(0, 1, 0),
		login(0, 1, 2), wait(251), login(0, 1, 0), wait(1), challenge, login(1, 1, 0), login(1, 25, 6)))
	f.Add(seq([]byte{2, 0, 0, 0}, challenge, login(0, 1, 1), login(0, 1, 1), login(0, 1, 1), login(0, 1, 1), wait(252), challenge, login(1, 1, 1), login(1, 2, 0)))
	f.Add(seq([]byte{1, 0, 0, 0}, challenge, wait(59), login(0, 1, 0), wait(1), challenge, wait(60), login(1, 1, 0), []byte{3}, []byte(`Digest username="alice", realm="private", nonce="00", uri="/x", qop=auth, nc=1, cnonce=c, response=x`)))
	users, _ := htpasswd.ParseHtdigest([]byte("alice:private:" + aliceHA1 + "\n"))
	d := &match.DigestAuth{Realm: "private", Users: users}
	clients := []netip.Addr{netip.MustParseAddr("203.0.113.1"), netip.MustParseAddr("203.0.113.2"), netip.MustParseAddr("2001:db8::1"), {}}
	f.Fuzz(func(t *testing.T, ops []byte) {
		if len(ops) < 4 {
			return
		}
		var ds digestState
		ds.init()
		ds.key = [32]byte{1}             // deterministic nonces, for reproducible failures
		ds.seq.Store(math.MaxUint32 - 2) // and one second's sequence wraps
		ds.nonces.max = 1 + int(ops[0]%8)
		ops = ops[4:]
		now := time.Date(2026, 12, 1, 18, 0, 0, 0, time.UTC)
		type use struct {
			expires int64
			used    uint32
		}
		model := map[nonceID]*use{}
		type fails struct{ n, until int64 }
		lockouts := map[netip.Addr]*fails{}
		accepted := map[[2]uint64]bool{}
		var nonces []string
		for ; len(ops) >= 4; ops = ops[4:] {
			op, a, b, c := ops[0]%4, ops[1], ops[2], ops[3]
			sec := now.Unix()
			client := clients[c>>1%uint8(len(clients))]
			switch op {
			case 0:
				nonces = append(nonces, ds.challenge(d.Realm, false, now)[len(`Digest algorithm="MD5", qop="auth", realm="private", nonce="`):][:2*nonceLen])
				continue
			case 2:
				n := int(a)
				if n >= 248 { // near the evasion time, for its bounds
					n = digestEvasionTime + n - 252
				}
				now = now.Add(time.Duration(n) * time.Second)
				continue
			}
			var authorization string
			nc := uint(b % (digestReplays + 4))
			id := nonceID(0)
			if op == 1 {
				if len(nonces) == 0 {
					continue
				}
				nonce := nonces[int(a)%len(nonces)]
				id, _ = checkNonce(&ds.key, nonce, d.Realm)
				ha1 := ""
				if c&1 != 0 {
					ha1 = strings.Repeat("0", 32)
				}
				authorization = aliceAnswer(nonce, fmt.Sprintf("%08x", nc), "/x", ha1)
			} else {
				authorization = string(ops[1:])
				ops = ops[:4] // the value takes the rest of the input
			}
			e := lockouts[client]
			lockedOut := client.IsValid() && e != nil && e.n >= digestMaxTries && sec < e.until
			if got := ds.clients.lockedOut(client, sec); got != lockedOut {
				t.Fatalf("at %d, %v locked out: %v, the module says %v", sec, client, got, lockedOut)
			}
			if lockedOut {
				continue
			}
			req := httptest.NewRequest(http.MethodGet, "/x", nil)
			req.Header.Set("Authorization", authorization)
			_, stale, ok := ds.authenticate(req, d, client, now)
			fl, parsed := parseDigestAuthorization(authorization)
			counted := parsed && len(fl.nonce) == 2*nonceLen
			if op == 3 {
				if ok {
					t.Fatalf("a raw Authorization passed: %q", authorization)
				}
			} else {
				// The module's verdict, no table bound.
				wantOK, wantStale := false, false
				switch {
				case c&1 != 0:
				case nc >= digestReplays:
					wantStale = true
				case model[id] != nil:
					u := model[id]
					switch {
					case sec >= u.expires:
						wantStale = true
					case u.used&(1<<nc) == 0:
						u.used |= 1 << nc
						wantOK = true
					}
				case nonceAge(id, sec) < 0 || nonceAge(id, sec) >= digestNonceTimeout:
					wantStale = true
				default:
					model[id] = &use{expires: sec + digestNonceExpires, used: 1 | 1<<nc}
					wantOK = true
				}
				if ok {
					if accepted[[2]uint64{uint64(id), uint64(nc)}] {
						t.Fatalf("nonce %x count %d accepted twice", id, nc)
					}
					accepted[[2]uint64{uint64(id), uint64(nc)}] = true
					if !wantOK {
						t.Fatalf("nonce %x count %d at %d accepted; the module refuses it (stale %v)", id, nc, sec, wantStale)
					}
				}
				if ds.nonces.floor == 0 && (ok != wantOK || stale != wantStale) {
					t.Fatalf("nonce %x count %d at %d: ok %v stale %v; the module: ok %v stale %v", id, nc, sec, ok, stale, wantOK, wantStale)
				}
			}
			if counted && client.IsValid() {
				switch {
				case ok:
					delete(lockouts, client)
				case e == nil || sec > e.until:
					lockouts[client] = &fails{1, sec + digestEvasionTime}
				default:
					e.n++
					e.until = sec + digestEvasionTime
				}
			}
			if entries, ring := ds.nonces.size(); entries > ring || ring != ds.nonces.max && ring != 0 {
				t.Fatalf("%d nonces in a table of %d (max %d)", entries, ring, ds.nonces.max)
			}
		}
	})
}
