package match

import (
	"testing"
	"unsafe"
)

// TestPathSlotSize holds a slot at 40 bytes on 64-bit platforms: the path
// table of a large table is its largest allocation.
func TestPathSlotSize(t *testing.T) {
	if unsafe.Sizeof(uintptr(0)) != 8 {
		t.Skip("32-bit platform")
	}
	if got := unsafe.Sizeof(pathSlot{}); got != 40 {
		t.Fatalf("pathSlot is %d bytes, want 40", got)
	}
}

// TestRouteSize holds a Route at 224 bytes, a size class of its own: a
// large table has two for every Ingress.
func TestRouteSize(t *testing.T) {
	if unsafe.Sizeof(uintptr(0)) != 8 {
		t.Skip("32-bit platform")
	}
	if got := unsafe.Sizeof(Route{}); got != 224 {
		t.Fatalf("Route is %d bytes, want 224", got)
	}
}

// TestHostIndexSize holds a host's lookup record at 64 bytes: one cache
// line, which every lookup reads.
func TestHostIndexSize(t *testing.T) {
	if unsafe.Sizeof(uintptr(0)) != 8 {
		t.Skip("32-bit platform")
	}
	if got := unsafe.Sizeof(hostIndex{}); got != 64 {
		t.Fatalf("hostIndex is %d bytes, want 64", got)
	}
}
