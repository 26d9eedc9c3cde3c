package router_test

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"ramjet.dev/ramjet/compile"
	"ramjet.dev/ramjet/compile/manifest"
	"ramjet.dev/ramjet/router"
	"ramjet.dev/ramjet/router/configmap"
)

// End to end with certificates made here: manifests through compile to
// the router, TLS on both sides for real.

// testCA is a certificate authority made for one test.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

func newTestCA(t *testing.T, cn string) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	return &testCA{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// issue makes a certificate signed by ca for subject (and DNS names, for a
// server), returning it as a key pair and as PEM.
func (ca *testCA) issue(t *testing.T, subject pkix.Name, dns ...string) (pair tls.Certificate, certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: subject, DNSNames: dns,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	require.NoError(t, err)
	kder, err := x509.MarshalECPrivateKey(key)
	require.NoError(t, err)
	certPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPEM = pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})
	pair, err = tls.X509KeyPair(certPEM, keyPEM)
	require.NoError(t, err)
	return pair, certPEM, keyPEM
}

// tlsEndsIngress is one Ingress of host with one Prefix path to web:80.
type tlsEndsIngress struct {
	name, host, path string
	ann              map[string]string
}

// tlsEndsManifests is a snapshot of Service web (port 80, one endpoint at
// backendAddr), the Secrets (name → data) and the Ingresses.
func tlsEndsManifests(t *testing.T, backendAddr string, secrets map[string]map[string][]byte, ings ...tlsEndsIngress) compile.Snapshot {
	t.Helper()
	ip, port, err := net.SplitHostPort(backendAddr)
	require.NoError(t, err)
	var b strings.Builder
	fmt.Fprintf(&b, `apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata: {name: ramjet}
spec: {controller: ramjet.dev/ingress}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: prod}
spec: {ports: [{port: 80, targetPort: %[2]s}]}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: web-1, namespace: prod, labels: {kubernetes.io/service-name: web}}
addressType: IPv4
ports: [{name: "", port: %[2]s}]
endpoints: [{addresses: [%[1]s]}]
`, ip, port)
	for name, data := range secrets {
		fmt.Fprintf(&b, "---\napiVersion: v1\nkind: Secret\nmetadata: {name: %s, namespace: prod}\ndata:\n", name)
		for k, v := range data {
			fmt.Fprintf(&b, "  %s: %s\n", k, base64.StdEncoding.EncodeToString(v))
		}
	}
	for i, ing := range ings {
		fmt.Fprintf(&b, "---\napiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata:\n  name: %s\n  namespace: prod\n  creationTimestamp: %q\n  annotations:\n",
			ing.name, time.Unix(int64(1000+i), 0).UTC().Format(time.RFC3339))
		for k, v := range ing.ann {
			fmt.Fprintf(&b, "    nginx.ingress.kubernetes.io/%s: %q\n", k, v)
		}
		fmt.Fprintf(&b, "spec:\n  ingressClassName: ramjet\n  rules:\n  - host: %q\n    http: {paths: [{path: %q, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}\n",
			ing.host, ing.path)
	}
	s, skipped, err := manifest.Decode("tls-ends.yaml", []byte(b.String()))
	require.NoError(t, err)
	require.Empty(t, skipped)
	return *s
}

func serveThrough(t *testing.T, h http.Handler, host, path string) (int, string) {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	req.Host = host
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w.Code, w.Body.String()
}

// The backend's certificate is verified against the Secret's ca.crt, the
// router presents tls.crt and sends proxy-ssl-name as SNI; a CA that did
// not sign the backend's certificate answers 502 (proxy-ssl-verify on,
// test/e2e/annotations/proxyssl.go), without a Secret nothing is
// verified, and a Secret that is missing denies the location.
func TestBackendTLSFromSecret(t *testing.T) {
	ca, other := newTestCA(t, "upstream CA"), newTestCA(t, "another CA")
	serverPair, _, _ := ca.issue(t, pkix.Name{CommonName: "backend"}, "backend.internal")
	_, clientCrt, clientKey := ca.issue(t, pkix.Name{CommonName: "ramjet-proxy"})
	pool := x509.NewCertPool()
	pool.AddCert(ca.cert)
	backend := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		client := "none"
		if len(r.TLS.PeerCertificates) > 0 {
			client = r.TLS.PeerCertificates[0].Subject.CommonName
		}
		_, _ = fmt.Fprintf(w, "sni=%s client=%s path=%s", r.TLS.ServerName, client, r.URL.Path)
	}))
	backend.TLS = &tls.Config{Certificates: []tls.Certificate{serverPair}, ClientAuth: tls.VerifyClientCertIfGiven, ClientCAs: pool}
	backend.Config.ErrorLog = log.New(io.Discard, "", 0)
	backend.StartTLS()
	defer backend.Close()

	secrets := map[string]map[string][]byte{
		"upstream":    {"ca.crt": ca.pem, "tls.crt": clientCrt, "tls.key": clientKey},
		"wrong-ca":    {"ca.crt": other.pem},
		"no-sni-name": {"ca.crt": ca.pem},
	}
	https := map[string]string{"backend-protocol": "HTTPS"}
	with := func(kv ...string) map[string]string {
		m := map[string]string{"backend-protocol": "HTTPS"}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	snap := tlsEndsManifests(t, backend.Listener.Addr().String(), secrets,
		tlsEndsIngress{"verified", "shop.example.com", "/verified", with("proxy-ssl-secret", "prod/upstream", "proxy-ssl-verify", "on",
			"proxy-ssl-name", "backend.internal", "proxy-ssl-server-name", "on", "proxy-ssl-protocols", "TLSv1.2 TLSv1.3")},
		tlsEndsIngress{"wrong-ca", "shop.example.com", "/wrong-ca", with("proxy-ssl-secret", "prod/wrong-ca", "proxy-ssl-verify", "on",
			"proxy-ssl-name", "backend.internal")},
		// On a host of their own: on shop.example.com they would take
		// the server-level name and client certificate of "verified"
		// (TestBackendTLSInheritsServerDirectives).
		tlsEndsIngress{"wrong-name", "solo.example.com", "/wrong-name", with("proxy-ssl-secret", "prod/no-sni-name", "proxy-ssl-verify", "on")},
		tlsEndsIngress{"unverified", "solo.example.com", "/unverified", with("proxy-ssl-secret", "prod/wrong-ca", "proxy-ssl-verify", "off")},
		tlsEndsIngress{"missing", "shop.example.com", "/missing", with("proxy-ssl-secret", "prod/absent")},
		tlsEndsIngress{"plain", "plain.example.com", "/", https},
	)
	res := compile.Compile(snap, compile.Options{AllowLoopbackEndpoints: true})
	require.True(t, hasReason(res.Warnings, compile.SecretNotFound), "warnings: %v", res.Warnings)
	r := router.New(router.Options{Logger: slog.New(slog.DiscardHandler)})
	defer r.CloseIdleConnections()
	r.Publish(res.Table)

	for _, tt := range []struct {
		host, path string
		code       int
		body       string
	}{
		{"shop.example.com", "/verified", 200, "sni=backend.internal client=ramjet-proxy path=/verified"},
		{"shop.example.com", "/verified/again", 200, "sni=backend.internal client=ramjet-proxy path=/verified/again"},
		// Signed by another CA than the Secret's: nginx answers 502.
		{"shop.example.com", "/wrong-ca", 502, ""},
		// Verified against nginx's $proxy_host ("upstream_balancer")
		// without proxy-ssl-name: the backend's certificate does not name it.
		{"solo.example.com", "/wrong-name", 502, ""},
		// Verification off: served, no client certificate (only a CA in
		// the Secret), no SNI (proxy-ssl-server-name off).
		{"solo.example.com", "/unverified", 200, "sni= client=none path=/unverified"},
		{"shop.example.com", "/missing", 503, "backend TLS is misconfigured"},
		// No proxy-ssl-secret: today's behaviour, nothing verified.
		{"plain.example.com", "/x", 200, "sni= client=none path=/x"},
	} {
		code, body := serveThrough(t, r, tt.host, tt.path)
		assert.Equal(t, tt.code, code, "%s%s: %s", tt.host, tt.path, body)
		assert.Contains(t, body, tt.body, "%s%s", tt.host, tt.path)
	}
}

// The host's first Ingress whose proxy-ssl-secret has a CA writes the
// proxy_ssl_* directives at the server level (nginx.tmpl's server block),
// and nginx merges each one into a location that does not write its own
// (ngx_http_proxy_merge_loc_conf): a location with a Secret of its own
// still takes the server's proxy_ssl_name when it sets none, the server's
// client certificate when its Secret has no key pair, and the server's CA,
// verification, protocols and ciphers when its Secret has no ca.crt. Its
// proxy_ssl_server_name is always its own ("off" unless set).
func TestBackendTLSInheritsServerDirectives(t *testing.T) {
	ca := newTestCA(t, "upstream CA")
	serverPair, _, _ := ca.issue(t, pkix.Name{CommonName: "backend"}, "backend.internal")
	_, clientCrt, clientKey := ca.issue(t, pkix.Name{CommonName: "ramjet-proxy"})
	_, otherCrt, otherKey := ca.issue(t, pkix.Name{CommonName: "pair-only"})
	pool := x509.NewCertPool()
	pool.AddCert(ca.cert)
	backend := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		client := "none"
		if len(r.TLS.PeerCertificates) > 0 {
			client = r.TLS.PeerCertificates[0].Subject.CommonName
		}
		_, _ = fmt.Fprintf(w, "sni=%s client=%s", r.TLS.ServerName, client)
	}))
	backend.TLS = &tls.Config{Certificates: []tls.Certificate{serverPair}, ClientAuth: tls.VerifyClientCertIfGiven, ClientCAs: pool}
	backend.Config.ErrorLog = log.New(io.Discard, "", 0)
	backend.StartTLS()
	defer backend.Close()

	secrets := map[string]map[string][]byte{
		"upstream": {"ca.crt": ca.pem, "tls.crt": clientCrt, "tls.key": clientKey},
		"ca-only":  {"ca.crt": ca.pem},
		"pair":     {"tls.crt": otherCrt, "tls.key": otherKey},
	}
	with := func(kv ...string) map[string]string {
		m := map[string]string{"backend-protocol": "HTTPS"}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	snap := tlsEndsManifests(t, backend.Listener.Addr().String(), secrets,
		tlsEndsIngress{"server", "shop.example.com", "/server", with("proxy-ssl-secret", "prod/upstream", "proxy-ssl-verify", "on",
			"proxy-ssl-name", "backend.internal", "proxy-ssl-server-name", "on")},
		tlsEndsIngress{"ca-only", "shop.example.com", "/ca-only", with("proxy-ssl-secret", "prod/ca-only", "proxy-ssl-verify", "on")},
		tlsEndsIngress{"pair-named", "shop.example.com", "/pair-named", with("proxy-ssl-secret", "prod/pair",
			"proxy-ssl-name", "elsewhere.internal", "proxy-ssl-server-name", "on")},
		tlsEndsIngress{"pair", "shop.example.com", "/pair", with("proxy-ssl-secret", "prod/pair")},
		tlsEndsIngress{"none", "shop.example.com", "/none", with()},
	)
	res := compile.Compile(snap, compile.Options{AllowLoopbackEndpoints: true})
	r := router.New(router.Options{Logger: slog.New(slog.DiscardHandler)})
	defer r.CloseIdleConnections()
	r.Publish(res.Table)

	checkTLSEnds(t, r, "", []tlsEndsAnswer{
		{"/server", 200, "sni=backend.internal client=ramjet-proxy"},
		// Its own CA and verification; the server's name and client
		// certificate; no SNI, its own proxy_ssl_server_name off.
		{"/ca-only", 200, "sni= client=ramjet-proxy"},
		// No ca.crt: the server's CA verifies, against its own name,
		// which the backend's certificate does not carry.
		{"/pair-named", 502, ""},
		{"/pair", 200, "sni= client=ramjet-proxy"},
		// No Secret of its own: every directive is the server's.
		{"/none", 200, "sni=backend.internal client=ramjet-proxy"},
	})

	// proxy-ssl-location-only "true": nginx.tmpl writes no server level,
	// so each location has its own directives and nginx's defaults.
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ingress", Name: "nginx"},
		Data: map[string]string{"proxy-ssl-location-only": "true"}}
	res = compile.Compile(snap, compile.Options{AllowLoopbackEndpoints: true, ConfigMap: compile.ParseConfigMap(cm)})
	for _, w := range res.Warnings {
		assert.NotEqual(t, "ConfigMap", w.Object.Kind, "the key is served: %v", w)
	}
	r.Publish(res.Table)
	checkTLSEnds(t, r, "location only ", []tlsEndsAnswer{
		{"/server", 200, "sni=backend.internal client=ramjet-proxy"},
		// Verified against upstream_balancer, which the certificate
		// does not name.
		{"/ca-only", 502, ""},
		{"/pair-named", 200, "sni=elsewhere.internal client=none"},
		{"/pair", 200, "sni= client=none"},
		{"/none", 200, "sni= client=none"},
	})
}

// proxy-ssl-name may name the request's $host, as nginx's proxy_ssl_name
// takes variables: each request's backend certificate is verified against,
// and SNI names, the host the client asked for. A variable the router
// cannot expand is not sent as written: it warns and the default applies.
func TestBackendTLSNameFromHost(t *testing.T) {
	ca := newTestCA(t, "upstream CA")
	serverPair, _, _ := ca.issue(t, pkix.Name{CommonName: "backend"}, "api.example.com", "web.example.com")
	backend := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = fmt.Fprintf(w, "sni=%s", r.TLS.ServerName)
	}))
	backend.TLS = &tls.Config{Certificates: []tls.Certificate{serverPair}}
	backend.Config.ErrorLog = log.New(io.Discard, "", 0)
	backend.StartTLS()
	defer backend.Close()

	ann := func(name string) map[string]string {
		return map[string]string{"backend-protocol": "HTTPS", "proxy-ssl-secret": "prod/upstream", "proxy-ssl-verify": "on",
			"proxy-ssl-server-name": "on", "proxy-ssl-name": name}
	}
	snap := tlsEndsManifests(t, backend.Listener.Addr().String(), map[string]map[string][]byte{"upstream": {"ca.crt": ca.pem}},
		tlsEndsIngress{"api", "api.example.com", "/", ann("$host")},
		tlsEndsIngress{"web", "web.example.com", "/", ann("${host}")},
		tlsEndsIngress{"other", "other.example.com", "/", ann("$http_x_name")},
	)
	res := compile.Compile(snap, compile.Options{AllowLoopbackEndpoints: true})
	var rejected []string
	for _, w := range res.Warnings {
		if w.Reason == compile.AnnotationRejected {
			rejected = append(rejected, w.Object.String()+" "+w.Field)
		}
	}
	assert.Equal(t, []string{"Ingress prod/other metadata.annotations[nginx.ingress.kubernetes.io/proxy-ssl-name]"}, rejected)
	r := router.New(router.Options{Logger: slog.New(slog.DiscardHandler)})
	defer r.CloseIdleConnections()
	r.Publish(res.Table)

	for _, tt := range []struct {
		host string
		code int
		body string
	}{
		{"api.example.com", 200, "sni=api.example.com"},
		{"API.example.com:443", 200, "sni=api.example.com"},
		{"web.example.com", 200, "sni=web.example.com"},
		{"api.example.com", 200, "sni=api.example.com"},
		// The default name, upstream_balancer, which the certificate
		// does not name.
		{"other.example.com", 502, ""},
	} {
		code, body := serveThrough(t, r, tt.host, "/")
		assert.Equal(t, tt.code, code, "%s: %s", tt.host, body)
		assert.Contains(t, body, tt.body, "%s", tt.host)
	}
}

// The TLS listener asks for a client certificate on the hosts that want
// one, by SNI, and each answer and header is ingress-nginx's
// (test/e2e/annotations/authtls.go).
func TestClientCertificates(t *testing.T) {
	ca, other := newTestCA(t, "client CA"), newTestCA(t, "stranger CA")
	alice, _, _ := ca.issue(t, pkix.Name{CommonName: "alice", Organization: []string{"shop"}})
	mallory, _, _ := other.issue(t, pkix.Name{CommonName: "mallory"})
	// Attributes crypto/x509's Name drops or renames, and a second CN.
	dave, _, _ := ca.issue(t, pkix.Name{ExtraNames: []pkix.AttributeTypeAndValue{
		{Type: asn1.ObjectIdentifier{0, 9, 2342, 19200300, 100, 1, 25}, Value: "com"},
		{Type: asn1.ObjectIdentifier{0, 9, 2342, 19200300, 100, 1, 25}, Value: "example"},
		{Type: asn1.ObjectIdentifier{2, 5, 4, 3}, Value: "dave"},
		{Type: asn1.ObjectIdentifier{2, 5, 4, 3}, Value: "admin"},
		{Type: asn1.ObjectIdentifier{2, 5, 4, 5}, Value: "42"},
		{Type: asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 1}, Value: "dave@example.com"},
	}})

	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for _, h := range []string{"ssl-client-verify", "ssl-client-subject-dn", "ssl-client-issuer-dn", "ssl-client-cert"} {
			_, _ = fmt.Fprintf(w, "%s=%s\n", h, r.Header.Get(h))
		}
		_, _ = fmt.Fprintf(w, "request=%s %s\n", r.Method, r.RequestURI)
	}))
	defer backend.Close()
	secrets := map[string]map[string][]byte{"client-ca": {"ca.crt": ca.pem}}
	auth := func(kv ...string) map[string]string {
		m := map[string]string{"auth-tls-secret": "prod/client-ca"}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	snap := tlsEndsManifests(t, backend.Listener.Addr().String(), secrets,
		tlsEndsIngress{"required", "required.example.com", "/", auth("auth-tls-pass-certificate-to-upstream", "true")},
		tlsEndsIngress{"optional", "optional.example.com", "/", auth("auth-tls-verify-client", "optional")},
		tlsEndsIngress{"no-ca", "noca.example.com", "/", auth("auth-tls-verify-client", "optional_no_ca")},
		tlsEndsIngress{"cn", "cn.example.com", "/", auth("auth-tls-match-cn", "CN=(bob|carol)")},
		tlsEndsIngress{"cn-ok", "cnok.example.com", "/", auth("auth-tls-match-cn", "CN=(bob|alice)")},
		tlsEndsIngress{"page", "page.example.com", "/", auth("auth-tls-error-page", "https://errors.example.com/cert")},
		tlsEndsIngress{"page-path", "pagepath.example.com", "/", auth("auth-tls-error-page", "/cert-error")},
		tlsEndsIngress{"page-path-cn", "pagepathcn.example.com", "/", auth("auth-tls-error-page", "/cert-error", "auth-tls-match-cn", "CN=alice")},
		tlsEndsIngress{"broken", "broken.example.com", "/", map[string]string{"auth-tls-secret": "prod/absent"}},
		tlsEndsIngress{"open", "open.example.com", "/", nil},
	)
	res := compile.Compile(snap, compile.Options{AllowLoopbackEndpoints: true})
	r := router.New(router.Options{Logger: slog.New(slog.DiscardHandler)})
	r.Publish(res.Table)

	ln, err := tls.Listen("tcp", "127.0.0.1:0", r.TLSConfig())
	require.NoError(t, err)
	srv := &http.Server{Handler: r, ReadHeaderTimeout: 5 * time.Second, ErrorLog: log.New(io.Discard, "", 0)}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	front := ln.Addr().String()

	// get asks for host over a connection of its own, presenting cert
	// (nil for none) if asked; asked reports whether the server asked.
	get := func(host string, cert *tls.Certificate, header http.Header) (code int, body, location string, asked bool) {
		t.Helper()
		tr := &http.Transport{TLSClientConfig: &tls.Config{ServerName: host, InsecureSkipVerify: true,
			GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
				asked = true
				if cert == nil {
					return &tls.Certificate{}, nil
				}
				return cert, nil
			}}}
		defer tr.CloseIdleConnections()
		req, err := http.NewRequest(http.MethodGet, "https://"+front+"/", nil)
		require.NoError(t, err)
		req.Host = host
		for k, v := range header {
			req.Header[k] = v
		}
		client := &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		res, err := client.Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		return res.StatusCode, string(b), res.Header.Get("Location"), asked
	}

	code, body, _, asked := get("required.example.com", &alice, http.Header{"Ssl-Client-Verify": {"forged"}})
	assert.True(t, asked, "the handshake asks for a certificate")
	assert.Equal(t, 200, code, body)
	assert.Contains(t, body, "ssl-client-verify=SUCCESS\n")
	assert.Contains(t, body, "ssl-client-subject-dn=CN=alice,O=shop\n")
	assert.Contains(t, body, "ssl-client-issuer-dn=CN=client CA\n")
	assert.Contains(t, body, "ssl-client-cert=-----BEGIN%20CERTIFICATE-----%0A", "URL-escaped PEM")

	code, body, _, _ = get("required.example.com", &dave, nil)
	assert.Equal(t, 200, code, body)
	assert.Contains(t, body, "ssl-client-subject-dn=emailAddress=dave@example.com,serialNumber=42,CN=admin,CN=dave,DC=example,DC=com\n",
		"every attribute, as OpenSSL's RFC 2253 rendering names and orders them")

	code, body, _, _ = get("required.example.com", nil, nil)
	assert.Equal(t, 400, code)
	assert.Contains(t, body, "No required SSL certificate was sent")
	code, body, _, _ = get("required.example.com", &mallory, nil)
	assert.Equal(t, 400, code)
	assert.Contains(t, body, "The SSL certificate error")

	code, body, _, _ = get("optional.example.com", nil, nil)
	assert.Equal(t, 200, code, body)
	assert.Contains(t, body, "ssl-client-verify=NONE\n")
	assert.Contains(t, body, "ssl-client-cert=\n", "not passed without pass-certificate-to-upstream")
	code, _, _, _ = get("optional.example.com", &mallory, nil)
	assert.Equal(t, 400, code)
	code, body, _, _ = get("optional.example.com", &alice, nil)
	assert.Equal(t, 200, code)
	assert.Contains(t, body, "ssl-client-verify=SUCCESS\n")

	code, body, _, _ = get("noca.example.com", &mallory, nil)
	assert.Equal(t, 200, code, body)
	assert.Contains(t, body, "ssl-client-verify=FAILED:unable to get local issuer certificate\n")
	assert.Contains(t, body, "ssl-client-subject-dn=CN=mallory\n")
	// OpenSSL's reasons for the chains optional_no_ca lets through
	// (X509_verify_cert_error_string, as openssl verify prints them).
	selfie := newTestCA(t, "selfie")
	selfSigned := tls.Certificate{Certificate: [][]byte{selfie.cert.Raw}, PrivateKey: selfie.key}
	code, body, _, _ = get("noca.example.com", &selfSigned, nil)
	assert.Equal(t, 200, code, body)
	assert.Contains(t, body, "ssl-client-verify=FAILED:self-signed certificate\n")
	withRoot := mallory
	withRoot.Certificate = [][]byte{mallory.Certificate[0], other.cert.Raw}
	code, body, _, _ = get("noca.example.com", &withRoot, nil)
	assert.Equal(t, 200, code, body)
	assert.Contains(t, body, "ssl-client-verify=FAILED:self-signed certificate in certificate chain\n")

	code, body, _, _ = get("cn.example.com", &alice, nil)
	assert.Equal(t, 403, code)
	assert.Contains(t, body, "client certificate unauthorized")
	code, _, _, _ = get("cnok.example.com", &alice, nil)
	assert.Equal(t, 200, code)

	code, _, location, _ := get("page.example.com", nil, nil)
	assert.Equal(t, 302, code)
	assert.Equal(t, "https://errors.example.com/cert", location)

	// A path is nginx's "error_page 495 496 = /path": an internal
	// redirect, served by the host's location for it (GET, no query),
	// with the status of its answer and the certificate judged once; a
	// redirect to it would be answered the same way, again and again.
	code, body, location, _ = get("pagepath.example.com", nil, nil)
	assert.Equal(t, 200, code, body)
	assert.Empty(t, location)
	assert.Contains(t, body, "request=GET /cert-error\n")
	assert.Contains(t, body, "ssl-client-verify=NONE\n")
	code, body, _, _ = get("pagepath.example.com", &mallory, nil)
	assert.Equal(t, 200, code, body)
	assert.Contains(t, body, "ssl-client-verify=FAILED:unable to get local issuer certificate\n")
	assert.Contains(t, body, "ssl-client-subject-dn=CN=mallory\n")
	code, body, _, _ = get("pagepath.example.com", &alice, nil)
	assert.Equal(t, 200, code, body)
	assert.Contains(t, body, "request=GET /\n", "a valid certificate is served where it asked")
	code, body, _, _ = get("pagepathcn.example.com", nil, nil)
	assert.Equal(t, 403, code, "the server's match-cn test runs on the redirected request: %s", body)

	code, _, _, asked = get("broken.example.com", &alice, nil)
	assert.Equal(t, 403, code, "a Secret that cannot be used closes the host")
	assert.False(t, asked)

	// A connection made for another host (as HTTP/2 reuses one) reaches
	// a host that wants a certificate: 421, nginx's answer, so the client
	// opens one of its own.
	conn, err := tls.Dial("tcp", front, &tls.Config{ServerName: "open.example.com", InsecureSkipVerify: true, NextProtos: []string{"http/1.1"}})
	require.NoError(t, err)
	defer conn.Close()
	_, err = io.WriteString(conn, "GET / HTTP/1.1\r\nHost: required.example.com\r\nConnection: close\r\n\r\n")
	require.NoError(t, err)
	misdirected, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err)
	misdirected.Body.Close()
	assert.Equal(t, http.StatusMisdirectedRequest, misdirected.StatusCode)

	code, body, _, asked = get("open.example.com", &alice, http.Header{"Ssl-Client-Verify": {"forged"}})
	assert.False(t, asked, "a host without auth-tls asks for no certificate")
	assert.Equal(t, 200, code)
	assert.Contains(t, body, "ssl-client-verify=forged\n", "headers of hosts without auth-tls are the client's own")
}

// TestClientCertificateCRL: the auth-tls-secret's ca.crl is checked as
// nginx's ssl_crl checks it: a revoked client certificate gets the 400 of
// a certificate that does not verify, the others pass; a ca.crl that does
// not parse makes the Secret unusable, 403 to every request of the host,
// as ingress-nginx answers when it cannot configure the CRL.
func TestClientCertificateCRL(t *testing.T) {
	ca := newTestCA(t, "client CA")
	alice, _, _ := ca.issue(t, pkix.Name{CommonName: "alice"})
	bob, _, _ := ca.issue(t, pkix.Name{CommonName: "bob"})
	bobCert, err := x509.ParseCertificate(bob.Certificate[0])
	require.NoError(t, err)
	crl, err := x509.CreateRevocationList(rand.Reader, &x509.RevocationList{
		Number: big.NewInt(1), ThisUpdate: time.Now().Add(-time.Hour), NextUpdate: time.Now().Add(time.Hour),
		RevokedCertificateEntries: []x509.RevocationListEntry{{SerialNumber: bobCert.SerialNumber, RevocationTime: time.Now().Add(-time.Hour)}},
	}, ca.cert, ca.key)
	require.NoError(t, err)
	crlPEM := pem.EncodeToMemory(&pem.Block{Type: "X509 CRL", Bytes: crl})

	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = fmt.Fprintf(w, "ssl-client-verify=%s\n", r.Header.Get("ssl-client-verify"))
	}))
	defer backend.Close()
	secrets := map[string]map[string][]byte{
		"client-ca": {"ca.crt": ca.pem, "ca.crl": crlPEM},
		"bad-crl":   {"ca.crt": ca.pem, "ca.crl": []byte("-----BEGIN X509 CRL-----\nbm90IGEgQ1JM\n-----END X509 CRL-----\n")},
	}
	snap := tlsEndsManifests(t, backend.Listener.Addr().String(), secrets,
		tlsEndsIngress{"checked", "checked.example.com", "/", map[string]string{"auth-tls-secret": "prod/client-ca"}},
		tlsEndsIngress{"broken", "broken.example.com", "/", map[string]string{"auth-tls-secret": "prod/bad-crl"}},
	)
	res := compile.Compile(snap, compile.Options{AllowLoopbackEndpoints: true})
	require.True(t, slices.ContainsFunc(res.Warnings, func(w compile.Warning) bool {
		return w.Reason == compile.SecretInvalid && w.Object.Name == "broken" && strings.Contains(w.Message, "ca.crl")
	}), "%v", res.Warnings)
	r := router.New(router.Options{Logger: slog.New(slog.DiscardHandler)})
	r.Publish(res.Table)
	ln, err := tls.Listen("tcp", "127.0.0.1:0", r.TLSConfig())
	require.NoError(t, err)
	srv := &http.Server{Handler: r, ReadHeaderTimeout: 5 * time.Second, ErrorLog: log.New(io.Discard, "", 0)}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()

	get := func(host string, cert *tls.Certificate) (int, string) {
		t.Helper()
		tr := &http.Transport{TLSClientConfig: &tls.Config{ServerName: host, InsecureSkipVerify: true,
			GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return cert, nil }}}
		defer tr.CloseIdleConnections()
		req, err := http.NewRequest(http.MethodGet, "https://"+ln.Addr().String()+"/", nil)
		require.NoError(t, err)
		req.Host = host
		res, err := (&http.Client{Transport: tr}).Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		return res.StatusCode, string(b)
	}
	code, body := get("checked.example.com", &alice)
	assert.Equal(t, 200, code, body)
	assert.Contains(t, body, "ssl-client-verify=SUCCESS\n")
	code, body = get("checked.example.com", &bob)
	assert.Equal(t, 400, code, "revoked")
	assert.Contains(t, body, "The SSL certificate error")
	code, _ = get("broken.example.com", &alice)
	assert.Equal(t, 403, code)
}

// proxy-ssl-ciphers is read as OpenSSL reads proxy_ssl_ciphers, with the
// parser of ssl-ciphers: "HIGH" offers the CBC-SHA256 suites Go's own
// client default leaves out, "!AESGCM" removes suites, and a list with a
// suite Go lacks warns; one that leaves nothing is refused (nginx: "no
// cipher match") and DEFAULT applies.
func TestBackendTLSCiphers(t *testing.T) {
	ca := newTestCA(t, "upstream CA")
	serverPair, _, _ := ca.issue(t, pkix.Name{CommonName: "backend"}, "backend.internal")
	start := func(suite uint16) *httptest.Server {
		s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.WriteString(w, tls.CipherSuiteName(r.TLS.CipherSuite))
		}))
		s.TLS = &tls.Config{Certificates: []tls.Certificate{serverPair}, MaxVersion: tls.VersionTLS12, CipherSuites: []uint16{suite}}
		s.Config.ErrorLog = log.New(io.Discard, "", 0)
		s.StartTLS()
		t.Cleanup(s.Close)
		return s
	}
	for _, tt := range []struct {
		suite   uint16
		ciphers string
		code    int
		reason  compile.Reason
	}{
		{tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256, "HIGH:!aNULL", 200, ""},
		{tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256, "DEFAULT", 200, ""},
		{tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, "HIGH:!AESGCM", 502, ""},
		{tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, "ECDHE-ECDSA-AES128-GCM-SHA256:DHE-RSA-AES128-GCM-SHA256", 200, compile.AnnotationSubstituted},
		{tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256, "RC4-SHA", 200, compile.AnnotationRejected},
	} {
		backend := start(tt.suite)
		snap := tlsEndsManifests(t, backend.Listener.Addr().String(), map[string]map[string][]byte{"upstream": {"ca.crt": ca.pem}},
			tlsEndsIngress{"web", "shop.example.com", "/", map[string]string{"backend-protocol": "HTTPS", "proxy-ssl-secret": "prod/upstream",
				"proxy-ssl-verify": "on", "proxy-ssl-name": "backend.internal", "proxy-ssl-ciphers": tt.ciphers}})
		res := compile.Compile(snap, compile.Options{AllowLoopbackEndpoints: true})
		var reasons []compile.Reason
		for _, w := range res.Warnings {
			if strings.Contains(w.Field, "proxy-ssl-ciphers") {
				reasons = append(reasons, w.Reason)
			}
		}
		if tt.reason == "" {
			assert.Empty(t, reasons, "%s: %v", tt.ciphers, res.Warnings)
		} else {
			assert.Equal(t, []compile.Reason{tt.reason}, reasons, "%s: %v", tt.ciphers, res.Warnings)
		}
		r := router.New(router.Options{Logger: slog.New(slog.DiscardHandler)})
		r.Publish(res.Table)
		code, body := serveThrough(t, r, "shop.example.com", "/")
		r.CloseIdleConnections()
		assert.Equal(t, tt.code, code, "%s: %s", tt.ciphers, body)
		if tt.code == 200 {
			assert.Equal(t, tls.CipherSuiteName(tt.suite), body, tt.ciphers)
		}
	}
}

// TestClientCertificateResumption: a TLS session resumes only on a host
// with the same client CAs, as nginx's session ID context (the client CA
// names among what ngx_ssl_session_id_context digests) lets OpenSSL resume
// it: a session made before the host wanted a certificate, which holds
// none, is not resumed there, so the handshake asks for one; a session
// made with a certificate resumes with it.
func TestClientCertificateResumption(t *testing.T) {
	ca := newTestCA(t, "client CA")
	alice, _, _ := ca.issue(t, pkix.Name{CommonName: "alice"})
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = fmt.Fprintf(w, "ssl-client-verify=%s\n", r.Header.Get("ssl-client-verify"))
	}))
	defer backend.Close()
	secrets := map[string]map[string][]byte{"client-ca": {"ca.crt": ca.pem}}
	open := compile.Compile(tlsEndsManifests(t, backend.Listener.Addr().String(), secrets,
		tlsEndsIngress{"shop", "shop.example.com", "/", nil}), compile.Options{AllowLoopbackEndpoints: true})
	mtls := compile.Compile(tlsEndsManifests(t, backend.Listener.Addr().String(), secrets,
		tlsEndsIngress{"shop", "shop.example.com", "/", map[string]string{"auth-tls-secret": "prod/client-ca"}}), compile.Options{AllowLoopbackEndpoints: true})

	for _, ver := range []uint16{tls.VersionTLS12, tls.VersionTLS13} {
		for _, tickets := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/tickets=%v", tls.VersionName(ver), tickets), func(t *testing.T) {
				o := router.Options{Logger: slog.New(slog.DiscardHandler)}
				if tickets {
					s, _ := configmap.Parse("ingress-nginx", "ingress-nginx-controller", map[string]string{"ssl-session-tickets": "true"})
					o.ApplyConfigMap(s)
				}
				r := router.New(o)
				r.Publish(open.Table)
				ln, err := tls.Listen("tcp", "127.0.0.1:0", r.TLSConfig())
				require.NoError(t, err)
				srv := &http.Server{Handler: r, ReadHeaderTimeout: 5 * time.Second, ErrorLog: log.New(io.Discard, "", 0)}
				go func() { _ = srv.Serve(ln) }()
				defer srv.Close()
				sessions := tls.NewLRUClientSessionCache(8)
				get := func() (code int, body string, resumed, asked bool) {
					t.Helper()
					cfg := &tls.Config{ServerName: "shop.example.com", InsecureSkipVerify: true, MaxVersion: ver, ClientSessionCache: sessions,
						GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { asked = true; return &alice, nil }}
					conn, err := tls.Dial("tcp", ln.Addr().String(), cfg)
					require.NoError(t, err)
					defer conn.Close()
					_, err = io.WriteString(conn, "GET / HTTP/1.1\r\nHost: shop.example.com\r\nConnection: close\r\n\r\n")
					require.NoError(t, err)
					res, err := http.ReadResponse(bufio.NewReader(conn), nil)
					require.NoError(t, err)
					b, _ := io.ReadAll(res.Body)
					res.Body.Close()
					return res.StatusCode, string(b), conn.ConnectionState().DidResume, asked
				}
				code, _, _, asked := get()
				require.Equal(t, 200, code)
				require.False(t, asked)
				_, _, resumed, _ := get()
				require.True(t, resumed, "sessions resume")

				r.Publish(mtls.Table)
				code, body, resumed, asked := get()
				assert.False(t, resumed, "a session made without the host's client CAs")
				assert.True(t, asked)
				assert.Equal(t, 200, code, body)
				assert.Contains(t, body, "ssl-client-verify=SUCCESS")
				code, body, resumed, _ = get()
				assert.True(t, resumed, "a session made with them")
				assert.Equal(t, 200, code, body)
				assert.Contains(t, body, "ssl-client-verify=SUCCESS")
			})
		}
	}
}

// tlsEndsAnswer is what a path of shop.example.com answers: its status
// and a part of the body the TLS backend writes.
type tlsEndsAnswer struct {
	path string
	code int
	body string
}

func checkTLSEnds(t *testing.T, r http.Handler, label string, want []tlsEndsAnswer) {
	t.Helper()
	for _, tt := range want {
		code, body := serveThrough(t, r, "shop.example.com", tt.path)
		assert.Equal(t, tt.code, code, "%s%s: %s", label, tt.path, body)
		assert.Contains(t, body, tt.body, "%s%s", label, tt.path)
	}
}
