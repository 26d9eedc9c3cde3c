package main

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/compile"
	"ramjet.dev/ramjet/compile/manifest"
	"ramjet.dev/ramjet/router"
)

// A port that cannot be bound at start is named in the error; the
// others serve, and later tables do not take it for a new port.
func TestStreamBindFailureKeepsOthers(t *testing.T) {
	b := startTCPBackend(t, "b", false)
	busy, free := streamPort(t, "tcp"), streamPort(t, "tcp")
	hold, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(busy))
	require.NoError(t, err)
	defer hold.Close()

	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "app.yaml"), streamManifests(map[int]string{busy: "default/echo:9000", free: "default/echo:9000"}, nil, []string{b.port()}, "", ""))
	snap, _, err := manifest.Load(dir)
	require.NoError(t, err)
	cfg := config{httpAddr: "127.0.0.1:0"}
	cfg.options.TCPServices = "ingress-nginx/tcp-services"
	opts := compileOptions(cfg, snap.Services)
	opts.AllowLoopbackEndpoints = true
	rt := router.New(router.Options{Logger: slog.New(slog.DiscardHandler)})
	rt.Publish(compile.Compile(*snap, opts).Table)

	var logs bytes.Buffer
	s := newStreams(cfg, rt, slog.New(slog.NewTextHandler(&logs, nil)), nil)
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = s.Shutdown(ctx)
	}()
	err = s.update(rt.Table())
	require.Error(t, err)
	assert.Contains(t, err.Error(), fmt.Sprintf("tcp service port %d", busy))
	assert.NotContains(t, err.Error(), fmt.Sprintf("port %d:", free))

	addr := s.Addrs()["tcp/"+strconv.Itoa(free)]
	require.NotEmpty(t, addr, "the other port is bound")
	c, _, hello := dialLine(t, addr)
	c.Close()
	assert.Equal(t, "hello from b \n", hello)

	require.NoError(t, s.update(rt.Table()))
	assert.NotContains(t, logs.String(), "new port", "the port that failed is not a new one")
}
