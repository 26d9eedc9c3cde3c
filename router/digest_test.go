package router

import (
	"fmt"
	"net/http"
	"net/http/httptest"
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
		return ds.authenticate(req, d, at)
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
