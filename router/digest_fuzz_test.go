package router

import (
	"strings"
	"testing"
)

// FuzzParseDigestAuthorization: any Authorization value parses without
// panicking, and one that parses has every required parameter.
func FuzzParseDigestAuthorization(f *testing.F) {
	f.Add(`Digest username="Mufasa", realm="testrealm@host.com", nonce="dcd98b7102dd2f0e8b11d0f600bfb0c093", uri="/dir/index.html", qop=auth, nc=00000001, cnonce="0a4f113b", response="6629fae49393a05397450978507c4ef1"`)
	f.Add(`digest username="a\"b\\", realm=r,nonce=n,uri="/",qop=auth,nc=1,cnonce=c,response=x,`)
	f.Add(`Digest username="\`)
	f.Fuzz(func(t *testing.T, v string) {
		f, ok := parseDigestAuthorization(v)
		if !ok {
			return
		}
		for _, p := range []string{f.username, f.realm, f.nonce, f.uri, f.qop, f.nc, f.cnonce, f.response} {
			if p == "" {
				t.Fatalf("parsed %q with an empty parameter: %+v", v, f)
			}
		}
		if !strings.HasPrefix(strings.ToLower(strings.TrimLeft(v, " \t")), "digest ") {
			t.Fatalf("parsed %q without the Digest scheme", v)
		}
	})
}
