// Package htpasswd reads the password files of HTTP basic authentication
// (an htpasswd file, or an auth-map Secret of user to hash) and verifies a
// password against the stored hash in the schemes nginx's
// auth_basic_user_file accepts. compile parses the files; the router
// verifies passwords with what it parsed, at serve time.
package htpasswd

import (
	"bytes"
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"iter"
	"maps"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/crypto/bcrypt"
)

// HashKind is how a password is stored in an htpasswd entry: the schemes
// nginx's auth_basic_user_file accepts on ingress-nginx's image.
type HashKind uint8

const (
	// Bcrypt: "$2a$", "$2b$" or "$2y$" (htpasswd -B). Slow by design.
	Bcrypt HashKind = iota + 1
	// APR1: Apache's MD5-based crypt, "$apr1$salt$hash" (htpasswd -m).
	APR1
	// MD5Crypt: the same algorithm with the "$1$" magic (openssl passwd -1).
	MD5Crypt
	// SHA: "{SHA}" and base64 of the password's SHA-1 (htpasswd -s).
	SHA
	// SSHA: "{SSHA}" and base64 of SHA-1(password+salt) then the salt.
	SSHA
	// Plain: "{PLAIN}" and the password itself (RFC 2307; nginx accepts
	// it, nobody should use it).
	Plain
	// SHA256Crypt and SHA512Crypt: SHA-crypt, "$5$" and "$6$" (openssl
	// passwd -5/-6, mkpasswd), which musl's crypt verifies (shacrypt.go).
	// Slow by design.
	SHA256Crypt
	SHA512Crypt
)

func (k HashKind) String() string {
	switch k {
	case Bcrypt:
		return "bcrypt"
	case APR1:
		return "apr1"
	case MD5Crypt:
		return "md5-crypt"
	case SHA:
		return "sha"
	case SSHA:
		return "ssha"
	case Plain:
		return "plain"
	case SHA256Crypt:
		return "sha256-crypt"
	case SHA512Crypt:
		return "sha512-crypt"
	}
	return "HashKind(" + strconv.Itoa(int(k)) + ")"
}

// Slow reports a hash worth caching verified credentials for.
func (k HashKind) Slow() bool {
	return k == Bcrypt || k == APR1 || k == MD5Crypt || k == SHA256Crypt || k == SHA512Crypt
}

// Credential is one user's stored password.
type Credential struct {
	Kind HashKind
	// Hash is the stored value as written, scheme prefix included.
	Hash string
}

// Verify reports whether password matches the stored hash. Comparisons of
// computed hashes take constant time.
func (c Credential) Verify(password []byte) bool {
	switch c.Kind {
	case Bcrypt:
		return bcrypt.CompareHashAndPassword([]byte(c.Hash), password) == nil
	case APR1, MD5Crypt:
		magic := "$1$"
		if c.Kind == APR1 {
			magic = "$apr1$"
		}
		salt, _, _ := strings.Cut(c.Hash[len(magic):], "$")
		got := md5Crypt(password, []byte(salt), magic)
		return subtle.ConstantTimeCompare(got, []byte(c.Hash)) == 1
	case SHA:
		sum := sha1.Sum(password)
		var enc [28]byte
		base64.StdEncoding.Encode(enc[:], sum[:])
		return subtle.ConstantTimeCompare(enc[:], []byte(c.Hash[len("{SHA}"):])) == 1
	case SSHA:
		raw, err := base64.StdEncoding.DecodeString(c.Hash[len("{SSHA}"):])
		if err != nil || len(raw) < sha1.Size {
			return false
		}
		h := sha1.New()
		h.Write(password)
		h.Write(raw[sha1.Size:])
		return subtle.ConstantTimeCompare(h.Sum(nil), raw[:sha1.Size]) == 1
	case Plain:
		return subtle.ConstantTimeCompare(password, []byte(c.Hash[len("{PLAIN}"):])) == 1
	case SHA256Crypt, SHA512Crypt:
		p, ok := parseSHACrypt(c.Hash, c.Kind)
		if !ok || len(password) > shaCryptKeyMax {
			return false
		}
		return subtle.ConstantTimeCompare(shaCrypt(c.Kind, p, password), []byte(c.Hash)) == 1
	}
	return false
}

// parseCredential recognizes a stored hash; the error names the problem
// without quoting the hash.
func parseCredential(hash string) (Credential, string) {
	switch {
	case hash == "":
		return Credential{}, "has an empty password hash"
	case strings.HasPrefix(hash, "$2a$"), strings.HasPrefix(hash, "$2b$"), strings.HasPrefix(hash, "$2y$"):
		if _, err := bcrypt.Cost([]byte(hash)); err != nil {
			return Credential{}, "has a malformed bcrypt hash"
		}
		return Credential{Bcrypt, hash}, ""
	case strings.HasPrefix(hash, "$apr1$"), strings.HasPrefix(hash, "$1$"):
		kind, magic := APR1, "$apr1$"
		if hash[1] == '1' {
			kind, magic = MD5Crypt, "$1$"
		}
		salt, sum, ok := strings.Cut(hash[len(magic):], "$")
		if !ok || len(salt) > 8 || len(sum) != 22 || !cryptChars(salt) || !cryptChars(sum) {
			return Credential{}, "has a malformed " + kind.String() + " hash"
		}
		return Credential{kind, hash}, ""
	case strings.HasPrefix(hash, "{SHA}"):
		raw, err := base64.StdEncoding.DecodeString(hash[len("{SHA}"):])
		if err != nil || len(raw) != sha1.Size {
			return Credential{}, "has a malformed {SHA} hash"
		}
		return Credential{SHA, hash}, ""
	case strings.HasPrefix(hash, "{SSHA}"):
		raw, err := base64.StdEncoding.DecodeString(hash[len("{SSHA}"):])
		if err != nil || len(raw) < sha1.Size {
			return Credential{}, "has a malformed {SSHA} hash"
		}
		return Credential{SSHA, hash}, ""
	case strings.HasPrefix(hash, "{PLAIN}"):
		return Credential{Plain, hash}, ""
	case strings.HasPrefix(hash, "$5$"), strings.HasPrefix(hash, "$6$"):
		kind := SHA256Crypt
		if hash[1] == '6' {
			kind = SHA512Crypt
		}
		if _, ok := parseSHACrypt(hash, kind); !ok {
			return Credential{}, "has a malformed " + kind.String() + " hash (musl's crypt never matches it)"
		}
		return Credential{kind, hash}, ""
	}
	return Credential{}, "has a password in no supported scheme (bcrypt, $apr1$, $1$, $5$, $6$, {SHA}, {SSHA}, {PLAIN}); plain text and DES crypt are not accepted"
}

func cryptChars(s string) bool {
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(itoa64, s[i]) < 0 {
			return false
		}
	}
	return true
}

// Passwords is a parsed password file: user name to credential. Only
// ParseHtpasswd and ParseAuthMap make one; a nil *Passwords has no users.
type Passwords struct {
	users map[string]Credential
	// sum digests every (user, hash) pair in user order, so a changed
	// password changes the table's digest without the digest input
	// holding the hashes.
	sum [sha256.Size]byte
}

// Digest is a SHA-256 over every user and hash, in user order, for the
// table's digest: it changes with any password and holds none. It is nil
// for a nil *Passwords.
func (p *Passwords) Digest() []byte {
	if p == nil {
		return nil
	}
	return p.sum[:]
}

// Len is the number of users who can log in.
func (p *Passwords) Len() int {
	if p == nil {
		return 0
	}
	return len(p.users)
}

// Lookup returns the user's credential. The user name is matched byte for
// byte, as nginx does.
func (p *Passwords) Lookup(user []byte) (Credential, bool) {
	if p == nil {
		return Credential{}, false
	}
	c, ok := p.users[string(user)]
	return c, ok
}

// PasswordProblem is an entry that cannot be used; the user it names (if
// any) cannot log in. It never holds a hash.
type PasswordProblem struct {
	// Line is the 1-based line of an htpasswd file; 0 for an auth-map key.
	Line int
	User string
	What string
}

func (p PasswordProblem) String() string {
	s := ""
	if p.Line > 0 {
		s = "line " + strconv.Itoa(p.Line) + ": "
	}
	if p.User != "" {
		s += "user " + strconv.Quote(p.User) + " "
	}
	return s + p.What
}

// entries yields the lines of a password file with their numbers, from 1:
// "\n" or "\r\n" ends a line, and empty lines and lines starting with '#'
// are skipped, as nginx's auth modules skip them.
func entries(data []byte) iter.Seq2[int, []byte] {
	return func(yield func(int, []byte) bool) {
		for n := 1; len(data) > 0; n++ {
			line := data
			if i := bytes.IndexByte(data, '\n'); i >= 0 {
				line, data = data[:i], data[i+1:]
			} else {
				data = nil
			}
			line = bytes.TrimSuffix(line, []byte{'\r'})
			if len(line) == 0 || line[0] == '#' {
				continue
			}
			if !yield(n, line) {
				return
			}
		}
	}
}

// ParseHtpasswd reads an htpasswd file as nginx's auth_basic_user_file
// does: one "user:hash" a line, the hash ending at the next ':' or the end
// of the line (so "user:hash:comment" works), lines starting with '#'
// and empty lines ignored. The first line of a user wins, as nginx stops
// at the first matching name. Entries whose hash is in no scheme ramjet
// verifies are reported and left out: that user cannot log in.
func ParseHtpasswd(data []byte) (*Passwords, []PasswordProblem) {
	p := &Passwords{users: make(map[string]Credential)}
	var problems []PasswordProblem
	for n, line := range entries(data) {
		user, rest, ok := bytes.Cut(line, []byte{':'})
		if !ok {
			problems = append(problems, PasswordProblem{Line: n, What: "has no ':' between user and password"})
			continue
		}
		if len(user) == 0 {
			problems = append(problems, PasswordProblem{Line: n, What: "has an empty user name"})
			continue
		}
		hash, _, _ := bytes.Cut(rest, []byte{':'})
		p.add(n, string(user), string(hash), &problems)
	}
	p.digest()
	return p, problems
}

// ParseAuthMap reads an auth-map Secret: each key a user, each value that
// user's hash. Keys are visited in sorted order, so problems are reported
// deterministically.
func ParseAuthMap(data map[string][]byte) (*Passwords, []PasswordProblem) {
	p := &Passwords{users: make(map[string]Credential, len(data))}
	var problems []PasswordProblem
	for _, user := range slices.Sorted(maps.Keys(data)) {
		if user == "" || strings.ContainsAny(user, ":\r\n") {
			problems = append(problems, PasswordProblem{User: user, What: "is not a usable user name (empty, or holds ':' or a line break)"})
			continue
		}
		hash := strings.TrimRight(string(data[user]), "\r\n")
		if strings.ContainsAny(hash, "\r\n") {
			problems = append(problems, PasswordProblem{User: user, What: "has a password hash of several lines"})
			continue
		}
		p.add(0, user, hash, &problems)
	}
	p.digest()
	return p, problems
}

func (p *Passwords) add(line int, user, hash string, problems *[]PasswordProblem) {
	if _, dup := p.users[user]; dup {
		return
	}
	c, why := parseCredential(hash)
	if why != "" {
		*problems = append(*problems, PasswordProblem{Line: line, User: user, What: why})
		// A later line for the same user must not take its place: nginx
		// stops at the first line naming the user.
		p.users[user] = Credential{}
		return
	}
	p.users[user] = c
}

// digest drops the placeholders of unusable entries and digests the rest.
func (p *Passwords) digest() {
	users := make([]string, 0, len(p.users))
	for u, c := range p.users {
		if c.Kind == 0 {
			delete(p.users, u)
			continue
		}
		users = append(users, u)
	}
	slices.Sort(users)
	h := sha256.New()
	var n [8]byte
	for _, u := range users {
		for _, s := range [2]string{u, p.users[u].Hash} {
			n = [8]byte{byte(len(s) >> 24), byte(len(s) >> 16), byte(len(s) >> 8), byte(len(s))}
			h.Write(n[:4])
			h.Write([]byte(s))
		}
	}
	copy(p.sum[:], h.Sum(nil))
}

const itoa64 = "./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// md5Crypt is the MD5-based crypt of FreeBSD ("$1$") and Apache ("$apr1$"),
// which differ only in the magic string. It returns the whole stored form,
// magic + salt + "$" + 22 characters.
func md5Crypt(password, salt []byte, magic string) []byte {
	if len(salt) > 8 {
		salt = salt[:8]
	}
	alt := md5.New()
	alt.Write(password)
	alt.Write(salt)
	alt.Write(password)
	altSum := alt.Sum(nil)

	d := md5.New()
	d.Write(password)
	d.Write([]byte(magic))
	d.Write(salt)
	for i := len(password); i > 0; i -= 16 {
		d.Write(altSum[:min(i, 16)])
	}
	for i := len(password); i > 0; i >>= 1 {
		if i&1 != 0 {
			d.Write([]byte{0})
		} else {
			d.Write(password[:1])
		}
	}
	final := d.Sum(nil)

	for i := range 1000 {
		r := md5.New()
		if i&1 != 0 {
			r.Write(password)
		} else {
			r.Write(final)
		}
		if i%3 != 0 {
			r.Write(salt)
		}
		if i%7 != 0 {
			r.Write(password)
		}
		if i&1 != 0 {
			r.Write(final)
		} else {
			r.Write(password)
		}
		final = r.Sum(final[:0])
	}

	out := make([]byte, 0, len(magic)+len(salt)+1+22)
	out = append(out, magic...)
	out = append(out, salt...)
	out = append(out, '$')
	to64 := func(v uint32, n int) {
		for ; n > 0; n-- {
			out = append(out, itoa64[v&0x3f])
			v >>= 6
		}
	}
	f := func(i int) uint32 { return uint32(final[i]) }
	to64(f(0)<<16|f(6)<<8|f(12), 4)
	to64(f(1)<<16|f(7)<<8|f(13), 4)
	to64(f(2)<<16|f(8)<<8|f(14), 4)
	to64(f(3)<<16|f(9)<<8|f(15), 4)
	to64(f(4)<<16|f(10)<<8|f(5), 4)
	to64(f(11), 2)
	return out
}
