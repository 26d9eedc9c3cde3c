//go:build unix

package main

import (
	"fmt"
	"io"
	"syscall"
	"time"
)

// waitShutdown is the Deployment's preStop hook, ingress-nginx's
// /wait-shutdown: it sends SIGTERM to the controller, PID 1 of the
// container, and returns when that has exited, so the hook lasts exactly
// as long as the drain and the kubelet's own SIGTERM finds nothing left.
// (The hook itself is ended with the container.)
func waitShutdown(stderr io.Writer) int {
	if err := syscall.Kill(1, syscall.SIGTERM); err != nil {
		fmt.Fprintf(stderr, "controller: wait-shutdown: signalling PID 1: %v\n", err)
		return 1
	}
	for syscall.Kill(1, 0) == nil {
		time.Sleep(500 * time.Millisecond)
	}
	return 0
}
