package gatewayapi

import (
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"ramjet.dev/ramjet/compile"
	"ramjet.dev/ramjet/compile/manifest"
	"ramjet.dev/ramjet/router"
)

// TestRetryResendsBody: a rule's retry sends a request with a body again,
// body and all: the router holds the body whole before it chooses a
// backend (in memory, or past client-body-buffer-size in its temporary
// file), so a try that consumed it does not make the request unreplayable.
// Each try must receive the whole body, not what an earlier try left.
func TestRetryResendsBody(t *testing.T) {
	var mu sync.Mutex
	var got []string
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, r.Method+" "+string(b))
		n := len(got)
		mu.Unlock()
		if n == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer backend.Close()
	port := backend.Listener.Addr().(*net.TCPAddr).Port
	objects := gatewayAndClass + fmt.Sprintf(`---
apiVersion: v1
kind: Service
metadata: {name: app, namespace: web}
spec: {ports: [{port: 80, targetPort: %[1]d}]}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: app-1, namespace: web, labels: {kubernetes.io/service-name: app}}
addressType: IPv4
ports: [{name: "", port: %[1]d}]
endpoints: [{addresses: [127.0.0.1]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: retried, namespace: web}
spec:
  parentRefs: [{name: gw, namespace: infra}]
  rules:
  - retry: {codes: [503], attempts: 2}
    backendRefs: [{name: app, port: 80}]
`, port)
	Register()
	snap, _, err := manifest.Decode("objects.yaml", []byte(objects))
	if err != nil {
		t.Fatal(err)
	}
	res := compile.Compile(*snap, compile.Options{AllowLoopbackEndpoints: true})
	for _, w := range res.Warnings {
		t.Logf("warning: %s", w)
	}
	// The router's own HTTP/1 client, and a transport an embedder gives.
	for _, tr := range []http.RoundTripper{nil, backend.Client().Transport} {
		rt := router.New(router.Options{Logger: slog.New(slog.DiscardHandler), Transport: tr})
		rt.Publish(res.Table)
		// Inline with the head; sent by the body sender; past the memory
		// buffer, from the temporary file.
		for _, size := range []int{11, 64 << 10, 1 << 20} {
			mu.Lock()
			got = nil
			mu.Unlock()
			body := strings.Repeat("x", size-len("hello")) + "hello"
			req := httptest.NewRequest(http.MethodPost, "http://app.test/submit", strings.NewReader(body))
			rec := httptest.NewRecorder()
			rt.ServeHTTP(rec, req)
			mu.Lock()
			want := []string{"POST " + body, "POST " + body}
			if rec.Code != http.StatusOK || len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
				short := make([]string, len(got))
				for i, g := range got {
					short[i] = fmt.Sprintf("%d bytes", len(g)-len("POST "))
				}
				t.Errorf("transport %T, %d-byte POST: %d after tries %v; want 200 after two tries each with the %d bytes", tr, size, rec.Code, short, size)
			}
			mu.Unlock()
		}
	}
}
