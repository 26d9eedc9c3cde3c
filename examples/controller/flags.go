package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"ramjet.dev/ramjet/compile"
)

// config is everything the command line decides. parseFlags validates it
// completely, so a malformed value stops the process before any listener
// opens or any table exists (SPEC §1).
type config struct {
	manifests    string
	demoBackends bool
	options      compile.Options
	httpAddr     string
	httpsAddr    string
	debugAddr    string
	pollInterval time.Duration
}

// errUsage marks a command line that could not be parsed; main exits 2.
var errUsage = errors.New("usage")

func parseFlags(args []string, output io.Writer) (config, error) {
	var (
		c              config
		defaultBackend string
		sslRedirect    bool
	)
	fs := flag.NewFlagSet("controller", flag.ContinueOnError)
	fs.SetOutput(output)
	fs.Usage = func() {
		fmt.Fprintf(output, "Usage: controller -manifests DIR [flags]\n\n"+
			"Serves the Ingresses in a folder of Kubernetes manifests with no cluster,\n"+
			"recompiling whenever a file changes.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	fs.StringVar(&c.manifests, "manifests", "", "folder (or single file) of YAML/JSON manifests to serve; watched for changes")
	fs.BoolVar(&c.demoBackends, "demo-backends", false, "start an echo server on every 127.0.0.0/8 endpoint named by the loaded EndpointSlices")
	fs.StringVar(&c.options.IngressClass, "ingress-class", compile.DefaultIngressClass, "class name answered for the kubernetes.io/ingress.class annotation")
	fs.StringVar(&c.options.ControllerName, "controller-name", compile.DefaultControllerName, "controller name matched against IngressClass spec.controller")
	fs.StringVar(&defaultBackend, "default-backend", "", "global default backend, namespace/name:port (port number or name)")
	fs.BoolVar(&c.options.WatchIngressWithoutClass, "watch-ingress-without-class", false, "also serve Ingresses that name no class")
	fs.BoolVar(&sslRedirect, "ssl-redirect", true, "redirect plain HTTP to HTTPS for hosts listed under spec.tls")
	fs.StringVar(&c.httpAddr, "http-addr", "127.0.0.1:8080", "plain HTTP listen address (HTTP/1.1 and cleartext HTTP/2)")
	fs.StringVar(&c.httpsAddr, "https-addr", "", "TLS listen address; empty turns TLS off")
	fs.StringVar(&c.debugAddr, "debug-addr", "127.0.0.1:8081", "address of /debug/table, /healthz and /readyz; empty turns it off")
	fs.DurationVar(&c.pollInterval, "poll-interval", 500*time.Millisecond, "how often the manifests folder is checked for changes")

	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return config{}, err
		}
		return config{}, fmt.Errorf("%w: %v", errUsage, err)
	}
	if fs.NArg() > 0 {
		return config{}, fmt.Errorf("%w: unexpected argument %q (manifests are given with -manifests)", errUsage, fs.Arg(0))
	}
	if c.manifests == "" {
		return config{}, fmt.Errorf("%w: -manifests is required", errUsage)
	}
	if c.httpAddr == "" && c.httpsAddr == "" {
		return config{}, fmt.Errorf("%w: -http-addr and -https-addr are both empty: nothing would serve traffic", errUsage)
	}
	if c.pollInterval <= 0 {
		return config{}, fmt.Errorf("%w: -poll-interval %v: must be positive", errUsage, c.pollInterval)
	}
	if defaultBackend != "" {
		ref, err := compile.ParseServiceRef(defaultBackend)
		if err != nil {
			return config{}, fmt.Errorf("%w: -default-backend: %v", errUsage, err)
		}
		c.options.DefaultBackend = &ref
	}
	c.options.DisableSSLRedirect = !sslRedirect
	if err := c.options.Validate(); err != nil {
		return config{}, fmt.Errorf("%w: %v", errUsage, err)
	}
	return c, nil
}

// logLevel reads RAMJET_LOG (SPEC §14); empty means info.
func logLevel(v string) (slog.Level, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "", "info":
		return slog.LevelInfo, nil
	case "debug":
		return slog.LevelDebug, nil
	case "warn", "warning":
		return slog.LevelWarn, nil
	case "error":
		return slog.LevelError, nil
	}
	return 0, fmt.Errorf("RAMJET_LOG=%q: want debug, info, warn or error", v)
}
