package router

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/match"
	"ramjet.dev/ramjet/match/htpasswd"
)

func TestDigestNonce(t *testing.T) {
	key, other := newNonceKey(), newNonceKey()
	now := time.Date(2026, 12, 1, 18, 0, 0, 0, time.UTC)
	n := mintNonce(&key, "private", now)
	require.Len(t, n, 32)

	for _, tt := range []struct {
		name         string
		key          *[32]byte
		nonce, realm string
		at           time.Time
		valid, stale bool
	}{
		{"fresh", &key, n, "private", now, true, false},
		{"at its lifetime", &key, n, "private", now.Add(digestNonceLifetime), true, false},
		{"past its lifetime", &key, n, "private", now.Add(digestNonceLifetime + time.Second), true, true},
		{"from the future", &key, n, "private", now.Add(-time.Second), true, true},
		{"another router's", &other, n, "private", now, false, false},
		{"another realm's", &key, n, "public", now, false, false},
		{"its time changed", &key, "00000000" + n[8:], "private", now, false, false},
		{"not hex", &key, strings.Repeat("z", 32), "private", now, false, false},
		{"the module's length", &key, n[:16], "private", now, false, false},
	} {
		valid, stale := checkNonce(tt.key, tt.nonce, tt.realm, tt.at)
		require.Equal(t, tt.valid, valid, tt.name)
		if valid {
			require.Equal(t, tt.stale, stale, tt.name)
		}
	}
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
// nonce, through the checks in the module's order.
func TestDigestAuth(t *testing.T) {
	users, problems := htpasswd.ParseHtdigest([]byte("Mufasa:testrealm@host.com:939e7578ed9e3c518a452acee763bce9\n"))
	require.Empty(t, problems)
	d := &match.DigestAuth{Realm: "testrealm@host.com", Users: users}
	key := newNonceKey()
	now := time.Now()
	nonce := mintNonce(&key, d.Realm, now)
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
	info, stale, ok := digestAuth(&key, request("/dir/index.html", "00000001", "/dir/index.html", "Circle Of Life", nonce), d, now)
	require.True(t, ok)
	require.False(t, stale)
	f := digestFields{nonce: nonce, nc: "00000001", cnonce: "0a4f113b", qop: "auth"}
	require.Equal(t, `qop="auth", rspauth="`+digestResponse("939e7578ed9e3c518a452acee763bce9", f, ":/dir/index.html")+`", cnonce="0a4f113b", nc=00000001`, info)

	_, _, ok = digestAuth(&key, request("/dir/index.html?x=1", "00000001", "/dir/index.html", "Circle Of Life", nonce), d, now)
	require.True(t, ok, "the uri may leave the query out")
	_, _, ok = digestAuth(&key, request("/dir/index.htmlx", "00000001", "/dir/index.html", "Circle Of Life", nonce), d, now)
	require.False(t, ok, "but must be the target's path")

	_, stale, ok = digestAuth(&key, request("/", "00000001", "/", "wrong", nonce), d, now.Add(time.Hour))
	require.False(t, ok)
	require.False(t, stale, "a wrong password is never stale")
	_, stale, ok = digestAuth(&key, request("/", "00000001", "/", "Circle Of Life", nonce), d, now.Add(time.Hour))
	require.False(t, ok)
	require.True(t, stale, "right credentials with an old nonce are stale")
	_, stale, ok = digestAuth(&key, request("/", "00000014", "/", "Circle Of Life", nonce), d, now)
	require.False(t, ok)
	require.True(t, stale, "nc 20 is over the replays")
	_, stale, ok = digestAuth(&key, request("/", "00000001", "/", "Circle Of Life", "0123456789abcdef"), d, now)
	require.False(t, ok)
	require.False(t, stale, "a nonce the router never issued")
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
	require.Regexp(t, `^Digest algorithm="MD5", qop="auth", realm="private", nonce="[0-9a-f]{32}"$`, challenge)
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
