package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// headerBackend answers with the client-address headers it received, as
// "real=<X-Real-IP> xff=<X-Forwarded-For>".
func headerBackend(t testing.TB) (port string) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "real=%s xff=%s", r.Header.Get("X-Real-Ip"), r.Header.Get("X-Forwarded-For"))
	}))
	t.Cleanup(srv.Close)
	u, err := url.Parse(srv.URL)
	require.NoError(t, err)
	return u.Port()
}

// scrapeURL fetches and parses a /metrics answer.
func scrapeURL(t testing.TB, client *http.Client, addr string) scrape {
	t.Helper()
	status, body := get(t, client, "http://"+addr+"/metrics", "")
	require.Equal(t, http.StatusOK, status, body)
	return parseScrape(t, body)
}

// value is the sum of name's series with labels want; 0 when none.
func (s scrape) value(name string, want map[string]string) float64 {
	v, _ := s.sum(name, want)
	return v
}

// rawGet sends one request over conn, after header (a PROXY header or
// nil), and returns the response's status and body.
func rawGet(t testing.TB, conn net.Conn, host, extra string) (int, string) {
	t.Helper()
	require.NoError(t, conn.SetDeadline(time.Now().Add(5*time.Second)))
	_, err := io.WriteString(conn, "GET / HTTP/1.1\r\nHost: "+host+"\r\n"+extra+"Connection: close\r\n\r\n")
	require.NoError(t, err)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body)
}

// dialWithHeader connects to addr and sends header first.
func dialWithHeader(t testing.TB, addr string, header []byte) net.Conn {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	if header != nil {
		_, err = conn.Write(header)
		require.NoError(t, err)
	}
	return conn
}

// accessLines decodes the JSON access log lines written so far.
func accessLines(t testing.TB, log *syncBuffer) []map[string]any {
	t.Helper()
	var out []map[string]any
	for line := range strings.Lines(log.String()) {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &m), "access log line %q", line)
		out = append(out, m)
	}
	return out
}

// warningRecorder keeps the warnings the API server sends.
type warningRecorder struct {
	mu   sync.Mutex
	seen []string
}

func (w *warningRecorder) HandleWarningHeader(code int, agent, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.seen = append(w.seen, text)
}

func (w *warningRecorder) all() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.seen...)
}

// TestE2EOps runs what an operator watches against a real API server: the
// metrics and access log after traffic, client addresses through PROXY
// protocol and trusted proxies, and the shipped manifests under Pod
// Security "restricted" admission.
func TestE2EOps(t *testing.T) {
	e := startE2E(t)
	ctx := context.Background()

	t.Run("metrics and access log after traffic, labelled from the table", func(t *testing.T) {
		ns := e.namespace(t, "metrics")
		accessLog := &syncBuffer{}
		tc := e.startController(t, ns, func(c *config) {
			c.enableMetrics, c.metricsPerHost = true, true
			c.enableAccessLog, c.accessLogFormat, c.accessLogOut = true, accessLogJSON, accessLog
			c.podName, c.podNamespace = "ramjet-0", "ingress"
			c.options.IngressClass = "ramjet"
		})
		e.app(t, ns, "a", backendPort(t, namedBackend(t, "A")))
		e.createIngress(t, newIngress(ns, "web", "ramjet", "app.test", "a", "/one"))
		e.createIngress(t, newIngress(ns, "wild", "ramjet", "*.wild.test", "a", "/"))
		tc.waitAnswer(t, "app.test", "/one/x", http.StatusOK, "A /one/x")
		tc.waitAnswer(t, "w.wild.test", "/", http.StatusOK, "A /")
		before := scrapeURL(t, tc.http, tc.DebugAddr)
		linesBefore := len(accessLines(t, accessLog))

		web := map[string]string{
			"namespace": ns, "ingress": "web", "service": "a", "host": "app.test", "path": "/one",
			"status": "200", "method": "GET", "canary": "",
			"controller_namespace": "ingress", "controller_class": "ramjet.dev/ingress", "controller_pod": "replica-a",
		}
		wild := map[string]string{"namespace": ns, "ingress": "wild", "service": "a", "host": "*.wild.test", "path": "/", "status": "200"}
		notFound := map[string]string{"namespace": "", "ingress": "", "service": "", "host": "app.test", "path": "", "status": "404"}
		const okRequests, wildRequests, missRequests, strangers = 7, 3, 2, 4
		for i := range okRequests {
			host := "app.test"
			if i == 0 {
				host = "APP.test:80" // the label is the table's host all the same
			}
			status, body := tc.get(t, host, "/one/x")
			require.Equal(t, http.StatusOK, status, body)
		}
		for i := range wildRequests {
			status, _ := tc.get(t, fmt.Sprintf("client-%d.wild.test", i), "/")
			require.Equal(t, http.StatusOK, status)
		}
		for range missRequests {
			status, _ := tc.get(t, "app.test", "/two")
			require.Equal(t, http.StatusNotFound, status)
		}
		for i := range strangers {
			status, _ := tc.get(t, fmt.Sprintf("stranger-%d.test", i), "/")
			require.Equal(t, http.StatusNotFound, status)
		}

		after := scrapeURL(t, tc.http, tc.DebugAddr)
		delta := func(name string, labels map[string]string) float64 {
			return after.value(name, labels) - before.value(name, labels)
		}
		require.Equal(t, float64(okRequests), delta("nginx_ingress_controller_requests", web))
		require.Equal(t, float64(okRequests), delta("nginx_ingress_controller_request_duration_seconds_count", web))
		require.Equal(t, float64(okRequests), delta("nginx_ingress_controller_header_duration_seconds_count", web))
		require.Equal(t, float64(okRequests), delta("nginx_ingress_controller_response_duration_seconds_count", web))
		// $bytes_sent: the body and the head.
		require.Greater(t, delta("nginx_ingress_controller_response_size_sum", web), float64(okRequests*len("HTTP/1.1 200 OK\r\n\r\nA /one/x")))
		require.Equal(t, delta("nginx_ingress_controller_response_size_sum", web), delta("nginx_ingress_controller_bytes_sent_sum", web))
		require.Positive(t, delta("nginx_ingress_controller_request_duration_seconds_sum", web))
		require.Positive(t, delta("nginx_ingress_controller_request_size_sum", web))
		require.Equal(t, float64(wildRequests), delta("nginx_ingress_controller_requests", wild))
		require.Equal(t, float64(missRequests), delta("nginx_ingress_controller_requests", notFound))
		// Hosts no rule names are not counted (ingress-nginx's default),
		// and no label ever holds a Host a client made up; "_" is the
		// default server's, whose default certificate has its ssl series.
		hosts := map[string]bool{}
		for _, s := range after {
			if h, ok := s.labels["host"]; ok && strings.HasPrefix(s.name, "nginx_ingress_controller_") {
				hosts[h] = true
			}
		}
		require.Equal(t, map[string]bool{"app.test": true, "*.wild.test": true, "_": true}, hosts)

		// The controller's own series.
		require.Equal(t, 1.0, after.value("nginx_ingress_controller_config_last_reload_successful", nil))
		require.GreaterOrEqual(t, after.value("nginx_ingress_controller_success", nil), 1.0)
		require.NotZero(t, after.value("nginx_ingress_controller_config_hash", nil))
		require.Equal(t, float64(tc.router.Generation()), after.value("ramjet_table_generation", nil))
		require.Equal(t, 1.0, after.value("ramjet_ready", nil))
		require.Positive(t, after.value("ramjet_watch_events_total", nil))
		waitFor(t, 10*time.Second, "the only replica to lead", func() bool {
			return scrapeURL(t, tc.http, tc.DebugAddr).value("nginx_ingress_controller_leader_election_status", map[string]string{"name": "ramjet-leader"}) == 1
		})
		status, _ := get(t, tc.http, "http://"+tc.DebugAddr+"/debug/stats", "")
		require.Equal(t, http.StatusNotFound, status, "/debug/stats folded into /metrics")

		// One access log line per request, with what the table decided;
		// none for the strangers, whom ingress-nginx's default server
		// answers without logging (enable-access-log-for-default-backend).
		lines := accessLines(t, accessLog)[linesBefore:]
		require.Len(t, lines, okRequests+wildRequests+missRequests)
		for i, l := range lines[:okRequests] {
			require.Equal(t, "GET", l["method"], "line %d", i)
			require.Equal(t, "app.test", l["host"])
			require.Equal(t, "/one/x", l["target"])
			require.Equal(t, 200.0, l["status"])
			require.Equal(t, ns+"/web", l["ingress"])
			require.Equal(t, "spec.rules[0].http.paths[0]", l["route"])
			require.Equal(t, ns+"/a:80", l["service"])
			require.Equal(t, "app.test", l["virtual_host"])
			require.Equal(t, float64(len("A /one/x")), l["bytes_out"])
			require.Equal(t, "127.0.0.1", l["client"])
			require.Regexp(t, `^192\.0\.2\.10:\d+$`, l["upstream"])
			require.Equal(t, 1.0, l["tries"])
			require.NotEmpty(t, l["request_id"])
			require.Contains(t, l, "duration")
		}
		miss := lines[okRequests+wildRequests]
		require.Equal(t, 404.0, miss["status"])
		require.Equal(t, "no-route", miss["reason"])
		require.NotContains(t, miss, "upstream")
	})

	t.Run("PROXY protocol and trusted proxies: client addresses reach the backend", func(t *testing.T) {
		ns := e.namespace(t, "proxy")
		accessLog := &syncBuffer{}
		cert := selfSignedPair(t, "proxy.test", 1)
		_, err := e.client.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "tls"}, Type: corev1.SecretTypeTLS, Data: cert,
		}, metav1.CreateOptions{})
		require.NoError(t, err)
		tc := e.startController(t, ns, func(c *config) {
			c.httpsAddr = "127.0.0.1:0"
			c.useProxyProtocol = true
			// The test's load balancer is loopback.
			c.proxyRealIPCIDR, _ = parseCIDRs("127.0.0.0/8")
			c.enableAccessLog, c.accessLogFormat, c.accessLogOut = true, accessLogJSON, accessLog
		})
		e.app(t, ns, "echo", backendPort(t, headerBackend(t)))
		ing := newIngress(ns, "echo", "ramjet", "proxy.test", "echo", "/")
		ing.Spec.TLS = []networkingv1.IngressTLS{{Hosts: []string{"proxy.test"}, SecretName: "tls"}}
		e.createIngress(t, ing)
		waitFor(t, 10*time.Second, "proxy.test to be served over PROXY protocol", func() bool {
			status, _ := rawGet(t, dialWithHeader(t, tc.HTTPAddr, proxyHeader(t, 1, "203.0.113.1:1")), "proxy.test", "X-Forwarded-Proto: https\r\n")
			// Plain HTTP to a TLS host redirects; the redirect proves the
			// route is in the table.
			return status == http.StatusPermanentRedirect
		})

		tests := []struct {
			name    string
			version byte
			client  string
			tls     bool
			extra   string
			want    string // backend's view; "" refused
		}{
			{name: "v1 on HTTPS", version: 1, client: "203.0.113.7:40000", tls: true, want: "real=203.0.113.7 xff=203.0.113.7"},
			{name: "v2 on HTTPS", version: 2, client: "198.51.100.4:40000", tls: true, want: "real=198.51.100.4 xff=198.51.100.4"},
			{name: "v2 IPv6 on HTTPS", version: 2, client: "[2001:db8::42]:40000", tls: true, want: "real=2001:db8::42 xff=2001:db8::42"},
			{
				// Without -use-forwarded-headers the X-Forwarded-For it
				// relays is never believed, nor appended to: the backend's
				// is the client address alone (ingress-nginx's $remote_addr).
				name: "a client's own X-Forwarded-For is not believed", version: 2, client: "203.0.113.8:1", tls: true,
				extra: "X-Forwarded-For: 10.1.2.3\r\n", want: "real=203.0.113.8 xff=203.0.113.8",
			},
			{name: "a trusted peer without a header is refused", version: 0, tls: true, want: ""},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				conn := dialWithHeader(t, tc.HTTPSAddr, proxyHeader(t, tt.version, tt.client))
				var c net.Conn = conn
				if tt.tls {
					tlsConn := tls.Client(conn, &tls.Config{ServerName: "proxy.test", InsecureSkipVerify: true})
					require.NoError(t, tlsConn.SetDeadline(time.Now().Add(5*time.Second)))
					if err := tlsConn.Handshake(); err != nil {
						require.Empty(t, tt.want, "handshake: %v", err)
						return
					}
					c = tlsConn
				}
				status, body := rawGet(t, c, "proxy.test", tt.extra)
				if tt.want == "" {
					require.NotEqual(t, http.StatusOK, status, body)
					return
				}
				require.Equal(t, http.StatusOK, status, body)
				require.Equal(t, tt.want, body)
			})
		}
		// The access log names the client the PROXY header gave.
		var clients []any
		for _, l := range accessLines(t, accessLog) {
			if l["status"] == 200.0 {
				clients = append(clients, l["client"])
			}
		}
		require.Equal(t, []any{"203.0.113.7", "198.51.100.4", "2001:db8::42", "203.0.113.8"}, clients)
	})

	t.Run("-proxy-real-ip-cidr: X-Forwarded-For from a trusted peer gives the client", func(t *testing.T) {
		ns := e.namespace(t, "realip")
		tc := e.startController(t, ns, func(c *config) {
			c.proxyRealIPCIDR, _ = parseCIDRs("127.0.0.1")
			c.useForwardedHeaders = true
		})
		e.app(t, ns, "echo", backendPort(t, headerBackend(t)))
		e.createIngress(t, newIngress(ns, "echo", "ramjet", "realip.test", "echo", "/"))
		tc.waitAnswer(t, "realip.test", "/", http.StatusOK, "")
		req, err := http.NewRequest(http.MethodGet, "http://"+tc.HTTPAddr+"/", nil)
		require.NoError(t, err)
		req.Host = "realip.test"
		req.Header.Set("X-Forwarded-For", "198.51.100.9, 10.0.0.1")
		resp, err := tc.http.Do(req)
		require.NoError(t, err)
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		// Walked from the right: 10.0.0.1 is not trusted, so it is the
		// client, as nginx's real_ip_recursive finds; the backend's
		// X-Forwarded-For is that address alone, as ingress-nginx's
		// $remote_addr without compute-full-forwarded-for.
		require.Equal(t, "real=10.0.0.1 xff=10.0.0.1", string(body))
	})

	t.Run("restricted Pod Security admits the shipped manifests and refuses a weakened pod", func(t *testing.T) {
		objs := applyRBAC(t, e.client)
		nsObj := findObject[*corev1.Namespace](t, objs)
		require.Equal(t, "restricted", nsObj.Labels["pod-security.kubernetes.io/enforce"])
		ns := nsObj.Name

		// Warnings the API server returns (Pod Security's warn mode judges
		// the Deployment's pod template).
		warnings := &warningRecorder{}
		rc := rest.CopyConfig(e.srv.Config)
		rc.WarningHandler = warnings
		client, err := kubernetes.NewForConfig(rc)
		require.NoError(t, err)

		var deployment *appsv1.Deployment
		for _, o := range readManifests(t, "deployment.yaml") {
			var err error
			switch o := o.(type) {
			case *networkingv1.IngressClass:
				continue // cluster-scoped, made by startE2E
			case *corev1.Service:
				_, err = client.CoreV1().Services(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
			case *appsv1.Deployment:
				deployment = o
				_, err = client.AppsV1().Deployments(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
			case *policyv1.PodDisruptionBudget:
				_, err = client.PolicyV1().PodDisruptionBudgets(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
			default:
				t.Fatalf("deployment.yaml: unexpected %T", o)
			}
			require.NoError(t, err, "creating %T", o)
		}
		require.NotNil(t, deployment)
		require.Equal(t, ns, deployment.Namespace)
		require.Empty(t, warnings.all(), "Pod Security warns about the Deployment")

		// No controller-manager runs, so the Pod the Deployment would make
		// is created directly: enforcement judges Pods.
		pod := func(name string, weaken func(*corev1.PodSpec)) *corev1.Pod {
			p := &corev1.Pod{ObjectMeta: *deployment.Spec.Template.ObjectMeta.DeepCopy(), Spec: *deployment.Spec.Template.Spec.DeepCopy()}
			p.Name, p.Namespace = name, ns
			if weaken != nil {
				weaken(&p.Spec)
			}
			return p
		}
		_, err = client.CoreV1().Pods(ns).Create(ctx, pod("ramjet-shipped", nil), metav1.CreateOptions{})
		require.NoError(t, err, "the shipped pod passes restricted admission")

		for _, tt := range []struct {
			name   string
			weaken func(*corev1.PodSpec)
			why    string
		}{
			{"privilege escalation", func(s *corev1.PodSpec) { s.Containers[0].SecurityContext.AllowPrivilegeEscalation = nil }, "allowPrivilegeEscalation != false"},
			{"capabilities kept", func(s *corev1.PodSpec) { s.Containers[0].SecurityContext.Capabilities = nil }, "unrestricted capabilities"},
			{"no seccomp profile", func(s *corev1.PodSpec) {
				s.SecurityContext.SeccompProfile = nil
				s.Containers[0].SecurityContext.SeccompProfile = nil
			}, "seccompProfile"},
			{"may run as root", func(s *corev1.PodSpec) {
				s.SecurityContext.RunAsNonRoot = nil
				s.Containers[0].SecurityContext.RunAsNonRoot = nil
			}, "runAsNonRoot != true"},
		} {
			_, err := client.CoreV1().Pods(ns).Create(ctx, pod("ramjet-weak", tt.weaken), metav1.CreateOptions{})
			require.True(t, apierrors.IsForbidden(err), "%s: want Forbidden, got %v", tt.name, err)
			require.ErrorContains(t, err, `violates PodSecurity "restricted:latest"`, tt.name)
			require.ErrorContains(t, err, tt.why, tt.name)
		}
	})
}
