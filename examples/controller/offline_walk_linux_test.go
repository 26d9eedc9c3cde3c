package main

import (
	"context"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// deepFolder makes a folder below dir that cannot be listed, even by
// root (its path is longer than the kernel takes), as a folder of
// permission 000 is for anyone else; it returns that path.
func deepFolder(t *testing.T, dir string) string {
	t.Helper()
	fd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY, 0)
	require.NoError(t, err)
	path, name := dir, strings.Repeat("d", 200)
	for len(path) <= 4096 {
		require.NoError(t, syscall.Mkdirat(fd, name, 0o755))
		next, err := syscall.Openat(fd, name, syscall.O_RDONLY|syscall.O_DIRECTORY, 0)
		require.NoError(t, err)
		syscall.Close(fd)
		fd, path = next, filepath.Join(path, name)
	}
	syscall.Close(fd)
	t.Cleanup(func() { _ = os.RemoveAll(filepath.Join(dir, name)) })
	return path
}

// TestOfflineServesBesideAnUnreadableFolder: a sub-folder that cannot be
// listed and a named pipe called .yaml are each an error naming it; the
// controller starts and serves the rest, and reloads it.
func TestOfflineServesBesideAnUnreadableFolder(t *testing.T) {
	portA, portB := namedBackend(t, "A"), namedBackend(t, "B")
	dir := t.TempDir()
	app := filepath.Join(dir, "app.yaml")
	writeFile(t, app, appManifests(portA))
	deep := deepFolder(t, dir)
	pipe := filepath.Join(dir, "pipe.yaml")
	require.NoError(t, syscall.Mkfifo(pipe, 0o644))

	logs := &syncBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	inst, err := start(ctx, config{
		manifests: dir, httpAddr: "127.0.0.1:0", debugAddr: "127.0.0.1:0", pollInterval: time.Hour,
	}, slog.New(slog.NewTextHandler(logs, nil)))
	require.NoError(t, err, "an unreadable sub-folder does not stop the start")
	defer func() { cancel(); _ = inst.Wait() }()
	client := &http.Client{}
	defer client.CloseIdleConnections()
	status, body := get(t, client, "http://"+inst.HTTPAddr+"/x", "app.test")
	require.Equal(t, http.StatusOK, status, body)
	require.Equal(t, "A /x", body)
	_, body = get(t, client, "http://"+inst.DebugAddr+"/debug/warnings", "")
	require.Contains(t, body, deep+": file name too long; no manifest below this folder is read")
	require.Contains(t, body, pipe+": a named pipe, not a regular file: not read")

	writeFile(t, app, appManifests(portB))
	inst.offline.poll()
	inst.offline.poll()
	status, body = get(t, client, "http://"+inst.HTTPAddr+"/x", "app.test")
	require.Equal(t, http.StatusOK, status, body)
	require.Equal(t, "B /x", body, "the folder is still watched")
}
