package main

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptrace"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An HTTP/1 connection serves ingress-nginx's keep-alive-requests, 1000
// requests, and closes with the last one's response, as nginx's
// keepalive_requests closes it; under -http1-server net/http too, whose
// server has no such bound of its own (countRequests).
func TestKeepaliveRequests(t *testing.T) {
	for _, server := range []string{http1Ramjet, http1NetHTTP} {
		t.Run(server, func(t *testing.T) {
			cfg := config{manifests: t.TempDir(), httpAddr: "127.0.0.1:0", pollInterval: time.Hour, http1Server: server}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			inst, err := start(ctx, cfg, slog.New(slog.DiscardHandler))
			require.NoError(t, err)
			c, err := net.Dial("tcp", inst.HTTPAddr)
			require.NoError(t, err)
			defer c.Close()
			_ = c.SetDeadline(time.Now().Add(30 * time.Second))
			br := bufio.NewReader(c)
			for i := 1; i <= keepaliveRequests; i++ {
				_, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: a.test\r\n\r\n")
				require.NoError(t, err)
				res, err := http.ReadResponse(br, nil)
				require.NoError(t, err)
				_, _ = io.Copy(io.Discard, res.Body)
				res.Body.Close()
				require.Equal(t, i == keepaliveRequests, res.Close, "request %d", i)
			}
			_, err = br.ReadByte()
			assert.Equal(t, io.EOF, err)
			cancel()
			require.NoError(t, inst.Wait())
		})
	}
}

// An HTTP/2 connection serves as many streams, and then says GOAWAY, as
// nginx does since 1.19.7: its keepalive_requests counts streams, so that
// a client kept on one connection still moves on. router/h2 counts them
// itself; under -http2-server net/http the last stream's response says
// Connection: close, net/http's cue for GOAWAY (countRequests). The test
// looks at the connection that carried each request, not at the client's
// dials: net/http's client, as it shares an HTTP/2 connection, may start a
// spare dial for a request that comes before the first connection is
// pooled, and closes that spare unused.
func TestKeepaliveRequestsHTTP2(t *testing.T) {
	for _, server := range []string{http1Ramjet, http1NetHTTP} {
		t.Run(server, func(t *testing.T) {
			cfg := config{manifests: t.TempDir(), httpAddr: "127.0.0.1:0", pollInterval: time.Hour, http2Server: server}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			inst, err := start(ctx, cfg, slog.New(slog.DiscardHandler))
			require.NoError(t, err)
			tr := &http.Transport{Protocols: new(http.Protocols)}
			tr.Protocols.SetUnencryptedHTTP2(true)
			defer tr.CloseIdleConnections()
			client := &http.Client{Transport: tr, Timeout: 30 * time.Second}
			var first net.Conn
			for i := 1; i <= keepaliveRequests+1; i++ {
				// The last connection handed to the request carried it: a
				// stream refused by GOAWAY is tried again on another.
				var carrier net.Conn
				trace := &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) { carrier = info.Conn }}
				req, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, trace), http.MethodGet, "http://"+inst.HTTPAddr+"/", nil)
				require.NoError(t, err)
				res, err := client.Do(req)
				require.NoError(t, err)
				_, _ = io.Copy(io.Discard, res.Body)
				res.Body.Close()
				require.Equal(t, 2, res.ProtoMajor)
				require.Empty(t, res.Header["Connection"])
				require.NotNil(t, carrier, "request %d", i)
				if i == 1 {
					first = carrier
				}
				require.Equal(t, i <= keepaliveRequests, carrier == first, "request %d on the first connection", i)
			}
			cancel()
			require.NoError(t, inst.Wait())
		})
	}
}

// The ConfigMap's client connection keys set the HTTP/1 listeners as
// nginx.tmpl's directives set nginx: keep-alive-requests
// (keepalive_requests), keep-alive (keepalive_timeout, "0" closing every
// connection after its response) and client-header-timeout
// (client_header_timeout), and none of them warns.
func TestConfigMapConnectionKeys(t *testing.T) {
	serve := func(t *testing.T, data string) (*instance, *syncBuffer) {
		dir := t.TempDir()
		writeFile(t, filepath.Join(dir, "configmap.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: nginx, namespace: ingress}\ndata:\n"+data)
		cfg, err := parseFlags([]string{"-manifests", dir, "-configmap", "ingress/nginx", "-http-addr", "127.0.0.1:0",
			"-debug-addr", "127.0.0.1:0", "-poll-interval", "1h", "-enable-access-log=false"}, io.Discard, func(string) string { return "" })
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		logs := &syncBuffer{}
		inst, err := start(ctx, cfg, slog.New(slog.NewTextHandler(logs, nil)))
		require.NoError(t, err)
		t.Cleanup(func() {
			cancel()
			_ = inst.Wait()
		})
		return inst, logs
	}
	// closes sends n requests on one connection and reports which
	// responses said they close it.
	closes := func(t *testing.T, addr string, n int) []bool {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(10 * time.Second))
		br := bufio.NewReader(c)
		var out []bool
		for range n {
			if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: a.test\r\n\r\n"); err != nil {
				break
			}
			res, err := http.ReadResponse(br, nil)
			if err != nil {
				break
			}
			_, _ = io.Copy(io.Discard, res.Body)
			res.Body.Close()
			out = append(out, res.Close)
		}
		return out
	}

	t.Run("keep-alive-requests", func(t *testing.T) {
		inst, logs := serve(t, "  keep-alive-requests: \"3\"\n  keep-alive: \"10\"\n  client-body-timeout: \"20\"\n")
		assert.Equal(t, []bool{false, false, true}, closes(t, inst.HTTPAddr, 5))
		status, body := get(t, http.DefaultClient, "http://"+inst.DebugAddr+"/debug/warnings", "")
		require.Equal(t, http.StatusOK, status)
		for _, key := range []string{"keep-alive-requests", "keep-alive", "client-body-timeout"} {
			assert.NotContains(t, body, "data["+key+"]")
			assert.NotContains(t, logs.String(), "data["+key+"]")
		}
	})
	t.Run("keep-alive off", func(t *testing.T) {
		inst, _ := serve(t, "  keep-alive: \"0\"\n")
		assert.Equal(t, []bool{true}, closes(t, inst.HTTPAddr, 2))
	})
	t.Run("client-header-timeout", func(t *testing.T) {
		inst, _ := serve(t, "  client-header-timeout: \"1\"\n")
		c, err := net.Dial("tcp", inst.HTTPAddr)
		require.NoError(t, err)
		defer c.Close()
		_, err = io.WriteString(c, "GET / HTTP/1.1\r\nHost: a.test\r\n")
		require.NoError(t, err)
		began := time.Now()
		_ = c.SetDeadline(began.Add(20 * time.Second))
		_, _ = io.Copy(io.Discard, c)
		assert.Less(t, time.Since(began), 10*time.Second, "an unfinished head is cut after client-header-timeout, not the default 60 s")
	})
}
