package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A splice(2) between non-blocking sockets never blocks, so it is made
// without telling the scheduler it might: each call that does
// (entersyscall) wakes the runtime's monitor thread when the process was
// idle, which then polls every 20 µs for a millisecond; under a TCP
// service's stream that doubled the proxy's context switches per GiB.
// The proxy runs in a process of its own (this test binary again, with
// GODEBUG=schedtrace), so that the syscalls counted (its Ps'
// syscalltick) are its own: 256 MiB through it, at least 512 splices,
// count as a handful of syscalls (accept, dial, shutdown, close).
// The copy through user space (a direction without a full pipe) reads
// and writes the same way: mode copy runs the proxy with the copier.
func TestSpliceMovesOutsideTheSchedulersSyscalls(t *testing.T) {
	for _, mode := range []string{"splice", "copy"} {
		t.Run(mode, func(t *testing.T) { testMovesOutsideTheSchedulersSyscalls(t, mode) })
	}
}

func testMovesOutsideTheSchedulersSyscalls(t *testing.T, mode string) {
	sink, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	require.NoError(t, err)
	defer sink.Close()
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestSpliceSchedChild$")
	cmd.Env = append(os.Environ(), "GODEBUG=schedtrace=10,scheddetail=1", "RAMJET_SPLICE_CHILD="+sink.Addr().String(), "RAMJET_SPLICE_CHILD_MODE="+mode)
	var trace bytes.Buffer
	cmd.Stderr = &trace
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	lines := bufio.NewScanner(stdout)
	var addr string
	for addr == "" && lines.Scan() {
		addr, _ = strings.CutPrefix(lines.Text(), "proxy ")
	}
	if addr == "" {
		_ = cmd.Wait()
		t.Fatalf("the proxy process printed no address: %.2000s", trace.String())
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }()

	const size = 256 << 20
	read := make(chan int64, 1)
	go func() {
		c, err := sink.AcceptTCP()
		if err != nil {
			read <- -1
			return
		}
		n, _ := io.Copy(io.Discard, c)
		c.Close()
		read <- n
	}()
	in, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer in.Close()
	buf := make([]byte, 64<<10)
	for n := 0; n < size; n += len(buf) {
		_, err := in.Write(buf)
		require.NoError(t, err)
	}
	require.NoError(t, in.(*net.TCPConn).CloseWrite())
	require.Equal(t, int64(size), <-read)
	_, err = io.Copy(io.Discard, in)
	require.NoError(t, err)
	require.NoError(t, cmd.Wait(), "%.2000s", trace.String())

	// The last schedtrace block is after the splice ended.
	out := trace.String()
	last := strings.LastIndex(out, "SCHED ")
	require.GreaterOrEqual(t, last, 0, "no schedtrace: %.2000s", out)
	ticks := 0
	for _, m := range regexp.MustCompile(`(?m)^  P\d+: .*syscalltick=(\d+) `).FindAllStringSubmatch(out[last:], -1) {
		n, err := strconv.Atoi(m[1])
		require.NoError(t, err)
		ticks += n
	}
	t.Logf("%d syscalls through the scheduler", ticks)
	require.Less(t, ticks, 200, "the proxy's syscalls through the scheduler for 256 MiB")
}

// TestSpliceSchedChild is the proxy of
// TestSpliceMovesOutsideTheSchedulersSyscalls, in its own process.
func TestSpliceSchedChild(t *testing.T) {
	sink := os.Getenv("RAMJET_SPLICE_CHILD")
	if sink == "" {
		t.Skip("the proxy process of TestSpliceMovesOutsideTheSchedulersSyscalls")
	}
	ln, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	require.NoError(t, err)
	defer ln.Close()
	fmt.Println("proxy", ln.Addr())
	client, err := ln.AcceptTCP()
	require.NoError(t, err)
	defer client.Close()
	backend, err := net.DialTimeout("tcp", sink, 5*time.Second)
	require.NoError(t, err)
	defer backend.Close()
	if os.Getenv("RAMJET_SPLICE_CHILD_MODE") == "copy" {
		// One direction, the client's bytes, through the copier.
		p := &pipe{idle: time.Minute}
		p.last.Store(time.Now().UnixNano())
		b := backend.(*net.TCPConn)
		require.NoError(t, p.move(newCopier(b, client), b, client, noCount))
		client.Close()
	} else {
		require.NoError(t, splice(client, backend.(*net.TCPConn), time.Minute, noCount, noCount))
	}
	// Two schedtrace periods: the last block counts every splice.
	time.Sleep(50 * time.Millisecond)
}
