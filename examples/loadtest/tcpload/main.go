// Command tcpload measures how fast bytes cross a TCP proxy, for
// examples/loadtest/tcpcompare.sh (issue 38): it runs a sink on -sink,
// and for each of -targets in turn, -rounds times, dials it, writes -mib
// MiB in 64 KiB writes, half-closes and waits until the sink has read
// every byte. A target is the sink itself (direct) or a proxy in front of
// it. It prints MB/s per round and target, each proxy's ratio to direct
// within the round, and the CPU-seconds per GiB moved of this process
// (client and sink) and of each proxy named in -pids (Linux: from
// /proc/PID/stat), which a busy machine leaves fair where it does not
// leave the throughput. Only loopback addresses; it stops by itself.
package main

import (
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"
)

const writeSize = 64 << 10

func main() {
	sinkAddr := flag.String("sink", "127.0.0.1:19950", "address the sink listens on (loopback)")
	targets := flag.String("targets", "", "name=host:port,... in the order to run them; direct=<sink> for the baseline")
	mib := flag.Int("mib", 2048, "MiB to move per round and target")
	rounds := flag.Int("rounds", 5, "rounds")
	pidList := flag.String("pids", "", "name=pid,... of the targets' proxy processes, for their CPU time")
	flag.Parse()
	ts, err := parseTargets(*targets)
	var pids map[string]int
	if err == nil {
		pids, err = parsePids(*pidList)
	}
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
	fmt.Println("| round | target | MB/s | vs direct | CPU s/GiB client+sink | proxy | total |")
	fmt.Println("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
	ratios := map[string][]float64{}
	cpus := map[string][][2]float64{}
	gib := float64(*mib) / 1024
	for r := 1; r <= *rounds; r++ {
		got := map[string]float64{}
		cpu := map[string][2]float64{}
		for _, t := range ts {
			self0, proxy0 := processCPU(), procCPU(pids[t.name])
			mbs, err := move(t.addr, int64(*mib)<<20, read)
			if err != nil {
				fmt.Fprintf(os.Stderr, "tcpload: %s: %v\n", t.name, err)
				os.Exit(1)
			}
			self1, proxy1 := processCPU(), procCPU(pids[t.name])
			got[t.name] = mbs
			cpu[t.name] = [2]float64{(self1 - self0).Seconds() / gib, (proxy1 - proxy0).Seconds() / gib}
			cpus[t.name] = append(cpus[t.name], cpu[t.name])
		}
		for _, t := range ts {
			vs := "-"
			if d, ok := got["direct"]; ok && t.name != "direct" {
				ratios[t.name] = append(ratios[t.name], got[t.name]/d)
				vs = fmt.Sprintf("%.2f", got[t.name]/d)
			}
			c := cpu[t.name]
			fmt.Printf("| %d | %s | %.0f | %s | %.3f | %s | %.3f |\n", r, t.name, got[t.name], vs, c[0], proxyCPU(pids, t.name, c[1]), c[0]+c[1])
		}
	}
	for _, t := range ts {
		vs := "-"
		if rs := ratios[t.name]; len(rs) > 0 {
			vs = fmt.Sprintf("%.2f", median(rs))
		}
		var load, proxy, total []float64
		for _, c := range cpus[t.name] {
			load, proxy, total = append(load, c[0]), append(proxy, c[1]), append(total, c[0]+c[1])
		}
		fmt.Printf("| median | %s | | %s | %.3f | %s | %.3f |\n", t.name, vs, median(load), proxyCPU(pids, t.name, median(proxy)), median(total))
	}
}

// proxyCPU is a target's proxy CPU column: "-" for one not in -pids.
func proxyCPU(pids map[string]int, name string, v float64) string {
	if _, ok := pids[name]; !ok {
		return "-"
	}
	return fmt.Sprintf("%.3f", v)
}

// parsePids reads -pids: name=pid,...; empty is none.
func parsePids(s string) (map[string]int, error) {
	pids := map[string]int{}
	if s == "" {
		return pids, nil
	}
	for _, f := range strings.Split(s, ",") {
		name, v, ok := strings.Cut(f, "=")
		pid, err := strconv.Atoi(v)
		if !ok || name == "" || err != nil || pid <= 0 {
			return nil, fmt.Errorf("-pids: %q: want name=pid", f)
		}
		pids[name] = pid
	}
	return pids, nil
}

// procCPU is the user and system time process pid has used (all its
// threads, /proc/PID/stat), 0 for pid 0 or where it cannot be read.
func procCPU(pid int) time.Duration {
	if pid == 0 {
		return 0
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	return statCPU(string(b))
}

// statCPU is utime+stime of a /proc/PID/stat line, in clock ticks of
// 10 ms (USER_HZ, 100 on Linux whatever the kernel's HZ). The command
// name, in parentheses, may hold spaces and parentheses itself: the
// fields counted are those after the last ')'.
func statCPU(stat string) time.Duration {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0
	}
	// After ')': state (field 3) ... utime (14), stime (15).
	f := strings.Fields(stat[i+1:])
	if len(f) < 13 {
		return 0
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	s, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0
	}
	return time.Duration(u+s) * 10 * time.Millisecond
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
