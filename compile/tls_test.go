package compile

import (
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
)

func fingerprintOf(t *testing.T, id string) string {
	crt, _ := keyPair(id)
	block, _ := pem.Decode(crt)
	require.NotNil(t, block)
	_, err := x509.ParseCertificate(block.Bytes)
	require.NoError(t, err)
	sum := sha256.Sum256(block.Bytes)
	return hex.EncodeToString(sum[:])
}

func TestTLSSecrets(t *testing.T) {
	opaque := mkSecret("prod", "opaque", "a")
	opaque.Type = corev1.SecretTypeOpaque
	mismatched := mkSecret("prod", "mismatched", "a")
	_, otherKey := keyPair("b")
	mismatched.Data[corev1.TLSPrivateKeyKey] = otherKey
	fromStringData := mkSecret("prod", "stringdata", "c")
	fromStringData.StringData = map[string]string{
		corev1.TLSCertKey:       string(fromStringData.Data[corev1.TLSCertKey]),
		corev1.TLSPrivateKeyKey: string(fromStringData.Data[corev1.TLSPrivateKeyKey]),
	}
	fromStringData.Data = nil

	rules := withRules(
		mkRule("missing.example.com", prefix("/", "web", 80)),
		mkRule("opaque.example.com", prefix("/", "web", 80)),
		mkRule("mismatched.example.com", prefix("/", "web", 80)),
		mkRule("good.example.com", prefix("/", "web", 80)),
		mkRule("default-cert.example.com", prefix("/", "web", 80)),
	)
	s := mkSnapshot(
		mkService("prod", "web", ":80:"), mkSlice("prod", "web", "w", "", 80, "10.0.0.1"),
		opaque, mismatched, fromStringData,
		mkSecret("prod", "good", "a"),
		mkSecret("other", "elsewhere", "b"), // another namespace: not visible
		mkIngress("prod", "shop", 1, rules,
			withTLS("missing", "missing.example.com"),
			withTLS("opaque", "opaque.example.com"),
			withTLS("mismatched", "mismatched.example.com"),
			withTLS("good", "good.example.com", "Bad.example.com", "*.wild.example.com", "tls-only.example.com"),
			withTLS("", "default-cert.example.com"),
			withTLS("elsewhere", "elsewhere.example.com"),
			withTLS("stringdata", "stringdata.example.com"),
		),
	)
	tab, ws := compileOK(t, s, Options{})
	want := []short{
		{SecretNotFound, "Ingress prod/shop", "spec.tls[0].secretName"},
		{SecretNotFound, "Ingress prod/shop", "spec.tls[1].secretName"},
		{SecretInvalid, "Ingress prod/shop", "spec.tls[2].secretName"},
		{RuleRejected, "Ingress prod/shop", "spec.tls[3].hosts[1]"},
		{SecretNotFound, "Ingress prod/shop", "spec.tls[5].secretName"},
	}
	if diff := cmp.Diff(want, shorten(ws)); diff != "" {
		t.Fatalf("warnings (-want +got):\n%s\n%s", diff, warningText(ws))
	}
	require.Contains(t, ws[1].Message, "reads as absent")

	// Every listed host is TLS, usable Secret or not, and still serves.
	for _, h := range []string{"missing", "opaque", "mismatched", "good", "default-cert"} {
		host := h + ".example.com"
		require.True(t, tab.VirtualHostByName(host).TLS, host)
		require.Equal(t, "prod/web:80", served(tab, host, "/"), host)
	}
	require.False(t, tab.VirtualHostByName("").TLS)
	// A listed host without a rule creates no virtual host but gets its certificate.
	require.Nil(t, tab.VirtualHostByName("tls-only.example.com"))

	for host, wantSecret := range map[string]string{
		"good.example.com": "prod/good", "tls-only.example.com": "prod/good", "x.wild.example.com": "prod/good",
		"stringdata.example.com": "prod/stringdata",
		"missing.example.com":    "", "opaque.example.com": "", "mismatched.example.com": "", "default-cert.example.com": "",
		"elsewhere.example.com": "",
	} {
		c := tab.Certificate(host)
		if wantSecret == "" {
			require.Nil(t, c, host)
			continue
		}
		require.NotNil(t, c, host)
		require.Equal(t, wantSecret, c.Secret, host)
	}
	good := tab.Certificate("good.example.com")
	require.Equal(t, []string{"*.wild.example.com", "good.example.com", "tls-only.example.com"}, good.Hosts)
	require.Equal(t, fingerprintOf(t, "a"), good.Fingerprint)
	require.NotNil(t, good.Cert)
	require.Equal(t, 2, tab.Size().Certificates)
}

// A host's certificate comes from the oldest Ingress whose tls entry lists
// the host with a valid Secret; one Secret used by many Ingresses is one
// certificate.
func TestCertificateChoice(t *testing.T) {
	s := mkSnapshot(
		mkSecret("prod", "b", "b"), mkSecret("prod", "c", "c"), mkSecret("team", "c", "c"),
		mkIngress("prod", "oldest", 1, withTLS("missing", "shop.example.com")),
		mkIngress("prod", "middle", 2, withTLS("b", "shop.example.com", "b.example.com")),
		mkIngress("prod", "newest", 3, withTLS("c", "shop.example.com", "c.example.com"), withTLS("b", "b2.example.com")),
		mkIngress("team", "other", 4, withTLS("c", "team.example.com")),
	)
	tab, ws := compileOK(t, s, Options{})
	require.Equal(t, []short{{SecretNotFound, "Ingress prod/oldest", "spec.tls[0].secretName"}}, shorten(ws))
	require.Equal(t, "prod/b", tab.Certificate("shop.example.com").Secret)
	require.Equal(t, "prod/c", tab.Certificate("c.example.com").Secret)
	require.Same(t, tab.Certificate("b.example.com"), tab.Certificate("b2.example.com"), "one Secret, one certificate")
	require.Equal(t, "team/c", tab.Certificate("team.example.com").Secret)
	var secrets []string
	for c := range tab.Certificates() {
		secrets = append(secrets, c.Secret)
	}
	require.Equal(t, []string{"prod/b", "prod/c", "team/c"}, secrets)
	require.Equal(t, []string{"b.example.com", "b2.example.com", "shop.example.com"}, tab.Certificate("b.example.com").Hosts)
	require.Equal(t, []string{"c.example.com"}, tab.Certificate("c.example.com").Hosts)
	require.Equal(t, tab.Certificate("c.example.com").Fingerprint, tab.Certificate("team.example.com").Fingerprint)
}

func TestSecretParsedOnce(t *testing.T) {
	s := mkSnapshot(
		mkSecret("prod", "shared", "a"),
		mkIngress("prod", "one", 1, withTLS("shared", "one.example.com"), withTLS("broken", "x.example.com")),
		mkIngress("prod", "two", 2, withTLS("shared", "two.example.com"), withTLS("broken", "y.example.com")),
	)
	b := newBuilder(s, Options{})
	for _, step := range buildSteps {
		step(b)
	}
	require.Len(t, b.parsed, 2, "one parse per Secret named")
	require.Equal(t, 1, b.table.Size().Certificates)
	// Each Ingress naming the broken Secret is told.
	require.Equal(t, []short{
		{SecretNotFound, "Ingress prod/one", "spec.tls[1].secretName"},
		{SecretNotFound, "Ingress prod/two", "spec.tls[1].secretName"},
	}, shorten(sortWarnings(b.warnings)))
}

// A certificate without DNS names is read by its Common Name, as
// ingress-nginx's verifyHostname reads it for such a host (createServers):
// it serves the host instead of the default certificate.
func TestCertificateCommonNameCovers(t *testing.T) {
	s := mkSnapshot(
		mkSecret("prod", "legacy", "legacy"), mkSecret("prod", "legacy-wild", "legacy-wild"),
		mkIngress("prod", "shop", 1,
			withTLS("legacy", "legacy.example.com", "other.example.com"),
			withTLS("legacy-wild", "a.legacy.example.com", "*.legacy.example.com", "a.b.legacy.example.com")),
	)
	tab, ws := compileOK(t, s, Options{})
	require.Equal(t, []short{
		{CertificateHostMismatch, "Ingress prod/shop", "spec.tls[0].secretName"},
		{CertificateHostMismatch, "Ingress prod/shop", "spec.tls[1].secretName"},
	}, shorten(ws), warningText(ws))
	require.Contains(t, ws[0].Message, `"other.example.com"`)
	require.Contains(t, ws[1].Message, `"a.b.legacy.example.com"`)
	require.Equal(t, "prod/legacy", tab.Certificate("legacy.example.com").Secret)
	require.Equal(t, "prod/legacy-wild", tab.Certificate("a.legacy.example.com").Secret)
	require.Equal(t, "prod/legacy-wild", tab.Certificate("x.legacy.example.com").Secret, "the wildcard TLS host")
	require.Nil(t, tab.Certificate("other.example.com"))
}

// A listed certificate that is not valid for the host is skipped for it
// (CertificateHostMismatch): the next Ingress's certificate that covers the
// host serves, else the default (SPEC §19).
func TestCertificateMustCoverHost(t *testing.T) {
	s := mkSnapshot(
		mkSecret("prod", "narrow", "narrow"), mkSecret("prod", "broad", "b"),
		mkIngress("prod", "oldest", 1, withTLS("narrow", "narrow.example.com", "app.example.com", "*.wild.example.com")),
		mkIngress("prod", "newer", 2, withTLS("broad", "app.example.com")),
		mkIngress("prod", "newest", 3, withTLS("narrow", "only.example.com")),
	)
	tab, ws := compileOK(t, s, Options{})
	require.Equal(t, []short{
		{CertificateHostMismatch, "Ingress prod/newest", "spec.tls[0].secretName"},
		{CertificateHostMismatch, "Ingress prod/oldest", "spec.tls[0].secretName"},
		{CertificateHostMismatch, "Ingress prod/oldest", "spec.tls[0].secretName"},
	}, shorten(ws))
	require.Contains(t, ws[1].Message+ws[2].Message, `"app.example.com"`)
	require.Contains(t, ws[1].Message+ws[2].Message, `"*.wild.example.com"`)
	require.Equal(t, "prod/narrow", tab.Certificate("narrow.example.com").Secret)
	require.Equal(t, "prod/broad", tab.Certificate("app.example.com").Secret, "the newer Ingress's certificate covers it")
	require.Nil(t, tab.Certificate("x.wild.example.com"), "the default certificate serves")
	require.Nil(t, tab.Certificate("only.example.com"))
	// Still TLS hosts: plain HTTP to them is redirected.
	for _, h := range []string{"app.example.com", "only.example.com", "*.wild.example.com"} {
		require.Contains(t, slices.Collect(tab.TLSHosts()), h)
	}
	require.True(t, tab.IsTLSHost("x.wild.example.com"))
	require.False(t, tab.IsTLSHost("x.y.wild.example.com"))
}
