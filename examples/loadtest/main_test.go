package main

import (
	"bytes"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestShortRunWithChurn runs the whole measurement briefly, publishing a
// table every 5 ms: both proxies answer, and the churn report is clean.
func TestShortRunWithChurn(t *testing.T) {
	var out, errs bytes.Buffer
	code := run([]string{"-rounds", "2", "-round", "150ms", "-concurrency", "4", "-churn", "-every", "5ms"}, &out, &errs)
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", out.String(), errs.String())
	got := out.String()
	assert.Regexp(t, regexp.MustCompile(`(?m)^router\s+[1-9]\d*\s`), got)
	assert.Regexp(t, regexp.MustCompile(`(?m)^bare\s+[1-9]\d*\s`), got)
	assert.Regexp(t, regexp.MustCompile(`churn: [1-9]\d* tables published`), got)
	assert.Contains(t, got, "churn: failed requests 0 (router), in flight at end 0")
	assert.Contains(t, got, "churn: clean")
}

func TestBounded(t *testing.T) {
	tests := [][]string{
		{"-rounds", "20", "-round", "2s"}, // 80 s in all
		{"-concurrency", "0"},
		{"-every", "0s"},
		{"-no-such-flag"},
	}
	for _, args := range tests {
		var out, errs bytes.Buffer
		assert.Equal(t, 2, run(args, &out, &errs), "%v", args)
		assert.Empty(t, out.String())
		assert.NotEmpty(t, errs.String())
	}
}
