package router

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/match"
)

var shopHello = tls.ClientHelloInfo{ServerName: "shop.example.com"}

// testCert makes a self-signed certificate for names, valid for an hour,
// with a random serial so that two certificates for one name differ.
func testCert(t testing.TB, names ...string) *tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 64))
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: names[0]},
		DNSNames:     names,
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	leaf, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	return &tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}
}

func TestGetCertificate(t *testing.T) {
	exact := testCert(t, "shop.example.com")
	wild := testCert(t, "*.example.com")
	def := testCert(t, "default.invalid")
	certs := []*match.Certificate{
		{Secret: "prod/shop-tls", Hosts: []string{"shop.example.com"}, Cert: exact},
		{Secret: "prod/wild-tls", Hosts: []string{"*.example.com"}, Cert: wild},
	}
	r := newTestRouter(Options{DefaultCertificate: def})

	got, err := r.GetCertificate(&shopHello)
	require.NoError(t, err)
	assert.Same(t, def, got, "before any table")

	r.Publish(mustTable(match.Spec{Certificates: certs}))
	tests := []struct {
		serverName string
		want       *tls.Certificate
	}{
		{"shop.example.com", exact},
		{"SHOP.Example.COM.", exact},
		{"api.example.com", wild},
		{"a.b.example.com", def},
		{"example.com", def},
		{"other.org", def},
		{"", def},
	}
	for _, tt := range tests {
		t.Run(tt.serverName, func(t *testing.T) {
			got, err := r.GetCertificate(&tls.ClientHelloInfo{ServerName: tt.serverName})
			require.NoError(t, err)
			assert.Same(t, tt.want, got)
		})
	}
}

// A certificate chosen for every name (a Gateway HTTPS listener without a
// hostname) serves a ClientHello without a server name too, before the
// default certificate (SPEC §20).
func TestAnyNameCertificateWithoutSNI(t *testing.T) {
	exact := testCert(t, "shop.example.com")
	any := testCert(t, "gateway.example.com")
	def := testCert(t, "default.invalid")
	r := newTestRouter(Options{DefaultCertificate: def})
	r.Publish(mustTable(match.Spec{Certificates: []*match.Certificate{
		{Secret: "prod/shop-tls", Hosts: []string{"shop.example.com"}, Cert: exact},
		{Secret: "infra/gw-tls", Hosts: []string{match.AnyName}, Cert: any},
	}}))
	for name, want := range map[string]*tls.Certificate{"shop.example.com": exact, "other.org": any, "": any} {
		got, err := r.GetCertificate(&tls.ClientHelloInfo{ServerName: name})
		require.NoError(t, err)
		assert.Same(t, want, got, "server name %q", name)
	}
}

func TestDefaultCertificateGenerated(t *testing.T) {
	r := newTestRouter(Options{})
	c, err := r.GetCertificate(&tls.ClientHelloInfo{ServerName: "anything.example"})
	require.NoError(t, err)
	require.NotNil(t, c)
	require.NotNil(t, c.Leaf)
	assert.Equal(t, "ramjet default certificate", c.Leaf.Subject.CommonName)
	assert.True(t, c.Leaf.NotAfter.After(time.Now().AddDate(1, 0, 0)))
}

// TestTLSListener serves through TLSConfig: the handshake picks the table's
// certificate by SNI, HTTP/2 is negotiated, and the backend is told the
// client came over https.
func TestTLSListener(t *testing.T) {
	_, addr := echoBackend(t, "web")
	exact := testCert(t, "shop.example.com")
	r := newTestRouter(Options{})
	r.Publish(mustTable(match.Spec{
		VirtualHosts: []*match.VirtualHost{vhost("shop.example.com", nil, route(match.Prefix, "/", httpBackend("prod/web:80", addr)))},
		Certificates: []*match.Certificate{{Secret: "prod/shop-tls", Hosts: []string{"shop.example.com"}, Cert: exact}},
	}))

	front := httptest.NewUnstartedServer(r)
	front.TLS = r.TLSConfig()
	front.EnableHTTP2 = true
	ownH2(front.Config)
	front.StartTLS()
	defer front.Close()

	pool := x509.NewCertPool()
	pool.AddCert(exact.Leaf)
	client := &http.Client{Transport: &http.Transport{
		TLSClientConfig:   &tls.Config{RootCAs: pool, ServerName: "shop.example.com"},
		ForceAttemptHTTP2: true,
	}}
	req, err := http.NewRequest(http.MethodGet, front.URL+"/x", nil)
	require.NoError(t, err)
	req.Host = "shop.example.com"
	res, err := client.Do(req)
	require.NoError(t, err, "certificate must verify for shop.example.com")
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	assert.Equal(t, http.StatusOK, res.StatusCode)
	assert.Equal(t, 2, res.ProtoMajor, "h2 by ALPN")
	assert.Equal(t, "https", res.Header.Get("Seen-X-Forwarded-Proto"))
	assert.Equal(t, "/x", res.Header.Get("X-Seen-Uri"))
	assert.Equal(t, "shop.example.com", res.Header.Get("X-Seen-Host"))
}

// TestBackendProtocols proxies to an HTTPS backend (certificate not
// verified), to a GRPC backend over cleartext HTTP/2 and to a GRPCS backend
// over HTTP/2 with TLS, trailers intact.
func TestBackendProtocols(t *testing.T) {
	tlsBackend := httptest.NewTLSServer(echoHandler("tls"))
	defer tlsBackend.Close()

	grpcBackend := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/grpc")
		w.Header().Set("Trailer", "Grpc-Status")
		w.Header().Set("X-Proto", r.Proto)
		w.Header().Set("X-Seen-Uri", r.RequestURI)
		_, _ = w.Write([]byte{0, 0, 0, 0, 0})
		w.Header().Set("Grpc-Status", "0")
	}))
	grpcBackend.Config.Protocols = new(http.Protocols)
	grpcBackend.Config.Protocols.SetUnencryptedHTTP2(true)
	grpcBackend.Start()
	defer grpcBackend.Close()

	grpcsBackend := httptest.NewUnstartedServer(grpcBackend.Config.Handler)
	grpcsBackend.EnableHTTP2 = true
	grpcsBackend.StartTLS()
	defer grpcsBackend.Close()

	tlsAddr := tlsBackend.Listener.Addr().String()
	grpcAddr := grpcBackend.Listener.Addr().String()
	grpcsAddr := grpcsBackend.Listener.Addr().String()
	r := newTestRouter(Options{})
	r.Publish(table("d", vhost("", nil,
		route(match.Prefix, "/secure", backend("prod/tls:443", match.HTTPS, match.Serving, tlsAddr)),
		route(match.Prefix, "/pkg.Greeter", backend("prod/grpc:50051", match.GRPC, match.Serving, grpcAddr)),
		route(match.Prefix, "/pkg.Secure", backend("prod/grpcs:50051", match.GRPCS, match.Serving, grpcsAddr)))))

	res := serve(r, http.MethodGet, "web", "/secure/a?b", nil)
	assert.Equal(t, http.StatusOK, res.StatusCode)
	assert.Equal(t, "tls\n", body(t, res))
	assert.Equal(t, "/secure/a?b", res.Header.Get("X-Seen-Uri"))

	for _, target := range []string{"/pkg.Greeter/SayHello", "/pkg.Secure/Call"} {
		res = serve(r, http.MethodPost, "web", target,
			http.Header{"Content-Type": {"application/grpc"}, "Te": {"trailers"}})
		assert.Equal(t, http.StatusOK, res.StatusCode, target)
		assert.Equal(t, "HTTP/2.0", res.Header.Get("X-Proto"), target)
		assert.Equal(t, target, res.Header.Get("X-Seen-Uri"))
		assert.Equal(t, "\x00\x00\x00\x00\x00", body(t, res), target)
		assert.Equal(t, "0", res.Trailer.Get("Grpc-Status"), target)
	}

	assert.Zero(t, r.InFlight(tlsAddr))
	assert.Zero(t, r.InFlight(grpcAddr))
	assert.Zero(t, r.InFlight(grpcsAddr))
}

// SetDefaultCertificate's certificate serves every name the table leaves
// to the default, to a client that cannot take it too, as nginx serves
// --default-ssl-certificate whatever the client offers (the self-signed
// RSA stand-in is for New's own certificate only); nil goes back to
// New's.
func TestSetDefaultCertificate(t *testing.T) {
	r := newTestRouter(Options{})
	base := r.DefaultCertificate()
	rsaOnly := &tls.ClientHelloInfo{ServerName: "nowhere.example.com", SupportedVersions: []uint16{tls.VersionTLS12},
		CipherSuites: []uint16{tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256}, SignatureSchemes: []tls.SignatureScheme{tls.PKCS1WithSHA256},
		SupportedCurves: []tls.CurveID{tls.CurveP256}, SupportedPoints: []uint8{0}}
	own := testCert(t, "default.example.com")
	r.SetDefaultCertificate(own)
	require.Same(t, own, r.DefaultCertificate())
	for _, hello := range []*tls.ClientHelloInfo{{ServerName: "nowhere.example.com"}, {}, rsaOnly} {
		got, err := r.GetCertificate(hello)
		require.NoError(t, err)
		require.Same(t, own, got, "hello %q %v", hello.ServerName, hello.CipherSuites)
	}
	r.SetDefaultCertificate(nil)
	require.Same(t, base, r.DefaultCertificate())
	got, err := r.GetCertificate(rsaOnly)
	require.NoError(t, err)
	require.Equal(t, x509.RSA, got.Leaf.PublicKeyAlgorithm, "New's own default has its RSA stand-in again")
}
