package main

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The controller's warnings (/debug/warnings) and examples/check -report
// give every finding the same verdict on the same manifests: both read
// compile.Warning.Severity, which Compile settled with the annotations and
// options in hand (the admission webhook reads it too).
func TestVerdictsMatchReport(t *testing.T) {
	if testing.Short() {
		t.Skip("builds examples/check")
	}
	dir, err := filepath.Abs(filepath.Join("testdata", "verdicts"))
	require.NoError(t, err)

	bin := filepath.Join(t.TempDir(), "check")
	out, err := exec.Command("go", "build", "-C", filepath.Join("..", "check"), "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, "%s", out)
	cmd := exec.Command(bin, "-report", "-json", "-ingress-class", "nginx", "-controller-name", "k8s.io/ingress-nginx", dir)
	stdout, err := cmd.Output()
	var exit *exec.ExitError
	if err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 0) {
		require.NoError(t, err)
	}
	var report struct {
		Ingresses []struct {
			Findings []struct{ Severity, Reason, Object, Field string }
		}
		Other []struct{ Severity, Reason, Object, Field string }
	}
	require.NoError(t, json.Unmarshal(stdout, &report), "%s", stdout)
	fromReport := map[string]string{}
	for _, in := range report.Ingresses {
		for _, f := range in.Findings {
			fromReport[f.Reason+" "+f.Object+" "+f.Field] = f.Severity
		}
	}
	for _, f := range report.Other {
		fromReport[f.Reason+" "+f.Object+" "+f.Field] = f.Severity
	}

	cfg := config{
		manifests:    dir,
		httpAddr:     "127.0.0.1:0",
		debugAddr:    "127.0.0.1:0",
		pollInterval: time.Hour,
	}
	cfg.options.IngressClass = "nginx"
	cfg.options.ControllerName = "k8s.io/ingress-nginx"
	ctx, cancel := context.WithCancel(context.Background())
	inst, err := start(ctx, cfg, slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})))
	require.NoError(t, err)
	defer func() {
		cancel()
		_ = inst.Wait()
	}()
	client := &http.Client{Timeout: 5 * time.Second}
	defer client.CloseIdleConnections()
	status, body := get(t, client, "http://"+inst.DebugAddr+"/debug/warnings", "")
	require.Equal(t, http.StatusOK, status, body)

	line := regexp.MustCompile(`^(\S+) (\S+ \S+?)(?: (\S+))?: .* \[([a-z-]+)\]$`)
	fromController := map[string]string{}
	for l := range strings.Lines(strings.TrimSpace(body)) {
		m := line.FindStringSubmatch(strings.TrimSuffix(l, "\n"))
		require.NotNil(t, m, "a warning line: %q", l)
		fromController[m[1]+" "+m[2]+" "+m[3]] = m[4]
	}
	require.Equal(t, fromReport, fromController, "the report's verdicts and the controller's")

	// And the verdicts are the ones each case calls for.
	for key, want := range map[string]string{
		"RouteConflict Ingress prod/b spec.rules[0].http.paths[0]":                                                    "cosmetic",
		"RouteConflict Ingress prod/b spec.rules[0].http.paths[1]":                                                    "traffic-moves",
		"SnippetAnswerIgnored Ingress prod/c metadata.annotations[nginx.ingress.kubernetes.io/configuration-snippet]": "traffic-moves",
		"AnnotationUnsupported Ingress prod/c metadata.annotations[nginx.ingress.kubernetes.io/satisfy]":              "traffic-moves",
		"AnnotationUnsupported Ingress prod/c metadata.annotations[nginx.ingress.kubernetes.io/enable-opentracing]":   "feature-missing",
		"ServiceNotFound Ingress prod/d spec.rules[0].http.paths[0].backend.service.name":                             "cosmetic",
	} {
		require.Equal(t, want, fromController[key], "%s in %v", key, fromController)
	}
}
