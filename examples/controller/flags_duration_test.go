package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A duration flag given something else says what it wants, as the other
// flags do, rather than flag's bare "parse error"; -h still shows its
// default.
func TestDurationFlagSaysWhatItWants(t *testing.T) {
	for _, name := range []string{"poll-interval", "resync-period", "sync-period"} {
		args := []string{"-" + name, "abc"}
		if name == "poll-interval" {
			args = append([]string{"-manifests", "m"}, args...)
		}
		_, err := parseFlags(args, &bytes.Buffer{}, func(string) string { return "" })
		require.ErrorContains(t, err, `invalid value "abc" for flag -`+name+`: want a duration such as 500ms, 30s or 1m`, name)
	}
	c, err := parseFlags([]string{"-manifests", "m", "-poll-interval", "2s"}, &bytes.Buffer{}, func(string) string { return "" })
	require.NoError(t, err)
	require.Equal(t, 2*time.Second, c.pollInterval)
	c, err = parseFlags([]string{"-sync-period", "10m"}, &bytes.Buffer{}, func(string) string { return "" })
	require.NoError(t, err)
	require.Equal(t, 10*time.Minute, c.resync)

	var help bytes.Buffer
	_, _ = parseFlags([]string{"-h"}, &help, func(string) string { return "" })
	i := strings.Index(help.String(), "-poll-interval")
	require.Positive(t, i, help.String())
	require.Contains(t, help.String()[i:], "(default 500ms)")
}
