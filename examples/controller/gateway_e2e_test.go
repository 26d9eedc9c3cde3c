package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
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

// installGatewayCRDs creates the Gateway API's standard CRDs the
// controller watches, from the module's own copy (no network), and waits
// until discovery serves them.
func installGatewayCRDs(t *testing.T, e *e2e) {
	t.Helper()
	installCRDs(t, e, gatewayResources...)
	c := &clusterController{client: e.client}
	waitFor(t, 30*time.Second, "the Gateway API CRDs to be served", func() bool {
		ok, _ := c.gatewayInstalled(context.Background())
		return ok
	})
}

// installCRDs creates the standard CRDs of the Gateway API resources
// named (e.g. "grpcroutes").
func installCRDs(t *testing.T, e *e2e, resources ...string) {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/gateway-api").Output()
	require.NoError(t, err, "locating the sigs.k8s.io/gateway-api module")
	dir := filepath.Join(strings.TrimSpace(string(out)), "config", "crd", "standard")
	dc, err := dynamic.NewForConfig(e.srv.Config)
	require.NoError(t, err)
	crds := dc.Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"})
	for _, res := range resources {
		data, err := os.ReadFile(filepath.Join(dir, "gateway.networking.k8s.io_"+res+".yaml"))
		require.NoError(t, err)
		for doc := range bytes.SplitSeq(data, []byte("\n---")) {
			var obj map[string]any
			require.NoError(t, yaml.Unmarshal(doc, &obj))
			if obj == nil {
				continue
			}
			_, err := crds.Create(context.Background(), &unstructured.Unstructured{Object: obj}, metav1.CreateOptions{})
			require.NoError(t, err, "creating the CRD of %s", res)
		}
	}
}

// TestE2EGatewayAPI: a controller started before the Gateway API CRDs
// serves Ingresses and says the Gateway API is not; once they are
// installed it serves a Gateway's HTTPRoutes (one across namespaces with a
// ReferenceGrant, one refused) over HTTP and HTTPS, and its leader writes
// their status once, not again on a rebuild that changes nothing (SPEC
// §20); a replica started after the CRDs serves the routes in its first
// table. It runs with the shipped RBAC.
func TestE2EGatewayAPI(t *testing.T) {
	e := startE2E(t)
	ctx := context.Background()
	objs := applyRBAC(t, e.client)
	sa := findObject[*corev1.ServiceAccount](t, objs)
	infra, app, shop := e.namespace(t, "infra"), e.namespace(t, "app"), e.namespace(t, "shop")
	e.app(t, app, "a", backendPort(t, namedBackend(t, "A")))
	e.app(t, shop, "b", backendPort(t, namedBackend(t, "B")))
	e.app(t, shop, "c", backendPort(t, namedBackend(t, "C")))
	e.createIngress(t, newIngress(app, "ing", "ramjet", "ing.test", "a", "/"))

	rc := rest.CopyConfig(e.srv.Config)
	rc.Impersonate = rest.ImpersonationConfig{
		UserName: "system:serviceaccount:" + sa.Namespace + ":" + sa.Name,
		Groups:   []string{"system:serviceaccounts", "system:serviceaccounts:" + sa.Namespace, "system:authenticated"},
	}
	tc := e.startControllerAs(t, rc, "", func(c *config) {
		c.namespace, c.electionNamespace = "", sa.Namespace
		c.httpsAddr = "127.0.0.1:0"
		c.publishAddresses = []string{"192.0.2.9"}
		c.gatewayRecheck = 100 * time.Millisecond
	})
	tc.waitAnswer(t, "ing.test", "/", http.StatusOK, "A /")
	require.Contains(t, tc.logs.String(), "Gateway API is not served")

	installGatewayCRDs(t, e)
	waitFor(t, 20*time.Second, "the controller to serve the Gateway API", func() bool {
		return strings.Contains(tc.logs.String(), "serving the Gateway API")
	})

	gc, err := gwclient.NewForConfig(e.srv.Config)
	require.NoError(t, err)
	api := gc.GatewayV1()
	cert := selfSignedPair(t, "secure.test", 7)
	_, err = e.client.CoreV1().Secrets(infra).Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: infra, Name: "gw-cert"}, Type: corev1.SecretTypeTLS, Data: cert,
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
			{Name: "http", Port: 80, Protocol: gwv1.HTTPProtocolType, AllowedRoutes: allowAll},
			{Name: "https", Port: 443, Protocol: gwv1.HTTPSProtocolType, Hostname: new(gwv1.Hostname("secure.test")), AllowedRoutes: allowAll,
				TLS: &gwv1.ListenerTLSConfig{CertificateRefs: []gwv1.SecretObjectReference{{Name: "gw-cert"}}}},
		}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	// Service b of shop, and no other, may serve HTTPRoutes of app.
	_, err = api.ReferenceGrants(shop).Create(ctx, &gwv1.ReferenceGrant{
		ObjectMeta: metav1.ObjectMeta{Namespace: shop, Name: "app-to-b"},
		Spec: gwv1.ReferenceGrantSpec{
			From: []gwv1.ReferenceGrantFrom{{Group: gwv1.GroupName, Kind: "HTTPRoute", Namespace: gwv1.Namespace(app)}},
			To:   []gwv1.ReferenceGrantTo{{Kind: "Service", Name: new(gwv1.ObjectName("b"))}},
		},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	route := func(name, section, host, svcNS, svc string) {
		t.Helper()
		ref := gwv1.HTTPBackendRef{}
		ref.Name, ref.Port = gwv1.ObjectName(svc), new(gwv1.PortNumber(80))
		if svcNS != app {
			ref.Namespace = new(gwv1.Namespace(svcNS))
		}
		_, err := api.HTTPRoutes(app).Create(ctx, &gwv1.HTTPRoute{
			ObjectMeta: metav1.ObjectMeta{Namespace: app, Name: name},
			Spec: gwv1.HTTPRouteSpec{
				CommonRouteSpec: gwv1.CommonRouteSpec{ParentRefs: []gwv1.ParentReference{{
					Name: "gw", Namespace: new(gwv1.Namespace(infra)), SectionName: new(gwv1.SectionName(section))}}},
				Hostnames: []gwv1.Hostname{gwv1.Hostname(host)},
				Rules:     []gwv1.HTTPRouteRule{{BackendRefs: []gwv1.HTTPBackendRef{ref}}},
			},
		}, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	route("same", "http", "gw.test", app, "a")
	route("cross", "http", "cross.test", shop, "b")
	route("refused", "http", "refused.test", shop, "c")
	route("nowhere", "nope", "nowhere.test", app, "a")
	route("secure", "https", "secure.test", app, "a")

	tc.waitAnswer(t, "gw.test", "/x", http.StatusOK, "A /x")
	tc.waitAnswer(t, "cross.test", "/", http.StatusOK, "B /")
	tc.waitAnswer(t, "ing.test", "/", http.StatusOK, "A /")
	for _, host := range []string{"refused.test", "nowhere.test"} {
		status, body := tc.get(t, host, "/")
		require.NotEqual(t, http.StatusOK, status, "%s answered %q", host, body)
	}
	// HTTPS with the listener's certificate, chosen by SNI.
	roots := x509.NewCertPool()
	require.True(t, roots.AppendCertsFromPEM(cert[corev1.TLSCertKey]))
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{ServerName: "secure.test", RootCAs: roots}}}
	t.Cleanup(client.CloseIdleConnections)
	waitFor(t, 10*time.Second, "secure.test over TLS with the Gateway's certificate", func() bool {
		req, err := http.NewRequest(http.MethodGet, "https://"+tc.HTTPSAddr+"/s", nil)
		require.NoError(t, err)
		req.Host = "secure.test"
		res, err := client.Do(req)
		if err != nil {
			return false
		}
		res.Body.Close()
		return res.StatusCode == http.StatusOK
	})

	// The HTTPS listener's route never answers plain HTTP (SPEC §20)...
	status, body := tc.get(t, "secure.test", "/s")
	require.Equal(t, http.StatusNotFound, status, "plain HTTP to secure.test answered %q", body)
	// ...and an HTTP listener's route redirecting to HTTPS redirects
	// there, while HTTPS still serves the application: the standard
	// setup, which -translate -to gateway writes.
	https := gwv1.HTTPRouteFilter{Type: gwv1.HTTPRouteFilterRequestRedirect,
		RequestRedirect: &gwv1.HTTPRequestRedirectFilter{Scheme: new("https"), StatusCode: new(301)}}
	_, err = api.HTTPRoutes(app).Create(ctx, &gwv1.HTTPRoute{
		ObjectMeta: metav1.ObjectMeta{Namespace: app, Name: "to-https"},
		Spec: gwv1.HTTPRouteSpec{
			CommonRouteSpec: gwv1.CommonRouteSpec{ParentRefs: []gwv1.ParentReference{{
				Name: "gw", Namespace: new(gwv1.Namespace(infra)), SectionName: new(gwv1.SectionName("http"))}}},
			Hostnames: []gwv1.Hostname{"secure.test"},
			Rules:     []gwv1.HTTPRouteRule{{Filters: []gwv1.HTTPRouteFilter{https}}},
		},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	noFollow := &http.Client{Timeout: 5 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	t.Cleanup(noFollow.CloseIdleConnections)
	var location string
	waitFor(t, 10*time.Second, "plain HTTP to secure.test to redirect to HTTPS", func() bool {
		req, err := http.NewRequest(http.MethodGet, "http://"+tc.HTTPAddr+"/s", nil)
		require.NoError(t, err)
		req.Host = "secure.test"
		res, err := noFollow.Do(req)
		if err != nil {
			return false
		}
		res.Body.Close()
		location = res.Header.Get("Location")
		return res.StatusCode == http.StatusMovedPermanently && location == "https://secure.test/s"
	}, func() string { return "last Location: " + location })
	req, err := http.NewRequest(http.MethodGet, "https://"+tc.HTTPSAddr+"/s", nil)
	require.NoError(t, err)
	req.Host = "secure.test"
	res, err := client.Do(req)
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode, "HTTPS to secure.test once HTTP redirects")

	// Status, as the leader writes it.
	type cond struct{ Type, Status, Reason string }
	conds := func(cs []metav1.Condition) []cond {
		var out []cond
		for _, c := range cs {
			out = append(out, cond{c.Type, string(c.Status), c.Reason})
		}
		return out
	}
	routeConds := func(name string) []cond {
		r, err := api.HTTPRoutes(app).Get(ctx, name, metav1.GetOptions{})
		require.NoError(t, err)
		if len(r.Status.Parents) != 1 {
			return nil
		}
		return conds(r.Status.Parents[0].Conditions)
	}
	accepted := cond{"Accepted", "True", "Accepted"}
	resolved := cond{"ResolvedRefs", "True", "ResolvedRefs"}
	for name, want := range map[string][]cond{
		"same":    {accepted, resolved},
		"cross":   {accepted, resolved},
		"secure":  {accepted, resolved},
		"refused": {accepted, {"ResolvedRefs", "False", "RefNotPermitted"}},
		"nowhere": {{"Accepted", "False", "NoMatchingParent"}, resolved},
	} {
		var got []cond
		waitFor(t, 10*time.Second, "the status of HTTPRoute "+name, func() bool {
			got = routeConds(name)
			return slices.Equal(got, want)
		}, func() string { return fmt.Sprint("last: ", got) })
	}
	var gw *gwv1.Gateway
	waitFor(t, 10*time.Second, "the Gateway's status", func() bool {
		gw, err = api.Gateways(infra).Get(ctx, "gw", metav1.GetOptions{})
		require.NoError(t, err)
		ls := gw.Status.Listeners
		return slices.Equal(conds(gw.Status.Conditions), []cond{accepted, {"Programmed", "True", "Programmed"}}) &&
			len(ls) == 2 && ls[0].AttachedRoutes == 4 && ls[1].AttachedRoutes == 1 && // ls[0]: same, cross, refused, to-https
			len(gw.Status.Addresses) == 1 && gw.Status.Addresses[0].Value == "192.0.2.9"
	}, func() string { return fmt.Sprintf("last: %+v", gw.Status) })
	for _, l := range gw.Status.Listeners {
		require.Equal(t, []cond{accepted, {"Conflicted", "False", "NoConflicts"}, resolved, {"Programmed", "True", "Programmed"}}, conds(l.Conditions), "listener %s", l.Name)
		require.Len(t, l.SupportedKinds, 2)
		require.Equal(t, gwv1.Kind("HTTPRoute"), l.SupportedKinds[0].Kind)
		require.Equal(t, gwv1.Kind("GRPCRoute"), l.SupportedKinds[1].Kind)
	}
	waitFor(t, 10*time.Second, "the GatewayClass's status", func() bool {
		c, err := api.GatewayClasses().Get(ctx, "ramjet", metav1.GetOptions{})
		require.NoError(t, err)
		return slices.Equal(conds(c.Status.Conditions), []cond{accepted})
	})

	// A replica started now finds the CRDs at start: its first table
	// serves the routes already.
	tc2 := e.startControllerAs(t, rc, "", func(c *config) {
		c.namespace, c.electionNamespace, c.identity = "", sa.Namespace, "replica-b"
	})
	status, body = tc2.get(t, "gw.test", "/x")
	require.Equal(t, http.StatusOK, status, body)
	require.NotContains(t, tc2.logs.String(), "not installed")

	// A replica whose ClusterRole predates the Gateway API still becomes
	// ready, serving the Ingresses, and says why it serves no Gateway.
	old := findObject[*rbacv1.ClusterRole](t, objs).DeepCopy()
	old.ObjectMeta = metav1.ObjectMeta{Name: "ramjet-old"}
	old.Rules = slices.DeleteFunc(old.Rules, func(r rbacv1.PolicyRule) bool {
		return slices.Contains(r.APIGroups, gwv1.GroupName) || slices.Contains(r.Resources, "namespaces")
	})
	_, err = e.client.RbacV1().ClusterRoles().Create(ctx, old, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = e.client.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "ramjet-old"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "ramjet-old"},
		Subjects:   []rbacv1.Subject{{Kind: "User", Name: "old-ramjet"}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	oldRC := rest.CopyConfig(e.srv.Config)
	oldRC.Impersonate = rest.ImpersonationConfig{UserName: "old-ramjet", Groups: []string{"system:authenticated"}}
	tc3 := e.startControllerAs(t, oldRC, "", func(c *config) {
		c.namespace, c.electionNamespace, c.identity = "", infra, "replica-old"
		c.gatewaySyncWait = time.Second
	})
	status, body = tc3.get(t, "ing.test", "/")
	require.Equal(t, http.StatusOK, status, body)
	require.Contains(t, tc3.logs.String(), "the Gateway API caches have not synced")
	tc3.stop(t)
	// Its refusals are expected: the shipped RBAC's test must not read
	// them as its own.
	clientGoLog.forget("old-ramjet")
	require.NotContains(t, clientGoLog.String(), "old-ramjet")

	// A rebuild that changes nothing of theirs writes no status again,
	// nor does the replica that does not lead.
	versions := func() map[string]string {
		v := map[string]string{}
		rs, err := api.HTTPRoutes(app).List(ctx, metav1.ListOptions{})
		require.NoError(t, err)
		for _, r := range rs.Items {
			v["HTTPRoute "+r.Name] = r.ResourceVersion
		}
		g, err := api.Gateways(infra).Get(ctx, "gw", metav1.GetOptions{})
		require.NoError(t, err)
		v["Gateway"] = g.ResourceVersion
		c, err := api.GatewayClasses().Get(ctx, "ramjet", metav1.GetOptions{})
		require.NoError(t, err)
		v["GatewayClass"] = c.ResourceVersion
		return v
	}
	before := versions()
	rebuilds := tc.cluster.rebuilds.Load()
	e.app(t, app, "unrelated", backendPort(t, namedBackend(t, "U")))
	waitFor(t, 10*time.Second, "a rebuild", func() bool { return tc.cluster.rebuilds.Load() > rebuilds })
	tc.settle(t)
	time.Sleep(500 * time.Millisecond) // the status pass after the rebuild
	require.Equal(t, before, versions(), "status rewritten by a rebuild that changed nothing")
	for _, name := range []string{"same", "cross", "refused", "nowhere", "secure"} {
		require.Equal(t, 1, strings.Count(tc.logs.String(), `msg="HTTPRoute status written" object=`+app+"/"+name+"\n"),
			"HTTPRoute %s written once", name)
	}
	require.NotContains(t, tc.logs.String(), "forbidden")
	require.NotContains(t, tc2.logs.String(), "status written")
}

// forget removes the lines that contain substr.
func (s *syncBuffer) forget(substr string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	lines := strings.SplitAfter(s.b.String(), "\n")
	s.b.Reset()
	for _, l := range lines {
		if !strings.Contains(l, substr) {
			s.b.WriteString(l)
		}
	}
}
