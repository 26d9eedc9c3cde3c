package main

import (
	"bufio"
	"bytes"
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
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"
	"sigs.k8s.io/yaml"

	"ramjet.dev/ramjet/compile/gatewayapi"
)

// installTLSRouteCRD creates the TLSRoute CRD of the module's standard
// channel (v1 served) and waits until discovery serves it.
func installTLSRouteCRD(t *testing.T, e *e2e) {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/gateway-api").Output()
	require.NoError(t, err, "locating the sigs.k8s.io/gateway-api module")
	data, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(out)), "config", "crd", "standard", "gateway.networking.k8s.io_tlsroutes.yaml"))
	require.NoError(t, err)
	dc, err := dynamic.NewForConfig(e.srv.Config)
	require.NoError(t, err)
	crds := dc.Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"})
	for doc := range bytes.SplitSeq(data, []byte("\n---")) {
		var obj map[string]any
		require.NoError(t, yaml.Unmarshal(doc, &obj))
		if obj == nil {
			continue
		}
		_, err := crds.Create(context.Background(), &unstructured.Unstructured{Object: obj}, metav1.CreateOptions{})
		require.NoError(t, err, "creating the TLSRoute CRD")
	}
	c := &clusterController{client: e.client}
	waitFor(t, 30*time.Second, "the TLSRoute CRD to be served", func() bool { return c.tlsRouteVersion() == "v1" })
}

// TestE2ETLSRoute: on the real API server, with the shipped RBAC, a
// Gateway's TLS passthrough listener and an HTTPS listener share the
// HTTPS port. A connection naming the TLSRoute's hostname reaches its
// backend, which terminates TLS itself: the client verifies the backend's
// own certificate against a CA the controller never sees. The HTTPS
// listener's name is terminated by the controller with the Gateway's
// certificate and routed by its HTTPRoute; a name of the TLS listener
// without a route is refused. The leader writes the TLSRoute's status and
// the listener's supported kinds and attached routes (SPEC §20).
func TestE2ETLSRoute(t *testing.T) {
	e := startE2E(t)
	ctx := context.Background()
	objs := applyRBAC(t, e.client)
	sa := findObject[*corev1.ServiceAccount](t, objs)
	infra, app := e.namespace(t, "tls-infra"), e.namespace(t, "tls-app")

	ca, pair := signedPair(t, "db.tls.test")
	db := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "db sni=%s path=%s", r.TLS.ServerName, r.URL.Path)
	}))
	db.TLS = &tls.Config{Certificates: []tls.Certificate{pair}}
	db.Config.ErrorLog = log.New(io.Discard, "", 0)
	db.StartTLS()
	t.Cleanup(db.Close)
	u, err := url.Parse(db.URL)
	require.NoError(t, err)
	e.app(t, app, "db", backendPort(t, u.Port()))
	e.app(t, app, "web", backendPort(t, namedBackend(t, "WEB")))

	installGatewayCRDs(t, e)
	installTLSRouteCRD(t, e)
	gc, err := gwclient.NewForConfig(e.srv.Config)
	require.NoError(t, err)
	api := gc.GatewayV1()
	webCert := selfSignedPair(t, "web.tls.test", 11)
	_, err = e.client.CoreV1().Secrets(infra).Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: infra, Name: "web-cert"}, Type: corev1.SecretTypeTLS, Data: webCert,
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = api.GatewayClasses().Create(ctx, &gwv1.GatewayClass{
		ObjectMeta: metav1.ObjectMeta{Name: "ramjet"}, Spec: gwv1.GatewayClassSpec{ControllerName: gatewayapi.ControllerName},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	all := gwv1.NamespacesFromAll
	allowAll := &gwv1.AllowedRoutes{Namespaces: &gwv1.RouteNamespaces{From: &all}}
	_, err = api.Gateways(infra).Create(ctx, &gwv1.Gateway{
		ObjectMeta: metav1.ObjectMeta{Namespace: infra, Name: "gw"},
		Spec: gwv1.GatewaySpec{GatewayClassName: "ramjet", Listeners: []gwv1.Listener{
			{Name: "tls", Port: 443, Protocol: gwv1.TLSProtocolType, Hostname: new(gwv1.Hostname("*.tls.test")), AllowedRoutes: allowAll,
				TLS: &gwv1.ListenerTLSConfig{Mode: new(gwv1.TLSModePassthrough)}},
			{Name: "https", Port: 443, Protocol: gwv1.HTTPSProtocolType, Hostname: new(gwv1.Hostname("web.tls.test")), AllowedRoutes: allowAll,
				TLS: &gwv1.ListenerTLSConfig{CertificateRefs: []gwv1.SecretObjectReference{{Name: "web-cert"}}}},
		}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	parent := gwv1.CommonRouteSpec{ParentRefs: []gwv1.ParentReference{{Name: "gw", Namespace: new(gwv1.Namespace(infra))}}}
	backend := func(name string) gwv1.BackendRef {
		var b gwv1.BackendRef
		b.Name, b.Port = gwv1.ObjectName(name), new(gwv1.PortNumber(80))
		return b
	}
	_, err = api.TLSRoutes(app).Create(ctx, &gwv1.TLSRoute{
		ObjectMeta: metav1.ObjectMeta{Namespace: app, Name: "db"},
		Spec: gwv1.TLSRouteSpec{CommonRouteSpec: parent, Hostnames: []gwv1.Hostname{"db.tls.test"},
			Rules: []gwv1.TLSRouteRule{{BackendRefs: []gwv1.BackendRef{backend("db")}}}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = api.HTTPRoutes(app).Create(ctx, &gwv1.HTTPRoute{
		ObjectMeta: metav1.ObjectMeta{Namespace: app, Name: "web"},
		Spec: gwv1.HTTPRouteSpec{CommonRouteSpec: parent,
			Rules: []gwv1.HTTPRouteRule{{BackendRefs: []gwv1.HTTPBackendRef{{BackendRef: backend("web")}}}}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)

	rc := rest.CopyConfig(e.srv.Config)
	rc.Impersonate = rest.ImpersonationConfig{
		UserName: "system:serviceaccount:" + sa.Namespace + ":" + sa.Name,
		Groups:   []string{"system:serviceaccounts", "system:serviceaccounts:" + sa.Namespace, "system:authenticated"},
	}
	tc := e.startControllerAs(t, rc, "", func(c *config) {
		c.namespace, c.electionNamespace = "", sa.Namespace
		c.httpsAddr = "127.0.0.1:0"
		c.publishAddresses = []string{"192.0.2.9"}
		c.streamEndpoint = func(addr string) string {
			host, port, _ := net.SplitHostPort(addr)
			if host != testEndpoint {
				return "0.0.0.0:0" // never a test endpoint: refused
			}
			return net.JoinHostPort("127.0.0.1", port)
		}
	})
	require.Contains(t, tc.logs.String(), "watching TLSRoutes")

	// Through to the backend, whose certificate the client verifies.
	roots := x509.NewCertPool()
	roots.AddCert(ca)
	var c *tls.Conn
	waitFor(t, 10*time.Second, "db.tls.test passed through to its backend", func() bool {
		c, err = tls.DialWithDialer(&net.Dialer{Timeout: 2 * time.Second}, "tcp", tc.HTTPSAddr, &tls.Config{ServerName: "db.tls.test", RootCAs: roots})
		return err == nil
	}, func() string { return fmt.Sprint("last: ", err) })
	defer c.Close()
	require.Equal(t, pair.Leaf.SerialNumber, c.ConnectionState().PeerCertificates[0].SerialNumber, "the backend's certificate, not the controller's")
	require.NoError(t, c.SetDeadline(time.Now().Add(10*time.Second)))
	_, err = fmt.Fprintf(c, "GET /through HTTP/1.1\r\nHost: db.tls.test\r\nConnection: close\r\n\r\n")
	require.NoError(t, err)
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	require.NoError(t, err)
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, "db sni=db.tls.test path=/through", string(body))

	// A name of the TLS listener that no route takes: refused, not
	// terminated.
	_, err = tls.DialWithDialer(&net.Dialer{Timeout: 2 * time.Second}, "tcp", tc.HTTPSAddr, &tls.Config{ServerName: "other.tls.test", InsecureSkipVerify: true})
	require.Error(t, err, "a TLS listener's name without a route")
	require.NotContains(t, err.Error(), "certificate", "refused before any certificate")

	// The HTTPS listener on the same port: terminated with the Gateway's
	// certificate and routed.
	webRoots := x509.NewCertPool()
	require.True(t, webRoots.AppendCertsFromPEM(webCert[corev1.TLSCertKey]))
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{ServerName: "web.tls.test", RootCAs: webRoots}}}
	t.Cleanup(client.CloseIdleConnections)
	var got string
	waitFor(t, 10*time.Second, "web.tls.test terminated and routed", func() bool {
		req, err := http.NewRequest(http.MethodGet, "https://"+tc.HTTPSAddr+"/w", nil)
		require.NoError(t, err)
		req.Host = "web.tls.test"
		res, err := client.Do(req)
		if err != nil {
			got = err.Error()
			return false
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		got = string(b)
		return res.StatusCode == http.StatusOK && got == "WEB /w"
	}, func() string { return "last: " + got })

	// Status, as the leader writes it.
	type cond struct{ Type, Status, Reason string }
	conds := func(cs []metav1.Condition) []cond {
		var out []cond
		for _, c := range cs {
			out = append(out, cond{c.Type, string(c.Status), c.Reason})
		}
		return out
	}
	var route *gwv1.TLSRoute
	waitFor(t, 10*time.Second, "the TLSRoute's status", func() bool {
		route, err = api.TLSRoutes(app).Get(ctx, "db", metav1.GetOptions{})
		require.NoError(t, err)
		return len(route.Status.Parents) == 1 &&
			slices.Equal(conds(route.Status.Parents[0].Conditions), []cond{{"Accepted", "True", "Accepted"}, {"ResolvedRefs", "True", "ResolvedRefs"}})
	}, func() string { return fmt.Sprintf("last: %+v", route.Status) })
	var gw *gwv1.Gateway
	waitFor(t, 10*time.Second, "the TLS listener's status", func() bool {
		gw, err = api.Gateways(infra).Get(ctx, "gw", metav1.GetOptions{})
		require.NoError(t, err)
		ls := gw.Status.Listeners
		return len(ls) == 2 && ls[0].Name == "tls" && ls[0].AttachedRoutes == 1 && ls[1].AttachedRoutes == 1 &&
			len(ls[0].SupportedKinds) == 1 && ls[0].SupportedKinds[0].Kind == "TLSRoute" &&
			slices.Contains(conds(ls[0].Conditions), cond{"Programmed", "True", "Programmed"})
	}, func() string { return fmt.Sprintf("last: %+v", gw.Status.Listeners) })
	require.NotContains(t, tc.logs.String(), "forbidden")
}
