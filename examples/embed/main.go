// Command embed shows ramjet's router inside someone else's server: their
// listener, their middleware (an access log) and a /healthz of their own,
// with the routing table compiled from a folder of manifests.
//
//	go run ./examples/embed -manifests examples/manifests
//	curl -H 'Host: shop.example.com' localhost:8080/api/x
//	kill -HUP <pid>    # recompile the folder and publish the new table
//
// What an embedder decides, and this program shows:
//
//   - The router is an http.Handler. Put it behind your own handler, not
//     under an http.ServeMux pattern: ServeMux cleans paths and redirects
//     "//a" or "/a/../b" before the router sees them, and the router must
//     pass the request-target to the backend byte for byte.
//   - Cleartext HTTP/2 (gRPC clients with prior knowledge) is switched on
//     with http.Server.Protocols: SetHTTP1 and SetUnencryptedHTTP2.
//   - TLS: serve the same handler on a listener with Router.TLSConfig();
//     certificates come from the table and rotate with it.
//   - Publish a new table whenever the objects change; requests in flight
//     finish on the table they started with, and an unchanged digest
//     publishes nothing.
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
	"syscall"
	"time"

	"ramjet.dev/ramjet/compile"
	"ramjet.dev/ramjet/compile/manifest"
	"ramjet.dev/ramjet/router"
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
	server    *http.Server
	logger    *slog.Logger
	done      chan error
}

// start compiles the manifests, publishes the table and serves it on addr.
func start(manifests, addr string, logger *slog.Logger) (*app, error) {
	a := &app{manifests: manifests, logger: logger, done: make(chan error, 1)}
	a.router = router.New(router.Options{Logger: logger})
	if err := a.reload(); err != nil {
		return nil, err
	}

	protocols := new(http.Protocols)
	protocols.SetHTTP1(true)
	protocols.SetUnencryptedHTTP2(true)
	a.server = &http.Server{
		Handler:           accessLog(logger, withHealthz(a.router)),
		Protocols:         protocols,
		ReadHeaderTimeout: 10 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	// nginx's keep-alive timeout (75 s) where the server sets none.
	a.router.ConfigureServer(a.server)
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
	res := compile.Compile(*snap, compile.Options{AllowLoopbackEndpoints: true})
	for _, w := range res.Warnings {
		a.logger.Warn("ingress warning", "reason", string(w.Reason), "object", w.Object.String(), "field", w.Field, "message", w.Message)
	}
	gen, changed := a.router.Publish(res.Table)
	a.logger.Info("table loaded", "generation", gen, "changed", changed)
	return nil
}

// shutdown stops accepting, waits for requests in flight, and closes the
// router's idle connections to backends.
func (a *app) shutdown(ctx context.Context) error {
	err := a.server.Shutdown(ctx)
	if serveErr := <-a.done; !errors.Is(serveErr, http.ErrServerClosed) {
		err = errors.Join(err, serveErr)
	}
	a.router.CloseIdleConnections()
	return err
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
