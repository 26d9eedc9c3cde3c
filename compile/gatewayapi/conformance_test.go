package gatewayapi

import (
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/net/websocket"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	"sigs.k8s.io/yaml"

	"ramjet.dev/ramjet/compile"
	"ramjet.dev/ramjet/compile/manifest"
	"ramjet.dev/ramjet/router"
)

// The requests of the suite's HTTPRoute tests are case files
// (testdata/cases/<test>.yaml, TestCases and TestFeatureReport). What the
// case runner cannot see is here, served through router.ServeHTTP to
// loopback backends: the copies a mirror receives, a mirror's share of
// many requests, and timeouts, which need a backend that is slow.

// infra is the namespace of the suite's base Services.
const infra = "gateway-conformance-infra/"

const (
	v1 = infra + "infra-backend-v1"
	v2 = infra + "infra-backend-v2"
	v3 = infra + "infra-backend-v3"
)

// modifiedSent is what the suite's "-and-modify-headers" mirror requests
// send.
var modifiedSent = map[string]string{"X-Header-Remove": "remove-val", "X-Header-Add-Append": "append-val-1"}

// seenRequest is a request a loopback backend received.
type seenRequest struct {
	backend, target string
	header          http.Header
	proto           string
}

// backends serves every Service of a world on loopback: each answers 200
// naming itself in X-Served-By, waits for a "delay" query parameter's
// duration first, and records what it received; on /ws it echoes
// WebSocket messages, as the suite's echo backend does.
type backends struct {
	mu   sync.Mutex
	seen []seenRequest
	// tries counts the requests of each "uuid" query parameter, for the
	// retry simulation of the suite's echo backend: responseCode until
	// more than succeedAfter requests of the uuid came, then 200.
	tries map[string]int
}

func (bs *backends) handler(name string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		bs.mu.Lock()
		bs.seen = append(bs.seen, seenRequest{name, r.URL.RequestURI(), r.Header.Clone(), r.Proto})
		bs.mu.Unlock()
		if r.URL.Path == "/ws" {
			websocket.Handler(func(ws *websocket.Conn) { _, _ = io.Copy(ws, ws) }).ServeHTTP(w, r)
			return
		}
		q := r.URL.Query()
		n := 0
		if q.Get("uuid") != "" {
			bs.mu.Lock()
			if bs.tries == nil {
				bs.tries = map[string]int{}
			}
			bs.tries[q.Get("uuid")]++
			n = bs.tries[q.Get("uuid")]
			bs.mu.Unlock()
		}
		// delayTries: only the uuid's first so many requests wait.
		if k, err := strconv.Atoi(q.Get("delayTries")); err == nil && n > k {
			q.Del("delay")
		}
		if d, err := time.ParseDuration(q.Get("delay")); err == nil {
			select {
			case <-time.After(d):
			case <-r.Context().Done():
				return
			}
		}
		if q.Get("responseCode") != "" {
			after, _ := strconv.Atoi(q.Get("succeedAfter"))
			if code, err := strconv.Atoi(q.Get("responseCode")); err == nil && n <= after {
				w.Header().Set("X-Served-By", name)
				w.WriteHeader(code)
				return
			}
		}
		w.Header().Set("X-Served-By", name)
		if d, err := time.ParseDuration(q.Get("drip")); err == nil {
			// The head at once, then a byte every 50ms for d.
			w.WriteHeader(http.StatusOK)
			for end := time.Now().Add(d); time.Now().Before(end); {
				if _, err := w.Write([]byte{'.'}); err != nil {
					return
				}
				w.(http.Flusher).Flush()
				select {
				case <-time.After(50 * time.Millisecond):
				case <-r.Context().Done():
					return
				}
			}
		}
	})
}

// received returns what backend received with request-target target.
func (bs *backends) received(backend, target string) []seenRequest {
	bs.mu.Lock()
	defer bs.mu.Unlock()
	var out []seenRequest
	for _, s := range bs.seen {
		if s.backend == backend && s.target == target {
			out = append(out, s)
		}
	}
	return out
}

// serveSuite starts a loopback server for every Service of snap, points the
// Services' endpoints at them, and publishes the snapshot's table on a
// router.
func serveSuite(t *testing.T, snap *compile.Snapshot) (*router.Router, *backends) {
	return serveSuiteOn(t, snap, nil)
}

// serveSuiteOn is serveSuite for a router whose local ports are the
// Gateway ports gatewayPorts says (router.Options.GatewayPorts). A
// Service port with appProtocol kubernetes.io/h2c is a server of its own
// that speaks only HTTP/2 with prior knowledge, as the suite's is.
func serveSuiteOn(t *testing.T, snap *compile.Snapshot, gatewayPorts map[int]int32) (*router.Router, *backends) {
	t.Helper()
	bs := &backends{}
	snap.EndpointSlices = nil
	for _, svc := range snap.Services {
		name := svc.Namespace + "/" + svc.Name
		srv := httptest.NewServer(bs.handler(name))
		t.Cleanup(srv.Close)
		_, p, _ := net.SplitHostPort(srv.Listener.Addr().String())
		port, _ := strconv.Atoi(p)
		sl := &discoveryv1.EndpointSlice{
			ObjectMeta: metav1.ObjectMeta{Namespace: svc.Namespace, Name: svc.Name,
				Labels: map[string]string{discoveryv1.LabelServiceName: svc.Name}},
			AddressType: discoveryv1.AddressTypeIPv4,
			Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"127.0.0.1"},
				Conditions: discoveryv1.EndpointConditions{Ready: new(true)}}},
		}
		for _, sp := range svc.Spec.Ports {
			p := port
			if sp.AppProtocol != nil && *sp.AppProtocol == compile.AppProtocolH2C {
				p = h2cOnly(t, bs.handler(name))
			}
			sl.Ports = append(sl.Ports, discoveryv1.EndpointPort{Name: new(sp.Name), Port: new(int32(p))})
		}
		snap.EndpointSlices = append(snap.EndpointSlices, sl)
	}
	res := compile.Compile(*snap, compile.Options{AllowLoopbackEndpoints: true})
	for _, warn := range res.Warnings {
		t.Logf("warning: %s", warn)
	}
	rt := router.New(router.Options{Logger: slog.New(slog.DiscardHandler), GatewayPorts: gatewayPorts})
	rt.Publish(res.Table)
	return rt, bs
}

// h2cOnly serves h on a loopback port that speaks HTTP/2 with prior
// knowledge only, and returns the port.
func h2cOnly(t *testing.T, h http.Handler) int {
	srv := httptest.NewUnstartedServer(h)
	srv.Config.Protocols = new(http.Protocols)
	srv.Config.Protocols.SetUnencryptedHTTP2(true)
	srv.Start()
	t.Cleanup(srv.Close)
	return srv.Listener.Addr().(*net.TCPAddr).Port
}

// send serves one request and returns the status and the backend that
// answered ("" for the router's own answer).
func send(rt *router.Router, method, host, path string, headers map[string]string) (int, string) {
	if method == "" {
		method = http.MethodGet
	}
	if host == "" {
		host = "192.0.2.1" // the suite sends to the Gateway's address
	}
	req := httptest.NewRequest(method, path, nil)
	req.Host = host
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	rt.ServeHTTP(rec, req)
	return rec.Code, rec.Header().Get("X-Served-By")
}

// loadConformance reads a test's manifest over the suite's base, with the
// GatewayClass the suite's placeholder names, through the Extension.
func loadConformance(t *testing.T, test string) *compile.Snapshot {
	t.Helper()
	Register()
	snap, _, err := manifest.Load(filepath.Join("testdata", "suite", "gatewayclass.yaml"), filepath.Join("testdata", "suite", "certificates.yaml"),
		filepath.Join("testdata", "conformance", "base.yaml"), filepath.Join("testdata", "conformance", test+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// TestConformanceMirror: httproute-request-mirror.go and
// httproute-request-multiple-mirrors.go want each mirrored Service to
// receive a copy of the request (their case files check the answer and
// what the backend saw). A request ID of its own, as the suite adds,
// tells the request's copies from the others'.
func TestConformanceMirror(t *testing.T) {
	for _, c := range []struct {
		test, path string
		mirrored   []string
	}{
		{"httproute-request-mirror", "/mirror", []string{v2}},
		{"httproute-request-mirror", "/mirror-and-modify-headers", []string{v2}},
		{"httproute-request-multiple-mirrors", "/multi-mirror", []string{v2, v3}},
		{"httproute-request-multiple-mirrors", "/multi-mirror-and-modify-request-headers", []string{v2, v3}},
	} {
		t.Run(c.test+c.path, func(t *testing.T) {
			rt, bs := serveSuite(t, loadConformance(t, c.test))
			path := c.path + "?X-Request-Id=" + strings.TrimPrefix(c.path, "/")
			if code, by := send(rt, "GET", "", path, modifiedSent); code != http.StatusOK || by != v1 {
				t.Fatalf("%s.go: %s: %d from %q, want 200 from %s", c.test, c.path, code, by, v1)
			}
			for _, m := range c.mirrored {
				if !eventually(func() bool { return len(bs.received(m, path)) == 1 }) {
					t.Errorf("%s.go: %s: %d copies reached %s, want 1", c.test, c.path, len(bs.received(m, path)), m)
				}
			}
		})
	}
}

// TestConformanceTimeout: httproute-timeout-request.go and
// httproute-timeout-backend-request.go want 504 from a backend slower
// than the route's timeout (500ms) and 200 where the timeout is "0s";
// their case files hold their other request.
func TestConformanceTimeout(t *testing.T) {
	for _, c := range []struct {
		test, path string
		status     int
	}{
		{"httproute-timeout-request", "/request-timeout?delay=1s", 504},
		{"httproute-timeout-request", "/disable-request-timeout?delay=1s", 200},
		{"httproute-timeout-backend-request", "/backend-timeout?delay=1s", 504},
		{"httproute-timeout-backend-request", "/disable-backend-timeout?delay=1s", 200},
	} {
		t.Run(c.test+c.path, func(t *testing.T) {
			rt, _ := serveSuite(t, loadConformance(t, c.test))
			code, by := send(rt, "GET", "", c.path, nil)
			if code != c.status || c.status == http.StatusOK && by != v1 {
				t.Errorf("%s.go: %s: %d from %q, want %d", c.test, c.path, code, by, c.status)
			}
		})
	}
}

// TestConformanceRetry: httproute-retry.go sends requests whose backend
// (the suite's echo backend, simulated here by a uuid's count) fails with
// a status until it succeeds, and wants 200 where the retries the route
// allows are enough and the failing status otherwise, or where the status
// is not retried. Each Service has one endpoint: retries go to it again.
func TestConformanceRetry(t *testing.T) {
	rt, bs := serveSuite(t, loadConformance(t, "httproute-retry"))
	for i, c := range []struct {
		path                   string
		code, after, status, n int // n: requests the backend receives
	}{
		{"/retry/code-500-attempts-3", 500, 2, 200, 3},
		{"/retry/code-500-attempts-3", 500, 4, 500, 4},
		{"/retry/code-500-attempts-3", 503, 2, 503, 1},
		{"/retry/code-all-attempts-2", 500, 1, 200, 2},
		{"/retry/code-all-attempts-2", 500, 3, 500, 3},
		{"/retry/code-all-attempts-2", 502, 1, 200, 2},
		{"/retry/code-all-attempts-2", 502, 3, 502, 3},
		{"/retry/code-all-attempts-2", 503, 1, 200, 2},
		{"/retry/code-all-attempts-2", 503, 3, 503, 3},
		{"/retry/code-all-attempts-2", 504, 1, 200, 2},
		{"/retry/code-all-attempts-2", 504, 3, 504, 3},
	} {
		uuid := "u" + strconv.Itoa(i)
		target := fmt.Sprintf("%s?responseCode=%d&succeedAfter=%d&uuid=%s", c.path, c.code, c.after, uuid)
		code, by := send(rt, "GET", "", target, nil)
		bs.mu.Lock()
		n := bs.tries[uuid]
		bs.mu.Unlock()
		if code != c.status || by != v3 || n != c.n {
			t.Errorf("httproute-retry.go: %s: %d from %q after %d requests to the backend, want %d after %d", target, code, by, n, c.status, c.n)
		}
	}
}

// A try that fails before a response (the endpoint refuses connections)
// is retried too, on another endpoint when the backend has one, and a
// POST whose body was not sent is retried as a GET is.
func TestRetryConnectionErrors(t *testing.T) {
	snap := loadConformance(t, "httproute-retry")
	rt, _ := serveSuite(t, snap)
	// infra-backend-v3 gets a second endpoint: 127.0.0.2 on the live
	// server's port, where nothing listens (the server has 127.0.0.1).
	for _, sl := range snap.EndpointSlices {
		if sl.Namespace+"/"+sl.Name == v3 {
			sl.Endpoints = append(sl.Endpoints, discoveryv1.Endpoint{Addresses: []string{"127.0.0.2"}, Conditions: discoveryv1.EndpointConditions{Ready: new(true)}})
		}
	}
	rt.Publish(compile.Compile(*snap, compile.Options{AllowLoopbackEndpoints: true}).Table)
	for i := range 20 {
		method := "GET"
		if i%2 == 1 {
			method = "POST"
		}
		code, by := send(rt, method, "", "/retry/code-500-attempts-3?i="+strconv.Itoa(i), nil)
		if code != http.StatusOK || by != v3 {
			t.Errorf("%s %d: %d from %q, want 200 from the live endpoint after a retry", method, i, code, by)
		}
	}
}

// eventually polls cond for up to five seconds.
func eventually(cond func() bool) bool {
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}

// TestConformanceMirrorShare: httproute-request-percentage-mirror.go sends
// 500 requests per path and wants infra-backend-v2 to receive its share
// of copies (20%, 25/50, 35%) within three binomial standard deviations.
// The share is counted exactly here; copies dropped over
// router.MirrorInFlight count as sent.
func TestConformanceMirrorShare(t *testing.T) {
	rt, bs := serveSuite(t, loadConformance(t, "httproute-request-percentage-mirror"))
	const total = 500
	for _, c := range []struct {
		path  string
		share float64
	}{{"/percent-mirror", 0.2}, {"/percent-mirror-fraction", 0.5}, {"/percent-mirror-and-modify-headers", 0.35}} {
		dropped := rt.Stats().MirrorsDropped
		for i := range total {
			if code, by := send(rt, "GET", "", c.path+"?id="+strconv.Itoa(i), modifiedSent); code != http.StatusOK || by != v1 {
				t.Fatalf("%s: %d from %q", c.path, code, by)
			}
		}
		want := int(c.share * total)
		count := func() int {
			n := int(rt.Stats().MirrorsDropped - dropped)
			for i := range total {
				n += len(bs.received(v2, c.path+"?id="+strconv.Itoa(i)))
			}
			return n
		}
		if !eventually(func() bool { return count() == want }) {
			t.Errorf("httproute-request-percentage-mirror.go: %s: %d copies of %d requests, want %d", c.path, count(), total, want)
		}
	}
}

// TestConformanceWebSocket: httproute-backend-protocol-websocket.go opens
// a WebSocket through the Gateway to a Service port with appProtocol
// kubernetes.io/ws and wants a text and a binary message echoed. The
// router is a real server here, since the upgraded connection outlives
// ServeHTTP's answer.
func TestConformanceWebSocket(t *testing.T) {
	const test = "httproute-backend-protocol-websocket"
	// The router serves on a loopback port published as the Gateway's 80.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	rt, bs := serveSuiteOn(t, loadConformance(t, test), map[int]int32{ln.Addr().(*net.TCPAddr).Port: 80})
	srv := httptest.NewUnstartedServer(rt)
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := websocket.NewConfig("ws://192.0.2.1/ws", "ws://gateway/"+test)
	if err != nil {
		t.Fatal(err)
	}
	ws, err := websocket.NewClient(cfg, conn)
	if err != nil {
		t.Fatalf("%s.go: the WebSocket handshake: %v", test, err)
	}
	defer ws.Close()
	_ = ws.SetDeadline(time.Now().Add(5 * time.Second))
	for _, msg := range []any{"Websocket Support!", []byte{1, 2, 3, 4, 5, 6, 7}} {
		if err := websocket.Message.Send(ws, msg); err != nil {
			t.Fatalf("%s.go: send %v: %v", test, msg, err)
		}
		reply := reflect.New(reflect.TypeOf(msg))
		if err := websocket.Message.Receive(ws, reply.Interface()); err != nil {
			t.Fatalf("%s.go: receive: %v", test, err)
		}
		if got := reply.Elem().Interface(); !reflect.DeepEqual(got, msg) {
			t.Errorf("%s.go: echoed %#v, want %#v", test, got, msg)
		}
	}
	if got := bs.received(v1, "/ws"); len(got) != 1 {
		t.Errorf("%s.go: %s received the handshake %d times, want once", test, v1, len(got))
	}
}

// TestConformanceReferenceGrantDeleted: httproute-reference-grant.go
// deletes the ReferenceGrant its route's backendRef needs (its case file
// serves the route with it) and wants 500 then.
func TestConformanceReferenceGrantDeleted(t *testing.T) {
	const test = "httproute-reference-grant"
	data, err := os.ReadFile(filepath.Join("testdata", "conformance", test+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for doc := range strings.SplitSeq(string(data), "\n---") {
		if !strings.Contains(doc, "kind: ReferenceGrant") {
			kept = append(kept, doc)
		}
	}
	if len(kept) != 1 {
		t.Fatalf("%s.yaml: %d documents besides the ReferenceGrant, want the HTTPRoute", test, len(kept))
	}
	route := filepath.Join(t.TempDir(), test+".yaml")
	if err := os.WriteFile(route, []byte(kept[0]), 0o600); err != nil {
		t.Fatal(err)
	}
	Register()
	snap, _, err := manifest.Load(filepath.Join("testdata", "suite", "gatewayclass.yaml"), filepath.Join("testdata", "suite", "certificates.yaml"),
		filepath.Join("testdata", "conformance", "base.yaml"), route)
	if err != nil {
		t.Fatal(err)
	}
	rt, _ := serveSuite(t, snap)
	if code, by := send(rt, "GET", "", "/", nil); code != http.StatusInternalServerError {
		t.Errorf("%s.go: GET / without the ReferenceGrant: %d from %q, want 500", test, code, by)
	}
}

// suiteObjects reads a test's manifest over the suite's base, with our
// GatewayClass, as the objects TranslateAll takes (the manifest loader
// keeps them to itself), for the tests that check status only.
func suiteObjects(t *testing.T, test string) Objects {
	t.Helper()
	var o Objects
	for _, f := range []string{"suite/gatewayclass.yaml", "conformance/base.yaml", "conformance/" + test + ".yaml"} {
		data, err := os.ReadFile(filepath.Join("testdata", f))
		if err != nil {
			t.Fatal(err)
		}
		for doc := range strings.SplitSeq(string(data), "\n---") {
			var meta metav1.TypeMeta
			if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			var obj any
			switch meta.Kind {
			case "GatewayClass":
				o.GatewayClasses = append(o.GatewayClasses, &gwv1.GatewayClass{})
				obj = o.GatewayClasses[len(o.GatewayClasses)-1]
			case "Gateway":
				o.Gateways = append(o.Gateways, &gwv1.Gateway{})
				obj = o.Gateways[len(o.Gateways)-1]
			case "HTTPRoute":
				o.HTTPRoutes = append(o.HTTPRoutes, &gwv1.HTTPRoute{})
				obj = o.HTTPRoutes[len(o.HTTPRoutes)-1]
			case "Namespace":
				o.Namespaces = append(o.Namespaces, &corev1.Namespace{})
				obj = o.Namespaces[len(o.Namespaces)-1]
			case "Service":
				o.Services = append(o.Services, &corev1.Service{})
				obj = o.Services[len(o.Services)-1]
			default:
				continue
			}
			if err := yaml.UnmarshalStrict([]byte(doc), obj); err != nil {
				t.Fatalf("%s: %s: %v", f, meta.Kind, err)
			}
		}
	}
	return o
}

// TestConformanceStatus: the suite's HTTPRoute tests that check status
// only. Their case files show that the routes serve nothing (or, for
// observed-generation-bump, what they serve); here are the conditions.
func TestConformanceStatus(t *testing.T) {
	now := metav1.NewTime(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
	routeStatus := func(t *testing.T, tr Translation, o Objects, route string) gwv1.RouteParentStatus {
		t.Helper()
		for _, r := range o.HTTPRoutes {
			if r.Namespace+"/"+r.Name == route {
				got, _ := tr.Status.HTTPRoute(r, now)
				if len(got.Status.Parents) != 1 {
					t.Fatalf("%s: parents %+v, want one", route, got.Status.Parents)
				}
				return got.Status.Parents[0]
			}
		}
		t.Fatalf("no route %s", route)
		return gwv1.RouteParentStatus{}
	}
	for _, c := range []struct{ test, route, gateway, reason string }{
		{"httproute-disallowed-kind", infra + "disallowed-kind", "tlsroutes-only", "NotAllowedByListeners"},
		{"httproute-invalid-cross-namespace-parent-ref", "gateway-conformance-web-backend/invalid-cross-namespace-parent-ref", "same-namespace", "NotAllowedByListeners"},
		{"httproute-invalid-parentref-not-matching-listener-port", infra + "httproute-listener-not-matching-route-port", "same-namespace", "NoMatchingParent"},
		{"httproute-invalid-parentref-section-name-not-matching-port", infra + "httproute-listener-section-name-not-matching-port", "gateway-with-one-not-matching-port-and-section-name-route", "NoMatchingParent"},
	} {
		t.Run(c.test, func(t *testing.T) {
			o := suiteObjects(t, c.test)
			tr := TranslateAll(o)
			want := []brief{{"Accepted", "False", c.reason}, {"ResolvedRefs", "True", "ResolvedRefs"}}
			if d := cmp.Diff(want, briefs(routeStatus(t, tr, o, c.route).Conditions)); d != "" {
				t.Errorf("%s.go: %s (-want +got):\n%s", c.test, c.route, d)
			}
			found := false
			for _, g := range o.Gateways {
				if g.Name != c.gateway {
					continue
				}
				found = true
				got, _ := tr.Status.Gateway(g, nil, now)
				for _, l := range got.Status.Listeners {
					if l.AttachedRoutes != 0 {
						t.Errorf("%s.go: listener %s of %s: %d routes attached, want 0", c.test, l.Name, g.Name, l.AttachedRoutes)
					}
				}
			}
			if !found {
				t.Errorf("%s.go: no Gateway %s", c.test, c.gateway)
			}
		})
	}

	// httproute-observed-generation-bump.go: after the route's backendRef
	// changes, its conditions are Accepted and ResolvedRefs again, with
	// the new generation.
	const test, route = "httproute-observed-generation-bump", infra + "observed-generation-bump"
	o := suiteObjects(t, test)
	r := o.HTTPRoutes[0]
	r.Generation = 1
	r.Status.Parents = []gwv1.RouteParentStatus{routeStatus(t, TranslateAll(o), o, route)}
	r.Spec.Rules[0].BackendRefs[0].Name = "infra-backend-v2"
	r.Generation = 2
	p := routeStatus(t, TranslateAll(o), o, route)
	if d := cmp.Diff([]brief{{"Accepted", "True", "Accepted"}, {"ResolvedRefs", "True", "ResolvedRefs"}}, briefs(p.Conditions)); d != "" {
		t.Errorf("%s.go (-want +got):\n%s", test, d)
	}
	for _, c := range p.Conditions {
		if c.ObservedGeneration != 2 {
			t.Errorf("%s.go: %s observedGeneration %d, want 2", test, c.Type, c.ObservedGeneration)
		}
	}
}

// TestConformanceBackendHeaders:
// httproute-request-header-modifier-backend-weights.go sends 100 requests
// to a rule split between two backendRefs, each with a
// RequestHeaderModifier setting Backend to its own name, and wants every
// request received by the backend its header names.
func TestConformanceBackendHeaders(t *testing.T) {
	const test = "httproute-request-header-modifier-backend-weights"
	rt, bs := serveSuite(t, loadConformance(t, test))
	for i := range 100 {
		if code, _ := send(rt, "", "", "/", nil); code != http.StatusOK {
			t.Fatalf("%s.go: request %d answered %d, want 200", test, i, code)
		}
	}
	counts := map[string]int{}
	for _, b := range []string{v1, v2} {
		for _, s := range bs.received(b, "/") {
			counts[b]++
			if got := s.header.Values("Backend"); len(got) != 1 || !strings.HasSuffix(b, "/"+got[0]) {
				t.Errorf("%s.go: %s received Backend %q, want its own name once", test, b, got)
			}
		}
	}
	if counts[v1]+counts[v2] != 100 || counts[v1] != 50 {
		t.Errorf("%s.go: the backends received %v, want 50 each of the 100 requests", test, counts)
	}
}

// TestConformanceBackendH2C: httproute-backend-protocol-h2c.go sends an
// HTTP/2 request with prior knowledge to the Gateway for a route whose
// Service port has appProtocol kubernetes.io/h2c, whose backend speaks
// only that, and wants it answered 200 by infra-backend-v1. The router is
// a real server here, taking h2c as it does for gRPC.
func TestConformanceBackendH2C(t *testing.T) {
	const test = "httproute-backend-protocol-h2c"
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	rt, bs := serveSuiteOn(t, loadConformance(t, test), map[int]int32{ln.Addr().(*net.TCPAddr).Port: 80})
	srv := httptest.NewUnstartedServer(rt)
	srv.Listener.Close()
	srv.Listener = ln
	srv.Config.Protocols = new(http.Protocols)
	srv.Config.Protocols.SetHTTP1(true)
	srv.Config.Protocols.SetUnencryptedHTTP2(true)
	srv.Start()
	t.Cleanup(srv.Close)
	tr := &http.Transport{Protocols: new(http.Protocols)}
	tr.Protocols.SetUnencryptedHTTP2(true)
	t.Cleanup(tr.CloseIdleConnections)
	req, err := http.NewRequest(http.MethodGet, "http://"+ln.Addr().String()+"/", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = "192.0.2.1"
	res, err := (&http.Client{Transport: tr, Timeout: 5 * time.Second}).Do(req)
	if err != nil {
		t.Fatalf("%s.go: %v", test, err)
	}
	_ = res.Body.Close()
	if res.StatusCode != http.StatusOK || res.ProtoMajor != 2 || res.Header.Get("X-Served-By") != v1 {
		t.Fatalf("%s.go: answered %d over %s by %q, want 200 over HTTP/2 by %s", test, res.StatusCode, res.Proto, res.Header.Get("X-Served-By"), v1)
	}
	if got := bs.received(v1, "/"); len(got) != 1 || got[0].proto != "HTTP/2.0" {
		t.Errorf("%s.go: %s received %v, want one HTTP/2 request", test, v1, got)
	}
}
