package gatewayapi

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"ramjet.dev/ramjet/compile/manifest"
)

// timeoutRoutes are routes of the suite's same-namespace Gateway with the
// timeouts and retries TestRouteTimeoutsExact tries.
const timeoutRoutes = `
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: timeouts, namespace: gateway-conformance-infra}
spec:
  parentRefs: [{name: same-namespace}]
  rules:
    - matches: [{path: {type: PathPrefix, value: /bounded}}]
      timeouts: {request: 300ms}
      retry: {codes: [500], attempts: 5}
      backendRefs: [{name: infra-backend-v1, port: 8080}]
    - matches: [{path: {type: PathPrefix, value: /per-try}}]
      timeouts: {backendRequest: 300ms}
      backendRefs: [{name: infra-backend-v1, port: 8080}]
    - matches: [{path: {type: PathPrefix, value: /per-try-retried}}]
      timeouts: {backendRequest: 300ms}
      retry: {attempts: 1}
      backendRefs: [{name: infra-backend-v1, port: 8080}]
    - matches: [{path: {type: PathPrefix, value: /whole}}]
      timeouts: {request: 300ms}
      backendRefs: [{name: infra-backend-v1, port: 8080}]
`

// TestRouteTimeoutsExact: timeouts.request bounds the whole request, its
// retries included, and timeouts.backendRequest each try from its start to
// its response's last byte; a response cut off after its head ends the
// client's connection.
func TestRouteTimeoutsExact(t *testing.T) {
	Register()
	dir := t.TempDir()
	routes := filepath.Join(dir, "routes.yaml")
	if err := os.WriteFile(routes, []byte(timeoutRoutes), 0o644); err != nil {
		t.Fatal(err)
	}
	snap, _, err := manifest.Load(filepath.Join("testdata", "suite", "gatewayclass.yaml"), filepath.Join("testdata", "conformance", "base.yaml"), routes)
	if err != nil {
		t.Fatal(err)
	}
	rt, bs := serveSuite(t, snap)
	srv := httptest.NewServer(rt)
	defer srv.Close()
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	rt.SetGatewayPorts(map[int]int32{port: 80}) // the listeners' port
	get := func(target string) (status int, body string, took time.Duration, bodyErr error) {
		start := time.Now()
		req, _ := http.NewRequest(http.MethodGet, srv.URL+target, nil)
		req.Host = "192.0.2.1"
		res, err := srv.Client().Do(req)
		if err != nil {
			t.Fatalf("%s: %v", target, err)
		}
		b, err := io.ReadAll(res.Body)
		res.Body.Close()
		return res.StatusCode, string(b), time.Since(start), err
	}
	tries := func(uuid string) int {
		bs.mu.Lock()
		defer bs.mu.Unlock()
		return bs.tries[uuid]
	}

	// Each try answers 500 after 100ms: the retries stop when the 300ms
	// run out, with 504, after three or four tries rather than six.
	code, _, took, _ := get("/bounded?responseCode=500&succeedAfter=10&delay=100ms&uuid=b")
	if n := tries("b"); code != http.StatusGatewayTimeout || n < 2 || n > 4 || took > 600*time.Millisecond {
		t.Errorf("/bounded: %d after %v and %d tries; want 504 after about 300ms and at most 4 tries", code, took, n)
	}
	// A response whose head comes at once and whose body drips for a
	// second is cut at 300ms, however often a byte comes.
	code, body, took, bodyErr := get("/per-try?drip=1s&uuid=p")
	if code != http.StatusOK || bodyErr == nil || len(body) > 10 || took > 700*time.Millisecond {
		t.Errorf("/per-try: %d, %d body bytes, body error %v, after %v; want 200 cut off after about 300ms", code, len(body), bodyErr, took)
	}
	// The request timeout cuts a dripping body too.
	code, body, _, bodyErr = get("/whole?drip=1s")
	if code != http.StatusOK || bodyErr == nil || len(body) > 10 {
		t.Errorf("/whole: %d, %d body bytes, body error %v; want 200 cut off", code, len(body), bodyErr)
	}
	// A try that times out before its head is retried: the second answers.
	code, _, _, _ = get("/per-try-retried?delay=1s&delayTries=1&uuid=r")
	if n := tries("r"); code != http.StatusOK || n != 2 {
		t.Errorf("/per-try-retried: %d after %d tries; want 200 after 2", code, n)
	}
	// Without a retry, a try past its timeout answers 504.
	code, _, took, _ = get("/per-try?delay=1s&uuid=s")
	if code != http.StatusGatewayTimeout || took > 700*time.Millisecond {
		t.Errorf("/per-try slow head: %d after %v; want 504 after about 300ms", code, took)
	}
}
