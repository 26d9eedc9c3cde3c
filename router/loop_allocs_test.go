package router

import (
	"bytes"
	"testing"
)

// TestLoopAllocs holds BenchmarkLoop's path, router/h1's server in front
// of the router and its pool, at no allocation per keep-alive request
// when the client repeats its head and the backend its answer, as wrk and
// the load harness's backend do (issue 41): every allocation there is GC
// work that stalls all the connections of a one-CPU controller, and lands
// in its p99. The count is over the whole process, client and backend
// included, which allocate nothing per exchange either.
func TestLoopAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	exchange, buf := loopConn(t)
	exchange()
	if !bytes.HasPrefix(buf, []byte("HTTP/1.1 200 OK\r\n")) || !bytes.HasSuffix(buf, []byte("\r\n\r\nok\n")) {
		t.Fatalf("response %q", buf)
	}
	if n := testing.AllocsPerRun(1000, exchange); n != 0 {
		t.Errorf("%v allocations per keep-alive request, want 0", n)
	}
}
