package grpce2e

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"ramjet.dev/ramjet/compile"
	"ramjet.dev/ramjet/compile/manifest"
	"ramjet.dev/ramjet/router"
)

const service = "ramjet.test.Shop"

// manifests route three hosts to the same gRPC server: grpc.example.com
// (TLS, backend-protocol GRPC), plain.example.com (no TLS, GRPC) and
// wrong.example.com, whose Ingress forgot backend-protocol.
func manifests(t *testing.T, backend string, crt, key []byte) compile.Snapshot {
	t.Helper()
	ip, port, err := net.SplitHostPort(backend)
	require.NoError(t, err)
	b64 := base64.StdEncoding.EncodeToString
	doc := fmt.Sprintf(`
apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata: {name: ramjet}
spec: {controller: ramjet.dev/ingress}
---
apiVersion: v1
kind: Service
metadata: {name: shop, namespace: prod}
spec: {ports: [{name: grpc, port: 50051, targetPort: %[2]s}]}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: shop-1, namespace: prod, labels: {kubernetes.io/service-name: shop}}
addressType: IPv4
ports: [{name: grpc, port: %[2]s}]
endpoints: [{addresses: [%[1]s]}]
---
apiVersion: v1
kind: Service
metadata: {name: shop-http, namespace: prod}
spec: {ports: [{name: grpc, port: 50051, targetPort: %[2]s}]}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: shop-http-1, namespace: prod, labels: {kubernetes.io/service-name: shop-http}}
addressType: IPv4
ports: [{name: grpc, port: %[2]s}]
endpoints: [{addresses: [%[1]s]}]
---
apiVersion: v1
kind: Secret
metadata: {name: grpc-tls, namespace: prod}
type: kubernetes.io/tls
data: {tls.crt: %[3]q, tls.key: %[4]q}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: shop
  namespace: prod
  annotations: {nginx.ingress.kubernetes.io/backend-protocol: GRPC}
spec:
  ingressClassName: ramjet
  tls: [{hosts: [grpc.example.com], secretName: grpc-tls}]
  rules:
  - host: grpc.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: shop, port: {name: grpc}}}}]}
  - host: plain.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: shop, port: {name: grpc}}}}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: shop-http, namespace: prod}
spec:
  ingressClassName: ramjet
  rules:
  - host: wrong.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: shop-http, port: {name: grpc}}}}]}
`, ip, port, b64(crt), b64(key))
	s, skipped, err := manifest.Decode("grpc.yaml", []byte(doc))
	require.NoError(t, err)
	require.Empty(t, skipped)
	return *s
}

func selfSigned(t *testing.T, name string) (crt, key []byte, leaf *x509.Certificate) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: name},
		DNSNames:     []string{name},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	require.NoError(t, err)
	leaf, err = x509.ParseCertificate(der)
	require.NoError(t, err)
	kder, err := x509.MarshalECPrivateKey(k)
	require.NoError(t, err)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), leaf
}

// rig is a gRPC backend behind a router listening twice: TLS (certificates
// from the table, ALPN h2) and cleartext with HTTP/2 prior knowledge.
type rig struct {
	health           *health.Server
	router           *router.Router
	backend          string
	tlsAddr, h2cAddr string
	pool             *x509.CertPool

	mu      sync.Mutex
	records []router.Record
}

func newRig(t *testing.T) *rig {
	rg := &rig{health: health.NewServer()}
	rg.health.SetServingStatus(service, healthpb.HealthCheckResponse_SERVING)

	gs := grpc.NewServer()
	healthpb.RegisterHealthServer(gs, rg.health)
	bl, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go func() { _ = gs.Serve(bl) }()
	t.Cleanup(gs.Stop)
	rg.backend = bl.Addr().String()

	crt, key, leaf := selfSigned(t, "grpc.example.com")
	rg.pool = x509.NewCertPool()
	rg.pool.AddCert(leaf)
	res := compile.Compile(manifests(t, rg.backend, crt, key), compile.Options{AllowLoopbackEndpoints: true})
	require.Empty(t, res.Warnings)
	tab := res.Table

	rg.router = router.New(router.Options{
		Logger: slog.New(slog.DiscardHandler),
		Observer: func(r router.Record) {
			rg.mu.Lock()
			rg.records = append(rg.records, r)
			rg.mu.Unlock()
		},
	})
	rg.router.Publish(tab)
	t.Cleanup(rg.router.CloseIdleConnections)
	quiet := log.New(io.Discard, "", 0)

	// TLS: the router's config picks the certificate by SNI and offers h2.
	tl, err := tls.Listen("tcp", "127.0.0.1:0", rg.router.TLSConfig())
	require.NoError(t, err)
	tlsSrv := &http.Server{Handler: rg.router, ReadHeaderTimeout: 5 * time.Second, ErrorLog: quiet}
	go func() { _ = tlsSrv.Serve(tl) }()
	t.Cleanup(func() { tlsSrv.Close() })
	rg.tlsAddr = tl.Addr().String()

	// Cleartext: HTTP/1.1 and HTTP/2 with prior knowledge on one port,
	// which is how an embedder lets gRPC clients in without TLS.
	protocols := new(http.Protocols)
	protocols.SetHTTP1(true)
	protocols.SetUnencryptedHTTP2(true)
	pl, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	h2cSrv := &http.Server{Handler: rg.router, Protocols: protocols, ReadHeaderTimeout: 5 * time.Second, ErrorLog: quiet}
	go func() { _ = h2cSrv.Serve(pl) }()
	t.Cleanup(func() { h2cSrv.Close() })
	rg.h2cAddr = pl.Addr().String()
	return rg
}

func (rg *rig) tlsClient(t *testing.T) healthpb.HealthClient {
	t.Helper()
	creds := credentials.NewTLS(&tls.Config{RootCAs: rg.pool, ServerName: "grpc.example.com"})
	cc, err := grpc.NewClient("passthrough:///"+rg.tlsAddr,
		grpc.WithTransportCredentials(creds), grpc.WithAuthority("grpc.example.com"))
	require.NoError(t, err)
	t.Cleanup(func() { cc.Close() })
	return healthpb.NewHealthClient(cc)
}

func (rg *rig) h2cClient(t *testing.T, authority string) healthpb.HealthClient {
	t.Helper()
	cc, err := grpc.NewClient("passthrough:///"+rg.h2cAddr,
		grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithAuthority(authority))
	require.NoError(t, err)
	t.Cleanup(func() { cc.Close() })
	return healthpb.NewHealthClient(cc)
}

// clients are one Health client of each transport, both to a GRPC host.
func (rg *rig) clients(t *testing.T) map[string]healthpb.HealthClient {
	return map[string]healthpb.HealthClient{
		"tls-alpn-h2":         rg.tlsClient(t),
		"h2c-prior-knowledge": rg.h2cClient(t, "plain.example.com"),
	}
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return c
}

func TestGRPCThroughRouter(t *testing.T) {
	rg := newRig(t)
	for name, hc := range rg.clients(t) {
		t.Run(name, func(t *testing.T) {
			res, err := hc.Check(ctx(t), &healthpb.HealthCheckRequest{Service: service})
			require.NoError(t, err)
			assert.Equal(t, healthpb.HealthCheckResponse_SERVING, res.Status)

			// An error status from the backend travels in the trailers.
			_, err = hc.Check(ctx(t), &healthpb.HealthCheckRequest{Service: "no.such.Service"})
			st, ok := status.FromError(err)
			require.True(t, ok, "%v", err)
			assert.Equal(t, codes.NotFound, st.Code(), "%v", err)
			assert.Equal(t, "unknown service", st.Message())
		})
	}

	rg.mu.Lock()
	defer rg.mu.Unlock()
	require.Len(t, rg.records, 4)
	for _, rec := range rg.records {
		assert.Equal(t, "prod/shop:50051", rec.Backend)
		assert.Equal(t, rg.backend, rec.Endpoint)
		assert.Equal(t, 200, rec.Status)
		assert.Equal(t, "/grpc.health.v1.Health/Check", rec.Path)
	}
	assert.Zero(t, rg.router.InFlight(rg.backend))
}

// TestGRPCStreaming: a server-streaming call stays open through the router
// and each message arrives as the backend sends it.
func TestGRPCStreaming(t *testing.T) {
	rg := newRig(t)
	for name, hc := range rg.clients(t) {
		t.Run(name, func(t *testing.T) {
			rg.health.SetServingStatus(service, healthpb.HealthCheckResponse_SERVING)
			c, cancel := context.WithCancel(ctx(t))
			stream, err := hc.Watch(c, &healthpb.HealthCheckRequest{Service: service})
			require.NoError(t, err)
			msg, err := stream.Recv()
			require.NoError(t, err)
			assert.Equal(t, healthpb.HealthCheckResponse_SERVING, msg.Status)
			assert.Equal(t, int64(1), rg.router.InFlight(rg.backend), "an open stream is in flight")

			rg.health.SetServingStatus(service, healthpb.HealthCheckResponse_NOT_SERVING)
			msg, err = stream.Recv()
			require.NoError(t, err)
			assert.Equal(t, healthpb.HealthCheckResponse_NOT_SERVING, msg.Status)

			cancel()
			_, err = stream.Recv()
			assert.Equal(t, codes.Canceled, status.Code(err))
			deadline := time.Now().Add(5 * time.Second)
			for rg.router.InFlight(rg.backend) != 0 && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			assert.Zero(t, rg.router.InFlight(rg.backend), "the stream is released when the client cancels")
		})
	}
}

// TestGRPCBackendNotMarked: the Ingress forgot backend-protocol: the gRPC
// client reports Unavailable with the fix in the message, and the request
// never reaches the backend.
func TestGRPCBackendNotMarked(t *testing.T) {
	rg := newRig(t)
	hc := rg.h2cClient(t, "wrong.example.com")
	_, err := hc.Check(ctx(t), &healthpb.HealthCheckRequest{Service: service})
	st, ok := status.FromError(err)
	require.True(t, ok, "%v", err)
	assert.Equal(t, codes.Unavailable, st.Code(), "%v", err)
	assert.Contains(t, st.Message(), "backend-protocol: GRPC")

	rg.mu.Lock()
	defer rg.mu.Unlock()
	require.Len(t, rg.records, 1)
	assert.Equal(t, 502, rg.records[0].Status)
	assert.Equal(t, router.ReasonGRPCNotEnabled, rg.records[0].Reason)
	assert.Equal(t, "prod/shop-http:50051", rg.records[0].Backend)
	assert.Empty(t, rg.records[0].Endpoint)
}

// TestGRPCToTLSHostInTheClear: a cleartext call to a host listed under
// spec.tls is redirected like any plain-HTTP request, which a gRPC client
// cannot follow: it fails rather than being served in the clear.
func TestGRPCToTLSHostInTheClear(t *testing.T) {
	rg := newRig(t)
	hc := rg.h2cClient(t, "grpc.example.com")
	_, err := hc.Check(ctx(t), &healthpb.HealthCheckRequest{Service: service})
	require.Error(t, err)
	assert.Contains(t, status.Convert(err).Message(), "308")
	rg.mu.Lock()
	defer rg.mu.Unlock()
	require.Len(t, rg.records, 1)
	assert.Equal(t, router.ReasonSSLRedirect, rg.records[0].Reason)
}

// TestGRPCSBackend: a backend of backend-protocol GRPCS, a gRPC server
// behind TLS, is called over TLS with "h2" by ALPN: unary calls and a
// server stream go through, an error status too.
func TestGRPCSBackend(t *testing.T) {
	hs := health.NewServer()
	hs.SetServingStatus(service, healthpb.HealthCheckResponse_SERVING)
	crt, key, _ := selfSigned(t, "shop.prod.svc")
	cert, err := tls.X509KeyPair(crt, key)
	require.NoError(t, err)
	gs := grpc.NewServer(grpc.Creds(credentials.NewTLS(&tls.Config{Certificates: []tls.Certificate{cert}})))
	healthpb.RegisterHealthServer(gs, hs)
	bl, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go func() { _ = gs.Serve(bl) }()
	t.Cleanup(gs.Stop)
	ip, port, err := net.SplitHostPort(bl.Addr().String())
	require.NoError(t, err)
	doc := fmt.Sprintf(`
apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata: {name: ramjet}
spec: {controller: ramjet.dev/ingress}
---
apiVersion: v1
kind: Service
metadata: {name: secure, namespace: prod}
spec: {ports: [{name: grpcs, port: 50051, targetPort: %[2]s}]}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: secure-1, namespace: prod, labels: {kubernetes.io/service-name: secure}}
addressType: IPv4
ports: [{name: grpcs, port: %[2]s}]
endpoints: [{addresses: [%[1]s]}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: secure
  namespace: prod
  annotations: {nginx.ingress.kubernetes.io/backend-protocol: GRPCS}
spec:
  ingressClassName: ramjet
  rules:
  - host: secure.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: secure, port: {name: grpcs}}}}]}
`, ip, port)
	snap, skipped, err := manifest.Decode("grpcs.yaml", []byte(doc))
	require.NoError(t, err)
	require.Empty(t, skipped)
	res := compile.Compile(*snap, compile.Options{AllowLoopbackEndpoints: true})
	require.Empty(t, res.Warnings)
	r := router.New(router.Options{Logger: slog.New(slog.DiscardHandler)})
	r.Publish(res.Table)
	t.Cleanup(r.CloseIdleConnections)
	protocols := new(http.Protocols)
	protocols.SetUnencryptedHTTP2(true)
	pl, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := &http.Server{Handler: r, Protocols: protocols, ReadHeaderTimeout: 5 * time.Second, ErrorLog: log.New(io.Discard, "", 0)}
	go func() { _ = srv.Serve(pl) }()
	t.Cleanup(func() { srv.Close() })
	cc, err := grpc.NewClient("passthrough:///"+pl.Addr().String(),
		grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithAuthority("secure.example.com"))
	require.NoError(t, err)
	t.Cleanup(func() { cc.Close() })
	hc := healthpb.NewHealthClient(cc)

	got, err := hc.Check(ctx(t), &healthpb.HealthCheckRequest{Service: service})
	require.NoError(t, err)
	assert.Equal(t, healthpb.HealthCheckResponse_SERVING, got.Status)
	_, err = hc.Check(ctx(t), &healthpb.HealthCheckRequest{Service: "no.such.Service"})
	assert.Equal(t, codes.NotFound, status.Code(err), "%v", err)

	c, cancel := context.WithCancel(ctx(t))
	defer cancel()
	stream, err := hc.Watch(c, &healthpb.HealthCheckRequest{Service: service})
	require.NoError(t, err)
	msg, err := stream.Recv()
	require.NoError(t, err)
	assert.Equal(t, healthpb.HealthCheckResponse_SERVING, msg.Status)
	hs.SetServingStatus(service, healthpb.HealthCheckResponse_NOT_SERVING)
	msg, err = stream.Recv()
	require.NoError(t, err)
	assert.Equal(t, healthpb.HealthCheckResponse_NOT_SERVING, msg.Status)
	cancel()
	_, err = stream.Recv()
	assert.Equal(t, codes.Canceled, status.Code(err))
	bl.Close()
	assert.Eventually(t, func() bool { return r.InFlight(bl.Addr().String()) == 0 }, 5*time.Second, 10*time.Millisecond)
}
