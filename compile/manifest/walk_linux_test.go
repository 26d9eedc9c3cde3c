package manifest

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// unreadableFolder makes a folder below dir that cannot be listed, even
// by root: its path is longer than the kernel takes (ENAMETOOLONG), as a
// folder of permission 000 is for anyone else. It returns that path.
func unreadableFolder(t *testing.T, dir string) string {
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

// TestWalkNamesWhatItCannotRead: a folder below root that cannot be
// listed, and a manifest name that is no regular file (a named pipe,
// which reading would wait on forever), are each an error naming the
// path, and the rest of the folder is listed and read. Files, all or
// nothing, fails for them.
func TestWalkNamesWhatItCannotRead(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.yaml"), []byte("apiVersion: v1\nkind: Service\nmetadata: {name: kept}\n"), 0o644))
	deep := unreadableFolder(t, dir)
	fifo := filepath.Join(dir, "pipe.yaml")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))

	files, problems, err := Walk(dir)
	require.NoError(t, err)
	require.Equal(t, []string{filepath.Join(dir, "a.yaml")}, files)
	var got []string
	for _, p := range problems {
		got = append(got, p.Error())
	}
	require.Len(t, got, 2)
	require.Contains(t, got[0], deep)
	require.Contains(t, got[0], "file name too long; no manifest below this folder is read")
	require.Equal(t, "manifest: "+fifo+": a named pipe, not a regular file: not read", got[1])

	_, err = Files(dir)
	require.Error(t, err)

	r := NewReader()
	err = r.Load(dir)
	require.Len(t, loadErrors(err), 2)
	snap, _ := r.Snapshot()
	require.Equal(t, []string{"Service default/kept"}, loadedObjects(snap))
}
