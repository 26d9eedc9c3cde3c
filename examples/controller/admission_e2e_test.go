package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// take returns the warnings seen so far and forgets them.
func (w *warningRecorder) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.seen
	w.seen = nil
	return out
}

// webhookCerts writes a CA and a serving certificate for 127.0.0.1 signed
// by it; it returns the CA in PEM and the serving pair's file names.
func webhookCerts(t testing.TB) (caPEM []byte, certFile, keyFile string) {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "ramjet admission test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	require.NoError(t, err)
	ca, err := x509.ParseCertificate(caDER)
	require.NoError(t, err)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "ramjet-admission"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore:   time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	require.NoError(t, err)
	keyDER, err := x509.MarshalECPrivateKey(key)
	require.NoError(t, err)
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert"), filepath.Join(dir, "key")
	require.NoError(t, os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600))
	require.NoError(t, os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600))
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), certFile, keyFile
}

// TestE2EAdmission registers the controller's webhook with a real API
// server, as ingress-nginx's chart does, and applies Ingresses through it.
func TestE2EAdmission(t *testing.T) {
	e := startE2E(t)
	ns := e.namespace(t, "admission")
	caPEM, certFile, keyFile := webhookCerts(t)
	tc := e.startController(t, ns, func(c *config) {
		c.webhookAddr, c.webhookCert, c.webhookKey = "127.0.0.1:0", certFile, keyFile
	})
	ctx := context.Background()
	ingress := func(name, host, path string, annotations ...string) *networkingv1.Ingress {
		ing := admissionIngress(name, host, path, annotations...)
		ing.Namespace = ns
		return ing
	}

	// Every client of the test hears the API server's warnings.
	warnings := &warningRecorder{}
	rc := rest.CopyConfig(e.srv.Config)
	rc.WarningHandler = warnings
	client, err := kubernetes.NewForConfig(rc)
	require.NoError(t, err)
	ingresses := client.NetworkingV1().Ingresses(ns)

	_, err = client.CoreV1().Services(ns).Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = ingresses.Create(ctx, ingress("owner", "shop.example.com", "/api"), metav1.CreateOptions{})
	require.NoError(t, err)
	waitFor(t, 10*time.Second, "the reviews to compile against the owner", func() bool {
		src := tc.cluster.admission.latest.Load()
		return src != nil && len(src.snap.Ingresses) == 1 && len(src.snap.Services) == 1
	})

	fail := admissionregistrationv1.Ignore
	none := admissionregistrationv1.SideEffectClassNone
	url := "https://" + tc.WebhookAddr + "/networking/v1/ingresses"
	timeout := int32(5)
	_, err = client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "ramjet-admission"},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name:                    "validate.ramjet.dev",
			ClientConfig:            admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: caPEM},
			Rules:                   []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update}, Rule: admissionregistrationv1.Rule{APIGroups: []string{"networking.k8s.io"}, APIVersions: []string{"v1"}, Resources: []string{"ingresses"}}}},
			FailurePolicy:           &fail,
			SideEffects:             &none,
			AdmissionReviewVersions: []string{"v1"},
			TimeoutSeconds:          &timeout,
		}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)

	// The API server takes up the configuration on its own time: a dry
	// run of a refused Ingress tells when.
	bad := ingress("bad", "shop.example.com", "/cart", "nginx.ingress.kubernetes.io/load-balance", "random")
	waitFor(t, 20*time.Second, "the webhook to be called", func() bool {
		_, err := ingresses.Create(ctx, bad, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err != nil
	})
	warnings.take()

	t.Run("a good Ingress is admitted without a warning", func(t *testing.T) {
		_, err := ingresses.Create(ctx, ingress("good", "shop.example.com", "/cart"), metav1.CreateOptions{})
		require.NoError(t, err)
		require.Empty(t, warnings.take())
	})
	t.Run("a rejected annotation value is refused, naming it", func(t *testing.T) {
		_, err := ingresses.Create(ctx, bad, metav1.CreateOptions{})
		require.Error(t, err)
		require.Contains(t, err.Error(), `admission webhook "validate.ramjet.dev" denied the request: annotation nginx.ingress.kubernetes.io/load-balance contains invalid value`)
		warnings.take()
	})
	t.Run("a host/path another Ingress owns is refused as ingress-nginx refuses it", func(t *testing.T) {
		_, err := ingresses.Create(ctx, ingress("dup", "shop.example.com", "/api"), metav1.CreateOptions{})
		require.Error(t, err)
		require.Contains(t, err.Error(), `denied the request: host "shop.example.com" and path "/api" is already defined in ingress admission/owner`)
		warnings.take()
		// Its owner may change it.
		owner, err := ingresses.Get(ctx, "owner", metav1.GetOptions{})
		require.NoError(t, err)
		owner.Labels = map[string]string{"edited": "yes"}
		_, err = ingresses.Update(ctx, owner, metav1.UpdateOptions{})
		require.NoError(t, err)
	})
	t.Run("a cosmetic finding is admitted with its warning", func(t *testing.T) {
		_, err := ingresses.Create(ctx, ingress("cosmetic", "shop.example.com", "/x", "nginx.ingress.kubernetes.io/use-forwarded-headers", "true"), metav1.CreateOptions{})
		require.NoError(t, err)
		got := warnings.take()
		require.Len(t, got, 1, "%q", got)
		require.True(t, strings.HasPrefix(got[0], "AnnotationUnsupported metadata.annotations[nginx.ingress.kubernetes.io/use-forwarded-headers]: "), got[0])
	})
	t.Run("a webhook that is down does not block the API server under failurePolicy Ignore", func(t *testing.T) {
		tc.stop(t)
		_, err := ingresses.Create(ctx, bad, metav1.CreateOptions{})
		require.NoError(t, err, "the webhook is down and the API server admits")
	})
}
