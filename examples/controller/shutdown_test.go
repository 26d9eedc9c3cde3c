package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
)

// slowBackend answers after delay; arrived counts the requests it holds.
func slowBackend(t *testing.T, delay time.Duration) (port string, arrived *atomic.Int64) {
	arrived = new(atomic.Int64)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived.Add(1)
		time.Sleep(delay)
		io.WriteString(w, "slow "+r.URL.Path)
	}))
	t.Cleanup(srv.Close)
	u, err := url.Parse(srv.URL)
	require.NoError(t, err)
	return u.Port(), arrived
}

// startOfflineApp serves appManifests(port) offline with cfg's timings.
func startOfflineApp(t *testing.T, port string, tweak func(*config)) (*instance, context.CancelFunc) {
	t.Helper()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "app.yaml"), appManifests(port))
	cfg := config{
		manifests:    dir,
		httpAddr:     "127.0.0.1:0",
		httpsAddr:    "127.0.0.1:0",
		debugAddr:    "127.0.0.1:0",
		pollInterval: time.Hour,
	}
	tweak(&cfg)
	ctx, cancel := context.WithCancel(context.Background())
	inst, err := start(ctx, cfg, slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	require.NoError(t, err)
	return inst, cancel
}

// On the stop signal /readyz fails at once, while the listeners go on
// serving for the drain period: every request in flight completes, and a
// new one is still served (with Connection: close, to move the client to
// another replica). Then the process ends.
func TestDrainOnStop(t *testing.T) {
	const (
		inFlight = 8
		delay    = 700 * time.Millisecond
		drain    = 400 * time.Millisecond
	)
	port, arrived := slowBackend(t, delay)
	inst, cancel := startOfflineApp(t, port, func(c *config) { c.drain = drain })
	defer cancel()
	client := &http.Client{Timeout: 10 * time.Second}
	defer client.CloseIdleConnections()
	httpURL, debugURL := "http://"+inst.HTTPAddr, "http://"+inst.DebugAddr

	status, _ := get(t, client, debugURL+"/readyz", "")
	require.Equal(t, http.StatusOK, status)

	type result struct {
		status int
		body   string
		err    error
	}
	results := make(chan result, inFlight)
	var wg sync.WaitGroup
	for range inFlight {
		wg.Go(func() {
			req, err := http.NewRequest(http.MethodGet, httpURL+"/inflight", nil)
			if err != nil {
				results <- result{err: err}
				return
			}
			req.Host = "app.test"
			resp, err := client.Do(req)
			if err != nil {
				results <- result{err: err}
				return
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			results <- result{status: resp.StatusCode, body: string(body), err: err}
		})
	}
	waitFor(t, 5*time.Second, "every request to reach the backend", func() bool { return arrived.Load() == inFlight })

	stopped := time.Now()
	cancel()
	waitFor(t, drain/2, "/readyz to fail", func() bool {
		resp, err := client.Get(debugURL + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusServiceUnavailable
	})
	status, body := get(t, client, debugURL+"/readyz", "")
	require.Equal(t, http.StatusServiceUnavailable, status)
	require.Contains(t, body, "shutting down")

	// A request arriving during the drain is served, on a connection
	// that then closes.
	req, err := http.NewRequest(http.MethodGet, httpURL+"/late", nil)
	require.NoError(t, err)
	req.Host = "app.test"
	resp, err := client.Do(req)
	require.NoError(t, err)
	late, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "slow /late", string(late))
	require.True(t, resp.Close, "keep-alive is off while draining")

	wg.Wait()
	close(results)
	for r := range results {
		require.NoError(t, r.err)
		require.Equal(t, http.StatusOK, r.status, r.body)
		require.Equal(t, "slow /inflight", r.body)
	}
	require.NoError(t, inst.Wait())
	require.GreaterOrEqual(t, time.Since(stopped), drain, "the listeners served for the whole drain")
	_, err = net.DialTimeout("tcp", inst.HTTPAddr, time.Second)
	require.Error(t, err, "the listener is closed after the drain")
}

// Without a drain period the stop closes the listeners at once, but the
// requests in flight still complete.
func TestStopWithoutDrainCompletesInFlight(t *testing.T) {
	stopWithRequestInFlight(t, 300*time.Millisecond, func(*config) {})
}

// stopWithRequestInFlight starts the controller offline (setup changes its
// config) before a backend that answers after delay, stops it while a
// request waits for that answer, and wants the request answered 200 and
// the stop clean.
func stopWithRequestInFlight(t *testing.T, delay time.Duration, setup func(*config)) {
	t.Helper()
	port, arrived := slowBackend(t, delay)
	inst, cancel := startOfflineApp(t, port, setup)
	defer cancel()
	client := &http.Client{Timeout: 10 * time.Second}
	defer client.CloseIdleConnections()
	done := make(chan error, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodGet, "http://"+inst.HTTPAddr+"/x", nil)
		req.Host = "app.test"
		resp, err := client.Do(req)
		if err == nil {
			_, err = io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				err = errors.New(resp.Status)
			}
		}
		done <- err
	}()
	waitFor(t, 5*time.Second, "the request to reach the backend", func() bool { return arrived.Load() == 1 })
	cancel()
	require.NoError(t, <-done)
	require.NoError(t, inst.Wait())
}

// Every listener closes a keep-alive connection left idle for the idle
// timeout (nginx's keepalive_timeout, 75 s; shortened here), and not long
// before.
func TestIdleKeepAliveClosed(t *testing.T) {
	const idle = 300 * time.Millisecond
	inst, cancel := startOfflineApp(t, namedBackend(t, "A"), func(c *config) { c.idleTimeout = idle })
	defer func() {
		cancel()
		require.NoError(t, inst.Wait())
	}()
	tests := []struct {
		name string
		dial func() (net.Conn, error)
		path string
		host string
	}{
		{name: "http", dial: func() (net.Conn, error) { return net.Dial("tcp", inst.HTTPAddr) }, path: "/", host: "app.test"},
		{name: "https", dial: func() (net.Conn, error) {
			return tls.Dial("tcp", inst.HTTPSAddr, &tls.Config{ServerName: "app.test", InsecureSkipVerify: true, NextProtos: []string{"http/1.1"}})
		}, path: "/", host: "app.test"},
		{name: "debug", dial: func() (net.Conn, error) { return net.Dial("tcp", inst.DebugAddr) }, path: "/healthz", host: "localhost"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conn, err := tt.dial()
			require.NoError(t, err)
			defer conn.Close()
			_, err = io.WriteString(conn, "GET "+tt.path+" HTTP/1.1\r\nHost: "+tt.host+"\r\n\r\n")
			require.NoError(t, err)
			br := bufio.NewReader(conn)
			resp, err := http.ReadResponse(br, nil)
			require.NoError(t, err)
			_, err = io.Copy(io.Discard, resp.Body)
			require.NoError(t, err)
			resp.Body.Close()
			require.Equal(t, http.StatusOK, resp.StatusCode)
			require.False(t, resp.Close, "the connection is kept alive")

			idleSince := time.Now()
			require.NoError(t, conn.SetReadDeadline(time.Now().Add(5*time.Second)))
			_, err = br.ReadByte()
			require.ErrorIs(t, err, io.EOF, "the server closes the idle connection")
			elapsed := time.Since(idleSince)
			require.GreaterOrEqual(t, elapsed, idle*3/4, "closed before the idle timeout")
			require.Less(t, elapsed, idle+2*time.Second)
		})
	}
}

// Requests in flight when the listeners close get ingress-nginx's
// worker-shutdown-timeout default, 240 s, unless the ConfigMap sets it;
// but a stop with nothing in flight ends at once, idle keep-alive
// connections and all: a Ctrl-C does not wait out the timeout.
func TestShutdownTimeoutDefault(t *testing.T) {
	require.Equal(t, 240*time.Second, config{}.connections().ShutdownTimeout)
	var cfg config
	applyConfigMap(&cfg, &corev1.ConfigMap{Data: map[string]string{"keep-alive": "60"}}, nil)
	require.Equal(t, 240*time.Second, cfg.connections().ShutdownTimeout, "the key unset")
	applyConfigMap(&cfg, &corev1.ConfigMap{Data: map[string]string{"worker-shutdown-timeout": "30s"}}, nil)
	require.Equal(t, 30*time.Second, cfg.connections().ShutdownTimeout)

	inst, cancel := startOfflineApp(t, namedBackend(t, "A"), func(*config) {})
	defer cancel()
	for _, addr := range []string{inst.HTTPAddr, inst.HTTPSAddr} {
		conn, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		defer conn.Close()
		if addr == inst.HTTPSAddr {
			conn = tls.Client(conn, &tls.Config{ServerName: "app.test", InsecureSkipVerify: true, NextProtos: []string{"http/1.1"}})
		}
		_, err = io.WriteString(conn, "GET / HTTP/1.1\r\nHost: app.test\r\n\r\n")
		require.NoError(t, err)
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode, addr)
	}
	began := time.Now()
	cancel()
	require.NoError(t, inst.Wait())
	require.Less(t, time.Since(began), 5*time.Second, "idle keep-alive connections do not hold the stop")
}

// upgradeBackend switches every request to an echo protocol: after its
// 101 it sends back each line it reads.
func upgradeBackend(t *testing.T) (port string) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, brw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer c.Close()
		brw.WriteString("HTTP/1.1 101 Switching Protocols\r\nUpgrade: echo\r\nConnection: Upgrade\r\n\r\n")
		if brw.Flush() != nil {
			return
		}
		for {
			line, err := brw.ReadString('\n')
			if err != nil {
				return
			}
			brw.WriteString(line)
			if brw.Flush() != nil {
				return
			}
		}
	}))
	// Hijacked connections are not closed by srv.Close.
	t.Cleanup(srv.CloseClientConnections)
	t.Cleanup(srv.Close)
	u, err := url.Parse(srv.URL)
	require.NoError(t, err)
	return u.Port()
}

// A tunnel open when the stop comes (a WebSocket) is kept, as nginx's
// graceful quit keeps an upgraded connection until it ends or
// worker-shutdown-timeout runs out: the stop waits for it, and closes it
// when the timeout runs out, under either HTTP/1 server.
func TestShutdownKeepsTunnels(t *testing.T) {
	const timeout = 1500 * time.Millisecond
	for _, server := range []string{http1Ramjet, http1NetHTTP} {
		t.Run(server, func(t *testing.T) {
			inst, cancel := startOfflineApp(t, upgradeBackend(t), func(c *config) {
				c.http1Server = server
				c.shutdownTimeout = timeout
			})
			defer cancel()
			open := func() (net.Conn, *bufio.Reader) {
				conn, err := net.Dial("tcp", inst.HTTPAddr)
				require.NoError(t, err)
				t.Cleanup(func() { conn.Close() })
				_, err = io.WriteString(conn, "GET /ws HTTP/1.1\r\nHost: app.test\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n")
				require.NoError(t, err)
				br := bufio.NewReader(conn)
				resp, err := http.ReadResponse(br, nil)
				require.NoError(t, err)
				require.Equal(t, http.StatusSwitchingProtocols, resp.StatusCode)
				return conn, br
			}
			echo := func(conn net.Conn, br *bufio.Reader, line string) error {
				require.NoError(t, conn.SetDeadline(time.Now().Add(5*time.Second)))
				if _, err := io.WriteString(conn, line+"\n"); err != nil {
					return err
				}
				got, err := br.ReadString('\n')
				if err == nil && got != line+"\n" {
					err = errors.New("echoed " + got)
				}
				return err
			}
			ended, endedBR := open()
			kept, keptBR := open()
			require.NoError(t, echo(ended, endedBR, "before"))
			require.NoError(t, echo(kept, keptBR, "before"))

			stopped := time.Now()
			cancel()
			done := make(chan error, 1)
			go func() { done <- inst.Wait() }()
			time.Sleep(timeout / 3)
			require.NoError(t, echo(ended, endedBR, "during"), "a tunnel goes on through the stop")
			require.NoError(t, echo(kept, keptBR, "during"))
			ended.Close()
			select {
			case err := <-done:
				t.Fatalf("the stop ended after %v with a tunnel open (%v)", time.Since(stopped), err)
			case <-time.After(timeout / 3):
			}
			require.ErrorIs(t, <-done, context.DeadlineExceeded, "a tunnel outlasted the timeout")
			require.GreaterOrEqual(t, time.Since(stopped), timeout, "the stop waited for the tunnel")
			require.NoError(t, kept.SetReadDeadline(time.Now().Add(5*time.Second)))
			_, err := keptBR.ReadByte()
			require.ErrorIs(t, err, io.EOF, "the tunnel is closed once the timeout runs out")

			// A stop whose tunnels end in time ends with them, cleanly.
			inst, cancel = startOfflineApp(t, upgradeBackend(t), func(c *config) {
				c.http1Server = server
				c.shutdownTimeout = time.Minute
			})
			defer cancel()
			conn, br := open()
			require.NoError(t, echo(conn, br, "before"))
			cancel()
			time.Sleep(100 * time.Millisecond)
			require.NoError(t, echo(conn, br, "during"))
			closed := time.Now()
			conn.Close()
			require.NoError(t, inst.Wait())
			require.Less(t, time.Since(closed), 5*time.Second)
		})
	}
}
