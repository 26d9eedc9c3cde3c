package router

import (
	"net/http"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/balance"
	"ramjet.dev/ramjet/match"
)

// An error page keeps the session cookie the primary exchange set: the
// sticky balancer puts it on the request's response headers before the
// backend answers, and nginx's error_page to @custom_… clears none of
// them (ngx_http_upstream_intercept_errors only adds WWW-Authenticate).
func TestCustomErrorPageKeepsAffinityCookie(t *testing.T) {
	_, errAddr := echoBackend(t, "errors")
	r := newTestRouter(Options{})
	t.Cleanup(r.CloseIdleConnections)
	web := httpBackend("prod/web:80", errorStatusBackend(t))
	web.Traffic = &match.Traffic{Affinity: &match.SessionAffinity{Mode: balance.Persistent, CookieName: "route"}}
	eb := httpBackend("prod/errors:80", errAddr)
	r.Publish(responseTable(web, &match.Response{ErrorCodes: []int{503}, ErrorBackend: eb}, eb))
	res := serve(r, http.MethodGet, "app.example.com", "/", http.Header{"X-Answer": {"503"}})
	assert.Equal(t, http.StatusOK, res.StatusCode)
	assert.Equal(t, "errors\n", body(t, res))
	cookies := res.Header.Values("Set-Cookie")
	require.Len(t, cookies, 1)
	assert.Regexp(t, regexp.MustCompile(`^route=[0-9a-f]{16}\|[^;]+; Path=/; HttpOnly$`), cookies[0])
}
