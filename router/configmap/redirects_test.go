package configmap

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// no-tls-redirect-locations is split as template.go's
// isLocationInLocationList splits it (commas, trimmed, empty items
// skipped); an item that is not a path matches no location there, so it
// is left out with a warning and the others apply.
func TestNoTLSRedirectLocations(t *testing.T) {
	s, warns := Parse("ingress", "nginx", nil)
	assert.Empty(t, warns)
	assert.Equal(t, []string{"/.well-known/acme-challenge"}, s.NoTLSRedirectLocations)

	for value, want := range map[string][]string{
		" /healthz, /public/ ,":       {"/healthz", "/public/"},
		"/.well-known/acme-challenge": {"/.well-known/acme-challenge"},
		"":                            {},
		" , ":                         {},
	} {
		s, warns := Parse("ingress", "nginx", map[string]string{"no-tls-redirect-locations": value})
		assert.Empty(t, warns, value)
		assert.Equal(t, want, s.NoTLSRedirectLocations, value)
		assert.Contains(t, s.Keys, "no-tls-redirect-locations", value)
	}

	s, warns = Parse("ingress", "nginx", map[string]string{"no-tls-redirect-locations": "healthz,/public"})
	require.Len(t, warns, 1)
	assert.Equal(t, Ignored, warns[0].Reason)
	assert.Equal(t, "no-tls-redirect-locations", warns[0].Key)
	assert.Contains(t, warns[0].Message, `"healthz"`)
	assert.Equal(t, []string{"/public"}, s.NoTLSRedirectLocations)
}
