package main

import (
	"crypto/tls"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The webhook's certificate comes from a Secret volume, which the kubelet
// rotates by pointing ..data at a new directory: the new pair is served
// once certRecheck has passed, and a pair that does not match (a cert
// written before its key) keeps the last good one.
func TestWebhookCertificateFollowsTheSecretVolume(t *testing.T) {
	_, cert1, key1 := webhookCerts(t)
	_, cert2, key2 := webhookCerts(t)
	dir := t.TempDir()
	version := func(name, cert, key string) {
		require.NoError(t, os.Mkdir(filepath.Join(dir, name), 0o755))
		for _, f := range [][2]string{{cert, "cert"}, {key, "key"}} {
			b, err := os.ReadFile(f[0])
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(filepath.Join(dir, name, f[1]), b, 0o600))
		}
		tmp := filepath.Join(dir, "..data_tmp")
		require.NoError(t, os.Symlink(name, tmp))
		require.NoError(t, os.Rename(tmp, filepath.Join(dir, "..data")))
	}
	version("..v1", cert1, key1)
	for _, f := range []string{"cert", "key"} {
		require.NoError(t, os.Symlink(filepath.Join("..data", f), filepath.Join(dir, f)))
	}
	c, err := newWebhookCertificate(filepath.Join(dir, "cert"), filepath.Join(dir, "key"))
	require.NoError(t, err)
	leaf := func(cert, key string) []byte {
		t.Helper()
		pair, err := tls.LoadX509KeyPair(cert, key)
		require.NoError(t, err)
		return pair.Certificate[0]
	}
	served := func() []byte {
		got, err := c.get(nil)
		require.NoError(t, err)
		return got.Certificate[0]
	}
	require.Equal(t, leaf(cert1, key1), served())

	version("..v2", cert2, key2)
	require.Equal(t, leaf(cert1, key1), served(), "checked at most every certRecheck")
	c.checked = time.Now().Add(-certRecheck)
	require.Equal(t, leaf(cert2, key2), served(), "the rotated pair")

	// A cert without its key: the last good pair stays.
	b, err := os.ReadFile(cert1)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "..v2", "cert"), b, 0o600))
	c.checked = time.Now().Add(-certRecheck)
	require.Equal(t, leaf(cert2, key2), served(), "a mismatched pair is not served")
}
