package routertest

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestParseSize(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"0", 0, true}, {"100", 100, true}, {"8k", 8 << 10, true}, {"1m", 1 << 20, true},
		{"1M", 1 << 20, true}, {"2g", 2 << 30, true}, {"", 0, false}, {"m", 0, false},
		{"-1", 0, false}, {"1.5m", 0, false}, {"1t", 0, false},
	} {
		got, err := parseSize(tt.in)
		assert.Equal(t, tt.ok, err == nil, "%q: %v", tt.in, err)
		if tt.ok {
			assert.Equal(t, tt.want, got, tt.in)
		}
	}
}
