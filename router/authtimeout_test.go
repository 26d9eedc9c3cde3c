package router

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/match"
)

// TestExternalAuthTimeouts: the subrequest has the timeouts of
// ingress-nginx's auth location, which sets none and so has nginx's
// defaults (proxy_connect_timeout, proxy_read_timeout: 60 s), not the
// location's: a service answering after 30 s is waited for, one silent
// for more than 60 s is a 500. The service here is a pipe, on a fake clock.
func TestExternalAuthTimeouts(t *testing.T) {
	for _, tt := range []struct {
		name   string
		delay  time.Duration
		status int
		reason string
	}{
		{"answer after 30s", 30 * time.Second, http.StatusNotFound, ReasonNoRoute},
		{"no answer within 60s", 61 * time.Second, http.StatusInternalServerError, ReasonAuthError},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				// A route without a backend: past the auth step it answers
				// 404, so the status tells whether the auth passed.
				rt := route(match.Prefix, "/app", nil)
				rt.Auth = externalAuth(t, "http://auth.example/check", nil)
				recs := newRecords()
				r := newTestRouter(Options{Observer: recs.observe, ConnectTimeout: time.Second, ReadTimeout: 2 * time.Second})
				r.Publish(table("auth", vhost("shop.example.com", nil, rt)))
				tr, ok := r.auth.ext.(*http.Transport)
				require.True(t, ok)
				done := make(chan struct{})
				tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
					srv, cli := net.Pipe()
					go func() {
						defer close(done)
						defer srv.Close()
						if _, err := http.ReadRequest(bufio.NewReader(srv)); err != nil {
							return
						}
						time.Sleep(tt.delay)
						_, _ = srv.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"))
					}()
					return cli, nil
				}
				res := serve(r, http.MethodGet, "shop.example.com", "/app", nil)
				assert.Equal(t, tt.status, res.StatusCode)
				assert.Equal(t, tt.reason, recs.last(t).Reason)
				tr.CloseIdleConnections()
				<-done
			})
		})
	}
}
