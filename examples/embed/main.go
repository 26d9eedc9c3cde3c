// Command embed shows ramjet's router inside someone else's server: their
// listener, their middleware (an access log) and a /healthz of their own,
// with the routing table compiled from a folder of manifests.
//
//	go run ./examples/embed -manifests examples/manifests
//	curl -H 'Host: shop.example.com' localhost:8080/api/x
//	kill -HUP <pid>    # recompile the folder and publish the new table
//
// The manifests' endpoints are on 127.0.0.1:18081-18086, where nothing
// listens unless the example controller's echo servers do (without them
// the curl answers 502):
//
//	go run ./examples/controller -manifests examples/manifests -demo-backends -http-addr 127.0.0.1:8090
//
// What an embedder decides, and this program shows:
//
//   - The router is an http.Handler. Put it behind your own handler, not
//     under an http.ServeMux pattern: ServeMux cleans paths and redirects
//     "//a" or "/a/../b" before the router sees them, and the router must
//     pass the request-target to the backend byte for byte.
//   - Serve it with router/h1's Server, ramjet's HTTP/1 server: it calls
//     the handler with net/http's server semantics for a fraction of the
//     CPU, and refuses the request framings nginx refuses. It hands
//     HTTP/2 connections (cleartext with prior knowledge, as gRPC clients
//     send, and "h2" over TLS) to router/h2's Server (h1.Server.HTTP2),
//     and anything else it does not serve to an http.Server (Fallback).
//     net/http's server alone works too, its listener wrapped in
//     h1.GuardFraming, with h2.ConfigureServer for its HTTP/2.
//   - TLS: serve the same handler on a listener with Router.TLSConfig();
//     certificates come from the table and rotate with it.
//   - Publish a new table whenever the objects change; requests in flight
//     finish on the table they started with, and an unchanged digest
//     publishes nothing.
//   - Per-Ingress behaviour of your own: register an annotation prefix
//     (compile.Options.ExtensionPrefixes) and read the matched route's
//     Extensions in a router.Hook. Here an Ingress annotated
//     example.com/require-header: X-Api-Key answers 401 to requests
//     without that header, and tells its backend the check was made.
//   - Your own transport around the default one (router.DefaultTransport),
//     which keeps the timeouts and the gRPC transports: here it counts
//     upstream requests.
//   - Access logs and metrics from router.Record (Options.Observer): the
//     virtual host, Ingress, Service, endpoint, timings and request ID of
//     every routed request; Options.ReturnRequestID gives clients the ID.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	"ramjet.dev/ramjet/compile"
	"ramjet.dev/ramjet/compile/manifest"
	"ramjet.dev/ramjet/router"
	"ramjet.dev/ramjet/router/h1"
	rh2 "ramjet.dev/ramjet/router/h2"
)

// requireHeader is this embedder's own annotation: the request header an
// Ingress's requests must carry.
const (
	extensionPrefix = "example.com/"
	requireHeader   = extensionPrefix + "require-header"
)

func main() {
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	fs := flag.NewFlagSet("embed", flag.ExitOnError)
	manifests := fs.String("manifests", "", "folder (or file) of Kubernetes manifests to serve")
	addr := fs.String("addr", "127.0.0.1:8080", "listen address: HTTP/1.1 and cleartext HTTP/2")
	_ = fs.Parse(os.Args[1:])
	if *manifests == "" {
		fmt.Fprintln(os.Stderr, "embed: -manifests is required")
		os.Exit(2)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	a, err := start(*manifests, *addr, logger)
	if err != nil {
		logger.Error("cannot start", "error", err)
		os.Exit(1)
	}
	logger.Info("serving", "addr", a.addr)

	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	for {
		select {
		case <-hup:
			if err := a.reload(); err != nil {
				logger.Error("reload failed; the previous table keeps serving", "error", err)
			}
		case <-ctx.Done():
			shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			err := a.shutdown(shutdown)
			cancel()
			if err != nil {
				logger.Error("shutdown", "error", err)
				os.Exit(1)
			}
			return
		}
	}
}

// app is the embedding server.
type app struct {
	manifests string
	addr      string
	router    *router.Router
	server    *h1.Server
	logger    *slog.Logger
	done      chan error
	// upstreamRequests counts requests sent to backends.
	upstreamRequests atomic.Int64
}

// start compiles the manifests, publishes the table and serves it on addr.
func start(manifests, addr string, logger *slog.Logger) (*app, error) {
	a := &app{manifests: manifests, logger: logger, done: make(chan error, 1)}
	o := router.Options{Logger: logger, Hook: requireHeaderHook, Observer: a.observe, ReturnRequestID: true}
	o.Transport = counting{next: router.DefaultTransport(o), n: &a.upstreamRequests}
	a.router = router.New(o)
	if err := a.reload(); err != nil {
		return nil, err
	}

	protocols := new(http.Protocols)
	protocols.SetHTTP1(true)
	protocols.SetUnencryptedHTTP2(true)
	h2 := &http.Server{
		Handler:           accessLog(logger, withHealthz(a.router)),
		Protocols:         protocols,
		ReadHeaderTimeout: 10 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	// nginx's keep-alive timeout (75 s) where the server sets none.
	a.router.ConfigureServer(h2)
	a.server = &h1.Server{
		Handler:           h2.Handler,
		ReadHeaderTimeout: h2.ReadHeaderTimeout,
		IdleTimeout:       h2.IdleTimeout,
		MaxHeaderBytes:    h2.MaxHeaderBytes,
		ErrorLog:          h2.ErrorLog,
		Fallback:          h2,
		HTTP2: &rh2.Server{
			Handler:           h2.Handler,
			IdleTimeout:       h2.IdleTimeout,
			ReadHeaderTimeout: h2.ReadHeaderTimeout,
			MaxHeaderBytes:    h2.MaxHeaderBytes,
			ErrorLog:          h2.ErrorLog,
		},
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	a.addr = ln.Addr().String()
	go func() { a.done <- a.server.Serve(ln) }()
	return a, nil
}

// reload compiles the folder again and publishes the result. A folder that
// does not load leaves the serving table as it is.
func (a *app) reload() error {
	snap, _, err := manifest.Load(a.manifests)
	if err != nil {
		return err
	}
	// Manifests read on this machine name backends on this machine, so
	// loopback endpoints are kept; a table built from a cluster leaves
	// them out (SPEC §8).
	res := compile.Compile(*snap, compile.Options{AllowLoopbackEndpoints: true, ExtensionPrefixes: []string{extensionPrefix}})
	for _, w := range res.Warnings {
		a.logger.Warn("ingress warning", "reason", string(w.Reason), "object", w.Object.String(), "field", w.Field, "message", w.Message)
	}
	gen, changed := a.router.Publish(res.Table)
	a.logger.Info("table loaded", "generation", gen, "changed", changed)
	return nil
}

// shutdown stops accepting, waits for requests in flight and WebSocket
// tunnels (which the server stops counting once taken over), and closes
// the router's idle connections to backends.
func (a *app) shutdown(ctx context.Context) error {
	err := errors.Join(a.server.Shutdown(ctx), a.router.Shutdown(ctx))
	if serveErr := <-a.done; !errors.Is(serveErr, http.ErrServerClosed) {
		err = errors.Join(err, serveErr)
	}
	a.router.CloseIdleConnections()
	return err
}

// requireHeaderHook enforces example.com/require-header on the locations
// of the Ingresses that carry it: their routes, and the host fallback
// their spec.defaultBackend makes, which a check on m.Route alone would
// let through. It runs with the table the request is then proxied with,
// so a table published meanwhile cannot skip the check.
func requireHeaderHook(w http.ResponseWriter, req *http.Request, m router.Match) bool {
	name, ok := m.Extensions().Get(requireHeader)
	if !ok {
		return false
	}
	if req.Header.Get(name) == "" {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprintf(w, "401 Unauthorized: %s requires the %s header\n", m.Source().Ingress(), name)
		return true
	}
	// Passed on, with a header telling the backend the check was made.
	req.Header.Set("X-Checked-Header", name)
	return false
}

// observe logs one line per routed request from the router's record.
func (a *app) observe(rec router.Record) {
	a.logger.Info("routed", "requestID", rec.RequestID, "client", rec.ClientAddr,
		"vhost", rec.VirtualHost, "ingress", rec.Route.Ingress(), "service", rec.Backend,
		"endpoint", rec.Endpoint, "status", rec.Status, "reason", rec.Reason,
		"bytesIn", rec.BytesIn, "bytesOut", rec.BytesOut, "tries", rec.Tries,
		"duration", rec.Duration, "upstreamHeader", rec.UpstreamHeaderTime,
		"userAgent", rec.Request.UserAgent())
}

// counting wraps the router's default transport: every upstream request
// passes through it, and the default's timeouts and gRPC transports stay.
type counting struct {
	next http.RoundTripper
	n    *atomic.Int64
}

func (c counting) RoundTrip(req *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.next.RoundTrip(req)
}

// CloseIdleConnections lets Router.CloseIdleConnections reach the default.
func (c counting) CloseIdleConnections() {
	if ci, ok := c.next.(interface{ CloseIdleConnections() }); ok {
		ci.CloseIdleConnections()
	}
}

// withHealthz answers the embedder's own /healthz, on any host, and hands
// everything else to the router untouched.
func withHealthz(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/healthz" && r.Method == http.MethodGet {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			_, _ = io.WriteString(w, "ok\n")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// accessLog logs one line per request. It wraps the ResponseWriter with
// Unwrap, so the router can still flush streams and hijack connections
// for WebSocket through http.ResponseController.
func accessLog(logger *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		next.ServeHTTP(sw, r)
		logger.Info("request", "method", r.Method, "host", r.Host, "target", r.RequestURI,
			"proto", r.Proto, "status", sw.status, "bytes", sw.bytes, "duration", time.Since(start))
	})
}

type statusWriter struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 && (code >= 200 || code == http.StatusSwitchingProtocols) {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(p)
	w.bytes += int64(n)
	return n, err
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
