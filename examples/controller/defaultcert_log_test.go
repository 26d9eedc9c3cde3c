package main

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// A --default-ssl-certificate Secret that is missing at start is said to
// leave the self-signed certificate served, not "the previous one", which
// there is none of yet; once one loaded, a Secret that goes keeps it.
func TestDefaultCertificateProblemSaysWhatIsServed(t *testing.T) {
	logs := &syncBuffer{}
	d := newDefaultCertificate(&types.NamespacedName{Namespace: "ingress-nginx", Name: "wildcard"}, slog.New(slog.NewTextHandler(logs, nil)))
	d.update(nil)
	out := logs.String()
	require.Contains(t, out, "default certificate Secret ingress-nginx/wildcard: not found; serving a self-signed certificate made at start", out)
	require.NotContains(t, out, "previous", out)

	sec := rsaSecret(t, "default.test")
	sec.Namespace, sec.Name = "ingress-nginx", "wildcard"
	d.update(sec)
	d.update(&corev1.Secret{Type: corev1.SecretTypeTLS, Data: map[string][]byte{"tls.crt": []byte("x")}})
	out = logs.String()
	last := out[strings.LastIndex(strings.TrimSuffix(out, "\n"), "\n")+1:]
	require.Contains(t, last, "serving the previous one", out)
	require.Contains(t, last, "serving="+d.fingerprint, out)
}
