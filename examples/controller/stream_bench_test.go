package main

import (
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// sink reads and drops everything sent to it; each connection reports the
// bytes it read when its client is done.
func sink(b *testing.B) (addr string, read chan int64) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(b, err)
	b.Cleanup(func() { ln.Close() })
	read = make(chan int64, 16)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				buf := make([]byte, 64<<10)
				var n int64
				for {
					m, err := c.Read(buf)
					n += int64(m)
					if err != nil {
						read <- n
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().String(), read
}

// BenchmarkStreamTCP moves 64 KiB writes over one connection to a
// loopback sink: directly, through a TCP service of the controller, and
// through bare relays with none of the controller's code. Every case has
// the same writer and the same sink (64 KiB reads) in this process, and
// MB/s is end to end: the clock stops when the sink has read every byte,
// after the writer's half-close went through. Compare spliced with
// direct (the budget: spliced ≥ 90% of direct) and allocs/op (per 64 KiB
// write, the whole process: the budget is none per read). -count runs
// each case that many times in a row: for ratios under the same load,
// run the binary in a loop with -test.count 1, so the cases alternate.
//
//   - relay is a bare splice proxy: Go's splice between the two
//     connections (TCPConn.ReadFrom; spliced has its own, which keeps the
//     bytes of a write that waits past a deadline and bounds the unsent
//     bytes each socket queues), no deadline, no metrics, one direction
//     only. spliced ÷ relay is the controller's own cost; relay ÷ direct
//     is the second loopback TCP traversal's.
//   - relay-bounded is relay with 256 KiB socket buffers on its two legs
//     (SO_RCVBUF from the writer, SO_SNDBUF to the sink): on one core it
//     shows how much of the hop's cost is the bytes in flight (with
//     autotuned buffers megabytes of them, read by the sink after they
//     have left the cache).
//
// cpu-µs/op is the process's CPU time (user and system) per write: on a
// machine without idle cores throughput follows it. load1 is the load
// average at the end of the run.
func BenchmarkStreamTCP(b *testing.B) {
	const size = 64 << 10
	run := func(b *testing.B, addr string, read chan int64) {
		c, err := net.Dial("tcp", addr)
		require.NoError(b, err)
		buf := make([]byte, size)
		b.SetBytes(size)
		b.ReportAllocs()
		b.ResetTimer()
		cpu0 := processCPU()
		for range b.N {
			if _, err := c.Write(buf); err != nil {
				b.Fatal(err)
			}
		}
		require.NoError(b, c.(*net.TCPConn).CloseWrite())
		select {
		case n := <-read:
			b.StopTimer()
			reportCPU(b, processCPU()-cpu0)
			require.Equal(b, int64(b.N)*size, n)
		case <-time.After(time.Minute):
			b.Fatal("the sink did not get everything")
		}
		c.Close()
	}
	b.Run("direct", func(b *testing.B) {
		addr, read := sink(b)
		run(b, addr, read)
	})
	b.Run("spliced", func(b *testing.B) {
		addr, read := sink(b)
		_, port, _ := net.SplitHostPort(addr)
		p := streamPort(b, "tcp")
		inst, _, _ := startStreams(b, streamManifests(map[int]string{p: "default/echo:9000"}, nil, []string{port}, "", ""), nil)
		run(b, inst.streams.Addrs()["tcp/"+strconv.Itoa(p)], read)
	})
	b.Run("relay", func(b *testing.B) {
		addr, read := sink(b)
		run(b, bareRelay(b, addr, 0), read)
	})
	b.Run("relay-bounded", func(b *testing.B) {
		addr, read := sink(b)
		run(b, bareRelay(b, addr, 256<<10), read)
	})
}

// bareRelay listens on loopback and relays each connection's bytes to to
// with Go's splice (TCPConn.ReadFrom), one direction, then half-closes:
// a splice proxy without the controller. buffers > 0 fixes the relay's
// receive buffer from the client and send buffer to to.
func bareRelay(b *testing.B, to string, buffers int) string {
	ln, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	require.NoError(b, err)
	b.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.AcceptTCP()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				d, err := net.Dial("tcp", to)
				if err != nil {
					return
				}
				back := d.(*net.TCPConn)
				defer back.Close()
				if buffers > 0 {
					_ = c.SetReadBuffer(buffers)
					_ = back.SetWriteBuffer(buffers)
				}
				if _, err := back.ReadFrom(c); err == nil {
					_ = back.CloseWrite()
				}
				// Wait for the sink's close, so the relay's end does not
				// reset what is still in flight.
				_, _ = back.Read(make([]byte, 1))
			}()
		}
	}()
	return ln.Addr().String()
}

// BenchmarkStreamUDP relays question and answer datagrams through a UDP
// service to a loopback echo, 32 questions in flight: datagrams/s counts
// both directions (each question and each answer the relay forwards).
// For the budget (≥ 50,000 on one core) run it with -cpu 1 under
// taskset -c 0: the client, the echo and the relay then share one core,
// and direct is the client and the echo alone on it.
func BenchmarkStreamUDP(b *testing.B) {
	b.Run("direct", func(b *testing.B) {
		echo := startUDPBackendB(b)
		to, err := net.ResolveUDPAddr("udp", "127.0.0.1:"+echo)
		require.NoError(b, err)
		udpLoad(b, to)
	})
	b.Run("relayed", func(b *testing.B) {
		echo := startUDPBackendB(b)
		p := streamPort(b, "udp")
		inst, _, _ := startStreams(b, streamManifests(nil, map[int]string{p: "default/echo:53"}, nil, echo, ""), nil)
		to, err := net.ResolveUDPAddr("udp", inst.streams.Addrs()["udp/"+strconv.Itoa(p)])
		require.NoError(b, err)
		udpLoad(b, to)
	})
	// Bound to every address, as deployed: each datagram's destination is
	// read and each answer sent from it (IP_PKTINFO).
	b.Run("relayed-any", func(b *testing.B) {
		echo := startUDPBackendB(b)
		p := streamPort(b, "udp")
		inst, _, _ := startStreams(b, streamManifests(nil, map[int]string{p: "default/echo:53"}, nil, echo, ""), func(c *config) {
			c.httpAddr = ":0"
		})
		_, port, err := net.SplitHostPort(inst.streams.Addrs()["udp/"+strconv.Itoa(p)])
		require.NoError(b, err)
		to, err := net.ResolveUDPAddr("udp", "127.0.0.1:"+port)
		require.NoError(b, err)
		udpLoad(b, to)
	})
}

// udpLoad sends b.N questions to to, window of them in flight, and
// reports the datagrams per second that went through (both ways).
func udpLoad(b *testing.B, addr *net.UDPAddr) {
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	require.NoError(b, err)
	defer c.Close()
	to := addr.AddrPort()
	q := []byte("example.com? A")
	buf := make([]byte, 2048)
	const window = 32
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := processCPU()
	start := time.Now()
	inFlight, answered, lost := 0, 0, 0
	for sent := 0; answered+lost < b.N; {
		for inFlight < window && sent < b.N {
			if _, err := c.WriteToUDPAddrPort(q, to); err != nil {
				b.Fatal(err)
			}
			sent++
			inFlight++
		}
		_ = c.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
		if _, _, err := c.ReadFromUDPAddrPort(buf); err != nil {
			lost += inFlight // timed out: count what is outstanding as lost
			inFlight = 0
			continue
		}
		answered++
		inFlight--
	}
	elapsed := time.Since(start)
	b.StopTimer()
	reportCPU(b, processCPU()-cpu0)
	b.ReportMetric(float64(2*answered)/elapsed.Seconds(), "datagrams/s")
	b.ReportMetric(float64(lost)/float64(b.N), "lost/op")
}

// reportCPU reports the process's CPU time per op and the load average:
// what the run's figures were measured under.
func reportCPU(b *testing.B, cpu time.Duration) {
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/op")
	if l, err := os.ReadFile("/proc/loadavg"); err == nil {
		if f := strings.Fields(string(l)); len(f) > 0 {
			if v, err := strconv.ParseFloat(f[0], 64); err == nil {
				b.ReportMetric(v, "load1")
			}
		}
	}
}

// BenchmarkSplice is the splice of a TCP service alone, between two
// loopback connections, 64 KiB writes in: allocs/op counts the whole
// process, so the budget (no allocation per read) reads off it directly.
func BenchmarkSplice(b *testing.B) {
	const size = 64 << 10
	pair := func() (*net.TCPConn, *net.TCPConn) {
		ln, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
		require.NoError(b, err)
		defer ln.Close()
		c, err := net.DialTCP("tcp", nil, ln.Addr().(*net.TCPAddr))
		require.NoError(b, err)
		s, err := ln.AcceptTCP()
		require.NoError(b, err)
		return c, s
	}
	in, client := pair()   // the writer's end, the proxy's client side
	backend, out := pair() // the proxy's backend side, the sink's end
	done := make(chan error, 1)
	go func() { done <- splice(client, backend, time.Minute, noCount, noCount) }()
	read := make(chan int64, 1)
	go func() {
		buf := make([]byte, size)
		var n int64
		for {
			m, err := out.Read(buf)
			n += int64(m)
			if err != nil {
				read <- n
				return
			}
		}
	}()
	buf := make([]byte, size)
	b.SetBytes(size)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := in.Write(buf); err != nil {
			b.Fatal(err)
		}
	}
	require.NoError(b, in.CloseWrite())
	n := <-read
	b.StopTimer()
	require.Equal(b, int64(b.N)*size, n)
	out.Close()
	in.Close()
	require.NoError(b, <-done)
}

func startUDPBackendB(b *testing.B) string {
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	require.NoError(b, err)
	b.Cleanup(func() { c.Close() })
	go func() {
		buf := make([]byte, 2048)
		for {
			n, from, err := c.ReadFromUDPAddrPort(buf)
			if err != nil {
				return
			}
			c.WriteToUDPAddrPort(buf[:n], from)
		}
	}()
	_, p, _ := net.SplitHostPort(c.LocalAddr().String())
	return p
}
