package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/base64"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"ramjet.dev/ramjet/compile"
)

func TestCompileOptionsDefaultBackendService(t *testing.T) {
	svc := func(ns, name string, ports ...int32) *corev1.Service {
		s := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		for _, p := range ports {
			s.Spec.Ports = append(s.Spec.Ports, corev1.ServicePort{Port: p})
		}
		return s
	}
	ref := &types.NamespacedName{Namespace: "ingress", Name: "fallback"}
	tests := []struct {
		name     string
		ref      *types.NamespacedName
		services []*corev1.Service
		want     *compile.ServiceRef
	}{
		{name: "no flag", ref: nil, services: []*corev1.Service{svc("ingress", "fallback", 80)}, want: nil},
		{name: "first port", ref: ref, services: []*corev1.Service{svc("other", "fallback", 1), svc("ingress", "fallback", 8080, 80)}, want: &compile.ServiceRef{Namespace: "ingress", Name: "fallback", Port: "8080"}},
		{name: "missing Service", ref: ref, services: []*corev1.Service{svc("ingress", "other", 80)}, want: &compile.ServiceRef{Namespace: "ingress", Name: "fallback", Port: firstPortUnknown}},
		{name: "Service without ports", ref: ref, services: []*corev1.Service{svc("ingress", "fallback")}, want: &compile.ServiceRef{Namespace: "ingress", Name: "fallback", Port: firstPortUnknown}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := config{options: compile.Options{IngressClass: "x"}, defaultBackendService: tt.ref}
			got := compileOptions(cfg, tt.services)
			if diff := cmp.Diff(compile.Options{IngressClass: "x", DefaultBackend: tt.want, ExtensionKeys: modSecurityKeys, ReservedPorts: nginxReservedPorts}, got); diff != "" {
				t.Errorf("compileOptions (-want +got):\n%s", diff)
			}
		})
	}
}

// secretManifest is a kubernetes.io/tls Secret t/name holding pair.
func secretManifest(name string, pair map[string][]byte) string {
	return `apiVersion: v1
kind: Secret
metadata:
  name: ` + name + `
  namespace: t
type: kubernetes.io/tls
data:
  tls.crt: ` + base64.StdEncoding.EncodeToString(pair[corev1.TLSCertKey]) + `
  tls.key: ` + base64.StdEncoding.EncodeToString(pair[corev1.TLSPrivateKeyKey]) + `
`
}

// fallbackManifests is Service t/fallback, whose first port leads to the
// loopback backend on port.
func fallbackManifests(port string) string {
	return `apiVersion: v1
kind: Service
metadata:
  name: fallback
  namespace: t
spec:
  ports:
    - name: first
      port: 81
    - name: second
      port: 82
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: fallback-1
  namespace: t
  labels:
    kubernetes.io/service-name: fallback
addressType: IPv4
ports:
  - name: first
    port: ` + port + `
endpoints:
  - addresses: ["127.0.0.1"]
`
}

// tlsIngress lists app.test under spec.tls with no Secret: it is redirected
// to HTTPS and served the default certificate.
const tlsIngress = `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: app-tls
  namespace: t
spec:
  ingressClassName: ramjet
  tls:
    - hosts: [app.test]
`

// servedSerial is the serial number of the certificate the HTTPS listener
// at addr presents for serverName.
func servedSerial(t *testing.T, addr, serverName string) int64 {
	t.Helper()
	conn, err := tls.Dial("tcp", addr, &tls.Config{ServerName: serverName, InsecureSkipVerify: true})
	require.NoError(t, err)
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0].SerialNumber.Int64()
}

// The ingress-nginx flags that change serving, end to end in offline mode:
// --default-backend-service, --default-ssl-certificate (and its rotation),
// --use-forwarded-headers and --health-check-path.
func TestOfflineIngressNginxFlags(t *testing.T) {
	tests := []struct {
		name  string
		tweak func(*config)
		// Expected answers.
		fallback      int   // a host no Ingress names
		defaultSerial int64 // the certificate for an unknown SNI name; 0: not the Secret's
		forwarded     int   // plain HTTP to a TLS host with X-Forwarded-Proto: https
		health        string
	}{
		{
			name:     "flags off",
			tweak:    func(*config) {},
			fallback: http.StatusNotFound, forwarded: http.StatusPermanentRedirect, health: "/healthz",
		},
		{
			name: "flags on",
			tweak: func(c *config) {
				c.defaultBackendService = &types.NamespacedName{Namespace: "t", Name: "fallback"}
				c.defaultCertificate = &types.NamespacedName{Namespace: "t", Name: "default-cert"}
				c.useForwardedHeaders = true
				c.healthPath = "/alive"
			},
			fallback: http.StatusOK, defaultSerial: 1, forwarded: http.StatusOK, health: "/alive",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFile(t, filepath.Join(dir, "app.yaml"), appManifests(namedBackend(t, "A"))+"---\n"+tlsIngress)
			writeFile(t, filepath.Join(dir, "fallback.yaml"), fallbackManifests(namedBackend(t, "F")))
			certFile := filepath.Join(dir, "cert.yaml")
			writeFile(t, certFile, secretManifest("default-cert", selfSignedPair(t, "default.test", 1)))

			cfg := config{
				manifests:    dir,
				httpAddr:     "127.0.0.1:0",
				httpsAddr:    "127.0.0.1:0",
				debugAddr:    "127.0.0.1:0",
				pollInterval: 10 * time.Millisecond,
			}
			tt.tweak(&cfg)
			ctx, cancel := context.WithCancel(context.Background())
			inst, err := start(ctx, cfg, slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
			require.NoError(t, err)
			defer func() {
				cancel()
				require.NoError(t, inst.Wait())
			}()
			client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
			defer client.CloseIdleConnections()

			status, body := get(t, client, "http://"+inst.HTTPAddr+"/x", "unknown.test")
			require.Equal(t, tt.fallback, status, body)
			if tt.fallback == http.StatusOK {
				require.Equal(t, "F /x", body, "the first port of the Service")
			}

			serial := servedSerial(t, inst.HTTPSAddr, "unknown.test")
			if tt.defaultSerial != 0 {
				require.Equal(t, tt.defaultSerial, serial)
				// A rotated Secret is served without a restart.
				writeFile(t, certFile, secretManifest("default-cert", selfSignedPair(t, "default.test", 2)))
				waitFor(t, 5*time.Second, "the rotated default certificate", func() bool {
					return servedSerial(t, inst.HTTPSAddr, "unknown.test") == 2
				})
			} else {
				require.NotEqual(t, int64(1), serial, "the Secret is not served without the flag")
			}

			req, err := http.NewRequest(http.MethodGet, "http://"+inst.HTTPAddr+"/y", nil)
			require.NoError(t, err)
			req.Host = "app.test"
			req.Header.Set("X-Forwarded-Proto", "https")
			resp, err := client.Do(req)
			require.NoError(t, err)
			resp.Body.Close()
			require.Equal(t, tt.forwarded, resp.StatusCode)

			status, body = get(t, client, "http://"+inst.DebugAddr+tt.health, "")
			require.Equal(t, http.StatusOK, status, body)
		})
	}
}

// ssl-reject-handshake "true" with --default-ssl-certificate: a host of
// the table without a certificate of its own still gets the Secret's
// default certificate, and a name no host is for is refused, not given
// the default certificate.
func TestOfflineRejectHandshakeDefaultCertificate(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "app.yaml"), appManifests(namedBackend(t, "A"))+"---\n"+tlsIngress+
		"---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: nginx, namespace: t}\ndata: {ssl-reject-handshake: \"true\"}\n")
	writeFile(t, filepath.Join(dir, "cert.yaml"), secretManifest("default-cert", selfSignedPair(t, "default.test", 1)))
	cfg, err := parseFlags([]string{"-manifests", dir, "-configmap", "t/nginx", "-default-ssl-certificate", "t/default-cert",
		"-http-addr", "127.0.0.1:0", "-https-addr", "127.0.0.1:0", "-debug-addr", "127.0.0.1:0", "-poll-interval", "10ms",
		"-enable-access-log=false"}, &bytes.Buffer{}, func(string) string { return "" })
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	inst, err := start(ctx, cfg, slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	require.NoError(t, err)
	defer func() {
		cancel()
		require.NoError(t, inst.Wait())
	}()
	assert.Equal(t, int64(1), servedSerial(t, inst.HTTPSAddr, "app.test"))
	_, err = tls.Dial("tcp", inst.HTTPSAddr, &tls.Config{ServerName: "unknown.test", InsecureSkipVerify: true})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "unrecognized name")
}

// No TCP or UDP service takes a port of the controller's listeners, the
// admission webhook's among them: it would fail to bind. Nor one that
// ingress-nginx keeps for nginx itself whatever its flags (getStreamServices:
// 442 SSL passthrough, 8181 default server, 10245 profiler, 10246 status,
// 10247 stream), which it refuses ("reserved for the Ingress
// controller"): such an entry never served there, and
// examples/check -translate refuses it too.
func TestCompileOptionsReservedPorts(t *testing.T) {
	cfg := config{httpAddr: ":8080", httpsAddr: ":8443", debugAddr: "127.0.0.1:10254", webhookAddr: ":9443"}
	require.ElementsMatch(t, []int{8080, 8443, 10254, 9443, 442, 8181, 10245, 10246, 10247}, compileOptions(cfg, nil).ReservedPorts)
}
