package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pires/go-proxyproto"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/router"
)

// clientAddrManifests serves app.test from the given loopback port: / open,
// /admin only to 198.51.100.0/24 (whitelist-source-range), /limited at one
// request a second with a burst of one (limit-rps, limit-burst-multiplier).
func clientAddrManifests(port string) string {
	ingress := func(name, path, annotations string) string {
		return `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: ` + name + `
  namespace: t
  annotations:
    ` + annotations + `
spec:
  ingressClassName: ramjet
  rules:
    - host: app.test
      http:
        paths:
          - path: ` + path + `
            pathType: Prefix
            backend:
              service:
                name: app
                port:
                  number: 80
---
`
	}
	return ingress("open", "/", `ramjet.dev/none: ""`) +
		ingress("admin", "/admin", `nginx.ingress.kubernetes.io/whitelist-source-range: "198.51.100.0/24"`) +
		ingress("limited", "/limited", `nginx.ingress.kubernetes.io/limit-rps: "1"
    nginx.ingress.kubernetes.io/limit-burst-multiplier: "1"`) +
		appManifests(port)
}

// forwardedBackend answers with what it was told about the client.
func forwardedBackend(t testing.TB) (port string) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "real=%s xff=%s original=%s", r.Header.Get("X-Real-Ip"),
			strings.Join(r.Header.Values("X-Forwarded-For"), "|"), strings.Join(r.Header.Values("X-Original-Forwarded-For"), "|"))
	}))
	t.Cleanup(srv.Close)
	u, err := url.Parse(srv.URL)
	require.NoError(t, err)
	return u.Port()
}

// sendProxied sends one request on a new connection to addr, after the given
// PROXY header, with the given X-Forwarded-For, and returns the status and
// body.
func sendProxied(t testing.TB, addr string, header []byte, path, xff string) (int, string) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	require.NoError(t, err)
	defer conn.Close()
	require.NoError(t, conn.SetDeadline(time.Now().Add(10*time.Second)))
	_, err = conn.Write(append(header, "GET "+path+" HTTP/1.1\r\nHost: app.test\r\nX-Forwarded-For: "+xff+"\r\nConnection: close\r\n\r\n"...))
	require.NoError(t, err)
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err)
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res.StatusCode, string(body)
}

// sendProxiedTLS is sendProxied for / over TLS; it returns the body of a 200.
func sendProxiedTLS(t testing.TB, addr string, header []byte, xff string) string {
	t.Helper()
	raw, err := net.DialTimeout("tcp", addr, 5*time.Second)
	require.NoError(t, err)
	defer raw.Close()
	require.NoError(t, raw.SetDeadline(time.Now().Add(10*time.Second)))
	_, err = raw.Write(header)
	require.NoError(t, err)
	conn := tls.Client(raw, &tls.Config{ServerName: "app.test", InsecureSkipVerify: true})
	_, err = conn.Write([]byte("GET / HTTP/1.1\r\nHost: app.test\r\nX-Forwarded-For: " + xff + "\r\nConnection: close\r\n\r\n"))
	require.NoError(t, err)
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err)
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, res.StatusCode, string(body))
	return string(body)
}

// noClientHeader is a PROXY header that names no client: v1 UNKNOWN, or a
// v2 LOCAL command (a load balancer's own health check).
func noClientHeader(t testing.TB, version byte) []byte {
	t.Helper()
	if version == 1 {
		return []byte("PROXY UNKNOWN\r\n")
	}
	b, err := (&proxyproto.Header{Version: 2, Command: proxyproto.LOCAL, TransportProtocol: proxyproto.UNSPEC}).Format()
	require.NoError(t, err)
	return b
}

// TestProxyProtocolClientAddr runs the controller behind a PROXY protocol
// listener, on loopback, as an AWS NLB would front it, with
// -proxy-real-ip-cidr covering the balancer (127.0.0.0/8) and the
// cluster's own network (10.0.0.0/8). The client is the PROXY header's
// source, never what the client writes in X-Forwarded-For, unless
// -use-forwarded-headers says a proxy in front writes it (ingress-nginx's
// real_ip_header proxy_protocol, or its forwarded-for chain with both on).
// A header that names no client (UNKNOWN, v2 LOCAL) leaves the balancer,
// the peer, as the client.
func TestProxyProtocolClientAddr(t *testing.T) {
	port := forwardedBackend(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "app.yaml"), clientAddrManifests(port))
	serve := func(t *testing.T, tweak func(*config)) *instance {
		cfg := config{
			manifests:        dir,
			httpAddr:         "127.0.0.1:0",
			httpsAddr:        "127.0.0.1:0",
			pollInterval:     time.Hour,
			useProxyProtocol: true,
			proxyRealIPCIDR:  []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("10.0.0.0/8")},
		}
		if tweak != nil {
			tweak(&cfg)
		}
		ctx, cancel := context.WithCancel(context.Background())
		inst, err := start(ctx, cfg, slog.New(slog.DiscardHandler))
		require.NoError(t, err)
		t.Cleanup(func() {
			cancel()
			_ = inst.Wait()
		})
		return inst
	}
	spoof := "198.51.100.7"

	t.Run("PROXY protocol alone", func(t *testing.T) {
		addr := serve(t, nil).HTTPAddr
		for _, version := range []byte{1, 2} {
			header := proxyHeader(t, version, "10.1.2.3:5555")
			status, _ := sendProxied(t, addr, header, "/admin", spoof)
			assert.Equal(t, http.StatusForbidden, status, "v%d: the source range judges the PROXY source", version)
			status, body := sendProxied(t, addr, header, "/", spoof)
			require.Equal(t, http.StatusOK, status)
			assert.Equal(t, "real=10.1.2.3 xff=10.1.2.3 original="+spoof, body, "v%d", version)

			// The rate limit counts the PROXY source, whatever each request claims.
			allowed := 0
			for i := range 6 {
				header := proxyHeader(t, version, fmt.Sprintf("10.1.2.%d:5555", 10+version))
				if status, _ := sendProxied(t, addr, header, "/limited", fmt.Sprintf("198.51.100.%d", 10+i)); status == http.StatusOK {
					allowed++
				}
			}
			assert.LessOrEqual(t, allowed, 3, "v%d: one a second with a burst of one, counted per PROXY source", version)

			status, body = sendProxied(t, addr, noClientHeader(t, version), "/", spoof)
			require.Equal(t, http.StatusOK, status)
			assert.Equal(t, "real=127.0.0.1 xff=127.0.0.1 original="+spoof, body, "v%d without a client: the peer", version)
			status, _ = sendProxied(t, addr, noClientHeader(t, version), "/admin", spoof)
			assert.Equal(t, http.StatusForbidden, status, "v%d without a client", version)
		}
	})

	t.Run("with -use-forwarded-headers", func(t *testing.T) {
		inst := serve(t, func(c *config) { c.useForwardedHeaders = true })
		addr := inst.HTTPAddr
		// A proxy inside -proxy-real-ip-cidr in front of the balancer
		// wrote the header (ingress-nginx's proxy chain).
		status, body := sendProxied(t, addr, proxyHeader(t, 1, "10.1.2.3:5555"), "/", spoof)
		require.Equal(t, http.StatusOK, status)
		assert.Equal(t, "real="+spoof+" xff="+spoof+" original="+spoof, body)
		status, _ = sendProxied(t, addr, proxyHeader(t, 2, "10.1.2.3:5555"), "/admin", spoof)
		assert.Equal(t, http.StatusOK, status)
		// A source outside it is the client itself.
		status, body = sendProxied(t, addr, proxyHeader(t, 1, "203.0.113.5:5555"), "/", spoof)
		require.Equal(t, http.StatusOK, status)
		assert.Equal(t, "real=203.0.113.5 xff=203.0.113.5 original="+spoof, body)
		status, _ = sendProxied(t, addr, proxyHeader(t, 2, "203.0.113.5:5555"), "/admin", spoof)
		assert.Equal(t, http.StatusForbidden, status)
		// No client named: the balancer, whose peer address is trusted,
		// wrote no X-Forwarded-For; the client did.
		for _, version := range []byte{1, 2} {
			status, body := sendProxied(t, addr, noClientHeader(t, version), "/", spoof)
			require.Equal(t, http.StatusOK, status)
			assert.Equal(t, "real=127.0.0.1 xff=127.0.0.1 original="+spoof, body, "v%d without a client", version)
			status, _ = sendProxied(t, addr, noClientHeader(t, version), "/admin", spoof)
			assert.Equal(t, http.StatusForbidden, status, "v%d without a client", version)

			// The same over TLS, where the server sees the TLS connection.
			body = sendProxiedTLS(t, inst.HTTPSAddr, noClientHeader(t, version), spoof)
			assert.Equal(t, "real=127.0.0.1 xff=127.0.0.1 original="+spoof, body, "TLS, v%d without a client", version)
		}
		body = sendProxiedTLS(t, inst.HTTPSAddr, proxyHeader(t, 2, "10.1.2.3:5555"), spoof)
		assert.Equal(t, "real="+spoof+" xff="+spoof+" original="+spoof, body, "TLS")
	})

	t.Run("with -compute-full-forwarded-for", func(t *testing.T) {
		addr := serve(t, func(c *config) { c.useForwardedHeaders, c.computeFullForwardedFor = true, true }).HTTPAddr
		status, body := sendProxied(t, addr, proxyHeader(t, 2, "10.1.2.3:5555"), "/", spoof)
		require.Equal(t, http.StatusOK, status)
		assert.Equal(t, "real="+spoof+" xff="+spoof+", 10.1.2.3 original="+spoof, body)
	})
}

// TestListenerTimeouts: every listener has nginx's client_header_timeout
// (60 s) and keepalive_timeout (75 s), the router's defaults, as the docs
// say (issue 19 #14 found them saying 10 s).
func TestListenerTimeouts(t *testing.T) {
	rt := router.New(router.Options{Logger: slog.New(slog.DiscardHandler)})
	l, err := listen(config{httpAddr: "127.0.0.1:0", httpsAddr: "127.0.0.1:0", debugAddr: "127.0.0.1:0", useProxyProtocol: true},
		rt, http.NotFoundHandler(), new(atomic.Bool), slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	t.Cleanup(l.close)
	require.Len(t, l.servers, 3)
	for _, srv := range l.servers {
		assert.Equal(t, 60*time.Second, srv.ReadHeaderTimeout)
		assert.Equal(t, router.DefaultClientHeaderTimeout, srv.ReadHeaderTimeout)
		assert.Equal(t, 75*time.Second, srv.IdleTimeout)
		assert.Equal(t, router.DefaultIdleTimeout, srv.IdleTimeout)
	}
}
