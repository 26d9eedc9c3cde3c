package main

import (
	"context"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/types"
)

// TestOfflineKeepsALastGoodFile: a file that read whole and then turns bad
// (a typo saved in an edit) keeps its last good version served, as a
// cluster keeps the object kubectl apply could not replace: its routes and
// its ConfigMap's settings do not vanish with the typo, and an error says
// the file is not read and which version is served. The fixed file is
// served as written; a file that never read whole is read as far as it
// can be, and a removed file is gone.
func TestOfflineKeepsALastGoodFile(t *testing.T) {
	portA, portB := namedBackend(t, "A"), namedBackend(t, "B")
	dir := t.TempDir()
	app := filepath.Join(dir, "app.yaml")
	writeFile(t, app, appManifests(portA))
	cm := filepath.Join(dir, "cm.yaml")
	cmWith := func(extra string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg, namespace: ingress-nginx}\ndata:\n  proxy-body-size: \"2m\"\n" + extra
	}
	writeFile(t, cm, cmWith(""))

	logs := &syncBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	inst, err := start(ctx, config{
		manifests: dir, httpAddr: "127.0.0.1:0", debugAddr: "127.0.0.1:0", pollInterval: time.Hour,
		configMap: &types.NamespacedName{Namespace: "ingress-nginx", Name: "cfg"},
	}, slog.New(slog.NewTextHandler(logs, nil)))
	require.NoError(t, err)
	defer func() { cancel(); _ = inst.Wait() }()
	client := &http.Client{}
	defer client.CloseIdleConnections()
	httpURL := "http://" + inst.HTTPAddr
	reload := func() {
		inst.offline.poll()
		inst.offline.poll()
	}
	serves := func(want string) {
		t.Helper()
		status, body := get(t, client, httpURL+"/x", "app.test")
		require.Equal(t, http.StatusOK, status, body)
		require.Equal(t, want+" /x", body)
	}
	serves("A")

	// The edit to port B comes with an unknown field: the file as it was
	// keeps serving, and the error says so.
	writeFile(t, app, strings.Replace(appManifests(portB), "  ingressClassName: ramjet\n", "  ingressClassName: ramjet\n  rulez: []\n", 1))
	// The ConfigMap gains a value of the wrong type.
	writeFile(t, cm, cmWith("  bogus: [1]\n"))
	reload()
	serves("A")
	req, err := http.NewRequest(http.MethodPost, httpURL+"/", strings.NewReader(strings.Repeat("x", 1<<20+1)))
	require.NoError(t, err)
	req.Host = "app.test"
	resp, err := client.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, "the ConfigMap's 2m, not the default 1m, still applies")
	require.Contains(t, logs.String(), `unknown field \"spec.rulez\"`)
	status, body := get(t, client, "http://"+inst.DebugAddr+"/debug/warnings", "")
	require.Equal(t, http.StatusOK, status)
	for _, f := range []string{app, cm} {
		require.Contains(t, body, "the last version of "+f+" that read without error is served", body)
	}
	require.NotContains(t, body, "not found", "the ConfigMap is there, in its last good version")

	// Fixed, the edit is served.
	writeFile(t, app, appManifests(portB))
	writeFile(t, cm, cmWith(""))
	reload()
	serves("B")
	_, body = get(t, client, "http://"+inst.DebugAddr+"/debug/warnings", "")
	require.NotContains(t, body, "manifest not read", body)

	// A file that never read whole is read as far as it can be.
	other := filepath.Join(dir, "other.yaml")
	writeFile(t, other, "apiVersion: v1\nkind: Service\nmetadata: [unterminated\n---\n"+
		"apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: other, namespace: t}\n"+
		"spec:\n  ingressClassName: ramjet\n  rules:\n  - host: other.test\n    http:\n      paths:\n"+
		"      - {path: /, pathType: Prefix, backend: {service: {name: app, port: {number: 80}}}}\n")
	reload()
	status, _ = get(t, client, httpURL+"/x", "other.test")
	require.Equal(t, http.StatusOK, status)

	// A removed file is gone, its last good version with it.
	require.NoError(t, os.Remove(app))
	reload()
	status, _ = get(t, client, httpURL+"/x", "app.test")
	require.Equal(t, http.StatusNotFound, status)
}
