//go:build race

package h1

// rawsock reads with read(2) in this build (see readCalls).
const raceEnabled = true
