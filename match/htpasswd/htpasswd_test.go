package htpasswd

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Hashes made with openssl passwd and htpasswd's algorithms; the password
// is in the name.
const (
	bcryptWonderland = "$2a$05$rFgFSsl37ML.zLKSCEIIK.QfwTggQjkz534JplT68frI1VWhWMFme"
	apr1Builder      = "$apr1$Qx9Zb2Lc$c3Ji.1cfduoFw.B8NRNV//"
	apr1Secret       = "$apr1$5x7kA0fP$NOPAUzz6Wp6vawIZyFpcA1"
	apr1Empty        = "$apr1$ab$S8K6Sgp3W8c9Jb6LxgywZ."
	md5Hunter2       = "$1$s4ltS4lt$XvIM72smivDjWGhgQAqIy1"
	md5Secret        = "$1$abcdefgh$cHJi5PXp/ki/ktXzqlk6I1"
	shaSecret        = "{SHA}5en6G6MezRroT3XKqkdPOmY/BfQ="
	// {SSHA}: base64(sha1("secret"+"salt") + "salt").
	sshaSecret = "{SSHA}gVK8WC9YyFT1gMsQHTGCgT3sSv5zYWx0"
)

func TestCredentialVerify(t *testing.T) {
	tests := []struct {
		hash     string
		kind     HashKind
		password string
	}{
		{bcryptWonderland, Bcrypt, "wonderland"},
		{strings.Replace(bcryptWonderland, "$2a$", "$2y$", 1), Bcrypt, "wonderland"},
		{apr1Builder, APR1, "builder"},
		{apr1Secret, APR1, "secret"},
		{apr1Empty, APR1, ""},
		{md5Hunter2, MD5Crypt, "hunter2"},
		{md5Secret, MD5Crypt, "secret"},
		{shaSecret, SHA, "secret"},
		{sshaSecret, SSHA, "secret"},
		{"{PLAIN}open sesame", Plain, "open sesame"},
	}
	for _, tt := range tests {
		t.Run(tt.kind.String()+" "+tt.password, func(t *testing.T) {
			c, why := parseCredential(tt.hash)
			require.Empty(t, why)
			require.Equal(t, tt.kind, c.Kind)
			assert.True(t, c.Verify([]byte(tt.password)), "right password")
			assert.False(t, c.Verify([]byte(tt.password+"x")), "wrong password")
			assert.False(t, c.Verify([]byte(strings.ToUpper(tt.password)+"X")), "wrong case")
		})
	}
}

func TestParseCredentialRejects(t *testing.T) {
	tests := map[string]string{
		"":              "empty",
		"plaintext":     "no supported scheme",
		"ab01FAX.bQRSU": "no supported scheme", // DES crypt
		"$2a$05$short":  "malformed bcrypt",
		"$apr1$toolongsalt$c3Ji.1cfduoFw.B8NRNV//": "malformed apr1",
		"$apr1$Qx9Zb2Lc$short":                     "malformed apr1",
		"$apr1$Qx9Zb2Lc":                           "malformed apr1",
		"$1$s4lt$!!!!!!!!!!!!!!!!!!!!!!":           "malformed md5-crypt",
		"{SHA}notbase64!":                          "malformed {SHA}",
		"{SHA}c2hvcnQ=":                            "malformed {SHA}",
		"{SSHA}c2hvcnQ=":                           "malformed {SSHA}",
		"$6$abc$K4v3HcZ8yAmpRfxML6S46N":            "malformed sha512-crypt",
		"$5$abc$K4v3HcZ8yAmpRfxML6S46N":            "malformed sha256-crypt",
		"$5$rounds=999$roundstoolow$yfvwcWrQ8l/K0DAWyuPMDNHpIVlTQebY9l/gL972bIC":      "malformed sha256-crypt",
		"$5$rounds=01000$roundstoolow$yfvwcWrQ8l/K0DAWyuPMDNHpIVlTQebY9l/gL972bIC":    "malformed sha256-crypt",
		"$5$rounds=10000000$roundstoohi$yfvwcWrQ8l/K0DAWyuPMDNHpIVlTQebY9l/gL972bIC":  "malformed sha256-crypt",
		"$5$salt:with:colons$yfvwcWrQ8l/K0DAWyuPMDNHpIVlTQebY9l/gL972bIC":             "malformed sha256-crypt",
		"$5$saltstringsaltstring$3xv.VbSHBb41AL9AvLeujZkZRBAwqFMz2.opqey6IcA":         "malformed sha256-crypt",
		"$6$saltstring$svn8UoSVapNtMuq1ukKS4tPQd8iKwSMHWjl/O817G3uBnIFNjnQJuesI68u4O": "malformed sha512-crypt",
	}
	for hash, want := range tests {
		c, why := parseCredential(hash)
		assert.Contains(t, why, want, "hash %q", hash)
		assert.Equal(t, HashKind(0), c.Kind)
		if len(hash) > 10 {
			assert.NotContains(t, why, hash, "a problem never quotes the hash")
		}
	}
}

func TestParseHtpasswd(t *testing.T) {
	file := strings.Join([]string{
		"# comment",
		"alice:" + bcryptWonderland,
		"",
		"bob:" + apr1Builder + ":Bob Builder",
		"carol:" + shaSecret + "\r",
		"no colon",
		":{PLAIN}nobody",
		"dave:",
		"bob:{PLAIN}second",
		"eve:{PLAIN}pw",
		"eve:{PLAIN}later",
		"frank:plain",
		"frank:{PLAIN}later",
		"last:{PLAIN}no newline",
	}, "\n")
	p, problems := ParseHtpasswd([]byte(file))
	want := []PasswordProblem{
		{Line: 6, What: "has no ':' between user and password"},
		{Line: 7, What: "has an empty user name"},
		{Line: 8, User: "dave", What: "has an empty password hash"},
		{Line: 12, User: "frank", What: "has a password in no supported scheme (bcrypt, $apr1$, $1$, $5$, $6$, {SHA}, {SSHA}, {PLAIN}); plain text and DES crypt are not accepted"},
	}
	if d := cmp.Diff(want, problems); d != "" {
		t.Errorf("problems (-want +got):\n%s", d)
	}
	assert.Equal(t, 5, p.Len(), "alice, bob, carol, eve, last")
	for user, pw := range map[string]string{"alice": "wonderland", "bob": "builder", "carol": "secret", "eve": "pw", "last": "no newline"} {
		c, ok := p.Lookup([]byte(user))
		require.True(t, ok, user)
		assert.True(t, c.Verify([]byte(pw)), user)
	}
	c, _ := p.Lookup([]byte("bob"))
	assert.False(t, c.Verify([]byte("second")), "the first line of a user wins")
	c, _ = p.Lookup([]byte("eve"))
	assert.False(t, c.Verify([]byte("later")))
	_, ok := p.Lookup([]byte("frank"))
	assert.False(t, ok, "an unusable first line is not replaced by a later one")
	_, ok = p.Lookup([]byte("dave"))
	assert.False(t, ok)
	_, ok = p.Lookup([]byte("Alice"))
	assert.False(t, ok, "user names are case-sensitive")
}

func TestParseAuthMap(t *testing.T) {
	p, problems := ParseAuthMap(map[string][]byte{
		"alice": []byte(bcryptWonderland + "\n"),
		"bob":   []byte("{PLAIN}pw"),
		"a:b":   []byte("{PLAIN}pw"),
		"multi": []byte("{PLAIN}a\nb"),
		"none":  []byte("cleartext"),
	})
	var got []string
	for _, pr := range problems {
		got = append(got, pr.String())
	}
	want := []string{
		`user "a:b" is not a usable user name (empty, or holds ':' or a line break)`,
		`user "multi" has a password hash of several lines`,
		`user "none" has a password in no supported scheme (bcrypt, $apr1$, $1$, $5$, $6$, {SHA}, {SSHA}, {PLAIN}); plain text and DES crypt are not accepted`,
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("problems (-want +got):\n%s", d)
	}
	assert.Equal(t, 2, p.Len())
	c, ok := p.Lookup([]byte("alice"))
	require.True(t, ok)
	assert.True(t, c.Verify([]byte("wonderland")))
}

// The digest input changes with any password and with nothing else.
func TestPasswordsSum(t *testing.T) {
	a, _ := ParseHtpasswd([]byte("x:{PLAIN}1\ny:{PLAIN}2\n"))
	b, _ := ParseHtpasswd([]byte("# reordered\ny:{PLAIN}2\nx:{PLAIN}1\n"))
	c, _ := ParseHtpasswd([]byte("x:{PLAIN}1\ny:{PLAIN}3\n"))
	m, _ := ParseAuthMap(map[string][]byte{"x": []byte("{PLAIN}1"), "y": []byte("{PLAIN}2")})
	assert.Equal(t, a.sum, b.sum)
	assert.Equal(t, a.sum, m.sum)
	assert.NotEqual(t, a.sum, c.sum)
	assert.Equal(t, a.sum[:], a.Digest(), "the digest helper is the sum")
	assert.Nil(t, (*Passwords)(nil).Digest(), "no password file: no sum")
}

// TestSHACrypt: SHA-crypt ("$5$", "$6$", optionally "rounds=N$"), which
// musl's crypt verifies for nginx's auth_basic on ingress-nginx's Alpine
// image. Vectors from the algorithm's specification, checked with
// openssl passwd -5/-6 and glibc's crypt.
func TestSHACrypt(t *testing.T) {
	tests := []struct{ hash, password string }{
		{"$5$saltstring$5B8vYYiY.CVt1RlTTf8KbXBH3hsxY/GNooZaBBGWEc5", "Hello world!"},
		{"$5$rounds=10000$saltstringsaltst$3xv.VbSHBb41AL9AvLeujZkZRBAwqFMz2.opqey6IcA", "Hello world!"},
		{"$6$saltstring$svn8UoSVapNtMuq1ukKS4tPQd8iKwSMHWjl/O817G3uBnIFNjnQJuesI68u4OTLiBFdcbYEdFCoEOfaS35inz1", "Hello world!"},
		{"$6$rounds=10000$saltstringsaltst$OW1/O6BYHV6BcXZu8QVeXbDWra3Oeqh0sbHbbMCVNSnCM/UrjmM0Dp8vOuZeHBy/YTBmSK6H9qs/y3RnOaw5v.", "Hello world!"},
		{"$6$abc$mJP3a6FyA8uCnzRtlnNypPwjnvpi5TP9qOrInzrfDmwxUQG38PkpCPdqfTb8JQfAngapMxeim4AZ..hSdRRzD.", ""},
	}
	for _, tt := range tests {
		c, why := parseCredential(tt.hash)
		require.Empty(t, why, tt.hash)
		assert.True(t, c.Kind.Slow(), "%s: a hash of thousands of rounds is cached and bounded", c.Kind)
		assert.True(t, c.Verify([]byte(tt.password)), "%s: right password", tt.hash)
		assert.False(t, c.Verify([]byte(tt.password+"x")), "%s: wrong password", tt.hash)
	}
	c, why := parseCredential("$6$saltstring$svn8UoSVapNtMuq1ukKS4tPQd8iKwSMHWjl/O817G3uBnIFNjnQJuesI68u4OTLiBFdcbYEdFCoEOfaS35inz1")
	require.Empty(t, why)
	assert.False(t, c.Verify([]byte(strings.Repeat("k", 257))), "musl refuses keys over 256 bytes")
}
