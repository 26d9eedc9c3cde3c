package main

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The CPU time of a proxy is its /proc/PID/stat utime and stime, counted
// after the command name, which may hold spaces and parentheses.
func TestStatCPU(t *testing.T) {
	line := "4242 (a) b (c)) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 75 0 0 20 0 7 0 123 0 0\n"
	require.Equal(t, 3250*time.Millisecond, statCPU(line))
	require.Zero(t, statCPU("4242 (x) S 1 2"))
	require.Zero(t, statCPU("no parenthesis"))
	require.Zero(t, procCPU(0))
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	for end := time.Now().Add(50 * time.Millisecond); time.Now().Before(end); {
	}
	require.Positive(t, procCPU(os.Getpid()))
}

func TestParsePids(t *testing.T) {
	pids, err := parsePids("haproxy=12,controller=345")
	require.NoError(t, err)
	require.Equal(t, map[string]int{"haproxy": 12, "controller": 345}, pids)
	pids, err = parsePids("")
	require.NoError(t, err)
	require.Empty(t, pids)
	for _, bad := range []string{"haproxy", "=1", "x=", "x=0", "x=-3", "x=y"} {
		_, err := parsePids(bad)
		require.Error(t, err, bad)
	}
}
