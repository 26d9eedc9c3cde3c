package h1

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"
)

// okBackend answers every request head on a connection with a 3-byte
// response whose body comes with its head, counting connections.
func okBackend(t *testing.T) (string, *atomic.Int32) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	conns := new(atomic.Int32)
	accepted := make(chan net.Conn)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				close(accepted)
				return
			}
			accepted <- c
		}
	}()
	go func() {
		for c := range accepted {
			conns.Add(1)
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				for {
					line, err := br.ReadSlice('\n')
					if err != nil {
						return
					}
					if len(line) > 2 {
						continue
					}
					if _, err := io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nok\n"); err != nil {
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().String(), conns
}

// poolExchange sends one GET over the pool and reads its response whole.
func poolExchange(t *testing.T, p *Pool, addr string) *Conn {
	t.Helper()
	pc, err := p.Get(context.Background(), addr, false, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	bw := pc.Begin(Request{Ctx: context.Background(), Method: "GET", Header: http.Header{}, Read: time.Minute, MaxHead: 1 << 16})
	bw.WriteString("GET / HTTP/1.1\r\nHost: backend\r\n\r\n")
	res, err := pc.Next()
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(pc.Body())
	if err != nil || res.Status != 200 || string(body) != "ok\n" {
		t.Fatalf("response %d %q, %v", res.Status, body, err)
	}
	pc.End(true)
	return pc
}

// TestPooledReadDeadlineKept: a connection's exchanges without a body
// keep the read deadline that times the client-cancellation hook while it
// still falls within HookAfter after the one wanted (one deadline call
// per HookAfter on a busy connection, not two per request), and a
// connection whose kept deadline passed while it waited in the pool is
// still looked at and reused, not closed as if the backend had written
// to it.
func TestPooledReadDeadlineKept(t *testing.T) {
	addr, conns := okBackend(t)
	p := NewPool(time.Second)
	defer p.CloseIdle()
	pc := poolExchange(t, p, addr)
	first := pc.rdl
	if first.IsZero() || time.Until(first) <= 0 || time.Until(first) > 2*HookAfter {
		t.Fatalf("read deadline after the first exchange: %v from now, want within (0, %v]", time.Until(first), 2*HookAfter)
	}
	if pc2 := poolExchange(t, p, addr); pc2 != pc || !pc2.Reused() {
		t.Fatal("the second exchange did not reuse the connection")
	}
	if !pc.rdl.Equal(first) {
		t.Errorf("the second exchange moved the read deadline: %v, then %v", first, pc.rdl)
	}
	time.Sleep(2*HookAfter + 20*time.Millisecond) // the kept deadline passes
	if pc3 := poolExchange(t, p, addr); pc3 != pc || !pc3.Reused() {
		t.Fatal("a pooled connection whose read deadline passed was not reused")
	}
	if !pc.rdl.After(first) {
		t.Errorf("the read deadline was not moved once it passed: %v", pc.rdl)
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("%d backend connections, want 1", n)
	}
}
