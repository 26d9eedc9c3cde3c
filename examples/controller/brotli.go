package main

import (
	"io"

	"github.com/andybalholm/brotli"

	"ramjet.dev/ramjet/router"
)

// newBrotliEncoder is the encoder of enable-brotli (router.Brotli): the
// library's dependency list is fixed, so the controller brings brotli.
func newBrotliEncoder(level int) router.Encoder {
	return brotli.NewWriterLevel(io.Discard, level)
}
