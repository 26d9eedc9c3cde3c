package main

import (
	"context"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// An ingress-nginx user's folder served with ramjet's default class: the
// log and /readyz say that nothing is claimed and which flag claims it.
func TestUnclaimedIngressesAreReported(t *testing.T) {
	dir := t.TempDir()
	manifest := strings.ReplaceAll(appManifests("1"), "ingressClassName: ramjet", "ingressClassName: nginx")
	manifest = strings.Replace(manifest, "name: ramjet\nspec:\n  controller: ramjet.dev/ingress", "name: nginx\nspec:\n  controller: k8s.io/ingress-nginx", 1)
	writeFile(t, filepath.Join(dir, "app.yaml"), manifest)

	logs := &syncBuffer{}
	logger := slog.New(slog.NewTextHandler(logs, nil))
	ctx, cancel := context.WithCancel(context.Background())
	inst, err := start(ctx, config{
		manifests: dir, httpAddr: "127.0.0.1:0", debugAddr: "127.0.0.1:0", pollInterval: 10 * time.Millisecond,
	}, logger)
	require.NoError(t, err)
	defer func() {
		cancel()
		_ = inst.Wait()
	}()
	want := `1 of 1 Ingresses read are not claimed (nothing is served from Ingresses): 1 with ingressClassName "nginx" (IngressClass of controller "k8s.io/ingress-nginx"), e.g. t/app: --controller-class=k8s.io/ingress-nginx claims them`
	waitFor(t, 5*time.Second, "the warning in the log", func() bool { return logs.count("Ingresses not claimed") > 0 })
	require.Contains(t, logs.String(), "level=WARN msg=\"Ingresses not claimed\" read=1 claimed=0")
	require.Contains(t, logs.String(), strings.ReplaceAll(want, `"`, `\"`))

	status, body := get(t, http.DefaultClient, "http://"+inst.DebugAddr+"/readyz", "")
	require.Equal(t, http.StatusOK, status, "readiness is about the table, not about what it holds")
	require.Contains(t, body, "warning: "+want+"\n")

	// The flag it names claims it, and the note is gone.
	logs2 := &syncBuffer{}
	ctx2, cancel2 := context.WithCancel(context.Background())
	cfg, err := parseFlags([]string{"-manifests", dir, "-http-addr", "127.0.0.1:0", "-debug-addr", "127.0.0.1:0", "--controller-class=k8s.io/ingress-nginx"}, logs2, func(string) string { return "" })
	require.NoError(t, err)
	inst2, err := start(ctx2, cfg, slog.New(slog.NewTextHandler(logs2, nil)))
	require.NoError(t, err)
	defer func() {
		cancel2()
		_ = inst2.Wait()
	}()
	waitFor(t, 5*time.Second, "the first table", func() bool {
		status, _ := get(t, http.DefaultClient, "http://"+inst2.DebugAddr+"/readyz", "")
		return status == http.StatusOK
	})
	_, body = get(t, http.DefaultClient, "http://"+inst2.DebugAddr+"/readyz", "")
	require.NotContains(t, body, "warning:")
	require.Zero(t, logs2.count("not claimed"))
}
