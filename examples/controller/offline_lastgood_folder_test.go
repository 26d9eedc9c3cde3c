package main

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/compile/manifest"
)

// TestReadFolderKeepsFilesOfAnUnreadableFolder: files under a folder that
// can no longer be listed keep their last good versions served, as a file
// that turns bad does (a cluster keeps the objects it cannot replace); a
// folder that is gone takes its files with it.
func TestReadFolderKeepsFilesOfAnUnreadableFolder(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "team")
	require.NoError(t, os.Mkdir(sub, 0o755))
	app := filepath.Join(sub, "app.yaml")
	writeFile(t, app, appManifests("8080"))
	good := make(map[string][]byte)
	snap, _, unread, kept, err := readFolder(dir, good)
	require.NoError(t, err)
	require.Empty(t, unread)
	require.Empty(t, kept)
	require.NotEmpty(t, snap.Ingresses)

	defer func(w func(string) ([]string, []error, error)) { walkManifests = w }(walkManifests)
	walkManifests = func(string) ([]string, []error, error) {
		return nil, []error{&manifest.Error{Position: manifest.Position{File: sub, Item: -1},
			Err: errors.New("open " + sub + ": permission denied; no manifest below this folder is read")}}, nil
	}
	snap, _, unread, kept, err = readFolder(dir, good)
	require.NoError(t, err)
	require.Len(t, unread, 1)
	require.Equal(t, []string{app}, kept)
	require.NotEmpty(t, snap.Ingresses, "the unreadable folder's files are served as they last read")
	require.Contains(t, good, app)

	walkManifests = func(string) ([]string, []error, error) { return nil, nil, nil }
	snap, _, unread, kept, err = readFolder(dir, good)
	require.NoError(t, err)
	require.Empty(t, unread)
	require.Empty(t, kept)
	require.Empty(t, snap.Ingresses, "a folder gone takes its files")
	require.Empty(t, good)
}

// TestReadFolderKeepsAFileThatTurnsSpecial: a file replaced by one that
// is not a regular file (a named pipe) is a file that turned bad: its
// last good version is served, as for a typo.
func TestReadFolderKeepsAFileThatTurnsSpecial(t *testing.T) {
	dir := t.TempDir()
	app := filepath.Join(dir, "app.yaml")
	writeFile(t, app, appManifests("8080"))
	good := make(map[string][]byte)
	_, _, _, _, err := readFolder(dir, good)
	require.NoError(t, err)

	defer func(w func(string) ([]string, []error, error)) { walkManifests = w }(walkManifests)
	walkManifests = func(string) ([]string, []error, error) {
		return nil, []error{&manifest.Error{Position: manifest.Position{File: app, Item: -1},
			Err: errors.New(app + ": a named pipe, not a regular file: not read")}}, nil
	}
	snap, _, unread, kept, err := readFolder(dir, good)
	require.NoError(t, err)
	require.Len(t, unread, 1)
	require.Equal(t, []string{app}, kept)
	require.NotEmpty(t, snap.Ingresses)
}
