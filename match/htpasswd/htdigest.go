package htpasswd

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"maps"
	"slices"
	"strings"
)

// Digests is a parsed htdigest file, the password file of HTTP digest
// authentication (auth-type digest): each line "user:realm:HA1", HA1 being
// the lower-case hex MD5 of "user:realm:password". Only ParseHtdigest and
// ParseHtdigestMap make one; a nil *Digests has no users.
type Digests struct {
	ha1 map[userRealm]string
	sum [sha256.Size]byte
}

type userRealm struct{ user, realm string }

// Len is the number of (user, realm) entries that can log in.
func (d *Digests) Len() int {
	if d == nil {
		return 0
	}
	return len(d.ha1)
}

// Digest is a SHA-256 over every entry, in order, for the table's digest:
// it changes with any password and holds none. nil for a nil *Digests.
func (d *Digests) Digest() []byte {
	if d == nil {
		return nil
	}
	return d.sum[:]
}

// Lookup returns the HA1 of user in realm, both matched byte for byte as
// nginx's digest module matches the file's lines.
func (d *Digests) Lookup(user, realm string) (string, bool) {
	if d == nil {
		return "", false
	}
	ha1, ok := d.ha1[userRealm{user, realm}]
	return ha1, ok
}

// ParseHtdigest reads an htdigest file as ingress-nginx's digest module
// (atomx/nginx-http-auth-digest v1.0.0, ngx_http_auth_digest_module.c:
// 204-276 and 567-626) reads it: one entry a line ("\r\n" ends one too); a line is
// user ':' realm ':' HA1 with exactly 32 characters of HA1 to its end, and
// a '#' in the user or realm (a comment line included) makes it match no
// one. The module compares the response against HA1 as written, so an
// HA1 that is not 32 lower-case hex digits lets no one in: such lines are
// reported. The first line of a (user, realm) wins.
func ParseHtdigest(data []byte) (*Digests, []PasswordProblem) {
	d := &Digests{ha1: make(map[userRealm]string)}
	var problems []PasswordProblem
	for n, line := range entries(data) {
		user, rest, ok1 := bytes.Cut(line, []byte{':'})
		realm, ha1, ok2 := bytes.Cut(rest, []byte{':'})
		switch {
		case !ok1 || !ok2:
			problems = append(problems, PasswordProblem{Line: n, What: "is not user:realm:HA1"})
		case len(user) == 0 || bytes.IndexByte(user, '#') >= 0:
			problems = append(problems, PasswordProblem{Line: n, What: "has an empty user name or one with '#'"})
		case len(realm) == 0 || bytes.IndexByte(realm, '#') >= 0:
			problems = append(problems, PasswordProblem{Line: n, User: string(user), What: "has an empty realm or one with '#'"})
		case !lowerHex32(ha1):
			problems = append(problems, PasswordProblem{Line: n, User: string(user), What: "has an HA1 that is not 32 lower-case hex digits"})
		default:
			k := userRealm{string(user), string(realm)}
			if _, dup := d.ha1[k]; !dup {
				d.ha1[k] = string(ha1)
			}
		}
	}
	d.digest()
	return d, problems
}

// ParseHtdigestMap reads an auth-map Secret for digest authentication:
// each key a user, its value "realm:HA1", as ingress-nginx writes such a
// Secret out as "key:value" lines (internal/ingress/annotations/auth/
// main.go:265-272). Keys are read in sorted order; a key that cannot be a
// user name is reported.
func ParseHtdigestMap(data map[string][]byte) (*Digests, []PasswordProblem) {
	var file bytes.Buffer
	var problems []PasswordProblem
	for _, user := range slices.Sorted(maps.Keys(data)) {
		v := strings.TrimRight(string(data[user]), "\r\n")
		if user == "" || strings.ContainsAny(user, ":\r\n") || strings.ContainsAny(v, "\r\n") {
			problems = append(problems, PasswordProblem{User: user, What: "is not a usable user name, or its value is not one realm:HA1 line"})
			continue
		}
		file.WriteString(user + ":" + v + "\n")
	}
	d, more := ParseHtdigest(file.Bytes())
	for _, p := range more {
		p.Line = 0
		problems = append(problems, p)
	}
	return d, problems
}

func lowerHex32(b []byte) bool {
	if len(b) != 32 {
		return false
	}
	for _, c := range b {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

func (d *Digests) digest() {
	keys := slices.SortedFunc(maps.Keys(d.ha1), func(a, b userRealm) int {
		return cmp.Or(strings.Compare(a.user, b.user), strings.Compare(a.realm, b.realm))
	})
	h := sha256.New()
	for _, k := range keys {
		for _, s := range [3]string{k.user, k.realm, d.ha1[k]} {
			n := len(s)
			h.Write([]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)})
			h.Write([]byte(s))
		}
	}
	copy(d.sum[:], h.Sum(nil))
}
