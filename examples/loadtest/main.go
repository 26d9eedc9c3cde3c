// Command loadtest measures ramjet's router against a bare
// httputil.ReverseProxy on loopback: same backend, same transport, same
// client, in alternating rounds so that both see the same machine.
//
//	go run ./examples/loadtest                # about 30 s
//	go run ./examples/loadtest -churn         # also publish a table every 10 ms
//
// Everything runs in this process on 127.0.0.1: a backend, the router and
// the bare proxy each behind their own http.Server, and a fixed number of
// client workers with keep-alive connections. It prints requests per
// second, p50/p99 latency and the process's CPU time per request for
// each, and their ratios. On a machine shared with other work req/s moves
// from round to round; CPU per request is the steadier measure of what the
// router costs over the bare proxy (-v prints every round).
//
// With -churn a new routing table (a different digest every time) is
// published every 10 ms while the load runs, and it reports failed
// requests, the in-flight count left at the end and goroutines before and
// after: all three must come out clean, and the command exits 1 otherwise.
// It stops by itself: the total time is capped at 60 s.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"ramjet.dev/ramjet/compile"
	"ramjet.dev/ramjet/compile/manifest"
	"ramjet.dev/ramjet/router"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// maxTotal bounds a run however the flags are set.
const maxTotal = 60 * time.Second

type config struct {
	rounds      int
	round       time.Duration
	concurrency int
	churn       bool
	every       time.Duration
	bodySize    int
	verbose     bool
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("loadtest", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c config
	fs.IntVar(&c.rounds, "rounds", 6, "rounds per target, alternating router and bare proxy")
	fs.DurationVar(&c.round, "round", 2500*time.Millisecond, "length of one round")
	fs.IntVar(&c.concurrency, "concurrency", 32, "client workers, each with its own keep-alive connection")
	fs.BoolVar(&c.churn, "churn", false, "publish a new routing table every -every while the load runs")
	fs.DurationVar(&c.every, "every", 10*time.Millisecond, "publish interval with -churn")
	fs.IntVar(&c.bodySize, "body", 128, "response body size in bytes")
	fs.BoolVar(&c.verbose, "v", false, "print every round")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if c.rounds < 1 || c.round <= 0 || c.concurrency < 1 || c.every <= 0 || c.bodySize < 0 {
		fmt.Fprintln(stderr, "loadtest: -rounds, -round, -concurrency and -every must be positive, -body not negative")
		return 2
	}
	if total := 2 * time.Duration(c.rounds) * c.round; total > maxTotal {
		fmt.Fprintf(stderr, "loadtest: %d rounds of %v per target is %v; the cap is %v\n", c.rounds, c.round, total, maxTotal)
		return 2
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			fmt.Fprintln(stderr, "loadtest:", err)
			return 2
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(stderr, "loadtest:", err)
			return 2
		}
		defer pprof.StopCPUProfile()
	}
	ok, err := measure(c, stdout)
	if err != nil {
		fmt.Fprintln(stderr, "loadtest:", err)
		return 1
	}
	if !ok {
		return 1
	}
	return 0
}

// rig is the backend and the two proxies in front of it.
type rig struct {
	backendAddr string
	router      *router.Router
	transport   *http.Transport
	targets     map[string]string // name → front address
	servers     []*http.Server
}

func newRig(bodySize int) (*rig, error) {
	quiet := log.New(io.Discard, "", 0)
	body := make([]byte, bodySize)
	for i := range body {
		body[i] = 'a' + byte(i%26)
	}
	rg := &rig{targets: map[string]string{}}
	serve := func(h http.Handler) (string, error) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return "", err
		}
		s := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ErrorLog: quiet}
		rg.servers = append(rg.servers, s)
		go func() { _ = s.Serve(ln) }()
		return ln.Addr().String(), nil
	}
	var err error
	rg.backendAddr, err = serve(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write(body)
	}))
	if err != nil {
		return nil, err
	}

	// One transport for both proxies, so that only the handlers differ.
	rg.transport = &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
		MaxIdleConnsPerHost: 256,
		IdleConnTimeout:     time.Minute,
		DisableCompression:  true,
	}
	rg.router = router.New(router.Options{Transport: rg.transport, Logger: slog.New(slog.DiscardHandler)})
	res := compile.Compile(rg.snapshot(0), compile.Options{AllowLoopbackEndpoints: true})
	if len(res.Warnings) > 0 {
		return nil, fmt.Errorf("the load table has warnings: %v", res.Warnings)
	}
	rg.router.Publish(res.Table)
	if rg.targets["router"], err = serve(rg.router); err != nil {
		return nil, err
	}

	target := &url.URL{Scheme: "http", Host: rg.backendAddr}
	bare := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			pr.Out.Host = pr.In.Host
			pr.SetXForwarded()
		},
		Transport:  rg.transport,
		BufferPool: newBufferPool(),
		ErrorLog:   quiet,
	}
	if rg.targets["bare"], err = serve(bare); err != nil {
		return nil, err
	}
	return rg, nil
}

func (rg *rig) close() {
	for _, s := range rg.servers {
		_ = s.Close()
	}
	rg.transport.CloseIdleConnections()
	rg.router.CloseIdleConnections()
}

// snapshot is the load table's objects with the backend's address filled in.
func (rg *rig) snapshot(churn int) compile.Snapshot {
	host, port, _ := net.SplitHostPort(rg.backendAddr)
	return snapshot(host, port, churn)
}

// bufferPool gives the bare proxy reusable copy buffers, as the router
// has, so the comparison is of the routing work and not of allocation.
type bufferPool struct{ p sync.Pool }

func newBufferPool() *bufferPool {
	return &bufferPool{p: sync.Pool{New: func() any { return new([32 << 10]byte) }}}
}

func (b *bufferPool) Get() []byte  { return b.p.Get().(*[32 << 10]byte)[:] }
func (b *bufferPool) Put(s []byte) { b.p.Put((*[32 << 10]byte)(s)) }

// snapshot is a small realistic table: the load host with a few routes,
// and with churn > 0 one more Ingress whose host changes every time, so
// that every publish has a new digest.
func snapshot(ip, port string, churn int) compile.Snapshot {
	doc := fmt.Sprintf(`
apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata: {name: ramjet}
spec: {controller: ramjet.dev/ingress}
---
apiVersion: v1
kind: Service
metadata: {name: api, namespace: load}
spec: {ports: [{port: 80, targetPort: %[2]s}]}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: api-1, namespace: load, labels: {kubernetes.io/service-name: api}}
addressType: IPv4
ports: [{name: "", port: %[2]s}]
endpoints: [{addresses: [%[1]s]}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: shop, namespace: load}
spec:
  ingressClassName: ramjet
  rules:
  - host: load.example.com
    http:
      paths:
      - {path: /checkout, pathType: Exact, backend: {service: {name: api, port: {number: 80}}}}
      - {path: /api, pathType: Prefix, backend: {service: {name: api, port: {number: 80}}}}
      - {path: /static, pathType: Prefix, backend: {service: {name: api, port: {number: 80}}}}
      - {path: /, pathType: Prefix, backend: {service: {name: api, port: {number: 80}}}}
`, ip, port)
	if churn > 0 {
		doc += fmt.Sprintf(`---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: churn, namespace: load}
spec:
  ingressClassName: ramjet
  rules:
  - host: churn-%d.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: api, port: {number: 80}}}}]}
`, churn)
	}
	s, _, err := manifest.Decode("load.yaml", []byte(doc))
	if err != nil {
		panic(err) // the document is a constant
	}
	return *s
}

// result is one target's totals over its rounds.
type result struct {
	requests  int
	failures  int
	elapsed   time.Duration
	cpu       time.Duration // process CPU time used during the rounds
	latencies []time.Duration
}

func (r *result) rate() float64 { return float64(r.requests) / r.elapsed.Seconds() }

// cpuPerRequest is the whole process's CPU time (client, proxy and
// backend) per request: unlike req/s it hardly depends on what else the
// machine is doing, so its ratio is the steadier measure of overhead.
func (r *result) cpuPerRequest() time.Duration {
	if r.requests == 0 {
		return 0
	}
	return r.cpu / time.Duration(r.requests)
}

func (r *result) add(o *result) {
	r.requests += o.requests
	r.failures += o.failures
	r.elapsed += o.elapsed
	r.cpu += o.cpu
	r.latencies = append(r.latencies, o.latencies...)
}

func (r *result) quantile(q float64) time.Duration {
	if len(r.latencies) == 0 {
		return 0
	}
	return r.latencies[int(q*float64(len(r.latencies)-1))]
}

// round runs the workers against addr for d and adds to res.
func round(client *http.Client, addr string, concurrency int, d time.Duration, res *result) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	lat := make([][]time.Duration, concurrency)
	fails := make([]int, concurrency)
	var wg sync.WaitGroup
	cpu0 := processCPU()
	start := time.Now()
	for w := range concurrency {
		wg.Go(func() {
			req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/api/v1/items?id=42", nil)
			req.Host = "load.example.com"
			for ctx.Err() == nil {
				t0 := time.Now()
				resp, err := client.Do(req)
				if err != nil {
					fails[w]++
					continue
				}
				_, err = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if err != nil || resp.StatusCode != http.StatusOK {
					fails[w]++
					continue
				}
				lat[w] = append(lat[w], time.Since(t0))
			}
		})
	}
	wg.Wait()
	res.elapsed += time.Since(start)
	res.cpu += processCPU() - cpu0
	for w := range concurrency {
		res.requests += len(lat[w])
		res.failures += fails[w]
		res.latencies = append(res.latencies, lat[w]...)
	}
}

func measure(c config, out io.Writer) (bool, error) {
	// Counted before anything starts: once the servers, connections and
	// the publisher are gone, the count must be back here.
	goroutinesBefore := runtime.NumGoroutine()
	rg, err := newRig(c.bodySize)
	if err != nil {
		return false, err
	}
	client := &http.Client{Transport: &http.Transport{
		Proxy:               nil,
		MaxIdleConnsPerHost: c.concurrency,
		DisableCompression:  true,
	}}
	closeAll := func() {
		client.CloseIdleConnections()
		rg.close()
	}

	// Warm up both paths (connections, pools) before counting.
	for _, name := range []string{"router", "bare"} {
		round(client, rg.targets[name], c.concurrency, 200*time.Millisecond, &result{})
	}

	var published atomic.Int64
	stopChurn := make(chan struct{})
	churnDone := make(chan error, 1)
	if c.churn {
		go func() {
			tick := time.NewTicker(c.every)
			defer tick.Stop()
			for i := 1; ; i++ {
				select {
				case <-stopChurn:
					churnDone <- nil
					return
				case <-tick.C:
				}
				if _, changed := rg.router.Publish(compile.Compile(rg.snapshot(i), compile.Options{AllowLoopbackEndpoints: true}).Table); !changed {
					churnDone <- fmt.Errorf("publish %d did not change the table", i)
					return
				}
				published.Add(1)
			}
		}()
	}

	results := map[string]*result{"router": {}, "bare": {}}
	// pairRatios are router/bare req/s of the two rounds of each pair: on a
	// shared machine their median is steadier than the totals.
	var pairRatios []float64
	var pair [2]float64
	for i := range 2 * c.rounds {
		// Alternate which goes first so neither always follows the other.
		order := []string{"router", "bare"}
		if (i/2)%2 == 1 {
			order[0], order[1] = order[1], order[0]
		}
		name := order[i%2]
		var r result
		round(client, rg.targets[name], c.concurrency, c.round, &r)
		results[name].add(&r)
		if name == "router" {
			pair[0] = r.rate()
		} else {
			pair[1] = r.rate()
		}
		if i%2 == 1 {
			pairRatios = append(pairRatios, pair[0]/pair[1])
		}
		if c.verbose {
			slices.Sort(r.latencies)
			fmt.Fprintf(out, "round %2d %-7s %8.0f req/s  p99 %-10v CPU/request %v\n", i/2+1, name, r.rate(),
				r.quantile(0.99).Round(time.Microsecond), r.cpuPerRequest().Round(100*time.Nanosecond))
		}
	}
	var churnErr error
	if c.churn {
		close(stopChurn)
		churnErr = <-churnDone
	}
	inFlight := rg.router.InFlight(rg.backendAddr)
	closeAll()
	goroutinesAfter := settledGoroutines(goroutinesBefore)

	fmt.Fprintf(out, "loopback, %d workers, %d rounds of %v per target, alternating, %d-byte responses, GOMAXPROCS %d\n",
		c.concurrency, c.rounds, c.round, c.bodySize, runtime.GOMAXPROCS(0))
	fmt.Fprintf(out, "%-7s %10s %10s %10s %10s %12s %9s\n", "target", "requests", "req/s", "p50", "p99", "CPU/request", "failures")
	for _, name := range []string{"router", "bare"} {
		r := results[name]
		slices.Sort(r.latencies)
		fmt.Fprintf(out, "%-7s %10d %10.0f %10v %10v %12v %9d\n", name, r.requests, r.rate(),
			r.quantile(0.50).Round(time.Microsecond), r.quantile(0.99).Round(time.Microsecond),
			r.cpuPerRequest().Round(100*time.Nanosecond), r.failures)
	}
	ro, ba := results["router"], results["bare"]
	rateRatio := ro.rate() / ba.rate()
	p99Ratio := float64(ro.quantile(0.99)) / float64(ba.quantile(0.99))
	slices.Sort(pairRatios)
	fmt.Fprintf(out, "router/bare: req/s %.3f (budget >= 0.95), p99 %.3f (budget <= 1.10), median round-pair req/s %.3f\n",
		rateRatio, p99Ratio, pairRatios[len(pairRatios)/2])
	if ba.cpuPerRequest() > 0 {
		fmt.Fprintf(out, "router/bare: CPU per request %.3f (req/s a CPU-bound run can reach: %.3f of bare)\n",
			float64(ro.cpuPerRequest())/float64(ba.cpuPerRequest()), float64(ba.cpuPerRequest())/float64(ro.cpuPerRequest()))
	}

	ok := ro.requests > 0 && ba.requests > 0
	if c.churn {
		fmt.Fprintf(out, "churn: %d tables published every %v, generation %d\n", published.Load(), c.every, rg.router.Generation())
		fmt.Fprintf(out, "churn: failed requests %d (router), in flight at end %d, goroutines before %d after %d\n",
			ro.failures, inFlight, goroutinesBefore, goroutinesAfter)
		clean := churnErr == nil && ro.failures == 0 && inFlight == 0 && goroutinesAfter <= goroutinesBefore
		if churnErr != nil {
			fmt.Fprintf(out, "churn: %v\n", churnErr)
		}
		if clean {
			fmt.Fprintln(out, "churn: clean")
		} else {
			fmt.Fprintln(out, "churn: NOT clean")
		}
		ok = ok && clean
	}
	return ok, nil
}

// settledGoroutines waits up to two seconds for the goroutine count to come
// back to want (connections closing wind down asynchronously) and returns
// the last count seen.
func settledGoroutines(want int) int {
	deadline := time.Now().Add(2 * time.Second)
	for {
		n := runtime.NumGoroutine()
		if n <= want || time.Now().After(deadline) {
			return n
		}
		time.Sleep(10 * time.Millisecond)
	}
}
