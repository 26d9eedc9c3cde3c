package router

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// GCHeadroom keeps the garbage collector's heap goal at least headroom
// bytes above the live heap, for a server: the router makes little
// garbage per request (a few allocations), and with a live heap of a few
// MiB the runtime's default (GOGC=100: collect when the heap doubled)
// collects every few thousand requests, several percent of its CPU. A
// larger live heap (a big table) is collected as GOGC=100 collects it.
// The collector's percentage is moved after each collection, as the live
// heap grows or shrinks; a memory limit (GOMEMLIMIT) still bounds the
// heap. Nothing is done when GOGC is set in the environment or headroom is
// 0. stop restores the percentage it found.
func GCHeadroom(headroom uint64) (stop func()) {
	if headroom == 0 || os.Getenv("GOGC") != "" {
		return func() {}
	}
	gogc := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(gogc)
	if v := gogc[0].Value; v.Kind() != metrics.KindUint64 || v.Uint64() == 0 || v.Uint64() > 1<<31 {
		return func() {} // collection is off, or the runtime does not say
	}
	t := &gcTuner{headroom: headroom, base: int(gogc[0].Value.Uint64())}
	t.sample = []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	t.adjust()
	t.arm()
	return t.stop
}

// maxGCPercent bounds the percentage GCHeadroom sets, for a live heap
// that reads as almost nothing (just after start).
const maxGCPercent = 10000

type gcTuner struct {
	headroom uint64
	base     int // the percentage found, and the least set
	sample   []metrics.Sample

	mu      sync.Mutex
	set     int
	stopped bool
}

// arm runs adjust once the next collection ended: a finalizer runs once
// its object is found unreachable, and arms the next.
func (t *gcTuner) arm() {
	runtime.SetFinalizer(new(byte), func(*byte) {
		if t.adjust() {
			t.arm()
		}
	})
}

// adjust sets the percentage for the live heap; false once stopped.
func (t *gcTuner) adjust() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stopped {
		return false
	}
	metrics.Read(t.sample)
	live := uint64(1)
	if s := t.sample[0]; s.Value.Kind() == metrics.KindUint64 && s.Value.Uint64() > 0 {
		live = s.Value.Uint64()
	}
	p := t.base
	if want := t.headroom / live * 100; want > uint64(p) {
		p = int(min(want, maxGCPercent))
	}
	// Moved only when it changes by more than a tenth.
	if d := p - t.set; d > t.set/10 || -d > t.set/10 {
		t.set = p
		debug.SetGCPercent(p)
	}
	return true
}

func (t *gcTuner) stop() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.stopped {
		t.stopped = true
		debug.SetGCPercent(t.base)
	}
}
