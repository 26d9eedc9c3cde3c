// Command grpcload is the gRPC side of examples/loadtest/compare.sh
// (issue 41), a module of its own so that the library never depends on
// gRPC:
//
//	-role backend   a gRPC server (h2c, as a GRPC backend is) answering the
//	                standard health service's unary Check
//	-role client    -c connections over TLS (ALPN h2, certificate not
//	                verified, X25519 first as an OpenSSL client) to a proxy,
//	                -streams unary Check calls in flight on each, for -d;
//	                it prints a summary in wrk's format (requests,
//	                Requests/sec, latency distribution), calls that did not
//	                end OK counted as non-2xx
//
// Only loopback addresses. The backend prints "ready" once it listens and
// exits on SIGINT/SIGTERM or after -max; the client stops after -d.
package main

import (
	"context"
	"crypto/tls"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"slices"
	"sync"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("grpcload", flag.ContinueOnError)
	fs.SetOutput(stderr)
	role := fs.String("role", "", "backend or client")
	listen := fs.String("listen", "127.0.0.1:18090", "address the backend serves on")
	addr := fs.String("addr", "127.0.0.1:18443", "proxy address the client calls (TLS)")
	authority := fs.String("authority", "grpc.load", ":authority and TLS server name of the client's calls")
	conns := fs.Int("c", 8, "client connections")
	streams := fs.Int("streams", 8, "calls in flight on each client connection")
	d := fs.Duration("d", 6*time.Second, "how long the client puts load on (at most 10m)")
	maxRun := fs.Duration("max", 15*time.Minute, "the backend exits after this long whatever happens")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	loopback := func(a string) bool {
		h, _, err := net.SplitHostPort(a)
		return err == nil && net.ParseIP(h).IsLoopback()
	}
	switch *role {
	case "backend":
		if !loopback(*listen) {
			fmt.Fprintf(stderr, "grpcload: -listen %s: only loopback addresses\n", *listen)
			return 2
		}
		if err := serve(*listen, *maxRun, stdout); err != nil {
			fmt.Fprintln(stderr, "grpcload:", err)
			return 1
		}
		return 0
	case "client":
		if !loopback(*addr) {
			fmt.Fprintf(stderr, "grpcload: -addr %s: only loopback addresses\n", *addr)
			return 2
		}
		if *conns < 1 || *streams < 1 || *d <= 0 || *d > 10*time.Minute {
			fmt.Fprintln(stderr, "grpcload: -c and -streams must be at least 1 and -d between 0 and 10m")
			return 2
		}
		res, err := load(*addr, *authority, *conns, *streams, *d)
		if err != nil {
			fmt.Fprintln(stderr, "grpcload:", err)
			return 1
		}
		res.print(stdout)
		return 0
	}
	fmt.Fprintf(stderr, "grpcload: -role %q: backend or client\n", *role)
	return 2
}

func serve(listen string, maxRun time.Duration, stdout io.Writer) error {
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	s := grpc.NewServer()
	healthpb.RegisterHealthServer(s, health.NewServer()) // SERVING for ""
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, maxRun)
	defer cancel()
	go func() {
		<-ctx.Done()
		s.Stop()
	}()
	fmt.Fprintln(stdout, "ready")
	return s.Serve(ln)
}

type result struct {
	latencies []time.Duration
	failed    int
	elapsed   time.Duration
}

func load(addr, authority string, conns, streams int, d time.Duration) (*result, error) {
	creds := credentials.NewTLS(&tls.Config{
		ServerName:         authority,
		InsecureSkipVerify: true, // the harness's own certificate
		CurvePreferences:   []tls.CurveID{tls.X25519, tls.CurveP256},
	})
	clients := make([]healthpb.HealthClient, conns)
	for i := range clients {
		cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(creds), grpc.WithAuthority(authority))
		if err != nil {
			return nil, err
		}
		defer cc.Close()
		clients[i] = healthpb.NewHealthClient(cc)
	}
	var (
		mu    sync.Mutex
		total = new(result)
		wg    sync.WaitGroup
	)
	start := time.Now()
	deadline := start.Add(d)
	for _, hc := range clients {
		for range streams {
			wg.Go(func() {
				mine := &result{latencies: make([]time.Duration, 0, 8192)}
				for time.Now().Before(deadline) {
					ctx, cancel := context.WithDeadline(context.Background(), deadline.Add(5*time.Second))
					t0 := time.Now()
					resp, err := hc.Check(ctx, &healthpb.HealthCheckRequest{})
					cancel()
					if err != nil || resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
						mine.failed++
						continue
					}
					mine.latencies = append(mine.latencies, time.Since(t0))
				}
				mu.Lock()
				total.latencies = append(total.latencies, mine.latencies...)
				total.failed += mine.failed
				mu.Unlock()
			})
		}
	}
	wg.Wait()
	total.elapsed = time.Since(start)
	return total, nil
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
	fmt.Fprintf(w, "  %d requests in %.2fs\n", n, r.elapsed.Seconds())
	if r.failed > 0 {
		fmt.Fprintf(w, "  Non-2xx or 3xx responses: %d\n", r.failed)
	}
	fmt.Fprintf(w, "Requests/sec: %.2f\n", float64(n)/r.elapsed.Seconds())
}
