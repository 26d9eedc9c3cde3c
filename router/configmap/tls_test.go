package configmap

import (
	"crypto/tls"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ingress-nginx's defaults (internal/ingress/controller/config/config.go,
// v1.15.1: sslProtocols, sslCiphers, sslSessionCacheSize,
// sslSessionTimeout, SSLSessionTickets false, SSLECDHCurve "auto").
func TestDefaultTLS(t *testing.T) {
	d := DefaultTLS()
	assert.Equal(t, uint16(tls.VersionTLS12), d.MinVersion)
	assert.Equal(t, uint16(tls.VersionTLS13), d.MaxVersion)
	assert.Equal(t, []uint16{
		tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
		tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384, tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
		tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256, tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
	}, d.CipherSuites)
	assert.Nil(t, d.Curves)
	assert.True(t, d.SessionCache)
	assert.False(t, d.SessionTickets)
	assert.Equal(t, 10*time.Minute, d.SessionTimeout)
	assert.Equal(t, 40000, d.SessionCacheEntries())
	s, warns := Parse("ns", "cm", nil)
	assert.Empty(t, warns)
	assert.Equal(t, d, s.TLS)
}

func TestParseCiphers(t *testing.T) {
	names := func(ids []uint16) string {
		var out []string
		for _, id := range ids {
			out = append(out, CipherName(id))
		}
		return strings.Join(out, ":")
	}
	for _, tc := range []struct{ in, want, note, err string }{
		{in: DefaultCiphers, want: "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305",
			note: "DHE-RSA-AES256-GCM-SHA384:DHE-RSA-AES128-GCM-SHA256 left out: Go's TLS has no such cipher suite"},
		{in: "ECDHE+AESGCM", want: "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256"},
		{in: "EECDH+AESGCM:EDH+AESGCM", want: "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256",
			note: "EDH+AESGCM left out"},
		{in: "HIGH:!aNULL:!MD5:!kRSA:!SHA1:!SHA256", want: "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305:ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256"},
		// '-' removes, and a later item adds back; '!' never.
		{in: "ECDHE+AESGCM:-AES128:AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256", want: "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256"},
		{in: "ECDHE+AESGCM:!AES128:ECDHE-RSA-AES128-GCM-SHA256", want: "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384"},
		// '+' moves to the end; @STRENGTH sorts by key bits.
		{in: "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:+AES128", want: "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-ECDSA-AES128-GCM-SHA256"},
		{in: "ECDHE-ECDSA-AES128-SHA ECDHE-ECDSA-AES256-SHA,@STRENGTH", want: "ECDHE-ECDSA-AES256-SHA:ECDHE-ECDSA-AES128-SHA"},
		{in: "ECDHE-RSA-AES128-GCM-SHA256:@SECLEVEL=2", want: "ECDHE-RSA-AES128-GCM-SHA256", note: "@SECLEVEL=2 has no effect"},
		{in: "ECDHE-RSA-AES128-GCM-SHA256:NOPE-CIPHER", want: "ECDHE-RSA-AES128-GCM-SHA256", note: "NOPE-CIPHER ignored"},
		// Suites of OpenSSL's table Go lacks, whatever their name's shape.
		{in: "ECDHE-RSA-AES128-GCM-SHA256:AES256-SHA256:SRP-AES-128-CBC-SHA", want: "ECDHE-RSA-AES128-GCM-SHA256",
			note: "AES256-SHA256:SRP-AES-128-CBC-SHA left out: Go's TLS has no such cipher suite"},
		// ingress-nginx's OpenSSL is built without weak suites (RC4,
		// 3DES), IDEA, SEED and GOST: it ignores their names as unknown,
		// and its aliases of them select nothing; Go's RC4 and 3DES suites
		// are not served either.
		{in: "ECDHE-RSA-AES128-GCM-SHA256:RC4-SHA:DES-CBC3-SHA:ECDHE-ECDSA-DES-CBC3-SHA:GOST2012-MAGMA-MAGMAOMAC:IDEA-CBC-SHA", want: "ECDHE-RSA-AES128-GCM-SHA256",
			note: "RC4-SHA:DES-CBC3-SHA:ECDHE-ECDSA-DES-CBC3-SHA:GOST2012-MAGMA-MAGMAOMAC:IDEA-CBC-SHA ignored: ingress-nginx's OpenSSL has no such suite"},
		{in: "ECDHE-RSA-AES128-GCM-SHA256:MEDIUM:LOW:EXP:RC4:3DES:RC4+RSA:SEED:IDEA", want: "ECDHE-RSA-AES128-GCM-SHA256"},
		{in: "DES-CBC3-SHA:ECDHE-RSA-DES-CBC3-SHA:RC4-SHA:ECDHE-RSA-RC4-SHA:ECDHE-ECDSA-RC4-SHA", err: "no cipher suite"},
		{in: "MEDIUM", err: "no cipher suite"},
		// Names OpenSSL 3 no longer has are unknown to it.
		{in: "ECDHE-RSA-AES128-GCM-SHA256:EXP-RC2-CBC-MD5:DES-CBC-SHA", want: "ECDHE-RSA-AES128-GCM-SHA256", note: "EXP-RC2-CBC-MD5:DES-CBC-SHA ignored: not a cipher or alias OpenSSL knows"},
		// TLSv1.3 suites are not ssl_ciphers' to set.
		{in: "ECDHE-RSA-AES128-GCM-SHA256:TLS_AES_256_GCM_SHA384", want: "ECDHE-RSA-AES128-GCM-SHA256", note: "TLS_AES_256_GCM_SHA384 ignored: a TLSv1.3 suite"},
		// An '@' command ends the item before it, as OpenSSL's rule parser
		// reads "RC4+RSA@STRENGTH" (ingress-nginx's e2e sslciphers test).
		{in: "ECDHE+AESGCM@STRENGTH", want: "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256"},
		{in: "ECDHE-RSA-AES128-GCM-SHA256:+HIGH@SECLEVEL=1", want: "ECDHE-RSA-AES128-GCM-SHA256", note: "@SECLEVEL=1 has no effect"},
		// Level 0 asks for what Go does: no key size or signature limits.
		{in: "ECDHE-RSA-AES128-GCM-SHA256:+HIGH@SECLEVEL=0", want: "ECDHE-RSA-AES128-GCM-SHA256"},
		{in: "ECDHE-ECDSA-AES128-SHA:ECDHE-ECDSA-AES256-SHA!AES128", want: "ECDHE-ECDSA-AES256-SHA"},
		// '+' only moves suites already in: one Go lacks or OpenSSL does
		// not know changes nothing, as '!' and '-' of one.
		{in: "ECDHE-RSA-AES128-GCM-SHA256:+CAMELLIA:+NOPE:!NOPE", want: "ECDHE-RSA-AES128-GCM-SHA256"},
		// What OpenSSL refuses (invalid command), so nginx refuses it.
		{in: "ECDHE-RSA-AES128-GCM-SHA256:@STRENGTHS", err: "not an OpenSSL command"},
		{in: "ECDHE-RSA-AES128-GCM-SHA256:@SECLEVEL=6", err: "not an OpenSSL command"},
		{in: "ECDHE-RSA-AES128-GCM-SHA256:!", err: "no cipher or alias"},
		{in: "HIGH+:ECDHE-RSA-AES128-GCM-SHA256", err: "no cipher or alias"},
		{in: "ECDHE-RSA-AES128-GCM-SHA256:HIGH#", err: "no cipher or alias"},
		{in: "DHE-RSA-AES128-GCM-SHA256", err: "no cipher suite"},
		{in: "ALL:!ALL", err: "no cipher suite"},
		{in: "", err: "want an OpenSSL cipher list"},
	} {
		got, notes, err := ParseCiphers(tc.in)
		if tc.err != "" {
			require.Error(t, err, tc.in)
			assert.Contains(t, err.Error(), tc.err)
			continue
		}
		require.NoError(t, err, tc.in)
		assert.Equal(t, tc.want, names(got), tc.in)
		if tc.note != "" {
			assert.Contains(t, strings.Join(notes, "\n"), tc.note, tc.in)
		} else {
			assert.Empty(t, notes, tc.in)
		}
	}
}

// ingress-nginx's e2e test of the ssl-ciphers annotation
// (test/e2e/annotations/sslciphers.go, "should keep ssl ciphers"): nginx
// takes it, so it warns of nothing but the security level Go lacks.
func TestParseCiphersIngressNginxE2E(t *testing.T) {
	suites, notes, err := ParseCiphers("ALL:!aNULL:!EXPORT56:RC4+RSA@STRENGTH:+HIGH@SECLEVEL=0:+MEDIUM:+LOW:+SSLv2:+EXP")
	require.NoError(t, err)
	assert.Contains(t, suites, tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256)
	assert.Empty(t, notes)
	for _, weak := range []uint16{tls.TLS_RSA_WITH_RC4_128_SHA, tls.TLS_ECDHE_RSA_WITH_RC4_128_SHA, tls.TLS_ECDHE_ECDSA_WITH_RC4_128_SHA,
		tls.TLS_RSA_WITH_3DES_EDE_CBC_SHA, tls.TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA} {
		assert.NotContains(t, suites, weak, tls.CipherSuiteName(weak))
	}
}

func TestParseProtocolsAndCurves(t *testing.T) {
	lo, hi, notes, err := ParseProtocols("TLSv1 TLSv1.2", true)
	require.NoError(t, err)
	assert.Equal(t, [2]uint16{tls.VersionTLS10, tls.VersionTLS12}, [2]uint16{lo, hi})
	assert.Equal(t, []string{"Go serves a range of versions: TLSv1.1 is served too, from TLSv1 to TLSv1.2"}, notes)
	_, _, _, err = ParseProtocols("SSLv3", true)
	assert.Error(t, err)
	_, _, _, err = ParseProtocols("TLSv1.4", true)
	assert.Error(t, err)
	curves, notes, err := ParseCurves("X25519:X448:prime256v1")
	require.NoError(t, err)
	assert.Equal(t, []tls.CurveID{tls.X25519, tls.CurveP256}, curves)
	assert.Equal(t, []string{"X448 left out: Go's TLS has no such group"}, notes)
	_, _, err = ParseCurves("X448")
	assert.Error(t, err)
}

// ingress-nginx's OpenSSL 3 refuses TLS 1.0 and 1.1 at any security level
// above 0 (ssl_security_default_callback, SSL_SECOP_VERSION), whatever
// ssl-protocols lists: ssl-ciphers must say @SECLEVEL=0 for them.
func TestSSLProtocolsLegacyNeedSecurityLevel0(t *testing.T) {
	s, warns := Parse("ingress-nginx", "cm", map[string]string{"ssl-protocols": "TLSv1 TLSv1.1 TLSv1.2 TLSv1.3"})
	assert.Equal(t, [2]uint16{tls.VersionTLS12, tls.VersionTLS13}, [2]uint16{s.TLS.MinVersion, s.TLS.MaxVersion})
	require.Len(t, warns, 1)
	assert.Equal(t, "ssl-protocols", warns[0].Key)
	assert.Equal(t, Unsupported, warns[0].Reason)
	assert.Contains(t, warns[0].Message, "@SECLEVEL=0")

	s, warns = Parse("ingress-nginx", "cm", map[string]string{"ssl-protocols": "TLSv1 TLSv1.1 TLSv1.2 TLSv1.3",
		"ssl-ciphers": "ECDHE-RSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-SHA:@SECLEVEL=0"})
	assert.Equal(t, [2]uint16{tls.VersionTLS10, tls.VersionTLS13}, [2]uint16{s.TLS.MinVersion, s.TLS.MaxVersion})
	assert.Empty(t, warns)

	// The last level set counts, as OpenSSL applies each in turn.
	s, _ = Parse("ingress-nginx", "cm", map[string]string{"ssl-protocols": "TLSv1.1 TLSv1.2",
		"ssl-ciphers": "HIGH@SECLEVEL=0:@SECLEVEL=2"})
	assert.Equal(t, uint16(tls.VersionTLS12), s.TLS.MinVersion)

	// Nothing left: nginx would serve no handshake; the default stays.
	s, warns = Parse("ingress-nginx", "cm", map[string]string{"ssl-protocols": "TLSv1 TLSv1.1"})
	assert.Equal(t, DefaultTLS(), s.TLS)
	require.Len(t, warns, 1)
	assert.Equal(t, Rejected, warns[0].Reason)
}

// The keys' warnings: what Go cannot do is named, the value still applies.
func TestParseTLSKeys(t *testing.T) {
	s, warns := Parse("ingress-nginx", "cm", map[string]string{
		"ssl-protocols": "TLSv1.3", "ssl-early-data": "true", "ssl-session-timeout": "1h",
		"ssl-session-cache-size": "1m", "ssl-session-tickets": "true", "ssl-ciphers": "nonsense-only",
		"enable-ocsp": "true",
	})
	assert.Equal(t, uint16(tls.VersionTLS13), s.TLS.MinVersion)
	assert.True(t, s.TLS.EarlyData)
	assert.True(t, s.TLS.EnableOCSP)
	assert.Equal(t, time.Hour, s.TLS.SessionTimeout)
	assert.Equal(t, 4000, s.TLS.SessionCacheEntries())
	assert.Equal(t, DefaultTLS().CipherSuites, s.TLS.CipherSuites, "a rejected ssl-ciphers keeps the default")
	var got []string
	for _, w := range warns {
		got = append(got, w.Key+" "+w.Reason)
	}
	assert.Equal(t, []string{"ssl-ciphers " + Rejected, "ssl-early-data " + Unsupported}, got)
}

// ssl-ciphers "" is a value in ingress-nginx (mapstructure sets it):
// nginx.tmpl then writes no ssl_ciphers, and nginx serves its own default,
// HIGH:!aNULL:!MD5.
func TestEmptySSLCiphersIsNginxDefault(t *testing.T) {
	s, warns := Parse("ingress-nginx", "cm", map[string]string{"ssl-ciphers": ""})
	assert.Empty(t, warns)
	want, _, err := ParseCiphers("HIGH:!aNULL:!MD5")
	require.NoError(t, err)
	assert.Equal(t, want, s.TLS.CipherSuites)
	assert.Contains(t, s.TLS.CipherSuites, tls.TLS_RSA_WITH_AES_128_GCM_SHA256)
	assert.Contains(t, s.TLS.CipherSuites, tls.TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA)
}

func FuzzParseCiphers(f *testing.F) {
	for _, s := range []string{DefaultCiphers, "HIGH:!aNULL", "ECDHE+AESGCM:-AES128:+SHA1:@STRENGTH", "!ALL", "::", "+", "-", "@SECLEVEL=9", "a+b+c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		suites, _, err := ParseCiphers(s)
		if err == nil && len(suites) == 0 {
			t.Fatal("no suites without an error")
		}
		for _, id := range suites {
			if CipherName(id) == "" {
				t.Fatalf("suite %x has no name", id)
			}
		}
	})
}

// nginx's size parser (ngx_parse_size, which ssl_session_cache's zone size
// goes through) takes k and m, not g; a size past int64 is refused, not
// wrapped.
func TestParseNginxSize(t *testing.T) {
	for in, want := range map[string]int64{"512": 512, "8k": 8 << 10, "10M": 10 << 20, "1024m": 1 << 30} {
		got, err := parseNginxSize(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for _, in := range []string{"", "g", "1t", "-1m", "1g", "2G", "99999999999999999999m"} {
		_, err := parseNginxSize(in)
		assert.Error(t, err, in)
	}
	s, warns := Parse("ingress-nginx", "cm", map[string]string{"ssl-session-cache-size": "1024m"})
	assert.Empty(t, warns)
	assert.Equal(t, int64(1<<30), s.TLS.SessionCacheSize)
}
