//go:build unix

package main

import (
	"os"
	"os/signal"
	"syscall"
)

// notifyReopen relays SIGUSR1, on which nginx reopens its log files
// (logrotate's postrotate sends it), to ch; without it, the signal's
// default action would end the process.
func notifyReopen(ch chan<- os.Signal) bool {
	signal.Notify(ch, syscall.SIGUSR1)
	return true
}
