package compile

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPreserveTrailingSlash: the annotation sets the flag on the routes of
// its own Ingress and on the hosts it creates, changes the digest only
// where it is set, and a value that does not parse is rejected.
func TestPreserveTrailingSlash(t *testing.T) {
	snap := func(annotations ...string) Snapshot {
		return mkSnapshot(
			mkService("prod", "api", ":80:"), mkSlice("prod", "api", "a", "", 80, "10.0.0.1"),
			mkIngress("prod", "shop", 1, withAnnotations(annotations...), withTLS("", "shop.example.com"),
				withRules(mkRule("shop.example.com", prefix("/", "api", 80)))),
			mkIngress("prod", "other", 2, withRules(mkRule("shop.example.com", prefix("/other", "api", 80)))),
		)
	}
	plain, ws := compileOK(t, snap(), Options{})
	require.Empty(t, ws)
	kept, ws := compileOK(t, snap(NginxPrefix+"preserve-trailing-slash", "true"), Options{})
	require.Empty(t, ws)
	off, ws := compileOK(t, snap(NativePrefix+"preserve-trailing-slash", "false"), Options{})
	require.Empty(t, ws)
	bad, ws := compileOK(t, snap(NativePrefix+"preserve-trailing-slash", "sometimes"), Options{})
	require.Len(t, ws, 1)
	assert.Equal(t, AnnotationRejected, ws[0].Reason)
	assert.Equal(t, "metadata.annotations["+NativePrefix+"preserve-trailing-slash]", ws[0].Field)

	res := kept.Lookup("shop.example.com", "/x")
	require.NotNil(t, res.Route)
	assert.True(t, res.Route.PreserveTrailingSlash)
	assert.True(t, res.Host.PreserveTrailingSlash, "the host's creator sets it for unmatched paths")
	assert.False(t, kept.Lookup("shop.example.com", "/other").Route.PreserveTrailingSlash, "another Ingress's route keeps the default")
	assert.False(t, plain.Lookup("shop.example.com", "/x").Route.PreserveTrailingSlash)

	assert.NotEqual(t, plain.Digest(), kept.Digest())
	assert.Equal(t, plain.Digest(), off.Digest(), "explicitly false is the default")
	assert.Equal(t, plain.Digest(), bad.Digest(), "a rejected value is not applied")
	assert.Contains(t, kept.String(), "ssl-redirect preserve-trailing-slash")
}
