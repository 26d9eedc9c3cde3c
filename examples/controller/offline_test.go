package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
)

// syncBuffer is a log sink the test reads while the controller writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) count(substr string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Count(s.b.String(), substr)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// appManifests routes host app.test to one Service whose only endpoint is
// the given loopback port.
func appManifests(port string) string {
	return `apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata:
  name: ramjet
spec:
  controller: ramjet.dev/ingress
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: app
  namespace: t
spec:
  ingressClassName: ramjet
  rules:
    - host: app.test
      http:
        paths:
          - path: /
            pathType: Prefix
            backend:
              service:
                name: app
                port:
                  number: 80
---
apiVersion: v1
kind: Service
metadata:
  name: app
  namespace: t
spec:
  ports:
    - port: 80
      targetPort: 8080
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: app-1
  namespace: t
  labels:
    kubernetes.io/service-name: app
addressType: IPv4
ports:
  - port: ` + port + `
endpoints:
  - addresses: ["127.0.0.1"]
`
}

// namedBackend answers with its name and the request-target it received.
func namedBackend(t testing.TB, name string) (port string) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "%s %s", name, r.RequestURI)
	}))
	t.Cleanup(srv.Close)
	u, err := url.Parse(srv.URL)
	require.NoError(t, err)
	return u.Port()
}

// writeFile writes content and moves its mtime forward, so that a rewrite
// within the file system's timestamp granularity is still a change.
func writeFile(t *testing.T, path, content string) {
	t.Helper()
	var mtime time.Time
	if info, err := os.Stat(path); err == nil {
		mtime = info.ModTime().Add(time.Second)
	} else {
		mtime = time.Now()
	}
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
	require.NoError(t, os.Chtimes(path, mtime, mtime))
}

// get sends one GET to rawURL, with Host host when not empty.
func get(t testing.TB, client *http.Client, rawURL, host string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, rawURL, nil)
	require.NoError(t, err)
	if host != "" {
		req.Host = host
	}
	resp, err := client.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body)
}

func TestOfflineServesReloadsAndKeepsTableOnError(t *testing.T) {
	portA, portB := namedBackend(t, "A"), namedBackend(t, "B")
	dir := t.TempDir()
	manifest := filepath.Join(dir, "app.yaml")
	writeFile(t, manifest, appManifests(portA))
	// Files the watcher must ignore: a README and an editor swap file.
	writeFile(t, filepath.Join(dir, "README.md"), "not a manifest")
	writeFile(t, filepath.Join(dir, ".app.yaml.swp"), "kind: [unterminated")

	logs := &syncBuffer{}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	inst, err := start(ctx, config{
		manifests:    dir,
		httpAddr:     "127.0.0.1:0",
		httpsAddr:    "127.0.0.1:0",
		debugAddr:    "127.0.0.1:0",
		pollInterval: 10 * time.Millisecond,
	}, logger)
	require.NoError(t, err)
	waited := false
	defer func() {
		if !waited {
			cancel()
			_ = inst.Wait()
		}
	}()

	client := &http.Client{Transport: &http.Transport{
		TLSClientConfig: &tls.Config{ServerName: "app.test", InsecureSkipVerify: true},
	}}
	defer client.CloseIdleConnections()
	httpURL := "http://" + inst.HTTPAddr
	debugURL := "http://" + inst.DebugAddr

	// Served on both listeners, with the request-target passed through.
	status, body := get(t, client, httpURL+"/some/path?q=1", "app.test")
	require.Equal(t, http.StatusOK, status, body)
	require.Equal(t, "A /some/path?q=1", body)
	status, body = get(t, client, "https://"+inst.HTTPSAddr+"/tls", "app.test")
	require.Equal(t, http.StatusOK, status, body)
	require.Equal(t, "A /tls", body)
	status, _ = get(t, client, httpURL+"/", "other.test")
	require.Equal(t, http.StatusNotFound, status, "a host no Ingress names, with no default backend")

	status, body = get(t, client, debugURL+"/healthz", "")
	require.Equal(t, http.StatusOK, status, body)
	status, body = get(t, client, debugURL+"/readyz", "")
	require.Equal(t, http.StatusOK, status, body)
	status, body = get(t, client, debugURL+"/debug/table", "")
	require.Equal(t, http.StatusOK, status, body)
	require.Contains(t, body, "app.test")
	status, body = get(t, client, debugURL+"/debug/warnings", "")
	require.Equal(t, http.StatusOK, status, body)
	require.Empty(t, body, "these manifests compile without warnings")

	gen1 := inst.router.Generation()
	require.NotZero(t, gen1)

	// An edit is picked up and served.
	writeFile(t, manifest, appManifests(portB))
	waitFor(t, 10*time.Second, "the edit to be served", func() bool {
		_, body := get(t, client, httpURL+"/", "app.test")
		return strings.HasPrefix(body, "B ")
	})
	gen2 := inst.router.Generation()
	require.Greater(t, gen2, gen1)

	// Touching a file recompiles, but the same digest publishes nothing.
	unchanged := logs.count("table unchanged")
	future := time.Now().Add(time.Hour)
	require.NoError(t, os.Chtimes(manifest, future, future))
	waitFor(t, 10*time.Second, "the touched file to be recompiled", func() bool { return logs.count("table unchanged") > unchanged })
	require.Equal(t, gen2, inst.router.Generation())

	// A manifest that does not parse is an error; the rest keeps serving.
	broken := filepath.Join(dir, "broken.yaml")
	writeFile(t, broken, "apiVersion: v1\nkind: Service\nmetadata: [unterminated\n")
	waitFor(t, 10*time.Second, "the load error to be logged", func() bool { return logs.count("manifest not read") > 0 })
	status, body = get(t, client, httpURL+"/", "app.test")
	require.Equal(t, http.StatusOK, status, body)
	require.Equal(t, "B /", body)
	require.Equal(t, gen2, inst.router.Generation())
	status, _ = get(t, client, debugURL+"/readyz", "")
	require.Equal(t, http.StatusOK, status)

	// The error is logged once, not on every poll.
	time.Sleep(100 * time.Millisecond)
	require.Equal(t, 1, logs.count("manifest not read"), logs.String())

	// Fixing the folder resumes reloading.
	require.NoError(t, os.Remove(broken))
	writeFile(t, manifest, appManifests(portA))
	waitFor(t, 10*time.Second, "the fixed folder to be served", func() bool {
		_, body := get(t, client, httpURL+"/", "app.test")
		return strings.HasPrefix(body, "A ")
	})
	require.Greater(t, inst.router.Generation(), gen2)

	cancel()
	waited = true
	done := make(chan error, 1)
	go func() { done <- inst.Wait() }()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(15 * time.Second):
		t.Fatal("shutdown did not finish")
	}
}

// TestOfflineServesWhatItCanRead: one broken document, a kind that does
// not exist and a file that cannot be read each degrade only themselves
// (SPEC: one broken object degrades itself only): each is an error naming
// the file, document and line, and everything else in the folder, the
// neighbours in the same file included, is served, at start as on reload.
func TestOfflineServesWhatItCanRead(t *testing.T) {
	port := namedBackend(t, "A")
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "app.yaml"), appManifests(port))
	other := filepath.Join(dir, "other.yaml")
	otherIngress := func(host string) string {
		return "apiVersion: v1\nkind: Service\nmetadata: [unterminated\n---\n" +
			"apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: other, namespace: t}\n" +
			"spec:\n  ingressClassName: ramjet\n  rules:\n  - host: " + host + "\n    http:\n      paths:\n" +
			"      - {path: /, pathType: Prefix, backend: {service: {name: app, port: {number: 80}}}}\n---\n" +
			"apiVersion: networking.k8s.io/v1\nkind: Ingres\nmetadata: {name: typo, namespace: t}\n"
	}
	writeFile(t, other, otherIngress("other.test"))
	require.NoError(t, os.Symlink("missing.yaml", filepath.Join(dir, "gone.yaml")))

	logs := &syncBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	inst, err := start(ctx, config{
		manifests: dir, httpAddr: "127.0.0.1:0", debugAddr: "127.0.0.1:0", pollInterval: time.Hour,
	}, slog.New(slog.NewTextHandler(logs, nil)))
	require.NoError(t, err, "a folder with broken documents still starts")
	defer func() { cancel(); _ = inst.Wait() }()
	client := &http.Client{}
	defer client.CloseIdleConnections()
	httpURL := "http://" + inst.HTTPAddr
	for _, host := range []string{"app.test", "other.test"} {
		status, body := get(t, client, httpURL+"/x", host)
		require.Equal(t, http.StatusOK, status, "%s: %s", host, body)
	}
	wantErrors := []string{
		`file=` + filepath.Join(dir, "gone.yaml") + ` `,
		`file=` + other + ` document=1 line=1 `,
		`file=` + other + ` document=3 line=16 object="Ingres t/typo" field=kind `,
	}
	for _, w := range wantErrors {
		require.Contains(t, logs.String(), w)
	}
	require.Equal(t, len(wantErrors), logs.count("level=ERROR msg=\"manifest not read"), logs.String())
	status, body := get(t, client, "http://"+inst.DebugAddr+"/debug/warnings", "")
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, len(wantErrors), strings.Count(body, "manifest not read: "), body)
	require.Contains(t, body, "manifest not read: "+other+" document 3 (line 16, Ingres t/typo): kind Ingres: networking.k8s.io/v1 has no such kind [traffic-moves]")

	// A reload is read the same way: the edit beside the broken
	// document is served.
	writeFile(t, other, otherIngress("edited.test"))
	inst.offline.poll()
	inst.offline.poll()
	status, _ = get(t, client, httpURL+"/x", "edited.test")
	require.Equal(t, http.StatusOK, status)
	status, _ = get(t, client, httpURL+"/x", "app.test")
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, 2*len(wantErrors), logs.count("level=ERROR msg=\"manifest not read"), logs.String())
}

// TestOfflineWaitsForAFileToSettle: a file changing between two polls is
// being written; it is read once a poll finds it as the previous one did,
// never half-written.
func TestOfflineWaitsForAFileToSettle(t *testing.T) {
	port := namedBackend(t, "A")
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "app.yaml"), appManifests(port))
	logs := &syncBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	inst, err := start(ctx, config{manifests: dir, httpAddr: "127.0.0.1:0", pollInterval: time.Hour}, slog.New(slog.NewTextHandler(logs, nil)))
	require.NoError(t, err)
	defer func() { cancel(); _ = inst.Wait() }()
	gen := inst.router.Generation()

	late := filepath.Join(dir, "late.yaml")
	whole := "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: late, namespace: t}\nspec:\n  ingressClassName: ramjet\n  rules:\n  - host: late.test\n    http:\n      paths:\n      - {path: /, pathType: Prefix, backend: {service: {name: app, port: {number: 80}}}}\n"
	writeFile(t, late, whole[:strings.Index(whole, "    http:")]+"    http:\n      paths:\n      - {path: /, pathType: Prefix, backend: {servi")
	inst.offline.poll()
	require.Equal(t, gen, inst.router.Generation(), "a file that just changed is not read yet")
	writeFile(t, late, whole)
	inst.offline.poll()
	require.Equal(t, gen, inst.router.Generation(), "it changed again")
	inst.offline.poll()
	require.Greater(t, inst.router.Generation(), gen, "settled, it is read")
	require.Zero(t, logs.count("manifest not read"), logs.String())
	client := &http.Client{}
	defer client.CloseIdleConnections()
	status, _ := get(t, client, "http://"+inst.HTTPAddr+"/x", "late.test")
	require.Equal(t, http.StatusOK, status)
}

func TestStartFailsOnMissingFolder(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "absent")
	_, err := start(context.Background(), config{
		manifests:    dir,
		httpAddr:     "127.0.0.1:0",
		pollInterval: time.Second,
	}, slog.New(slog.DiscardHandler))
	require.ErrorIs(t, err, os.ErrNotExist)
	require.Contains(t, err.Error(), dir)
}

func TestScanManifests(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"b.yaml", "a.yml", "c.json", "notes.txt", ".hidden.yaml", "sub/d.yaml", ".git/e.yaml"} {
		path := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		writeFile(t, path, "x")
	}
	paths := func(files []fileState) []string {
		var out []string
		for _, f := range files {
			rel, err := filepath.Rel(dir, f.path)
			require.NoError(t, err)
			out = append(out, filepath.ToSlash(rel))
		}
		return out
	}

	first, err := scanManifests(dir)
	require.NoError(t, err)
	if diff := cmp.Diff([]string{"a.yml", "b.yaml", "c.json", "sub/d.yaml"}, paths(first)); diff != "" {
		t.Errorf("scanned files (-want +got):\n%s", diff)
	}

	again, err := scanManifests(dir)
	require.NoError(t, err)
	require.Equal(t, first, again, "an untouched folder scans the same")

	tests := []struct {
		name   string
		change func()
	}{
		{name: "content and size", change: func() { writeFile(t, filepath.Join(dir, "b.yaml"), "longer") }},
		{name: "mtime only", change: func() {
			path := filepath.Join(dir, "a.yml")
			info, err := os.Stat(path)
			require.NoError(t, err)
			later := info.ModTime().Add(time.Second)
			require.NoError(t, os.Chtimes(path, later, later))
		}},
		{name: "file added", change: func() { writeFile(t, filepath.Join(dir, "sub/e.yaml"), "x") }},
		{name: "file removed", change: func() { require.NoError(t, os.Remove(filepath.Join(dir, "c.json"))) }},
		{name: "file renamed", change: func() {
			require.NoError(t, os.Rename(filepath.Join(dir, "sub/d.yaml"), filepath.Join(dir, "sub/f.yaml")))
		}},
	}
	prev := first
	for _, tt := range tests {
		tt.change()
		next, err := scanManifests(dir)
		require.NoError(t, err)
		require.NotEqual(t, prev, next, "%s: change not seen", tt.name)
		prev = next
	}

	single, err := scanManifests(filepath.Join(dir, "b.yaml"))
	require.NoError(t, err)
	require.Len(t, single, 1, "a single file is watched on its own")

	_, err = scanManifests(filepath.Join(dir, "missing"))
	require.ErrorIs(t, err, os.ErrNotExist)
}

// TestOfflineServesHTTPRoutes: a folder of manifests may hold a Gateway
// and HTTPRoutes beside Ingresses; offline they are served from the same
// table (SPEC §20), a header match included.
func TestOfflineServesHTTPRoutes(t *testing.T) {
	portA, portB := namedBackend(t, "A"), namedBackend(t, "B")
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "app.yaml"), appManifests(portA))
	writeFile(t, filepath.Join(dir, "gateway.yaml"), `apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: ramjet}
spec: {controllerName: ramjet.dev/gateway}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: t}
spec:
  gatewayClassName: ramjet
  listeners: [{name: http, protocol: HTTP, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: route, namespace: t}
spec:
  parentRefs: [{name: gw}]
  hostnames: [route.test]
  rules:
    - matches: [{path: {type: PathPrefix, value: /}, headers: [{name: Version, value: two}]}]
      backendRefs: [{name: two, port: 80}]
    - backendRefs: [{name: app, port: 80}]
---
apiVersion: v1
kind: Service
metadata: {name: two, namespace: t}
spec:
  ports: [{port: 80, targetPort: 8080}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: two-1, namespace: t, labels: {kubernetes.io/service-name: two}}
addressType: IPv4
ports: [{port: `+portB+`}]
endpoints: [{addresses: [127.0.0.1], conditions: {ready: true}}]
`)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	inst, err := start(ctx, config{manifests: dir, httpAddr: "127.0.0.1:0", httpsAddr: "127.0.0.1:0", debugAddr: "127.0.0.1:0", pollInterval: time.Hour}, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	defer func() { cancel(); _ = inst.Wait() }()
	client := &http.Client{}
	defer client.CloseIdleConnections()
	status, body := get(t, client, "http://"+inst.HTTPAddr+"/x", "route.test")
	require.Equal(t, http.StatusOK, status, body)
	require.Equal(t, "A /x", body, "the HTTPRoute's second rule")
	req, err := http.NewRequest(http.MethodGet, "http://"+inst.HTTPAddr+"/y", nil)
	require.NoError(t, err)
	req.Host = "route.test"
	req.Header.Set("Version", "two")
	resp, err := client.Do(req)
	require.NoError(t, err)
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, "B /y", string(got), "the header match")
	status, body = get(t, client, "http://"+inst.HTTPAddr+"/z", "app.test")
	require.Equal(t, http.StatusOK, status, body)
	require.Equal(t, "A /z", body, "the Ingress beside it")
}

// config_last_reload_successful stays 0 for as long as the folder fails
// to load, not only until the next poll finds the same broken files, and
// goes back to 1 when the folder loads again or comes back as it was.
func TestOfflineReloadMetricFollowsTheFolder(t *testing.T) {
	port := namedBackend(t, "A")
	dir := t.TempDir()
	folder := filepath.Join(dir, "m")
	require.NoError(t, os.Mkdir(folder, 0o755))
	writeFile(t, filepath.Join(folder, "app.yaml"), appManifests(port))
	logs := &syncBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	inst, err := start(ctx, config{
		manifests: folder, httpAddr: "127.0.0.1:0", debugAddr: "127.0.0.1:0",
		pollInterval: 10 * time.Millisecond, enableMetrics: true, metricsPerHost: true,
	}, slog.New(slog.NewTextHandler(logs, nil)))
	require.NoError(t, err)
	defer func() {
		cancel()
		_ = inst.Wait()
	}()
	client := &http.Client{}
	defer client.CloseIdleConnections()
	reloadOK := func() float64 {
		return scrapeURL(t, client, inst.DebugAddr).value("nginx_ingress_controller_config_last_reload_successful", nil)
	}
	require.Equal(t, 1.0, reloadOK())

	broken := filepath.Join(folder, "broken.yaml")
	writeFile(t, broken, "apiVersion: v1\nkind: Service\nmetadata: [unterminated\n")
	waitFor(t, 10*time.Second, "the load error", func() bool { return logs.count("manifest not read") > 0 })
	time.Sleep(100 * time.Millisecond) // polls that find the same broken files
	require.Equal(t, 0.0, reloadOK(), "the folder is still not read whole")

	require.NoError(t, os.Remove(broken))
	waitFor(t, 10*time.Second, "the fixed folder", func() bool { return reloadOK() == 1 })

	// A folder that vanishes and comes back as it was recovers too.
	require.NoError(t, os.Rename(folder, folder+".away"))
	waitFor(t, 10*time.Second, "the vanished folder", func() bool { return reloadOK() == 0 })
	require.NoError(t, os.Rename(folder+".away", folder))
	waitFor(t, 10*time.Second, "the folder back", func() bool { return reloadOK() == 1 })
}
