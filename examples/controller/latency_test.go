package main

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// BenchmarkChangeLatency measures, against a real API server, the time
// from an Ingress update returning to the first request that the new path
// answers, with 0 and with 500 routes loaded. Each iteration is one change;
// run at least 20:
//
//	go test -run '^$' -bench ChangeLatency -benchtime 30x ./examples/controller/
//
// It reports the median and 90th percentile and the share of the median
// that is the 200 ms debounce (SPEC §17); the rest is the watch, the
// rebuild, the publish and the polling granularity of 5 ms.
func BenchmarkChangeLatency(b *testing.B) {
	e := startE2E(b)
	ctx := context.Background()
	runs := 0 // -count runs each sub-benchmark again, in a new namespace
	for _, routes := range []int{0, 500} {
		b.Run(fmt.Sprintf("routes=%d", routes), func(b *testing.B) {
			runs++
			ns := e.namespace(b, fmt.Sprintf("latency-%d", runs))
			tc := e.startController(b, ns, nil)
			port := backendPort(b, namedBackend(b, "A"))
			const services = 25
			for i := range services {
				e.app(b, ns, fmt.Sprintf("s%02d", i), port)
			}
			// 500 routes: 250 Ingresses of one host and two paths each.
			for i := range routes / 2 {
				host := fmt.Sprintf("h%03d.load.test", i)
				e.createIngress(b, newIngress(ns, fmt.Sprintf("load-%03d", i), "ramjet", host, fmt.Sprintf("s%02d", i%services), "/x", "/y"))
			}
			if routes > 0 {
				tc.waitAnswer(b, fmt.Sprintf("h%03d.load.test", routes/2-1), "/y", http.StatusOK, "A /y")
			}
			probe := e.createIngress(b, newIngress(ns, "probe", "ramjet", "probe.test", "s00", "/v0"))
			tc.waitAnswer(b, "probe.test", "/v0", http.StatusOK, "A /v0")
			tc.settle(b)
			require.Equal(b, routes+1, tc.router.Table().Size().Routes, "routes in the served table, the probe's included")

			var latencies []time.Duration
			b.ReportAllocs()
			for b.Loop() {
				path := fmt.Sprintf("/v%d", len(latencies)+1)
				probe.Spec.Rules[0].HTTP.Paths[0].Path = path
				var err error
				probe, err = e.client.NetworkingV1().Ingresses(ns).Update(ctx, probe, metav1.UpdateOptions{})
				require.NoError(b, err)
				changed := time.Now()
				for {
					status, _ := tc.get(b, "probe.test", path)
					if status == http.StatusOK {
						break
					}
					if time.Since(changed) > 10*time.Second {
						b.Fatalf("change %d not served after 10 s (last answer %d)", len(latencies)+1, status)
					}
					time.Sleep(5 * time.Millisecond)
				}
				latencies = append(latencies, time.Since(changed))
			}
			if len(latencies) < 20 {
				b.Logf("only %d changes measured: use -benchtime 30x for a stable median", len(latencies))
			}
			slices.Sort(latencies)
			median := latencies[len(latencies)/2]
			p90 := latencies[(len(latencies)*9+9)/10-1]
			ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
			b.ReportMetric(ms(median), "ms-median")
			b.ReportMetric(ms(p90), "ms-p90")
			debounce := tc.cluster.cfg.debounce
			b.ReportMetric(100*ms(debounce)/ms(median), "%debounce-of-median")
			b.ReportMetric(ms(median-debounce), "ms-median-beyond-debounce")
		})
	}
}
