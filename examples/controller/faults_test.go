package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
)

// The fault tests (issue 25) check what clients see while something around
// the controller fails: each subtest keeps traffic flowing through the
// router the whole time, checks every answer (status and which backend
// gave it) and fails naming the request and the object that went wrong.

// pod is a loopback backend standing for one Pod: it listens on 127.0.0.N
// and its EndpointSlice address is 192.0.2.N (the API server refuses
// loopback endpoints); faultTransport connects the two. It answers
// "name path" after delay.
type pod struct {
	name     string
	addr     string // the EndpointSlice address, 192.0.2.N
	srv      *http.Server
	served   atomic.Int64
	inFlight atomic.Int64
}

// slowRequest is how long a pod takes to answer /slow.
const slowRequest = time.Second

// startPod serves pod name on 127.0.0.n:port.
func startPod(t testing.TB, name string, n, port int, delay time.Duration) *pod {
	t.Helper()
	ln, err := net.Listen("tcp", net.JoinHostPort(fmt.Sprintf("127.0.0.%d", n), strconv.Itoa(port)))
	require.NoError(t, err)
	p := &pod{name: name, addr: fmt.Sprintf("192.0.2.%d", n)}
	p.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.inFlight.Add(1)
		defer p.inFlight.Add(-1)
		if r.URL.Path == "/slow" {
			time.Sleep(slowRequest)
		} else if delay > 0 {
			time.Sleep(delay)
		}
		p.served.Add(1)
		fmt.Fprintf(w, "%s %s", name, r.URL.Path)
	})}
	go p.srv.Serve(ln)
	t.Cleanup(func() { p.srv.Close() })
	return p
}

// faultTransport dials 192.0.2.N:port on 127.0.0.N:port and refuses every
// other address.
func faultTransport() *http.Transport {
	dialer := &net.Dialer{Timeout: 5 * time.Second}
	return &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			host, port, err := net.SplitHostPort(addr)
			if err != nil {
				return nil, err
			}
			ip, err := netip.ParseAddr(host)
			if err != nil || !testNet.Contains(ip) {
				return nil, fmt.Errorf("test transport: %s is not a test endpoint", addr)
			}
			loop := ip.As4()
			loop[0], loop[1], loop[2] = 127, 0, 0
			return dialer.DialContext(ctx, network, net.JoinHostPort(netip.AddrFrom4(loop).String(), port))
		},
		DisableCompression:  true,
		MaxIdleConnsPerHost: 64,
	}
}

// podSlice is an EndpointSlice of Service svc with the pods as endpoints on
// port; notReady ones are terminating (serving, not ready), as a rollout
// leaves them.
func podSlice(ns, svc, name string, port int, pods []*pod, notReady ...*pod) *discoveryv1.EndpointSlice {
	slice := newSlice(ns, svc, name, int32(port))
	slice.Endpoints = nil
	for _, p := range pods {
		ready, terminating := !slices.Contains(notReady, p), slices.Contains(notReady, p)
		serving := true
		slice.Endpoints = append(slice.Endpoints, discoveryv1.Endpoint{
			Addresses:  []string{p.addr},
			Conditions: discoveryv1.EndpointConditions{Ready: &ready, Serving: &serving, Terminating: &terminating},
		})
	}
	return slice
}

// route is what the load sends and expects: a GET of host+path answered
// 200 by one of the named backends, "name path". object names the
// Ingress and Service behind it, for the failure message.
type route struct {
	host, path string
	object     string
	backends   []string
}

// load sends requests at a steady rate from several workers until stop,
// round robin over its routes, and checks every answer.
type load struct {
	began    time.Time
	sent     atomic.Int64
	mu       sync.Mutex
	failures []string
	failed   int
	by       map[string]int // answers per backend
	stopCh   chan struct{}
	wg       sync.WaitGroup
}

const maxReportedFailures = 20

// startLoad sends rate requests a second, spread over workers, each one
// made by do (request number n) and checked by it: an error is a failure.
func startLoad(rate, workers int, do func(n int64) (backend string, err error)) *load {
	l := &load{began: time.Now(), by: map[string]int{}, stopCh: make(chan struct{})}
	interval := time.Duration(workers) * time.Second / time.Duration(rate)
	for w := range workers {
		l.wg.Go(func() {
			next := time.Now().Add(time.Duration(w) * time.Second / time.Duration(rate))
			for {
				select {
				case <-l.stopCh:
					return
				case <-time.After(time.Until(next)):
				}
				// A worker that falls behind goes on at once, without
				// trying to catch up in a burst.
				if next = next.Add(interval); next.Before(time.Now()) {
					next = time.Now()
				}
				n := l.sent.Add(1)
				backend, err := do(n)
				l.mu.Lock()
				if err != nil {
					l.failed++
					if len(l.failures) < maxReportedFailures {
						l.failures = append(l.failures, fmt.Sprintf("request %d at +%s: %v", n, time.Since(l.began).Round(time.Millisecond), err))
					}
				} else {
					l.by[backend]++
				}
				l.mu.Unlock()
			}
		})
	}
	return l
}

// stop ends the load and waits for the requests in flight.
func (l *load) stop() {
	select {
	case <-l.stopCh:
	default:
		close(l.stopCh)
	}
	l.wg.Wait()
}

// check stops the load and fails t if any request failed, listing the
// first ones.
func (l *load) check(t testing.TB, what string) {
	t.Helper()
	l.stop()
	took := time.Since(l.began)
	l.mu.Lock()
	defer l.mu.Unlock()
	t.Logf("%s: %d requests in %s (%.0f/s), %d failed; answers per backend %v", what, l.sent.Load(), took.Round(time.Millisecond), float64(l.sent.Load())/took.Seconds(), l.failed, l.by)
	if l.failed > 0 {
		t.Errorf("%s: %d of %d requests failed; the first:\n%s", what, l.failed, l.sent.Load(), strings.Join(l.failures, "\n"))
	}
	require.Positive(t, l.sent.Load(), "no request was sent")
}

// httpRoutes makes requests to base (http://addr) with client, round
// robin over routes.
func httpRoutes(client *http.Client, base string, routes ...route) func(int64) (string, error) {
	return func(n int64) (string, error) {
		r := routes[int(n)%len(routes)]
		return r.get(client, base)
	}
}

// get sends one request for r and checks the answer.
func (r route) get(client *http.Client, base string) (string, error) {
	fail := func(format string, args ...any) (string, error) {
		return "", fmt.Errorf("GET %s%s (%s): %s", r.host, r.path, r.object, fmt.Sprintf(format, args...))
	}
	req, err := http.NewRequest(http.MethodGet, base+r.path, nil)
	if err != nil {
		return fail("%v", err)
	}
	req.Host = r.host
	resp, err := client.Do(req)
	if err != nil {
		return fail("%v", err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return fail("%d, body cut: %v", resp.StatusCode, err)
	}
	name, path, _ := strings.Cut(string(body), " ")
	if resp.StatusCode != http.StatusOK || path != r.path || !slices.Contains(r.backends, name) {
		return fail("got %d %q; want 200 from one of %v", resp.StatusCode, body, r.backends)
	}
	return name, nil
}

// faultClient is the load's HTTP client: keep-alive connections as a load
// balancer in front of the controller keeps them.
func faultClient() *http.Client {
	return &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64, DisableCompression: true}}
}

// etcdPost calls etcd's JSON gateway (no client library needed).
func etcdPost(t testing.TB, etcdURL, path string, req any) map[string]any {
	t.Helper()
	body, err := json.Marshal(req)
	require.NoError(t, err)
	resp, err := http.Post(etcdURL+path, "application/json", bytes.NewReader(body))
	require.NoError(t, err)
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "etcd %s: %s", path, out)
	var m map[string]any
	require.NoError(t, json.Unmarshal(out, &m))
	return m
}

// compactEtcd writes a key outside the API server's prefix, so that the
// revision moves past everything the watches have seen, and compacts etcd
// to that revision: any watch resuming from an older one gets 410 Gone.
func compactEtcd(t testing.TB, etcdURL string) int64 {
	t.Helper()
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	put := etcdPost(t, etcdURL, "/v3/kv/put", map[string]string{"key": b64("/ramjet-test/bump"), "value": b64(time.Now().String())})
	header, _ := put["header"].(map[string]any)
	rev, err := strconv.ParseInt(fmt.Sprint(header["revision"]), 10, 64)
	require.NoError(t, err, "etcd put answered %v", put)
	etcdPost(t, etcdURL, "/v3/kv/compaction", map[string]any{"revision": strconv.FormatInt(rev, 10), "physical": true})
	return rev
}

// TestFaults runs the controller against a real API server while things
// around it fail (issue 25). The subtests share one API server; the first
// stops and restarts it.
func TestFaults(t *testing.T) {
	e := startE2E(t)
	ctx := context.Background()

	t.Run("1 API server down for 30s: the last table serves, /readyz stays ready, changes served within 2s of its return", func(t *testing.T) {
		ns := e.namespace(t, "apidown")
		port := int(freePort(t))
		a, b := startPod(t, "A", 11, port, 0), startPod(t, "B", 12, port, 0)
		_, err := e.client.CoreV1().Services(ns).Create(ctx, newService(ns, "a"), metav1.CreateOptions{})
		require.NoError(t, err)
		_, err = e.client.CoreV1().Services(ns).Create(ctx, newService(ns, "b"), metav1.CreateOptions{})
		require.NoError(t, err)
		_, err = e.client.DiscoveryV1().EndpointSlices(ns).Create(ctx, podSlice(ns, "a", "a-1", port, []*pod{a}), metav1.CreateOptions{})
		require.NoError(t, err)
		_, err = e.client.DiscoveryV1().EndpointSlices(ns).Create(ctx, podSlice(ns, "b", "b-1", port, []*pod{b}), metav1.CreateOptions{})
		require.NoError(t, err)
		e.createIngress(t, newIngress(ns, "app", "ramjet", "app.test", "a", "/"))
		tc := e.startController(t, ns, func(c *config) { c.backendTransport = faultTransport() })
		tc.waitAnswer(t, "app.test", "/", http.StatusOK, "A /")

		client := faultClient()
		app := route{host: "app.test", path: "/x", object: "Ingress apidown/app → Service apidown/a", backends: []string{"A"}}
		traffic := startLoad(100, 4, httpRoutes(client, "http://"+tc.HTTPAddr, app))
		readyz := startLoad(10, 1, func(n int64) (string, error) {
			return "readyz", readyzOK(client, tc.DebugAddr)
		})

		const outage = 30 * time.Second
		require.NoError(t, e.srv.StopAPIServer())
		stopped := time.Now()
		time.Sleep(outage - time.Since(stopped))
		require.NoError(t, e.srv.StartAPIServer())
		back := time.Now()
		t.Logf("kube-apiserver away for %s, ready again in %s", back.Sub(stopped).Round(time.Millisecond), back.Sub(stopped.Add(outage)).Round(time.Millisecond))
		// Changes made before the controller's watches are back: a new
		// Ingress, and the old one's path moved.
		e.createIngress(t, newIngress(ns, "late", "ramjet", "late.test", "b", "/"))
		late := route{host: "late.test", path: "/y", object: "Ingress apidown/late → Service apidown/b", backends: []string{"B"}}
		waitFor(t, 2*time.Second-time.Since(back), "the Ingress created at the API server's return to be served", func() bool {
			_, err := late.get(client, "http://"+tc.HTTPAddr)
			return err == nil
		})
		t.Logf("change served %s after the API server's return", time.Since(back).Round(time.Millisecond))
		time.Sleep(500 * time.Millisecond) // traffic after the return too
		traffic.check(t, "traffic to app.test")
		readyz.check(t, "/readyz")
		require.True(t, tc.cluster.leading.Load() || waitLeading(tc, 10*time.Second), "the controller stands for the Lease again on its own")
	})

	t.Run("2 etcd compacted past the watches: 410 Gone, every informer relists, one rebuild, nothing lost", func(t *testing.T) {
		ns := e.namespace(t, "compaction")
		port := int(freePort(t))
		a, b := startPod(t, "A", 21, port, 0), startPod(t, "B", 22, port, 0)
		for _, svc := range []string{"a", "b"} {
			_, err := e.client.CoreV1().Services(ns).Create(ctx, newService(ns, svc), metav1.CreateOptions{})
			require.NoError(t, err)
		}
		_, err := e.client.DiscoveryV1().EndpointSlices(ns).Create(ctx, podSlice(ns, "a", "a-1", port, []*pod{a}), metav1.CreateOptions{})
		require.NoError(t, err)
		_, err = e.client.DiscoveryV1().EndpointSlices(ns).Create(ctx, podSlice(ns, "b", "b-1", port, []*pod{b}), metav1.CreateOptions{})
		require.NoError(t, err)
		e.createIngress(t, newIngress(ns, "app", "ramjet", "app.test", "a", "/"))
		e.createIngress(t, newIngress(ns, "old", "ramjet", "old.test", "b", "/"))
		requests := &apiRequests{}
		rc := rest.CopyConfig(e.srv.Config)
		rc.Wrap(requests.wrap)
		tc := e.startControllerAs(t, rc, ns, func(c *config) { c.backendTransport = faultTransport() })
		tc.waitAnswer(t, "old.test", "/", http.StatusOK, "B /")
		tc.settle(t)

		client := faultClient()
		app := route{host: "app.test", path: "/x", object: "Ingress compaction/app → Service compaction/a", backends: []string{"A"}}
		traffic := startLoad(100, 4, httpRoutes(client, "http://"+tc.HTTPAddr, app))

		// The controller's requests wait while the API server stops, etcd
		// is compacted past every revision its watches have seen, the
		// server comes back and two Ingresses change: the watches cannot
		// resume, and only a relist finds the changes.
		requests.hold()
		require.NoError(t, e.srv.StopAPIServer())
		rev := compactEtcd(t, e.srv.EtcdURL)
		before := tc.cluster.stats()
		require.NoError(t, e.srv.StartAPIServer())
		require.NoError(t, e.client.NetworkingV1().Ingresses(ns).Delete(ctx, "old", metav1.DeleteOptions{}))
		e.createIngress(t, newIngress(ns, "late", "ramjet", "late.test", "b", "/"))
		requests.release()
		late := route{host: "late.test", path: "/y", object: "Ingress compaction/late → Service compaction/b", backends: []string{"B"}}
		waitFor(t, 10*time.Second, "the Ingress created after the compaction to be served", func() bool {
			_, err := late.get(client, "http://"+tc.HTTPAddr)
			return err == nil
		})
		tc.waitAnswer(t, "old.test", "/", http.StatusNotFound, "")
		// Every informer relists: its watch cannot resume.
		waitFor(t, 10*time.Second, "every informer to relist", func() bool {
			lists := requests.lists()
			for _, r := range []string{"ingresses", "ingressclasses", "services", "endpointslices", "secrets"} {
				if lists[r] == 0 {
					return false
				}
			}
			return true
		}, func() string { return fmt.Sprintf("lists since the restart: %v", requests.lists()) })
		time.Sleep(time.Second) // the debounce is 200 ms: nothing more is on its way
		after := tc.settle(t)
		traffic.check(t, "traffic to app.test")
		t.Logf("compacted at revision %d; since the restart: lists %v, rebuilds %d, tables published %d",
			rev, requests.lists(), after.Rebuilds-before.Rebuilds, after.Generation-before.Generation)
		require.Equal(t, uint64(1), after.Rebuilds-before.Rebuilds, "rebuilds after the relists")
		require.Equal(t, uint64(1), after.Generation-before.Generation, "tables published after the relists")
	})

	t.Run("3 leader killed: the follower takes the Lease within the lease duration, no duplicate status writes or Events", func(t *testing.T) {
		ns := e.namespace(t, "failover")
		port := int(freePort(t))
		a := startPod(t, "A", 31, port, 0)
		_, err := e.client.CoreV1().Services(ns).Create(ctx, newService(ns, "a"), metav1.CreateOptions{})
		require.NoError(t, err)
		_, err = e.client.DiscoveryV1().EndpointSlices(ns).Create(ctx, podSlice(ns, "a", "a-1", port, []*pod{a}), metav1.CreateOptions{})
		require.NoError(t, err)
		e.createIngress(t, newIngress(ns, "app", "ramjet", "app.test", "a", "/"))
		e.createIngress(t, newIngress(ns, "broken", "ramjet", "broken.test", "missing", "/"))

		// Every status write and Event from here on, as the API server
		// records them.
		writes := watchWrites(t, e, ns)
		replica := func(identity string) (*testController, *apiRequests) {
			requests := &apiRequests{}
			rc := rest.CopyConfig(e.srv.Config)
			rc.Wrap(requests.wrap)
			return e.startControllerAs(t, rc, ns, func(c *config) {
				c.identity, c.publishAddresses, c.backendTransport = identity, []string{"203.0.113.7"}, faultTransport()
			}), requests
		}
		leader, leaderAPI := replica("replica-a")
		waitFor(t, 10*time.Second, "replica-a to lead", func() bool { return leader.cluster.leading.Load() })
		follower, _ := replica("replica-b")
		waitFor(t, 10*time.Second, "replica-a's status on app and broken, and its Event on broken", func() bool {
			return writes.statuses("app") == 1 && writes.statuses("broken") == 1 && writes.events("broken") == 1
		}, writes.String)

		client := faultClient()
		app := route{host: "app.test", path: "/x", object: "Ingress failover/app → Service failover/a", backends: []string{"A"}}
		traffic := startLoad(100, 4, httpRoutes(client, "http://"+follower.HTTPAddr, app))
		time.Sleep(500 * time.Millisecond)

		// The leader dies: its requests never reach the API server again,
		// so it cannot release the Lease, which must expire.
		leaderAPI.hold()
		killed := time.Now()
		// Problems and claims that appear while no one leads.
		e.createIngress(t, newIngress(ns, "broken2", "ramjet", "broken2.test", "missing", "/"))
		e.createIngress(t, newIngress(ns, "late", "ramjet", "late.test", "a", "/"))
		waitFor(t, 3*testLeaseDuration, "replica-b to lead", func() bool { return follower.cluster.leading.Load() })
		takeover := time.Since(killed)
		t.Logf("replica-b leads %s after replica-a died (lease duration %s, retry period %s)", takeover.Round(time.Millisecond), testLeaseDuration, testRetryPeriod)
		// The lease runs out a lease duration after the follower saw its
		// last renewal, and the follower looks every retry period,
		// jittered by up to 1.2 of it: twice that is the slack.
		require.LessOrEqual(t, takeover, testLeaseDuration+2*testRetryPeriod*22/10, "takeover after the lease expired")
		waitFor(t, 10*time.Second, "replica-b's status on late and its Event on broken2", func() bool {
			return writes.statuses("late") == 1 && writes.events("broken2") == 1
		}, writes.String)
		follower.settle(t)
		time.Sleep(time.Second) // a duplicate would be written by now
		traffic.check(t, "traffic to app.test through replica-b")
		want := map[string][2]int{"app": {1, 0}, "broken": {1, 1}, "broken2": {1, 1}, "late": {1, 0}}
		for name, n := range want {
			require.Equal(t, n[0], writes.statuses(name), "status writes on Ingress failover/%s; all writes: %s", name, writes)
			require.Equal(t, n[1], writes.events(name), "Events on Ingress failover/%s; all writes: %s", name, writes)
		}
		leader.stop(t) // its Lease release is held and gives up at its deadline
	})

	t.Run("4 endpoints roll one by one under 500 req/s: no request fails, those in flight to a removed endpoint finish", func(t *testing.T) {
		ns := e.namespace(t, "churn")
		port := int(freePort(t))
		_, err := e.client.CoreV1().Services(ns).Create(ctx, newService(ns, "web"), metav1.CreateOptions{})
		require.NoError(t, err)
		var pods []*pod
		var names []string
		for i := range 4 {
			pods = append(pods, startPod(t, fmt.Sprintf("v1-%d", i), 41+i, port, 2*time.Millisecond))
			names = append(names, fmt.Sprintf("v1-%d", i), fmt.Sprintf("v2-%d", i))
		}
		slice, err := e.client.DiscoveryV1().EndpointSlices(ns).Create(ctx, podSlice(ns, "web", "web-1", port, pods), metav1.CreateOptions{})
		require.NoError(t, err)
		e.createIngress(t, newIngress(ns, "web", "ramjet", "web.test", "web", "/"))
		tc := e.startController(t, ns, func(c *config) { c.backendTransport = faultTransport() })
		tc.waitAnswer(t, "web.test", "/slow", http.StatusOK, "")

		object := "Ingress churn/web → Service churn/web"
		fast := route{host: "web.test", path: "/x", object: object, backends: names}
		slow := route{host: "web.test", path: "/slow", object: object, backends: names}
		traffic := startLoad(500, 16, httpRoutes(faultClient(), "http://"+tc.HTTPAddr, fast))
		slowTraffic := startLoad(10, 16, httpRoutes(faultClient(), "http://"+tc.HTTPAddr, slow)) // each a second long
		time.Sleep(time.Second)

		update := func(pods []*pod, terminating ...*pod) {
			t.Helper()
			next := podSlice(ns, "web", "web-1", port, pods, terminating...)
			next.ResourceVersion = slice.ResourceVersion
			slice, err = e.client.DiscoveryV1().EndpointSlices(ns).Update(ctx, next, metav1.UpdateOptions{})
			require.NoError(t, err)
		}
		inFlightAtRemoval := 0
		for i := range 4 {
			old := pods[0]
			// The new Pod comes up ready, then the old one terminates: not
			// ready at once, removed from the slice a little later while
			// its slow requests still run, and gone once they finish.
			pods = append(pods, startPod(t, fmt.Sprintf("v2-%d", i), 51+i, port, 2*time.Millisecond))
			update(pods)
			time.Sleep(500 * time.Millisecond)
			update(pods, old)
			time.Sleep(300 * time.Millisecond)
			pods = pods[1:]
			update(pods)
			inFlightAtRemoval += int(old.inFlight.Load())
			waitFor(t, 5*time.Second, "the requests in flight to "+old.name+" to finish", func() bool { return old.inFlight.Load() == 0 })
			require.NoError(t, old.srv.Close())
		}
		served := map[string]int64{}
		time.Sleep(500 * time.Millisecond)
		for _, p := range pods {
			served[p.name] = p.served.Load()
		}
		time.Sleep(500 * time.Millisecond)
		traffic.check(t, "traffic to web.test")
		slowTraffic.check(t, "slow requests to web.test")
		for _, p := range pods {
			require.Greater(t, p.served.Load(), served[p.name], "pod %s (%s) serves after the rollout", p.name, p.addr)
		}
		t.Logf("requests in flight to an endpoint when it left the slice: %d", inFlightAtRemoval)
		require.Positive(t, inFlightAtRemoval, "no request was in flight to a removed endpoint: the subtest proved nothing about them")
	})

	t.Run("5 TLS Secret rotated 10 times under HTTPS traffic: every handshake succeeds, new connections get the new certificate within the debounce", func(t *testing.T) {
		ns := e.namespace(t, "rotation")
		port := int(freePort(t))
		a := startPod(t, "A", 61, port, 0)
		_, err := e.client.CoreV1().Services(ns).Create(ctx, newService(ns, "a"), metav1.CreateOptions{})
		require.NoError(t, err)
		_, err = e.client.DiscoveryV1().EndpointSlices(ns).Create(ctx, podSlice(ns, "a", "a-1", port, []*pod{a}), metav1.CreateOptions{})
		require.NoError(t, err)
		secret, err := e.client.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cert"},
			Type:       corev1.SecretTypeTLS,
			Data:       selfSignedPair(t, "secure.test", 1),
		}, metav1.CreateOptions{})
		require.NoError(t, err)
		ing := newIngress(ns, "secure", "ramjet", "secure.test", "a", "/")
		ing.Spec.TLS = []networkingv1.IngressTLS{{Hosts: []string{"secure.test"}, SecretName: "cert"}}
		e.createIngress(t, ing)
		tc := e.startController(t, ns, func(c *config) { c.httpsAddr, c.backendTransport = "127.0.0.1:0", faultTransport() })

		// Every request a new connection, so every one is a handshake.
		client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
			DisableKeepAlives: true,
			TLSClientConfig:   &tls.Config{ServerName: "secure.test", InsecureSkipVerify: true},
		}}
		type handshake struct {
			began, done time.Time
			serial      int64
		}
		var mu sync.Mutex
		var handshakes []handshake
		object := "Ingress rotation/secure, Secret rotation/cert"
		secure := route{host: "secure.test", path: "/x", object: object, backends: []string{"A"}}
		do := func(n int64) (string, error) {
			began := time.Now()
			req, err := http.NewRequest(http.MethodGet, "https://"+tc.HTTPSAddr+"/x", nil)
			if err != nil {
				return "", err
			}
			req.Host = "secure.test"
			resp, err := client.Do(req)
			if err != nil {
				return "", fmt.Errorf("GET https://secure.test/x (%s): %v", object, err)
			}
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil || resp.StatusCode != http.StatusOK || string(body) != "A /x" {
				return "", fmt.Errorf("GET https://secure.test/x (%s): %d %q %v", object, resp.StatusCode, body, err)
			}
			leaf := resp.TLS.PeerCertificates[0]
			if !slices.Contains(leaf.DNSNames, "secure.test") {
				return "", fmt.Errorf("GET https://secure.test/x (%s): certificate for %v", object, leaf.DNSNames)
			}
			mu.Lock()
			handshakes = append(handshakes, handshake{began, time.Now(), leaf.SerialNumber.Int64()})
			mu.Unlock()
			return "A", nil
		}
		_, err = secure.get(tc.http, "http://"+tc.HTTPAddr) // plain HTTP redirects: served at all
		require.Error(t, err)
		waitFor(t, 10*time.Second, "the first certificate", func() bool { _, err := do(0); return err == nil })
		traffic := startLoad(100, 4, do)
		time.Sleep(300 * time.Millisecond)

		const rotations = 10
		updated := make([]time.Time, rotations+2)
		for serial := int64(2); serial <= rotations+1; serial++ {
			secret.Data = selfSignedPair(t, "secure.test", serial)
			secret, err = e.client.CoreV1().Secrets(ns).Update(ctx, secret, metav1.UpdateOptions{})
			require.NoError(t, err)
			updated[serial] = time.Now()
			time.Sleep(600 * time.Millisecond)
		}
		traffic.check(t, "HTTPS traffic to secure.test")

		// For each certificate: when a new connection first got it, and
		// no connection begun after that got an older one.
		mu.Lock()
		defer mu.Unlock()
		debounce := tc.cluster.cfg.debounce
		var delays []time.Duration
		for serial := int64(2); serial <= rotations+1; serial++ {
			first := time.Time{}
			for _, h := range handshakes {
				if h.serial >= serial && (first.IsZero() || h.done.Before(first)) {
					first = h.done
				}
			}
			require.False(t, first.IsZero(), "certificate %d never served", serial)
			delays = append(delays, first.Sub(updated[serial]))
			for _, h := range handshakes {
				if h.began.After(first) && h.serial < serial {
					t.Errorf("a connection begun %s after certificate %d was first served got certificate %d", h.began.Sub(first), serial, h.serial)
				}
			}
		}
		slices.Sort(delays)
		t.Logf("%d handshakes; from a Secret update to the first handshake with its certificate: median %s, max %s (debounce %s)",
			len(handshakes), delays[len(delays)/2].Round(time.Millisecond), delays[len(delays)-1].Round(time.Millisecond), debounce)
		// The debounce, then the watch, the rebuild and one request
		// interval of this load (10 ms per worker round). The median holds
		// it, so certificates served an update late (600 ms more) still
		// fail; a starved machine may stall one rotation's watch or
		// rebuild, so the slowest gets a second more.
		require.LessOrEqual(t, delays[len(delays)/2], debounce+300*time.Millisecond, "median rotation")
		require.LessOrEqual(t, delays[len(delays)-1], debounce+time.Second, "slowest rotation")
	})

	t.Run("6 stop signal during traffic: the drain serves, no client sees a reset, the process exits within the grace period", func(t *testing.T) {
		ns := e.namespace(t, "shutdown")
		port := int(freePort(t))
		a := startPod(t, "A", 71, port, 2*time.Millisecond)
		_, err := e.client.CoreV1().Services(ns).Create(ctx, newService(ns, "a"), metav1.CreateOptions{})
		require.NoError(t, err)
		_, err = e.client.DiscoveryV1().EndpointSlices(ns).Create(ctx, podSlice(ns, "a", "a-1", port, []*pod{a}), metav1.CreateOptions{})
		require.NoError(t, err)
		e.createIngress(t, newIngress(ns, "app", "ramjet", "app.test", "a", "/"))
		// The drain is ingress-nginx's -shutdown-grace-period; the Pod's
		// terminationGracePeriodSeconds must cover it and the requests
		// still in flight when the listeners close.
		const drain = 2 * time.Second
		const gracePeriod = drain + slowRequest + 2*time.Second
		tc := e.startController(t, ns, func(c *config) { c.drain, c.backendTransport = drain, faultTransport() })
		tc.waitAnswer(t, "app.test", "/", http.StatusOK, "A /")

		object := "Ingress shutdown/app → Service shutdown/a"
		client := faultClient()
		traffic := startLoad(200, 8, httpRoutes(client, "http://"+tc.HTTPAddr, route{host: "app.test", path: "/x", object: object, backends: []string{"A"}}))
		slowTraffic := startLoad(5, 8, httpRoutes(client, "http://"+tc.HTTPAddr, route{host: "app.test", path: "/slow", object: object, backends: []string{"A"}}))
		// The load balancer in front: it checks /readyz every 100 ms and
		// sends no new request once it has failed for a second.
		balancerDone := make(chan time.Duration, 1)
		go func() {
			var failingSince time.Time
			for {
				if err := readyzOK(client, tc.DebugAddr); err == nil {
					failingSince = time.Time{}
				} else if failingSince.IsZero() {
					failingSince = time.Now()
				} else if time.Since(failingSince) >= time.Second {
					traffic.stop()
					slowTraffic.stop()
					balancerDone <- time.Since(failingSince)
					return
				}
				time.Sleep(100 * time.Millisecond)
			}
		}()
		time.Sleep(time.Second)
		waitFor(t, 5*time.Second, "slow requests in flight", func() bool { return a.inFlight.Load() > 0 })
		began := time.Now()
		tc.stop(t) // the stop signal, then the wait for the process to end
		exited := time.Since(began)
		<-balancerDone
		traffic.check(t, "traffic to app.test")
		slowTraffic.check(t, "slow requests to app.test")
		t.Logf("exited %s after the stop signal (drain %s, grace period %s)", exited.Round(time.Millisecond), drain, gracePeriod)
		require.GreaterOrEqual(t, exited, drain, "the listeners served for the whole drain")
		require.LessOrEqual(t, exited, gracePeriod, "exit within the grace period")
	})

	t.Run("7 bad objects arrive during traffic: each degrades only itself", func(t *testing.T) {
		ns := e.namespace(t, "bad")
		port := int(freePort(t))
		a := startPod(t, "A", 81, port, 0)
		for _, svc := range []string{"a", "many"} {
			_, err := e.client.CoreV1().Services(ns).Create(ctx, newService(ns, svc), metav1.CreateOptions{})
			require.NoError(t, err)
		}
		_, err := e.client.DiscoveryV1().EndpointSlices(ns).Create(ctx, podSlice(ns, "a", "a-1", port, []*pod{a}), metav1.CreateOptions{})
		require.NoError(t, err)
		e.createIngress(t, newIngress(ns, "good", "ramjet", "good.test", "a", "/"))
		tc := e.startController(t, ns, func(c *config) { c.httpsAddr, c.backendTransport = "127.0.0.1:0", faultTransport() })
		tc.waitAnswer(t, "good.test", "/", http.StatusOK, "A /")

		good := route{host: "good.test", path: "/x", object: "Ingress bad/good → Service bad/a", backends: []string{"A"}}
		traffic := startLoad(100, 4, httpRoutes(faultClient(), "http://"+tc.HTTPAddr, good))
		arrive := func(what string, create func() error) {
			t.Helper()
			gen := tc.router.Generation()
			require.NoError(t, create(), what)
			time.Sleep(500 * time.Millisecond)
			tc.settle(t)
			t.Logf("%s: generation %d → %d", what, gen, tc.router.Generation())
		}

		// An Ingress with every field wrong that the API server lets
		// through.
		arrive("Ingress bad/broken", func() error {
			ing := newIngress(ns, "broken", "ramjet", "broken.test", "missing", "~/api/(", "/ok")
			ing.Spec.Rules[0].HTTP.Paths[1].Backend.Service.Port = networkingv1.ServiceBackendPort{Name: "nonesuch"}
			ing.Spec.Rules = append(ing.Spec.Rules, networkingv1.IngressRule{Host: "broken2.test", IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{
				Paths: []networkingv1.HTTPIngressPath{{Path: "/r", PathType: ing.Spec.Rules[0].HTTP.Paths[1].PathType, Backend: networkingv1.IngressBackend{
					Resource: &corev1.TypedLocalObjectReference{Kind: "Bucket", Name: "b"},
				}}},
			}}})
			ing.Spec.TLS = []networkingv1.IngressTLS{{Hosts: []string{"broken.test"}, SecretName: "absent"}}
			ing.Annotations = map[string]string{
				"nginx.ingress.kubernetes.io/use-regex":          "maybe",
				"nginx.ingress.kubernetes.io/rewrite-target":     "/$9",
				"nginx.ingress.kubernetes.io/proxy-body-size":    "lots",
				"nginx.ingress.kubernetes.io/ssl-redirect":       "perhaps",
				"nginx.ingress.kubernetes.io/auth-type":          "basic",
				"nginx.ingress.kubernetes.io/canary":             "true",
				"nginx.ingress.kubernetes.io/server-snippet":     "return 200;",
				"nginx.ingress.kubernetes.io/proxy-read-timeout": "-5",
			}
			_, err := e.client.NetworkingV1().Ingresses(ns).Create(ctx, ing, metav1.CreateOptions{})
			return err
		})
		// A regex of 1 MiB.
		arrive("Ingress bad/huge-regex", func() error {
			ing := newIngress(ns, "huge-regex", "ramjet", "huge.test", "a", "~/x"+strings.Repeat("(a|b)", 1<<20/5))
			ing.Annotations = map[string]string{"nginx.ingress.kubernetes.io/use-regex": "true"}
			_, err := e.client.NetworkingV1().Ingresses(ns).Create(ctx, ing, metav1.CreateOptions{})
			return err
		})
		// 10,000 endpoints: the API server takes at most 1,000 in one
		// EndpointSlice, so the Service gets ten.
		manySlice := func(name string, n, from int) *discoveryv1.EndpointSlice {
			slice := newSlice(ns, "many", name, 8080)
			slice.Endpoints = nil
			ready := true
			for i := from; i < from+n; i++ {
				slice.Endpoints = append(slice.Endpoints, discoveryv1.Endpoint{
					Addresses:  []string{fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255)},
					Conditions: discoveryv1.EndpointConditions{Ready: &ready},
				})
			}
			return slice
		}
		_, err = e.client.DiscoveryV1().EndpointSlices(ns).Create(ctx, manySlice("many-all", 10000, 0), metav1.CreateOptions{})
		require.Error(t, err, "an EndpointSlice of 10,000 endpoints")
		arrive("Service bad/many: 10 EndpointSlices of 1,000 endpoints and its Ingress", func() error {
			for i := range 10 {
				if _, err := e.client.DiscoveryV1().EndpointSlices(ns).Create(ctx, manySlice(fmt.Sprintf("many-%d", i), 1000, 1000*i), metav1.CreateOptions{}); err != nil {
					return err
				}
			}
			_, err := e.client.NetworkingV1().Ingresses(ns).Create(ctx, newIngress(ns, "many", "ramjet", "many.test", "many", "/"), metav1.CreateOptions{})
			return err
		})
		// A TLS Secret whose certificate is garbage.
		arrive("Secret bad/garbage and its Ingress", func() error {
			_, err := e.client.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "garbage"},
				Type:       corev1.SecretTypeTLS,
				Data:       map[string][]byte{corev1.TLSCertKey: []byte("-----BEGIN CERTIFICATE-----\ngarbage\n-----END CERTIFICATE-----\n"), corev1.TLSPrivateKeyKey: []byte("not a key")},
			}, metav1.CreateOptions{})
			if err != nil {
				return err
			}
			ing := newIngress(ns, "garbage-tls", "ramjet", "garbage.test", "a", "/")
			ing.Spec.TLS = []networkingv1.IngressTLS{{Hosts: []string{"garbage.test"}, SecretName: "garbage"}}
			_, err = e.client.NetworkingV1().Ingresses(ns).Create(ctx, ing, metav1.CreateOptions{})
			return err
		})
		time.Sleep(500 * time.Millisecond)
		traffic.check(t, "traffic to good.test")

		// Each bad object is reported, about itself.
		reasons := map[string][]string{}
		for _, w := range tc.cluster.last.Load().Warnings {
			reasons[w.Object.String()] = append(reasons[w.Object.String()], string(w.Reason))
		}
		t.Logf("warnings per object: %v", reasons)
		require.Subset(t, reasons["Ingress bad/broken"], []string{"ServiceNotFound", "PathRejected", "BackendUnsupported", "AnnotationRejected", "CanaryWithoutPrimary"})
		require.NotEmpty(t, reasons["Ingress bad/huge-regex"], "the 1 MiB regex")
		require.Contains(t, reasons["Ingress bad/garbage-tls"], "SecretInvalid")
		for object := range reasons {
			require.Contains(t, []string{"Ingress bad/broken", "Ingress bad/huge-regex", "Ingress bad/garbage-tls"}, object, "a warning about an object that is fine")
		}
		// The rest of each bad object is served, as are the good ones,
		// and a change still takes one quick rebuild: no bad object makes
		// every compile slow.
		began := time.Now()
		e.createIngress(t, newIngress(ns, "good2", "ramjet", "good2.test", "a", "/"))
		tc.waitAnswer(t, "good2.test", "/", http.StatusOK, "A /")
		t.Logf("a new Ingress served %s after it was created, beside the bad objects", time.Since(began).Round(time.Millisecond))
		require.Less(t, time.Since(began), 2*time.Second, "a change served beside the bad objects")
		// The host whose certificate is garbage is still served, over
		// HTTPS with the default certificate.
		https := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{ServerName: "garbage.test", InsecureSkipVerify: true}}}
		defer https.CloseIdleConnections()
		status, body := get(t, https, "https://"+tc.HTTPSAddr+"/", "garbage.test")
		require.Equal(t, http.StatusOK, status, body)
		require.Equal(t, "A /", body)
		status, body = tc.get(t, "many.test", "/")
		require.Equal(t, http.StatusBadGateway, status, "10,000 endpoints nowhere: %s", body)
		endpoints := 0
		for b := range tc.router.Table().Backends() {
			if b.Name == "many" {
				endpoints += len(b.Endpoints)
			}
		}
		require.Equal(t, 10000, endpoints, "the endpoints of Service bad/many in the table")
	})
}

// writeLog records, per Ingress of a namespace, the changes of its status
// and the Warning Events posted on it, from watches on the API server.
type writeLog struct {
	mu     sync.Mutex
	status map[string]int
	event  map[string]int
	lines  []string
}

func watchWrites(t testing.TB, e *e2e, ns string) *writeLog {
	t.Helper()
	w := &writeLog{status: map[string]int{}, event: map[string]int{}}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	ings, err := e.client.NetworkingV1().Ingresses(ns).Watch(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	events, err := e.client.CoreV1().Events(ns).Watch(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	go func() {
		last := map[string]string{}
		for ev := range ings.ResultChan() {
			ing, ok := ev.Object.(*networkingv1.Ingress)
			if !ok {
				continue
			}
			st := fmt.Sprint(ing.Status.LoadBalancer.Ingress)
			w.mu.Lock()
			if prev, seen := last[ing.Name]; (seen && prev != st) || (!seen && len(ing.Status.LoadBalancer.Ingress) > 0) {
				w.status[ing.Name]++
				w.lines = append(w.lines, fmt.Sprintf("status of %s: %s", ing.Name, st))
			}
			last[ing.Name] = st
			w.mu.Unlock()
		}
	}()
	go func() {
		for ev := range events.ResultChan() {
			if event, ok := ev.Object.(*corev1.Event); ok && ev.Type == watch.Added {
				w.mu.Lock()
				w.event[event.InvolvedObject.Name]++
				w.lines = append(w.lines, fmt.Sprintf("Event on %s by %s: %s %s", event.InvolvedObject.Name, event.Source.Host, event.Reason, event.Message))
				w.mu.Unlock()
			}
		}
	}()
	return w
}

func (w *writeLog) statuses(name string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.status[name]
}

func (w *writeLog) events(name string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.event[name]
}

func (w *writeLog) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return "\n" + strings.Join(w.lines, "\n")
}

// apiRequests counts the controller's LIST requests per resource through a
// wrapped client transport, and can hold its requests back.
type apiRequests struct {
	mu       sync.Mutex
	list     map[string]int
	released chan struct{} // nil: requests pass
}

func (a *apiRequests) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		a.mu.Lock()
		released := a.released
		a.mu.Unlock()
		if released != nil {
			select {
			case <-released:
			case <-req.Context().Done():
				return nil, req.Context().Err()
			}
		}
		resp, err := rt.RoundTrip(req)
		if err == nil && req.Method == http.MethodGet && req.URL.Query().Get("watch") != "true" && resp.StatusCode == http.StatusOK {
			parts := strings.Split(req.URL.Path, "/")
			a.mu.Lock()
			if a.list != nil {
				a.list[parts[len(parts)-1]]++
			}
			a.mu.Unlock()
		}
		return resp, err
	})
}

// hold makes new requests wait for release, which counts afresh.
func (a *apiRequests) hold() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.released = make(chan struct{})
}

func (a *apiRequests) release() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.list = map[string]int{}
	close(a.released)
	a.released = nil
}

func (a *apiRequests) lists() map[string]int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return maps.Clone(a.list)
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// readyzOK asks the controller's /readyz; anything but 200 is an error.
func readyzOK(client *http.Client, debugAddr string) error {
	resp, err := client.Get("http://" + debugAddr + "/readyz")
	if err != nil {
		return fmt.Errorf("GET /readyz: %w", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET /readyz: %d %q", resp.StatusCode, body)
	}
	return nil
}

// waitLeading reports whether tc leads within timeout.
func waitLeading(tc *testController, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if tc.cluster.leading.Load() {
			return true
		}
		time.Sleep(10 * time.Millisecond)
	}
	return false
}

// TestDialUntilAccepted checks that a refused connection to the API server
// is tried again until the port opens, and given up when the context ends.
func TestDialUntilAccepted(t *testing.T) {
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(int(freePort(t))))
	dial := dialUntilAccepted(nil)

	ctx, cancel := context.WithTimeout(context.Background(), 3*redialInterval)
	defer cancel()
	_, err := dial(ctx, "tcp", addr)
	require.ErrorIs(t, err, syscall.ECONNREFUSED, "nothing listens: refused once the context ends")

	accepted := make(chan error, 1)
	go func() {
		conn, err := dial(context.Background(), "tcp", addr)
		if err == nil {
			conn.Close()
		}
		accepted <- err
	}()
	time.Sleep(3 * redialInterval)
	select {
	case err := <-accepted:
		t.Fatalf("dial returned before anything listened: %v", err)
	default:
	}
	ln, err := net.Listen("tcp", addr)
	require.NoError(t, err)
	defer ln.Close()
	select {
	case err := <-accepted:
		require.NoError(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("dial did not connect after the port opened")
	}
}
