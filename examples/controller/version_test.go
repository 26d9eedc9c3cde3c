package main

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
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

// A build without version control information (the Dockerfile's: the
// build context has no .git) prints the revision given at build time
// instead of "unknown", and the Dockerfile passes its REVISION argument
// there.
func TestVersionRevision(t *testing.T) {
	revision = "0123456789abcdef"
	defer func() { revision = "" }()
	var stdout bytes.Buffer
	printVersion(&stdout)
	if info, ok := debug.ReadBuildInfo(); ok && slices.ContainsFunc(info.Settings, func(s debug.BuildSetting) bool { return s.Key == "vcs.revision" }) {
		t.Skip("this test binary has version control information, which wins")
	}
	require.Contains(t, stdout.String(), "  Build:      0123456789abcdef\n")

	dockerfile, err := os.ReadFile(filepath.Join("deploy", "Dockerfile"))
	require.NoError(t, err)
	require.Contains(t, string(dockerfile), "ARG REVISION")
	require.Contains(t, string(dockerfile), "-X main.revision=${REVISION}")
}
