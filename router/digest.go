package router

import (
	"crypto/hmac"
	"crypto/md5"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/binary"
	"encoding/hex"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"ramjet.dev/ramjet/match"
)

// Digest authentication (SPEC §11.7, auth-type digest) as ingress-nginx
// serves it with nginx's auth_digest module (atomx/nginx-http-auth-digest
// v1.0.0, which its image builds: images/nginx/rootfs/build.sh:33,486;
// nginx.tmpl:1254-1262 turns the annotation into auth_digest and
// auth_digest_user_file), with the module's defaults. The module keeps
// every nonce it issued in shared memory; here a nonce is signed instead:
// the second it was issued, a sequence number, and an HMAC of both and the
// realm under a key each Router draws at random, so a nonce is good only
// from the Router that issued it and only for its realm, and a challenge
// costs no memory. What the module keeps of a nonce once used (the nonce
// counts accepted) and of a client address that fails to log in is kept
// in the two tables of digeststate.go, each of fixed size.

const (
	// digestNonceTimeout is how long a nonce waits for its first use: the
	// module's auth_digest_timeout (ngx_http_auth_digest_module.c:37,
	// :1342). Right credentials with an older nonce get a challenge marked
	// stale, which browsers answer without asking the user again.
	digestNonceTimeout = 60
	// digestNonceExpires is how long a nonce stays good after its first
	// use, whatever its timeout: auth_digest_expires (module.c:38,
	// :764-772). Both count whole seconds, as the module does.
	digestNonceExpires = 10
	// digestReplays bounds the nonce count a client may use a nonce with,
	// each count once: the module's auth_digest_replays (module.c:40,
	// :745-775).
	digestReplays = 20
	// digestMaxTries failed logins from a client address within
	// digestEvasionTime seconds of each other lock it out until
	// digestEvasionTime after the last: auth_digest_maxtries and
	// auth_digest_evasion_time (module.c:41-42, :1409-1510).
	digestMaxTries    = 5
	digestEvasionTime = 300
	// nonceMACLen is the HMAC's share of a nonce, in bytes: 96 bits.
	nonceMACLen = 12
	// nonceLen is a nonce's length in bytes: issue time, sequence
	// number, HMAC; it is sent as twice as many hex digits.
	nonceLen = 4 + 4 + nonceMACLen
)

// digestState is what digest authentication keeps in a Router, across
// tables: the key its nonces are signed with, the last nonce's sequence
// number, the nonces in use and the failing client addresses.
type digestState struct {
	key     [32]byte
	seq     atomic.Uint32
	nonces  nonceTable
	clients lockoutTable
	now     func() time.Time // time.Now; tests replace it
}

func (ds *digestState) init() {
	ds.key = newNonceKey()
	// The sequence starts anywhere, so nonces do not tell how many
	// challenges the Router answered.
	start := newNonceKey()
	ds.seq.Store(binary.BigEndian.Uint32(start[:4]))
	ds.now = time.Now
	ds.nonces.max = digestNonceEntries
	ds.clients.max = digestClientEntries
}

// newNonceKey draws the key a Router signs its digest nonces with.
func newNonceKey() [32]byte {
	var k [32]byte
	if _, err := rand.Read(k[:]); err != nil {
		panic("router: no randomness for the digest nonce key: " + err.Error())
	}
	return k
}

// nonceID names a nonce: the second it was issued (32 bits, compared
// modulo 2^32), then its sequence number, so that IDs grow in the order
// nonces are issued and no two nonces of a Router share one.
type nonceID uint64

func (id nonceID) issued() uint32 { return uint32(id >> 32) }

// mintNonce returns a nonce for realm: the issue time in seconds and seq,
// 8 hex digits each, then 24 of the HMAC.
func mintNonce(key *[32]byte, realm string, now time.Time, seq uint32) string {
	var buf [nonceLen]byte
	binary.BigEndian.PutUint32(buf[:4], uint32(now.Unix()))
	binary.BigEndian.PutUint32(buf[4:8], seq)
	copy(buf[8:], nonceMAC(key, buf[:8], realm))
	return hex.EncodeToString(buf[:])
}

func nonceMAC(key *[32]byte, id []byte, realm string) []byte {
	m := hmac.New(sha256.New, key[:])
	m.Write(id)
	m.Write([]byte(realm))
	return m.Sum(nil)[:nonceMACLen]
}

// checkNonce reports whether nonce was minted under key for realm, and
// its ID.
func checkNonce(key *[32]byte, nonce, realm string) (id nonceID, valid bool) {
	var buf [nonceLen]byte
	if len(nonce) != 2*len(buf) {
		return 0, false
	}
	if _, err := hex.Decode(buf[:], []byte(nonce)); err != nil {
		return 0, false
	}
	if !hmac.Equal(buf[8:], nonceMAC(key, buf[:8], realm)) {
		return 0, false
	}
	return nonceID(binary.BigEndian.Uint64(buf[:8])), true
}

// challenge is the WWW-Authenticate value the module sends
// (module.c:842-890): algorithm, qop and realm, a fresh nonce, and
// stale="true" when the credentials were right but the nonce too old.
func (ds *digestState) challenge(realm string, stale bool, now time.Time) string {
	s := `Digest algorithm="MD5", qop="auth", realm="` + realm + `", nonce="` + mintNonce(&ds.key, realm, now, ds.seq.Add(1)) + `"`
	if stale {
		s += `, stale="true"`
	}
	return s
}

// digestFields are the parameters of a Digest Authorization header.
type digestFields struct {
	username, realm, nonce, uri, qop, nc, cnonce, response string
}

// parseDigestAuthorization reads an Authorization header as the module
// does (module.c:297-565): the scheme Digest in any case, then
// comma-separated name=value parameters, each value a token or a quoted
// string with backslash escapes; unknown parameters are ignored. ok is
// false when it does not parse or lacks any of username, realm, nonce,
// uri, qop, nc, cnonce and response.
func parseDigestAuthorization(v string) (f digestFields, ok bool) {
	v = strings.TrimLeft(v, " \t")
	scheme, rest, found := strings.Cut(v, " ")
	if !found || !strings.EqualFold(scheme, "Digest") {
		return f, false
	}
	for {
		rest = strings.TrimLeft(rest, " \t,")
		if rest == "" {
			break
		}
		eq := strings.IndexByte(rest, '=')
		if eq <= 0 || !isToken(rest[:eq]) {
			return f, false
		}
		name := rest[:eq]
		rest = rest[eq+1:]
		var value string
		if strings.HasPrefix(rest, `"`) {
			var good bool
			value, rest, good = quotedValue(rest[1:])
			if !good {
				return f, false
			}
		} else {
			end := strings.IndexAny(rest, ", \t")
			if end < 0 {
				end = len(rest)
			}
			value, rest = rest[:end], rest[end:]
			if value == "" || !isToken(value) {
				return f, false
			}
		}
		if rest != "" && rest[0] != ',' && rest[0] != ' ' && rest[0] != '\t' {
			return f, false
		}
		switch strings.ToLower(name) {
		case "username":
			f.username = value
		case "realm":
			f.realm = value
		case "nonce":
			f.nonce = value
		case "uri":
			f.uri = value
		case "qop":
			f.qop = value
		case "nc":
			f.nc = value
		case "cnonce":
			f.cnonce = value
		case "response":
			f.response = value
		}
	}
	ok = f.username != "" && f.realm != "" && f.nonce != "" && f.uri != "" &&
		f.qop != "" && f.nc != "" && f.cnonce != "" && f.response != ""
	return f, ok
}

// quotedValue reads a quoted string's content up to its closing quote,
// undoing backslash escapes; control characters end it unparsed.
func quotedValue(s string) (value, rest string, ok bool) {
	var b []byte
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < 0x20 || c == 0x7f:
			return "", "", false
		case c == '"':
			if b == nil {
				return s[:i], s[i+1:], true
			}
			return string(b), s[i+1:], true
		case c == '\\' && i+1 < len(s):
			if b == nil {
				b = append([]byte(nil), s[:i]...)
			}
			i++
			b = append(b, s[i])
		default:
			if b != nil {
				b = append(b, c)
			}
		}
	}
	return "", "", false
}

func isToken(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`()<>@,;:\"/[]?={}`, c) >= 0 {
			return false
		}
	}
	return s != ""
}

// authenticate checks the request's Digest credentials against d, for
// the client at client, and returns the Authentication-Info value for a
// request that passes. An Authorization that is no Digest credential of
// the form the router issues (a nonce of another length included) is
// answered with a challenge and counts for nothing, as the module declines
// it before reading its user file (module.c:167-175, :555-562); any other
// refusal counts as a failed login of client, and a pass clears them
// (module.c:229-290). Each check is a few MD5 and SHA-256 blocks: no
// slots are needed, unlike a bcrypt password check.
func (ds *digestState) authenticate(req *http.Request, d *match.DigestAuth, client netip.Addr, now time.Time) (info string, stale, ok bool) {
	v := req.Header["Authorization"]
	if len(v) == 0 {
		return "", false, false
	}
	f, parsed := parseDigestAuthorization(v[0])
	if !parsed || len(f.nonce) != 2*nonceLen {
		return "", false, false
	}
	info, stale, ok = ds.verify(req, d, &f, now.Unix())
	ds.clients.record(client, ok, now.Unix())
	return info, stale, ok
}

// verify checks credentials in the module's order (module.c:567-840): the
// user and realm must have an entry; the uri parameter must be the
// request's target, or the target up to its query (module.c:639-658, for
// .NET clients); the response must be the right MD5; only then do the
// nonce count (below digestReplays), the nonce and its use decide between
// a pass, a challenge marked stale, and a plain one (nonceTable.use).
func (ds *digestState) verify(req *http.Request, d *match.DigestAuth, f *digestFields, now int64) (info string, stale, ok bool) {
	ha1, found := d.Users.Lookup(f.username, f.realm)
	if !found {
		return "", false, false
	}
	target := req.RequestURI
	if target != f.uri && !(strings.HasPrefix(target, f.uri) && target[len(f.uri)] == '?') {
		return "", false, false
	}
	want := digestResponse(ha1, *f, req.Method+":"+f.uri)
	if subtle.ConstantTimeCompare([]byte(want), []byte(f.response)) != 1 {
		return "", false, false
	}
	nc, err := strconv.ParseUint(f.nc, 16, 31)
	if err != nil || nc >= digestReplays {
		return "", true, false
	}
	id, valid := checkNonce(&ds.key, f.nonce, d.Realm)
	if !valid {
		return "", false, false
	}
	if ok, stale = ds.nonces.use(id, uint(nc), now); !ok {
		return "", stale, false
	}
	rspauth := digestResponse(ha1, *f, ":"+f.uri)
	return `qop="auth", rspauth="` + rspauth + `", cnonce="` + f.cnonce + `", nc=` + f.nc, false, true
}

// digestResponse is MD5(HA1:nonce:nc:cnonce:qop:MD5(a2)) in lower-case hex.
func digestResponse(ha1 string, f digestFields, a2 string) string {
	ha2 := md5.Sum([]byte(a2))
	sum := md5.Sum([]byte(ha1 + ":" + f.nonce + ":" + f.nc + ":" + f.cnonce + ":" + f.qop + ":" + hex.EncodeToString(ha2[:])))
	return hex.EncodeToString(sum[:])
}
