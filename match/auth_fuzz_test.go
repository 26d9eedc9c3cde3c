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

// gatewayOriginRE is the Gateway API's CORSOrigin pattern, less "*" alone
// (AnyOrigin's) and a host "*" (any host).
var gatewayOriginRE = regexp.MustCompile(`^(https?)://((\*\.)?([a-zA-Z0-9\-]+\.)*[a-zA-Z0-9-]+)(:([0-9]{1,5}))?$`)

// FuzzGatewayCORSOrigin compares the Gateway form's Allows with a regular
// expression written from the API's text for an allowed origin the API
// accepts: the scheme and host without regard to ASCII case, a leading
// "*" any number of labels, and a port the scheme's default when not
// written, on either side.
func FuzzGatewayCORSOrigin(f *testing.F) {
	f.Add("https://*.bar.com", "https://xpto.www.bar.com")
	f.Add("https://www.foo.com", "https://www.foo.com:443")
	f.Add("http://a.test:8080", "http://A.TEST:8080")
	f.Add("https://*.bar.com", "https://bar.com")
	f.Add("https://*.bar.com", "https://a..bar.com")
	f.Add("http://x.test:80", "http://x.test")
	f.Fuzz(func(t *testing.T, pattern, origin string) {
		c := NewCORS(CORS{Gateway: true, Origins: []string{pattern}})
		got := c.Allows(origin)
		m := gatewayOriginRE.FindStringSubmatch(pattern)
		if m == nil || !utf8.ValidString(origin) || strings.Contains(origin, "[") {
			return
		}
		scheme, host, port := lowerASCII(m[1]), lowerASCII(m[2]), m[6]
		def := map[string]string{"http": "80", "https": "443"}[scheme]
		hostRE := regexp.QuoteMeta(host)
		if strings.HasPrefix(host, "*.") {
			hostRE = `[a-z0-9\-]+(\.[a-z0-9\-]+)*` + regexp.QuoteMeta(host[1:])
		}
		portRE := ":" + regexp.QuoteMeta(port)
		if port == "" || port == def {
			portRE = "(:" + def + ")?"
		}
		re := regexp.MustCompile(`^` + scheme + `://` + hostRE + portRE + `$`)
		if want := re.MatchString(lowerASCII(origin)); got != want {
			t.Fatalf("pattern %q origin %q: Allows %v, regexp %v", pattern, origin, got, want)
		}
	})
}
