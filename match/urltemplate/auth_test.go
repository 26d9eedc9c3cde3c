package urltemplate

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAuthURL(t *testing.T) {
	vars := &RequestVars{Host: "shop.example.com", HTTPHost: "Shop.Example.com:8080", BestHTTPHost: "www.example.com", Scheme: "https", PassAccessScheme: "http", RequestURI: "/a b?x=1&y=/", RemoteAddr: "192.0.2.9"}
	tests := []struct {
		raw, want, err string
	}{
		{raw: "http://auth.svc/verify", want: "http://auth.svc/verify"},
		{raw: "https://$host/oauth2/auth", want: "https://shop.example.com/oauth2/auth"},
		{raw: "http://auth/${http_host}/$scheme$request_uri", want: "http://auth/Shop.Example.com:8080/https/a b?x=1&y=/"},
		// $scheme is the connection's, $pass_access_scheme the balancer's.
		{raw: "http://auth/$scheme/$pass_access_scheme", want: "http://auth/https/http"},
		{raw: "http://auth/?h=$best_http_host", want: "http://auth/?h=www.example.com"},
		{raw: "http://auth/?rd=$escaped_request_uri&ip=$remote_addr", want: "http://auth/?rd=%2Fa%20b%3Fx%3D1%26y%3D%2F&ip=192.0.2.9"},
		{raw: "http://auth/$upstream_addr", err: "$upstream_addr is not a variable ramjet expands in an auth URL"},
		{raw: "http://auth/${host", err: "is not closed"},
		{raw: "/relative", err: "not an http or https URL"},
		{raw: "ftp://auth/", err: "not an http or https URL"},
		{raw: "https://invalid..auth.url", err: "invalid host"},
		{raw: "http:///path", err: "no host"},
		{raw: "http://auth/a b", err: "space"},
	}
	for _, tt := range tests {
		u, err := ParseAuthURL(tt.raw, false)
		if tt.err != "" {
			require.Error(t, err, tt.raw)
			assert.Contains(t, err.Error(), tt.err, tt.raw)
			continue
		}
		require.NoError(t, err, tt.raw)
		assert.Equal(t, tt.want, u.Expand(vars), tt.raw)
	}
}

func TestSigninURL(t *testing.T) {
	vars := &RequestVars{Host: "auth", HTTPHost: "auth", Scheme: "http", PassAccessScheme: "http", RequestURI: "/?a=b&c=d"}
	for raw, want := range map[string]string{
		// ingress-nginx's e2e test: rd=http://<host> + url.QueryEscape("/?a=b&c=d").
		"http://$host/auth/start":                    "http://auth/auth/start?rd=http://auth%2F%3Fa%3Db%26c%3Dd",
		"http://$host/auth/start?x=1":                "http://auth/auth/start?x=1&rd=http://auth%2F%3Fa%3Db%26c%3Dd",
		"http://$host/start?rd=$escaped_request_uri": "http://auth/start?rd=%2F%3Fa%3Db%26c%3Dd",
		"/start": "/start?rd=http://auth%2F%3Fa%3Db%26c%3Dd",
	} {
		u, err := SigninURL(raw, "")
		require.NoError(t, err, raw)
		assert.Equal(t, want, u.Expand(vars), raw)
	}
	u, err := SigninURL("http://$host/start", "orig")
	require.NoError(t, err)
	assert.Equal(t, "http://auth/start?orig=http://auth%2F%3Fa%3Db%26c%3Dd", u.Expand(vars))
}
