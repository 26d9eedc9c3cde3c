package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// ingress-nginx's nginx status collector: the traffic listeners'
// connections as nginx's stub_status counts them, scraped while one
// connection idles in keep-alive, one waits for a slow backend and one has
// sent half a request head (and one in its TLS handshake), then once they
// closed. Under net/http's
// servers the half head counts once its handler starts (countConns).
func TestConnectionMetrics(t *testing.T) {
	for _, server := range []string{http1Ramjet, http1NetHTTP} {
		t.Run(server, func(t *testing.T) {
			release := make(chan struct{})
			backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/slow" {
					<-release
				}
				io.WriteString(w, "ok")
			}))
			defer backend.Close()
			defer func() {
				select {
				case <-release:
				default:
					close(release)
				}
			}()
			u, err := url.Parse(backend.URL)
			require.NoError(t, err)
			dir := t.TempDir()
			writeFile(t, filepath.Join(dir, "app.yaml"), appManifests(u.Port()))
			cfg := config{manifests: dir, httpAddr: "127.0.0.1:0", httpsAddr: "127.0.0.1:0", debugAddr: "127.0.0.1:0", pollInterval: time.Hour,
				enableMetrics: true, podName: "ramjet-0", podNamespace: "ingress", http1Server: server, http2Server: server}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			inst, err := start(ctx, cfg, slog.New(slog.DiscardHandler))
			require.NoError(t, err)
			client := &http.Client{Timeout: 10 * time.Second}
			defer client.CloseIdleConnections()
			counts := func() string {
				s := scrapeURL(t, client, inst.DebugAddr)
				out := ""
				for _, st := range []string{"active", "reading", "writing", "waiting"} {
					out += fmt.Sprintf("%s=%v ", st, s.value("nginx_ingress_controller_nginx_process_connections", map[string]string{"state": st, "controller_pod": "ramjet-0"}))
				}
				for _, st := range []string{"accepted", "handled"} {
					out += fmt.Sprintf("%s=%v ", st, s.value("nginx_ingress_controller_nginx_process_connections_total", map[string]string{"state": st}))
				}
				return out + fmt.Sprintf("requests=%v", s.value("nginx_ingress_controller_nginx_process_requests_total", nil))
			}
			want := func(w string) {
				t.Helper()
				var got string
				waitFor(t, 5*time.Second, "connection metrics "+w, func() bool { got = counts(); return got == w }, func() string { return got })
			}
			want("active=0 reading=0 writing=0 waiting=0 accepted=0 handled=0 requests=0")

			dial := func(addr ...string) net.Conn {
				c, err := net.Dial("tcp", append(addr, inst.HTTPAddr)[0])
				require.NoError(t, err)
				_ = c.SetDeadline(time.Now().Add(20 * time.Second))
				return c
			}
			idle := dial()
			defer idle.Close()
			br := bufio.NewReader(idle)
			_, err = io.WriteString(idle, "GET / HTTP/1.1\r\nHost: app.test\r\n\r\n")
			require.NoError(t, err)
			res, err := http.ReadResponse(br, nil)
			require.NoError(t, err)
			_, _ = io.Copy(io.Discard, res.Body)
			require.Equal(t, http.StatusOK, res.StatusCode)
			slow := dial()
			defer slow.Close()
			_, err = io.WriteString(slow, "GET /slow HTTP/1.1\r\nHost: app.test\r\n\r\n")
			require.NoError(t, err)
			half := dial()
			defer half.Close()
			_, err = io.WriteString(half, "GET / HTTP/1.1\r\nHost: app.test\r\n")
			require.NoError(t, err)
			// A TLS handshake under way is active only, as in nginx, and
			// counted as accepted once it is done.
			handshake := dial(inst.HTTPSAddr)
			defer handshake.Close()
			if server == http1Ramjet {
				want("active=4 reading=1 writing=1 waiting=1 accepted=3 handled=3 requests=3")
			} else {
				// net/http counts a request as its handler starts.
				want("active=4 reading=1 writing=1 waiting=1 accepted=3 handled=3 requests=2")
			}

			close(release)
			res, err = http.ReadResponse(bufio.NewReader(slow), nil)
			require.NoError(t, err)
			_, _ = io.Copy(io.Discard, res.Body)
			_, err = io.WriteString(half, "\r\n")
			require.NoError(t, err)
			res, err = http.ReadResponse(bufio.NewReader(half), nil)
			require.NoError(t, err)
			_, _ = io.Copy(io.Discard, res.Body)
			idle.Close()
			slow.Close()
			half.Close()
			handshake.Close()
			want("active=0 reading=0 writing=0 waiting=0 accepted=4 handled=4 requests=3")
			cancel()
			require.NoError(t, inst.Wait())
		})
	}
}
