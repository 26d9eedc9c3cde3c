package main

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var soakDuration = flag.Duration("soak", 0, "run TestSoak for this long (issue 25 asks for 30m); 0 skips it")

// TestSoak runs the controller against a real API server with a change
// every second and steady traffic, and checks that the Go heap stays flat
// (within 10% of where it settled), that no goroutine leaks and that no
// request fails. It is opt-in:
//
//	go test -run TestSoak -soak 30m -timeout 40m ./examples/controller/
func TestSoak(t *testing.T) {
	if *soakDuration <= 0 {
		t.Skip("opt-in: -soak 30m")
	}
	e := startE2E(t)
	ctx := context.Background()
	ns := e.namespace(t, "soak")
	port := int(freePort(t))
	pods := []*pod{startPod(t, "A", 101, port, 0), startPod(t, "B", 102, port, 0)}
	_, err := e.client.CoreV1().Services(ns).Create(ctx, newService(ns, "app"), metav1.CreateOptions{})
	require.NoError(t, err)
	slice, err := e.client.DiscoveryV1().EndpointSlices(ns).Create(ctx, podSlice(ns, "app", "app-1", port, pods), metav1.CreateOptions{})
	require.NoError(t, err)
	ing := e.createIngress(t, newIngress(ns, "app", "ramjet", "app.test", "app", "/", "/v0"))
	tc := e.startController(t, ns, func(c *config) { c.backendTransport = faultTransport() })
	tc.waitAnswer(t, "app.test", "/", http.StatusOK, "")

	app := route{host: "app.test", path: "/x", object: "Ingress soak/app → Service soak/app", backends: []string{"A", "B"}}
	traffic := startLoad(100, 4, httpRoutes(faultClient(), "http://"+tc.HTTPAddr, app))

	type sample struct {
		at         time.Duration
		heap       uint64
		goroutines int
	}
	var samples []sample
	take := func(began time.Time) {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		// The test keeps the controller's log in memory, a line or two
		// per rebuild: that buffer is the test's, not the controller's.
		tc.logs.mu.Lock()
		logs := uint64(tc.logs.b.Cap())
		tc.logs.mu.Unlock()
		samples = append(samples, sample{time.Since(began).Round(time.Second), m.HeapAlloc - min(logs, m.HeapAlloc), runtime.NumGoroutine()})
	}
	// Churn every second, in turn: the endpoints (one pod not ready, then
	// both ready) and the Ingress (a second path renamed).
	began := time.Now()
	warmup := min(*soakDuration/4, 2*time.Minute) // connection pools fill up
	every := max(*soakDuration/30, time.Second)
	nextSample := began.Add(warmup)
	for i := 0; time.Since(began) < *soakDuration; i++ {
		time.Sleep(time.Second)
		if i%2 == 0 {
			notReady := []*pod{}
			if i%4 == 0 {
				notReady = pods[1:]
			}
			next := podSlice(ns, "app", "app-1", port, pods, notReady...)
			next.ResourceVersion = slice.ResourceVersion
			slice, err = e.client.DiscoveryV1().EndpointSlices(ns).Update(ctx, next, metav1.UpdateOptions{})
		} else {
			ing.Spec.Rules[0].HTTP.Paths[1].Path = fmt.Sprintf("/v%d", i)
			ing, err = e.client.NetworkingV1().Ingresses(ns).Update(ctx, ing, metav1.UpdateOptions{})
		}
		require.NoError(t, err, "change %d", i)
		if time.Now().After(nextSample) {
			take(began)
			nextSample = nextSample.Add(every)
		}
	}
	take(began)
	traffic.check(t, "traffic to app.test")

	first := samples[0]
	firstHalfG := 0
	for i, s := range samples {
		t.Logf("+%s: heap %.1f MiB, %d goroutines", s.at, float64(s.heap)/(1<<20), s.goroutines)
		if i <= len(samples)/2 {
			firstHalfG = max(firstHalfG, s.goroutines)
		}
	}
	t.Logf("%d rebuilds, generation %d", tc.cluster.rebuilds.Load(), tc.router.Generation())
	last := samples[len(samples)-1]
	require.LessOrEqual(t, float64(last.heap), 1.1*float64(first.heap), "heap at the end against the heap after the warm-up of %s", warmup)
	// Connections come and go with the load; a leak grows without bound.
	require.LessOrEqual(t, last.goroutines, firstHalfG+10, "goroutines at the end against the most in the first half")
}
