//go:build !unix

package main

import (
	"fmt"
	"io"
)

func waitShutdown(stderr io.Writer) int {
	fmt.Fprintln(stderr, "controller: wait-shutdown works in a Linux container only")
	return 2
}
