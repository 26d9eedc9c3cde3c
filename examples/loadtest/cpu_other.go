//go:build !unix

package main

import "time"

// processCPU is not measured on this system; CPU per request reads 0.
func processCPU() time.Duration { return 0 }
