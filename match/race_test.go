//go:build race

package match

// The race detector makes sync.Pool drop items at random, so pooled
// buffers (Go's regexp machines, the rune buffers here) allocate under it.
const raceEnabled = true
