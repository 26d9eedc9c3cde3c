// Command controller serves Kubernetes Ingresses with ramjet.
//
// Offline mode reads a folder of manifests instead of a cluster, which is
// the quickest way to see what ramjet does with your objects:
//
//	go run ./examples/controller -manifests examples/manifests -demo-backends
//	curl -H 'Host: shop.example.com' localhost:8080/api/x
//
// The folder is polled for changes; every change recompiles the whole
// snapshot and publishes the new table without dropping a request. A folder
// that fails to load keeps the previous table serving. -demo-backends starts
// an echo server on every loopback endpoint the EndpointSlices name, so the
// answers show which backend was chosen and what it received.
//
// /debug/table on -debug-addr shows the table being served, /healthz answers
// once the process is up and /readyz once the first table is published.
// RAMJET_LOG sets the log level: debug (adds one line per request), info,
// warn or error.
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
	"syscall"
)

func main() {
	os.Exit(run(os.Args[1:], os.Getenv("RAMJET_LOG"), os.Stderr))
}

// run is main without the process: it returns the exit code. 2 is a bad
// command line or environment, 1 a failure to start or to shut down cleanly.
func run(args []string, logEnv string, stderr io.Writer) int {
	cfg, err := parseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "controller: %v\n", err)
		return 2
	}
	level, err := logLevel(logEnv)
	if err != nil {
		fmt.Fprintf(stderr, "controller: %v\n", err)
		return 2
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

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
