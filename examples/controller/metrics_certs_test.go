package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"maps"
	"math/big"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"ramjet.dev/ramjet/compile"
)

// The label names ingress-nginx's collectors give these metrics, copied
// from github.com/kubernetes/ingress-nginx at tag controller-v1.15.1:
// internal/ingress/metric/collectors/controller.go (sslLabelHost,
// sslInfoLabels, orphanityLabels with the constant labels of
// NewController) and socket.go (requestTags, with "host" under
// --metrics-per-host, and the constant labels, on connect_duration_seconds
// and header_duration_seconds).
var nginxCollectorLabels = map[string][]string{
	"nginx_ingress_controller_ssl_expire_time_seconds": {"namespace", "class", "host", "secret_name", "identifier"},
	"nginx_ingress_controller_ssl_certificate_info":    {"namespace", "class", "host", "secret_name", "identifier", "issuer_organization", "issuer_common_name", "serial_number", "public_key_algorithm"},
	"nginx_ingress_controller_orphan_ingress":          {"controller_namespace", "controller_class", "controller_pod", "namespace", "ingress", "type"},
	"nginx_ingress_controller_connect_duration_seconds_count": {"controller_namespace", "controller_class", "controller_pod",
		"status", "method", "path", "namespace", "ingress", "service", "canary", "host"},
	"nginx_ingress_controller_header_duration_seconds_count": {"controller_namespace", "controller_class", "controller_pod",
		"status", "method", "path", "namespace", "ingress", "service", "canary", "host"},
}

func tlsSecret(t *testing.T, ns, name string, notAfter time.Time, hosts ...string) *corev1.Secret {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(4242),
		Subject:      pkix.Name{CommonName: hosts[0]},
		Issuer:       pkix.Name{CommonName: hosts[0]},
		DNSNames:     hosts, NotBefore: time.Now().Add(-time.Hour), NotAfter: notAfter,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	kder, err := x509.MarshalECPrivateKey(key)
	require.NoError(t, err)
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Type: corev1.SecretTypeTLS,
		Data: map[string][]byte{
			"tls.crt": pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
			"tls.key": pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}),
		},
	}
}

func TestMetricsCertificatesOrphansConnect(t *testing.T) {
	m := newMetrics(metricsConfig(nil))
	s := metricsSnapshot(false)
	expiry := time.Date(2031, 1, 2, 3, 4, 5, 0, time.UTC)
	s.Secrets = append(s.Secrets, tlsSecret(t, "shop", "shop-tls", expiry, "shop.example.com"))
	s.Ingresses[0].Spec.TLS = []networkingv1.IngressTLS{{Hosts: []string{"shop.example.com"}, SecretName: "shop-tls"}}
	// An Ingress whose Service does not exist, and one without endpoints.
	s.Ingresses = append(s.Ingresses,
		newIngress("shop", "lost", "ramjet", "lost.example.com", "gone", "/"),
		newIngress("shop", "empty", "ramjet", "empty.example.com", "idle", "/"))
	s.Services = append(s.Services, newService("shop", "idle"))
	res := compile.Compile(s, compile.Options{IngressClass: "ramjet", ControllerName: compile.DefaultControllerName})
	m.published(&res, true, time.Now())
	rec := proxied("shop.example.com", "shop.example.com", apiRoute)
	rec.UpstreamConnectTime = 30 * time.Millisecond
	m.observe(rec)
	sc := scrapeMetrics(t, m)

	for name, want := range nginxCollectorLabels {
		var sets []map[string]string
		for _, x := range sc {
			if x.name == name {
				sets = append(sets, x.labels)
			}
		}
		require.NotEmpty(t, sets, name)
		for _, l := range sets {
			assert.ElementsMatch(t, want, slices.Collect(maps.Keys(l)), name)
		}
	}
	v, n := sc.sum("nginx_ingress_controller_ssl_expire_time_seconds", map[string]string{
		"namespace": "shop", "class": "ramjet.dev/ingress", "host": "shop.example.com", "secret_name": "shop-tls", "identifier": "-4242"})
	assert.Equal(t, 1, n)
	assert.Equal(t, float64(expiry.Unix()), v)
	_, n = sc.sum("nginx_ingress_controller_ssl_certificate_info", map[string]string{
		"host": "shop.example.com", "serial_number": "4242", "issuer_common_name": "shop.example.com", "public_key_algorithm": "ECDSA"})
	assert.Equal(t, 1, n)
	_, n = sc.sum("nginx_ingress_controller_orphan_ingress", map[string]string{"namespace": "shop", "ingress": "lost", "type": "no-service"})
	assert.Equal(t, 1, n)
	_, n = sc.sum("nginx_ingress_controller_orphan_ingress", map[string]string{"namespace": "shop", "ingress": "empty", "type": "no-endpoint"})
	assert.Equal(t, 1, n)
	// As ingress-nginx's DecOrphanIngress: 0 where a Service has
	// endpoints, and no no-endpoint series where none was found.
	for _, c := range []struct {
		ingress, typ string
		n            int
		v            float64
	}{{"web", "no-service", 1, 0}, {"web", "no-endpoint", 1, 0}, {"empty", "no-service", 1, 0}, {"lost", "no-endpoint", 0, 0}} {
		v, n := sc.sum("nginx_ingress_controller_orphan_ingress", map[string]string{"namespace": "shop", "ingress": c.ingress, "type": c.typ})
		assert.Equal(t, c.n, n, c)
		assert.Equal(t, c.v, v, c)
	}
	sum, n := sc.sum("nginx_ingress_controller_connect_duration_seconds_sum", map[string]string{"ingress": "web"})
	assert.Equal(t, 1, n)
	assert.InDelta(t, 0.03, sum, 1e-9)

	// A certificate gone from the table is gone from the scrape.
	s.Ingresses[0].Spec.TLS = nil
	res = compile.Compile(s, compile.Options{IngressClass: "ramjet", ControllerName: compile.DefaultControllerName})
	m.published(&res, true, time.Now())
	_, n = scrapeMetrics(t, m).sum("nginx_ingress_controller_ssl_expire_time_seconds", nil)
	assert.Equal(t, 0, n)
}

// The README's Metrics section names each of these series the controller
// serves, and does not say it is missing.
func TestReadmeListsCollectorMetrics(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	require.NoError(t, err)
	text := string(readme)
	for name := range nginxCollectorLabels {
		name = strings.TrimSuffix(name, "_count")
		short := strings.TrimPrefix(name, "nginx_ingress_controller_")
		require.Contains(t, text, "`"+name+"`", "the README's metrics table lists %s", name)
		require.NotContains(t, text, "there is no `"+short+"`", "the README says %s is missing", short)
	}
}

// The default certificate has its series too, as ingress-nginx gives
// them to the default server "_" and to each TLS host served the default
// certificate (createServers: SSLCert = getDefaultSSLCertificate()),
// labelled with the --default-ssl-certificate Secret: an alert on its
// expiry works. A rotated default certificate replaces its series though
// the table, and so its digest, did not change.
func TestMetricsDefaultCertificate(t *testing.T) {
	m := newMetrics(metricsConfig(nil))
	first := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	cur, _, err := parseKeyPair(tlsSecret(t, "ingress", "default-tls", first, "default.test"))
	require.NoError(t, err)
	m.servesDefault(func() (*tls.Certificate, string) { return cur, "ingress/default-tls" })
	s := metricsSnapshot(false)
	s.Secrets = append(s.Secrets, tlsSecret(t, "shop", "shop-tls", first.AddDate(1, 0, 0), "shop.example.com"))
	s.Ingresses[0].Spec.TLS = []networkingv1.IngressTLS{{Hosts: []string{"shop.example.com"}, SecretName: "shop-tls"}}
	// A TLS host without a Secret of its own is served the default one.
	s.Ingresses[1].Spec.TLS = []networkingv1.IngressTLS{{Hosts: []string{"broken.example.com"}}}
	res := compile.Compile(s, compile.Options{IngressClass: "ramjet", ControllerName: compile.DefaultControllerName})
	m.published(&res, true, time.Now())
	sc := scrapeMetrics(t, m)
	for _, host := range []string{"_", "broken.example.com"} {
		v, n := sc.sum("nginx_ingress_controller_ssl_expire_time_seconds", map[string]string{
			"namespace": "ingress", "class": "ramjet.dev/ingress", "host": host, "secret_name": "default-tls", "identifier": "-4242"})
		assert.Equal(t, 1, n, host)
		assert.Equal(t, float64(first.Unix()), v, host)
		_, n = sc.sum("nginx_ingress_controller_ssl_certificate_info", map[string]string{
			"namespace": "ingress", "host": host, "secret_name": "default-tls", "issuer_common_name": "default.test"})
		assert.Equal(t, 1, n, host)
	}
	_, n := sc.sum("nginx_ingress_controller_ssl_expire_time_seconds", map[string]string{"host": "shop.example.com", "secret_name": "shop-tls"})
	assert.Equal(t, 1, n)
	_, n = sc.sum("nginx_ingress_controller_ssl_expire_time_seconds", nil)
	assert.Equal(t, 3, n)

	// The default certificate rotates; the table is the same.
	second := first.AddDate(0, 6, 0)
	cur, _, err = parseKeyPair(tlsSecret(t, "ingress", "default-tls", second, "default.test"))
	require.NoError(t, err)
	m.published(&res, false, time.Now())
	v, n := scrapeMetrics(t, m).sum("nginx_ingress_controller_ssl_expire_time_seconds", map[string]string{"host": "_"})
	assert.Equal(t, 1, n)
	assert.Equal(t, float64(second.Unix()), v)
}

// A TLS host listed without a rule has no server in ingress-nginx, so no
// certificate series; the hosts with a rule keep theirs.
func TestMetricsTLSHostWithoutRule(t *testing.T) {
	m := newMetrics(metricsConfig(nil))
	s := metricsSnapshot(false)
	expiry := time.Date(2031, 1, 2, 3, 4, 5, 0, time.UTC)
	s.Secrets = append(s.Secrets, tlsSecret(t, "shop", "shop-tls", expiry, "shop.example.com", "tls-only.example.com"))
	s.Ingresses[0].Spec.TLS = []networkingv1.IngressTLS{{Hosts: []string{"shop.example.com", "tls-only.example.com"}, SecretName: "shop-tls"}}
	res := compile.Compile(s, compile.Options{IngressClass: "ramjet", ControllerName: compile.DefaultControllerName})
	m.published(&res, true, time.Now())
	sc := scrapeMetrics(t, m)
	for _, name := range []string{"nginx_ingress_controller_ssl_expire_time_seconds", "nginx_ingress_controller_ssl_certificate_info"} {
		_, n := sc.sum(name, map[string]string{"host": "shop.example.com"})
		assert.Equal(t, 1, n, name)
		_, n = sc.sum(name, map[string]string{"host": "tls-only.example.com"})
		assert.Equal(t, 0, n, name)
	}
}

// A scrape while a table's certificate and orphan series are set anew
// sees the old set or the new one, never a part: an absent() alert on
// ssl_expire_time_seconds must not fire because a scrape fell between
// the reset and the last host.
func TestMetricsCertificatesNeverHalfSet(t *testing.T) {
	m := newMetrics(metricsConfig(nil))
	s := metricsSnapshot(false)
	const hosts = 40
	expiry := time.Now().Add(90 * 24 * time.Hour)
	for i := range hosts {
		host := fmt.Sprintf("h%d.example.com", i)
		name := fmt.Sprintf("h%d", i)
		s.Secrets = append(s.Secrets, tlsSecret(t, "shop", name+"-tls", expiry, host))
		ing := newIngress("shop", name, "ramjet", host, "api", "/")
		ing.Spec.TLS = []networkingv1.IngressTLS{{Hosts: []string{host}, SecretName: name + "-tls"}}
		s.Ingresses = append(s.Ingresses, ing)
	}
	res := compile.Compile(s, compile.Options{IngressClass: "ramjet", ControllerName: compile.DefaultControllerName})
	m.published(&res, true, time.Now())
	_, n := scrapeMetrics(t, m).sum("nginx_ingress_controller_ssl_expire_time_seconds", nil)
	require.Equal(t, hosts, n)

	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 300 {
			m.tables.set(res.Table, m.id.class, nil, "")
		}
	}()
	for scrapes := 0; ; scrapes++ {
		select {
		case <-done:
			return
		default:
		}
		families, err := m.registry.Gather()
		require.NoError(t, err)
		for _, f := range families {
			if f.GetName() == "nginx_ingress_controller_ssl_expire_time_seconds" {
				require.Equal(t, hosts, len(f.GetMetric()), "series in scrape %d", scrapes)
			}
		}
	}
}
