package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/compile"
)

// wafManifests routes each host to one loopback backend, each Ingress
// with its own annotations.
func wafManifests(port string, hosts map[string]map[string]string) string {
	var b strings.Builder
	b.WriteString(`apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata:
  name: ramjet
spec:
  controller: ramjet.dev/ingress
---
apiVersion: v1
kind: Service
metadata:
  name: app
  namespace: t
spec:
  ports:
    - port: 80
      targetPort: 8080
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: app-1
  namespace: t
  labels:
    kubernetes.io/service-name: app
addressType: IPv4
ports:
  - port: ` + port + `
endpoints:
  - addresses: ["127.0.0.1"]
`)
	for host, annotations := range hosts {
		name := strings.TrimSuffix(host, ".test")
		fmt.Fprintf(&b, "---\napiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata:\n  name: %q\n  namespace: t\n  annotations:\n", name)
		for k, v := range annotations {
			fmt.Fprintf(&b, "    nginx.ingress.kubernetes.io/%s: %q\n", k, v)
		}
		if len(annotations) == 0 {
			b.WriteString("    {}\n")
		}
		fmt.Fprintf(&b, `spec:
  ingressClassName: ramjet
  rules:
    - host: %s
      http:
        paths:
          - path: /
            pathType: Prefix
            backend:
              service:
                name: app
                port:
                  number: 80
`, host)
	}
	return b.String()
}

// bodyBackend answers with the request-target and the body it received.
func bodyBackend(t testing.TB) (port string) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, "%s %s body=%d:%s", r.Method, r.RequestURI, len(body), body)
	}))
	t.Cleanup(srv.Close)
	u, err := url.Parse(srv.URL)
	require.NoError(t, err)
	return u.Port()
}

// startWAF serves hosts offline with the ConfigMap settings g.
func startWAF(t *testing.T, hosts map[string]map[string]string, g modSecuritySettings) (*instance, *syncBuffer) {
	t.Helper()
	return startWAFManifests(t, wafManifests(bodyBackend(t), hosts), g)
}

// startWAFManifests serves manifests offline with the ConfigMap settings g.
func startWAFManifests(t *testing.T, manifests string, g modSecuritySettings) (*instance, *syncBuffer) {
	t.Helper()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "app.yaml"), manifests)
	cfg := config{manifests: dir, httpAddr: "127.0.0.1:0", pollInterval: time.Hour, modSecurity: g}
	// modsecurity-snippet is Critical-risk: ingress-nginx reads it only
	// with these two ConfigMap keys set so.
	cfg.options.AllowSnippetAnnotations, cfg.options.AnnotationsRiskLevel = true, "Critical"
	logs := new(syncBuffer)
	ctx, cancel := context.WithCancel(context.Background())
	inst, err := start(ctx, cfg, slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelWarn})))
	require.NoError(t, err)
	t.Cleanup(func() {
		cancel()
		require.NoError(t, inst.Wait())
	})
	return inst, logs
}

// The classic attacks of the CRS's own regression tests: SQL injection
// (942100, libinjection) and path traversal to an OS file (930110,
// 930120) in a query argument, and an SQL injection in a form body.
var (
	sqlInjection  = "/?id=" + url.QueryEscape("1' OR '1'='1")
	pathTraversal = "/?file=" + url.QueryEscape("../../../../etc/passwd")
	formInjection = "user=" + url.QueryEscape("admin' OR '1'='1' --")
)

// send makes one request to the instance for host.
func send(t *testing.T, inst *instance, method, host, target, form string) (int, string) {
	t.Helper()
	var body io.Reader
	if form != "" {
		body = strings.NewReader(form)
	}
	req, err := http.NewRequest(method, "http://"+inst.HTTPAddr+target, body)
	require.NoError(t, err)
	req.Host = host
	if form != "" {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	// The bound only keeps a hung exchange from stalling the run: the CRS's
	// rules over a 22 KB form take seconds under -race on a busy machine.
	client := &http.Client{Timeout: time.Minute}
	defer client.CloseIdleConnections()
	resp, err := client.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

// TestModSecurityCRS: with the OWASP CRS, SecRuleEngine On refuses the
// classic SQL injection and path traversal with 403 (the CRS's anomaly
// rule 949110) and DetectionOnly, ingress-nginx's default
// (/etc/nginx/modsecurity/modsecurity.conf), serves them and logs the
// rules that matched; a clean request, and its body, pass both; a
// location without the WAF is not inspected. After ingress-nginx's
// modsecurity e2e tests ("should enable modsecurity with transaction ID
// and OWASP rules", "…with snippet and block requests").
func TestModSecurityCRS(t *testing.T) {
	inst, logs := startWAF(t, map[string]map[string]string{
		"on.test": {"enable-modsecurity": "true", "enable-owasp-core-rules": "true",
			"modsecurity-snippet": "SecRuleEngine On\nSecRequestBodyAccess On", "modsecurity-transaction-id": "waf-$request_id"},
		"detect.test": {"enable-modsecurity": "true", "enable-owasp-core-rules": "true"},
		"plain.test":  {},
	}, modSecuritySettings{})

	for _, target := range []string{sqlInjection, pathTraversal} {
		status, body := send(t, inst, http.MethodGet, "on.test", target, "")
		assert.Equal(t, http.StatusForbidden, status, "On refuses %s: %s", target, body)
		assert.Contains(t, body, "403 Forbidden")
	}
	status, _ := send(t, inst, http.MethodPost, "on.test", "/login", formInjection)
	assert.Equal(t, http.StatusForbidden, status, "the body is inspected")
	assert.Contains(t, logs.String(), "modsecurity refused the request")
	assert.Contains(t, logs.String(), "rule=949110")
	assert.Contains(t, logs.String(), "transaction=waf-")

	before := logs.count("rule=942100")
	status, body := send(t, inst, http.MethodGet, "detect.test", sqlInjection, "")
	assert.Equal(t, http.StatusOK, status, "DetectionOnly serves: %s", body)
	assert.Greater(t, logs.count("rule=942100"), before, "and logs the SQL injection rule")
	before = logs.count("rule=930120")
	status, _ = send(t, inst, http.MethodGet, "detect.test", pathTraversal, "")
	assert.Equal(t, http.StatusOK, status)
	assert.Greater(t, logs.count("rule=930120"), before, "and logs the OS file access rule")
	status, body = send(t, inst, http.MethodPost, "detect.test", "/login", formInjection)
	assert.Equal(t, http.StatusOK, status)
	assert.Equal(t, "POST /login body="+fmt.Sprint(len(formInjection))+":"+formInjection, body, "the backend gets the body whole")

	refused := logs.count("modsecurity refused the request")
	matched := logs.count("modsecurity rule matched")
	for _, host := range []string{"on.test", "detect.test", "plain.test"} {
		status, body := send(t, inst, http.MethodGet, host, "/products?id=42&q=blue+shoes", "")
		assert.Equal(t, http.StatusOK, status, host)
		assert.Equal(t, "GET /products?id=42&q=blue+shoes body=0:", body, host)
		form := "user=alice&comment=" + url.QueryEscape(strings.Repeat("a fine day ", 2000))
		status, body = send(t, inst, http.MethodPost, host, "/comment", form)
		assert.Equal(t, http.StatusOK, status, host)
		assert.Equal(t, "POST /comment body="+fmt.Sprint(len(form))+":"+form, body, host)
	}
	status, _ = send(t, inst, http.MethodGet, "plain.test", sqlInjection, "")
	assert.Equal(t, http.StatusOK, status, "no WAF on plain.test")
	assert.Equal(t, refused, logs.count("modsecurity refused the request"), "clean requests are not refused")
	assert.Equal(t, matched, logs.count("modsecurity rule matched"), "nor match a rule:\n%s", logs)
}

// TestModSecurityGlobal: the ConfigMap's enable-modsecurity turns the WAF
// on for every location, its modsecurity-snippet configures it, and an
// Ingress's snippet adds its rules; enable-modsecurity "false" on an
// Ingress turns it off there. After ingress-nginx's e2e tests "should
// enable modsecurity through the config map" and "should disable
// modsecurity using 'modsecurity off;'".
func TestModSecurityGlobal(t *testing.T) {
	inst, _ := startWAF(t, map[string]map[string]string{
		"ua.test": {"modsecurity-snippet": `SecRequestBodyAccess On
SecAuditEngine RelevantOnly
SecAuditLog /dev/stdout
SecRule REQUEST_HEADERS:User-Agent \"block-ua\" \"log,deny,id:107,status:403,msg:\'UA blocked\'\"`},
		"off.test":   {"enable-modsecurity": "false"},
		"plain.test": {},
	}, modSecuritySettings{Enable: true, OWASP: true, Snippet: "SecRuleEngine On"})

	status, _ := send(t, inst, http.MethodGet, "plain.test", sqlInjection, "")
	assert.Equal(t, http.StatusForbidden, status, "the ConfigMap's CRS, On")
	status, _ = send(t, inst, http.MethodGet, "off.test", sqlInjection, "")
	assert.Equal(t, http.StatusOK, status, "turned off for this Ingress")

	req, err := http.NewRequest(http.MethodGet, "http://"+inst.HTTPAddr+"/", nil)
	require.NoError(t, err)
	req.Host = "ua.test"
	req.Header.Set("User-Agent", "block-ua")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusForbidden, resp.StatusCode, "the Ingress's rule, under the ConfigMap's engine")
	status, _ = send(t, inst, http.MethodGet, "ua.test", "/", "")
	assert.Equal(t, http.StatusOK, status)
}

// TestModSecurityBadSnippet: rules Coraza refuses warn, naming the Ingress
// and the annotation, and that Ingress's paths answer 503 rather than
// serve unprotected; the other Ingresses are served.
func TestModSecurityBadSnippet(t *testing.T) {
	inst, logs := startWAF(t, map[string]map[string]string{
		"bad.test":     {"enable-modsecurity": "true", "modsecurity-snippet": "SecRuleEngine On\nSecRule ARGS \"@nosuchop x\" \"id:1,deny\""},
		"include.test": {"enable-modsecurity": "true", "modsecurity-snippet": "Include /etc/passwd"},
		"good.test":    {"enable-modsecurity": "true"},
	}, modSecuritySettings{})
	for _, host := range []string{"bad.test", "include.test"} {
		status, _ := send(t, inst, http.MethodGet, host, "/", "")
		assert.Equal(t, http.StatusServiceUnavailable, status, host)
	}
	status, _ := send(t, inst, http.MethodGet, "good.test", "/", "")
	assert.Equal(t, http.StatusOK, status)
	for _, name := range []string{"t/bad", "t/include"} {
		assert.Contains(t, logs.String(), "object=\"Ingress "+name+"\" field=metadata.annotations[nginx.ingress.kubernetes.io/modsecurity-snippet]")
	}
	assert.Contains(t, logs.String(), "ModSecurity rules refused by Coraza")

	// The ConfigMap's rules failing fail every location, and say so.
	inst, logs = startWAF(t, map[string]map[string]string{"good.test": {}},
		modSecuritySettings{Enable: true, Snippet: "SecRuleEngine On\nSecNoSuchDirective x"})
	status, _ = send(t, inst, http.MethodGet, "good.test", "/", "")
	assert.Equal(t, http.StatusServiceUnavailable, status)
	assert.Contains(t, logs.String(), "the ConfigMap's ModSecurity rules")
}

// TestModSecuritySnippetRules: a snippet is read as nginx reads the
// quoted string ingress-nginx writes it into, and the directives that
// would write files are dropped.
func TestModSecuritySnippetRules(t *testing.T) {
	got, err := snippetRules(`SecRuleEngine On
SecAuditLog /var/log/audit.log
SecAuditLogStorageDir \
    /var/log/audit/
SecRule REQUEST_HEADERS:User-Agent \"block-ua\" \"log,deny,id:107,status:403,msg:\'UA blocked\'\"`)
	require.NoError(t, err)
	assert.Equal(t, "SecRuleEngine On\nSecRule REQUEST_HEADERS:User-Agent \"block-ua\" \"log,deny,id:107,status:403,msg:'UA blocked'\"", got)
	_, err = snippetRules(`SecRule ARGS "x" "id:1,msg:'unescaped'"`)
	assert.Error(t, err)
}

// TestCompileOptionsModSecurity: the annotations reach the hook, and the
// options stay valid.
func TestCompileOptionsModSecurity(t *testing.T) {
	opts := compileOptions(config{}, nil)
	assert.Equal(t, modSecurityKeys, opts.ExtensionKeys)
	require.NoError(t, opts.Validate())
	var _ compile.Options = opts
}

// TestModSecurityConfigMapKeys: the ConfigMap's keys, with ingress-nginx's
// value syntax.
func TestModSecurityConfigMapKeys(t *testing.T) {
	var c config
	for k, v := range map[string]string{"enable-modsecurity": "true", "enable-owasp-modsecurity-crs": "1", "modsecurity-snippet": "SecRuleEngine On"} {
		require.NoError(t, modSecurityConfigMapKeys[k](&c, v), k)
	}
	assert.Equal(t, modSecuritySettings{Enable: true, OWASP: true, Snippet: "SecRuleEngine On"}, c.modSecurity)
	assert.Error(t, modSecurityConfigMapKeys["enable-modsecurity"](&c, "yes please"))
}

// TestModSecurityClientLeaves: a client that leaves while the WAF reads
// its body ends the request's context mid-inspection; the transaction's
// logging and close wait for the inspection (a close beside it was a data
// race the detector reported under load in TestModSecurityCRS), and the
// next request is served.
func TestModSecurityClientLeaves(t *testing.T) {
	inst, _ := startWAF(t, map[string]map[string]string{
		"on.test": {"enable-modsecurity": "true", "modsecurity-snippet": "SecRuleEngine On\nSecRequestBodyAccess On"},
	}, modSecuritySettings{})
	for range 10 {
		c, err := net.Dial("tcp", inst.HTTPAddr)
		require.NoError(t, err)
		fmt.Fprintf(c, "POST /comment HTTP/1.1\r\nHost: on.test\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 100000\r\n\r\nuser=alice&comment=")
		time.Sleep(20 * time.Millisecond) // the hook is reading the body
		require.NoError(t, c.Close())
	}
	form := "user=alice&comment=hello"
	status, body := send(t, inst, http.MethodPost, "on.test", "/comment", form)
	assert.Equal(t, http.StatusOK, status)
	assert.Equal(t, "POST /comment body="+fmt.Sprint(len(form))+":"+form, body)
}

// TestModSecurityInspectsNonGRPCBody: a body the router sends to an HTTP
// backend is inspected whatever its Content-Type; only a gRPC request (as
// the router tells one: application/grpc, +proto, ;params) streams past
// the WAF. A Content-Type that merely starts with "application/grpc"
// (grpc-web, grpcx) would otherwise carry a body past the rules.
func TestModSecurityInspectsNonGRPCBody(t *testing.T) {
	inst, _ := startWAF(t, map[string]map[string]string{
		"on.test": {"enable-modsecurity": "true",
			"modsecurity-snippet": "SecRuleEngine On\nSecRequestBodyAccess On\n" +
				"SecAction \"id:1000,phase:1,pass,nolog,ctl:forceRequestBodyVariable=On\"\n" +
				"SecRule REQUEST_BODY \"@contains evilpayload\" \"id:1001,phase:2,deny,status:403\""},
	}, modSecuritySettings{})
	for _, ct := range []string{"text/plain", "application/grpc-web", "application/grpcx", "application/grpc-web-text"} {
		req, err := http.NewRequest(http.MethodPost, "http://"+inst.HTTPAddr+"/upload", strings.NewReader("x=evilpayload"))
		require.NoError(t, err)
		req.Host = "on.test"
		req.Header.Set("Content-Type", ct)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		assert.Equal(t, http.StatusForbidden, resp.StatusCode, "%s: %s", ct, b)
	}
}

// TestModSecurityFallback: a request no path of a host matches is served
// by the host's fallback with the location settings of the Ingress that
// created the host, its WAF included, as ingress-nginx writes that
// Ingress's annotations into the host's default location
// (locationApplyAnnotations): on there when the Ingress turns it on, off
// when it turns off the ConfigMap's.
func TestModSecurityFallback(t *testing.T) {
	ingress := func(host string, annotations map[string]string) string {
		m := wafManifests(bodyBackend(t), map[string]map[string]string{host: annotations})
		// Only /api is declared; the rest of the host falls back to the
		// Ingress's spec.defaultBackend.
		m = strings.Replace(m, "          - path: /\n", "          - path: /api\n", 1)
		return strings.Replace(m, "spec:\n  ingressClassName: ramjet\n",
			"spec:\n  ingressClassName: ramjet\n  defaultBackend:\n    service:\n      name: app\n      port:\n        number: 80\n", 1)
	}
	inst, _ := startWAFManifests(t, ingress("on.test", map[string]string{"enable-modsecurity": "true", "enable-owasp-core-rules": "true",
		"modsecurity-snippet": "SecRuleEngine On"}), modSecuritySettings{})
	status, body := send(t, inst, http.MethodGet, "on.test", "/api"+sqlInjection[1:], "")
	require.Equal(t, http.StatusForbidden, status, "the declared path: %s", body)
	status, body = send(t, inst, http.MethodGet, "on.test", sqlInjection, "")
	assert.Equal(t, http.StatusForbidden, status, "the host's fallback: %s", body)

	inst, _ = startWAFManifests(t, ingress("off.test", map[string]string{"enable-modsecurity": "false"}),
		modSecuritySettings{Enable: true, OWASP: true, Snippet: "SecRuleEngine On"})
	status, body = send(t, inst, http.MethodGet, "off.test", "/api"+sqlInjection[1:], "")
	require.Equal(t, http.StatusOK, status, "the declared path: %s", body)
	status, body = send(t, inst, http.MethodGet, "off.test", sqlInjection, "")
	assert.Equal(t, http.StatusOK, status, "the host's fallback: %s", body)
}

// TestModSecurityBodyAfterUnavailable: the request-body phase runs where
// ModSecurity-nginx runs it, in nginx's preaccess phase, after
// ingress-nginx's balancer has answered 503 for a backend without
// endpoints (rewrite phase): such a request gets that 503, not a phase-2
// rule's refusal, and its body is not read. The request-head phase still
// refuses first. A backend that can take it gets the phase-2 refusal.
func TestModSecurityBodyAfterUnavailable(t *testing.T) {
	annotations := map[string]string{"enable-modsecurity": "true",
		"modsecurity-snippet": "SecRuleEngine On\nSecRequestBodyAccess On\n" +
			"SecRule REQUEST_HEADERS:User-Agent \"@contains block-ua\" \"id:1000,phase:1,deny,status:403\"\n" +
			"SecRule ARGS \"@contains evilpayload\" \"id:1001,phase:2,deny,status:403\""}
	m := wafManifests(bodyBackend(t), map[string]map[string]string{"on.test": annotations, "empty.test": annotations})
	m = strings.Replace(m, "    - host: empty.test\n      http:\n        paths:\n          - path: /\n            pathType: Prefix\n            backend:\n              service:\n                name: app\n",
		"    - host: empty.test\n      http:\n        paths:\n          - path: /\n            pathType: Prefix\n            backend:\n              service:\n                name: empty\n", 1)
	m += "---\napiVersion: v1\nkind: Service\nmetadata:\n  name: empty\n  namespace: t\nspec:\n  ports:\n    - port: 80\n"
	inst, logs := startWAFManifests(t, m, modSecuritySettings{})

	status, _ := send(t, inst, http.MethodPost, "on.test", "/", "x=evilpayload")
	assert.Equal(t, http.StatusForbidden, status, "a backend with endpoints: the phase-2 rule refuses")
	refused := logs.count("modsecurity refused the request")
	status, body := send(t, inst, http.MethodPost, "empty.test", "/", "x=evilpayload")
	assert.Equal(t, http.StatusServiceUnavailable, status, "no endpoints: 503 before the body phase: %s", body)
	status, _ = send(t, inst, http.MethodGet, "empty.test", "/?x=evilpayload", "")
	assert.Equal(t, http.StatusServiceUnavailable, status, "phase-2 rules on the query too")
	assert.Equal(t, refused, logs.count("modsecurity refused the request"))

	req, err := http.NewRequest(http.MethodGet, "http://"+inst.HTTPAddr+"/", nil)
	require.NoError(t, err)
	req.Host = "empty.test"
	req.Header.Set("User-Agent", "block-ua")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusForbidden, resp.StatusCode, "the head phase comes before the 503")
}

// TestModSecurityBodyOverLimit: a chunked body over the location's
// proxy-body-size gets nginx's 413, which nginx answers while reading the
// body for ModSecurity, before its request-body phase runs: a phase-2
// rule does not see the part read.
func TestModSecurityBodyOverLimit(t *testing.T) {
	inst, _ := startWAF(t, map[string]map[string]string{
		"on.test": {"enable-modsecurity": "true", "proxy-body-size": "16",
			"modsecurity-snippet": "SecRuleEngine On\nSecRequestBodyAccess On\n" +
				"SecRule ARGS \"@contains evilpayload\" \"id:1001,phase:2,deny,status:403\""},
	}, modSecuritySettings{})
	post := func(form string) int {
		// A reader of unknown length: the body is sent chunked, with no
		// Content-Length the router could refuse before reading it.
		req, err := http.NewRequest(http.MethodPost, "http://"+inst.HTTPAddr+"/", io.MultiReader(strings.NewReader(form)))
		require.NoError(t, err)
		req.Host = "on.test"
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	assert.Equal(t, http.StatusForbidden, post("x=evilpayload"), "within the limit: inspected")
	assert.Equal(t, http.StatusRequestEntityTooLarge, post("x=evilpayload&y=0123456789"), "over it: 413")
	assert.Equal(t, http.StatusOK, post("x=fine"))
}
