package main

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"ramjet.dev/ramjet/compile"
	"ramjet.dev/ramjet/router"
	"ramjet.dev/ramjet/router/h1"
)

// The traffic listeners answer the health check path with 200 for names no
// Ingress rule claims, as ingress-nginx's catch-all server ("_") does for
// cloud load balancers probing port 80 (nginx.tmpl: "health checks in cloud
// providers require the use of port 80"): a string prefix location, so a
// hostless Ingress's "/" does not take it, while its longer prefix, and
// every path of a host with rules of its own, go to the backend.
func TestTrafficHealthCheckOnCatchAll(t *testing.T) {
	port := namedBackend(t, "A")
	dir := t.TempDir()
	catchAll := `---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: catch
  namespace: t
spec:
  ingressClassName: ramjet
  rules:
    - http:
        paths:
          - {path: /, pathType: Prefix, backend: {service: {name: app, port: {number: 80}}}}
          - {path: /healthz/deep, pathType: Prefix, backend: {service: {name: app, port: {number: 80}}}}
`
	writeFile(t, filepath.Join(dir, "app.yaml"), appManifests(port)+catchAll)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	inst, err := start(ctx, config{manifests: dir, httpAddr: "127.0.0.1:0", pollInterval: time.Hour}, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	client := &http.Client{}
	for _, tt := range []struct {
		host, path string
		status     int
		body       string
	}{
		{"lb.example", "/healthz", 200, ""},
		{"", "/healthz", 200, ""},
		{"10.0.0.1", "/healthzcheck", 200, ""},
		{"lb.example", "/healthz/deep/x", 200, "A /healthz/deep/x"},
		{"lb.example", "/other", 200, "A /other"},
		{"app.test", "/healthz", 200, "A /healthz"},
	} {
		u := "http://" + inst.HTTPAddr + tt.path
		status, body := get(t, client, u, tt.host)
		assert.Equal(t, tt.status, status, "%s %s", tt.host, tt.path)
		assert.Equal(t, tt.body, strings.TrimSpace(body), "%s %s", tt.host, tt.path)
	}
	cancel()
	require.NoError(t, inst.Wait())
}

// /nginx_status on the catch-all answers 403 but to the addresses
// ingress-nginx's nginx-status-ipv4-whitelist and -ipv6-whitelist allow by
// default (127.0.0.1, ::1): its location denies all others. Without
// connection counts an allowed address gets 404. A host with rules
// of its own, or a longer prefix of the catch-all, is the backend's.
func TestNginxStatusOnCatchAll(t *testing.T) {
	rt := router.New(router.Options{Logger: slog.New(slog.DiscardHandler)})
	res := compile.Compile(compile.Snapshot{}, compile.Options{})
	rt.Publish(res.Table)
	h := catchAllHealth(rt, "", nil, nil)
	for _, tt := range []struct {
		host, path, client string
		status             int
	}{
		{"lb.example", "/nginx_status", "10.0.0.9:1000", http.StatusForbidden},
		{"lb.example", "/nginx_status/x", "[2001:db8::1]:1000", http.StatusForbidden},
		{"lb.example", "/nginx_status", "127.0.0.1:1000", http.StatusNotFound},
		{"lb.example", "/nginx_status", "[::1]:1000", http.StatusNotFound},
		{"lb.example", "/nginx", "10.0.0.9:1000", http.StatusNotFound},
	} {
		req := httptest.NewRequest(http.MethodGet, tt.path, nil)
		req.Host, req.RemoteAddr = tt.host, tt.client
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		assert.Equal(t, tt.status, w.Code, "%s from %s", tt.path, tt.client)
	}
}

// The ConfigMap's nginx-status-ipv4-whitelist and -ipv6-whitelist replace
// the loopback addresses /nginx_status answers, each its own, as the
// "allow" lines of ingress-nginx's location; a malformed list warns and
// keeps its default.
func TestNginxStatusAllowList(t *testing.T) {
	rt := router.New(router.Options{Logger: slog.New(slog.DiscardHandler)})
	rt.Publish(compile.Compile(compile.Snapshot{}, compile.Options{}).Table)
	var cfg config
	warns := applyConfigMap(&cfg, &corev1.ConfigMap{Data: map[string]string{
		"nginx-status-ipv4-whitelist": "10.0.0.0/8, 192.168.1.5",
		"nginx-status-ipv6-whitelist": "2001:db8::/32",
	}}, nil)
	require.Empty(t, warns)
	live := new(atomic.Pointer[nginxStatusAllow])
	live.Store(&cfg.nginxStatus)
	h := catchAllHealth(rt, "", live, nil)
	status := func(client string) int {
		req := httptest.NewRequest(http.MethodGet, "/nginx_status", nil)
		req.Host, req.RemoteAddr = "lb.example", client
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		return w.Code
	}
	for client, want := range map[string]int{
		"10.1.2.3:1000":        http.StatusNotFound,
		"192.168.1.5:1000":     http.StatusNotFound,
		"192.168.1.6:1000":     http.StatusForbidden,
		"127.0.0.1:1000":       http.StatusForbidden,
		"[2001:db8::1]:1000":   http.StatusNotFound,
		"[::1]:1000":           http.StatusForbidden,
		"[::ffff:10.0.0.1]:80": http.StatusNotFound,
	} {
		assert.Equal(t, want, status(client), client)
	}

	warns = applyConfigMap(&cfg, &corev1.ConfigMap{Data: map[string]string{
		"nginx-status-ipv4-whitelist": "10.0.0.0/33",
		"nginx-status-ipv6-whitelist": "",
	}}, nil)
	require.Len(t, warns, 1)
	assert.Equal(t, "nginx-status-ipv4-whitelist", warns[0].key)
	live.Store(&cfg.nginxStatus)
	assert.Equal(t, http.StatusNotFound, status("127.0.0.1:1000"))
	assert.Equal(t, http.StatusForbidden, status("[::1]:1000"), "an empty list allows no one")
}

// What nginx refuses before any location (TRACE: 405; a method it does
// not read: 400) is refused on the catch-all's health check and status
// paths too, whichever server read the head: the net/http servers pass
// such heads on, and the catch-all's answers come before the router's.
func TestCatchAllHealthRefusesFirst(t *testing.T) {
	rt := router.New(router.Options{Logger: slog.New(slog.DiscardHandler)})
	rt.Publish(compile.Compile(compile.Snapshot{}, compile.Options{}).Table)
	h := catchAllHealth(rt, "", nil, nil)
	for _, tt := range []struct {
		method, path string
		status       int
	}{
		{http.MethodGet, "/healthz", http.StatusOK},
		{http.MethodTrace, "/healthz", http.StatusMethodNotAllowed},
		{"get", "/healthz", http.StatusBadRequest},
		{http.MethodTrace, "/nginx_status", http.StatusMethodNotAllowed},
	} {
		req := httptest.NewRequest(tt.method, tt.path, nil)
		req.Host, req.RemoteAddr = "lb.example", "127.0.0.1:1000"
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		assert.Equal(t, tt.status, w.Code, "%s %s", tt.method, tt.path)
	}
}

// An allowed client gets stub_status's text from the servers' connection
// counts, as ingress-nginx's /nginx_status location gives its collector.
func TestNginxStatusCounts(t *testing.T) {
	rt := router.New(router.Options{Logger: slog.New(slog.DiscardHandler)})
	rt.Publish(compile.Compile(compile.Snapshot{}, compile.Options{}).Table)
	stats := new(h1.ConnStats)
	var busy, idle h1.ConnEntry
	for _, e := range []*h1.ConnEntry{&busy, &idle} {
		stats.Accepted()
		stats.Open(e, 0)
		e.Request()
	}
	busy.Set(h1.ConnWriting)
	h := catchAllHealth(rt, "", nil, stats)
	req := httptest.NewRequest(http.MethodGet, "/nginx_status", nil)
	req.Host, req.RemoteAddr = "lb.example", "127.0.0.1:1000"
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	assert.Equal(t, http.StatusOK, w.Code)
	assert.Equal(t, "Active connections: 2 \nserver accepts handled requests\n 2 2 2 \nReading: 0 Writing: 1 Waiting: 1 \n", w.Body.String())

	req.RemoteAddr = "10.0.0.9:1000"
	w = httptest.NewRecorder()
	h.ServeHTTP(w, req)
	assert.Equal(t, http.StatusForbidden, w.Code)
}
