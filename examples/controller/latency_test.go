package main

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
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
// rebuild, the publish and the polling granularity of 5 ms. The
// admissions=10/s run registers the admission webhook (failurePolicy
// Fail, so every change is reviewed) and sends it ten dry-run creations a
// second meanwhile (SPEC §21: reviews must not slow tables down).
func BenchmarkChangeLatency(b *testing.B) {
	e := startE2E(b)
	ctx := context.Background()
	runs := 0 // -count runs each sub-benchmark again, in a new namespace
	for _, run := range []struct {
		routes     int
		admissions bool
	}{{0, false}, {500, false}, {500, true}} {
		routes := run.routes
		name := fmt.Sprintf("routes=%d", routes)
		if run.admissions {
			name += "/admissions=10/s"
		}
		b.Run(name, func(b *testing.B) {
			runs++
			ns := e.namespace(b, fmt.Sprintf("latency-%d", runs))
			var tweak func(*config)
			caPEM, certFile, keyFile := webhookCerts(b)
			if run.admissions {
				tweak = func(c *config) { c.webhookAddr, c.webhookCert, c.webhookKey = "127.0.0.1:0", certFile, keyFile }
			}
			tc := e.startController(b, ns, tweak)
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
			if run.admissions {
				stop := e.admissionLoad(b, ns, tc.WebhookAddr, caPEM, 10)
				defer stop()
			}

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

// admissionLoad registers the webhook at addr for namespace ns with
// failurePolicy Fail, waits until the API server calls it, and sends
// perSecond dry-run Ingress creations through it until stopped; stop
// reports how many were reviewed.
func (e *e2e) admissionLoad(b *testing.B, ns, addr string, caPEM []byte, perSecond int) (stop func()) {
	ctx := context.Background()
	fail := admissionregistrationv1.Fail
	none := admissionregistrationv1.SideEffectClassNone
	url := "https://" + addr + "/"
	_, err := e.client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "ramjet-" + ns},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name:              "validate.ramjet.dev",
			ClientConfig:      admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: caPEM},
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": ns}},
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
				Rule:       admissionregistrationv1.Rule{APIGroups: []string{"networking.k8s.io"}, APIVersions: []string{"v1"}, Resources: []string{"ingresses"}},
			}},
			FailurePolicy: &fail, SideEffects: &none, AdmissionReviewVersions: []string{"v1"},
		}},
	}, metav1.CreateOptions{})
	require.NoError(b, err)
	refused := newIngress(ns, "refused", "ramjet", "h000.load.test", "s00", "/x")
	refused.Annotations = map[string]string{"nginx.ingress.kubernetes.io/load-balance": "random"}
	waitFor(b, 20*time.Second, "the webhook to be called", func() bool {
		_, err := e.client.NetworkingV1().Ingresses(ns).Create(ctx, refused, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err != nil
	})
	done := make(chan struct{})
	var wg sync.WaitGroup
	reviewed := 0
	wg.Go(func() {
		tick := time.NewTicker(time.Second / time.Duration(perSecond))
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			// A new Ingress on a loaded host: compiled with the Ingresses there.
			ing := newIngress(ns, fmt.Sprintf("dry-%d", i), "ramjet", fmt.Sprintf("h%03d.load.test", i%250), "s01", fmt.Sprintf("/dry%d", i))
			if _, err := e.client.NetworkingV1().Ingresses(ns).Create(ctx, ing, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err == nil {
				reviewed++
			}
		}
	})
	started := time.Now()
	return func() {
		close(done)
		wg.Wait()
		b.ReportMetric(float64(reviewed)/time.Since(started).Seconds(), "admissions/s")
	}
}
