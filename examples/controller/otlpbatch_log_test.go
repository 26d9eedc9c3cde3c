package main

import (
	"context"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/router"
)

// A collector that cannot be reached is named in the warning, so a
// mistyped otlp-collector-host is found from the log alone.
func TestOTLPExportFailureNamesCollector(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close()) // nothing listens there

	logs := &syncBuffer{}
	s := defaultOtelSettings()
	b, err := newOTLPBatcher(slog.New(slog.NewTextHandler(logs, nil)), addr, "nginx", s)
	require.NoError(t, err)
	b.timeout = time.Second
	l := newLiveTracer(nil)
	l.cur.Store(&otelProvider{sampler: s.sampler(), batcher: b})
	l.StartSpan(router.TraceContext{}, "/", time.Now()).End(&router.SpanEnd{Name: "/", Time: time.Now()})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = b.ForceFlush(ctx)
	require.Eventually(t, func() bool { return logs.count("spans not exported") > 0 }, 5*time.Second, 10*time.Millisecond)
	require.Contains(t, logs.String(), "collector="+addr)
	_ = b.Shutdown(ctx)
}
