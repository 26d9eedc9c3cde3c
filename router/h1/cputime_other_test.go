//go:build !unix

package h1

import "time"

// cpuTime is not measured here: no cpu-ns/op.
func cpuTime() time.Duration { return 0 }
