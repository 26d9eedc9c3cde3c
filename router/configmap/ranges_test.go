package configmap

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestParseSourceRangesMapped: a range written in IPv4-mapped form is
// IPv4 only when it lies within ::ffff:0:0/96; a shorter one is an IPv6
// range (masked, it holds no mapped address), never 0.0.0.0/0, which
// would let every IPv4 client through a source range or trust every IPv4
// peer's X-Forwarded-For.
func TestParseSourceRangesMapped(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"::ffff:10.0.0.0/104", "10.0.0.0/8"},
		{"::ffff:10.1.2.3", "10.1.2.3/32"},
		{"::ffff:0:0/96", "0.0.0.0/0"},
		{"::ffff:10.0.0.1/64", "::/64"},
		{"::ffff:10.0.0.1/90", "::ffc0:0:0/90"},
	} {
		got, err := ParseSourceRanges(c.in)
		require.NoError(t, err, c.in)
		assert.Equal(t, []netip.Prefix{netip.MustParsePrefix(c.want)}, got, c.in)
	}
}
