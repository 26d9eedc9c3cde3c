package router

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/balance"
)

// upstream-hash-by "$http_host" hashes the Host field as sent: an
// absolute-form request goes where an origin-form one with the same Host
// field goes, whatever host its target names.
func TestHashByHTTPHostAbsoluteForm(t *testing.T) {
	var eps []string
	for i := range 4 {
		_, addr := echoBackend(t, fmt.Sprint("web", i))
		eps = append(eps, addr)
	}
	r := newTestRouter(Options{})
	t.Cleanup(r.CloseIdleConnections)
	r.Publish(table("hash", vhost("", balancedBackend("prod/web:80", balance.Hash, "$http_host", eps...))))
	send := serveH1(t, r)
	for i := range 8 {
		host := fmt.Sprintf("tenant%d.example:81", i)
		origin := send("GET /x HTTP/1.1\r\nHost: " + host + "\r\n")
		abs := send("GET http://shop.example.com/x HTTP/1.1\r\nHost: " + host + "\r\n")
		require.Equal(t, 200, origin.StatusCode)
		require.Equal(t, 200, abs.StatusCode)
		assert.Equal(t, origin.Header.Get("X-Backend"), abs.Header.Get("X-Backend"), host)
	}
}
