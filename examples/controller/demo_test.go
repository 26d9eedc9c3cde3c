package main

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"ramjet.dev/ramjet/compile"
	"ramjet.dev/ramjet/compile/gatewayapi"
	"ramjet.dev/ramjet/compile/manifest"
	"ramjet.dev/ramjet/router"
)

func slice(ns, svc string, typ discoveryv1.AddressType, ports []int32, addrs ...string) *discoveryv1.EndpointSlice {
	s := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: ns, Name: svc + "-x", Labels: map[string]string{discoveryv1.LabelServiceName: svc}},
		AddressType: typ,
	}
	for _, p := range ports {
		s.Ports = append(s.Ports, discoveryv1.EndpointPort{Port: &p})
	}
	for _, a := range addrs {
		s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{Addresses: []string{a}})
	}
	return s
}

func TestDemoEndpoints(t *testing.T) {
	got := demoEndpoints([]*discoveryv1.EndpointSlice{
		slice("demo", "web", discoveryv1.AddressTypeIPv4, []int32{18081}, "127.0.0.1", "10.0.0.7", "not-an-ip"),
		slice("demo", "api", discoveryv1.AddressTypeIPv4, []int32{18082, 18083}, "127.0.0.2"),
		// Two Services sharing one address are both named by its server.
		slice("other", "web", discoveryv1.AddressTypeIPv4, []int32{18081}, "127.0.0.1"),
		slice("demo", "v6", discoveryv1.AddressTypeIPv6, []int32{18090}, "::1"),
		slice("demo", "dns", discoveryv1.AddressTypeFQDN, []int32{18091}, "127.0.0.1"),
		slice("demo", "noport", discoveryv1.AddressTypeIPv4, []int32{0}, "127.0.0.1"),
	})
	want := map[netip.AddrPort][]string{
		netip.MustParseAddrPort("127.0.0.1:18081"): {"demo/web", "other/web"},
		netip.MustParseAddrPort("127.0.0.2:18082"): {"demo/api"},
		netip.MustParseAddrPort("127.0.0.2:18083"): {"demo/api"},
	}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b netip.AddrPort) bool { return a == b })); diff != "" {
		t.Errorf("demoEndpoints (-want +got):\n%s", diff)
	}
}

func freePort(t *testing.T) int32 {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := ln.Addr().(*net.TCPAddr).Port
	require.NoError(t, ln.Close())
	return int32(port)
}

func TestDemoBackendsServeLoopbackEndpoints(t *testing.T) {
	d := newDemoBackends(slog.New(slog.DiscardHandler))
	defer d.close()
	port := freePort(t)
	require.NoError(t, d.ensure([]*discoveryv1.EndpointSlice{slice("demo", "api", discoveryv1.AddressTypeIPv4, []int32{port}, "127.0.0.1")}))
	addr := "127.0.0.1:" + strconv.Itoa(int(port))

	req, err := http.NewRequest(http.MethodPost, "http://"+addr+"/api/%2Fx?y=1", strings.NewReader("body"))
	require.NoError(t, err)
	req.Host = "shop.example.com"
	req.Header.Set("X-Forwarded-For", "192.0.2.1")
	req.Header.Set("X-Request-Id", "abc")
	req.Header.Set("Authorization", "Bearer t")
	req.Header.Add("Cookie", "a=1")
	req.Header.Add("Cookie", "b=2")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	require.Equal(t, "demo/api", resp.Header.Get("X-Demo-Service"))
	want := "service:  demo/api\n" +
		"endpoint: " + addr + "\n" +
		"method:   POST\n" +
		"target:   /api/%2Fx?y=1\n" +
		"host:     shop.example.com\n" +
		"proto:    HTTP/1.1\n" +
		// Every header, the client's own included, sorted; values in order.
		"Accept-Encoding: gzip\n" +
		"Authorization: Bearer t\n" +
		"Content-Length: 4\n" +
		"Cookie: a=1\n" +
		"Cookie: b=2\n" +
		"User-Agent: Go-http-client/1.1\n" +
		"X-Forwarded-For: 192.0.2.1\n" +
		"X-Request-Id: abc\n" +
		"body:     4 bytes\n"
	if diff := cmp.Diff(want, string(body)); diff != "" {
		t.Errorf("echo body (-want +got):\n%s", diff)
	}

	// A reload that renames the Service relabels the running server.
	require.NoError(t, d.ensure([]*discoveryv1.EndpointSlice{slice("demo", "api-v2", discoveryv1.AddressTypeIPv4, []int32{port}, "127.0.0.1")}))
	resp, err = http.Get("http://" + addr + "/")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, "demo/api-v2", resp.Header.Get("X-Demo-Service"))
}

// A demo endpoint whose port another process holds stops the controller at
// start, naming it, rather than proxying the demo into that process; a
// reload that adds one keeps serving the table it had.
func TestDemoBackendPortTaken(t *testing.T) {
	foreign, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer foreign.Close()
	port := foreign.Addr().(*net.TCPAddr).Port

	d := newDemoBackends(slog.New(slog.DiscardHandler))
	defer d.close()
	err = d.ensure([]*discoveryv1.EndpointSlice{slice("demo", "api", discoveryv1.AddressTypeIPv4, []int32{int32(port)}, "127.0.0.1")})
	require.ErrorContains(t, err, "cannot start the echo server of demo/api on 127.0.0.1:"+strconv.Itoa(port))
	require.ErrorContains(t, err, "stop that process or change the EndpointSlice's port")

	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "app.yaml"), appManifests(strconv.Itoa(port)))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, err = start(ctx, config{manifests: dir, demoBackends: true, httpAddr: "127.0.0.1:0", debugAddr: "127.0.0.1:0", pollInterval: time.Hour}, slog.New(slog.DiscardHandler))
	require.ErrorContains(t, err, "cannot start the echo server of")
	require.ErrorContains(t, err, "127.0.0.1:"+strconv.Itoa(port))
}

// echoTransport delivers proxied requests to in-process echo handlers by
// endpoint address, so the demo manifests can be checked without binding
// their fixed ports.
type echoTransport map[string]http.Handler

func (e echoTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	h, ok := e[req.URL.Host]
	if !ok {
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: io.ErrUnexpectedEOF}
	}
	in := req.Clone(req.Context())
	in.RequestURI = req.URL.RequestURI()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, in)
	res := rec.Result()
	res.Request = req // as http.Transport does; the proxy reads it
	return res, nil
}

// TestDemoManifests checks that examples/manifests load without a warning
// and that every answer their comments promise is the answer served.
func TestDemoManifests(t *testing.T) {
	gatewayapi.Register() // as the controller reads a folder: Namespaces are read, for allowedRoutes
	snap, skipped, err := manifest.Load("../manifests")
	require.NoError(t, err)
	require.Empty(t, skipped, "every object is of a kind read")

	res := compile.Compile(*snap, compile.Options{AllowLoopbackEndpoints: true})
	require.Empty(t, res.Warnings, "the demo manifests should compile cleanly")

	transport := echoTransport{}
	for ap, svcs := range demoEndpoints(snap.EndpointSlices) {
		names := strings.Join(svcs, ", ")
		var p atomic.Pointer[string]
		p.Store(&names)
		transport[ap.String()] = echoHandler(ap.String(), &p)
	}
	require.Len(t, transport, 6, "one echo server per demo endpoint")

	rt := router.New(router.Options{Transport: transport, Logger: slog.New(slog.DiscardHandler)})
	rt.Publish(res.Table)

	tests := []struct {
		host, target string
		status       int
		service      string // X-Demo-Service; "" when no backend answers
	}{
		{"shop.example.com", "/", 200, "demo/web"},
		{"shop.example.com", "/cart", 200, "demo/web"},
		{"shop.example.com", "/api/x", 200, "demo/api"},
		{"shop.example.com", "/api", 200, "demo/api"},
		{"shop.example.com", "/apiary", 200, "demo/web"},
		{"shop.example.com", "/healthz", 200, "demo/api"},
		{"shop.example.com", "/healthz/", 200, "demo/web"},
		{"SHOP.example.com:8080", "/api/x", 200, "demo/api"},
		{"pr-42.preview.example.com", "/", 200, "demo/preview"},
		{"a.b.preview.example.com", "/", 200, "demo/fallback"},
		{"preview.example.com", "/", 200, "demo/fallback"},
		{"catalog.example.com", "/items/42", 200, "demo/catalog"},
		{"catalog.example.com", "/ITEMS/42", 200, "demo/catalog"},
		{"catalog.example.com", "/items/42/x", 404, ""},
		{"catalog.example.com", "/items/abc", 404, ""},
		{"unknown.example.org", "/", 200, "demo/fallback"},
		{"", "/anything", 200, "demo/fallback"},
		{"127.0.0.1", "/anything", 200, "demo/fallback"},
	}
	for _, tt := range tests {
		t.Run(tt.host+tt.target, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodGet, "http://placeholder"+tt.target, nil)
			req.Host = tt.host
			if tt.host == "" {
				// Only HTTP/1.0 may omit the Host (SPEC §13).
				req.Proto, req.ProtoMajor, req.ProtoMinor = "HTTP/1.0", 1, 0
			}
			rec := httptest.NewRecorder()
			rt.ServeHTTP(rec, req)
			require.Equal(t, tt.status, rec.Code, rec.Body.String())
			require.Equal(t, tt.service, rec.Header().Get("X-Demo-Service"))
			if tt.service != "" {
				require.Contains(t, rec.Body.String(), "target:   "+tt.target+"\n", "the backend sees the request-target unchanged")
			}
		})
	}

	// The two api endpoints take turns.
	seen := map[string]int{}
	for range 4 {
		req := httptest.NewRequest(http.MethodGet, "http://placeholder/api/x", nil)
		req.Host = "shop.example.com"
		rec := httptest.NewRecorder()
		rt.ServeHTTP(rec, req)
		seen[rec.Header().Get("X-Demo-Endpoint")]++
	}
	if diff := cmp.Diff(map[string]int{"127.0.0.1:18082": 2, "127.0.0.1:18083": 2}, seen); diff != "" {
		t.Errorf("api endpoints over 4 requests (-want +got):\n%s", diff)
	}
}
