package router

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

// With a small live heap the collector's percentage is raised so that the
// goal is the headroom above it, and stop puts back the one found.
func TestGCHeadroom(t *testing.T) {
	t.Setenv("GOGC", "") // the test's environment may set it
	before := debug.SetGCPercent(-1)
	debug.SetGCPercent(before)
	t.Cleanup(func() { debug.SetGCPercent(before) })
	stop := GCHeadroom(1 << 30)
	runtime.GC()
	deadline := time.Now().Add(5 * time.Second)
	got := before
	for got <= before && time.Now().Before(deadline) {
		runtime.GC() // the finalizer runs after a collection
		time.Sleep(10 * time.Millisecond)
		got = debug.SetGCPercent(-1)
		debug.SetGCPercent(got)
	}
	if got <= before || got > maxGCPercent {
		t.Fatalf("GOGC %d with a 1 GiB headroom over a small heap, was %d", got, before)
	}
	stop()
	if p := debug.SetGCPercent(before); p != before {
		t.Fatalf("GOGC %d after stop, want %d", p, before)
	}
}

// GOGC in the environment is the operator's: left as it is.
func TestGCHeadroomLeavesGOGC(t *testing.T) {
	t.Setenv("GOGC", "100")
	before := debug.SetGCPercent(-1)
	debug.SetGCPercent(before)
	t.Cleanup(func() { debug.SetGCPercent(before) })
	stop := GCHeadroom(1 << 30)
	defer stop()
	runtime.GC()
	runtime.GC()
	time.Sleep(20 * time.Millisecond)
	if p := debug.SetGCPercent(before); p != before {
		t.Fatalf("GOGC %d with GOGC set in the environment, want %d", p, before)
	}
}
