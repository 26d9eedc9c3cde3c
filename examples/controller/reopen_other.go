//go:build !unix

package main

import "os"

// notifyReopen relays nothing: there is no SIGUSR1.
func notifyReopen(chan<- os.Signal) bool { return false }
