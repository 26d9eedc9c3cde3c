package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	"ramjet.dev/ramjet/compile/gatewayapi"
)

// grpcAwareTransport is loopbackTransport for a test with gRPC backends:
// a gRPC request goes over cleartext HTTP/2, as the router's own GRPC
// transport sends it, the rest over HTTP/1.1. The router refuses a gRPC
// request to a backend not dialled as GRPC (502) before any transport, so
// a call that succeeds was routed to a GRPC backend.
type grpcAwareTransport struct{ h1, h2c *http.Transport }

func newGRPCAwareTransport() *grpcAwareTransport {
	h2c := loopbackTransport()
	h2c.Protocols = new(http.Protocols)
	h2c.Protocols.SetUnencryptedHTTP2(true)
	return &grpcAwareTransport{h1: loopbackTransport(), h2c: h2c}
}

func (g *grpcAwareTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if strings.HasPrefix(req.Header.Get("Content-Type"), "application/grpc") {
		return g.h2c.RoundTrip(req)
	}
	return g.h1.RoundTrip(req)
}

// TestE2EGRPCRoute: a controller serving the Gateway API before the
// GRPCRoute CRD is installed says GRPCRoutes are not served, picks the
// CRD up once installed, and serves a GRPCRoute to real gRPC servers
// (grpc-go's health service) over h2c on its HTTP listener and over TLS
// (ALPN h2) on its HTTPS one: the matched method answers, a header match
// picks its own backend, a method no rule takes is UNIMPLEMENTED; the
// leader writes the route's status (SPEC §20). It runs with the shipped
// RBAC.
func TestE2EGRPCRoute(t *testing.T) {
	e := startE2E(t)
	ctx := context.Background()
	objs := applyRBAC(t, e.client)
	sa := findObject[*corev1.ServiceAccount](t, objs)
	app := e.namespace(t, "grpc")

	// Two gRPC servers, told apart by the services they report SERVING.
	backend := func(name, serving string) {
		hs := health.NewServer()
		hs.SetServingStatus(serving, healthpb.HealthCheckResponse_SERVING)
		gs := grpc.NewServer()
		healthpb.RegisterHealthServer(gs, hs)
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		go func() { _ = gs.Serve(l) }()
		t.Cleanup(gs.Stop)
		_, port, _ := net.SplitHostPort(l.Addr().String())
		e.app(t, app, name, backendPort(t, port))
	}
	backend("stable", "ramjet.test.Stable")
	backend("canary", "ramjet.test.Canary")

	installGatewayCRDs(t, e)
	rc := rest.CopyConfig(e.srv.Config)
	rc.Impersonate = rest.ImpersonationConfig{
		UserName: "system:serviceaccount:" + sa.Namespace + ":" + sa.Name,
		Groups:   []string{"system:serviceaccounts", "system:serviceaccounts:" + sa.Namespace, "system:authenticated"},
	}
	tc := e.startControllerAs(t, rc, "", func(c *config) {
		c.namespace, c.electionNamespace = "", sa.Namespace
		c.gatewayRecheck = 100 * time.Millisecond
		c.backendTransport = newGRPCAwareTransport()
		c.httpsAddr = "127.0.0.1:0"
	})
	waitFor(t, 20*time.Second, "the controller to serve the Gateway API", func() bool {
		return strings.Contains(tc.logs.String(), "serving the Gateway API")
	})
	require.Contains(t, tc.logs.String(), "GRPCRoutes are not served")

	installCRDs(t, e, "grpcroutes")
	waitFor(t, 20*time.Second, "the controller to watch GRPCRoutes", func() bool {
		return strings.Contains(tc.logs.String(), "watching GRPCRoutes")
	})

	gc, err := gwclient.NewForConfig(e.srv.Config)
	require.NoError(t, err)
	api := gc.GatewayV1()
	_, err = api.GatewayClasses().Create(ctx, &gwv1.GatewayClass{
		ObjectMeta: metav1.ObjectMeta{Name: "ramjet"}, Spec: gwv1.GatewayClassSpec{ControllerName: gatewayapi.ControllerName},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	cert := selfSignedPair(t, "grpcs.test", 11)
	_, err = e.client.CoreV1().Secrets(app).Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: app, Name: "grpcs-cert"}, Type: corev1.SecretTypeTLS, Data: cert,
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = api.Gateways(app).Create(ctx, &gwv1.Gateway{
		ObjectMeta: metav1.ObjectMeta{Namespace: app, Name: "gw"},
		Spec: gwv1.GatewaySpec{GatewayClassName: "ramjet", Listeners: []gwv1.Listener{
			{Name: "http", Port: 80, Protocol: gwv1.HTTPProtocolType},
			{Name: "https", Port: 443, Protocol: gwv1.HTTPSProtocolType, Hostname: new(gwv1.Hostname("grpcs.test")),
				TLS: &gwv1.ListenerTLSConfig{CertificateRefs: []gwv1.SecretObjectReference{{Name: "grpcs-cert"}}}},
		}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	to := func(svc string) []gwv1.GRPCBackendRef {
		var b gwv1.GRPCBackendRef
		b.Name, b.Port = gwv1.ObjectName(svc), new(gwv1.PortNumber(80))
		return []gwv1.GRPCBackendRef{b}
	}
	check := &gwv1.GRPCMethodMatch{Service: new("grpc.health.v1.Health"), Method: new("Check")}
	_, err = api.GRPCRoutes(app).Create(ctx, &gwv1.GRPCRoute{
		ObjectMeta: metav1.ObjectMeta{Namespace: app, Name: "health"},
		Spec: gwv1.GRPCRouteSpec{
			CommonRouteSpec: gwv1.CommonRouteSpec{ParentRefs: []gwv1.ParentReference{{Name: "gw"}}},
			Hostnames:       []gwv1.Hostname{"grpc.test", "grpcs.test"},
			Rules: []gwv1.GRPCRouteRule{
				{Matches: []gwv1.GRPCRouteMatch{{Method: check}}, BackendRefs: to("stable")},
				{Matches: []gwv1.GRPCRouteMatch{{Method: check, Headers: []gwv1.GRPCHeaderMatch{{Name: "x-track", Value: "canary"}}}}, BackendRefs: to("canary")},
			},
		},
	}, metav1.CreateOptions{})
	require.NoError(t, err)

	cc, err := grpc.NewClient("passthrough:///"+tc.HTTPAddr,
		grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithAuthority("grpc.test"))
	require.NoError(t, err)
	t.Cleanup(func() { cc.Close() })
	hc := healthpb.NewHealthClient(cc)
	call := func(md map[string]string, service string) (healthpb.HealthCheckResponse_ServingStatus, error) {
		c, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		for k, v := range md {
			c = metadata.AppendToOutgoingContext(c, k, v)
		}
		res, err := hc.Check(c, &healthpb.HealthCheckRequest{Service: service})
		if err != nil {
			return 0, err
		}
		return res.Status, nil
	}
	waitFor(t, 20*time.Second, "the GRPCRoute to answer over h2c", func() bool {
		st, err := call(nil, "ramjet.test.Stable")
		return err == nil && st == healthpb.HealthCheckResponse_SERVING
	})
	// The header match sends the call to the other server, which does not
	// know ramjet.test.Stable.
	_, err = call(map[string]string{"x-track": "canary"}, "ramjet.test.Stable")
	require.Equal(t, codes.NotFound, status.Code(err), "%v", err)
	st, err := call(map[string]string{"x-track": "canary"}, "ramjet.test.Canary")
	require.NoError(t, err)
	require.Equal(t, healthpb.HealthCheckResponse_SERVING, st)

	// A method no rule matches: no route, UNIMPLEMENTED.
	c, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	err = cc.Invoke(c, "/grpc.health.v1.Health/List", &healthpb.HealthCheckRequest{}, &healthpb.HealthCheckResponse{})
	require.Equal(t, codes.Unimplemented, status.Code(err), "%v", err)

	// Over TLS (ALPN h2) on the HTTPS listener, with its certificate.
	roots := x509.NewCertPool()
	require.True(t, roots.AppendCertsFromPEM(cert[corev1.TLSCertKey]))
	tlsConn, err := grpc.NewClient("passthrough:///"+tc.HTTPSAddr,
		grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{ServerName: "grpcs.test", RootCAs: roots})))
	require.NoError(t, err)
	t.Cleanup(func() { tlsConn.Close() })
	waitFor(t, 20*time.Second, "the GRPCRoute to answer over TLS", func() bool {
		c, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		res, err := healthpb.NewHealthClient(tlsConn).Check(c, &healthpb.HealthCheckRequest{Service: "ramjet.test.Stable"})
		return err == nil && res.Status == healthpb.HealthCheckResponse_SERVING
	})

	waitFor(t, 20*time.Second, "the GRPCRoute's status", func() bool {
		r, err := api.GRPCRoutes(app).Get(ctx, "health", metav1.GetOptions{})
		if err != nil || len(r.Status.Parents) != 1 {
			return false
		}
		p := r.Status.Parents[0]
		return p.ControllerName == gatewayapi.ControllerName && len(p.Conditions) == 2 &&
			p.Conditions[0].Type == "Accepted" && p.Conditions[0].Status == metav1.ConditionTrue &&
			p.Conditions[1].Type == "ResolvedRefs" && p.Conditions[1].Status == metav1.ConditionTrue
	})
	gw, err := api.Gateways(app).Get(ctx, "gw", metav1.GetOptions{})
	require.NoError(t, err)
	require.Len(t, gw.Status.Listeners, 2)
	for _, l := range gw.Status.Listeners {
		require.Equal(t, int32(1), l.AttachedRoutes, "listener %s", l.Name)
	}
}
