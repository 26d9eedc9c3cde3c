package compile

import "unsafe"

// slab hands out pointers to zeroed values carved from chunks, so the
// thousands of small objects one table holds cost a few allocations instead
// of one each. Everything carved from a slab lives as long as the table that
// holds any of it, which is how long it is needed anyway; so a slab holds
// only values the table keeps (routes, backends, hosts) or build-only values
// that point at nothing the table must not pin.
type slab[T any] struct {
	chunk []T
}

func (s *slab[T]) new() *T {
	if len(s.chunk) == cap(s.chunk) {
		s.chunk = make([]T, 0, min(max(2*cap(s.chunk), 16), 1024))
	}
	s.chunk = s.chunk[:len(s.chunk)+1]
	return &s.chunk[len(s.chunk)-1]
}

// strArena builds strings the table keeps (backend IDs, endpoint lists)
// into shared chunks, one allocation for many. A chunk's bytes are never
// written again once a string covers them.
type strArena struct {
	chunk []byte
}

// concat returns the concatenation of parts.
func (a *strArena) concat(parts ...string) string {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	if n == 0 {
		return ""
	}
	a.reserve(n)
	start := len(a.chunk)
	for _, p := range parts {
		a.chunk = append(a.chunk, p...)
	}
	return unsafe.String(&a.chunk[start], n)
}

// bytes returns b as a string.
func (a *strArena) bytes(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	a.reserve(len(b))
	start := len(a.chunk)
	a.chunk = append(a.chunk, b...)
	return unsafe.String(&a.chunk[start], len(b))
}

func (a *strArena) reserve(n int) {
	if cap(a.chunk)-len(a.chunk) < n {
		a.chunk = make([]byte, 0, max(n, 16<<10))
	}
}

// window hands out slices of T cut from shared chunks, each with room for
// n; appending beyond that copies it out as any append does.
type window[T any] struct {
	chunk []T
}

func (w *window[T]) take(n int) []T {
	if cap(w.chunk)-len(w.chunk) < n {
		w.chunk = make([]T, 0, max(n, 1024))
	}
	s := w.chunk[len(w.chunk) : len(w.chunk)+n : len(w.chunk)+n]
	w.chunk = w.chunk[:len(w.chunk)+n]
	return s
}
