package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	"ramjet.dev/ramjet/compile/gatewayapi"
)

// TestE2ETLSRouteInstalledLater: a controller serving the Gateway API
// before the TLSRoute CRD is installed says TLSRoutes are not served,
// picks the CRD up once installed without a restart (as GRPCRoutes are),
// passes a TLSRoute's connections through to its backend and writes the
// route's status (SPEC §20). It runs with the shipped RBAC.
func TestE2ETLSRouteInstalledLater(t *testing.T) {
	e := startE2E(t)
	ctx := context.Background()
	objs := applyRBAC(t, e.client)
	sa := findObject[*corev1.ServiceAccount](t, objs)
	app := e.namespace(t, "tls-late")

	ca, pair := signedPair(t, "db.late.test")
	db := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "db sni=%s", r.TLS.ServerName)
	}))
	db.TLS = &tls.Config{Certificates: []tls.Certificate{pair}}
	db.Config.ErrorLog = log.New(io.Discard, "", 0)
	db.StartTLS()
	t.Cleanup(db.Close)
	u, err := url.Parse(db.URL)
	require.NoError(t, err)
	e.app(t, app, "db", backendPort(t, u.Port()))

	installGatewayCRDs(t, e)
	rc := rest.CopyConfig(e.srv.Config)
	rc.Impersonate = rest.ImpersonationConfig{
		UserName: "system:serviceaccount:" + sa.Namespace + ":" + sa.Name,
		Groups:   []string{"system:serviceaccounts", "system:serviceaccounts:" + sa.Namespace, "system:authenticated"},
	}
	tc := e.startControllerAs(t, rc, "", func(c *config) {
		c.namespace, c.electionNamespace = "", sa.Namespace
		c.gatewayRecheck = 100 * time.Millisecond
		c.httpsAddr = "127.0.0.1:0"
		c.streamEndpoint = func(addr string) string {
			host, port, _ := net.SplitHostPort(addr)
			if host != testEndpoint {
				return "0.0.0.0:0"
			}
			return net.JoinHostPort("127.0.0.1", port)
		}
	})
	waitFor(t, 20*time.Second, "the controller to serve the Gateway API", func() bool {
		return strings.Contains(tc.logs.String(), "serving the Gateway API")
	})
	require.Contains(t, tc.logs.String(), "TLSRoutes are not served")

	installTLSRouteCRD(t, e)
	waitFor(t, 20*time.Second, "the controller to watch TLSRoutes", func() bool {
		return strings.Contains(tc.logs.String(), "the TLSRoute CRD is installed now: watching TLSRoutes")
	})

	gc, err := gwclient.NewForConfig(e.srv.Config)
	require.NoError(t, err)
	api := gc.GatewayV1()
	_, err = api.GatewayClasses().Create(ctx, &gwv1.GatewayClass{
		ObjectMeta: metav1.ObjectMeta{Name: "ramjet"}, Spec: gwv1.GatewayClassSpec{ControllerName: gatewayapi.ControllerName},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = api.Gateways(app).Create(ctx, &gwv1.Gateway{
		ObjectMeta: metav1.ObjectMeta{Namespace: app, Name: "gw"},
		Spec: gwv1.GatewaySpec{GatewayClassName: "ramjet", Listeners: []gwv1.Listener{
			{Name: "tls", Port: 443, Protocol: gwv1.TLSProtocolType, Hostname: new(gwv1.Hostname("*.late.test")),
				TLS: &gwv1.ListenerTLSConfig{Mode: new(gwv1.TLSModePassthrough)}},
		}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	var b gwv1.BackendRef
	b.Name, b.Port = "db", new(gwv1.PortNumber(80))
	_, err = api.TLSRoutes(app).Create(ctx, &gwv1.TLSRoute{
		ObjectMeta: metav1.ObjectMeta{Namespace: app, Name: "db"},
		Spec: gwv1.TLSRouteSpec{CommonRouteSpec: gwv1.CommonRouteSpec{ParentRefs: []gwv1.ParentReference{{Name: "gw"}}},
			Hostnames: []gwv1.Hostname{"db.late.test"}, Rules: []gwv1.TLSRouteRule{{BackendRefs: []gwv1.BackendRef{b}}}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)

	roots := x509.NewCertPool()
	roots.AddCert(ca)
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{ServerName: "db.late.test", RootCAs: roots}}}
	t.Cleanup(client.CloseIdleConnections)
	var got string
	waitFor(t, 20*time.Second, "db.late.test passed through to its backend", func() bool {
		res, err := client.Get("https://" + tc.HTTPSAddr + "/")
		if err != nil {
			got = err.Error()
			return false
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		got = string(body)
		return got == "db sni=db.late.test"
	}, func() string { return "last: " + got })

	var route *gwv1.TLSRoute
	waitFor(t, 20*time.Second, "the TLSRoute's status", func() bool {
		route, err = api.TLSRoutes(app).Get(ctx, "db", metav1.GetOptions{})
		require.NoError(t, err)
		if len(route.Status.Parents) != 1 {
			return false
		}
		for _, c := range route.Status.Parents[0].Conditions {
			if c.Type == "Accepted" && c.Status == metav1.ConditionTrue {
				return true
			}
		}
		return false
	}, func() string { return fmt.Sprintf("last: %+v", route.Status) })
	require.NotContains(t, tc.logs.String(), "forbidden")
}
