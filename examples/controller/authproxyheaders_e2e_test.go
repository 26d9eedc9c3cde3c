package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestE2EAuthProxySetHeaders: auth-proxy-set-headers names a ConfigMap of
// the Ingress's namespace, which the controller watches as ingress-nginx
// does (its store's ConfigMap informer covers the watched namespaces):
// the auth service gets its headers, and an edit of the ConfigMap reaches
// the next subrequest without a restart.
func TestE2EAuthProxySetHeaders(t *testing.T) {
	auth := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Tenant") != "blue" {
			w.WriteHeader(http.StatusUnauthorized)
		}
	}))
	t.Cleanup(auth.Close)
	u, err := url.Parse(auth.URL)
	require.NoError(t, err)
	e := startE2E(t)
	ctx := context.Background()
	ns := e.namespace(t, "authheaders")
	tc := e.startController(t, ns, nil)
	e.app(t, ns, "a", backendPort(t, namedBackend(t, "A")))
	var cm *corev1.ConfigMap
	cm, err = e.client.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "auth-headers", Namespace: ns},
		Data:       map[string]string{"X-Tenant": "blue"},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	ing := newIngress(ns, "app", "ramjet", "app.test", "a", "/")
	ing.Annotations = map[string]string{
		// The test transport dials testNet's addresses on loopback.
		"nginx.ingress.kubernetes.io/auth-url":               "http://" + testEndpoint + ":" + u.Port() + "/check",
		"nginx.ingress.kubernetes.io/auth-proxy-set-headers": ns + "/auth-headers",
	}
	e.createIngress(t, ing)
	tc.waitAnswer(t, "app.test", "/", http.StatusOK, "A /")

	cm.Data["X-Tenant"] = "green"
	_, err = e.client.CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{})
	require.NoError(t, err)
	tc.waitAnswer(t, "app.test", "/", http.StatusUnauthorized, "")
}
