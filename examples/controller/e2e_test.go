package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"net/netip"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	"ramjet.dev/ramjet/compile"
	"ramjet.dev/ramjet/examples/kubetest"
)

// Lease timings short enough for a takeover within a test, long enough
// for a loaded machine to renew in time.
const (
	testLeaseDuration = 4 * time.Second
	testRenewDeadline = 3 * time.Second
	testRetryPeriod   = 250 * time.Millisecond
)

// clientGoLog receives client-go's own warnings and errors (reflector list
// failures, lease errors) during the tests, besides stderr.
var clientGoLog = &syncBuffer{}

func TestMain(m *testing.M) {
	// client-go logs through the global klog; its info lines (every lease
	// acquired) would drown the test and benchmark output.
	klog.SetSlogLogger(slog.New(slog.NewTextHandler(io.MultiWriter(os.Stderr, clientGoLog), &slog.HandlerOptions{Level: slog.LevelWarn})))
	os.Exit(m.Run())
}

// e2e is one API server shared by the subtests of a test; each subtest
// works in a namespace of its own, with controllers that watch only it.
type e2e struct {
	srv    *kubetest.Server
	client kubernetes.Interface
}

func startE2E(t testing.TB) *e2e {
	srv := kubetest.Start(t)
	e := &e2e{srv: srv, client: srv.Client(t)}
	for name, controller := range map[string]string{"ramjet": "ramjet.dev/ingress", "other": "example.com/other"} {
		_, err := e.client.NetworkingV1().IngressClasses().Create(context.Background(), &networkingv1.IngressClass{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec:       networkingv1.IngressClassSpec{Controller: controller},
		}, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	return e
}

func (e *e2e) namespace(t testing.TB, name string) string {
	t.Helper()
	_, err := e.client.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{Name: name},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	return name
}

// testController is a controller running in-process against the test API
// server, on loopback ports chosen by the kernel.
type testController struct {
	*instance
	cfg    config
	logs   *syncBuffer
	cancel context.CancelFunc
	http   *http.Client
	once   sync.Once
}

// startController runs the cluster mode on namespace ns, as identity
// "replica-a" unless tweak says otherwise, and waits for the first table.
func (e *e2e) startController(t testing.TB, ns string, tweak func(*config)) *testController {
	t.Helper()
	return e.startControllerAs(t, e.srv.Config, ns, tweak)
}

// startControllerAs is startController with the client configuration rc.
func (e *e2e) startControllerAs(t testing.TB, rc *rest.Config, ns string, tweak func(*config)) *testController {
	t.Helper()
	cfg := config{
		httpAddr:          "127.0.0.1:0",
		debugAddr:         "127.0.0.1:0",
		namespace:         ns,
		electionID:        "ramjet-leader",
		electionNamespace: ns,
		identity:          "replica-a",
		leaseDuration:     testLeaseDuration,
		renewDeadline:     testRenewDeadline,
		retryPeriod:       testRetryPeriod,
		backendTransport:  loopbackTransport(),
	}
	if tweak != nil {
		tweak(&cfg)
	}
	cfg.setClusterDefaults()
	logs := &syncBuffer{}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	ctx, cancel := context.WithCancel(context.Background())
	inst, err := startCluster(ctx, cfg, logger, rc)
	if err != nil {
		cancel()
		t.Fatalf("starting controller %s: %v", cfg.identity, err)
	}
	tc := &testController{instance: inst, cfg: cfg, logs: logs, cancel: cancel, http: &http.Client{Timeout: 5 * time.Second}}
	t.Cleanup(func() {
		tc.stop(t)
		if t.Failed() {
			t.Logf("log of controller %s:\n%s", cfg.identity, logs)
		}
	})
	waitFor(t, firstTableTimeout, "controller "+cfg.identity+" to publish its first table", func() bool {
		return inst.cluster.ready.Load()
	})
	return tc
}

// firstTableTimeout bounds the wait for a controller's first table.
var firstTableTimeout = 20 * time.Second

// stop shuts the controller down and waits for it, releasing its Lease.
func (tc *testController) stop(t testing.TB) {
	tc.once.Do(func() {
		tc.cancel()
		done := make(chan error, 1)
		go func() { done <- tc.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("controller %s shutdown: %v", tc.cfg.identity, err)
			}
		case <-time.After(20 * time.Second):
			t.Errorf("controller %s did not shut down", tc.cfg.identity)
		}
		tc.http.CloseIdleConnections()
		if tr, ok := tc.cfg.backendTransport.(*http.Transport); ok {
			tr.CloseIdleConnections()
		}
	})
}

// get sends one request through the controller.
func (tc *testController) get(t testing.TB, host, path string) (int, string) {
	t.Helper()
	return get(t, tc.http, "http://"+tc.HTTPAddr+path, host)
}

// login sends GET host/x with alice's basic credentials and returns the status.
func (tc *testController) login(t testing.TB, host, password string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, "http://"+tc.HTTPAddr+"/x", nil)
	require.NoError(t, err)
	req.Host = host
	req.SetBasicAuth("alice", password)
	res, err := tc.http.Do(req)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.StatusCode
}

// waitAnswer polls until host+path answers status (and body, when not
// empty).
func (tc *testController) waitAnswer(t testing.TB, host, path string, status int, body string) {
	t.Helper()
	var gotStatus int
	var gotBody string
	waitFor(t, 10*time.Second, fmt.Sprintf("%s%s to answer %d %q", host, path, status, body), func() bool {
		gotStatus, gotBody = tc.get(t, host, path)
		return gotStatus == status && (body == "" || gotBody == body)
	}, func() string { return fmt.Sprintf("last answer: %d %q", gotStatus, gotBody) })
}

// settle waits until every event has been covered by a finished rebuild.
func (tc *testController) settle(t testing.TB) stats {
	t.Helper()
	waitFor(t, 10*time.Second, "the controller to settle", func() bool { return tc.cluster.stats().Settled })
	return tc.cluster.stats()
}

// waitFor polls cond every 5 ms until it holds or timeout passes; detail,
// if given, adds to the failure message.
func waitFor(t testing.TB, timeout time.Duration, what string, cond func() bool, detail ...func() string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			msg := "timed out after " + timeout.String() + " waiting for " + what
			for _, d := range detail {
				msg += "; " + d()
			}
			t.Fatal(msg)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func backendPort(t testing.TB, port string) int32 {
	n, err := strconv.ParseInt(port, 10, 32)
	require.NoError(t, err)
	return int32(n)
}

func newService(ns, name string) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: corev1.ServiceSpec{
			Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080), Protocol: corev1.ProtocolTCP}},
		},
	}
}

// testNet holds the endpoint addresses of the tests. The API server refuses
// loopback addresses in EndpointSlices, so the slices carry TEST-NET-1
// addresses (RFC 5737, never routed) and the controller under test reaches
// them through loopbackTransport.
var testNet = netip.MustParsePrefix("192.0.2.0/24")

const testEndpoint = "192.0.2.10"

// loopbackTransport dials a test endpoint's port on 127.0.0.1, where the
// httptest backend listens, and refuses every other address, so nothing
// ever leaves the machine.
func loopbackTransport() *http.Transport {
	dialer := &net.Dialer{Timeout: 5 * time.Second}
	return &http.Transport{
		Proxy: nil,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			host, port, err := net.SplitHostPort(addr)
			if err != nil {
				return nil, err
			}
			if ip, err := netip.ParseAddr(host); err != nil || !testNet.Contains(ip) {
				return nil, fmt.Errorf("test transport: %s is not a test endpoint", addr)
			}
			return dialer.DialContext(ctx, network, net.JoinHostPort("127.0.0.1", port))
		},
		DisableCompression:  true,
		MaxIdleConnsPerHost: 64,
	}
}

// newSlice is an EndpointSlice of Service svc with one ready endpoint,
// testEndpoint at port.
func newSlice(ns, svc, name string, port int32) *discoveryv1.EndpointSlice {
	ready := true
	proto := corev1.ProtocolTCP
	portName := "http"
	return &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{discoveryv1.LabelServiceName: svc}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: &portName, Port: &port, Protocol: &proto}},
		Endpoints: []discoveryv1.Endpoint{{
			Addresses:  []string{testEndpoint},
			Conditions: discoveryv1.EndpointConditions{Ready: &ready},
		}},
	}
}

// newIngress routes host's paths (Prefix, or ImplementationSpecific when
// they start with "~") to svc port 80, under IngressClass class.
func newIngress(ns, name, class, host, svc string, paths ...string) *networkingv1.Ingress {
	var httpPaths []networkingv1.HTTPIngressPath
	for _, p := range paths {
		typ := networkingv1.PathTypePrefix
		if rest, ok := strings.CutPrefix(p, "~"); ok {
			p, typ = rest, networkingv1.PathTypeImplementationSpecific
		}
		httpPaths = append(httpPaths, networkingv1.HTTPIngressPath{
			Path:     p,
			PathType: &typ,
			Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{
				Name: svc, Port: networkingv1.ServiceBackendPort{Number: 80},
			}},
		})
	}
	return &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: networkingv1.IngressSpec{
			IngressClassName: &class,
			Rules: []networkingv1.IngressRule{{
				Host:             host,
				IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{Paths: httpPaths}},
			}},
		},
	}
}

// app creates a Service with one EndpointSlice pointing at port.
func (e *e2e) app(t testing.TB, ns, name string, port int32) {
	t.Helper()
	ctx := context.Background()
	_, err := e.client.CoreV1().Services(ns).Create(ctx, newService(ns, name), metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = e.client.DiscoveryV1().EndpointSlices(ns).Create(ctx, newSlice(ns, name, name+"-1", port), metav1.CreateOptions{})
	require.NoError(t, err)
}

func (e *e2e) createIngress(t testing.TB, ing *networkingv1.Ingress) *networkingv1.Ingress {
	t.Helper()
	out, err := e.client.NetworkingV1().Ingresses(ing.Namespace).Create(context.Background(), ing, metav1.CreateOptions{})
	require.NoError(t, err)
	return out
}

func (e *e2e) ingressStatus(t testing.TB, ns, name string) []networkingv1.IngressLoadBalancerIngress {
	t.Helper()
	ing, err := e.client.NetworkingV1().Ingresses(ns).Get(context.Background(), name, metav1.GetOptions{})
	require.NoError(t, err)
	return ing.Status.LoadBalancer.Ingress
}

func ips(addrs ...string) []networkingv1.IngressLoadBalancerIngress {
	var out []networkingv1.IngressLoadBalancerIngress
	for _, a := range addrs {
		out = append(out, networkingv1.IngressLoadBalancerIngress{IP: a})
	}
	return out
}

// TestE2E runs the controller against a real API server and checks what
// clients see (SPEC §14–§17).
func TestE2E(t *testing.T) {
	e := startE2E(t)
	ctx := context.Background()

	t.Run("new Ingress served, edited path moves, /readyz and /metrics", func(t *testing.T) {
		ns := e.namespace(t, "served")
		tc := e.startController(t, ns, func(c *config) { c.enableMetrics = true })
		e.app(t, ns, "a", backendPort(t, namedBackend(t, "A")))
		gen := tc.router.Generation()

		ing := e.createIngress(t, newIngress(ns, "app", "ramjet", "app.test", "a", "/one"))
		tc.waitAnswer(t, "app.test", "/one/x", http.StatusOK, "A /one/x")
		require.Greater(t, tc.router.Generation(), gen)

		ing.Spec.Rules[0].HTTP.Paths[0].Path = "/two"
		_, err := e.client.NetworkingV1().Ingresses(ns).Update(ctx, ing, metav1.UpdateOptions{})
		require.NoError(t, err)
		tc.waitAnswer(t, "app.test", "/two", http.StatusOK, "A /two")
		// One table carries the edit: the old path is gone with it.
		status, body := tc.get(t, "app.test", "/one/x")
		require.Equal(t, http.StatusNotFound, status, body)

		waitFor(t, 10*time.Second, "the only replica to lead", func() bool { return tc.cluster.leading.Load() })
		status, body = get(t, tc.http, "http://"+tc.DebugAddr+"/readyz", "")
		require.Equal(t, http.StatusOK, status, body)
		metrics := scrapeURL(t, tc.http, tc.DebugAddr)
		require.Equal(t, float64(tc.router.Generation()), metrics.value("ramjet_table_generation", nil))
		require.Equal(t, 1.0, metrics.value("nginx_ingress_controller_leader_election_status", map[string]string{"name": "ramjet-leader"}))
	})

	t.Run("Service deleted answers 503, recreated heals", func(t *testing.T) {
		ns := e.namespace(t, "heal")
		tc := e.startController(t, ns, nil)
		e.app(t, ns, "a", backendPort(t, namedBackend(t, "A")))
		e.createIngress(t, newIngress(ns, "app", "ramjet", "app.test", "a", "/"))
		tc.waitAnswer(t, "app.test", "/", http.StatusOK, "A /")

		require.NoError(t, e.client.CoreV1().Services(ns).Delete(ctx, "a", metav1.DeleteOptions{}))
		tc.waitAnswer(t, "app.test", "/", http.StatusServiceUnavailable, "")

		// The EndpointSlice stayed (nothing garbage-collects it here); the
		// Service coming back is all it takes.
		_, err := e.client.CoreV1().Services(ns).Create(ctx, newService(ns, "a"), metav1.CreateOptions{})
		require.NoError(t, err)
		tc.waitAnswer(t, "app.test", "/", http.StatusOK, "A /")
	})

	t.Run("fifty EndpointSlice updates in a burst cost one rebuild", func(t *testing.T) {
		ns := e.namespace(t, "burst")
		tc := e.startController(t, ns, nil)
		portA := backendPort(t, namedBackend(t, "A"))
		portB := backendPort(t, namedBackend(t, "B"))
		_, err := e.client.CoreV1().Services(ns).Create(ctx, newService(ns, "a"), metav1.CreateOptions{})
		require.NoError(t, err)
		// Ten slices updated five times each, in parallel: the whole burst
		// takes a fraction of the 200 ms debounce per update.
		const slices, updates = 10, 5
		current := make([]*discoveryv1.EndpointSlice, slices)
		for i := range current {
			current[i], err = e.client.DiscoveryV1().EndpointSlices(ns).Create(ctx, newSlice(ns, "a", fmt.Sprintf("a-%d", i), portA), metav1.CreateOptions{})
			require.NoError(t, err)
		}
		e.createIngress(t, newIngress(ns, "app", "ramjet", "app.test", "a", "/"))
		tc.waitAnswer(t, "app.test", "/", http.StatusOK, "A /")
		before := tc.settle(t)

		began := time.Now()
		var wg sync.WaitGroup
		errs := make(chan error, slices*updates)
		// done are the instants the updates returned: a gap between two of
		// them longer than the debounce (a starved machine) makes a second
		// rebuild correct, and the count then means nothing.
		var doneMu sync.Mutex
		var done []time.Time
		for i := range current {
			wg.Go(func() {
				s := current[i]
				for u := range updates {
					s = s.DeepCopy()
					s.Labels["burst"] = strconv.Itoa(u)
					if u == updates-1 {
						s.Ports[0].Port = &portB // the last update of each slice moves it to B
					}
					var err error
					if s, err = e.client.DiscoveryV1().EndpointSlices(ns).Update(ctx, s, metav1.UpdateOptions{}); err != nil {
						errs <- err
						return
					}
					doneMu.Lock()
					done = append(done, time.Now())
					doneMu.Unlock()
				}
			})
		}
		wg.Wait()
		burst := time.Since(began)
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
		require.Less(t, burst, 800*time.Millisecond, "the burst must fit well inside the 1 s bound for the count to mean anything")
		sort.Slice(done, func(i, j int) bool { return done[i].Before(done[j]) })
		var gap time.Duration
		for i := 1; i < len(done); i++ {
			gap = max(gap, done[i].Sub(done[i-1]))
		}
		if gap >= tc.cfg.debounce/2 {
			t.Skipf("the machine stalled the burst: %v between two updates, against a %v debounce", gap, tc.cfg.debounce)
		}

		waitFor(t, 10*time.Second, "all fifty events to arrive and be rebuilt", func() bool {
			s := tc.cluster.stats()
			return s.Events >= before.Events+slices*updates && s.Settled
		})
		time.Sleep(2 * tc.cfg.debounce) // room for a second rebuild, which must not come
		after := tc.cluster.stats()
		t.Logf("burst: %d events in %v, %d rebuild(s)", after.Events-before.Events, burst.Round(time.Millisecond), after.Rebuilds-before.Rebuilds)
		require.Equal(t, before.Events+slices*updates, after.Events)
		require.Equal(t, before.Rebuilds+1, after.Rebuilds, "burst of %d events took %v", after.Events-before.Events, burst)
		require.Equal(t, before.Generation+1, after.Generation)
		for range 5 {
			status, body := tc.get(t, "app.test", "/")
			require.Equal(t, http.StatusOK, status, body)
			require.Equal(t, "B /", body, "every slice points at B")
		}
	})

	t.Run("resync re-delivers everything and costs nothing", func(t *testing.T) {
		ns := e.namespace(t, "resync")
		tc := e.startController(t, ns, func(c *config) { c.resync = time.Second }) // client-go's minimum
		e.app(t, ns, "a", backendPort(t, namedBackend(t, "A")))
		e.createIngress(t, newIngress(ns, "app", "ramjet", "app.test", "a", "/"))
		tc.waitAnswer(t, "app.test", "/", http.StatusOK, "A /")
		before := tc.settle(t)

		// Each resync hands every object to the handlers again, as a
		// relist after an expired watch does, with the resourceVersion it
		// had: that is no change, and costs no rebuild.
		time.Sleep(2500 * time.Millisecond)
		after := tc.settle(t)
		require.Equal(t, before.Rebuilds, after.Rebuilds, "two resyncs must cost no rebuild")
		require.Equal(t, before.Events, after.Events, "a re-delivered object is no change")
		status, body := tc.get(t, "app.test", "/")
		require.Equal(t, http.StatusOK, status, body)
		// A real change after them is still a rebuild.
		e.app(t, ns, "b", backendPort(t, namedBackend(t, "B")))
		waitFor(t, 10*time.Second, "the new Service's rebuild", func() bool { return tc.cluster.stats().Rebuilds > after.Rebuilds })
	})

	t.Run("broken Ingress gets a Warning Event, every other route still served", func(t *testing.T) {
		ns := e.namespace(t, "broken")
		tc := e.startController(t, ns, nil)
		e.app(t, ns, "a", backendPort(t, namedBackend(t, "A")))
		e.createIngress(t, newIngress(ns, "good", "ramjet", "good.test", "a", "/"))
		// The API server accepts any ImplementationSpecific path beginning
		// with "/"; as a regular expression this one does not compile.
		e.createIngress(t, newIngress(ns, "broken", "ramjet", "broken.test", "a", "/ok", "~/api/("))

		tc.waitAnswer(t, "broken.test", "/ok", http.StatusOK, "A /ok")
		status, body := tc.get(t, "good.test", "/anything")
		require.Equal(t, http.StatusOK, status, body)
		require.Equal(t, "A /anything", body)
		status, body = tc.get(t, "broken.test", "/api/(")
		require.Equal(t, http.StatusNotFound, status, body)

		var events []corev1.Event
		waitFor(t, 10*time.Second, "a Warning Event on Ingress broken", func() bool {
			list, err := e.client.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=broken"})
			require.NoError(t, err)
			events = list.Items
			return len(events) > 0
		})
		require.Len(t, events, 1, "one problem, one Event")
		ev := events[0]
		require.Equal(t, corev1.EventTypeWarning, ev.Type)
		require.Equal(t, "PathRejected", ev.Reason)
		require.Equal(t, "Ingress", ev.InvolvedObject.Kind)
		require.Contains(t, ev.Message, "spec.rules[0].http.paths[1].path")
		require.Equal(t, "replica-a", ev.Source.Host)
		good, err := e.client.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=good"})
		require.NoError(t, err)
		require.Empty(t, good.Items, "the healthy Ingress gets no Event")
	})

	t.Run("status on claimed Ingresses only, written by the leader only", func(t *testing.T) {
		ns := e.namespace(t, "status")
		e.app(t, ns, "a", backendPort(t, namedBackend(t, "A")))
		e.createIngress(t, newIngress(ns, "mine", "ramjet", "mine.test", "a", "/"))
		e.createIngress(t, newIngress(ns, "theirs", "other", "theirs.test", "a", "/"))
		e.createIngress(t, newIngress(ns, "broken", "ramjet", "broken.test", "a", "~/api/("))

		// The replicas advertise different addresses, so the status shows
		// which one wrote it.
		a := e.startController(t, ns, func(c *config) { c.identity, c.publishAddresses = "replica-a", []string{"192.0.2.1"} })
		waitFor(t, 10*time.Second, "replica-a to lead", func() bool { return a.cluster.leading.Load() })
		b := e.startController(t, ns, func(c *config) { c.identity, c.publishAddresses = "replica-b", []string{"192.0.2.2"} })
		b.waitAnswer(t, "mine.test", "/", http.StatusOK, "A /")

		waitFor(t, 10*time.Second, "replica-a's status on Ingress mine", func() bool {
			return cmp.Equal(ips("192.0.2.1"), e.ingressStatus(t, ns, "mine"))
		})
		lease, err := e.client.CoordinationV1().Leases(ns).Get(ctx, "ramjet-leader", metav1.GetOptions{})
		require.NoError(t, err)
		require.Equal(t, "replica-a", *lease.Spec.HolderIdentity)
		require.False(t, b.cluster.leading.Load(), "exactly one replica leads")

		// A change both replicas rebuild for: the follower must not write.
		gens := [2]uint64{a.router.Generation(), b.router.Generation()}
		e.createIngress(t, newIngress(ns, "mine2", "ramjet", "mine2.test", "a", "/"))
		a.waitAnswer(t, "mine2.test", "/", http.StatusOK, "A /")
		b.waitAnswer(t, "mine2.test", "/", http.StatusOK, "A /")
		require.Greater(t, a.router.Generation(), gens[0])
		require.Greater(t, b.router.Generation(), gens[1])
		waitFor(t, 10*time.Second, "replica-a's status on Ingress mine2", func() bool {
			return cmp.Equal(ips("192.0.2.1"), e.ingressStatus(t, ns, "mine2"))
		})
		a.settle(t)
		b.settle(t)
		time.Sleep(300 * time.Millisecond) // a stray write by the follower would land by now
		require.Equal(t, ips("192.0.2.1"), e.ingressStatus(t, ns, "mine"))
		require.Equal(t, ips("192.0.2.1"), e.ingressStatus(t, ns, "mine2"))
		require.Empty(t, e.ingressStatus(t, ns, "theirs"), "an Ingress of another class gets no status")
		require.NotContains(t, b.logs.String(), "Ingress status written")

		// The leader posted the broken Ingress's Event; the follower did not.
		list, err := e.client.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=broken"})
		require.NoError(t, err)
		require.Len(t, list.Items, 1)
		require.Equal(t, "replica-a", list.Items[0].Source.Host)

		// The leader goes away: it releases the Lease, the other takes
		// over and rewrites the status with its own address.
		a.stop(t)
		waitFor(t, 3*testLeaseDuration, "replica-b to lead", func() bool { return b.cluster.leading.Load() })
		for _, name := range []string{"mine", "mine2"} {
			waitFor(t, 10*time.Second, "replica-b's status on Ingress "+name, func() bool {
				return cmp.Equal(ips("192.0.2.2"), e.ingressStatus(t, ns, name))
			})
		}
		require.Empty(t, e.ingressStatus(t, ns, "theirs"), "an Ingress of another class gets no status")
		lease, err = e.client.CoordinationV1().Leases(ns).Get(ctx, "ramjet-leader", metav1.GetOptions{})
		require.NoError(t, err)
		require.Equal(t, "replica-b", *lease.Spec.HolderIdentity)
		// A new leader does not post again the problems an earlier
		// leader's Events already show.
		b.settle(t)
		time.Sleep(500 * time.Millisecond) // its first status pass has run
		list, err = e.client.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=broken"})
		require.NoError(t, err)
		require.Len(t, list.Items, 1)
		require.Equal(t, "replica-a", list.Items[0].Source.Host)
	})

	t.Run("no-status-update writes nothing", func(t *testing.T) {
		ns := e.namespace(t, "nostatus")
		e.app(t, ns, "a", backendPort(t, namedBackend(t, "A")))
		e.createIngress(t, newIngress(ns, "mine", "ramjet", "mine.test", "a", "/"))
		tc := e.startController(t, ns, func(c *config) { c.publishAddresses, c.noStatusUpdate = []string{"192.0.2.1"}, true })
		tc.waitAnswer(t, "mine.test", "/", http.StatusOK, "A /")
		waitFor(t, 10*time.Second, "the replica to lead", func() bool { return tc.cluster.leading.Load() })
		tc.settle(t)
		time.Sleep(300 * time.Millisecond) // a write would land by now
		require.Empty(t, e.ingressStatus(t, ns, "mine"))
	})

	t.Run("publish Service and default backend outside -namespace", func(t *testing.T) {
		ns := e.namespace(t, "publish")
		system := e.namespace(t, "publish-system")
		e.app(t, ns, "a", backendPort(t, namedBackend(t, "A")))
		e.app(t, system, "fallback", backendPort(t, namedBackend(t, "F")))
		e.createIngress(t, newIngress(ns, "mine", "ramjet", "mine.test", "a", "/"))
		lb := newService(system, "ramjet")
		lb.Spec.ExternalIPs = []string{"198.51.100.7"}
		lb.Spec.Type = corev1.ServiceTypeNodePort
		lb, err := e.client.CoreV1().Services(system).Create(ctx, lb, metav1.CreateOptions{})
		require.NoError(t, err)
		tc := e.startController(t, ns, func(c *config) {
			c.publishService = &types.NamespacedName{Namespace: system, Name: "ramjet"}
			c.options.DefaultBackend = &compile.ServiceRef{Namespace: system, Name: "fallback", Port: "80"}
		})
		waitFor(t, 10*time.Second, "the Service's external IP in the status", func() bool {
			return cmp.Equal(ips("198.51.100.7"), e.ingressStatus(t, ns, "mine"))
		})
		status, body := tc.get(t, "unknown.test", "/x")
		require.Equal(t, http.StatusOK, status, body)
		require.Equal(t, "F /x", body, "the default backend, from a namespace outside -namespace")

		lb.Spec.ExternalIPs = []string{"198.51.100.8", "198.51.100.9"}
		_, err = e.client.CoreV1().Services(system).Update(ctx, lb, metav1.UpdateOptions{})
		require.NoError(t, err)
		waitFor(t, 10*time.Second, "the new external IPs in the status", func() bool {
			return cmp.Equal(ips("198.51.100.8", "198.51.100.9"), e.ingressStatus(t, ns, "mine"))
		})
		// Ingresses outside -namespace are not ours to serve.
		e.createIngress(t, newIngress(system, "elsewhere", "ramjet", "elsewhere.test", "fallback", "/only"))
		tc.settle(t)
		status, body = tc.get(t, "elsewhere.test", "/only")
		require.Equal(t, http.StatusOK, status, body)
		require.Equal(t, "F /only", body, "answered by the default backend, not by an Ingress route")
		require.Empty(t, e.ingressStatus(t, system, "elsewhere"))
	})

	t.Run("TLS Secret served by SNI, and its rotation", func(t *testing.T) {
		ns := e.namespace(t, "tls")
		e.app(t, ns, "a", backendPort(t, namedBackend(t, "A")))
		secret := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cert"},
			Type:       corev1.SecretTypeTLS,
			Data:       selfSignedPair(t, "secure.test", 1),
		}
		secret, err := e.client.CoreV1().Secrets(ns).Create(ctx, secret, metav1.CreateOptions{})
		require.NoError(t, err)
		// An Opaque Secret of the same shape stays out of the cache.
		_, err = e.client.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "opaque"},
			Data:       selfSignedPair(t, "secure.test", 9),
		}, metav1.CreateOptions{})
		require.NoError(t, err)
		ing := newIngress(ns, "secure", "ramjet", "secure.test", "a", "/")
		ing.Spec.TLS = []networkingv1.IngressTLS{{Hosts: []string{"secure.test"}, SecretName: "cert"}}
		e.createIngress(t, ing)
		tc := e.startController(t, ns, func(c *config) { c.httpsAddr = "127.0.0.1:0" })

		serial := func() int64 {
			conn, err := tls.Dial("tcp", tc.HTTPSAddr, &tls.Config{ServerName: "secure.test", InsecureSkipVerify: true})
			require.NoError(t, err)
			defer conn.Close()
			return conn.ConnectionState().PeerCertificates[0].SerialNumber.Int64()
		}
		waitFor(t, 10*time.Second, "the Secret's certificate", func() bool { return serial() == 1 })
		// Plain HTTP redirects to HTTPS for a TLS host (SPEC §12).
		noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		req, err := http.NewRequest(http.MethodGet, "http://"+tc.HTTPAddr+"/x", nil)
		require.NoError(t, err)
		req.Host = "secure.test"
		resp, err := noRedirect.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusPermanentRedirect, resp.StatusCode)
		require.Equal(t, "https://secure.test/x", resp.Header.Get("Location"))
		// Opaque Secrets are watched for auth-secret passwords; this one
		// never serves a certificate (the serial stays 1).
		require.Len(t, tc.cluster.snapshot().Secrets, 2, "the kubernetes.io/tls and Opaque Secrets are watched")

		secret.Data = selfSignedPair(t, "secure.test", 2)
		_, err = e.client.CoreV1().Secrets(ns).Update(ctx, secret, metav1.UpdateOptions{})
		require.NoError(t, err)
		waitFor(t, 10*time.Second, "the rotated certificate", func() bool { return serial() == 2 })
	})

	t.Run("basic auth from an Opaque Secret, and a password rotated", func(t *testing.T) {
		ns := e.namespace(t, "basicauth")
		e.app(t, ns, "a", backendPort(t, namedBackend(t, "A")))
		secret, err := e.client.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "htpasswd"},
			Data:       map[string][]byte{"auth": []byte("alice:{PLAIN}first\n")},
		}, metav1.CreateOptions{})
		require.NoError(t, err)
		ing := newIngress(ns, "private", "ramjet", "private.test", "a", "/")
		ing.Annotations = map[string]string{
			"nginx.ingress.kubernetes.io/auth-type":   "basic",
			"nginx.ingress.kubernetes.io/auth-secret": "htpasswd",
		}
		e.createIngress(t, ing)
		tc := e.startController(t, ns, nil)
		login := func(password string) int { return tc.login(t, "private.test", password) }
		tc.waitAnswer(t, "private.test", "/x", http.StatusUnauthorized, "")
		require.Equal(t, http.StatusOK, login("first"))

		secret.Data["auth"] = []byte("alice:{PLAIN}second\n")
		_, err = e.client.CoreV1().Secrets(ns).Update(ctx, secret, metav1.UpdateOptions{})
		require.NoError(t, err)
		waitFor(t, 10*time.Second, "the rotated password", func() bool { return login("second") == http.StatusOK })
		require.Equal(t, http.StatusUnauthorized, login("first"))
	})

	t.Run("default backend Service and default certificate outside -namespace, retargeted and rotated", func(t *testing.T) {
		ns := e.namespace(t, "nginxflags")
		system := e.namespace(t, "nginxflags-system")
		e.app(t, ns, "a", backendPort(t, namedBackend(t, "A")))
		e.app(t, system, "fallback", backendPort(t, namedBackend(t, "F")))
		e.createIngress(t, newIngress(ns, "mine", "ramjet", "mine.test", "a", "/"))
		// Opaque, as ingress-nginx allowed: the default certificate's watch
		// is of this one Secret, whatever its type.
		cert, err := e.client.CoreV1().Secrets(system).Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: system, Name: "default-cert"},
			Data:       selfSignedPair(t, "default.test", 7),
		}, metav1.CreateOptions{})
		require.NoError(t, err)
		tc := e.startController(t, ns, func(c *config) {
			c.httpsAddr = "127.0.0.1:0"
			c.defaultBackendService = &types.NamespacedName{Namespace: system, Name: "fallback"}
			c.defaultCertificate = &types.NamespacedName{Namespace: system, Name: "default-cert"}
		})
		status, body := tc.get(t, "unknown.test", "/x")
		require.Equal(t, http.StatusOK, status, body)
		require.Equal(t, "F /x", body, "the Service's first port")

		serial := func() int64 {
			conn, err := tls.Dial("tcp", tc.HTTPSAddr, &tls.Config{ServerName: "unknown.test", InsecureSkipVerify: true})
			require.NoError(t, err)
			defer conn.Close()
			return conn.ConnectionState().PeerCertificates[0].SerialNumber.Int64()
		}
		require.Equal(t, int64(7), serial())
		cert.Data = selfSignedPair(t, "default.test", 8)
		_, err = e.client.CoreV1().Secrets(system).Update(ctx, cert, metav1.UpdateOptions{})
		require.NoError(t, err)
		waitFor(t, 10*time.Second, "the rotated default certificate", func() bool { return serial() == 8 })

		// A first port that leads nowhere: the fallback follows the
		// Service and unmatched requests answer 404.
		svc, err := e.client.CoreV1().Services(system).Get(ctx, "fallback", metav1.GetOptions{})
		require.NoError(t, err)
		svc.Spec.Ports = append([]corev1.ServicePort{{Name: "none", Port: 81, TargetPort: intstr.FromInt32(9), Protocol: corev1.ProtocolTCP}}, svc.Spec.Ports...)
		_, err = e.client.CoreV1().Services(system).Update(ctx, svc, metav1.UpdateOptions{})
		require.NoError(t, err)
		tc.waitAnswer(t, "unknown.test", "/x", http.StatusNotFound, "")
	})

	t.Run("drain on stop: /readyz fails, requests in flight complete, tables still published", func(t *testing.T) {
		ns := e.namespace(t, "drain")
		port, arrived := slowBackend(t, 600*time.Millisecond)
		e.app(t, ns, "a", backendPort(t, port))
		e.createIngress(t, newIngress(ns, "app", "ramjet", "app.test", "a", "/"))
		// Long enough for a rebuild under load: the listener closes after it.
		const drain = 3 * time.Second
		tc := e.startController(t, ns, func(c *config) { c.drain = drain })
		tc.waitAnswer(t, "app.test", "/", http.StatusOK, "slow /")
		arrived.Store(0)

		const inFlight = 6
		errs := make(chan error, inFlight)
		for range inFlight {
			go func() {
				req, _ := http.NewRequest(http.MethodGet, "http://"+tc.HTTPAddr+"/inflight", nil)
				req.Host = "app.test"
				resp, err := tc.http.Do(req)
				if err == nil {
					body, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					if resp.StatusCode != http.StatusOK || string(body) != "slow /inflight" {
						err = fmt.Errorf("%d %q", resp.StatusCode, body)
					}
				}
				errs <- err
			}()
		}
		waitFor(t, 5*time.Second, "every request to reach the backend", func() bool { return arrived.Load() == inFlight })
		tc.cancel()
		waitFor(t, drain/2, "/readyz to fail", func() bool {
			status, _ := get(t, tc.http, "http://"+tc.DebugAddr+"/readyz", "")
			return status == http.StatusServiceUnavailable
		})
		// The watches still work while draining: a new route is served.
		e.createIngress(t, newIngress(ns, "late", "ramjet", "late.test", "a", "/"))
		tc.waitAnswer(t, "late.test", "/", http.StatusOK, "slow /")
		for range inFlight {
			require.NoError(t, <-errs)
		}
		tc.stop(t)
	})

	// Last: this controller watches every namespace.
	t.Run("the shipped RBAC is all the controller needs", func(t *testing.T) {
		objs := applyRBAC(t, e.client)
		sa := findObject[*corev1.ServiceAccount](t, objs)
		ns := e.namespace(t, "rbac")
		e.app(t, ns, "a", backendPort(t, namedBackend(t, "A")))
		e.createIngress(t, newIngress(ns, "mine", "ramjet", "rbac.test", "a", "/"))
		e.createIngress(t, newIngress(ns, "broken", "ramjet", "broken.rbac.test", "a", "~/api/("))
		_, err := e.client.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cert"},
			Type:       corev1.SecretTypeTLS,
			Data:       map[string][]byte{corev1.TLSCertKey: []byte("not a certificate"), corev1.TLSPrivateKeyKey: []byte("not a key")},
		}, metav1.CreateOptions{})
		require.NoError(t, err)

		// Every request is authorized as it would be for the pod's
		// ServiceAccount.
		rc := rest.CopyConfig(e.srv.Config)
		rc.Impersonate = rest.ImpersonationConfig{
			UserName: "system:serviceaccount:" + sa.Namespace + ":" + sa.Name,
			Groups:   []string{"system:serviceaccounts", "system:serviceaccounts:" + sa.Namespace, "system:authenticated"},
		}
		tc := e.startControllerAs(t, rc, "", func(c *config) {
			c.namespace, c.electionNamespace, c.identity = "", sa.Namespace, "rbac-replica"
			c.publishAddresses = []string{"192.0.2.9"}
		})
		tc.waitAnswer(t, "rbac.test", "/", http.StatusOK, "A /")
		waitFor(t, 10*time.Second, "the status write", func() bool {
			return cmp.Equal(ips("192.0.2.9"), e.ingressStatus(t, ns, "mine"))
		})
		waitFor(t, 10*time.Second, "the Event on Ingress broken", func() bool {
			list, err := e.client.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=broken"})
			require.NoError(t, err)
			return len(list.Items) == 1 && list.Items[0].Source.Host == "rbac-replica"
		})
		lease, err := e.client.CoordinationV1().Leases(sa.Namespace).Get(ctx, "ramjet-leader", metav1.GetOptions{})
		require.NoError(t, err)
		require.Equal(t, "rbac-replica", *lease.Spec.HolderIdentity)
		require.NotContains(t, tc.logs.String(), "forbidden")
		require.NotContains(t, clientGoLog.String(), "forbidden")
	})
}

// TestClusterStartErrors checks that bad settings fail at start, before
// any listener opens or the API server is contacted.
func TestClusterStartErrors(t *testing.T) {
	tests := []struct {
		name  string
		tweak func(*config)
		want  string
	}{
		{
			name:  "lease not longer than the renew deadline",
			tweak: func(c *config) { c.leaseDuration, c.renewDeadline = time.Second, time.Second },
			want:  "leader election: leaseDuration must be greater than renewDeadline",
		},
		{
			name:  "unusable listen address",
			tweak: func(c *config) { c.httpAddr = "256.0.0.1:0" },
			want:  "-http-addr",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := config{httpAddr: "127.0.0.1:0", electionID: "x", electionNamespace: "default", identity: "x"}
			tt.tweak(&cfg)
			// Nothing listens on port 1: a request would fail loudly.
			_, err := startCluster(context.Background(), cfg, slog.New(slog.DiscardHandler), &rest.Config{Host: "https://127.0.0.1:1"})
			require.Error(t, err)
			require.Contains(t, err.Error(), tt.want)
		})
	}
}

// selfSignedPair returns the tls.crt and tls.key of a Secret holding a
// self-signed certificate for host with the given serial number.
func selfSignedPair(t testing.TB, host string, serial int64) map[string][]byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial),
		DNSNames:     []string{host},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	keyDER, err := x509.MarshalECPrivateKey(key)
	require.NoError(t, err)
	return map[string][]byte{
		corev1.TLSCertKey:       pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		corev1.TLSPrivateKeyKey: pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
	}
}
