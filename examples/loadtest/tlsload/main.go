// Command tlsload puts HTTPS load on a proxy with a new connection per
// request, for examples/loadtest/compare.sh (issue 41): each of -c workers
// dials, does the TLS handshake, sends one GET with "Connection: close",
// reads the response and closes, again and again for -d.
//
//	-resume=false  every handshake is a full one (no client session cache)
//	-resume        each worker keeps the session its last connection got
//	               (a session cache of its own, as a browser has) and
//	               offers it on the next: resumed handshakes wherever the
//	               server resumes; the report says how many did
//
// The client offers X25519 first and P-256, as an OpenSSL 3.0 client does
// (wrk, curl): Go's default would start with the X25519MLKEM768 hybrid,
// which nginx built with OpenSSL 3.0 does not have, and the two proxies
// would not do the same key exchange. Certificates are not verified (the
// harness makes its own). It prints a summary in wrk's format (requests,
// Requests/sec, the latency distribution of connect-to-last-byte) so that
// compare.sh reads it as it reads wrk's. Only loopback targets; it stops
// by itself after -d.
package main

import (
	"bufio"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"sync"
	"time"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("tlsload", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:18443", "proxy address (loopback only)")
	host := fs.String("host", "load.example", "Host header and TLS server name")
	conns := fs.Int("c", 64, "workers, each with one connection at a time")
	d := fs.Duration("d", 6*time.Second, "how long to put load on (at most 10m)")
	resume := fs.Bool("resume", false, "offer each worker's last session (resumed handshakes)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if h, _, err := net.SplitHostPort(*addr); err != nil || !net.ParseIP(h).IsLoopback() {
		fmt.Fprintf(stderr, "tlsload: -addr %s: only loopback addresses\n", *addr)
		return 2
	}
	if *conns < 1 || *d <= 0 || *d > 10*time.Minute {
		fmt.Fprintln(stderr, "tlsload: -c must be at least 1 and -d between 0 and 10m")
		return 2
	}
	res := load(*addr, *host, *conns, *d, *resume)
	res.print(stdout)
	return 0
}

// result is what the workers counted.
type result struct {
	mu        sync.Mutex
	latencies []time.Duration
	resumed   int
	non2xx    int
	errs      int
	elapsed   time.Duration
}

func (r *result) add(o *result) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.latencies = append(r.latencies, o.latencies...)
	r.resumed += o.resumed
	r.non2xx += o.non2xx
	r.errs += o.errs
}

func load(addr, host string, conns int, d time.Duration, resume bool) *result {
	req := []byte("GET / HTTP/1.1\r\nHost: " + host + "\r\nUser-Agent: tlsload\r\nAccept: */*\r\nConnection: close\r\n\r\n")
	total := new(result)
	start := time.Now()
	deadline := start.Add(d)
	var wg sync.WaitGroup
	for range conns {
		wg.Go(func() {
			cfg := &tls.Config{
				ServerName:         host,
				InsecureSkipVerify: true, // the harness's own certificate
				NextProtos:         []string{"http/1.1"},
				CurvePreferences:   []tls.CurveID{tls.X25519, tls.CurveP256},
			}
			if resume {
				cfg.ClientSessionCache = tls.NewLRUClientSessionCache(1)
			}
			mine := &result{latencies: make([]time.Duration, 0, 4096)}
			buf := make([]byte, 16<<10)
			for time.Now().Before(deadline) {
				t0 := time.Now()
				status, resumed, err := once(addr, cfg, req, buf, deadline.Add(5*time.Second))
				if err != nil {
					mine.errs++
					continue
				}
				mine.latencies = append(mine.latencies, time.Since(t0))
				if resumed {
					mine.resumed++
				}
				if status < 200 || status > 399 {
					mine.non2xx++
				}
			}
			total.add(mine)
		})
	}
	wg.Wait()
	total.elapsed = time.Since(start)
	return total
}

// once makes one request on a new connection.
func once(addr string, cfg *tls.Config, req, buf []byte, deadline time.Time) (status int, resumed bool, err error) {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return 0, false, err
	}
	defer c.Close()
	_ = c.SetDeadline(deadline)
	tc := tls.Client(c, cfg)
	if err := tc.Handshake(); err != nil {
		return 0, false, err
	}
	if _, err := tc.Write(req); err != nil {
		return 0, false, err
	}
	resp, err := http.ReadResponse(bufio.NewReader(tc), nil)
	if err != nil {
		return 0, false, err
	}
	// Read to the end: with TLS 1.3 the session ticket comes after the
	// handshake, and a resuming client needs it.
	for {
		_, err := resp.Body.Read(buf)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return 0, false, err
		}
	}
	resp.Body.Close()
	return resp.StatusCode, tc.ConnectionState().DidResume, nil
}

// print writes the summary in wrk's format (compare.sh reads it so).
func (r *result) print(w io.Writer) {
	slices.Sort(r.latencies)
	q := func(p float64) string {
		if len(r.latencies) == 0 {
			return "0.00ms"
		}
		i := min(len(r.latencies)-1, int(p*float64(len(r.latencies))))
		return fmt.Sprintf("%.2fms", float64(r.latencies[i])/float64(time.Millisecond))
	}
	n := len(r.latencies)
	fmt.Fprintf(w, "  Latency Distribution\n     50%%   %s\n     90%%   %s\n     99%%   %s\n", q(0.50), q(0.90), q(0.99))
	fmt.Fprintf(w, "  %d requests in %.2fs, %d resumed handshakes\n", n, r.elapsed.Seconds(), r.resumed)
	if r.errs > 0 {
		fmt.Fprintf(w, "  Socket errors: %d\n", r.errs)
	}
	if r.non2xx > 0 {
		fmt.Fprintf(w, "  Non-2xx or 3xx responses: %d\n", r.non2xx)
	}
	fmt.Fprintf(w, "Requests/sec: %.2f\n", float64(n)/r.elapsed.Seconds())
}
