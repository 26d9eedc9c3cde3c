package htpasswd

import (
	"bytes"
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
