package router

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/match"
)

// Shutdown waits for the Upgrade tunnels open, which the server's own
// Shutdown no longer counts (net/http's stops at the hijack), and closes
// those left when its context ends, over the router's own pool and over
// ReverseProxy (Options.Transport), as nginx keeps upgraded connections
// until worker_shutdown_timeout.
func TestShutdownWaitsForTunnels(t *testing.T) {
	for _, tr := range proxyPaths() {
		t.Run(tr.name, func(t *testing.T) {
			echo := upgradeEcho(t)
			defer echo.CloseClientConnections()
			r := newTestRouter(Options{Transport: tr.rt})
			r.Publish(table("d", vhost("", nil, route(match.Prefix, "/", httpBackend("prod/echo:80", echo.Listener.Addr().String())))))
			front := httptest.NewServer(r)
			defer front.Close()
			open := func() (net.Conn, *bufio.Reader) {
				c, br := dialUpgrade(t, front.Listener.Addr().String())
				require.NoError(t, c.SetDeadline(time.Now().Add(5*time.Second)))
				_, err := io.WriteString(c, "ping\n")
				require.NoError(t, err)
				line, err := br.ReadString('\n')
				require.NoError(t, err)
				require.Equal(t, "ping\n", line)
				return c, br
			}

			// A tunnel that ends in time ends the wait.
			c, _ := open()
			require.NoError(t, front.Config.Shutdown(t.Context()), "net/http does not count the tunnel")
			done := make(chan error, 1)
			go func() { done <- r.Shutdown(t.Context()) }()
			select {
			case err := <-done:
				t.Fatalf("Shutdown returned %v with a tunnel open", err)
			case <-time.After(100 * time.Millisecond):
			}
			c.Close()
			select {
			case err := <-done:
				require.NoError(t, err)
			case <-time.After(5 * time.Second):
				t.Fatal("Shutdown did not return once the tunnel ended")
			}

			// One that outlasts the context is closed.
			front = httptest.NewServer(r)
			defer front.Close()
			_, br := open()
			ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
			defer cancel()
			require.ErrorIs(t, r.Shutdown(ctx), context.DeadlineExceeded)
			_, err := br.ReadByte()
			require.ErrorIs(t, err, io.EOF, "the tunnel is closed")
		})
	}
}

// TestTunnelIdleTimeout: a tunnel through which nothing passed either way
// for the read timeout (proxy-read-timeout) is closed, as nginx's
// ngx_http_upstream_process_upgraded arms proxy_read_timeout on the
// backend's side again at every event of either side (checked on loopback:
// an idle WebSocket closes after the timeout, one where only the client
// sends stays open); over the router's own pool and over ReverseProxy. A
// tunnel was never cut, so an idle or half-dead WebSocket held both
// connections for ever.
func TestTunnelIdleTimeout(t *testing.T) {
	const read = 300 * time.Millisecond
	for _, tr := range proxyPaths() {
		t.Run(tr.name, func(t *testing.T) {
			echo := upgradeEcho(t)
			defer echo.CloseClientConnections()
			r := newTestRouter(Options{Transport: tr.rt, ReadTimeout: read})
			r.Publish(table("d", vhost("", nil, route(match.Prefix, "/", httpBackend("prod/echo:80", echo.Listener.Addr().String())))))
			front := httptest.NewServer(r)
			defer front.Close()

			// Only the client sends, for over three timeouts: the echo
			// answers nothing until the line ends.
			c, br := dialUpgrade(t, front.Listener.Addr().String())
			require.NoError(t, c.SetDeadline(time.Now().Add(5*time.Second)))
			for range 12 {
				_, err := io.WriteString(c, "x")
				require.NoError(t, err)
				time.Sleep(read / 3)
			}
			_, err := io.WriteString(c, "\n")
			require.NoError(t, err)
			line, err := br.ReadString('\n')
			require.NoError(t, err, "a tunnel the client keeps busy stays open")
			require.Equal(t, "xxxxxxxxxxxx\n", line)

			// Then nothing either way: closed once the timeout passed.
			idle := time.Now()
			_, err = br.ReadByte()
			require.ErrorIs(t, err, io.EOF, "the idle tunnel is closed")
			require.GreaterOrEqual(t, time.Since(idle), read-50*time.Millisecond)
		})
	}
}
