package compile

import (
	"testing"

	"ramjet.dev/ramjet/match"
)

// FuzzRedirectAnnotations: whatever the redirect and host annotations say,
// under either prefix, compiling never panics, and every redirect URL and
// app-root that reaches the table can go into a Location header as it is
// (no space, control or non-ASCII byte) and every alias is a valid host.
func FuzzRedirectAnnotations(f *testing.F) {
	f.Add("permanent-redirect", "https://a.example.com/x?y=1", "app-root", "/foo", "server-alias", "a.example.com,*.b.example.com", true)
	f.Add("temporal-redirect", "/x\r\nSet-Cookie: a", "temporal-redirect-code", "307", "from-to-www-redirect", "true", false)
	f.Add("permanent-redirect-code", "3o1", "default-backend", "Echo_svc", "service-upstream", "yes", true)
	f.Add("app-root", "//evil.example.com", "relative-redirects", "1", "server-alias", "~^www\\d+$, 10.0.0.1", false)
	keys := []string{"app-root", "permanent-redirect", "permanent-redirect-code", "temporal-redirect", "temporal-redirect-code",
		"relative-redirects", "from-to-www-redirect", "server-alias", "service-upstream", "default-backend"}
	known := func(k string) string {
		for _, key := range keys {
			if key == k {
				return k
			}
		}
		return keys[len(k)%len(keys)]
	}
	f.Fuzz(func(t *testing.T, k1, v1, k2, v2, k3, v3 string, native bool) {
		prefix := NginxPrefix
		if native {
			prefix = NativePrefix
		}
		s := redirectSnapshot(prefix+known(k1), v1, NginxPrefix+known(k2), v2, prefix+known(k3), v3)
		tab := Compile(s, Options{}).Table
		for vh := range tab.VirtualHosts() {
			for _, r := range vh.Routes {
				checkRedirect(t, r.Redirect)
			}
			if a := vh.Actions; a != nil {
				checkRedirect(t, a.Fallback)
				if a.AppRoot != "" && unsafeHeaderValue(a.AppRoot) != "" {
					t.Fatalf("app-root %q cannot go into a header", a.AppRoot)
				}
				for _, alias := range a.Aliases {
					if why := invalidHost(alias); why != "" || alias == "" {
						t.Fatalf("alias %q: %s", alias, why)
					}
				}
			}
		}
	})
}

func checkRedirect(t *testing.T, r *match.Redirect) {
	t.Helper()
	if r == nil {
		return
	}
	if why := unsafeHeaderValue(r.URL); why != "" {
		t.Fatalf("redirect URL %q %s", r.URL, why)
	}
	if r.Code < 300 || r.Code > 308 {
		t.Fatalf("redirect code %d", r.Code)
	}
}
