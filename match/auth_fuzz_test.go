package match

import (
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

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
