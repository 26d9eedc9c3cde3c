package main

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// auth-proxy-set-headers names a ConfigMap in the Ingress's namespace,
// which ingress-nginx's store watches with every other ConfigMap: in a
// cluster the compile finds it, and follows its changes, as it does
// offline.
func TestClusterAuthProxySetHeadersConfigMap(t *testing.T) {
	e := startE2E(t)
	ns := e.namespace(t, "authhdrs")
	ctx := context.Background()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "auth-hdrs"}, Data: map[string]string{"X-Tenant": "blue"}}
	_, err := e.client.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{})
	require.NoError(t, err)
	ing := newIngress(ns, "app", "ramjet", "app.test", "web", "/")
	ing.Annotations = map[string]string{
		"nginx.ingress.kubernetes.io/auth-url":               "http://auth.example/ok",
		"nginx.ingress.kubernetes.io/auth-proxy-set-headers": ns + "/auth-hdrs",
	}
	e.createIngress(t, ing)
	tc := e.startController(t, ns, nil)
	tenant := func() string {
		r := tc.router.Table().Lookup("app.test", "/").Route
		if r == nil || r.Auth == nil || r.Auth.Denied != "" || r.Auth.External == nil || r.Auth.External.Options == nil ||
			len(r.Auth.External.Options.ProxySetHeaders) != 1 {
			return "denied or missing"
		}
		return r.Auth.External.Options.ProxySetHeaders[0].Value.Raw
	}
	waitFor(t, firstTableTimeout, "the auth headers ConfigMap to be read", func() bool { return tenant() == "blue" },
		func() string { return tenant() })
	cm.Data["X-Tenant"] = "green"
	_, err = e.client.CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{})
	require.NoError(t, err)
	waitFor(t, firstTableTimeout, "the auth headers ConfigMap's change to be followed", func() bool { return tenant() == "green" },
		func() string { return tenant() })
}

// add-headers may name a ConfigMap in a watched namespace other than the
// -configmap ConfigMap's, as ingress-nginx's store finds any it watches.
func TestClusterAddHeadersOtherNamespace(t *testing.T) {
	e := startE2E(t)
	ns := e.namespace(t, "addhdrs")
	ctl := e.namespace(t, "addhdrs-ctl")
	ctx := context.Background()
	_, err := e.client.CoreV1().ConfigMaps(ctl).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ctl, Name: "nginx"},
		Data: map[string]string{"add-headers": ns + "/resp-hdrs"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = e.client.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "resp-hdrs"},
		Data: map[string]string{"X-Team": "edge"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	tc := e.startController(t, ns, func(c *config) { c.configMap = &types.NamespacedName{Namespace: ctl, Name: "nginx"} })
	tc.settle(t)
	status, body := get(t, tc.http, "http://"+tc.DebugAddr+"/debug/warnings", "")
	require.Equal(t, 200, status)
	require.NotContains(t, body, "resp-hdrs is not found")
	require.NotContains(t, body, "data[add-headers]")
}
