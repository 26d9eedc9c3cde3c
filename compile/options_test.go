package compile

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A malformed option is an error when the options are built (SPEC §1).
func TestParseServiceRef(t *testing.T) {
	valid := map[string]ServiceRef{
		"kube-system/notfound:8080": {"kube-system", "notfound", "8080"},
		"prod/api:http":             {"prod", "api", "http"},
		"a/b:1":                     {"a", "b", "1"},
		"a/b:65535":                 {"a", "b", "65535"},
	}
	for in, want := range valid {
		got, err := ParseServiceRef(in)
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
		require.Equal(t, in, got.String())
	}
	invalid := map[string]string{
		"kube-system/notfound": "missing :port",
		"a/b/c:80":             "name",
		"notfound:80":          "want namespace/name:port",
		"a/b:":                 "port",
		"a/b:0":                "out of range",
		"a/b:65536":            "out of range",
		"a/b:+80":              "port",
		"a/b:-1":               "port",
		"A/b:80":               "namespace",
		"a/B:80":               "name",
		"/b:80":                "namespace",
		"a/:80":                "name",
		"a/b:my_port":          "port",
	}
	for in, want := range invalid {
		_, err := ParseServiceRef(in)
		require.ErrorContains(t, err, want, in)
		require.ErrorContains(t, err, in, "the error quotes the value")
	}
}

func TestServiceRefPortNumber(t *testing.T) {
	require.Equal(t, int32(8080), ServiceRef{Port: "8080"}.PortNumber())
	require.Zero(t, ServiceRef{Port: "http"}.PortNumber())
	require.Zero(t, ServiceRef{Port: "+80"}.PortNumber())
}

func TestOptionsValidate(t *testing.T) {
	require.NoError(t, Options{}.Validate())
	ref, err := ParseServiceRef("prod/default:80")
	require.NoError(t, err)
	require.NoError(t, Options{IngressClass: "edge", ControllerName: "example.com/edge", DefaultBackend: &ref}.Validate())

	for name, o := range map[string]Options{
		"ingress-class":   {IngressClass: "Edge_Class"},
		"controller-name": {ControllerName: "no-domain"},
		"default-backend": {DefaultBackend: &ServiceRef{Namespace: "prod", Name: "api", Port: "+80"}},
	} {
		require.ErrorContains(t, o.Validate(), name)
	}
}
