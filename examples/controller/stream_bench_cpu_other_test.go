//go:build !unix

package main

import "time"

// processCPU is not measured here.
func processCPU() time.Duration { return 0 }
