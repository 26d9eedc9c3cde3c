// Command tcpload measures how fast bytes cross a TCP proxy, for
// examples/loadtest/tcpcompare.sh (issue 38): it runs a sink on -sink,
// and for each of -targets in turn, -rounds times, dials it, writes -mib
// MiB in 64 KiB writes, half-closes and waits until the sink has read
// every byte. A target is the sink itself (direct) or a proxy in front of
// it. It prints MB/s per round and target, and each proxy's ratio to
// direct within the round. Only loopback addresses; it stops by itself.
package main

import (
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"sort"
	"strings"
	"time"
)

const writeSize = 64 << 10

func main() {
	sinkAddr := flag.String("sink", "127.0.0.1:19950", "address the sink listens on (loopback)")
	targets := flag.String("targets", "", "name=host:port,... in the order to run them; direct=<sink> for the baseline")
	mib := flag.Int("mib", 2048, "MiB to move per round and target")
	rounds := flag.Int("rounds", 5, "rounds")
	flag.Parse()
	ts, err := parseTargets(*targets)
	if err == nil {
		err = loopback(*sinkAddr)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "tcpload:", err)
		os.Exit(2)
	}
	read, err := sink(*sinkAddr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "tcpload:", err)
		os.Exit(1)
	}
	fmt.Println("| round | target | MB/s | vs direct |")
	fmt.Println("| --- | --- | ---: | ---: |")
	ratios := map[string][]float64{}
	for r := 1; r <= *rounds; r++ {
		got := map[string]float64{}
		for _, t := range ts {
			mbs, err := move(t.addr, int64(*mib)<<20, read)
			if err != nil {
				fmt.Fprintf(os.Stderr, "tcpload: %s: %v\n", t.name, err)
				os.Exit(1)
			}
			got[t.name] = mbs
		}
		for _, t := range ts {
			vs := "-"
			if d, ok := got["direct"]; ok && t.name != "direct" {
				ratios[t.name] = append(ratios[t.name], got[t.name]/d)
				vs = fmt.Sprintf("%.2f", got[t.name]/d)
			}
			fmt.Printf("| %d | %s | %.0f | %s |\n", r, t.name, got[t.name], vs)
		}
	}
	for _, t := range ts {
		if rs := ratios[t.name]; len(rs) > 0 {
			fmt.Printf("| median | %s | | %.2f |\n", t.name, median(rs))
		}
	}
}

type target struct{ name, addr string }

func parseTargets(s string) ([]target, error) {
	var ts []target
	for _, f := range strings.Split(s, ",") {
		name, addr, ok := strings.Cut(f, "=")
		if !ok || name == "" {
			return nil, fmt.Errorf("-targets: %q: want name=host:port", f)
		}
		if err := loopback(addr); err != nil {
			return nil, err
		}
		ts = append(ts, target{name, addr})
	}
	return ts, nil
}

func loopback(addr string) error {
	h, _, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	if ip := net.ParseIP(h); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("%s: loopback addresses only", addr)
	}
	return nil
}

// sink accepts connections and reports on read the bytes each one got
// when its writer half-closed.
func sink(addr string) (chan int64, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	read := make(chan int64, 1)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				buf := make([]byte, writeSize)
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
	return read, nil
}

// move writes size bytes to addr and returns MB/s, the clock stopped
// when the sink has read them all.
func move(addr string, size int64, read chan int64) (float64, error) {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	buf := make([]byte, writeSize)
	start := time.Now()
	_ = c.SetDeadline(start.Add(5 * time.Minute))
	for n := int64(0); n < size; n += writeSize {
		if _, err := c.Write(buf); err != nil {
			return 0, err
		}
	}
	if err := c.(*net.TCPConn).CloseWrite(); err != nil {
		return 0, err
	}
	select {
	case got := <-read:
		if got != size {
			return 0, fmt.Errorf("the sink read %d bytes of %d", got, size)
		}
	case <-time.After(5 * time.Minute):
		return 0, errors.New("the sink did not get everything")
	}
	return float64(size) / time.Since(start).Seconds() / 1e6, nil
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
