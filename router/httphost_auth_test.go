package router

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/match"
)

// The auth subrequest's X-Original-URL is ingress-nginx's
// "$scheme://$http_host$request_uri", and $http_host in the auth URL the
// Host field as sent: beside an absolute-form target that field, not the
// target's host; without a Host field, empty, as nginx has it. So is
// $http_host in auth-proxy-set-headers.
func TestExternalAuthHTTPHostAbsoluteForm(t *testing.T) {
	svc := newAuthService(t)
	v, err := match.ParseVarTemplate("[$http_host]")
	require.NoError(t, err)
	r, _ := authRouter(t, Options{}, externalAuth(t, svc.srv.URL+"/ok?h=$http_host", func(x *match.ExternalAuth) {
		x.Options = &match.ExternalAuthOptions{ProxySetHeaders: []match.AuthHeader{{Name: "X-Http-Host", Value: v}}}
	}))
	t.Cleanup(r.CloseIdleConnections)
	send := serveH1(t, r)
	for _, c := range []struct{ head, url, h string }{
		{fmt.Sprintf(absWithHost, "/app/page?a=b"), "http://b.example:81/app/page?a=b", "b.example:81"},
		{fmt.Sprintf(absWithoutHost, "/app/page?a=b"), "http:///app/page?a=b", ""},
	} {
		res := send(c.head)
		require.Equal(t, 200, res.StatusCode, c.head)
		got, _ := svc.request()
		require.NotNil(t, got)
		assert.Equal(t, c.url, got.Header.Get("X-Original-Url"), c.head)
		assert.Equal(t, c.h, got.URL.Query().Get("h"), c.head)
		assert.Equal(t, "["+c.h+"]", got.Header.Get("X-Http-Host"), "auth-proxy-set-headers: "+c.head)
	}
}
