//go:build race

package main

// The race detector allocates, and sync.Pool drops what it holds under it.
const raceEnabled = true
