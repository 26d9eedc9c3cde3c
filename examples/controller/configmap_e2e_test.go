package main

import (
	"context"
	"crypto/tls"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// TestE2EConfigMap: on a real API server, editing the -configmap
// ConfigMap's ssl-redirect, hsts, proxy-body-size (a location default)
// and limit-req-status-code (a router key) changes the answers without a
// restart; editing a key read at start (use-proxy-protocol) is a warning
// on /debug/warnings.
func TestE2EConfigMap(t *testing.T) {
	e := startE2E(t)
	ctx := context.Background()
	ns := e.namespace(t, "configmap")
	cm, err := e.client.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "nginx", Namespace: ns},
		Data:       map[string]string{"ssl-redirect": "false", "hsts-max-age": "600", "worker-processes": "4"},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	tc := e.startController(t, ns, func(c *config) {
		c.httpsAddr = "127.0.0.1:0"
		c.configMap = &types.NamespacedName{Namespace: ns, Name: "nginx"}
	})
	tc.http.Transport = &http.Transport{TLSClientConfig: &tls.Config{ServerName: "app.test", InsecureSkipVerify: true}}
	tc.http.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	e.app(t, ns, "a", backendPort(t, namedBackend(t, "A")))
	ing := newIngress(ns, "app", "ramjet", "app.test", "a", "/")
	ing.Spec.TLS = []networkingv1.IngressTLS{{Hosts: []string{"app.test"}}}
	e.createIngress(t, ing)
	tc.waitAnswer(t, "app.test", "/", http.StatusOK, "A /")
	// limit-rpm 1 lets a burst of 5 through (ingress-nginx's burst
	// multiplier), then answers limit-req-status-code (503 by default).
	limited := newIngress(ns, "limited", "ramjet", "limited.test", "a", "/")
	limited.Annotations = map[string]string{"nginx.ingress.kubernetes.io/limit-rpm": "1"}
	e.createIngress(t, limited)
	tc.waitAnswer(t, "limited.test", "/", http.StatusServiceUnavailable, "")

	req, err := http.NewRequest(http.MethodGet, "https://"+tc.HTTPSAddr+"/", nil)
	require.NoError(t, err)
	req.Host = "app.test"
	res, err := tc.http.Do(req)
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Equal(t, "max-age=600; includeSubDomains", res.Header.Get("Strict-Transport-Security"))

	cm.Data["ssl-redirect"] = "true"
	cm.Data["hsts"] = "false"
	cm.Data["proxy-body-size"] = "1k"
	cm.Data["limit-req-status-code"] = "429"
	cm.Data["use-proxy-protocol"] = "true"
	_, err = e.client.CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{})
	require.NoError(t, err)
	tc.waitAnswer(t, "app.test", "/", http.StatusPermanentRedirect, "")
	res, err = tc.http.Do(req)
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Empty(t, res.Header.Values("Strict-Transport-Security"), "hsts: false, without a restart")
	post, err := http.NewRequest(http.MethodPost, "https://"+tc.HTTPSAddr+"/", strings.NewReader(strings.Repeat("x", 2048)))
	require.NoError(t, err)
	post.Host = "app.test"
	res, err = tc.http.Do(post)
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusRequestEntityTooLarge, res.StatusCode, "proxy-body-size: 1k, without a restart")
	status, _ := tc.get(t, "limited.test", "/")
	require.Equal(t, http.StatusTooManyRequests, status, "limit-req-status-code: 429, without a restart")
	waitFor(t, 10*time.Second, "the use-proxy-protocol edit to be warned", func() bool {
		_, body := get(t, tc.http, "http://"+tc.DebugAddr+"/debug/warnings", "")
		return strings.Contains(body, `key "use-proxy-protocol": changed since start`) && strings.Contains(body, `data[worker-processes]`) &&
			!strings.Contains(body, `key "limit-req-status-code": changed`)
	})
}
