package match

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The default span name is the nginx location's name, as ingress-nginx
// writes the location (template.go buildLocation, location.go
// updateServerLocations) and the module reads it (otel_ngx_module.cpp
// GetOperationName: ngx_http_core_loc_conf_t.name).
func TestLocationSpanName(t *testing.T) {
	for _, c := range []struct {
		rt   *Route
		path string
		want string
	}{
		{nil, "/anything", "/"},
		{&Route{Type: Prefix, Path: ""}, "/x", "/"},
		{&Route{Type: Prefix, Path: "/api"}, "/api/v1", "/api/"},
		{&Route{Type: Prefix, Path: "/api"}, "/api", "/api"}, // the exact twin "= /api"
		{&Route{Type: Exact, Path: "/healthz"}, "/healthz", "/healthz"},
		{&Route{Type: Regex, Path: "/api/v[0-9]+"}, "/api/v2", "^/api/v[0-9]+"},
	} {
		assert.Equal(t, c.want, LocationSpanName(c.rt, c.path), "%+v %s", c.rt, c.path)
	}
}

func TestParseSpanName(t *testing.T) {
	n, err := ParseSpanName("")
	require.NoError(t, err)
	assert.True(t, n.IsZero())
	n, err = ParseSpanName("checkout")
	require.NoError(t, err)
	assert.False(t, n.HasVariables())
	assert.Equal(t, "checkout", n.Expand(nil))
	// The ingress-nginx docs' example (third-party-addons/opentelemetry.md).
	n, err = ParseSpanName("HTTP $request_method $service_name $uri")
	require.NoError(t, err)
	assert.True(t, n.HasVariables())
	assert.Equal(t, "HTTP GET web /a", n.Expand(&SnippetRequest{Method: "GET", ServiceName: "web", URI: "/a"}))
	_, err = ParseSpanName("HTTP $status")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "$status is not a variable ramjet expands in opentelemetry-operation-name")
}
