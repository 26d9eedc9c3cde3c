// Command upstreams serves what examples/loadtest/compare.sh puts load on:
// a backend answering 100 bytes, and in front of it the ramjet router with
// one catch-all Ingress twice, once with its own HTTP/1.1 upstream path
// (the default) and once with a net/http Transport in Options.Transport,
// each behind a plain http.Server. Everything listens on 127.0.0.1; it
// prints "ready" once all listen and exits on SIGINT/SIGTERM, or by itself
// after -max.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"ramjet.dev/ramjet/compile"
	"ramjet.dev/ramjet/compile/manifest"
	"ramjet.dev/ramjet/router"
)

func main() {
	backend := flag.String("backend", "127.0.0.1:18080", "backend address")
	own := flag.String("router", "127.0.0.1:18081", "router with its own upstream path")
	nethttp := flag.String("router-nethttp", "127.0.0.1:18082", "router with a net/http Transport")
	size := flag.Int("body", 100, "response body size in bytes")
	maxRun := flag.Duration("max", 15*time.Minute, "exit after this long whatever happens")
	flag.Parse()
	if err := run(*backend, *own, *nethttp, *size, *maxRun); err != nil {
		fmt.Fprintln(os.Stderr, "upstreams:", err)
		os.Exit(1)
	}
}

func run(backendAddr, ownAddr, nethttpAddr string, size int, maxRun time.Duration) error {
	for _, a := range []string{backendAddr, ownAddr, nethttpAddr} {
		if h, _, err := net.SplitHostPort(a); err != nil || !net.ParseIP(h).IsLoopback() {
			return fmt.Errorf("%s: only loopback addresses", a)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, maxRun)
	defer cancel()

	body := make([]byte, size)
	for i := range body {
		body[i] = 'a' + byte(i%26)
	}
	quiet := log.New(io.Discard, "", 0)
	var servers []*http.Server
	serve := func(addr string, h http.Handler) error {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return err
		}
		s := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ErrorLog: quiet}
		servers = append(servers, s)
		go func() { _ = s.Serve(ln) }()
		return nil
	}
	defer func() {
		for _, s := range servers {
			_ = s.Close()
		}
	}()
	if err := serve(backendAddr, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write(body)
	})); err != nil {
		return err
	}
	res := compile.Compile(snapshot(backendAddr), compile.Options{AllowLoopbackEndpoints: true})
	if len(res.Warnings) > 0 {
		return fmt.Errorf("the table has warnings: %v", res.Warnings)
	}
	table := res.Table
	logger := slog.New(slog.DiscardHandler)
	routers := map[string]*router.Router{
		ownAddr: router.New(router.Options{Logger: logger}),
		nethttpAddr: router.New(router.Options{Logger: logger, Transport: &http.Transport{
			// As the router's own net/http transports.
			Proxy:               nil,
			DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			MaxIdleConnsPerHost: 64,
			IdleConnTimeout:     60 * time.Second,
			DisableCompression:  true,
		}}),
	}
	for addr, r := range routers {
		r.Publish(table)
		defer r.CloseIdleConnections()
		if err := serve(addr, r); err != nil {
			return err
		}
	}
	fmt.Println("ready")
	<-ctx.Done()
	return nil
}

// snapshot is one catch-all Ingress (any host, every path) to a Service
// whose one endpoint is the backend.
func snapshot(backendAddr string) compile.Snapshot {
	ip, port, _ := net.SplitHostPort(backendAddr)
	doc := fmt.Sprintf(`
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
	s, _, err := manifest.Decode("upstreams.yaml", []byte(doc))
	if err != nil {
		panic(err) // the document is a constant
	}
	return *s
}
