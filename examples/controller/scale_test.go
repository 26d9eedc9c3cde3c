//go:build linux

package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// BenchmarkControllerScale loads a real API server with n Ingresses, each
// with its own Service and EndpointSlice, starts the controller and
// reports (issue 25; a report, not a time test):
//
//   - s-start-to-ready: from start to the first table, caches synced;
//   - MiB-heap and MiB-rss: the controller's share at steady state, the
//     process's figures after a GC less those before it started;
//   - ms-change-median and ms-change-p90: from an Ingress update returning
//     to the first request the new path answers, a path no route answered
//     before (goal ≤ 300 ms at 50,000 with the default debounce of 200 ms);
//   - ms-cpu-per-rebuild: process CPU time over the changes divided by
//     the rebuilds they caused;
//   - ms-endpoints-median: from an EndpointSlice update (one Service's
//     endpoint moved to another pod) to the first answer from the new
//     pod, over ten such changes.
//
// The objects carry what real ones do and the compile never reads
// (bloat: kubectl's last-applied-configuration, selectors, pod
// references), so the informer trim (trimObject) shows; set
// RAMJET_SCALE_UNTRIMMED=1 to measure the caches without it.
//
// Each iteration is one change; creating the objects takes minutes:
//
//	go test -run '^$' -bench 'ControllerScale/ingresses=10000' -benchtime 20x -timeout 30m ./examples/controller/
func BenchmarkControllerScale(b *testing.B) {
	for _, n := range []int{10000, 50000} {
		b.Run(fmt.Sprintf("ingresses=%d", n), func(b *testing.B) { benchmarkScale(b, n) })
	}
}

func benchmarkScale(b *testing.B, n int) {
	// The first table of 50,000 Ingresses takes longer than other tests'.
	defer func(d time.Duration) { firstTableTimeout = d }(firstTableTimeout)
	firstTableTimeout = 5 * time.Minute
	e := startE2E(b)
	ctx := context.Background()
	ns := e.namespace(b, "scale")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(b, err)
	port := ln.Addr().(*net.TCPAddr).Port
	require.NoError(b, ln.Close())
	a := startPod(b, "A", 91, port, 0)

	// Creating 3n objects at client-go's default rate would take hours.
	rc := rest.CopyConfig(e.srv.Config)
	rc.QPS, rc.Burst = -1, 0
	client, err := kubernetes.NewForConfig(rc)
	require.NoError(b, err)
	began := time.Now()
	var created atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for w := range 16 {
		wg.Go(func() {
			for i := w; i < n; i += 16 {
				name := fmt.Sprintf("s%05d", i)
				svc := newService(ns, name)
				// Headless: the API server's cluster IP allocator slows as
				// the range fills (1.5 s a Service on average by 23,000),
				// and neither the compile nor the router reads a cluster IP.
				svc.Spec.ClusterIP = corev1.ClusterIPNone
				bloat(b, svc)
				if _, err := client.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
					errs <- err
					return
				}
				slice := podSlice(ns, name, name+"-1", port, []*pod{a})
				bloat(b, slice)
				if _, err := client.DiscoveryV1().EndpointSlices(ns).Create(ctx, slice, metav1.CreateOptions{}); err != nil {
					errs <- err
					return
				}
				ing := newIngress(ns, fmt.Sprintf("i%05d", i), "ramjet", fmt.Sprintf("h%05d.scale.test", i), name, "/", "/api")
				bloat(b, ing)
				if _, err := client.NetworkingV1().Ingresses(ns).Create(ctx, ing, metav1.CreateOptions{}); err != nil {
					errs <- err
					return
				}
				created.Add(1)
			}
		})
	}
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-done:
				return
			case <-time.After(time.Minute):
				b.Logf("%s: %d Ingresses created", time.Since(began).Round(time.Second), created.Load())
			}
		}
	}()
	wg.Wait()
	close(done)
	close(errs)
	for err := range errs {
		b.Fatalf("creating the objects: %v", err)
	}
	b.Logf("%d Ingresses, Services and EndpointSlices created in %s", n, time.Since(began).Round(time.Second))

	heap0, rss0 := steadyMemory()
	began = time.Now()
	untrimmed := os.Getenv("RAMJET_SCALE_UNTRIMMED") == "1"
	tc := e.startController(b, ns, func(c *config) {
		c.backendTransport = faultTransport()
		c.untrimmedCache = untrimmed
	})
	startToReady := time.Since(began)
	tc.waitAnswer(b, fmt.Sprintf("h%05d.scale.test", n-1), "/api", http.StatusOK, "A /api")
	require.Equal(b, 2*n, tc.router.Table().Size().Routes)
	tc.settle(b)
	time.Sleep(time.Second)
	heap1, rss1 := steadyMemory()

	// The probe Ingress's Prefix "/" answers every path, a new one's too:
	// timed against it, a change would count as served before any rebuild.
	// Its "/" becomes "/v0" untimed first, until a path of the changes
	// answers 404; each change then starts from a path that is not served.
	probe, err := client.NetworkingV1().Ingresses(ns).Get(ctx, "i00000", metav1.GetOptions{})
	require.NoError(b, err)
	probe.Spec.Rules[0].HTTP.Paths[0].Path = "/v0"
	probe, err = client.NetworkingV1().Ingresses(ns).Update(ctx, probe, metav1.UpdateOptions{})
	require.NoError(b, err)
	tc.waitAnswer(b, "h00000.scale.test", "/v1", http.StatusNotFound, "")
	tc.waitAnswer(b, "h00000.scale.test", "/v0", http.StatusOK, "A /v0")
	tc.settle(b)
	rebuilds, cpu := tc.cluster.rebuilds.Load(), processCPU()
	var latencies []time.Duration
	for b.Loop() {
		path := fmt.Sprintf("/v%d", len(latencies)+1)
		if status, body := tc.get(b, "h00000.scale.test", path); status != http.StatusNotFound {
			b.Fatalf("change %d: %s answers %d %q before it is written", len(latencies)+1, path, status, body)
		}
		probe.Spec.Rules[0].HTTP.Paths[0].Path = path
		probe, err = client.NetworkingV1().Ingresses(ns).Update(ctx, probe, metav1.UpdateOptions{})
		require.NoError(b, err)
		changed := time.Now()
		for {
			if status, _ := tc.get(b, "h00000.scale.test", path); status == http.StatusOK {
				break
			}
			if time.Since(changed) > 30*time.Second {
				b.Fatalf("change %d not served after 30 s", len(latencies)+1)
			}
			time.Sleep(5 * time.Millisecond)
		}
		latencies = append(latencies, time.Since(changed))
		tc.settle(b)
	}
	cpuPerRebuild := (processCPU() - cpu) / time.Duration(max(tc.cluster.rebuilds.Load()-rebuilds, 1))

	// Endpoint-only changes: one Service's EndpointSlice moved between
	// two pods, until the answer comes from the other.
	pods := []*pod{a, startPod(b, "B", 92, port, 0)}
	slice, err := client.DiscoveryV1().EndpointSlices(ns).Get(ctx, "s00001-1", metav1.GetOptions{})
	require.NoError(b, err)
	var endpointLatencies []time.Duration
	for i := range 10 {
		to := pods[(i+1)%2]
		slice.Endpoints = podSlice(ns, "s00001", "s00001-1", port, []*pod{to}).Endpoints
		slice, err = client.DiscoveryV1().EndpointSlices(ns).Update(ctx, slice, metav1.UpdateOptions{})
		require.NoError(b, err)
		changed := time.Now()
		for {
			if status, body := tc.get(b, "h00001.scale.test", "/api"); status == http.StatusOK && body == to.name+" /api" {
				break
			}
			if time.Since(changed) > 30*time.Second {
				b.Fatalf("endpoint change %d not served after 30 s", i+1)
			}
			time.Sleep(5 * time.Millisecond)
		}
		endpointLatencies = append(endpointLatencies, time.Since(changed))
		tc.settle(b)
	}
	b.Logf("changes served after %v; endpoint changes after %v", latencies, endpointLatencies)
	slices.Sort(endpointLatencies)

	slices.Sort(latencies)
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	mib := func(v uint64) float64 { return float64(v) / (1 << 20) }
	b.ReportMetric(startToReady.Seconds(), "s-start-to-ready")
	b.ReportMetric(mib(heap1-min(heap0, heap1)), "MiB-heap")
	b.ReportMetric(mib(rss1-min(rss0, rss1)), "MiB-rss")
	b.ReportMetric(ms(latencies[len(latencies)/2]), "ms-change-median")
	b.ReportMetric(ms(latencies[(len(latencies)*9+9)/10-1]), "ms-change-p90")
	b.ReportMetric(ms(cpuPerRebuild), "ms-cpu-per-rebuild")
	b.ReportMetric(ms(endpointLatencies[len(endpointLatencies)/2]), "ms-endpoints-median")
	b.Logf("informer caches trimmed: %v", !untrimmed)
	b.Logf("process heap %.0f MiB and RSS %.0f MiB with the controller, %.0f and %.0f before it", mib(heap1), mib(rss1), mib(heap0), mib(rss0))
}

// steadyMemory is the Go heap in use after a GC, and the process's RSS.
func steadyMemory() (heap, rss uint64) {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	data, _ := os.ReadFile("/proc/self/status")
	for line := range strings.Lines(string(data)) {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			rss = kb << 10
		}
	}
	return m.HeapAlloc, rss
}
