package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A tcp: or udp: entry's value is a "namespace/service:port" string: a
// number there (the target port alone) is refused by the schema, naming
// the key, rather than rendered into a ConfigMap the API server refuses
// without saying which entry is wrong.
func TestChartL4ValueNotAString(t *testing.T) {
	for _, key := range []string{"tcp", "udp"} {
		values := chartValues(t, nil)
		mergeValues(values, map[string]any{key: map[string]any{"6379": 6379}})
		err := validateValues(t, values)
		require.ErrorContains(t, err, "values."+key+".6379", key)
		require.ErrorContains(t, err, "string", key)

		values = chartValues(t, nil)
		mergeValues(values, map[string]any{key: map[string]any{"6379": "data/redis:6379"}})
		require.NoError(t, validateValues(t, values), key)
	}
}
