package main

import (
	"bytes"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/match"
	"ramjet.dev/ramjet/router"
)

// TestAccessLogPaths: access-log-path names where both access logs go,
// http-access-log-path and stream-access-log-path each one's, over it
// (nginx.tmpl's "or"); ingress-nginx's defaults, /var/log/nginx/access.log
// and /dev/stdout, are stdout; a file is appended to; a path ramjet cannot
// write warns and keeps the line where it was.
func TestAccessLogPaths(t *testing.T) {
	start := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	stream := streamRecord{proto: match.TCP, port: 9000, client: &net.TCPAddr{IP: net.IPv4(192, 0, 2, 1), Port: 4444},
		start: start, end: start.Add(time.Second), status: streamOK}
	const streamLine = "TCP\n"
	req := router.Record{Method: "GET", Host: "a.example.com", VirtualHost: "a.example.com", Path: "/x", Status: 200}
	const httpLine = "/x\n"
	dir := t.TempDir()
	all, web := filepath.Join(dir, "all.log"), filepath.Join(dir, "web.log")
	for _, tc := range []struct {
		name         string
		data         map[string]string
		stdout       string
		inAll, inWeb string
		warned       []string
	}{
		{"defaults", nil, httpLine + streamLine, "", "", nil},
		{"the default path", map[string]string{"access-log-path": "/var/log/nginx/access.log"}, httpLine + streamLine, "", "", nil},
		{"access-log-path", map[string]string{"access-log-path": all}, "", httpLine + streamLine, "", nil},
		{"http-access-log-path", map[string]string{"http-access-log-path": web}, streamLine, "", httpLine, nil},
		{"http-access-log-path over access-log-path", map[string]string{"access-log-path": all, "http-access-log-path": web}, "", streamLine, httpLine, nil},
		{"stream-access-log-path over access-log-path", map[string]string{"access-log-path": all, "stream-access-log-path": "/dev/stdout"}, streamLine, httpLine, "", nil},
		{"empty is unset", map[string]string{"access-log-path": all, "http-access-log-path": ""}, "", httpLine + streamLine, "", nil},
		{"relative", map[string]string{"http-access-log-path": "web.log"}, httpLine + streamLine, "", "", []string{"http-access-log-path"}},
		{"syslog", map[string]string{"access-log-path": "syslog:server=10.0.0.1"}, httpLine + streamLine, "", "", []string{"access-log-path"}},
		{"cannot open", map[string]string{"access-log-path": filepath.Join(dir, "none", "x.log")}, httpLine + streamLine, "", "", []string{"access-log-path"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, p := range []string{all, web} {
				require.NoError(t, os.WriteFile(p, nil, 0o644))
			}
			c := flagsWith(t)
			data := map[string]string{"log-format-upstream": "$request_uri", "log-format-stream": "$protocol"}
			for k, v := range tc.data {
				data[k] = v
			}
			var warned []string
			for _, w := range applyConfigMap(&c, cmData(data), c.flagsSet) {
				warned = append(warned, w.key)
			}
			assert.Equal(t, tc.warned, warned)
			var out bytes.Buffer
			c.accessLogOut = &out
			c.accessLog = &liveAccessLog{out: &out, format: c.accessLogFormat}
			t.Cleanup(c.accessLog.close)
			requestObserver(c, nil)(req)
			s := stream
			streamAccessLog(c)(&s)
			assert.Equal(t, tc.stdout, out.String(), "stdout")
			for p, want := range map[string]string{all: tc.inAll, web: tc.inWeb} {
				b, err := os.ReadFile(p)
				require.NoError(t, err)
				assert.Equal(t, want, string(b), p)
			}
		})
	}
}

// TestAccessLogReopen: on SIGUSR1 (cfg.reopenLogs) the access log files
// are opened anew, as nginx reopens its logs, so that a rotation that
// moved them away is followed; the lines before went to the moved file.
func TestAccessLogReopen(t *testing.T) {
	dir := t.TempDir()
	path, moved := filepath.Join(dir, "access.log"), filepath.Join(dir, "access.log.1")
	reopen := make(chan os.Signal, 1)
	t.Cleanup(func() { close(reopen) })
	c := flagsWith(t)
	c.reopenLogs = reopen
	var out bytes.Buffer
	c.accessLogOut = &out
	_, c = newConfigMapSettings(c, map[string]string{"access-log-path": path, "log-format-upstream": "$request_uri"}, true, slog.New(slog.NewTextHandler(io.Discard, nil)))
	t.Cleanup(c.accessLog.close)
	observe := requestObserver(c, nil)
	observe(router.Record{Path: "/before"})
	require.NoError(t, os.Rename(path, moved))
	observe(router.Record{Path: "/moved"})
	reopen <- os.Interrupt // whichever: run relays SIGUSR1 alone
	// Lines go to the moved file until the reopen is done.
	require.Eventually(t, func() bool {
		observe(router.Record{Path: "/after"})
		b, _ := os.ReadFile(path)
		return len(b) > 0
	}, 5*time.Second, 10*time.Millisecond)
	b, err := os.ReadFile(moved)
	require.NoError(t, err)
	assert.Regexp(t, `^/before\n/moved\n(/after\n)*$`, string(b))
	b, err = os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "/after\n", string(b))
	assert.Empty(t, out.String())
}
