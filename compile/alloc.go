package compile

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
