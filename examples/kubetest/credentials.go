package kubetest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// credentials are the files and secrets one apiserver runs with. Keys are
// ECDSA P-256: generating them takes microseconds, where RSA would add
// noticeable time to every Start.
type credentials struct {
	caPEM       []byte // trust root for the serving certificate
	servingCert string
	servingKey  string
	saPublic    string // verifies service account tokens
	saPrivate   string // signs service account tokens
	tokenFile   string
	token       string // bearer token of the admin user
}

// adminUser is the static-token user; system:masters passes every
// authorization check, so RBAC needs no bindings for it.
const adminUser = "kubetest-admin"

func writeCredentials(dir string) (credentials, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return credentials{}, err
	}
	c := credentials{
		servingCert: filepath.Join(dir, "serving.crt"),
		servingKey:  filepath.Join(dir, "serving.key"),
		saPublic:    filepath.Join(dir, "sa.pub"),
		saPrivate:   filepath.Join(dir, "sa.key"),
		tokenFile:   filepath.Join(dir, "tokens.csv"),
	}

	now := time.Now()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return credentials{}, err
	}
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "kubetest-ca"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return credentials{}, fmt.Errorf("creating CA certificate: %w", err)
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		return credentials{}, err
	}
	c.caPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})

	servingKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return credentials{}, err
	}
	servingTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "kube-apiserver"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		DNSNames:     []string{"localhost"},
	}
	servingDER, err := x509.CreateCertificate(rand.Reader, servingTmpl, caCert, &servingKey.PublicKey, caKey)
	if err != nil {
		return credentials{}, fmt.Errorf("creating serving certificate: %w", err)
	}
	if err := writePEM(c.servingCert, "CERTIFICATE", servingDER); err != nil {
		return credentials{}, err
	}
	if err := writeECKey(c.servingKey, servingKey); err != nil {
		return credentials{}, err
	}

	saKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return credentials{}, err
	}
	saPubDER, err := x509.MarshalPKIXPublicKey(&saKey.PublicKey)
	if err != nil {
		return credentials{}, err
	}
	if err := writePEM(c.saPublic, "PUBLIC KEY", saPubDER); err != nil {
		return credentials{}, err
	}
	if err := writeECKey(c.saPrivate, saKey); err != nil {
		return credentials{}, err
	}

	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		return credentials{}, err
	}
	c.token = hex.EncodeToString(secret)
	// token,user,uid,"group,..." as --token-auth-file expects.
	line := fmt.Sprintf("%s,%s,%s,\"system:masters\"\n", c.token, adminUser, adminUser)
	if err := os.WriteFile(c.tokenFile, []byte(line), 0o600); err != nil {
		return credentials{}, err
	}
	return c, nil
}

func writeECKey(path string, key *ecdsa.PrivateKey) error {
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	return writePEM(path, "EC PRIVATE KEY", der)
}

func writePEM(path, blockType string, der []byte) error {
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: blockType, Bytes: der}), 0o600)
}
