package main

import (
	"io"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// tcpPair is a connected loopback pair: the dialler's end and the
// listener's.
func tcpPair(t testing.TB) (*net.TCPConn, *net.TCPConn) {
	t.Helper()
	ln, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	require.NoError(t, err)
	defer ln.Close()
	c, err := net.DialTCP("tcp", nil, ln.Addr().(*net.TCPAddr))
	require.NoError(t, err)
	s, err := ln.AcceptTCP()
	require.NoError(t, err)
	t.Cleanup(func() { c.Close(); s.Close() })
	return c, s
}

// A backend that stops reading for longer than a quarter of the idle
// timeout (but less than the timeout) loses no byte: what the splice
// had read from the client when its write waited past the deadline is
// still written, in order.
// The copy without splice(2) keeps them too.
func TestSpliceSlowReaderLosesNothing(t *testing.T) {
	t.Run("splice", func(t *testing.T) {
		testSlowReader(t, func(client, backend *net.TCPConn, idle time.Duration) error {
			return splice(client, backend, idle, noCount, noCount)
		})
	})
	t.Run("copy", func(t *testing.T) {
		testSlowReader(t, func(client, backend *net.TCPConn, idle time.Duration) error {
			p := &pipe{idle: idle}
			p.last.Store(time.Now().UnixNano())
			return p.move(newCopier(backend, client), backend, client, func(int) {})
		})
	})
}

func testSlowReader(t *testing.T, relay func(client, backend *net.TCPConn, idle time.Duration) error) {
	in, client := tcpPair(t)   // the writer's end, the proxy's client side
	backend, out := tcpPair(t) // the proxy's backend side, the reader's end
	// Long enough that a relay or reader starved for a moment on a loaded
	// machine (it once missed 800 ms there) is not taken for an idle one.
	const idle = 4 * time.Second
	done := make(chan error, 1)
	go func() {
		err := relay(client, backend, idle)
		// As the proxy closes both sides after a relay: a relay that
		// gave up early ends the reader's wait with a short count, not
		// a test that hangs until the package's timeout.
		backend.Close()
		client.Close()
		done <- err
	}()

	const size = 24 << 20
	go func() {
		buf := make([]byte, 64<<10)
		for off := 0; off < size; off += len(buf) {
			for i := range buf {
				buf[i] = byte((off + i) % 251)
			}
			if _, err := in.Write(buf); err != nil {
				return
			}
		}
		_ = in.CloseWrite()
	}()
	buf := make([]byte, 64<<10)
	var n int
	for pause := 0; ; pause++ {
		if pause < 4 {
			// Longer than idle/4 with the buffers full both ways, and
			// short of idle by more than a loaded machine's stall.
			time.Sleep(idle * 3 / 10)
		}
		m, err := out.Read(buf)
		for i := range m {
			if buf[i] != byte((n+i)%251) {
				t.Fatalf("byte %d is %d, want %d: bytes were lost", n+i, buf[i], (n+i)%251)
			}
		}
		n += m
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
	}
	out.Close()
	in.Close()
	require.NoError(t, <-done)
	require.Equal(t, size, n)
}

// A backend that stops reading with bytes still to write to it idles
// the connection out: no byte moves either way, and the splice ends at
// the idle timeout (noticed within a quarter more), not at the client's
// leisure.
func TestSpliceStalledBackendIdlesOut(t *testing.T) {
	in, client := tcpPair(t)
	backend, _ := tcpPair(t) // the backend's end never reads
	const idle = 400 * time.Millisecond
	go func() {
		buf := make([]byte, 64<<10)
		for {
			if _, err := in.Write(buf); err != nil {
				return
			}
		}
	}()
	start := time.Now()
	err := splice(client, backend, idle, noCount, noCount)
	took := time.Since(start)
	require.ErrorIs(t, err, errIdle)
	require.GreaterOrEqual(t, took, idle)
	require.Less(t, took, 3*idle, "closed long after the timeout")
}

func noCount(int) {}
