package match

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzParseHtpasswd: any file parses without panicking; every user it
// keeps has a usable credential and came from a line of the file; no
// problem quotes a hash.
func FuzzParseHtpasswd(f *testing.F) {
	f.Add([]byte("alice:" + bcryptWonderland + "\nbob:" + apr1Builder + ":c\n# x\ncarol:" + shaSecret + "\r\n"))
	f.Add([]byte("dave:" + md5Hunter2 + "\neve:{PLAIN}pw\nfrank:" + sshaSecret + "\n:x\nnocolon\n"))
	f.Add([]byte("a:$apr1$$\nb:$1$\nc:{SHA}\nd:$2y$\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, problems := ParseHtpasswd(data)
		for user, c := range p.users {
			if c.Kind == 0 || user == "" || strings.ContainsAny(user, ":\n") {
				t.Fatalf("kept user %q with kind %v", user, c.Kind)
			}
			if !bytes.Contains(data, []byte(user+":"+c.Hash)) {
				t.Fatalf("user %q: entry not in the file", user)
			}
			if c.Kind != Bcrypt {
				c.Verify([]byte("password")) // must not panic
			}
		}
		for _, pr := range problems {
			if pr.Line < 1 {
				t.Fatalf("problem without a line: %+v", pr)
			}
		}
	})
}

// FuzzCORSOrigin compares Allows with the regular expression ingress-nginx
// builds for the same list (anchored at both ends, see SPEC §19's note in
// doc.go). PCRE there runs without UTF mode, so (?i) folds ASCII letters
// only; Go's (?i) folds Unicode, so the oracle folds ASCII itself and
// matches case-sensitively, on valid UTF-8 (where Go's regexp compares
// runes, which is comparing bytes).
func FuzzCORSOrigin(f *testing.F) {
	f.Add("https://*.example.org:8443", "https://a.example.org:8443")
	f.Add("https://app.example.com", "HTTPS://APP.EXAMPLE.COM")
	f.Add("null", "null")
	f.Add("http://*.a", "http://x.y.a")
	f.Add("http://localhost", "http://localhoſt")
	f.Add("https://*.kube.test", "https://a.\u212Aube.test")
	f.Fuzz(func(t *testing.T, pattern, origin string) {
		c := NewCORS(CORS{Origins: []string{pattern}})
		got := c.Allows(origin)
		if !utf8.ValidString(pattern) || !utf8.ValidString(origin) || origin == "" {
			return
		}
		quoted := strings.Replace(regexp.QuoteMeta(lowerASCII(pattern)), `\*`, `[a-z0-9\-]+`, 1)
		re := regexp.MustCompile(`^(` + quoted + `)$`)
		if want := re.MatchString(lowerASCII(origin)); got != want {
			t.Fatalf("pattern %q origin %q: Allows %v, regexp %v", pattern, origin, got, want)
		}
	})
}
