package main

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/router"
)

// TestOTLPCollectorDown: with nothing listening at the collector's
// address, ending spans never waits for it, the exports that fail are
// dropped, and a shutdown returns within its deadline.
func TestOTLPCollectorDown(t *testing.T) {
	l0, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	_, port, _ := net.SplitHostPort(l0.Addr().String())
	require.NoError(t, l0.Close())
	s := defaultOtelSettings()
	s.CollectorHost, s.CollectorPort = "127.0.0.1", port
	s.MaxExportBatchSize, s.MaxQueueSize, s.ScheduleDelay = 4, 16, time.Millisecond
	l := newLiveTracer(nil)
	l.set(s)
	start := time.Now()
	for range 200 {
		l.StartSpan(router.TraceContext{}, "/", time.Now()).End(&router.SpanEnd{Name: "/", Time: time.Now()})
	}
	require.Less(t, time.Since(start), 200*time.Millisecond, "ending spans waited for the collector")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	done := make(chan struct{})
	go func() {
		_ = l.shutdown(ctx)
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the shutdown outlived its deadline")
	}
}
