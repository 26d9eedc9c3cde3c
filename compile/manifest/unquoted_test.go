package manifest

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
)

// TestUnquotedValueIsNamed: an annotation or ConfigMap value written
// unquoted (ssl-redirect: false, hsts-max-age: 31536000) is YAML's boolean
// or number, which a string map does not take; the error names each such
// key, not just the map, and says to quote it.
func TestUnquotedValueIsNamed(t *testing.T) {
	data := "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata:\n  name: i\n  namespace: shop\n  annotations:\n" +
		"    nginx.ingress.kubernetes.io/ssl-redirect: false\n    nginx.ingress.kubernetes.io/proxy-body-size: 8m\n" +
		"    nginx.ingress.kubernetes.io/proxy-read-timeout: 300\n---\n" +
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: ingress-nginx}\ndata:\n  use-forwarded-headers: true\n  hsts: \"true\"\n  limits: {a: b}\n"
	_, _, err := Decode("in", []byte(data))
	require.Equal(t, []string{
		`in document 1 (line 1, Ingress shop/i): metadata.annotations[nginx.ingress.kubernetes.io/proxy-read-timeout]: want a string, got the number 300: quote it ("300")`,
		`in document 1 (line 1, Ingress shop/i): metadata.annotations[nginx.ingress.kubernetes.io/ssl-redirect]: want a string, got the boolean false: quote it ("false")`,
		`in document 2 (line 11, ConfigMap ingress-nginx/c): data[limits]: want a string, got a mapping`,
		`in document 2 (line 11, ConfigMap ingress-nginx/c): data[use-forwarded-headers]: want a string, got the boolean true: quote it ("true")`,
	}, loadErrors(err))
	var fields []string
	for _, e := range errorFields(t, err) {
		fields = append(fields, e.Field)
	}
	if d := cmp.Diff([]string{
		"metadata.annotations[nginx.ingress.kubernetes.io/proxy-read-timeout]",
		"metadata.annotations[nginx.ingress.kubernetes.io/ssl-redirect]",
		"data[limits]", "data[use-forwarded-headers]",
	}, fields); d != "" {
		t.Errorf("fields (-want +got):\n%s", d)
	}
}
