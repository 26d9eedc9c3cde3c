package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The README's embedding snippet, as a reader would paste it into a main
// function, builds and serves the manifests' loopback backend: 200, not
// the 503 of an endpoint dropped for being on loopback. Only its two
// places are swapped, the folder and the listen address.
func TestReadmeEmbeddingSnippet(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program")
	}
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	require.NoError(t, err)
	_, rest, ok := strings.Cut(string(readme), "## Embedding\n\n```go\n")
	require.True(t, ok, "the README's Embedding section starts with a Go block")
	snippet, _, ok := strings.Cut(rest, "```")
	require.True(t, ok)

	dir := t.TempDir()
	ip, port := backend(t, "v1")
	manifests := filepath.Join(dir, "manifests")
	require.NoError(t, os.Mkdir(manifests, 0o755))
	writeManifests(t, manifests, ip, port)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())

	require.Contains(t, snippet, `manifest.Load("manifests/")`)
	require.Contains(t, snippet, `net.Listen("tcp", ":8080")`)
	snippet = strings.Replace(snippet, `"manifests/"`, `"`+manifests+`"`, 1)
	snippet = strings.Replace(snippet, `":8080"`, `"`+addr+`"`, 1)
	program := "package main\n\nimport (\n\t\"log\"\n\t\"net\"\n\t\"time\"\n\n" +
		"\t\"ramjet.dev/ramjet/compile\"\n\t\"ramjet.dev/ramjet/compile/manifest\"\n\t\"ramjet.dev/ramjet/router\"\n\t\"ramjet.dev/ramjet/router/h1\"\n)\n\n" +
		"func main() {\n" + snippet + "}\n"
	src := filepath.Join(dir, "main.go")
	require.NoError(t, os.WriteFile(src, []byte(program), 0o644))
	bin := filepath.Join(dir, "snippet")
	out, err := exec.Command("go", "build", "-o", bin, src).CombinedOutput()
	require.NoError(t, err, "the snippet builds:\n%s\n%s", out, program)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin)
	cmd.Stderr = io.Discard
	require.NoError(t, cmd.Start())
	defer func() {
		cancel()
		_ = cmd.Wait()
	}()

	client := &http.Client{Timeout: 2 * time.Second}
	defer client.CloseIdleConnections()
	deadline := time.Now().Add(20 * time.Second)
	for {
		req, err := http.NewRequest(http.MethodGet, "http://"+addr+"/api/x", nil)
		require.NoError(t, err)
		req.Host = "shop.example.com"
		resp, err := client.Do(req)
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
			require.Equal(t, "v1 /api/x", string(body))
			return
		}
		require.True(t, time.Now().Before(deadline), "the snippet's server never answered: %v", err)
		time.Sleep(100 * time.Millisecond)
	}
}
