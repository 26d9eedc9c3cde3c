package match

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
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
// doc.go), on ASCII input, where PCRE's case folding and Go's agree.
func FuzzCORSOrigin(f *testing.F) {
	f.Add("https://*.example.org:8443", "https://a.example.org:8443")
	f.Add("https://app.example.com", "HTTPS://APP.EXAMPLE.COM")
	f.Add("null", "null")
	f.Add("http://*.a", "http://x.y.a")
	f.Fuzz(func(t *testing.T, pattern, origin string) {
		c := NewCORS(CORS{Origins: []string{pattern}})
		got := c.Allows(origin)
		if !ascii(pattern) || !ascii(origin) || origin == "" {
			return
		}
		quoted := strings.Replace(regexp.QuoteMeta(strings.ToLower(pattern)), `\*`, `[A-Za-z0-9\-]+`, 1)
		re := regexp.MustCompile(`(?i)^(` + quoted + `)$`)
		if want := re.MatchString(origin); got != want {
			t.Fatalf("pattern %q origin %q: Allows %v, regexp %v", pattern, origin, got, want)
		}
	})
}

func ascii(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
