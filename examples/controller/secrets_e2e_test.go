package main

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ingress-nginx's store watches Secrets of every type but Helm's release
// records, and its parsers read an auth-secret of any type: one of type
// kubernetes.io/basic-auth with an auth key protects the paths, and its
// webhook, finding it, goes on to validate auth-realm.
func TestClusterSecretsOfEveryType(t *testing.T) {
	e := startE2E(t)
	ns := e.namespace(t, "secrettypes")
	ctx := context.Background()
	e.app(t, ns, "a", backendPort(t, namedBackend(t, "A")))
	for _, sec := range []*corev1.Secret{{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "htpasswd"},
		Type:       corev1.SecretTypeBasicAuth,
		Data:       map[string][]byte{"username": []byte("alice"), "password": []byte("pw"), "auth": []byte("alice:{PLAIN}pw\n")},
	}, {
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "sh.helm.release.v1.app.v1"},
		Type:       "helm.sh/release.v1",
		Data:       map[string][]byte{"release": []byte("H4sI")},
	}} {
		_, err := e.client.CoreV1().Secrets(ns).Create(ctx, sec, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	ing := newIngress(ns, "private", "ramjet", "private.test", "a", "/")
	ing.Annotations = map[string]string{
		"nginx.ingress.kubernetes.io/auth-type":   "basic",
		"nginx.ingress.kubernetes.io/auth-secret": "htpasswd",
	}
	e.createIngress(t, ing)
	tc := e.startController(t, ns, nil)
	tc.settle(t)

	var names []string
	for _, sec := range tc.cluster.snapshot().Secrets {
		names = append(names, sec.Name)
	}
	require.Equal(t, []string{"htpasswd"}, names, "Helm's release records stay out of memory")

	login := func(password string) int { return tc.login(t, "private.test", password) }
	require.Equal(t, http.StatusOK, login("pw"))
	require.Equal(t, http.StatusUnauthorized, login("wrong"))

	a := newAdmission(config{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	a.offer(&reviewSource{snap: tc.cluster.snapshot()})
	realm := ing.DeepCopy()
	realm.Annotations["nginx.ingress.kubernetes.io/auth-realm"] = "Log in!"
	refused := ingressReview(t, a, admissionv1.Update, realm)
	require.False(t, refused.Allowed, "the Secret found, auth-realm is validated")
	require.Equal(t, "annotation nginx.ingress.kubernetes.io/auth-realm contains invalid value", refused.Result.Message)
}
