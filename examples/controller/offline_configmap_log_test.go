package main

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/types"
)

// A -configmap ConfigMap that is not there is logged as the ConfigMap not
// found, naming it, with no empty key attribute.
func TestOfflineMissingConfigMapLogLine(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "app.yaml"), appManifests("1"))
	logs := &syncBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	inst, err := start(ctx, config{
		manifests: dir, httpAddr: "127.0.0.1:0", pollInterval: time.Hour,
		configMap: &types.NamespacedName{Namespace: "ingress-nginx", Name: "nope"},
	}, slog.New(slog.NewTextHandler(logs, nil)))
	require.NoError(t, err)
	defer func() { cancel(); _ = inst.Wait() }()
	out := logs.String()
	require.Contains(t, out, `level=WARN msg="ConfigMap not found; the flags' settings apply" configmap=ingress-nginx/nope severity=cosmetic`, out)
	require.NotContains(t, out, `key=""`, out)
}
