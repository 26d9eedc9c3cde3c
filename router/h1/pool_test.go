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

// TestPoolIdleExpiry: a connection idle longer than idleFor is closed when
// next looked at, one idle less long is reused.
func TestPoolIdleExpiry(t *testing.T) {
	addr, conns := okBackend(t)
	p := NewPool(time.Second)
	defer p.CloseIdle()
	p.idleFor = 200 * time.Millisecond
	first := poolExchange(t, p, addr)
	if got := poolExchange(t, p, addr); got != first {
		t.Fatal("a connection idle for less than idleFor was not reused")
	}
	time.Sleep(300 * time.Millisecond)
	if got := poolExchange(t, p, addr); got == first || got.Reused() {
		t.Fatal("a connection idle for longer than idleFor was reused")
	}
	if n := conns.Load(); n != 2 {
		t.Errorf("%d backend connections, want 2", n)
	}
}

// TestWholeBody: a body that came with its head is taken in one piece and
// the connection goes back to the pool; one still on its way is left to
// Body.
func TestWholeBody(t *testing.T) {
	addr, conns := okBackend(t)
	p := NewPool(time.Second)
	defer p.CloseIdle()
	for range 2 {
		pc, err := p.Get(context.Background(), addr, false, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		bw := pc.Begin(Request{Ctx: context.Background(), Method: "GET", Header: http.Header{}, Read: time.Minute, MaxHead: 1 << 16})
		bw.WriteString("GET / HTTP/1.1\r\nHost: backend\r\n\r\n")
		if _, err := pc.Next(); err != nil {
			t.Fatal(err)
		}
		b, ok := pc.WholeBody()
		if !ok || string(b) != "ok\n" {
			t.Fatalf("WholeBody: %q, %v", b, ok)
		}
		pc.End(true)
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("%d connections, want 1 (reused after WholeBody)", n)
	}

	// A length not all buffered yet, and a chunked body.
	for _, head := range []string{"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"} {
		res, br, err := readResponseHead(t, head, "GET")
		if err != nil {
			t.Fatal(err)
		}
		_, _ = br.Peek(br.Buffered())
		pc := &Conn{br: br, head: *res}
		if b, ok := pc.WholeBody(); ok {
			t.Errorf("%q: WholeBody took %q", head, b)
		}
	}
}

// TestPoolKeepalive: SetKeepalive bounds the pool as nginx's upstream
// keepalive, keepalive_requests and keepalive_time do: no idle
// connection kept at 0 (each request its own connection), none reused
// past its requests or its age.
func TestPoolKeepalive(t *testing.T) {
	t.Run("no keep-alive", func(t *testing.T) {
		addr, conns := okBackend(t)
		p := NewPool(time.Second)
		defer p.CloseIdle()
		p.SetKeepalive(0, time.Minute, 0, 0)
		for range 3 {
			if poolExchange(t, p, addr).Reused() {
				t.Fatal("a connection was reused with keep-alive off")
			}
		}
		if n := conns.Load(); n != 3 {
			t.Errorf("%d backend connections, want 3", n)
		}
	})
	t.Run("requests", func(t *testing.T) {
		addr, conns := okBackend(t)
		p := NewPool(time.Second)
		defer p.CloseIdle()
		p.SetKeepalive(8, time.Minute, 2, 0)
		for range 4 {
			poolExchange(t, p, addr)
		}
		if n := conns.Load(); n != 2 {
			t.Errorf("%d backend connections for 4 requests at 2 a connection, want 2", n)
		}
	})
	t.Run("time", func(t *testing.T) {
		addr, conns := okBackend(t)
		p := NewPool(time.Second)
		defer p.CloseIdle()
		p.SetKeepalive(8, time.Minute, 0, 200*time.Millisecond)
		first := poolExchange(t, p, addr)
		if poolExchange(t, p, addr) != first {
			t.Fatal("a young connection was not reused")
		}
		time.Sleep(300 * time.Millisecond)
		// As nginx, the age is judged when a response ends: the request
		// after it is the connection's last.
		if poolExchange(t, p, addr) != first {
			t.Fatal("the connection was not reused for the request that ends past its time")
		}
		if got := poolExchange(t, p, addr); got == first || got.Reused() {
			t.Fatal("a connection older than keepalive_time was reused")
		}
		if n := conns.Load(); n != 2 {
			t.Errorf("%d backend connections, want 2", n)
		}
	})
}
