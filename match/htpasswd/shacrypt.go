package htpasswd

import (
	"crypto/sha256"
	"crypto/sha512"
	"hash"
	"strconv"
	"strings"
)

// SHA-crypt ("$5$" SHA-256, "$6$" SHA-512; Drepper's specification), as
// musl's crypt computes it for nginx's auth_basic on ingress-nginx's
// Alpine image: the salt is at most 16 characters, without ':' or a line
// break; "rounds=N$" after the magic sets the rounds, 1000 to 9999999,
// 5000 without it; a key longer than 256 bytes never matches. musl writes
// "rounds=" back clamped and in canonical form, so a stored hash that
// spells the rounds otherwise, or has a longer salt, never matches: such
// an entry is malformed here.
const (
	shaCryptKeyMax        = 256
	shaCryptSaltMax       = 16
	shaCryptRoundsDefault = 5000
	shaCryptRoundsMin     = 1000
	shaCryptRoundsMax     = 9999999
)

// shaCryptParams are the parts of a stored SHA-crypt hash: the rounds
// (0 when the hash does not name them) and the salt.
type shaCryptParams struct {
	rounds int
	salt   string
}

// parseSHACrypt reads a stored hash of kind (SHA256Crypt or SHA512Crypt);
// ok is false for one musl's crypt could never reproduce.
func parseSHACrypt(hash string, kind HashKind) (p shaCryptParams, ok bool) {
	rest := hash[len("$5$"):]
	if r, found := strings.CutPrefix(rest, "rounds="); found {
		num, after, found := strings.Cut(r, "$")
		n, err := strconv.Atoi(num)
		if !found || err != nil || strconv.Itoa(n) != num || n < shaCryptRoundsMin || n > shaCryptRoundsMax {
			return p, false
		}
		p.rounds, rest = n, after
	}
	salt, sum, found := strings.Cut(rest, "$")
	size := 43
	if kind == SHA512Crypt {
		size = 86
	}
	if !found || len(salt) > shaCryptSaltMax || strings.ContainsAny(salt, ":\n") || len(sum) != size || !cryptChars(sum) {
		return p, false
	}
	p.salt = salt
	return p, true
}

// shaCrypt returns the whole stored form of password under p: the magic,
// "rounds=N$" when p names them, the salt, "$" and the digest's encoding.
func shaCrypt(kind HashKind, p shaCryptParams, password []byte) []byte {
	newHash, magic := sha256.New, "$5$"
	if kind == SHA512Crypt {
		newHash, magic = sha512.New, "$6$"
	}
	salt := []byte(p.salt)
	rounds := p.rounds
	if rounds == 0 {
		rounds = shaCryptRoundsDefault
	}
	sum := func(h hash.Hash) []byte { return h.Sum(nil) }
	// repeat is n bytes of sum repeated, as the specification's P and S
	// sequences are built.
	repeat := func(sum []byte, n int) []byte {
		out := make([]byte, 0, n)
		for len(out)+len(sum) <= n {
			out = append(out, sum...)
		}
		return append(out, sum[:n-len(out)]...)
	}

	b := newHash()
	b.Write(password)
	b.Write(salt)
	b.Write(password)
	bSum := sum(b)

	a := newHash()
	a.Write(password)
	a.Write(salt)
	a.Write(repeat(bSum, len(password)))
	for n := len(password); n > 0; n >>= 1 {
		if n&1 != 0 {
			a.Write(bSum)
		} else {
			a.Write(password)
		}
	}
	final := sum(a)

	dp := newHash()
	for range len(password) {
		dp.Write(password)
	}
	pSeq := repeat(sum(dp), len(password))
	ds := newHash()
	for range 16 + int(final[0]) {
		ds.Write(salt)
	}
	sSeq := repeat(sum(ds), len(salt))

	c := newHash()
	for i := range rounds {
		c.Reset()
		if i&1 != 0 {
			c.Write(pSeq)
		} else {
			c.Write(final)
		}
		if i%3 != 0 {
			c.Write(sSeq)
		}
		if i%7 != 0 {
			c.Write(pSeq)
		}
		if i&1 != 0 {
			c.Write(final)
		} else {
			c.Write(pSeq)
		}
		final = c.Sum(final[:0])
	}

	out := make([]byte, 0, 128)
	out = append(out, magic...)
	if p.rounds != 0 {
		out = append(out, "rounds="+strconv.Itoa(p.rounds)+"$"...)
	}
	out = append(out, salt...)
	out = append(out, '$')
	to64 := func(v uint32, n int) {
		for ; n > 0; n-- {
			out = append(out, itoa64[v&0x3f])
			v >>= 6
		}
	}
	f := func(i int) uint32 { return uint32(final[i]) }
	// The specification's byte order: groups of three bytes a third of
	// the digest apart, rotated by one place from group to group (to the
	// right for SHA-256, to the left for SHA-512).
	third := len(final) / 3
	for i := range third {
		x, y, z := i, i+third, i+2*third
		r := i % 3
		if kind == SHA512Crypt {
			r = (3 - r) % 3
		}
		switch r {
		case 1:
			x, y, z = z, x, y
		case 2:
			x, y, z = y, z, x
		}
		to64(f(x)<<16|f(y)<<8|f(z), 4)
	}
	if kind == SHA512Crypt {
		to64(f(63), 2)
	} else {
		to64(f(31)<<8|f(30), 3)
	}
	return out
}
