package main

import (
	"bufio"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// schemeBackend answers with the scheme the router forwarded and the body
// it got, and keeps the paths it was asked for.
func schemeBackend(t *testing.T) (port string, seen func() []string) {
	var mu sync.Mutex
	var paths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		paths = append(paths, r.URL.Path)
		mu.Unlock()
		fmt.Fprintf(w, "proto=%s body=%q", r.Header.Get("X-Forwarded-Proto"), body)
	}))
	t.Cleanup(srv.Close)
	u, err := url.Parse(srv.URL)
	require.NoError(t, err)
	return u.Port(), func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), paths...)
	}
}

// TestListenersRefuseAmbiguousFraming: on both traffic listeners a
// request with Content-Length and Transfer-Encoding, or Transfer-Encoding
// on HTTP/1.0, answers 400 and closes the connection, as nginx does, and
// reaches no backend. Over TLS the handshake is the controller's own, and
// what depends on TLS is unchanged: HTTP/2 by ALPN, X-Forwarded-Proto
// https over either protocol, and the plain-HTTP answer on the TLS port.
func TestListenersRefuseAmbiguousFraming(t *testing.T) {
	port, seen := schemeBackend(t)
	inst, cancel := startOfflineApp(t, port, func(*config) {})
	t.Cleanup(func() {
		cancel()
		_ = inst.Wait()
	})
	dialTLS := func(t *testing.T, protos ...string) net.Conn {
		c, err := tls.Dial("tcp", inst.HTTPSAddr, &tls.Config{ServerName: "app.test", InsecureSkipVerify: true, NextProtos: protos})
		require.NoError(t, err)
		t.Cleanup(func() { c.Close() })
		require.NoError(t, c.SetDeadline(time.Now().Add(10*time.Second)))
		return c
	}
	dialPlain := func(t *testing.T) net.Conn {
		c, err := net.Dial("tcp", inst.HTTPAddr)
		require.NoError(t, err)
		t.Cleanup(func() { c.Close() })
		require.NoError(t, c.SetDeadline(time.Now().Add(10*time.Second)))
		return c
	}
	smuggled := "GET /smuggled HTTP/1.1\r\nHost: app.test\r\n\r\n"
	refused := map[string]string{
		"Content-Length and Transfer-Encoding": "POST /a HTTP/1.1\r\nHost: app.test\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n" + smuggled,
		"Transfer-Encoding on HTTP/1.0":        "POST /a HTTP/1.0\r\nHost: app.test\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n" + smuggled,
	}
	for name, req := range refused {
		for _, tc := range []struct {
			listener string
			dial     func(*testing.T) net.Conn
		}{
			{"https", func(t *testing.T) net.Conn { return dialTLS(t, "http/1.1") }},
			{"https without ALPN", func(t *testing.T) net.Conn { return dialTLS(t) }},
			{"http", dialPlain},
		} {
			t.Run(name+" over "+tc.listener, func(t *testing.T) {
				c := tc.dial(t)
				_, err := io.WriteString(c, req)
				require.NoError(t, err)
				br := bufio.NewReader(c)
				res, err := http.ReadResponse(br, nil)
				require.NoError(t, err)
				_, _ = io.Copy(io.Discard, res.Body)
				require.Equal(t, http.StatusBadRequest, res.StatusCode)
				assert.True(t, res.Close)
				rest, _ := io.ReadAll(br)
				assert.Empty(t, string(rest))
			})
		}
	}
	assert.Empty(t, seen(), "no backend request")

	t.Run("HTTP/1.1 over TLS", func(t *testing.T) {
		c := dialTLS(t, "http/1.1")
		_, err := io.WriteString(c, "POST /h1 HTTP/1.1\r\nHost: app.test\r\nTransfer-Encoding: chunked\r\n\r\n3;x\r\nabc\r\n0\r\n\r\n")
		require.NoError(t, err)
		res, err := http.ReadResponse(bufio.NewReader(c), nil)
		require.NoError(t, err)
		body, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		assert.Equal(t, http.StatusOK, res.StatusCode)
		assert.Equal(t, `proto=https body="abc"`, string(body), "Request.TLS is set through the guard")
	})
	t.Run("HTTP/2 over TLS", func(t *testing.T) {
		tr := &http.Transport{TLSClientConfig: &tls.Config{ServerName: "app.test", InsecureSkipVerify: true}, ForceAttemptHTTP2: true}
		t.Cleanup(tr.CloseIdleConnections)
		req, err := http.NewRequest(http.MethodGet, "https://"+inst.HTTPSAddr+"/h2", nil)
		require.NoError(t, err)
		req.Host = "app.test"
		res, err := (&http.Client{Transport: tr}).Do(req)
		require.NoError(t, err)
		body, err := io.ReadAll(res.Body)
		res.Body.Close()
		require.NoError(t, err)
		assert.Equal(t, 2, res.ProtoMajor)
		assert.Equal(t, `proto=https body=""`, string(body))
	})
	t.Run("plain HTTP on the TLS port", func(t *testing.T) {
		c, err := net.Dial("tcp", inst.HTTPSAddr)
		require.NoError(t, err)
		defer c.Close()
		require.NoError(t, c.SetDeadline(time.Now().Add(10*time.Second)))
		_, err = io.WriteString(c, "GET / HTTP/1.1\r\nHost: app.test\r\n\r\n")
		require.NoError(t, err)
		res, err := http.ReadResponse(bufio.NewReader(c), nil)
		require.NoError(t, err)
		body, _ := io.ReadAll(res.Body)
		assert.Equal(t, http.StatusBadRequest, res.StatusCode)
		assert.Equal(t, "Client sent an HTTP request to an HTTPS server.\n", string(body))
	})
	assert.Equal(t, []string{"/h1", "/h2"}, seen())
}

// TestTLSFirstRequestNotHeld: a client that leaves Nagle's algorithm on
// (Python's, many others) writes its first request right after its
// Finished, and holds it until that is acknowledged; the listener
// acknowledges it at once (rawsock.AckNow) rather than after the kernel's
// delayed acknowledgement, 40 ms or more, which the first request of every
// such connection waited. The quickest of a few connections is timed.
func TestTLSFirstRequestNotHeld(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("TCP_QUICKACK is Linux's")
	}
	port, _ := schemeBackend(t)
	inst, cancel := startOfflineApp(t, port, func(*config) {})
	t.Cleanup(func() {
		cancel()
		_ = inst.Wait()
	})
	quickest := time.Hour
	for range 5 {
		raw, err := net.Dial("tcp", inst.HTTPSAddr)
		require.NoError(t, err)
		require.NoError(t, raw.(*net.TCPConn).SetNoDelay(false))
		c := tls.Client(raw, &tls.Config{ServerName: "app.test", InsecureSkipVerify: true, NextProtos: []string{"http/1.1"}, MinVersion: tls.VersionTLS13})
		require.NoError(t, c.SetDeadline(time.Now().Add(10*time.Second)))
		require.NoError(t, c.Handshake())
		start := time.Now()
		_, err = io.WriteString(c, "GET /first HTTP/1.1\r\nHost: app.test\r\n\r\n")
		require.NoError(t, err)
		res, err := http.ReadResponse(bufio.NewReader(c), nil)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, res.Body)
		quickest = min(quickest, time.Since(start))
		require.Equal(t, http.StatusOK, res.StatusCode)
		c.Close()
	}
	t.Logf("quickest first request: %v", quickest)
	assert.Less(t, quickest, 25*time.Millisecond, "the first request waited for a delayed acknowledgement")
}
