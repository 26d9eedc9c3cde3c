package h1

import (
	"bufio"
	"strings"
	"testing"
)

// The loop looks for the end of every keep-alive request's head before it
// reads it (headWhole): the search itself must not allocate (issue 41).
// It did only as the controller is built, with its profile: run with
// -pgo=../../examples/controller/default.pgo to see that build.
func TestHeadWholeAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	const head = "GET / HTTP/1.1\r\nHost: 127.0.0.1:18081\r\n\r\n"
	c := &conn{br: bufio.NewReader(strings.NewReader(head))}
	if _, err := c.br.Peek(len(head)); err != nil {
		t.Fatal(err)
	}
	if !c.headWhole() || c.headEnd != len(head)-4 {
		t.Fatalf("headWhole: headEnd %d, want %d", c.headEnd, len(head)-4)
	}
	if n := testing.AllocsPerRun(100, func() { c.headWhole() }); n != 0 {
		t.Errorf("%v allocations per search, want 0", n)
	}
}
