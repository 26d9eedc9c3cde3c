package router

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/match"
)

// $http_host in a snippet is the Host field as sent: beside an
// absolute-form target that field, not the target's host; empty without
// a Host field, as nginx 1.22 has it on loopback.
func TestSnippetHTTPHostAbsoluteForm(t *testing.T) {
	_, addr := echoBackend(t, "web")
	sn, err := match.NewSnippet(match.Snippet{Ops: []match.SnippetOp{
		{Kind: match.OpSetHeader, Name: "X-Http-Host", Value: "[$http_host]"},
	}})
	require.NoError(t, err)
	rt := route(match.Prefix, "/", httpBackend("prod/web:80", addr))
	rt.Snippet = sn
	r := newTestRouter(Options{})
	t.Cleanup(r.CloseIdleConnections)
	r.Publish(table("abs", vhost("shop.example.com", nil, rt)))
	send := serveH1(t, r)
	for _, c := range []struct{ head, want string }{
		{fmt.Sprintf(absWithHost, "/x"), "[b.example:81]"},
		{fmt.Sprintf(absWithoutHost, "/x"), "[]"},
		{"GET /x HTTP/1.1\r\nHost: Shop.example.com:8080\r\n", "[Shop.example.com:8080]"},
	} {
		res := send(c.head)
		require.Equal(t, 200, res.StatusCode, c.head)
		assert.Equal(t, c.want, res.Header.Get("X-Http-Host"), c.head)
	}
}
