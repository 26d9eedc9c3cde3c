package compile

import (
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestMatchCNAnchored: which auth-tls-match-cn values match only whole
// subject DNs, and the spelling the warning offers for the others, which
// must itself be anchored, begin with CN= and keep the value's matches.
func TestMatchCNAnchored(t *testing.T) {
	for _, tc := range []struct {
		value    string
		anchored bool
		offer    string
	}{
		{"CN=alice", false, "CN=^|^CN=alice$"},
		{"CN=alice$", false, "CN=^|^CN=alice$"},
		{`CN=alice\$`, false, `CN=^|^CN=alice\$$`},
		{"CN=(alice|bob)", false, "CN=^|^CN=(alice|bob)$"},
		{"CN=alice|CN=bob", false, "CN=^|^(?:CN=alice|CN=bob)$"},
		{"CN=[|]x", false, "CN=^|^CN=[|]x$"},
		{"CN=^|^CN=alice", false, "CN=^|^CN=alice$"},
		{"CN=^|^CN=alice$", true, ""},
		{"CN=^|^CN=alice$|^CN=bob,O=shop$", true, ""},
		{"CN=^|^CN=(alice|bob)$", true, ""},
		{"CN=^|^CN=alice$|CN=bob", false, "CN=^|^(?:CN=alice$|CN=bob)$"},
		{"CN=^|(x|^)CN=alice$", false, "CN=^|^(?:CN=^|(x|^)CN=alice)$"},
	} {
		assert.Equal(t, tc.anchored, matchCNAnchored(tc.value), tc.value)
		if tc.anchored {
			continue
		}
		offer := anchoredMatchCN(tc.value)
		assert.Equal(t, tc.offer, offer, tc.value)
		assert.True(t, matchCNAnchored(offer), "the offer %q is anchored", offer)
		assert.Regexp(t, "^CN=", offer)
		re := regexp.MustCompile(offer)
		assert.False(t, re.MatchString("CN=alice.evil"), offer)
	}
	re := regexp.MustCompile(anchoredMatchCN("CN=alice"))
	assert.True(t, re.MatchString("CN=alice"))
	assert.False(t, re.MatchString("CN=alice,O=shop"), "every RDN is spelled out")
}
