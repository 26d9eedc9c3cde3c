package main

import (
	"context"
	"log/slog"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/types"
)

// TestOfflineUnreadConfigMapIsNotAbsent: the -configmap ConfigMap is in
// the folder but cannot be read (an unquoted value): its settings are
// lost, which moves traffic, and the settings line says it was not read,
// not that it is absent (cosmetic: ingress-nginx would use its defaults
// too).
func TestOfflineUnreadConfigMapIsNotAbsent(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "app.yaml"), appManifests(namedBackend(t, "A")))
	writeFile(t, filepath.Join(dir, "cm.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg, namespace: ingress-nginx}\ndata:\n  proxy-body-size: 8m\n  hsts: false\n")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	inst, err := start(ctx, config{
		manifests: dir, httpAddr: "127.0.0.1:0", debugAddr: "127.0.0.1:0", pollInterval: time.Hour,
		configMap: &types.NamespacedName{Namespace: "ingress-nginx", Name: "cfg"},
	}, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	defer func() { cancel(); _ = inst.Wait() }()
	client := &http.Client{}
	defer client.CloseIdleConnections()
	_, body := get(t, client, "http://"+inst.DebugAddr+"/debug/warnings", "")
	require.Contains(t, body, "ConfigMap ingress-nginx/cfg: not read (see its manifest error); the flags' settings apply (traffic-moves)", body)
	require.NotContains(t, body, "not found", body)
}
