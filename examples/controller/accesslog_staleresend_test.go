package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/compile"
	"ramjet.dev/ramjet/compile/manifest"
	"ramjet.dev/ramjet/router"
)

// staleResendObjects: Service web, whose one endpoint is %[1]s:%[2]s.
const staleResendObjects = `apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata: {name: ramjet}
spec: {controller: ramjet.dev/ingress}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: prod}
spec: {ports: [{port: 80, targetPort: %[2]s}]}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: web-1, namespace: prod, labels: {kubernetes.io/service-name: web}}
addressType: IPv4
ports: [{name: "", port: %[2]s}]
endpoints: [{addresses: [%[1]s]}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: web, namespace: prod}
spec:
  ingressClassName: ramjet
  rules: [{host: web.example.com, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}}]
`

// TestLogStaleResend: a request the backend drops unanswered on the
// kept-alive connection it went out on is sent again on a new one, and
// the log lists the try that failed, as nginx 1.22 logs it (checked on
// loopback, upstream keepalive): "a, a" in $upstream_addr, "502, 200" in
// $upstream_status, 0.000 for the reused connection, "-" for the head
// that never came, 0 bytes. On the router's own pool and through
// net/http's transport (which resends a GET without a body itself).
func TestLogStaleResend(t *testing.T) {
	addr := droppingSecondRequest(t)
	ip, port, err := net.SplitHostPort(addr)
	require.NoError(t, err)
	snap, _, err := manifest.Decode("objects.yaml", fmt.Appendf(nil, staleResendObjects, ip, port))
	require.NoError(t, err)
	res := compile.Compile(*snap, compile.Options{AllowLoopbackEndpoints: true})

	for _, via := range []string{"pool", "transport"} {
		for _, method := range []string{http.MethodPut, http.MethodGet} {
			t.Run(via+" "+method, func(t *testing.T) {
				var out bytes.Buffer
				log, unknown := newNginxAccessLog(&out, `$status|$upstream_addr|$upstream_status|$upstream_connect_time|$upstream_header_time|$upstream_response_length`, escapeDefault, false)
				require.Empty(t, unknown)
				o := router.Options{Logger: slog.New(slog.DiscardHandler), Observer: log}
				if via == "transport" {
					o.Transport = &http.Transport{}
				}
				r := router.New(o)
				defer r.CloseIdleConnections()
				r.Publish(res.Table)
				for i := range 2 {
					out.Reset()
					var body io.Reader
					if method != http.MethodGet {
						body = strings.NewReader("data")
					}
					req := httptest.NewRequest(method, "/", body)
					req.Host = "web.example.com"
					w := httptest.NewRecorder()
					r.ServeHTTP(w, req)
					require.Equal(t, http.StatusOK, w.Code, "request %d", i)
				}
				f := strings.Split(strings.TrimSuffix(out.String(), "\n"), "|")
				require.Len(t, f, 6, out.String())
				assert.Equal(t, "200", f[0])
				assert.Equal(t, addr+", "+addr, f[1], "$upstream_addr")
				assert.Equal(t, "502, 200", f[2], "$upstream_status")
				assert.True(t, strings.HasPrefix(f[3], "0.000, "), "$upstream_connect_time %q", f[3])
				assert.True(t, strings.HasPrefix(f[4], "-, "), "$upstream_header_time %q", f[4])
				assert.Equal(t, "0, 3", f[5], "$upstream_response_length")
			})
		}
	}
}

// droppingSecondRequest is a backend that answers the first request on
// each connection and closes the connection when the second arrives,
// without answering it.
func droppingSecondRequest(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var wg sync.WaitGroup
	t.Cleanup(func() { l.Close(); wg.Wait() })
	wg.Go(func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				defer c.Close()
				_ = c.SetDeadline(time.Now().Add(5 * time.Second))
				br := bufio.NewReader(c)
				for n := 1; ; n++ {
					req, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					_, _ = io.Copy(io.Discard, req.Body)
					if n == 2 {
						return
					}
					if _, err := io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nok\n"); err != nil {
						return
					}
				}
			})
		}
	})
	return l.Addr().String()
}
