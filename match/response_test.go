package match

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The copy's URL follows nginx: with variables, the target as expanded
// in the subrequest ($uri is its own URI); without, proxy_pass's rule (no path: the subrequest's; a path: that
// path), the client's query after either.
func TestMirrorURL(t *testing.T) {
	for _, tc := range []struct {
		target, path, query string
		hasQuery            bool
		want                string
	}{
		{"https://test.env.com$request_uri", "/a/b", "x=1", true, "https://test.env.com/a/b?x=1"},
		{"https://test.env.com/$request_uri", "/a", "", false, "https://test.env.com//a"},
		{"https://test.env.com$request_uri", "/a", "", true, "https://test.env.com/a?"},
		{"http://m:8080/copy$is_args$args", "/a", "q=2", true, "http://m:8080/copy?q=2"},
		{"http://m:8080/copy$is_args$args", "/a", "", false, "http://m:8080/copy"},
		{"http://m/${uri}/x", "/p", "q", true, "http://m//_mirror-uid/x"}, // the subrequest's URI
		{"http://m/$scheme/$host", "/p", "", false, "http://m/https/shop.example.com"},
		{"http://localhost/mirror", "/a", "q=1", true, "http://localhost/mirror?q=1"},
		{"http://localhost", "/a", "q=1", true, "http://localhost/_mirror-uid?q=1"},
		{"http://localhost", "/a", "", false, "http://localhost/_mirror-uid"},
	} {
		m, err := NewMirror(Mirror{Target: tc.target, Host: "h", Source: "/_mirror-uid"})
		require.NoError(t, err, tc.target)
		requestURI := tc.path
		if tc.hasQuery {
			requestURI += "?" + tc.query
		}
		assert.Equal(t, tc.want, m.URL(requestURI, tc.path, tc.query, "https", "shop.example.com"), tc.target)
	}
	for _, bad := range []string{"ftp://m/", "m/x", "http://$host/x", "http:///x", "http://m/$remote_addr", "http://m/${uri", "http://u@m/"} {
		_, err := NewMirror(Mirror{Target: bad, Host: "h"})
		assert.Error(t, err, bad)
	}
	_, err := NewMirror(Mirror{Target: "http://m/", Host: "a b"})
	assert.Error(t, err, "a Host with a space")
}

func TestNewResponseChecks(t *testing.T) {
	for _, r := range []Response{
		{ErrorCodes: []int{503, 404}},
		{ErrorCodes: []int{404, 404}},
		{ErrorCodes: []int{200}},
		{LimitRate: -1},
	} {
		_, err := NewResponse(r)
		assert.Error(t, err, "%+v", r)
	}
	r, err := NewResponse(Response{ErrorCodes: []int{404, 503}})
	require.NoError(t, err)
	assert.True(t, r.Intercepts(503))
	assert.False(t, r.Intercepts(500))
}

// $host and $http_host expand per request, as nginx's;
// $hostname is another variable and makes no Host.
func TestUpstreamHost(t *testing.T) {
	hv := HostVars{Host: "shop.example.com", HTTPHost: "Shop.Example.com:81"}
	for _, c := range []struct{ host, want string }{
		{"$host.backend.local", "shop.example.com.backend.local"},
		{"${host}:8080", "shop.example.com:8080"},
		{"fixed.example", "fixed.example"},
		{"$http_host", "Shop.Example.com:81"},
		{"${http_host}.mesh", "Shop.Example.com:81.mesh"},
	} {
		rw, err := NewRewrite(Rewrite{Host: c.host})
		require.NoError(t, err, c.host)
		assert.Equal(t, c.want, rw.UpstreamHost(hv), c.host)
	}
	rw, err := NewRewrite(Rewrite{Host: "$http_host"})
	require.NoError(t, err)
	assert.Empty(t, rw.UpstreamHost(HostVars{Host: "a.example"}), "no Host field: the caller keeps the client's")
	_, err = NewRewrite(Rewrite{Host: "$hostname.local"})
	assert.Error(t, err)
}
