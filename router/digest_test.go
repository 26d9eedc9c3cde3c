package router

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/match"
	"ramjet.dev/ramjet/match/htpasswd"
)

func TestDigestNonce(t *testing.T) {
	key, other := newNonceKey(), newNonceKey()
	now := time.Date(2026, 12, 1, 18, 0, 0, 0, time.UTC)
	n := mintNonce(&key, "private", now, 7)
	require.Len(t, n, 40)
	require.NotEqual(t, n, mintNonce(&key, "private", now, 8), "nonces of one second differ")

	for _, tt := range []struct {
		name         string
		key          *[32]byte
		nonce, realm string
		valid        bool
	}{
		{"its own", &key, n, "private", true},
		{"another router's", &other, n, "private", false},
		{"another realm's", &key, n, "public", false},
		{"its time changed", &key, "00000000" + n[8:], "private", false},
		{"its sequence number changed", &key, n[:8] + "00000008" + n[16:], "private", false},
		{"not hex", &key, strings.Repeat("z", 40), "private", false},
		{"the module's length", &key, n[:16], "private", false},
	} {
		id, valid := checkNonce(tt.key, tt.nonce, tt.realm)
		require.Equal(t, tt.valid, valid, tt.name)
		if valid {
			require.Equal(t, uint32(now.Unix()), id.issued(), tt.name)
			require.Equal(t, nonceID(now.Unix())<<32|7, id, tt.name)
		}
	}

	var ds digestState
	ds.init()
	a, b := ds.challenge("private", false, now), ds.challenge("private", false, now)
	require.NotEqual(t, a, b, "two challenges of one second")
}

func TestParseDigestAuthorization(t *testing.T) {
	full := `Digest username="Mufasa", realm="testrealm@host.com", nonce="dcd98b7102dd2f0e8b11d0f600bfb0c093", uri="/dir/index.html", qop=auth, nc=00000001, cnonce="0a4f113b", response="6629fae49393a05397450978507c4ef1", opaque="5ccc069c403ebaf9f0171e9517f40e41"`
	f, ok := parseDigestAuthorization(full)
	require.True(t, ok)
	require.Equal(t, digestFields{username: "Mufasa", realm: "testrealm@host.com", nonce: "dcd98b7102dd2f0e8b11d0f600bfb0c093",
		uri: "/dir/index.html", qop: "auth", nc: "00000001", cnonce: "0a4f113b", response: "6629fae49393a05397450978507c4ef1"}, f)
	f, ok = parseDigestAuthorization(`digest  username="a\"b\\c",realm=r,nonce=n,uri="/",qop=auth,nc=1,cnonce=c,response=x`)
	require.True(t, ok, "scheme in any case, no spaces after commas, escapes")
	require.Equal(t, `a"b\c`, f.username)
	for _, bad := range []string{
		`Basic YWxpY2U6d29uZGVybGFuZA==`,
		`Digest username="alice"`,
		`Digest username="alice, realm=r, nonce=n, uri=/, qop=auth, nc=1, cnonce=c, response=x`,
		`Digest username="a` + "\x01" + `", realm=r, nonce=n, uri=/, qop=auth, nc=1, cnonce=c, response=x`,
		`Digest =x, username=a, realm=r, nonce=n, uri=/, qop=auth, nc=1, cnonce=c, response=x`,
		`Digestusername=a`,
	} {
		_, ok := parseDigestAuthorization(bad)
		require.False(t, ok, bad)
	}
}

// TestDigestAuth: RFC 2617's example credentials, with the router's own
// nonces, through the checks in the module's order.
func TestDigestAuth(t *testing.T) {
	users, problems := htpasswd.ParseHtdigest([]byte("Mufasa:testrealm@host.com:939e7578ed9e3c518a452acee763bce9\n"))
	require.Empty(t, problems)
	d := &match.DigestAuth{Realm: "testrealm@host.com", Users: users}
	var ds digestState
	ds.init()
	now := time.Now()
	fresh := func() string { return mintNonce(&ds.key, d.Realm, now, ds.seq.Add(1)) }
	request := func(target, nc, uri, password string, n string) *http.Request {
		f := digestFields{username: "Mufasa", realm: d.Realm, nonce: n, uri: uri, qop: "auth", nc: nc, cnonce: "0a4f113b"}
		ha1 := "939e7578ed9e3c518a452acee763bce9"
		if password != "Circle Of Life" {
			ha1 = strings.Repeat("0", 32)
		}
		f.response = digestResponse(ha1, f, "GET:"+uri)
		req, _ := http.NewRequest("GET", "http://h"+target, nil)
		req.RequestURI = target
		req.Header.Set("Authorization", `Digest username="Mufasa", realm="`+d.Realm+`", nonce="`+n+`", uri="`+uri+
			`", qop=auth, nc=`+nc+`, cnonce="0a4f113b", response="`+f.response+`"`)
		return req
	}
	check := func(req *http.Request, at time.Time) (string, bool, bool) {
		return ds.authenticate(req, d, netip.Addr{}, at)
	}
	nonce := fresh()
	info, stale, ok := check(request("/dir/index.html", "00000001", "/dir/index.html", "Circle Of Life", nonce), now)
	require.True(t, ok)
	require.False(t, stale)
	f := digestFields{nonce: nonce, nc: "00000001", cnonce: "0a4f113b", qop: "auth"}
	require.Equal(t, `qop="auth", rspauth="`+digestResponse("939e7578ed9e3c518a452acee763bce9", f, ":/dir/index.html")+`", cnonce="0a4f113b", nc=00000001`, info)

	_, _, ok = check(request("/dir/index.html?x=1", "00000001", "/dir/index.html", "Circle Of Life", fresh()), now)
	require.True(t, ok, "the uri may leave the query out")
	_, _, ok = check(request("/dir/index.htmlx", "00000001", "/dir/index.html", "Circle Of Life", fresh()), now)
	require.False(t, ok, "but must be the target's path")

	_, stale, ok = check(request("/", "00000001", "/", "wrong", fresh()), now.Add(time.Hour))
	require.False(t, ok)
	require.False(t, stale, "a wrong password is never stale")
	_, stale, ok = check(request("/", "00000001", "/", "Circle Of Life", fresh()), now.Add(time.Hour))
	require.False(t, ok)
	require.True(t, stale, "right credentials with an old nonce are stale")
	_, stale, ok = check(request("/", "00000014", "/", "Circle Of Life", fresh()), now)
	require.False(t, ok)
	require.True(t, stale, "nc 20 is over the replays")
	for _, n := range []string{"0123456789abcdef", mintNonce(new([32]byte), d.Realm, now, 1)} {
		_, stale, ok = check(request("/", "00000001", "/", "Circle Of Life", n), now)
		require.False(t, ok)
		require.False(t, stale, "a nonce the router never issued")
	}
}

// TestDigestServe: the challenge, the Authentication-Info on the proxied
// answer, and no Authorization at the backend.
func TestDigestServe(t *testing.T) {
	users, _ := htpasswd.ParseHtdigest([]byte("alice:private:d26b55c491fd648f2db95a6b937f019e\n"))
	auth := &match.Auth{Digest: &match.DigestAuth{Realm: "private", Secret: "demo/htdigest", SecretType: "auth-file", Users: users}}
	r, _ := authRouter(t, Options{}, auth)

	res := serve(r, "GET", "shop.example.com", "/app/x", nil)
	require.Equal(t, http.StatusUnauthorized, res.StatusCode)
	challenge := res.Header.Get("WWW-Authenticate")
	require.Regexp(t, `^Digest algorithm="MD5", qop="auth", realm="private", nonce="[0-9a-f]{40}"$`, challenge)
	nonce := challenge[strings.Index(challenge, `nonce="`)+7 : len(challenge)-1]

	f := digestFields{nonce: nonce, nc: "00000001", cnonce: "c", qop: "auth"}
	resp := digestResponse("d26b55c491fd648f2db95a6b937f019e", f, "GET:/app/x")
	res = serve(r, "GET", "shop.example.com", "/app/x", http.Header{"Authorization": {`Digest username="alice", realm="private", nonce="` + nonce +
		`", uri="/app/x", qop=auth, nc=00000001, cnonce="c", response="` + resp + `"`}})
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Equal(t, "web", res.Header.Get("X-Backend"))
	require.Equal(t, `qop="auth", rspauth="`+digestResponse("d26b55c491fd648f2db95a6b937f019e", f, ":/app/x")+`", cnonce="c", nc=00000001`,
		res.Header.Get("Authentication-Info"))
	require.Empty(t, res.Header.Values("Seen-Authorization"), "the backend never sees the credentials")
}

// aliceHA1 is MD5("alice:private:wonderland"), the htdigest line the
// serving tests log in with.
const aliceHA1 = "d26b55c491fd648f2db95a6b937f019e"

// digestRouter serves /app on shop.example.com behind digest
// authentication for alice in realm private, on a clock the test sets.
func digestRouter(t testing.TB, o Options) (*Router, *time.Time) {
	users, _ := htpasswd.ParseHtdigest([]byte("alice:private:" + aliceHA1 + "\n"))
	auth := &match.Auth{Digest: &match.DigestAuth{Realm: "private", Secret: "demo/htdigest", SecretType: "auth-file", Users: users}}
	_, addr := echoBackend(t, "web")
	rt := route(match.Prefix, "/app", httpBackend("prod/web:80", addr))
	rt.Auth = auth
	r := newTestRouter(o)
	r.Publish(table("auth", vhost("shop.example.com", nil, rt)))
	now := time.Date(2026, 12, 1, 18, 0, 0, 0, time.UTC)
	r.auth.digest.now = func() time.Time { return now }
	return r, &now
}

// digestGet sends GET target from the client at remote ("ip:port"),
// with authorization when it is not "".
func digestGet(r *Router, target, authorization, remote string) *http.Response {
	req := httptest.NewRequest(http.MethodGet, target, nil)
	req.Host = "shop.example.com"
	req.RemoteAddr = remote
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	rec := httptest.NewRecorder()
	r.ServeHTTP(rec, req)
	return rec.Result()
}

// challengeNonce is the nonce of a Digest challenge, and whether it is
// marked stale; it fails the test on any other answer.
func challengeNonce(t testing.TB, res *http.Response) (nonce string, stale bool) {
	t.Helper()
	require.Equal(t, http.StatusUnauthorized, res.StatusCode)
	v := res.Header.Get("WWW-Authenticate")
	m := regexp.MustCompile(`^Digest algorithm="MD5", qop="auth", realm="private", nonce="([0-9a-f]+)"(, stale="true")?$`).FindStringSubmatch(v)
	require.NotNil(t, m, "challenge %q", v)
	return m[1], m[2] != ""
}

// aliceAnswer is the Authorization alice's browser sends for GET target
// with nonce and nonce count nc; ha1 "" means her right password.
func aliceAnswer(nonce, nc, target, ha1 string) string {
	if ha1 == "" {
		ha1 = aliceHA1
	}
	f := digestFields{nonce: nonce, nc: nc, cnonce: "0a4f113b", qop: "auth"}
	return `Digest username="alice", realm="private", nonce="` + nonce + `", uri="` + target + `", qop=auth, nc=` + nc +
		`, cnonce="0a4f113b", response="` + digestResponse(ha1, f, "GET:"+target) + `"`
}

const client1 = "203.0.113.1:5000"

// TestDigestReplay: each nonce count of a nonce is accepted once, in any
// order, as the module's bit vector of used counts does
// (ngx_http_auth_digest_module.c:751-775): the exact header sent again
// gets 401 and a new challenge, not stale.
func TestDigestReplay(t *testing.T) {
	r, _ := digestRouter(t, Options{})
	nonce, _ := challengeNonce(t, digestGet(r, "/app/x", "", client1))
	first := aliceAnswer(nonce, "00000001", "/app/x", "")
	require.Equal(t, http.StatusOK, digestGet(r, "/app/x", first, client1).StatusCode)
	again := digestGet(r, "/app/x", first, client1)
	fresh, stale := challengeNonce(t, again)
	require.False(t, stale, "a replayed nonce count is refused, not stale")
	require.NotEqual(t, nonce, fresh)

	for _, nc := range []string{"00000002", "00000003", "00000005", "00000004"} {
		require.Equal(t, http.StatusOK, digestGet(r, "/app/y", aliceAnswer(nonce, nc, "/app/y", ""), client1).StatusCode, nc)
	}
	_, stale = challengeNonce(t, digestGet(r, "/app/z", aliceAnswer(nonce, "00000003", "/app/z", ""), client1))
	require.False(t, stale, "a count used for another target is used all the same")
}

// TestDigestNonceLifetime: a nonce is good for 60 seconds from its
// challenge (auth_digest_timeout) until its first use, then for 10
// seconds from that use (auth_digest_expires, module.c:764-772), in whole
// seconds as the module counts them; past either, right credentials get a
// new challenge marked stale, whose nonce works.
func TestDigestNonceLifetime(t *testing.T) {
	r, now := digestRouter(t, Options{})
	start := *now
	nonce, _ := challengeNonce(t, digestGet(r, "/app/x", "", client1))
	*now = start.Add(5 * time.Second)
	require.Equal(t, http.StatusOK, digestGet(r, "/app/x", aliceAnswer(nonce, "00000001", "/app/x", ""), client1).StatusCode)
	*now = start.Add(14*time.Second + 999*time.Millisecond)
	require.Equal(t, http.StatusOK, digestGet(r, "/app/x", aliceAnswer(nonce, "00000002", "/app/x", ""), client1).StatusCode)
	*now = start.Add(15 * time.Second)
	fresh, stale := challengeNonce(t, digestGet(r, "/app/x", aliceAnswer(nonce, "00000003", "/app/x", ""), client1))
	require.True(t, stale, "10 seconds after its first use")
	require.Equal(t, http.StatusOK, digestGet(r, "/app/x", aliceAnswer(fresh, "00000001", "/app/x", ""), client1).StatusCode)

	*now = start
	unused, _ := challengeNonce(t, digestGet(r, "/app/x", "", client1))
	late, _ := challengeNonce(t, digestGet(r, "/app/x", "", client1))
	*now = start.Add(59 * time.Second)
	require.Equal(t, http.StatusOK, digestGet(r, "/app/x", aliceAnswer(late, "00000001", "/app/x", ""), client1).StatusCode)
	*now = start.Add(60 * time.Second)
	_, stale = challengeNonce(t, digestGet(r, "/app/x", aliceAnswer(unused, "00000001", "/app/x", ""), client1))
	require.True(t, stale, "60 seconds after its challenge, unused")
	*now = start.Add(68 * time.Second)
	require.Equal(t, http.StatusOK, digestGet(r, "/app/x", aliceAnswer(late, "00000002", "/app/x", ""), client1).StatusCode,
		"a nonce first used at 59 seconds is good until 69")
	*now = start.Add(69 * time.Second)
	_, stale = challengeNonce(t, digestGet(r, "/app/x", aliceAnswer(late, "00000003", "/app/x", ""), client1))
	require.True(t, stale)
}

// TestDigestLockout: 5 failed logins from one client address make the
// router answer that address 401 without a challenge, whatever it sends,
// until 300 seconds after the last failure (auth_digest_maxtries and
// auth_digest_evasion_time, module.c:1409-1510). Every refusal of
// credentials that parse counts, a replay or a stale nonce included; a
// request without them does not; a login resets the count. Other
// addresses are not affected.
func TestDigestLockout(t *testing.T) {
	r, now := digestRouter(t, Options{})
	start := *now
	login := func(remote string) *http.Response {
		nonce, _ := challengeNonce(t, digestGet(r, "/app/x", "", remote))
		return digestGet(r, "/app/x", aliceAnswer(nonce, "00000001", "/app/x", ""), remote)
	}
	fail := func(remote string) {
		t.Helper()
		nonce, _ := challengeNonce(t, digestGet(r, "/app/x", "", remote))
		challengeNonce(t, digestGet(r, "/app/x", aliceAnswer(nonce, "00000001", "/app/x", strings.Repeat("0", 32)), remote))
	}
	for range 4 {
		fail(client1)
	}
	for range 10 {
		challengeNonce(t, digestGet(r, "/app/x", "", client1))
	}
	require.Equal(t, http.StatusOK, login(client1).StatusCode, "4 failures, and requests without credentials")
	for range 4 {
		fail(client1)
	}
	require.Equal(t, http.StatusOK, login(client1).StatusCode, "the login reset the count")
	for range 5 {
		fail(client1)
	}
	res := digestGet(r, "/app/x", "", client1)
	require.Equal(t, http.StatusUnauthorized, res.StatusCode)
	require.Empty(t, res.Header.Values("WWW-Authenticate"), "no challenge while locked out")
	nonce, _ := challengeNonce(t, digestGet(r, "/app/x", "", "203.0.113.2:5000"))
	res = digestGet(r, "/app/x", aliceAnswer(nonce, "00000001", "/app/x", ""), client1)
	require.Equal(t, http.StatusUnauthorized, res.StatusCode, "right credentials are refused too")
	require.Empty(t, res.Header.Values("WWW-Authenticate"))
	require.Equal(t, http.StatusOK, login("203.0.113.3:6000").StatusCode, "another address")

	*now = start.Add(299 * time.Second)
	require.Empty(t, digestGet(r, "/app/x", "", client1).Header.Values("WWW-Authenticate"))
	*now = start.Add(300 * time.Second)
	require.Equal(t, http.StatusOK, login("203.0.113.1:7000").StatusCode, "300 seconds after the last failure, any port")

	// A failure as the count ends still adds to it (module.c:1464-1470).
	for range 4 {
		fail("203.0.113.4:1")
	}
	*now = now.Add(digestEvasionTime * time.Second)
	fail("203.0.113.4:1")
	require.Empty(t, digestGet(r, "/app/x", "", "203.0.113.4:1").Header.Values("WWW-Authenticate"))

	// A replayed count and a stale nonce are failures too.
	nonce, _ = challengeNonce(t, digestGet(r, "/app/x", "", client1))
	used := aliceAnswer(nonce, "00000001", "/app/x", "")
	require.Equal(t, http.StatusOK, digestGet(r, "/app/x", used, client1).StatusCode)
	for range 4 {
		challengeNonce(t, digestGet(r, "/app/x", used, client1))
	}
	*now = now.Add(10 * time.Second)
	_, stale := challengeNonce(t, digestGet(r, "/app/x", aliceAnswer(nonce, "00000002", "/app/x", ""), client1))
	require.True(t, stale)
	require.Empty(t, digestGet(r, "/app/x", "", client1).Header.Values("WWW-Authenticate"))
}

// heapAfter is the live heap once f has run, less the live heap before.
func heapAfter(f func()) int64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.GC()
	runtime.ReadMemStats(&after)
	return int64(after.HeapAlloc) - int64(before.HeapAlloc)
}

// TestDigestNonceFlood: the nonces in use are kept in a table of fixed
// size. Flooded with four times as many first uses as it holds within one
// second, it stays at its size and within its memory; no nonce count is
// accepted twice, the evicted nonces' included, which answer stale, and a
// nonce issued after the flood still logs in.
func TestDigestNonceFlood(t *testing.T) {
	var ds digestState
	ds.init()
	now := time.Date(2026, 12, 1, 18, 0, 0, 0, time.UTC).Unix()
	id := func(seq uint32) nonceID { return nonceID(now)<<32 | nonceID(seq) }
	const n = 4 * digestNonceEntries
	grew := heapAfter(func() {
		for seq := range uint32(n) {
			ok, _ := ds.nonces.use(id(seq), 1, now)
			require.True(t, ok)
		}
	})
	entries, ring := ds.nonces.size()
	require.Equal(t, digestNonceEntries, entries)
	require.Equal(t, digestNonceEntries, ring)
	t.Logf("%d first uses: %d entries, %.1f MiB", n, entries, float64(grew)/(1<<20))
	require.Less(t, grew, int64(6<<20), "the table's memory")

	for _, seq := range []uint32{0, n - digestNonceEntries - 1} {
		ok, stale := ds.nonces.use(id(seq), 1, now)
		require.False(t, ok, "an evicted nonce's count again")
		require.True(t, stale)
		ok, stale = ds.nonces.use(id(seq), 2, now)
		require.False(t, ok, "an evicted nonce's next count")
		require.True(t, stale)
	}
	ok, stale := ds.nonces.use(id(n-1), 1, now)
	require.False(t, ok, "a nonce in the table, its count again")
	require.False(t, stale)
	ok, _ = ds.nonces.use(id(n-1), 2, now)
	require.True(t, ok, "its next count")
	ok, _ = ds.nonces.use(id(n), 1, now)
	require.True(t, ok, "a nonce issued after the flood")

	// 70 seconds later every entry may go: the table is refilled without
	// evicting a nonce in use, so the floor stays.
	later := now + digestNonceTimeout + digestNonceExpires
	floor := ds.nonces.floor
	for seq := range uint32(digestNonceEntries) {
		ok, _ := ds.nonces.use(nonceID(later)<<32|nonceID(seq), 0, later)
		require.True(t, ok)
	}
	require.Equal(t, floor, ds.nonces.floor)
	entries, _ = ds.nonces.size()
	require.Equal(t, digestNonceEntries, entries)
}

// TestDigestClientFlood: failed logins from ever new client addresses,
// the request's RemoteAddr, fill the table of failing addresses to its
// size and no further, within its memory. An address locked out before
// stays locked out; a new one is not tracked until an entry's count ends.
func TestDigestClientFlood(t *testing.T) {
	r, now := digestRouter(t, Options{})
	r.auth.digest.clients.max = 64
	remote := func(i int) string {
		return netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)}), 4000).String()
	}
	fail := func(remote string) *http.Response {
		nonce, _ := challengeNonce(t, digestGet(r, "/app/x", "", remote))
		return digestGet(r, "/app/x", aliceAnswer(nonce, "00000001", "/app/x", strings.Repeat("0", 32)), remote)
	}
	for range digestMaxTries {
		fail(client1)
	}
	for i := range 1000 {
		challengeNonce(t, fail(remote(i)))
	}
	require.Equal(t, 64, r.auth.digest.clients.size())
	require.Empty(t, digestGet(r, "/app/x", "", client1).Header.Values("WWW-Authenticate"), "still locked out")
	for range digestMaxTries + 1 {
		challengeNonce(t, fail(remote(5000)))
	}

	*now = now.Add(digestEvasionTime*time.Second + time.Second)
	for range digestMaxTries {
		fail(remote(5001))
	}
	require.Equal(t, 1, r.auth.digest.clients.size(), "the ended counts were swept")
	require.Empty(t, digestGet(r, "/app/x", "", remote(5001)).Header.Values("WWW-Authenticate"))

	var ds digestState
	ds.init()
	at := now.Unix()
	grew := heapAfter(func() {
		for i := range 4 * digestClientEntries {
			ds.clients.record(netip.AddrFrom16([16]byte{0x20, 0x01, 0x0d, 0xb8, 12: byte(i >> 24), byte(i >> 16), byte(i >> 8), byte(i)}), false, at)
		}
	})
	require.Equal(t, digestClientEntries, ds.clients.size())
	t.Logf("%d addresses: %d entries, %.1f MiB", 4*digestClientEntries, ds.clients.size(), float64(grew)/(1<<20))
	require.Less(t, grew, int64(2<<20), "the table's memory")
}

// TestDigestConcurrent: one Authorization sent at once on many
// connections passes once; distinct nonce counts of one nonce all pass.
func TestDigestConcurrent(t *testing.T) {
	r, _ := digestRouter(t, Options{})
	nonce, _ := challengeNonce(t, digestGet(r, "/app/x", "", client1))
	same := aliceAnswer(nonce, "00000001", "/app/x", "")
	var wg sync.WaitGroup
	var passed, distinct atomic.Int32
	for i := range digestReplays - 2 {
		wg.Go(func() {
			if digestGet(r, "/app/x", same, "203.0.113.50:1").StatusCode == http.StatusOK {
				passed.Add(1)
			}
		})
		wg.Go(func() {
			a := aliceAnswer(nonce, fmt.Sprintf("%08x", i+2), "/app/x", "")
			if digestGet(r, "/app/x", a, client1).StatusCode == http.StatusOK {
				distinct.Add(1)
			}
		})
	}
	wg.Wait()
	require.Equal(t, int32(1), passed.Load())
	require.Equal(t, int32(digestReplays-2), distinct.Load())
}
