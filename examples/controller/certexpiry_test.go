package main

import (
	"context"
	"encoding/base64"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// tlsIngressManifests is an Ingress for host whose spec.tls names the
// Secret secret, carrying a certificate for host valid until notAfter.
func tlsIngressManifests(t *testing.T, name, host string, notAfter time.Time) string {
	s := tlsSecret(t, "t", name+"-tls", notAfter, host)
	return fmt.Sprintf(`---
apiVersion: v1
kind: Secret
type: kubernetes.io/tls
metadata: {name: %s-tls, namespace: t}
data:
  tls.crt: %s
  tls.key: %s
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: %s, namespace: t}
spec:
  ingressClassName: ramjet
  tls: [{hosts: [%s], secretName: %s-tls}]
  rules:
  - host: %s
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: app, port: {number: 80}}}}
`, name, base64.StdEncoding.EncodeToString(s.Data["tls.crt"]), base64.StdEncoding.EncodeToString(s.Data["tls.key"]), name, host, name, host)
}

// As ingress-nginx's createServers, an expired certificate, and one that
// expires within 10 days, is served with a warning naming the host, the
// Secret and the expiry; a certificate with longer to live logs nothing.
func TestCertificateExpiryLogged(t *testing.T) {
	now := time.Now()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "app.yaml"), appManifests("1")+
		tlsIngressManifests(t, "old", "old.test", now.Add(-time.Hour))+
		tlsIngressManifests(t, "soon", "soon.test", now.Add(5*24*time.Hour))+
		tlsIngressManifests(t, "fine", "fine.test", now.Add(30*24*time.Hour)))
	logs := &syncBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	inst, err := start(ctx, config{manifests: dir, httpAddr: "127.0.0.1:0", pollInterval: time.Hour}, slog.New(slog.NewTextHandler(logs, nil)))
	require.NoError(t, err)
	defer func() { cancel(); _ = inst.Wait() }()

	out := logs.String()
	var expired, expiring []string
	for line := range strings.Lines(out) {
		switch {
		case strings.Contains(line, `msg="TLS certificate expired"`):
			expired = append(expired, line)
		case strings.Contains(line, `msg="TLS certificate expires within 10 days"`):
			expiring = append(expiring, line)
		}
	}
	require.Len(t, expired, 1, out)
	require.Contains(t, expired[0], "level=WARN")
	require.Contains(t, expired[0], "host=old.test")
	require.Contains(t, expired[0], "secret=t/old-tls")
	require.Contains(t, expired[0], "notAfter=")
	require.Len(t, expiring, 1, out)
	require.Contains(t, expiring[0], "level=WARN")
	require.Contains(t, expiring[0], "host=soon.test")
	require.Contains(t, expiring[0], "secret=t/soon-tls")
	require.NotContains(t, out, "fine.test")

	// An unchanged table logs nothing again.
	n := logs.count("TLS certificate expire")
	inst.offline.poll()
	inst.offline.poll()
	require.Equal(t, n, logs.count("TLS certificate expire"))
}
