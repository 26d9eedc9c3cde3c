// Command upstreams serves one of the processes examples/loadtest/compare.sh
// puts load on, so that every proxy and the backend are processes of their
// own, as nginx is (issue 26):
//
//	-role backend       a Go backend answering -body bytes
//	-role router        the ramjet router with one catch-all Ingress to
//	                    -backend (-ingresses N loads N-1 more, each for a
//	                    host of its own), behind a plain http.Server
//	-role router-nethttp the same with a net/http Transport in
//	                    Options.Transport instead of the router's own
//	                    HTTP/1.1 upstream path
//	-role proxy         a bare httputil.ReverseProxy to -backend with
//	                    X-Forwarded-For, -Host and -Proto
//	-role router-loop   the router behind router/h1's server, the
//	                    controller's own HTTP/1.1 server loop (its
//	                    default -http1-server), instead of http.Server
//	-role router-rawloop the router behind serveRawLoop, a measuring
//	                    device standing for a server loop of the
//	                    controller's own (see rawloop.go), instead of
//	                    http.Server
//	-role manifests     prints the routers' objects as YAML, for the
//	                    example controller's -manifests (compare.sh's
//	                    controller config)
//
// With -grpc-backend the objects add an Ingress for the host grpc.load
// with backend-protocol GRPC to that gRPC server (examples/loadtest/grpcload);
// with -cert and -key (PEM files) a kubernetes.io/tls Secret load/tls
// holding them, for the controller's -default-ssl-certificate, and the
// routers serve them as their default certificate. router-loop with
// -tls-listen serves HTTPS there too, as the controller does: the
// handshake first (ingress-nginx's TLS defaults), then HTTP/1.1 to the
// loop and HTTP/2 (ALPN h2) to net/http's server (issue 41).
//
// It listens on -listen, which must be a loopback address, prints "ready"
// once it does and exits on SIGINT/SIGTERM, or by itself after -max.
// -cpuprofile writes a CPU profile of the whole run.
package main

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/signal"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"ramjet.dev/ramjet/compile"
	"ramjet.dev/ramjet/compile/manifest"
	"ramjet.dev/ramjet/router"
	"ramjet.dev/ramjet/router/h1"
)

func main() {
	role := flag.String("role", "", "backend, router, router-nethttp, router-loop, router-rawloop, proxy, or manifests (print the routers' objects as YAML for the example controller)")
	listen := flag.String("listen", "127.0.0.1:18080", "address to serve on")
	backend := flag.String("backend", "127.0.0.1:18080", "backend address (proxies)")
	ingresses := flag.Int("ingresses", 1, "Ingresses loaded in the router: the catch-all and N-1 for hosts of their own")
	size := flag.Int("body", 100, "response body size in bytes (backend)")
	maxRun := flag.Duration("max", 15*time.Minute, "exit after this long whatever happens")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the run to this file")
	flag.StringVar(&extra.grpcBackend, "grpc-backend", "", "gRPC backend address: adds the grpc.load Ingress (backend-protocol GRPC)")
	flag.StringVar(&extra.certFile, "cert", "", "PEM certificate: the routers' default certificate and the Secret load/tls")
	flag.StringVar(&extra.keyFile, "key", "", "PEM private key of -cert")
	flag.StringVar(&extra.tlsListen, "tls-listen", "", "router-loop: also serve HTTPS (HTTP/1.1 and HTTP/2) on this address; needs -cert and -key")
	flag.StringVar(&extra.http2Server, "http2-server", "ramjet", "router-loop: who serves HTTP/2 over TLS: ramjet (router/h2, as the controller's -http2-server default) or net/http")
	flag.StringVar(&extra.memProfile, "memprofile", "", "write an allocation profile of the run to this file as it ends")
	flag.BoolVar(&extra.tlsRaw, "tls-raw", true, "with -tls-listen: TLS connections' sockets read and written raw (rawsock.NetConn), as the controller's; false measures Go's own socket calls")
	flag.Parse()
	if err := run(*role, *listen, *backend, *ingresses, *size, *maxRun, *cpuProfile); err != nil {
		fmt.Fprintln(os.Stderr, "upstreams:", err)
		os.Exit(1)
	}
}

// extra is what issue 41's modes add: gRPC and TLS.
var extra struct {
	grpcBackend, certFile, keyFile, tlsListen string
	memProfile                                string
	tlsRaw                                    bool
	http2Server                               string
}

func run(role, listen, backendAddr string, ingresses, size int, maxRun time.Duration, cpuProfile string) error {
	addrs := []string{listen, backendAddr}
	for _, a := range []string{extra.grpcBackend, extra.tlsListen} {
		if a != "" {
			addrs = append(addrs, a)
		}
	}
	for _, a := range addrs {
		if h, _, err := net.SplitHostPort(a); err != nil || !net.ParseIP(h).IsLoopback() {
			return fmt.Errorf("%s: only loopback addresses", a)
		}
	}
	if ingresses < 1 {
		return fmt.Errorf("-ingresses %d: at least the catch-all", ingresses)
	}
	if (extra.certFile == "") != (extra.keyFile == "") || (extra.tlsListen != "" && (extra.certFile == "" || role != "router-loop")) {
		return fmt.Errorf("-cert and -key go together; -tls-listen needs both and -role router-loop")
	}
	if role == "manifests" {
		doc, err := manifestsWithExtras(backendAddr, ingresses)
		if err != nil {
			return err
		}
		_, err = io.WriteString(os.Stdout, doc)
		return err
	}
	h, cleanup, err := handler(role, backendAddr, ingresses, size)
	if err != nil {
		return err
	}
	defer cleanup()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, maxRun)
	defer cancel()
	if cpuProfile != "" {
		f, err := os.Create(cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	if extra.memProfile != "" {
		defer func() {
			if f, err := os.Create(extra.memProfile); err == nil {
				_ = pprof.Lookup("allocs").WriteTo(f, 0)
				f.Close()
			}
		}()
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	switch role {
	case "router-rawloop":
		go serveRawLoop(ln, h)
		defer ln.Close()
	case "router-loop":
		// The controller's settings (-http1-server ramjet).
		s := &h1.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 75 * time.Second, ErrorLog: log.New(io.Discard, "", 0)}
		go func() { _ = s.Serve(ln) }()
		defer s.Close()
		if extra.tlsListen != "" {
			stop, err := serveTLS(h.(*router.Router), extra.tlsListen)
			if err != nil {
				return err
			}
			defer stop()
		}
	default:
		s := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ErrorLog: log.New(io.Discard, "", 0)}
		go func() { _ = s.Serve(ln) }()
		defer s.Close()
	}
	fmt.Println("ready")
	<-ctx.Done()
	return nil
}

// handler is what the role serves, and what to do when it stops.
func handler(role, backendAddr string, ingresses, size int) (http.Handler, func(), error) {
	nethttp := func() *http.Transport {
		return &http.Transport{ // as the router's own net/http transports
			DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			MaxIdleConnsPerHost: 64,
			IdleConnTimeout:     60 * time.Second,
			DisableCompression:  true,
		}
	}
	switch role {
	case "backend":
		body := make([]byte, size)
		for i := range body {
			body[i] = 'a' + byte(i%26)
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "text/plain")
			_, _ = w.Write(body)
		}), func() {}, nil
	case "router", "router-nethttp", "router-loop", "router-rawloop":
		res := compile.Compile(snapshot(backendAddr, ingresses), compile.Options{AllowLoopbackEndpoints: true})
		if len(res.Warnings) > 0 {
			return nil, nil, fmt.Errorf("the table has warnings: %v", res.Warnings)
		}
		o := router.Options{Logger: slog.New(slog.DiscardHandler)}
		if extra.certFile != "" {
			cert, err := tls.LoadX509KeyPair(extra.certFile, extra.keyFile)
			if err != nil {
				return nil, nil, err
			}
			o.DefaultCertificate = &cert
		}
		if role == "router-nethttp" {
			o.Transport = nethttp()
		}
		r := router.New(o)
		r.Publish(res.Table)
		return r, r.CloseIdleConnections, nil
	case "proxy":
		target := &url.URL{Scheme: "http", Host: backendAddr}
		tr := nethttp()
		return &httputil.ReverseProxy{
			Rewrite: func(pr *httputil.ProxyRequest) {
				pr.SetURL(target)
				pr.Out.Host = pr.In.Host
				pr.SetXForwarded()
			},
			Transport: tr,
			ErrorLog:  log.New(io.Discard, "", 0),
		}, tr.CloseIdleConnections, nil
	}
	return nil, nil, fmt.Errorf("-role %q: backend, router, router-nethttp, router-loop, router-rawloop or proxy", role)
}

// snapshot is one catch-all Ingress (any host, every path) to a Service
// whose one endpoint is the backend, and n-1 more Ingresses to the same
// Service, each for a host of its own, which requests to the catch-all
// never match.
func snapshot(backendAddr string, n int) compile.Snapshot {
	doc, err := manifestsWithExtras(backendAddr, n)
	if err != nil {
		panic(err) // checked by run before
	}
	s, _, err := manifest.Decode("upstreams.yaml", []byte(doc))
	if err != nil {
		panic(err) // the document is built from constants
	}
	return *s
}

// manifestsWithExtras is manifests and what -grpc-backend and -cert add.
func manifestsWithExtras(backendAddr string, n int) (string, error) {
	doc := manifests(backendAddr, n)
	if a := extra.grpcBackend; a != "" {
		ip, port, _ := net.SplitHostPort(a)
		doc += fmt.Sprintf(`---
apiVersion: v1
kind: Service
metadata: {name: grpc, namespace: load}
spec: {ports: [{name: grpc, port: 50051, targetPort: %[2]s}]}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: grpc-1, namespace: load, labels: {kubernetes.io/service-name: grpc}}
addressType: IPv4
ports: [{name: grpc, port: %[2]s}]
endpoints: [{addresses: [%[1]s]}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: grpc
  namespace: load
  annotations: {nginx.ingress.kubernetes.io/backend-protocol: GRPC}
spec:
  ingressClassName: ramjet
  rules:
  - host: grpc.load
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: grpc, port: {number: 50051}}}}]}
`, ip, port)
	}
	if extra.certFile != "" {
		crt, err := os.ReadFile(extra.certFile)
		if err != nil {
			return "", err
		}
		key, err := os.ReadFile(extra.keyFile)
		if err != nil {
			return "", err
		}
		doc += fmt.Sprintf(`---
apiVersion: v1
kind: Secret
metadata: {name: tls, namespace: load}
type: kubernetes.io/tls
data: {tls.crt: %s, tls.key: %s}
`, base64.StdEncoding.EncodeToString(crt), base64.StdEncoding.EncodeToString(key))
	}
	return doc, nil
}

// manifests is snapshot's objects as one YAML document, as the example
// controller reads them with -manifests (role manifests prints it).
func manifests(backendAddr string, n int) string {
	ip, port, _ := net.SplitHostPort(backendAddr)
	var doc strings.Builder
	fmt.Fprintf(&doc, `
apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata: {name: ramjet}
spec: {controller: ramjet.dev/ingress}
---
apiVersion: v1
kind: Service
metadata: {name: backend, namespace: load}
spec: {ports: [{port: 80, targetPort: %[2]s}]}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: backend-1, namespace: load, labels: {kubernetes.io/service-name: backend}}
addressType: IPv4
ports: [{name: "", port: %[2]s}]
endpoints: [{addresses: [%[1]s]}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: all, namespace: load}
spec:
  ingressClassName: ramjet
  rules:
  - http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: backend, port: {number: 80}}}}]}
`, ip, port)
	for i := 1; i < n; i++ {
		fmt.Fprintf(&doc, `---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: app-%[1]d, namespace: load}
spec:
  ingressClassName: ramjet
  rules:
  - host: app-%[1]d.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: backend, port: {number: 80}}}}, {path: /api/v%[1]d, pathType: Prefix, backend: {service: {name: backend, port: {number: 80}}}}]}
`, i)
	}
	return doc.String()
}
