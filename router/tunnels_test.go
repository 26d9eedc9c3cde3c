package router

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
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
	for _, tr := range []struct {
		name string
		rt   http.RoundTripper
	}{{"fast", nil}, {"nethttp", &http.Transport{}}} {
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
