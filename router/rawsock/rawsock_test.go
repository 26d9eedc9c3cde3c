//go:build linux

package rawsock

import (
	"bytes"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"
)

// pair is a connected loopback TCP pair: a Conn on one end, the plain
// net.Conn on the other.
func pair(t *testing.T) (*Conn, net.Conn, net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			close(accepted)
			return
		}
		accepted <- c
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	peer := <-accepted
	if peer == nil {
		t.Fatal("accept failed")
	}
	t.Cleanup(func() { c.Close(); peer.Close() })
	s := New(c)
	if s == nil {
		t.Fatal("New is nil for a TCP connection")
	}
	return s, c, peer
}

func TestNewOnlyForTCP(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	if New(a) != nil {
		t.Error("New(net.Pipe) is not nil")
	}
	if New(tls.Client(a, &tls.Config{})) != nil {
		t.Error("New(*tls.Conn) is not nil")
	}
}

func TestReadWrite(t *testing.T) {
	s, _, peer := pair(t)
	if n, err := s.Write([]byte("hello")); n != 5 || err != nil {
		t.Fatalf("Write = %d, %v", n, err)
	}
	buf := make([]byte, 5)
	if _, err := io.ReadFull(peer, buf); err != nil || string(buf) != "hello" {
		t.Fatalf("peer read %q, %v", buf, err)
	}
	if _, err := peer.Write([]byte("world")); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(s, buf); err != nil || string(buf) != "world" {
		t.Fatalf("Read %q, %v", buf, err)
	}
	if n, err := s.Read(nil); n != 0 || err != nil {
		t.Fatalf("Read(nil) = %d, %v", n, err)
	}
	peer.Close()
	if n, err := s.Read(buf); n != 0 || err != io.EOF {
		t.Fatalf("Read after the peer closed = %d, %v; want io.EOF", n, err)
	}
}

// A large write waits for the peer to read, as net.Conn's does.
func TestWriteLarge(t *testing.T) {
	s, _, peer := pair(t)
	want := bytes.Repeat([]byte("0123456789abcdef"), 1<<18) // 4 MiB
	got := make(chan []byte)
	go func() {
		b, _ := io.ReadAll(io.LimitReader(peer, int64(len(want))))
		got <- b
	}()
	if n, err := s.Write(want); n != len(want) || err != nil {
		t.Fatalf("Write = %d, %v", n, err)
	}
	if b := <-got; !bytes.Equal(b, want) {
		t.Fatalf("the peer read %d bytes, not what was written", len(b))
	}
}

func TestErrors(t *testing.T) {
	s, c, peer := pair(t)
	// A reset by the peer is the errno, inside a *net.OpError.
	peer.(*net.TCPConn).SetLinger(0)
	peer.Close()
	time.Sleep(20 * time.Millisecond)
	_, err := s.Read(make([]byte, 1))
	var op *net.OpError
	if !errors.As(err, &op) || !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("Read after a reset: %v; want a *net.OpError with ECONNRESET", err)
	}
	c.Close()
	if _, err := s.Write([]byte("x")); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("Write on a closed connection: %v; want net.ErrClosed", err)
	}
}

func TestReadDeadline(t *testing.T) {
	s, c, _ := pair(t)
	c.SetReadDeadline(time.Now().Add(30 * time.Millisecond))
	start := time.Now()
	_, err := s.Read(make([]byte, 1))
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("Read past the deadline: %v", err)
	}
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("%v is not a timeout net.Error", err)
	}
	if d := time.Since(start); d < 25*time.Millisecond {
		t.Fatalf("Read returned after %v, before its deadline", d)
	}
}

// Send waits for the answer without reading it, and an answer that
// comes at once is never missed: a thousand exchanges with a peer that
// answers as fast as it can, each bounded by a deadline.
func TestSendAnswerAtOnce(t *testing.T) {
	s, c, peer := pair(t)
	go func() {
		buf := make([]byte, 64)
		for {
			n, err := peer.Read(buf)
			if err != nil {
				return
			}
			if _, err := peer.Write(buf[:n]); err != nil {
				return
			}
		}
	}()
	buf := make([]byte, 64)
	for i := range 1000 {
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		s.Hold()
		s.Write([]byte("ping"))
		if err := s.Send(); err != nil {
			t.Fatalf("exchange %d: Send: %v", i, err)
		}
		if n, err := io.ReadFull(s, buf[:4]); n != 4 || err != nil || string(buf[:4]) != "ping" {
			t.Fatalf("exchange %d: read %q, %v", i, buf[:n], err)
		}
	}
}

func TestSendWaits(t *testing.T) {
	s, c, peer := pair(t)
	go func() {
		buf := make([]byte, 4)
		io.ReadFull(peer, buf)
		time.Sleep(50 * time.Millisecond)
		peer.Write([]byte("late"))
	}()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	s.Hold()
	s.Write([]byte("ping"))
	start := time.Now()
	if err := s.Send(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 40*time.Millisecond {
		t.Fatalf("Send returned after %v, before the answer", d)
	}
	// Nothing was read: the answer is all there.
	if s.Pending() != true {
		t.Fatal("the answer is not pending after Send")
	}
	buf := make([]byte, 4)
	if _, err := io.ReadFull(s, buf); err != nil || string(buf) != "late" {
		t.Fatalf("read %q, %v", buf, err)
	}
	// Write is not held after Send.
	s.Write([]byte("more"))
	if _, err := io.ReadFull(peer, buf); err != nil || string(buf) != "more" {
		t.Fatalf("peer read %q, %v", buf, err)
	}
}

// A wait that ends at the read deadline is no error of Send's: the next
// Read reports it.
func TestSendDeadline(t *testing.T) {
	s, c, peer := pair(t)
	c.SetReadDeadline(time.Now().Add(30 * time.Millisecond))
	s.Hold()
	s.Write([]byte("ping"))
	if err := s.Send(); err != nil {
		t.Fatalf("Send: %v", err)
	}
	if _, err := s.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("Read after the wait timed out: %v", err)
	}
	buf := make([]byte, 4)
	if _, err := io.ReadFull(peer, buf); err != nil || string(buf) != "ping" {
		t.Fatalf("peer read %q, %v", buf, err)
	}
	// A deadline already past: the request is still written.
	s.Hold()
	s.Write([]byte("pong"))
	if err := s.Send(); err != nil {
		t.Fatalf("Send past the deadline: %v", err)
	}
	if _, err := io.ReadFull(peer, buf); err != nil || string(buf) != "pong" {
		t.Fatalf("peer read %q, %v", buf, err)
	}
}

// What the socket's buffer cannot take at once is written as Write would,
// in order, and Send then does not wait.
func TestSendLarge(t *testing.T) {
	s, c, peer := pair(t)
	want := bytes.Repeat([]byte("abcdefgh"), 1<<19) // 4 MiB
	got := make(chan []byte)
	go func() {
		time.Sleep(20 * time.Millisecond) // let the buffers fill
		b, _ := io.ReadAll(io.LimitReader(peer, int64(len(want))))
		got <- b
	}()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	s.Hold()
	s.Write(want[:1000])
	s.Write(want[1000:])
	if err := s.Send(); err != nil {
		t.Fatal(err)
	}
	if b := <-got; !bytes.Equal(b, want) {
		t.Fatalf("the peer read %d bytes, not what was held", len(b))
	}
}

func TestSendClosed(t *testing.T) {
	s, c, _ := pair(t)
	c.Close()
	s.Hold()
	s.Write([]byte("ping"))
	if err := s.Send(); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("Send on a closed connection: %v", err)
	}
}

// Closing the connection under a waiting Send ends the wait.
func TestSendClosedWhileWaiting(t *testing.T) {
	s, c, _ := pair(t)
	time.AfterFunc(30*time.Millisecond, func() { c.Close() })
	s.Hold()
	s.Write([]byte("ping"))
	done := make(chan error, 1)
	go func() { done <- s.Send() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Send: %v (the write was done before the close)", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Send still waits on a closed connection")
	}
	if _, err := s.Read(make([]byte, 1)); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("Read after the close: %v", err)
	}
}

func TestPending(t *testing.T) {
	s, _, peer := pair(t)
	if s.Pending() {
		t.Fatal("Pending on a quiet connection")
	}
	peer.Write([]byte("x"))
	time.Sleep(20 * time.Millisecond)
	if !s.Pending() {
		t.Fatal("a byte sent is not pending")
	}
	if !s.Pending() {
		t.Fatal("a byte sent is not pending when looked at twice")
	}
	b := make([]byte, 1)
	if _, err := s.Read(b); err != nil || b[0] != 'x' {
		t.Fatalf("Pending took the byte: read %q, %v", b, err)
	}
	if s.Pending() {
		t.Fatal("Pending after the byte was read")
	}
	peer.Close()
	time.Sleep(20 * time.Millisecond)
	if !s.Pending() {
		t.Fatal("the peer's close is not pending")
	}
}

// TestPendingPastDeadline: the look does not wait, so a read deadline
// that passed does not stop it; a pooled connection keeps the deadline its
// last exchange left (h1.Conn) and is still looked at, not taken for one
// the backend wrote to.
func TestPendingPastDeadline(t *testing.T) {
	s, c, peer := pair(t)
	if err := c.SetReadDeadline(time.Now().Add(-time.Second)); err != nil {
		t.Fatal(err)
	}
	if s.Pending() {
		t.Fatal("Pending on a quiet connection whose read deadline passed")
	}
	peer.Write([]byte("x"))
	time.Sleep(20 * time.Millisecond)
	if !s.Pending() {
		t.Fatal("a byte sent is not pending past the deadline")
	}
}

// One reader and one writer at a time, as a proxy's body copy and its
// response read use a connection.
func TestConcurrentReadWrite(t *testing.T) {
	s, _, peer := pair(t)
	go io.Copy(peer, peer) // echo
	const chunks, size = 1000, 1000
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		chunk := bytes.Repeat([]byte("z"), size)
		for range chunks {
			if _, err := s.Write(chunk); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	got, err := io.Copy(io.Discard, io.LimitReader(s, chunks*size))
	wg.Wait()
	if err != nil || got != chunks*size {
		t.Fatalf("read %d, %v", got, err)
	}
}

// SendAwait tells a wait that ended with something to read from one the
// deadline ended; Waited tells a Read that had to wait from one that found
// its bytes there.
func TestSendAwaitAndWaited(t *testing.T) {
	s, c, peer := pair(t)
	go func() {
		buf := make([]byte, 4)
		io.ReadFull(peer, buf)
		time.Sleep(20 * time.Millisecond)
		peer.Write([]byte("pong"))
	}()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	s.Hold()
	s.Write([]byte("ping"))
	if ready, err := s.SendAwait(); !ready || err != nil {
		t.Fatalf("SendAwait answered: %v, %v", ready, err)
	}
	buf := make([]byte, 4)
	if _, err := io.ReadFull(s, buf); err != nil || string(buf) != "pong" || s.Waited() {
		t.Fatalf("read %q, %v, waited %v after the wait", buf, err, s.Waited())
	}
	c.SetReadDeadline(time.Now().Add(30 * time.Millisecond))
	s.Hold()
	s.Write([]byte("ping"))
	if ready, err := s.SendAwait(); ready || err != nil {
		t.Fatalf("SendAwait that timed out answered: %v, %v", ready, err)
	}
	go func() {
		io.ReadFull(peer, make([]byte, 4))
		time.Sleep(20 * time.Millisecond)
		peer.Write([]byte("late"))
	}()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.ReadFull(s, buf); err != nil || string(buf) != "late" || !s.Waited() {
		t.Fatalf("read %q, %v, waited %v", buf, err, s.Waited())
	}
}

// Borrow keeps the last write's bytes where they are: Send writes what
// they hold when it runs, so the write was not copied.
func TestBorrowSendsFromPlace(t *testing.T) {
	s, c, peer := pair(t)
	go io.Copy(peer, peer) // echo
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := []byte("ping")
	s.Hold()
	s.Borrow()
	s.Write(buf)
	copy(buf, "PONG") // before Send: what Send writes
	if err := s.Send(); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 4)
	if _, err := io.ReadFull(s, got); err != nil || string(got) != "PONG" {
		t.Fatalf("echoed %q, %v: the borrowed bytes were copied, not sent from place", got, err)
	}
	// Without Borrow a held write is a copy.
	s.Hold()
	s.Write(buf)
	copy(buf, "zzzz")
	if err := s.Send(); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(s, got); err != nil || string(got) != "PONG" {
		t.Fatalf("echoed %q, %v: a held write changed after it was made", got, err)
	}
}

// A write after the borrowed one (the caller was wrong about the last):
// the borrowed bytes are copied then, as they were, and everything goes
// in order. Borrow after other held writes copies as Write does.
func TestBorrowThenMore(t *testing.T) {
	s, c, peer := pair(t)
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	peer.SetReadDeadline(time.Now().Add(5 * time.Second))
	first, second := []byte("abc"), []byte("def")
	s.Hold()
	s.Borrow()
	s.Write(first)
	s.Write(second)
	copy(first, "xxx")
	copy(second, "yyy")
	s.Borrow()
	s.Write([]byte("ghi"))
	go func() { time.Sleep(20 * time.Millisecond); peer.Write([]byte("!")) }()
	if err := s.Send(); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 9)
	if _, err := io.ReadFull(peer, got); err != nil || string(got) != "abcdefghi" {
		t.Fatalf("peer read %q, %v", got, err)
	}
	if _, err := io.ReadFull(s, got[:1]); err != nil {
		t.Fatal(err)
	}
	// A Borrow before Hold lends nothing later.
	read := make(chan string, 1)
	go func() {
		b := make([]byte, 3)
		_, err := io.ReadFull(peer, b)
		if err == nil {
			peer.Write([]byte("!"))
		}
		read <- string(b)
	}()
	s.Borrow()
	s.Hold()
	b := []byte("jkl")
	s.Write(b)
	copy(b, "zzz")
	if err := s.Send(); err != nil {
		t.Fatal(err)
	}
	if r := <-read; r != "jkl" {
		t.Fatalf("peer read %q", r)
	}
}

// A borrowed write larger than the socket's buffer is written whole and in
// order, the rest as Write would.
func TestBorrowLarge(t *testing.T) {
	s, c, peer := pair(t)
	want := bytes.Repeat([]byte("abcdefgh"), 1<<19) // 4 MiB
	got := make(chan []byte)
	go func() {
		time.Sleep(20 * time.Millisecond)
		b, _ := io.ReadAll(io.LimitReader(peer, int64(len(want))))
		got <- b
	}()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	s.Hold()
	s.Borrow()
	s.Write(want)
	if err := s.Send(); err != nil {
		t.Fatal(err)
	}
	if b := <-got; !bytes.Equal(b, want) {
		t.Fatalf("the peer read %d bytes, not what was borrowed", len(b))
	}
}
