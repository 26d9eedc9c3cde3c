package gatewayapi

import (
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"ramjet.dev/ramjet/compile"
	"ramjet.dev/ramjet/compile/manifest"
	"ramjet.dev/ramjet/router"
)

// dataRequest is one request of a conformance test served through the
// router to loopback backends, and what the suite expects of it.
type dataRequest struct {
	method, host, path string // path with its query; host "" is the Gateway's address
	headers            map[string]string
	// backend is the Service ("namespace/name") that must answer; "" when
	// only the status counts.
	backend string
	status  int // 0: 200
	// seen are headers the backend must receive, absent ones it must not.
	seen   map[string]string
	absent []string
	// mirrored are the Services that must receive a copy of the request.
	mirrored []string
}

// infra is the namespace of the suite's base Services.
const infra = "gateway-conformance-infra/"

const (
	v1 = infra + "infra-backend-v1"
	v2 = infra + "infra-backend-v2"
	v3 = infra + "infra-backend-v3"
)

// modified is what the suite's "-and-modify-headers" mirror requests send
// and expect the backend to see.
var (
	modifiedSent = map[string]string{"X-Header-Remove": "remove-val", "X-Header-Add-Append": "append-val-1"}
	modifiedSeen = map[string]string{"X-Header-Add": "header-val-1", "X-Header-Add-Append": "append-val-1,header-val-2", "X-Header-Set": "set-overwrites-values"}
)

// conformanceData replays, per test of the Gateway API conformance suite
// (sigs.k8s.io/gateway-api/conformance/tests/<test>.go, v1.6.3, with its
// manifest in testdata/conformance/<test>.yaml), every request of the
// test through router.ServeHTTP: header, query parameter and method
// matches, the 500 answer of invalid backendRefs, mirrors and timeouts.
// The weighted and percentage tests are TestConformanceWeight and
// TestConformanceMirrorShare.
var conformanceData = []struct {
	test     string
	requests []dataRequest
}{
	{test: "httproute-header-matching", requests: []dataRequest{
		{path: "/", headers: map[string]string{"Version": "one"}, backend: v1},
		{path: "/", headers: map[string]string{"Version": "two"}, backend: v2},
		{path: "/", headers: map[string]string{"Version": "two", "Color": "orange"}, backend: v1},
		{path: "/", headers: map[string]string{"Version": "two", "Color": "blue"}, backend: v2},
		{path: "/", headers: map[string]string{"Color": "orange"}, status: 404},
		{path: "/", headers: map[string]string{"Some-Other-Header": "one"}, status: 404},
		{path: "/", headers: map[string]string{"Color": "blue"}, backend: v1},
		{path: "/", headers: map[string]string{"Color": "green"}, backend: v1},
		{path: "/", headers: map[string]string{"Color": "red"}, backend: v2},
		{path: "/", headers: map[string]string{"Color": "yellow"}, backend: v2},
		{path: "/", headers: map[string]string{"Color": "purple"}, status: 404},
	}},
	{test: "httproute-query-param-matching", requests: []dataRequest{
		{path: "/?animal=whale", backend: v1},
		{path: "/?animal=dolphin", backend: v2},
		{path: "/?animal=dolphin&color=blue", backend: v3},
		{path: "/?ANIMAL=Whale", backend: v3},
		{path: "/?animal=whale&otherparam=irrelevant", backend: v1},
		{path: "/?animal=dolphin&color=yellow", backend: v2},
		{path: "/?color=blue", status: 404},
		{path: "/?animal=dog", status: 404},
		{path: "/?animal=whaledolphin", status: 404},
		{path: "/", status: 404},
		{path: "/path1?animal=whale", backend: v1},
		{path: "/?animal=whale", headers: map[string]string{"version": "one"}, backend: v2},
		{path: "/path2?animal=whale", headers: map[string]string{"version": "two"}, backend: v3},
		{path: "/path3?animal=shark", backend: v1},
		{path: "/path4?animal=kraken", headers: map[string]string{"version": "three"}, backend: v1},
		{path: "/?animal=shark", status: 404},
		{path: "/path4?animal=kraken", status: 404},
		{path: "/path5?animal=hydra", backend: v1},
		{path: "/?animal=hydra", headers: map[string]string{"version": "four"}, backend: v3},
	}},
	{test: "httproute-method-matching", requests: []dataRequest{
		{method: "POST", path: "/", backend: v1},
		{method: "GET", path: "/", backend: v2},
		{method: "HEAD", path: "/", status: 404},
		{method: "GET", path: "/path1", backend: v1},
		{method: "PUT", path: "/", headers: map[string]string{"version": "one"}, backend: v2},
		{method: "POST", path: "/path2", headers: map[string]string{"version": "two"}, backend: v3},
		{method: "PATCH", path: "/path3", backend: v1},
		{method: "DELETE", path: "/path4", headers: map[string]string{"version": "three"}, backend: v1},
		{method: "PUT", path: "/", status: 404},
		{method: "DELETE", path: "/path4", status: 404},
		{method: "PATCH", path: "/path5", backend: v1},
		{method: "PATCH", path: "/", headers: map[string]string{"version": "four"}, backend: v2},
	}},
	{test: "httproute-matching", requests: []dataRequest{
		{path: "/", backend: v1},
		{path: "/example", backend: v1},
		{path: "/", headers: map[string]string{"Version": "one"}, backend: v1},
		{path: "/v2", backend: v2},
		{path: "/v2/example", backend: v2},
		{path: "/", headers: map[string]string{"Version": "two"}, backend: v2},
		{path: "/v2/", backend: v2},
		{path: "/v2example", backend: v1},
		{path: "/foo/v2/example", backend: v1},
	}},
	{test: "httproute-matching-across-routes", requests: []dataRequest{
		{host: "example.com", path: "/", backend: v1},
		{host: "example.com", path: "/example", backend: v1},
		{host: "example.net", path: "/example", backend: v1},
		{host: "example.com", path: "/example", headers: map[string]string{"Version": "one"}, backend: v1},
		{host: "example.com", path: "/v2", backend: v2},
		{host: "example.net", path: "/v2", backend: v1},
		{host: "example.com", path: "/v2/example", backend: v2},
		{host: "example.com", path: "/", headers: map[string]string{"Version": "two"}, backend: v2},
	}},
	{test: "httproute-invalid-backendref-unknown-kind", requests: []dataRequest{
		{method: "GET", path: "/v2", status: 500},
	}},
	{test: "httproute-invalid-nonexistent-backendref", requests: []dataRequest{
		{method: "GET", path: "/", status: 500},
	}},
	{test: "httproute-invalid-cross-namespace-backend-ref", requests: []dataRequest{
		{method: "GET", path: "/", status: 500},
	}},
	{test: "httproute-invalid-reference-grant", requests: []dataRequest{
		{method: "GET", path: "/", status: 500},
	}},
	{test: "httproute-partially-invalid-via-invalid-reference-grant", requests: []dataRequest{
		{method: "GET", path: "/v2", status: 500},
		{method: "GET", path: "/", backend: "gateway-conformance-app-backend/app-backend-v1"},
	}},
	{test: "httproute-omitted-backendrefs", requests: []dataRequest{
		{path: "/forward", backend: v1},
		{path: "/omitted-no-forward", status: 500},
		{path: "/empty-no-forward", status: 500},
	}},
	{test: "httproute-path-match-order", requests: []dataRequest{
		{path: "/match/exact/one", backend: v3},
		{path: "/match/exact", backend: v2},
		{path: "/match", backend: v1},
		{path: "/match/prefix/one/any", backend: v2},
		{path: "/match/prefix/any", backend: v1},
		{path: "/match/any", backend: v3},
	}},
	{test: "httproute-request-mirror", requests: []dataRequest{
		{path: "/mirror", backend: v1, mirrored: []string{v2}},
		{path: "/mirror-and-modify-headers", headers: modifiedSent, backend: v1, seen: modifiedSeen, absent: []string{"X-Header-Remove"}, mirrored: []string{v2}},
	}},
	{test: "httproute-request-multiple-mirrors", requests: []dataRequest{
		{path: "/multi-mirror", backend: v1, mirrored: []string{v2, v3}},
		{path: "/multi-mirror-and-modify-request-headers", headers: modifiedSent, backend: v1, seen: modifiedSeen, absent: []string{"X-Header-Remove"}, mirrored: []string{v2, v3}},
	}},
	{test: "httproute-request-percentage-mirror", requests: []dataRequest{
		// The answer and the headers; the shares are TestConformanceMirrorShare's.
		{path: "/percent-mirror", backend: v1},
		{path: "/percent-mirror-fraction", backend: v1},
		{path: "/percent-mirror-and-modify-headers", headers: modifiedSent, backend: v1, seen: modifiedSeen, absent: []string{"X-Header-Remove"}},
	}},
	{test: "httproute-timeout-request", requests: []dataRequest{
		{path: "/request-timeout", status: 200},
		{path: "/request-timeout?delay=1s", status: 504},
		{path: "/disable-request-timeout?delay=1s", status: 200},
	}},
	{test: "httproute-timeout-backend-request", requests: []dataRequest{
		{path: "/backend-timeout", status: 200},
		{path: "/backend-timeout?delay=1s", status: 504},
		{path: "/disable-backend-timeout?delay=1s", status: 200},
	}},
}

// seenRequest is a request a loopback backend received.
type seenRequest struct {
	backend, target string
	header          http.Header
}

// backends serves every Service of a world on loopback: each answers 200
// naming itself in X-Served-By, waits for a "delay" query parameter's
// duration first, and records what it received.
type backends struct {
	mu   sync.Mutex
	seen []seenRequest
}

func (bs *backends) handler(name string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		bs.mu.Lock()
		bs.seen = append(bs.seen, seenRequest{name, r.URL.RequestURI(), r.Header.Clone()})
		bs.mu.Unlock()
		if d, err := time.ParseDuration(r.URL.Query().Get("delay")); err == nil {
			select {
			case <-time.After(d):
			case <-r.Context().Done():
				return
			}
		}
		w.Header().Set("X-Served-By", name)
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
			sl.Ports = append(sl.Ports, discoveryv1.EndpointPort{Name: new(sp.Name), Port: new(int32(port))})
		}
		snap.EndpointSlices = append(snap.EndpointSlices, sl)
	}
	res := compile.Compile(*snap, compile.Options{AllowLoopbackEndpoints: true})
	for _, warn := range res.Warnings {
		t.Logf("warning: %s", warn)
	}
	rt := router.New(router.Options{Logger: slog.New(slog.DiscardHandler)})
	rt.Publish(res.Table)
	return rt, bs
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
	snap, _, err := manifest.Load(filepath.Join("testdata", "suite", "gatewayclass.yaml"),
		filepath.Join("testdata", "conformance", "base.yaml"), filepath.Join("testdata", "conformance", test+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

func TestConformanceData(t *testing.T) {
	n := 0
	for _, c := range conformanceData {
		n += len(c.requests)
		t.Run(c.test, func(t *testing.T) {
			rt, bs := serveSuite(t, loadConformance(t, c.test))
			for i, r := range c.requests {
				// A request ID of its own, as the suite adds, tells the
				// request's copies from the others'.
				path := r.path
				sep := "?"
				if strings.Contains(path, "?") {
					sep = "&"
				}
				if len(r.mirrored) > 0 || r.seen != nil {
					path += sep + "X-Request-Id=" + strconv.Itoa(i)
				}
				what := fmt.Sprintf("%s.go: %s %s%s %v", c.test, cmpOr(r.method, "GET"), r.host, path, r.headers)
				code, by := send(rt, r.method, r.host, path, r.headers)
				want := r.status
				if want == 0 {
					want = http.StatusOK
				}
				if code != want || r.backend != "" && by != r.backend {
					t.Errorf("%s: %d from %q, want %d from %q", what, code, by, want, r.backend)
					continue
				}
				if r.seen != nil || r.absent != nil {
					got := bs.received(r.backend, path)
					if len(got) != 1 {
						t.Errorf("%s: the backend received it %d times", what, len(got))
						continue
					}
					for k, v := range r.seen {
						if g := strings.Join(got[0].header.Values(k), ","); g != v {
							t.Errorf("%s: the backend saw %s: %q, want %q", what, k, g, v)
						}
					}
					for _, k := range r.absent {
						if got[0].header.Get(k) != "" {
							t.Errorf("%s: the backend saw %s", what, k)
						}
					}
				}
				for _, m := range r.mirrored {
					if !eventually(func() bool { return len(bs.received(m, path)) == 1 }) {
						t.Errorf("%s: no copy reached %s", what, m)
					}
				}
			}
		})
	}
	t.Logf("%d requests of %d conformance tests", n, len(conformanceData))
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
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

// TestConformanceWeight: httproute-weight.go sends 500 requests (with
// entropy) and wants infra-backend-v1, -v2 and -v3 in the shares 0.7,
// 0.3 and 0 within 0.05. The split's rotation is deterministic, so the
// shares of 1,000 requests are exact.
func TestConformanceWeight(t *testing.T) {
	rt, _ := serveSuite(t, loadConformance(t, "httproute-weight"))
	const total = 1000
	counts := map[string]int{}
	for i := range total {
		code, by := send(rt, "GET", "", "/?entropy="+strconv.Itoa(i), nil)
		if code != http.StatusOK {
			t.Fatalf("request %d: %d", i, code)
		}
		counts[by]++
	}
	for b, want := range map[string]float64{v1: 0.7, v2: 0.3, v3: 0} {
		if got := float64(counts[b]) / total; got < want-0.05 || got > want+0.05 {
			t.Errorf("httproute-weight.go: %s took %.3f of the requests, want %.2f ± 0.05 (%v)", b, got, want, counts)
		}
	}
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
