package main

import (
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/rest"
)

// TestLeaderStopsWritingWhenItsLeaseLapses: a leader whose Lease renewals
// stop getting through (an overloaded API server, a partition that spares
// its other requests) must stop writing status before another replica can
// take the Lease, or the two write at once.
func TestLeaderStopsWritingWhenItsLeaseLapses(t *testing.T) {
	e := startE2E(t)
	ns := e.namespace(t, "lapse")
	e.app(t, ns, "a", backendPort(t, namedBackend(t, "A")))
	e.createIngress(t, newIngress(ns, "app", "ramjet", "app.test", "a", "/"))
	writes := watchWrites(t, e, ns)

	// Replica a's Lease requests wait until their context ends; its other
	// requests pass.
	var holdLease atomic.Bool
	rc := rest.CopyConfig(e.srv.Config)
	rc.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(req *http.Request) (*http.Response, error) {
			if holdLease.Load() && strings.Contains(req.URL.Path, "/leases/") {
				<-req.Context().Done()
				return nil, req.Context().Err()
			}
			return rt.RoundTrip(req)
		})
	})
	a := e.startControllerAs(t, rc, ns, func(c *config) { c.identity, c.publishAddresses = "replica-a", []string{"192.0.2.1"} })
	waitFor(t, 10*time.Second, "replica-a to lead", func() bool { return a.cluster.leading.Load() })
	waitFor(t, 10*time.Second, "replica-a's status on app", func() bool { return writes.statuses("app") == 1 }, writes.String)
	b := e.startController(t, ns, func(c *config) { c.identity, c.publishAddresses = "replica-b", []string{"192.0.2.2"} })

	holdLease.Store(true)
	waitFor(t, 3*testLeaseDuration, "replica-b to lead", func() bool { return b.cluster.leading.Load() })
	// A claim that appears now: only replica-b may write its status.
	e.createIngress(t, newIngress(ns, "late", "ramjet", "late.test", "a", "/"))
	waitFor(t, 10*time.Second, "replica-b's status on app and late", func() bool {
		return strings.Contains(writes.String(), "status of app: [{192.0.2.2  []}]") && strings.Contains(writes.String(), "status of late: [{192.0.2.2  []}]")
	}, writes.String)
	a.settle(t)
	b.settle(t)
	time.Sleep(testRenewDeadline) // until replica-a's term has surely ended
	for _, name := range []string{"app", "late"} {
		if got := strings.Count(writes.String(), fmt.Sprintf("status of %s: [{192.0.2.1  []}]", name)); got > map[string]int{"app": 1}[name] {
			t.Errorf("replica-a wrote the status of %s after replica-b took the Lease; all writes: %s", name, writes)
		}
	}
}
