// Command controller serves Kubernetes Ingresses with ramjet.
//
// In a cluster it watches Ingresses, IngressClasses, Services,
// EndpointSlices and Secrets, recompiles the whole snapshot 200 ms after
// the last change (at least once a second under steady churn) and publishes
// the new table without dropping a request. Every replica serves traffic;
// the one holding the leader Lease also writes Ingress status and posts
// Warning Events (see README.md for the flags, RBAC and a Deployment):
//
//	go run ./examples/controller -kubeconfig ~/.kube/config -publish-service ingress/ramjet
//
// Offline mode reads a folder of manifests instead of a cluster, which is
// the quickest way to see what ramjet does with your objects:
//
//	go run ./examples/controller -manifests examples/manifests -demo-backends
//	curl -H 'Host: shop.example.com' localhost:8080/api/x
//
// The folder is polled for changes; every change recompiles the whole
// snapshot. A document or file that cannot be read is logged as an error
// and the rest is served; a folder that cannot be listed keeps the
// previous table serving.
// -demo-backends starts an echo server on every loopback endpoint the
// EndpointSlices name (a UDP echo for a port of protocol UDP), so the answers
// show which backend was chosen and what it received.
//
// /debug/table on -debug-addr shows the table being served, /metrics (with
// -enable-metrics) ingress-nginx's Prometheus metrics and ramjet's own,
// /healthz answers once the process is up and /readyz once the first table
// is published. Each request gets an access log line on stdout
// (ingress-nginx's default log-format-upstream, else text or JSON,
// -access-log-format; off with -enable-access-log=false); RAMJET_LOG
// sets the level of the rest: debug, info, warn or error (or
// ingress-nginx's -v: 3 and above is debug).
//
// SIGTERM fails /readyz and drains for -shutdown-grace-period before the
// listeners close; "controller -wait-shutdown" is the Deployment's preStop
// hook that starts it (see README.md).
//
// "controller --version" prints the release, the source revision and the Go
// version, and exits.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/pprof"
	"strings"
	"syscall"

	"k8s.io/klog/v2"
)

func main() {
	os.Exit(run(os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
}

// run is main without the process: it returns the exit code. 2 is a bad
// command line or environment, 1 a failure to start or to shut down cleanly.
// The access log goes to stdout, everything else to stderr.
func run(args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	if len(args) == 1 && strings.TrimLeft(args[0], "-") == "wait-shutdown" {
		return waitShutdown(stderr)
	}
	if versionRequested(args) {
		printVersion(stdout)
		return 0
	}
	cfg, err := parseFlags(args, stderr, getenv)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "controller: %v\n", err)
		return 2
	}
	cfg.accessLogOut = stdout
	reopen := make(chan os.Signal, 1)
	if notifyReopen(reopen) {
		defer func() {
			signal.Stop(reopen)
			close(reopen)
		}()
		cfg.reopenLogs = reopen
	}
	level, err := logLevel(getenv("RAMJET_LOG"), cfg.verbosity)
	if err != nil {
		fmt.Fprintf(stderr, "controller: %v\n", err)
		return 2
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	// client-go logs through klog; one format and one level setting for all.
	klog.SetSlogLogger(logger)

	if env := getenv("RAMJET_LOG"); env != "" && cfg.verbosity != nil {
		logger.Warn("--v sets the log level; RAMJET_LOG is ignored", "v", *cfg.verbosity, "RAMJET_LOG", env)
	}
	if len(cfg.noop) > 0 {
		logger.Info("accepted ingress-nginx flags that ask for what ramjet does anyway", "flags", cfg.noop)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		// The first signal starts the drain; a second one ends the
		// process at once.
		<-ctx.Done()
		stop()
	}()

	if cfg.cpuProfile != "" {
		stopProfile, err := startCPUProfile(cfg.cpuProfile)
		if err != nil {
			logger.Error("cannot start", "err", err)
			return 1
		}
		defer stopProfile()
	}

	inst, err := start(ctx, cfg, logger)
	if err != nil {
		logger.Error("cannot start", "err", err)
		return 1
	}
	if err := inst.Wait(); err != nil {
		logger.Error("shutdown", "err", err)
		return 1
	}
	logger.Info("stopped")
	return 0
}

// start runs the controller cfg describes: offline with -manifests, else
// against the cluster the kubeconfig rules find.
func start(ctx context.Context, cfg config, log *slog.Logger) (*instance, error) {
	if cfg.manifests != "" {
		return startOffline(ctx, cfg, log)
	}
	restConfig, err := kubeConfig(cfg.kubeconfig)
	if err != nil {
		return nil, err
	}
	return startCluster(ctx, cfg, log, restConfig)
}

// startCPUProfile profiles the process into path until the returned
// function runs.
func startCPUProfile(path string) (func(), error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("-cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("-cpuprofile: %w", err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}
