//go:build race

package router

// The race detector slows the load test tenfold, past what it measures.
const raceEnabled = true
