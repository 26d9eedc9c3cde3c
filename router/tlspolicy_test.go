package router_test

import (
	"crypto/tls"
	"crypto/x509"
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/compile"
	"ramjet.dev/ramjet/compile/manifest"
	"ramjet.dev/ramjet/router"
	"ramjet.dev/ramjet/router/configmap"
)

// The TLS keys (SPEC §12) as ingress-nginx writes them into nginx.conf
// (nginx.tmpl, http block: ssl_protocols, ssl_ciphers, ssl_session_*;
// defaults in internal/ingress/controller/config/config.go: sslProtocols
// "TLSv1.2 TLSv1.3", sslCiphers, SSLSessionTickets false), served by a
// router's TLSConfig on a loopback listener.

// tlsRouter serves a router made with the ConfigMap data on a loopback
// TLS listener that completes handshakes and closes; it returns the
// address.
func tlsRouter(t *testing.T, data map[string]string) (*router.Router, string) {
	t.Helper()
	s, _ := configmap.Parse("ingress-nginx", "ingress-nginx-controller", data)
	o := router.Options{Logger: slog.New(slog.DiscardHandler)}
	o.ApplyConfigMap(s)
	r := router.New(o)
	ln, err := tls.Listen("tcp", "127.0.0.1:0", r.TLSConfig())
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_ = c.SetDeadline(time.Now().Add(5 * time.Second))
				if tc := c.(*tls.Conn); tc.Handshake() == nil {
					_, _ = io.WriteString(tc, "ok")
				}
			}()
		}
	}()
	return r, ln.Addr().String()
}

// handshake dials addr with cfg and reports the connection state.
func handshake(addr string, cfg *tls.Config) (tls.ConnectionState, error) {
	cfg.InsecureSkipVerify = true
	d := &net.Dialer{Timeout: 5 * time.Second}
	c, err := tls.DialWithDialer(d, "tcp", addr, cfg)
	if err != nil {
		return tls.ConnectionState{}, err
	}
	defer c.Close()
	// The server's "ok" also carries TLS 1.3 session tickets.
	_, _ = io.ReadAll(c)
	return c.ConnectionState(), nil
}

func TestTLSDefaultsAreIngressNginx(t *testing.T) {
	_, addr := tlsRouter(t, nil)
	// TLS 1.3 and 1.2 are served (ssl_protocols TLSv1.2 TLSv1.3).
	st, err := handshake(addr, &tls.Config{})
	require.NoError(t, err)
	assert.Equal(t, uint16(tls.VersionTLS13), st.Version)
	st, err = handshake(addr, &tls.Config{MaxVersion: tls.VersionTLS12})
	require.NoError(t, err)
	assert.Equal(t, uint16(tls.VersionTLS12), st.Version)
	// TLS 1.1 is not.
	_, err = handshake(addr, &tls.Config{MinVersion: tls.VersionTLS10, MaxVersion: tls.VersionTLS11})
	assert.Error(t, err)
	// A suite outside ingress-nginx's default list (a CBC one) is refused.
	_, err = handshake(addr, &tls.Config{MaxVersion: tls.VersionTLS12, CipherSuites: []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA}})
	assert.Error(t, err)
	st, err = handshake(addr, &tls.Config{MaxVersion: tls.VersionTLS12, CipherSuites: []uint16{tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256}})
	require.NoError(t, err)
	assert.Equal(t, tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256, st.CipherSuite)
}

// ssl-protocols: "TLSv1.3" refuses a TLS 1.2 client; ssl-ciphers refuses a
// suite it does not list.
func TestTLSProtocolsAndCiphersRefuse(t *testing.T) {
	_, addr := tlsRouter(t, map[string]string{"ssl-protocols": "TLSv1.3"})
	_, err := handshake(addr, &tls.Config{MaxVersion: tls.VersionTLS12})
	require.Error(t, err, "a TLS 1.2 client under ssl-protocols TLSv1.3")
	assert.Contains(t, err.Error(), "protocol version")
	st, err := handshake(addr, &tls.Config{})
	require.NoError(t, err)
	assert.Equal(t, uint16(tls.VersionTLS13), st.Version)

	_, addr = tlsRouter(t, map[string]string{"ssl-ciphers": "ECDHE-ECDSA-AES256-GCM-SHA384"})
	_, err = handshake(addr, &tls.Config{MaxVersion: tls.VersionTLS12, CipherSuites: []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256}})
	require.Error(t, err, "a suite outside ssl-ciphers")
	assert.Contains(t, err.Error(), "handshake failure")
	st, err = handshake(addr, &tls.Config{MaxVersion: tls.VersionTLS12})
	require.NoError(t, err)
	assert.Equal(t, tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384, st.CipherSuite)

	// The OpenSSL alias syntax ingress-nginx users write.
	_, addr = tlsRouter(t, map[string]string{"ssl-ciphers": "ECDHE+CHACHA20:!aNULL"})
	_, err = handshake(addr, &tls.Config{MaxVersion: tls.VersionTLS12, CipherSuites: []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384}})
	require.Error(t, err)
	_, err = handshake(addr, &tls.Config{MaxVersion: tls.VersionTLS12, CipherSuites: []uint16{tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256}})
	require.NoError(t, err)
}

// ssl-protocols "TLSv1 TLSv1.1 TLSv1.2" serves TLS 1.0 and 1.1 only with
// ssl-ciphers at @SECLEVEL=0, as ingress-nginx's OpenSSL 3.
func TestTLSLegacyProtocolsNeedSecurityLevel0(t *testing.T) {
	legacy := &tls.Config{MinVersion: tls.VersionTLS10, MaxVersion: tls.VersionTLS11}
	_, addr := tlsRouter(t, map[string]string{"ssl-protocols": "TLSv1 TLSv1.1 TLSv1.2", "ssl-ciphers": "ECDHE-ECDSA-AES128-SHA:ECDHE-ECDSA-AES128-GCM-SHA256"})
	_, err := handshake(addr, legacy.Clone())
	require.Error(t, err, "TLS 1.1 at OpenSSL's default security level")
	st, err := handshake(addr, &tls.Config{MaxVersion: tls.VersionTLS12})
	require.NoError(t, err)
	assert.Equal(t, uint16(tls.VersionTLS12), st.Version)

	_, addr = tlsRouter(t, map[string]string{"ssl-protocols": "TLSv1 TLSv1.1 TLSv1.2", "ssl-ciphers": "ECDHE-ECDSA-AES128-SHA:ECDHE-ECDSA-AES128-GCM-SHA256:@SECLEVEL=0"})
	st, err = handshake(addr, legacy.Clone())
	require.NoError(t, err)
	assert.Equal(t, uint16(tls.VersionTLS11), st.Version)
}

// ssl-ciphers "ALL" (or any list naming RC4 or 3DES) serves no RC4 or
// 3DES suite: ingress-nginx's OpenSSL is built without them.
func TestTLSWeakSuitesNotServed(t *testing.T) {
	_, addr := tlsRouter(t, map[string]string{"ssl-ciphers": "ALL:RC4-SHA:ECDHE-RSA-DES-CBC3-SHA:3DES"})
	for _, id := range []uint16{tls.TLS_ECDHE_ECDSA_WITH_RC4_128_SHA, tls.TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA, tls.TLS_RSA_WITH_RC4_128_SHA} {
		_, err := handshake(addr, &tls.Config{MaxVersion: tls.VersionTLS12, CipherSuites: []uint16{id}})
		assert.Error(t, err, tls.CipherSuiteName(id))
	}
	st, err := handshake(addr, &tls.Config{MaxVersion: tls.VersionTLS12, CipherSuites: []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA}})
	require.NoError(t, err)
	assert.Equal(t, tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA, st.CipherSuite)
}

func TestTLSCurves(t *testing.T) {
	_, addr := tlsRouter(t, map[string]string{"ssl-ecdh-curve": "secp384r1"})
	_, err := handshake(addr, &tls.Config{CurvePreferences: []tls.CurveID{tls.X25519}})
	require.Error(t, err, "ssl_ecdh_curve secp384r1 refuses an X25519-only client")
	st, err := handshake(addr, &tls.Config{CurvePreferences: []tls.CurveID{tls.X25519, tls.CurveP384}})
	require.NoError(t, err)
	assert.Equal(t, tls.CurveP384, st.CurveID)
}

// nginx.tmpl: ssl_session_cache shared:SSL:10m with ssl_session_tickets
// off by default: sessions resume from the server's cache.
func TestTLSSessionResumption(t *testing.T) {
	for _, tc := range []struct {
		name   string
		data   map[string]string
		resume bool
	}{
		{"default cache", nil, true},
		{"tickets", map[string]string{"ssl-session-tickets": "true"}, true},
		{"no cache, no tickets", map[string]string{"ssl-session-cache": "false"}, false},
	} {
		for _, ver := range []uint16{tls.VersionTLS12, tls.VersionTLS13} {
			t.Run(tc.name+"/"+tls.VersionName(ver), func(t *testing.T) {
				_, addr := tlsRouter(t, tc.data)
				cfg := &tls.Config{MaxVersion: ver, ClientSessionCache: tls.NewLRUClientSessionCache(8), ServerName: "shop.example.com"}
				st, err := handshake(addr, cfg)
				require.NoError(t, err)
				require.False(t, st.DidResume)
				st, err = handshake(addr, cfg)
				require.NoError(t, err)
				assert.Equal(t, tc.resume, st.DidResume)
			})
		}
	}
}

// The ssl-ciphers annotation sets a host's ciphers (nginx.tmpl server
// block: ssl_ciphers {{ $server.SSLCiphers }}); other hosts keep the
// listener's.
func TestTLSHostCiphersAnnotation(t *testing.T) {
	r := router.New(router.Options{Logger: slog.New(slog.DiscardHandler)})
	crt, key, _ := pemPair(t, "shop.example.com")
	snap := shopManifests(t, "shop.example.com", "10.0.0.1:8080", crt, key)
	snap.Ingresses[0].Annotations = map[string]string{"nginx.ingress.kubernetes.io/ssl-ciphers": "ECDHE-ECDSA-AES128-SHA:DHE-RSA-AES128-SHA"}
	res := compile.Compile(snap, compile.Options{})
	var notes []string
	for _, w := range res.Warnings {
		notes = append(notes, string(w.Reason)+": "+w.Message)
	}
	assert.Contains(t, strings.Join(notes, "\n"), "AnnotationSubstituted: nginx.ingress.kubernetes.io/ssl-ciphers: DHE-RSA-AES128-SHA left out")
	r.Publish(res.Table)
	addr := router.HandshakeListener(t, r)
	cbc := []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA}
	st, err := handshake(addr, &tls.Config{ServerName: "shop.example.com", MaxVersion: tls.VersionTLS12, CipherSuites: cbc})
	require.NoError(t, err)
	assert.Equal(t, tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA, st.CipherSuite)
	_, err = handshake(addr, &tls.Config{ServerName: "shop.example.com", MaxVersion: tls.VersionTLS12,
		CipherSuites: []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256}})
	require.Error(t, err, "the host's own list leaves the listener's suites out")
	_, err = handshake(addr, &tls.Config{ServerName: "other.example.com", MaxVersion: tls.VersionTLS12, CipherSuites: cbc})
	require.Error(t, err, "another host keeps the listener's list")
}

// The ssl-ciphers annotation of an Ingress whose rule has no host sets
// the default server's ciphers (ingress-nginx's createServers: a rule
// without host is server "_", whose server block has ssl_ciphers too):
// handshakes without SNI, or naming no host of the table, use them; a
// named host keeps the listener's.
func TestTLSDefaultServerCiphersAnnotation(t *testing.T) {
	doc := `
apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata: {name: ramjet}
spec: {controller: ramjet.dev/ingress}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: prod}
spec: {ports: [{port: 80}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: catch-all
  namespace: prod
  annotations: {nginx.ingress.kubernetes.io/ssl-ciphers: "ECDHE-ECDSA-AES128-SHA"}
spec:
  ingressClassName: ramjet
  rules:
  - http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: shop, namespace: prod}
spec:
  ingressClassName: ramjet
  rules:
  - host: shop.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
`
	snap, _, err := manifest.Decode("catch-all.yaml", []byte(doc))
	require.NoError(t, err)
	res := compile.Compile(*snap, compile.Options{})
	r := router.New(router.Options{Logger: slog.New(slog.DiscardHandler)})
	r.Publish(res.Table)
	addr := router.HandshakeListener(t, r)
	cbc := []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA}
	gcm := []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256}
	for _, sni := range []string{"", "other.example.com"} {
		st, err := handshake(addr, &tls.Config{ServerName: sni, MaxVersion: tls.VersionTLS12, CipherSuites: cbc})
		require.NoError(t, err, "SNI %q", sni)
		assert.Equal(t, tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA, st.CipherSuite)
		_, err = handshake(addr, &tls.Config{ServerName: sni, MaxVersion: tls.VersionTLS12, CipherSuites: gcm})
		require.Error(t, err, "SNI %q: the default server's list leaves the listener's suites out", sni)
	}
	_, err = handshake(addr, &tls.Config{ServerName: "shop.example.com", MaxVersion: tls.VersionTLS12, CipherSuites: cbc})
	require.Error(t, err, "a named host keeps the listener's list")
	_, err = handshake(addr, &tls.Config{ServerName: "shop.example.com", MaxVersion: tls.VersionTLS12, CipherSuites: gcm})
	require.NoError(t, err)
}

// ssl-reject-handshake "true" (nginx.tmpl: ssl_reject_handshake on in the
// default server "_"): a handshake that names no host of the table, or
// names none, is refused with nginx's unrecognized_name alert instead of
// getting the default certificate; a table host, even without a
// certificate of its own, still gets one.
func TestTLSRejectHandshake(t *testing.T) {
	r, addr := tlsRouter(t, map[string]string{"ssl-reject-handshake": "true"})
	crt, key, _ := pemPair(t, "shop.example.com")
	snap := shopManifests(t, "shop.example.com", "10.0.0.1:8080", crt, key)
	snap.Ingresses[0].Spec.Rules = append(snap.Ingresses[0].Spec.Rules, snap.Ingresses[0].Spec.Rules[0])
	snap.Ingresses[0].Spec.Rules[1].Host = "plain.example.com"
	r.Publish(compile.Compile(snap, compile.Options{}).Table)
	for _, name := range []string{"shop.example.com", "plain.example.com", "SHOP.example.com."} {
		_, err := handshake(addr, &tls.Config{ServerName: name})
		assert.NoError(t, err, name)
	}
	for _, name := range []string{"other.example.com", ""} {
		_, err := handshake(addr, &tls.Config{ServerName: name})
		require.Error(t, err, "%q", name)
		assert.Contains(t, err.Error(), "unrecognized name", "%q", name)
	}
	// Off (the default), an unknown name gets the default certificate.
	r, addr = tlsRouter(t, nil)
	r.Publish(compile.Compile(snap, compile.Options{}).Table)
	_, err := handshake(addr, &tls.Config{ServerName: "other.example.com"})
	assert.NoError(t, err)
}

// ingress-nginx's fake certificate is RSA: with an RSA-only ssl-ciphers a
// TLS 1.2 client still completes its handshake with a host that has no
// certificate of its own. ramjet offers an RSA default certificate beside
// its ECDSA one, and Go picks by what the client supports.
func TestTLSDefaultCertificateRSA(t *testing.T) {
	_, addr := tlsRouter(t, map[string]string{"ssl-ciphers": "ECDHE-RSA-AES128-GCM-SHA256:AES128-GCM-SHA256"})
	st, err := handshake(addr, &tls.Config{MaxVersion: tls.VersionTLS12, ServerName: "no-cert.example.com"})
	require.NoError(t, err)
	require.NotEmpty(t, st.PeerCertificates)
	assert.Equal(t, x509.RSA, st.PeerCertificates[0].PublicKeyAlgorithm)

	// A client that can verify ECDSA still gets the ECDSA one.
	_, addr = tlsRouter(t, nil)
	st, err = handshake(addr, &tls.Config{ServerName: "no-cert.example.com"})
	require.NoError(t, err)
	assert.Equal(t, x509.ECDSA, st.PeerCertificates[0].PublicKeyAlgorithm)
	st, err = handshake(addr, &tls.Config{ServerName: "no-cert.example.com", MaxVersion: tls.VersionTLS12,
		CipherSuites: []uint16{tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256}})
	require.NoError(t, err)
	assert.Equal(t, x509.RSA, st.PeerCertificates[0].PublicKeyAlgorithm)
}
