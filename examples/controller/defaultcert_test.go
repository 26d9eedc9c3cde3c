package main

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"log/slog"
	"math/big"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"ramjet.dev/ramjet/router"
)

// rsaSecret is a kubernetes.io/tls Secret holding a self-signed RSA
// certificate for name.
func rsaSecret(t *testing.T, name string) *corev1.Secret {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: name}, DNSNames: []string{name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	return &corev1.Secret{Type: corev1.SecretTypeTLS, Data: map[string][]byte{
		corev1.TLSCertKey:       pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		corev1.TLSPrivateKeyKey: pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}),
	}}
}

// The --default-ssl-certificate Secret is served wherever the router
// would serve its own default: to a client that cannot take the router's
// self-signed ECDSA certificate too (TLS 1.2 with RSA suites only, as an
// ssl-ciphers list of ECDHE-RSA suites leaves every client), which the
// router would give its self-signed RSA one.
func TestDefaultCertificateServedToRSAOnlyClients(t *testing.T) {
	rt := router.New(router.Options{Logger: slog.New(slog.DiscardHandler)})
	d := newDefaultCertificate(&types.NamespacedName{Namespace: "ingress", Name: "default-cert"}, slog.New(slog.DiscardHandler))
	d.update(rsaSecret(t, "default.example.com"))
	own := d.cur.Load()
	require.NotNil(t, own)
	d.serveBy(rt)
	cfg := rt.TLSConfig()
	ln, err := tls.Listen("tcp", "127.0.0.1:0", cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				_ = c.(*tls.Conn).Handshake()
				_ = c.Close()
			}()
		}
	}()
	for _, client := range []*tls.Config{
		{MinVersion: tls.VersionTLS13},
		{MaxVersion: tls.VersionTLS12, CipherSuites: []uint16{tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256}},
	} {
		client.ServerName, client.InsecureSkipVerify = "nowhere.example.com", true
		conn, err := tls.Dial("tcp", ln.Addr().String(), client)
		require.NoError(t, err)
		got := conn.ConnectionState().PeerCertificates[0]
		_ = conn.Close()
		require.True(t, bytes.Equal(own.Certificate[0], got.Raw), "the client offering %v got %q", client.CipherSuites, got.Subject)
	}
	// A rotated Secret serves from the next handshake on.
	d.update(rsaSecret(t, "rotated.example.com"))
	require.NotSame(t, own, d.cur.Load())
	conn, err := tls.Dial("tcp", ln.Addr().String(), &tls.Config{ServerName: "nowhere.example.com", InsecureSkipVerify: true})
	require.NoError(t, err)
	defer conn.Close()
	require.Equal(t, "rotated.example.com", conn.ConnectionState().PeerCertificates[0].Subject.CommonName)
}
