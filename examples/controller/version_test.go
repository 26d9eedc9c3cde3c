package main

import (
	"bytes"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

// --version prints the release and exits 0, as ingress-nginx's does,
// wherever it is among the flags.
func TestVersion(t *testing.T) {
	for _, args := range [][]string{
		{"--version"},
		{"-version"},
		{"--ingress-class=nginx", "--version=true"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(args, func(string) string { return "" }, &stdout, &stderr)
		require.Equal(t, 0, code, "%q: %s", args, stderr.String())
		require.Contains(t, stdout.String(), "ramjet Ingress controller\n  Release:    ", "%q", args)
		require.Contains(t, stdout.String(), "  Go:         "+runtime.Version()+"\n", "%q", args)
	}
	require.False(t, versionRequested([]string{"--version=false"}))
	require.False(t, versionRequested([]string{"--", "--version"}))

	version = "v9.9.9"
	defer func() { version = "" }()
	var stdout bytes.Buffer
	printVersion(&stdout)
	require.Contains(t, stdout.String(), "  Release:    v9.9.9\n")
}
