package main

import (
	"bytes"
	"errors"
	"flag"
	"io"
	"log/slog"
	"net/netip"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/types"

	"ramjet.dev/ramjet/compile"
)

func TestParseFlags(t *testing.T) {
	env := map[string]string{"POD_NAME": "ramjet-7d9f-abcde", "POD_NAMESPACE": "ingress"}
	offline := config{
		manifests:    "m",
		options:      compile.Options{IngressClass: "ramjet", ControllerName: "ramjet.dev/ingress"},
		httpAddr:     "127.0.0.1:8080",
		debugAddr:    "127.0.0.1:8081",
		pollInterval: 500 * time.Millisecond,
		electionID:   "ramjet-leader",
		healthPath:   "/healthz",
		maxBodySize:  1 << 20,

		udpMaxSessions:   defaultUDPSessions,
		gatewayHTTPPort:  80,
		gatewayHTTPSPort: 443,
		metricsPerHost:   true,
		enableAccessLog:  true,
		accessLogFormat:  "upstreaminfo",
		podName:          "ramjet-7d9f-abcde",
		podNamespace:     "ingress",
	}
	cluster := offline
	cluster.manifests = ""
	cluster.electionNamespace = "ingress"
	cluster.identity = "ramjet-7d9f-abcde"
	cluster.setClusterDefaults()

	tests := []struct {
		name    string
		args    []string
		env     map[string]string // nil: env
		base    config
		want    func(c *config)
		wantErr string
	}{
		{name: "offline defaults", args: []string{"-manifests", "m"}, base: offline, want: func(*config) {}},
		{
			name: "offline, every flag",
			args: []string{
				"-manifests", "m", "-demo-backends", "-ingress-class", "edge", "-controller-name", "example.com/edge",
				"-default-backend", "kube-system/fallback:http", "-watch-ingress-without-class", "-ssl-redirect=false",
				"-http-addr", ":80", "-https-addr", ":443", "-debug-addr", "", "-poll-interval", "2s",
			},
			base: offline,
			want: func(c *config) {
				c.demoBackends = true
				c.options = compile.Options{
					IngressClass:             "edge",
					ControllerName:           "example.com/edge",
					DefaultBackend:           &compile.ServiceRef{Namespace: "kube-system", Name: "fallback", Port: "http"},
					WatchIngressWithoutClass: true,
					DisableSSLRedirect:       true,
				}
				c.httpAddr, c.httpsAddr, c.debugAddr = ":80", ":443", ""
				c.pollInterval = 2 * time.Second
			},
		},
		{name: "cluster defaults", args: nil, base: cluster, want: func(*config) {}},
		{
			name: "net/http's HTTP/2 client", args: []string{"-manifests", "m", "-http2-client", "net/http"}, base: offline,
			want: func(c *config) { c.netHTTP2Client = true },
		},
		{name: "the default HTTP/2 client named", args: []string{"-manifests", "m", "-http2-client", "ramjet"}, base: offline, want: func(*config) {}},
		{name: "an unknown HTTP/2 client", args: []string{"-manifests", "m", "-http2-client", "curl"}, wantErr: `-http2-client "curl" is neither "ramjet" nor "net/http"`},
		{
			name: "cluster, no downward API",
			args: []string{"-pod-name", "replica-1"},
			env:  map[string]string{},
			base: cluster,
			want: func(c *config) {
				c.electionNamespace, c.identity = "default", "replica-1"
				c.podName, c.podNamespace = "", "default"
			},
		},
		{
			name: "cluster, every flag (double dashes)",
			args: []string{
				"--ingress-class", "edge", "--controller-name", "example.com/edge", "--default-backend", "kube-system/fallback:80",
				"--watch-ingress-without-class", "--ssl-redirect=false", "--http-addr", ":80", "--https-addr", ":443",
				"--debug-addr", ":10254", "--kubeconfig", "/etc/kube/config", "--namespace", "shop",
				"--publish-address", "203.0.113.7, lb.example.com,2001:DB8::1", "--no-status-update", "--resync-period", "10m",
				"--election-id", "edge-leader", "--election-namespace", "edge-system", "--pod-name", "edge-0",
			},
			base: cluster,
			want: func(c *config) {
				c.options = compile.Options{
					IngressClass:             "edge",
					ControllerName:           "example.com/edge",
					DefaultBackend:           &compile.ServiceRef{Namespace: "kube-system", Name: "fallback", Port: "80"},
					WatchIngressWithoutClass: true,
					DisableSSLRedirect:       true,
				}
				c.httpAddr, c.httpsAddr, c.debugAddr = ":80", ":443", ":10254"
				c.kubeconfig, c.namespace = "/etc/kube/config", "shop"
				c.publishAddresses = []string{"203.0.113.7", "lb.example.com", "2001:db8::1"}
				c.noStatusUpdate, c.resync = true, 10*time.Minute
				c.electionID, c.electionNamespace, c.identity = "edge-leader", "edge-system", "edge-0"
			},
		},
		{
			name: "cluster, ingress-nginx spellings",
			args: []string{
				"--controller-class=k8s.io/ingress-nginx", "--ingress-class=nginx", "--watch-namespace=shop",
				"--publish-status-address=203.0.113.7", "--update-status=false", "--sync-period=5m",
				"--default-backend-service=ingress-nginx/fallback", "--election-id=ingress-nginx-leader",
				"--health-check-path=/alive", "--default-ssl-certificate=ingress-nginx/wildcard.example.com",
				"--use-forwarded-headers", "--shutdown-grace-period=30", "--watch-ingress-without-class=true",
			},
			base: cluster,
			want: func(c *config) {
				c.options.IngressClass, c.options.ControllerName = "nginx", "k8s.io/ingress-nginx"
				c.options.WatchIngressWithoutClass = true
				c.namespace = "shop"
				c.publishAddresses = []string{"203.0.113.7"}
				c.noStatusUpdate, c.resync = true, 5*time.Minute
				c.defaultBackendService = &types.NamespacedName{Namespace: "ingress-nginx", Name: "fallback"}
				c.electionID = "ingress-nginx-leader"
				c.healthPath = "/alive"
				c.defaultCertificate = &types.NamespacedName{Namespace: "ingress-nginx", Name: "wildcard.example.com"}
				c.useForwardedHeaders = true
				c.drain = 30 * time.Second
			},
		},
		{
			// The arguments of ingress-nginx's static deploy.yaml, less the
			// ConfigMap and webhook, with the defaults spelled out.
			name: "cluster, ingress-nginx deploy.yaml",
			args: []string{
				"--publish-service=ingress-nginx/ingress-nginx-controller", "--election-id=ingress-nginx-leader",
				"--controller-class=k8s.io/ingress-nginx", "--ingress-class=nginx",
				"--enable-metrics=false", "--update-status-on-shutdown=false", "--logtostderr",
			},
			base: cluster,
			want: func(c *config) {
				c.options.IngressClass, c.options.ControllerName = "nginx", "k8s.io/ingress-nginx"
				c.publishService = &types.NamespacedName{Namespace: "ingress-nginx", Name: "ingress-nginx-controller"}
				c.electionID = "ingress-nginx-leader"
				c.noop = []string{"update-status-on-shutdown", "logtostderr"}
			},
		},
		{
			name: "cluster, metrics, access log and client addresses",
			args: []string{
				"--enable-metrics", "--metrics-per-host=false", "--report-status-classes",
				"--enable-access-log=false", "--access-log-format=json",
				"--proxy-real-ip-cidr", "10.0.0.0/8, 192.168.1.7,::ffff:172.16.0.0/108,2001:db8::/32", "--use-proxy-protocol",
				"--compute-full-forwarded-for",
			},
			base: cluster,
			want: func(c *config) {
				c.enableMetrics, c.metricsPerHost, c.reportStatusClasses = true, false, true
				c.enableAccessLog, c.accessLogFormat = false, "json"
				c.proxyRealIPCIDR = []netip.Prefix{
					netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("192.168.1.7/32"),
					netip.MustParsePrefix("172.16.0.0/12"), netip.MustParsePrefix("2001:db8::/32"),
				}
				c.useProxyProtocol, c.computeFullForwardedFor = true, true
			},
		},
		{name: "undefined hosts without hosts", args: []string{"--metrics-per-host=false", "--metrics-per-undefined-host"}, wantErr: "-metrics-per-undefined-host=true must be passed with -metrics-per-host=true"},
		{name: "listen port out of range", args: []string{"--http-addr=127.0.0.1:99999"}, wantErr: `-http-addr "127.0.0.1:99999": address 99999: invalid port`},
		{name: "listen address without a port", args: []string{"--debug-addr=localhost"}, wantErr: `-debug-addr "localhost": address localhost: missing port in address`},
		{name: "metrics without the debug listener", args: []string{"--enable-metrics", "--debug-addr="}, wantErr: "-enable-metrics: /metrics is served on -debug-addr, which is empty"},
		{name: "access log format", args: []string{"--access-log-format=combined"}, wantErr: `-access-log-format "combined": want upstreaminfo, text or json`},
		{name: "proxy-body-size", args: []string{"--proxy-body-size=8m"}, base: cluster, want: func(c *config) { c.maxBodySize = 8 << 20 }},
		{name: "proxy-body-size 0 is no limit", args: []string{"--proxy-body-size", "0"}, base: cluster, want: func(c *config) { c.maxBodySize = -1 }},
		{name: "bad proxy-body-size", args: []string{"--proxy-body-size=8mb"}, wantErr: `-proxy-body-size "8mb"`},
		{name: "bad CIDR", args: []string{"--proxy-real-ip-cidr=10.0.0.0/33"}, wantErr: `-proxy-real-ip-cidr: "10.0.0.0/33" is not a CIDR`},
		{name: "bad address", args: []string{"--proxy-real-ip-cidr=10.0.0.0/8,lb.example.com"}, wantErr: `-proxy-real-ip-cidr: "lb.example.com" is neither a CIDR nor an IP address`},
		{name: "health path is /metrics", args: []string{"--health-check-path=/metrics"}, wantErr: `-health-check-path "/metrics"`},
		{
			name: "a cluster-only ingress-nginx spelling offline",
			args: []string{
				"-manifests", "m", "--default-backend-service", "default/fallback", "--default-ssl-certificate", "default/cert",
				"--shutdown-grace-period", "1m30s", "--controller-class", "example.com/edge", "--update-status=true",
			},
			base:    offline,
			wantErr: "-update-status applies only with a cluster",
		},
		{
			name: "offline, defaults named as ingress-nginx does",
			args: []string{
				"-manifests", "m", "--default-backend-service", "default/fallback", "--default-ssl-certificate", "default/cert",
				"--shutdown-grace-period", "1m30s", "--controller-class", "example.com/edge",
			},
			base: offline,
			want: func(c *config) {
				c.defaultBackendService = &types.NamespacedName{Namespace: "default", Name: "fallback"}
				c.defaultCertificate = &types.NamespacedName{Namespace: "default", Name: "cert"}
				c.drain = 90 * time.Second
				c.options.ControllerName = "example.com/edge"
			},
		},
		{
			name: "cluster, publish service",
			args: []string{"-publish-service", "ingress/ramjet"},
			base: cluster,
			want: func(c *config) { c.publishService = &types.NamespacedName{Namespace: "ingress", Name: "ramjet"} },
		},
		{name: "default backend without port", args: []string{"-manifests", "m", "-default-backend", "kube-system/notfound"}, wantErr: `-default-backend: service reference "kube-system/notfound": missing :port`},
		{name: "cluster default backend without port", args: []string{"--default-backend", "kube-system/notfound"}, wantErr: `-default-backend: service reference "kube-system/notfound": missing :port`},
		{name: "default backend with two slashes", args: []string{"-manifests", "m", "-default-backend", "a/b/c:80"}, wantErr: `-default-backend: service reference "a/b/c:80"`},
		{name: "bad ingress class", args: []string{"-manifests", "m", "-ingress-class", "Not_A_Name"}, wantErr: `option ingress-class "Not_A_Name"`},
		{name: "bad controller name", args: []string{"-manifests", "m", "-controller-name", "no-domain"}, wantErr: `option controller-name "no-domain"`},
		// ingress-nginx claims then only Ingresses annotated with an empty
		// class, never its default one.
		{name: "empty ingress class", args: []string{"-manifests", "m", "-ingress-class="}, wantErr: `-ingress-class "": ingress-nginx would then claim only Ingresses annotated kubernetes.io/ingress.class: ""`},
		{name: "empty ingress class, cluster", args: []string{"--ingress-class", ""}, wantErr: `-ingress-class ""`},
		// ingress-nginx then owns no IngressClass, never the default one's.
		{name: "empty controller name", args: []string{"-manifests", "m", "-controller-name="}, wantErr: `-controller-name (-controller-class) "": ingress-nginx would then own no IngressClass`},
		{name: "empty controller class, cluster", args: []string{"--controller-class", ""}, wantErr: `-controller-name (-controller-class) ""`},
		{name: "stray argument", args: []string{"-manifests", "m", "extra"}, wantErr: `unexpected argument "extra"`},
		{name: "no traffic listener", args: []string{"-manifests", "m", "-http-addr", ""}, wantErr: "nothing would serve traffic"},
		{name: "zero poll interval", args: []string{"-manifests", "m", "-poll-interval", "0s"}, wantErr: "must be positive"},
		{name: "unknown flag", args: []string{"-manifests", "m", "-nope"}, wantErr: "unknown flag -nope (controller -h lists the flags)"},
		{name: "unimplemented ingress-nginx flag", args: []string{"--maxmind-license-key=secret"}, wantErr: "--maxmind-license-key=secret is an ingress-nginx flag ramjet does not implement: ramjet has no GeoIP"},
		{name: "alias and its original", args: []string{"--watch-namespace=a", "--namespace=a"}, wantErr: "-namespace and -watch-namespace are the same setting"},
		{name: "both default backends", args: []string{"--default-backend=a/b:80", "--default-backend-service=a/b"}, wantErr: "-default-backend and -default-backend-service are the same setting"},
		{name: "default backend service with port", args: []string{"--default-backend-service=a/b:80"}, wantErr: `-default-backend-service "a/b:80": name "b:80"`},
		{name: "default backend service without namespace", args: []string{"--default-backend-service=b"}, wantErr: `-default-backend-service "b": want namespace/name`},
		{name: "default certificate without namespace", args: []string{"--default-ssl-certificate=tls"}, wantErr: `-default-ssl-certificate "tls": want namespace/name`},
		{name: "default certificate with bad name", args: []string{"--default-ssl-certificate=a/B"}, wantErr: `-default-ssl-certificate "a/B": name "B"`},
		{name: "negative grace period", args: []string{"--shutdown-grace-period=-5s"}, wantErr: "-shutdown-grace-period: want seconds or a duration"},
		{name: "word grace period", args: []string{"--shutdown-grace-period=soon"}, wantErr: "-shutdown-grace-period: want seconds or a duration"},
		{name: "relative health path", args: []string{"--health-check-path=healthz"}, wantErr: `-health-check-path "healthz"`},
		{name: "health path taken", args: []string{"--health-check-path=/readyz"}, wantErr: `-health-check-path "/readyz"`},
		{name: "cluster flag offline", args: []string{"-manifests", "m", "-publish-service", "a/b"}, wantErr: "-publish-service applies only with a cluster (without -manifests)"},
		{name: "offline flag in cluster", args: []string{"-demo-backends"}, wantErr: "-demo-backends applies only with -manifests"},
		{name: "both publish sources", args: []string{"-publish-service", "a/b", "-publish-address", "10.0.0.1"}, wantErr: "alternatives"},
		{name: "publish service without namespace", args: []string{"-publish-service", "ramjet"}, wantErr: `-publish-service "ramjet": want namespace/name`},
		{name: "publish service with bad name", args: []string{"-publish-service", "a/B_C"}, wantErr: `-publish-service "a/B_C"`},
		{name: "bad publish address", args: []string{"-publish-address", "10.0.0.1,,x"}, wantErr: "-publish-address: option publish-address"},
		{name: "bad namespace", args: []string{"-namespace", "Shop"}, wantErr: `-namespace "Shop"`},
		// An alias's error names the spelling given.
		{name: "bad watch namespace", args: []string{"--watch-namespace", "Shop"}, wantErr: `-watch-namespace "Shop"`},
		{name: "negative sync period", args: []string{"--sync-period=-5m"}, wantErr: "-sync-period -5m0s: must not be negative"},
		{name: "bad publish status address", args: []string{"--publish-status-address", "10.0.0.1,,x"}, wantErr: "-publish-status-address: option publish-address"},
		{name: "bad election id", args: []string{"-election-id", "Leader!"}, wantErr: `-election-id "Leader!"`},
		{name: "bad election namespace", args: []string{"-election-namespace", "a.b"}, wantErr: `-election-namespace "a.b"`},
		{name: "negative resync", args: []string{"-resync-period", "-1s"}, wantErr: "must not be negative"},
		{name: "services ConfigMap without namespace", args: []string{"--tcp-services-configmap=tcp"}, wantErr: `tcp-services-configmap "tcp": want namespace/name`},
		{name: "no UDP sessions", args: []string{"-udp-max-sessions", "0"}, wantErr: "-udp-max-sessions 0: must be at least 1"},
		{
			name: "TCP and UDP services", args: []string{"-manifests", "m", "--tcp-services-configmap=ingress-nginx/tcp-services", "--udp-services-configmap", "ingress-nginx/udp-services", "-udp-max-sessions", "64"},
			base: offline,
			want: func(c *config) {
				c.options.TCPServices, c.options.UDPServices = "ingress-nginx/tcp-services", "ingress-nginx/udp-services"
				c.udpMaxSessions = 64
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := tt.env
			if e == nil {
				e = env
			}
			got, err := parseFlags(tt.args, &bytes.Buffer{}, func(k string) string { return e[k] })
			if tt.wantErr != "" {
				require.Error(t, err)
				require.ErrorIs(t, err, errUsage)
				require.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			want := tt.base
			tt.want(&want)
			if diff := cmp.Diff(want, got, cmp.AllowUnexported(config{}, accessLogKeys{}, nginxStatusAllow{}), cmp.Comparer(func(a, b netip.Prefix) bool { return a == b })); diff != "" {
				t.Errorf("parseFlags (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseFlagsIdentityFromHostname(t *testing.T) {
	host, err := os.Hostname()
	require.NoError(t, err)
	got, err := parseFlags(nil, &bytes.Buffer{}, func(string) string { return "" })
	require.NoError(t, err)
	require.Equal(t, host, got.identity)
	require.Equal(t, "default", got.electionNamespace)
}

func TestParseFlagsHelp(t *testing.T) {
	var out bytes.Buffer
	_, err := parseFlags([]string{"-h"}, &out, func(string) string { return "" })
	require.True(t, errors.Is(err, flag.ErrHelp), "err = %v", err)
	require.Contains(t, out.String(), "-demo-backends")
}

func TestLogLevel(t *testing.T) {
	tests := []struct {
		in      string
		want    slog.Level
		wantErr bool
	}{
		{in: "", want: slog.LevelInfo},
		{in: "info", want: slog.LevelInfo},
		{in: "DEBUG", want: slog.LevelDebug},
		{in: "warn", want: slog.LevelWarn},
		{in: "error", want: slog.LevelError},
		{in: "loud", wantErr: true},
	}
	for _, tt := range tests {
		got, err := logLevel(tt.in, nil)
		if tt.wantErr {
			require.Error(t, err, "logLevel(%q)", tt.in)
			continue
		}
		require.NoError(t, err, "logLevel(%q)", tt.in)
		require.Equal(t, tt.want, got, "logLevel(%q)", tt.in)
	}
}

// ingress-nginx's --v (klog's verbosity, which its chart's users set
// through controller.extraArgs) sets the level when RAMJET_LOG does not:
// up to 2 is ingress-nginx's normal logging, 3 and above its detail.
func TestLogLevelVerbosity(t *testing.T) {
	for v, want := range map[int]slog.Level{0: slog.LevelInfo, 1: slog.LevelInfo, 2: slog.LevelInfo, 3: slog.LevelDebug, 5: slog.LevelDebug, 10: slog.LevelDebug} {
		got, err := logLevel("", &v)
		require.NoError(t, err, "--v=%d", v)
		require.Equal(t, want, got, "--v=%d", v)
	}
	// A flag beats the environment, as it beats the ConfigMap.
	two := 2
	got, err := logLevel("debug", &two)
	require.NoError(t, err)
	require.Equal(t, slog.LevelInfo, got)

	for arg, want := range map[string]int{"--v=2": 2, "-v": 4, "--v=0": 0} {
		args := []string{"-manifests", "m", arg}
		if arg == "-v" {
			args = append(args, "4")
		}
		cfg, err := parseFlags(args, io.Discard, func(string) string { return "" })
		require.NoError(t, err, arg)
		require.NotNil(t, cfg.verbosity, arg)
		require.Equal(t, want, *cfg.verbosity, arg)
	}
	cfg, err := parseFlags([]string{"-manifests", "m"}, io.Discard, func(string) string { return "" })
	require.NoError(t, err)
	require.Nil(t, cfg.verbosity, "no --v leaves RAMJET_LOG to decide")
	for _, bad := range []string{"--v=-1", "--v=loud", "--v=2.5"} {
		_, err := parseFlags([]string{"-manifests", "m", bad}, io.Discard, func(string) string { return "" })
		require.ErrorIs(t, err, errUsage, bad)
		require.ErrorContains(t, err, "-v", bad)
	}
}

func TestRunExitCodes(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		logEnv string
		code   int
		stderr string
	}{
		{name: "help", args: []string{"-h"}, code: 0, stderr: "Usage: controller"},
		{name: "malformed default backend", args: []string{"-manifests", "m", "-default-backend", "kube-system/notfound"}, code: 2, stderr: "missing :port"},
		{name: "bad log level", args: []string{"-manifests", "m"}, logEnv: "loud", code: 2, stderr: `RAMJET_LOG="loud"`},
		{name: "log level twice", args: []string{"-manifests", "/nonexistent/ramjet-manifests", "--v=3", "-http-addr", "127.0.0.1:0", "-debug-addr", ""}, logEnv: "info", code: 1, stderr: `level=WARN msg="--v sets the log level; RAMJET_LOG is ignored" v=3 RAMJET_LOG=info`},
		{name: "bad verbosity", args: []string{"-manifests", "m", "--v=high"}, code: 2, stderr: `controller: usage: invalid value "high" for flag -v: want a whole number, 0 or more`},
		{name: "missing folder", args: []string{"-manifests", "/nonexistent/ramjet-manifests", "-http-addr", "127.0.0.1:0", "-debug-addr", ""}, code: 1, stderr: "no such file or directory"},
		{name: "cluster, malformed default backend", args: []string{"--default-backend", "a/b/c:80"}, code: 2, stderr: `controller: usage: -default-backend: service reference "a/b/c:80"`},
		{name: "cluster, malformed publish address", args: []string{"--publish-address", "10.0.0.256"}, code: 2, stderr: `"10.0.0.256" is not a valid IP address`},
		{name: "ingress-nginx flag", args: []string{"--maxmind-license-key=secret"}, code: 2, stderr: "controller: usage: --maxmind-license-key=secret is an ingress-nginx flag ramjet does not implement: ramjet has no GeoIP"},
		{name: "unknown flag", args: []string{"--nope"}, code: 2, stderr: "controller: usage: unknown flag --nope (controller -h lists the flags)\n"},
		{name: "unknown HTTP/1 server", args: []string{"-manifests", "m", "-http1-server", "nginx"}, code: 2, stderr: `controller: usage: -http1-server "nginx" is neither "ramjet" nor "net/http"`},
		{name: "unknown HTTP/2 server", args: []string{"-manifests", "m", "-http2-server", "h2o"}, code: 2, stderr: `controller: usage: -http2-server "h2o" is neither "ramjet" nor "net/http"`},
		{name: "cluster, missing kubeconfig", args: []string{"--kubeconfig", "/nonexistent/kubeconfig", "--http-addr", "127.0.0.1:0", "--debug-addr", ""}, code: 1, stderr: "-kubeconfig /nonexistent/kubeconfig"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			env := map[string]string{"RAMJET_LOG": tt.logEnv, "POD_NAME": "test"}
			code := run(tt.args, func(k string) string { return env[k] }, io.Discard, &stderr)
			require.Equal(t, tt.code, code, "stderr: %s", stderr.String())
			require.True(t, strings.Contains(stderr.String(), tt.stderr), "stderr %q does not contain %q", stderr.String(), tt.stderr)
			if tt.code == 2 {
				require.NotContains(t, stderr.String(), "Usage:", "a bad command line is named, not answered with the whole usage")
			}
		})
	}
}

// The webhook's flags are ingress-nginx's, checked together, cluster only.
func TestWebhookFlags(t *testing.T) {
	env := func(string) string { return "pod" }
	cfg, err := parseFlags([]string{"--validating-webhook=:8443", "--validating-webhook-certificate=/usr/local/certificates/cert",
		"--validating-webhook-key=/usr/local/certificates/key", "--admission-reject-severity=traffic-moves"}, io.Discard, env)
	require.NoError(t, err)
	require.Equal(t, ":8443", cfg.webhookAddr)
	require.Equal(t, "/usr/local/certificates/cert", cfg.webhookCert)
	require.Equal(t, "/usr/local/certificates/key", cfg.webhookKey)
	require.Equal(t, compile.TrafficMoves, cfg.admissionRejectSeverity)

	for args, want := range map[string]string{
		"--validating-webhook=:8443": "needs -validating-webhook-certificate and -validating-webhook-key",
		"--validating-webhook=:8443 --validating-webhook-certificate=c --validating-webhook-key=k --admission-reject-severity=bad": `-admission-reject-severity "bad": want traffic-moves, feature-missing or cosmetic`,
		"--admission-reject-severity=cosmetic":    "need -validating-webhook",
		"-manifests=. --validating-webhook=:8443": "-validating-webhook applies only with a cluster",
	} {
		_, err := parseFlags(strings.Fields(args), io.Discard, env)
		require.ErrorIs(t, err, errUsage, args)
		require.ErrorContains(t, err, want, args)
	}
}

// TestHTTP2ClientReachesRouter: -http2-client net/http is the router's
// Options.NetHTTP2Client.
func TestHTTP2ClientReachesRouter(t *testing.T) {
	for _, v := range []string{"ramjet", "net/http"} {
		c, err := parseFlags([]string{"-manifests", "m", "-http2-client", v}, io.Discard, func(string) string { return "" })
		require.NoError(t, err)
		o := routerOptions(c, slog.New(slog.DiscardHandler), nil)
		require.Equal(t, v == "net/http", o.NetHTTP2Client, v)
	}
}

// TestHTTPSPortReachesRouter: use-port-in-redirects names the -https-addr
// listener's port, as ingress-nginx names its --https-port; 443 without.
func TestHTTPSPortReachesRouter(t *testing.T) {
	for args, want := range map[string]int{"-manifests m -https-addr :8443": 8443, "-manifests m": 0} {
		c, err := parseFlags(strings.Fields(args), io.Discard, func(string) string { return "" })
		require.NoError(t, err)
		o := routerOptions(c, slog.New(slog.DiscardHandler), nil)
		require.Equal(t, want, o.HTTPSPort, args)
	}
}

// TestReadmeFlagDefaults holds the README's flag table to the defaults the
// flags have: a row whose default is one literal value names the value
// the command line starts with.
func TestReadmeFlagDefaults(t *testing.T) {
	var usage bytes.Buffer
	_, err := parseFlags([]string{"-h"}, &usage, func(string) string { return "" })
	require.ErrorIs(t, err, flag.ErrHelp)
	// PrintDefaults: "  -name type" then the help, ending in
	// (default X) unless the default is the zero value.
	defaults := map[string]string{}
	name := ""
	for line := range strings.Lines(usage.String()) {
		if f := strings.Fields(line); strings.HasPrefix(line, "  -") && len(f) > 0 {
			name = strings.TrimPrefix(f[0], "-")
			defaults[name] = ""
			if len(f) == 1 {
				defaults[name] = "false" // a bool
			}
		}
		if m := regexp.MustCompile(`\(default "?([^")]*)"?\)\s*$`).FindStringSubmatch(line); m != nil && name != "" {
			defaults[name] = m[1]
		}
	}
	readme, err := os.ReadFile("README.md")
	require.NoError(t, err)
	row := regexp.MustCompile("^\\| `--([a-z0-9-]+)`(?: \\(`--[a-z-]+`\\))? \\| `([^`]*)`")
	checked := 0
	for line := range strings.Lines(string(readme)) {
		m := row.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		def, ok := defaults[m[1]]
		require.True(t, ok, "README lists --%s, which is not a flag", m[1])
		if def == "" {
			continue // an empty default the help explains in words
		}
		if d, err := time.ParseDuration(def); err == nil && d == 0 {
			def = "0"
		}
		require.Equal(t, def, m[2], "README's default of --%s", m[1])
		checked++
	}
	require.Greater(t, checked, 10, "the README's flag table was read")
}

// TestReportNodeInternalIPFlag: ingress-nginx's
// --report-node-internal-ip-address is read (statusnodes.go), cluster only.
func TestReportNodeInternalIPFlag(t *testing.T) {
	env := func(string) string { return "pod" }
	cfg, err := parseFlags([]string{"--report-node-internal-ip-address"}, io.Discard, env)
	require.NoError(t, err)
	require.True(t, cfg.nodeInternalIP)
	cfg, err = parseFlags([]string{"--report-node-internal-ip-address=false"}, io.Discard, env)
	require.NoError(t, err)
	require.False(t, cfg.nodeInternalIP)
	_, err = parseFlags([]string{"-manifests=.", "--report-node-internal-ip-address"}, io.Discard, env)
	require.ErrorIs(t, err, errUsage)
	require.ErrorContains(t, err, "applies only with a cluster")
}
