package h1_test

import (
	"bufio"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"ramjet.dev/ramjet/compile"
	"ramjet.dev/ramjet/compile/manifest"
	"ramjet.dev/ramjet/router"
	"ramjet.dev/ramjet/router/h1"
)

// serveRouter serves the router, with one catch-all Ingress to backend,
// under the loop, as the controller does; annotations are the Ingress's.
func serveRouter(t *testing.T, backend http.Handler, o router.Options, annotations ...string) string {
	t.Helper()
	rt := catchAll(t, backend, o, annotations...)
	return h1.ServeOn(t, &h1.Server{Handler: rt, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 10 * time.Second})
}

// catchAll is a router with one catch-all Ingress to backend.
func catchAll(t *testing.T, backend http.Handler, o router.Options, annotations ...string) *router.Router {
	t.Helper()
	be := httptest.NewServer(backend)
	t.Cleanup(be.Close)
	return catchAllTo(t, be, o, annotations...)
}

// catchAllTo is catchAll with the backend be, started (with TLS for an
// HTTPS backend-protocol annotation).
func catchAllTo(t *testing.T, be *httptest.Server, o router.Options, annotations ...string) *router.Router {
	t.Helper()
	ip, port, _ := net.SplitHostPort(be.Listener.Addr().String())
	doc := fmt.Sprintf(`
apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata: {name: ramjet}
spec: {controller: ramjet.dev/ingress}
---
apiVersion: v1
kind: Service
metadata: {name: backend, namespace: t}
spec: {ports: [{port: 80, targetPort: %[2]s}]}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: backend-1, namespace: t, labels: {kubernetes.io/service-name: backend}}
addressType: IPv4
ports: [{name: "", port: %[2]s}]
endpoints: [{addresses: [%[1]s]}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: all, namespace: t, annotations: {%[3]s}}
spec:
  ingressClassName: ramjet
  rules:
  - http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: backend, port: {number: 80}}}}]}
`, ip, port, strings.Join(annotations, ", "))
	snap, _, err := manifest.Decode("t.yaml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	res := compile.Compile(*snap, compile.Options{AllowLoopbackEndpoints: true})
	if len(res.Warnings) > 0 {
		t.Fatal(res.Warnings)
	}
	o.Logger = slog.New(slog.DiscardHandler)
	rt := router.New(o)
	rt.Publish(res.Table)
	t.Cleanup(rt.CloseIdleConnections)
	return rt
}

func TestRouterUpgradeTunnel(t *testing.T) {
	addr := serveRouter(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Upgrade") != "echo" {
			http.Error(w, "no upgrade", 400)
			return
		}
		c, brw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer c.Close()
		brw.WriteString("HTTP/1.1 101 Switching Protocols\r\nUpgrade: echo\r\nConnection: Upgrade\r\n\r\n")
		brw.Flush()
		line, _ := brw.ReadString('\n')
		brw.WriteString("echo " + line)
		brw.Flush()
	}), router.Options{})
	c, br := h1.Dial(t, addr)
	io.WriteString(c, "GET /ws HTTP/1.1\r\nHost: a.test\r\nUpgrade: echo\r\nConnection: Upgrade\r\n\r\n")
	res, err := http.ReadResponse(br, nil)
	if err != nil || res.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("%v %v", res, err)
	}
	io.WriteString(c, "hello\n")
	line, err := br.ReadString('\n')
	if line != "echo hello\n" {
		t.Fatalf("through the tunnel: %q %v", line, err)
	}
}

func TestRouterExpectContinueAndTrailers(t *testing.T) {
	addr := serveRouter(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("Trailer", "X-Sum")
		w.Write(b)
		w.Header().Set("X-Sum", fmt.Sprint(len(b)))
	}), router.Options{})
	c, br := h1.Dial(t, addr)
	io.WriteString(c, "PUT /up HTTP/1.1\r\nHost: a.test\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n")
	line, err := br.ReadString('\n')
	if line != "HTTP/1.1 100 Continue\r\n" {
		t.Fatalf("before the body: %q %v", line, err)
	}
	br.ReadString('\n')
	io.WriteString(c, "hello")
	res, body := h1.ReadResponse(t, br, "PUT")
	if res.StatusCode != 200 || body != "hello" || res.Trailer.Get("X-Sum") != "5" {
		t.Fatalf("status %d body %q trailer %v", res.StatusCode, body, res.Trailer)
	}
}

func TestRouterClientGoneEndsBackendExchange(t *testing.T) {
	gone := make(chan struct{})
	addr := serveRouter(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done(): // the router closed the backend connection
			close(gone)
		case <-time.After(10 * time.Second):
		}
	}), router.Options{})
	c, _ := h1.Dial(t, addr)
	io.WriteString(c, "GET /slow HTTP/1.1\r\nHost: a.test\r\n\r\n")
	time.Sleep(200 * time.Millisecond) // past the router's lazy hook
	c.Close()
	select {
	case <-gone:
	case <-time.After(5 * time.Second):
		t.Fatal("the backend exchange outlived the client")
	}
}

func TestRouterStalledBody408(t *testing.T) {
	addr := serveRouter(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
	}), router.Options{ClientBodyTimeout: 200 * time.Millisecond})
	c, br := h1.Dial(t, addr)
	io.WriteString(c, "POST /p HTTP/1.1\r\nHost: a.test\r\nContent-Length: 10\r\n\r\nabc")
	res, _ := h1.ReadResponse(t, br, "POST")
	if res.StatusCode != http.StatusRequestTimeout || !res.Close {
		t.Fatalf("status %d close %v, want 408 and the connection closed", res.StatusCode, res.Close)
	}
}

func TestRouterKeepAliveAndFraming(t *testing.T) {
	addr := serveRouter(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, strings.Repeat("x", 10))
	}), router.Options{})
	c, br := h1.Dial(t, addr)
	for range 3 {
		io.WriteString(c, "GET / HTTP/1.1\r\nHost: a.test\r\n\r\n")
		if res, body := h1.ReadResponse(t, br, "GET"); res.StatusCode != 200 || body != "xxxxxxxxxx" || res.Close {
			t.Fatalf("status %d body %q close %v", res.StatusCode, body, res.Close)
		}
	}
	io.WriteString(c, "POST / HTTP/1.1\r\nHost: a.test\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n")
	res, _ := h1.ReadResponse(t, bufio.NewReader(br), "POST")
	if res.StatusCode != 400 || !res.Close {
		t.Fatalf("ambiguous framing: status %d close %v, want 400 and closed", res.StatusCode, res.Close)
	}
}

// A mirror's copy outlives the handler, and the loop reuses the request
// for the connection's next one: the copy carries its own request's
// headers, whatever came after (the race detector watches the reuse).
func TestRouterMirrorOutlivesRequest(t *testing.T) {
	got := make(chan string, 100)
	sink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(time.Millisecond) // the copy lags its request
		got <- r.Header.Get("X-Seq")
	}))
	defer sink.Close()
	addr := serveRouter(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}), router.Options{},
		fmt.Sprintf("nginx.ingress.kubernetes.io/mirror-target: 'http://%s$request_uri'", sink.Listener.Addr()))
	c, br := h1.Dial(t, addr)
	const n = 50
	for i := range n {
		fmt.Fprintf(c, "GET /r%d HTTP/1.1\r\nHost: a\r\nX-Seq: %d\r\n\r\n", i, i)
		h1.ReadResponse(t, br, "GET")
	}
	seen := map[string]bool{}
	for range n {
		select {
		case s := <-got:
			seen[s] = true
		case <-time.After(10 * time.Second):
			t.Fatalf("%d of %d copies arrived", len(seen), n)
		}
	}
	for i := range n {
		if want := fmt.Sprint(i); !seen[want] {
			t.Errorf("no copy %q; copies: %v", want, seen)
		}
	}
}
