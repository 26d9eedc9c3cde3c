package h1

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"
)

// TestPoolPutAfterCloseIdle: a connection in use while CloseIdle empties
// the pool goes back to the pool's new list for its address, where the
// next request finds it, not to the list CloseIdle dropped; and takes
// alternate between two addresses without mixing their connections.
func TestPoolPutAfterCloseIdle(t *testing.T) {
	addr, conns := okBackend(t)
	other, _ := okBackend(t)
	p := NewPool(time.Second)
	defer p.CloseIdle()
	pc, err := p.Get(context.Background(), addr, false, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	bw := pc.Begin(Request{Ctx: context.Background(), Method: "GET", Header: http.Header{}, Read: time.Minute, MaxHead: 1 << 16})
	bw.WriteString("GET / HTTP/1.1\r\nHost: backend\r\n\r\n")
	if _, err := pc.Next(); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadAll(pc.Body()); err != nil {
		t.Fatal(err)
	}
	p.CloseIdle()
	pc.End(true)
	for range 3 {
		if got := poolExchange(t, p, addr); got != pc || !got.Reused() {
			t.Fatal("the connection put back after CloseIdle was not reused")
		}
		if got := poolExchange(t, p, other); got == pc || got.addr != other {
			t.Fatalf("a take for %s got a connection to %s", other, got.addr)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("%d connections to %s, want 1", n, addr)
	}
}
