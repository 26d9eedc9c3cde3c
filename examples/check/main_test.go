package main

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/compile"
	"ramjet.dev/ramjet/compile/manifest"
	"ramjet.dev/ramjet/router/routertest"
)

const passing = `
name: no routes
objects: []
requests:
- host: a.example.com
  path: /
  repeat: 5
  expect: {status: 404, service: null}
- host: ""
  path: /x
  expect: {status: 404}
`

const failing = `
- name: expects a route that does not exist
  objects: []
  requests:
  - host: a.example.com
    path: /missing
    expect: {status: 200}
  - host: a.example.com
    path: /
    expect: {status: 404}
`

func writeCase(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
	return p
}

// checkRun runs the command and returns its exit code, stdout and stderr.
func checkRun(args ...string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	code := run(args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	return lines[len(lines)-1]
}

func TestRun(t *testing.T) {
	dir := t.TempDir()
	pass := writeCase(t, dir, "pass.yaml", passing)
	fail := writeCase(t, dir, "fail.yaml", failing)
	bad := writeCase(t, dir, "bad.yaml", "name: x\nrequests: [{host: a, path: /, expect: {stauts: 200}}]\n")

	// Rows run in order: the first writes the goldens the others compare.
	tests := []struct {
		name     string
		args     []string
		code     int
		stdout   []string // lines that must appear
		lastLine string
		stderr   string
	}{
		{
			name: "a missing golden fails", args: []string{pass}, code: 1,
			stdout:   []string{filepath.Join(dir, "pass.golden") + ": golden table missing; run go test (or examples/check) with -update to create it"},
			lastLine: "2 passed, 0 failed; goldens: 0 passed, 1 failed",
		},
		{
			name: "-update writes the goldens", args: []string{"-update", pass, fail}, code: 1,
			stdout:   []string{"updated " + filepath.Join(dir, "pass.golden"), "updated " + filepath.Join(dir, "fail.golden")},
			lastLine: "3 passed, 1 failed; goldens: 2 passed, 0 failed",
		},
		{
			name: "all pass", args: []string{pass}, code: 0,
			lastLine: "2 passed, 0 failed; goldens: 1 passed, 0 failed",
		},
		{
			name: "a failure is shown with its diff", args: []string{pass, fail}, code: 1,
			stdout: []string{
				`case "expects a route that does not exist" (` + fail + `)`,
				`  requests[0]: GET /missing host="a.example.com"`,
				`    status:  want 200`,
				`             got  404 (no-route)`,
			},
			lastLine: "3 passed, 1 failed; goldens: 2 passed, 0 failed",
		},
		{
			name: "-v shows every case", args: []string{"-v", pass}, code: 0,
			stdout:   []string{`ok   case "no routes" (` + pass + `): 2 requests passed, 0 failed`},
			lastLine: "2 passed, 0 failed; goldens: 1 passed, 0 failed",
		},
		{
			name: "glob", args: []string{filepath.Join(dir, "*ass.yaml")}, code: 0,
			lastLine: "2 passed, 0 failed; goldens: 1 passed, 0 failed",
		},
		{
			name: "load error names the file", args: []string{pass, bad}, code: 2,
			stderr: bad + `: case "x": unknown key "requests[0].expect.stauts"`,
		},
		{
			name: "missing file", args: []string{filepath.Join(dir, "nope.yaml")}, code: 2,
			stderr: "nope.yaml",
		},
		{name: "no arguments", args: nil, code: 2, stderr: "usage: check [-json] [-v] [-update] FILE|DIR|GLOB..."},
		{
			name: "compile options belong to -translate", args: []string{"-ingress-class", "x", pass}, code: 2,
			stderr: "check: compile options apply to -translate, -explain and -report; case files set their own",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := checkRun(tt.args...)
			require.Equal(t, tt.code, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
			for _, l := range tt.stdout {
				require.Contains(t, stdout, l+"\n")
			}
			if tt.lastLine != "" {
				require.Equal(t, tt.lastLine, lastLine(stdout))
			}
			if tt.stderr != "" {
				require.Contains(t, stderr, tt.stderr)
			} else {
				require.Empty(t, stderr)
			}
		})
	}
}

// jsonReport is the -json document as a consumer reads it.
type jsonReport struct {
	OK            bool     `json:"ok"`
	Passed        int      `json:"passed"`
	Failed        int      `json:"failed"`
	WarningChecks counts   `json:"warningChecks"`
	GoldenChecks  counts   `json:"goldenChecks"`
	Errors        []string `json:"errors"`
	Results       []struct {
		File     string `json:"file"`
		Case     string `json:"case"`
		Warnings []struct {
			Reason, Object, Field, Message string
		} `json:"warnings"`
		WarningsDiff string `json:"warningsDiff"`
		Requests     []struct {
			Pass       bool `json:"pass"`
			Mismatches []struct {
				Field, Want, Got string
			} `json:"mismatches"`
			Got struct {
				Status int    `json:"status"`
				Route  string `json:"route"`
			} `json:"got"`
		} `json:"requests"`
	} `json:"results"`
	Goldens []struct {
		File    string `json:"file"`
		Path    string `json:"path"`
		Match   bool   `json:"match"`
		Problem string `json:"problem"`
	} `json:"goldens"`
}

func decodeReport(t *testing.T, stdout string) jsonReport {
	t.Helper()
	var doc jsonReport
	require.NoError(t, json.Unmarshal([]byte(stdout), &doc), stdout)
	return doc
}

func TestRunJSON(t *testing.T) {
	dir := t.TempDir()
	writeCase(t, dir, "pass.yaml", passing)
	writeCase(t, dir, "fail.yaml", failing)
	code, _, _ := checkRun("-update", dir)
	require.Equal(t, 1, code)
	writeCase(t, dir, "pass.golden", "# case: no routes\nnot the table\n")

	code, stdout, stderr := checkRun("-json", dir)
	require.Equal(t, 1, code)
	require.Empty(t, stderr)
	doc := decodeReport(t, stdout)
	require.False(t, doc.OK)
	require.Equal(t, 3, doc.Passed)
	require.Equal(t, 1, doc.Failed)
	require.Equal(t, counts{Passed: 1, Failed: 1}, doc.GoldenChecks)
	require.Len(t, doc.Results, 2)
	// Directory order: fail.yaml before pass.yaml.
	require.Equal(t, "expects a route that does not exist", doc.Results[0].Case)
	require.Equal(t, filepath.Join(dir, "fail.yaml"), doc.Results[0].File)
	first := doc.Results[0].Requests[0]
	require.False(t, first.Pass)
	require.Equal(t, 404, first.Got.Status)
	require.Len(t, first.Mismatches, 1)
	require.Equal(t, "status", first.Mismatches[0].Field)
	require.True(t, doc.Results[1].Requests[0].Pass)
	require.Len(t, doc.Goldens, 2)
	require.True(t, doc.Goldens[0].Match)
	require.False(t, doc.Goldens[1].Match)
	require.Equal(t, filepath.Join(dir, "pass.yaml"), doc.Goldens[1].File)
	require.Equal(t, filepath.Join(dir, "pass.golden"), doc.Goldens[1].Path)
	require.Contains(t, doc.Goldens[1].Problem, "compiled tables differ from the golden")
}

func TestRunJSONLoadError(t *testing.T) {
	dir := t.TempDir()
	bad := writeCase(t, dir, "bad.yaml", "name: x\nrequests: [{host: a, path: /, expect: {stauts: 200}}]\n")
	code, stdout, stderr := checkRun("-json", bad, filepath.Join(dir, "nope.yaml"))
	require.Equal(t, 2, code)
	require.Empty(t, stderr)
	doc := decodeReport(t, stdout)
	require.False(t, doc.OK)
	require.Empty(t, doc.Results)
	require.NotEmpty(t, doc.Errors)
	require.Contains(t, strings.Join(doc.Errors, "\n"), "nope.yaml")
}

// The shop case: one route, one warning it lists, one request.
const shopCase = `
name: shop
objects:
- apiVersion: networking.k8s.io/v1
  kind: Ingress
  metadata:
    name: shop
    namespace: prod
    annotations: {kubernetes.io/ingress.class: ramjet}
  spec:
    rules:
    - host: shop.example.com
      http:
        paths:
        - {path: /api, pathType: Prefix, backend: {service: {name: api, port: {number: 80}}}}
- {apiVersion: v1, kind: Service, metadata: {name: api, namespace: prod}, spec: {ports: [{port: 80}]}}
- apiVersion: discovery.k8s.io/v1
  kind: EndpointSlice
  metadata: {name: api-1, namespace: prod, labels: {kubernetes.io/service-name: api}}
  addressType: IPv4
  ports: [{port: 80}]
  endpoints: [{addresses: [10.0.0.1, 127.0.0.1]}]
warnings:
- {reason: EndpointRejected, object: EndpointSlice prod/api-1, field: "endpoints[0].addresses[1]"}
requests:
- host: shop.example.com
  path: /api/x
  expect: {status: 200, route: "prod/shop spec.rules[0].http.paths[0]", requestHeaders: {X-Real-Ip: 192.0.2.1}}
`

// fakeTB collects what routertest.RunFiles reports, to compare its verdict
// without failing this test.
type fakeTB struct {
	testing.TB
	errors []string
}

func (f *fakeTB) Helper()                   {}
func (f *fakeTB) Error(args ...any)         { f.errors = append(f.errors, fmt.Sprint(args...)) }
func (f *fakeTB) Errorf(s string, a ...any) { f.errors = append(f.errors, fmt.Sprintf(s, a...)) }
func (f *fakeTB) Fatal(args ...any)         { f.errors = append(f.errors, fmt.Sprint(args...)) }
func (f *fakeTB) Logf(string, ...any)       {}

// TestSameVerdict runs the command and routertest.RunFiles on the same
// directory and requires the same verdict, for every way a file can fail.
func TestSameVerdict(t *testing.T) {
	tests := []struct {
		name string
		// spoil changes the directory after the goldens are written.
		spoil func(t *testing.T, dir string)
		pass  bool
		// what the command's summary says
		lastLine string
	}{
		{name: "all good", spoil: func(*testing.T, string) {}, pass: true,
			lastLine: "1 passed, 0 failed; warnings: 1 passed, 0 failed; goldens: 1 passed, 0 failed"},
		{name: "wrong golden", pass: false,
			spoil: func(t *testing.T, dir string) {
				edit(t, filepath.Join(dir, "shop.golden"), "prod/api:80", "prod/api:81")
			},
			lastLine: "1 passed, 0 failed; warnings: 1 passed, 0 failed; goldens: 0 passed, 1 failed"},
		{name: "missing golden", pass: false,
			spoil: func(t *testing.T, dir string) {
				require.NoError(t, os.Remove(filepath.Join(dir, "shop.golden")))
			},
			lastLine: "1 passed, 0 failed; warnings: 1 passed, 0 failed; goldens: 0 passed, 1 failed"},
		{name: "wrong expectation", pass: false,
			spoil: func(t *testing.T, dir string) {
				edit(t, filepath.Join(dir, "shop.yaml"), "X-Real-Ip: 192.0.2.1", "X-Real-Ip: 192.0.2.2")
			},
			lastLine: "0 passed, 1 failed; warnings: 1 passed, 0 failed; goldens: 1 passed, 0 failed"},
		{name: "wrong warnings", pass: false,
			spoil: func(t *testing.T, dir string) {
				edit(t, filepath.Join(dir, "shop.yaml"), "addresses[1]", "addresses[0]")
			},
			lastLine: "1 passed, 0 failed; warnings: 0 passed, 1 failed; goldens: 1 passed, 0 failed"},
		{name: "wrong golden and wrong expectation", pass: false,
			spoil: func(t *testing.T, dir string) {
				edit(t, filepath.Join(dir, "shop.golden"), "prod/api:80", "prod/api:81")
				edit(t, filepath.Join(dir, "shop.yaml"), "spec.rules[0].http.paths[0]", "spec.rules[0].http.paths[1]")
			},
			lastLine: "0 passed, 1 failed; warnings: 1 passed, 0 failed; goldens: 0 passed, 1 failed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeCase(t, dir, "shop.yaml", shopCase)
			code, stdout, _ := checkRun("-update", dir)
			require.Equal(t, 0, code, stdout)
			tt.spoil(t, dir)

			code, stdout, stderr := checkRun(dir)
			require.Empty(t, stderr)
			require.Equal(t, tt.lastLine, lastLine(stdout))
			tb := &fakeTB{}
			routertest.RunFiles(tb, dir)
			require.Equal(t, tt.pass, code == 0, "command: exit %d\n%s", code, stdout)
			require.Equal(t, tt.pass, len(tb.errors) == 0, "routertest: %q", tb.errors)

			jcode, jout, _ := checkRun("-json", dir)
			require.Equal(t, code, jcode)
			require.Equal(t, tt.pass, decodeReport(t, jout).OK)
		})
	}
}

func edit(t *testing.T, path, old, new string) {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Contains(t, string(data), old)
	require.NoError(t, os.WriteFile(path, []byte(strings.Replace(string(data), old, new, 1)), 0o644))
}

// selfSigned returns a PEM certificate and key for host, and the hex
// SHA-256 of the certificate's DER bytes.
func selfSigned(t *testing.T, host string) (certPEM, keyPEM []byte, fingerprint string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: host},
		DNSNames:     []string{host},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	kder, err := x509.MarshalECPrivateKey(key)
	require.NoError(t, err)
	sum := sha256.Sum256(der)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), hex.EncodeToString(sum[:])
}

func TestTranslate(t *testing.T) {
	dir := t.TempDir()
	certPEM, keyPEM, fingerprint := selfSigned(t, "shop.example.com")
	// The shop case's objects as manifests, with TLS and an object ramjet
	// does not read.
	objects := strings.TrimPrefix(shopCase[:strings.Index(shopCase, "warnings:")], "\nname: shop\nobjects:\n")
	objects = strings.Replace(objects, "  spec:\n    rules:", "  spec:\n    tls: [{hosts: [shop.example.com], secretName: shop-tls}]\n    rules:", 1)
	writeCase(t, dir, "shop.yaml", "items:\n"+objects+fmt.Sprintf(
		"- {apiVersion: v1, kind: Secret, metadata: {name: shop-tls, namespace: prod}, type: kubernetes.io/tls, data: {tls.crt: %s, tls.key: %s}}\n",
		base64.StdEncoding.EncodeToString(certPEM), base64.StdEncoding.EncodeToString(keyPEM))+
		"apiVersion: v1\nkind: List\n")
	writeCase(t, dir, "cm.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x, namespace: prod}\n")

	snap, _, err := manifest.Load(dir)
	require.NoError(t, err)
	want := compile.Compile(*snap, compile.Options{})

	code, stdout, stderr := checkRun("-translate", dir)
	require.Equal(t, 0, code, stderr)
	require.Equal(t, want.String(), stdout, "the text form is the golden format")
	require.Contains(t, stderr, "apps/v1 Deployment prod/x skipped")

	code, stdout, stderr = checkRun("-translate", "-json", dir)
	require.Equal(t, 0, code, stderr)
	var doc translated
	dec := json.NewDecoder(strings.NewReader(stdout))
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(&doc))
	wantDoc := translated{
		Digest: want.Table.Digest(),
		Hosts: []jsonHost{
			{Name: "", SSLRedirect: true, Routes: []jsonRoute{}},
			{Name: "shop.example.com", TLS: true, SSLRedirect: true, Routes: []jsonRoute{{
				Type: "Prefix", Path: "/api", Backend: "prod/api:80", SSLRedirect: true,
				Source: jsonSource{Ingress: "prod/shop", Field: "spec.rules[0].http.paths[0]"},
			}}},
		},
		Backends:     []jsonBackend{{ID: "prod/api:80", Protocol: "HTTP", State: "Serving", Endpoints: []string{"10.0.0.1:80"}, Policy: "round_robin"}},
		TLSHosts:     []string{"shop.example.com"},
		Certificates: []jsonCertificate{{Secret: "prod/shop-tls", Hosts: []string{"shop.example.com"}, Fingerprint: fingerprint}},
		Warnings: []routertest.Warning{{
			Reason: "EndpointRejected", Object: "EndpointSlice prod/api-1", Field: "endpoints[0].addresses[1]",
			Message: "address 127.0.0.1 is loopback and can never be a pod; it is not dialled",
		}},
		Claimed: []string{"prod/shop"},
		Skipped: []string{filepath.Join(dir, "cm.yaml") + "#1: apps/v1 Deployment prod/x skipped"},
	}
	if d := cmp.Diff(wantDoc, doc); d != "" {
		t.Errorf("JSON (-want +got):\n%s", d)
	}

	// Options reach the compile; a malformed one stops before anything is read.
	code, stdout, _ = checkRun("-translate", "-allow-loopback-endpoints", dir)
	require.Equal(t, 0, code)
	require.Contains(t, stdout, "  endpoint 127.0.0.1:80\n")
	code, _, stderr = checkRun("-translate", "-default-backend", "kube-system/notfound", dir)
	require.Equal(t, 2, code)
	require.Contains(t, stderr, "missing :port")

	// A manifest that does not load is an error, still JSON with -json.
	writeCase(t, dir, "broken.yaml", "apiVersion: v1\nkind: Service\nmetadata: {name: s, namespace: prod}\nspec: {portz: []}\n")
	code, stdout, _ = checkRun("-translate", "-json", dir)
	require.Equal(t, 2, code)
	var errDoc struct {
		Errors []string `json:"errors"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &errDoc))
	require.Len(t, errDoc.Errors, 1)
	require.Contains(t, errDoc.Errors[0], "portz")
}

// One document that cannot be read (a Secret value that is not base64)
// no longer hides what the others compile to: -translate and -explain
// name it on stderr, serve the rest, and still exit 2.
func TestTranslateReadsPastABadDocument(t *testing.T) {
	dir := t.TempDir()
	writeCase(t, dir, "shop.yaml", `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: shop, namespace: prod}
spec:
  ingressClassName: nginx
  rules: [{host: shop.example.com, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}}]
`)
	writeCase(t, dir, "secret.yaml", "apiVersion: v1\nkind: Secret\nmetadata: {name: tls, namespace: prod}\ndata: {tls.crt: '!!!'}\n")
	bad := filepath.Join(dir, "secret.yaml") + " document 1 (line 1, Secret prod/tls): data[tls.crt]"

	code, stdout, stderr := checkRun("-translate", dir)
	require.Equal(t, 2, code, stderr)
	require.Contains(t, stdout, "host shop.example.com\n")
	require.Contains(t, stderr, "not read: "+bad)

	code, stdout, _ = checkRun("-translate", "-json", dir)
	require.Equal(t, 2, code)
	var doc struct {
		Hosts  []struct{ Name string } `json:"hosts"`
		Errors []string                `json:"errors"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &doc))
	require.Len(t, doc.Errors, 1)
	require.Contains(t, doc.Errors[0], bad)
	require.Len(t, doc.Hosts, 2, "the catch-all and shop.example.com")

	code, stdout, stderr = checkRun("-explain", "-host", "shop.example.com", dir)
	require.Equal(t, 2, code, stderr)
	require.Contains(t, stdout, "winner   Prefix / (Ingress prod/shop spec.rules[0].http.paths[0])")
	require.Contains(t, stderr, "not read: "+bad)
}

// Reading past a bad document keeps every other document's number (and a
// List item's index), so that a skip line points at the right one.
func TestReadPastKeepsPositions(t *testing.T) {
	dir := t.TempDir()
	writeCase(t, dir, "all.yaml", `# a comment only
---
apiVersion: v1
kind: Secret
metadata: {name: tls, namespace: prod}
data: {tls.crt: '!!!'}
---
apiVersion: example.com/v1
kind: Widget
metadata: {name: w, namespace: prod}
---
apiVersion: v1
kind: List
items:
- {apiVersion: networking.k8s.io/v1beta1, kind: Ingress, metadata: {name: old, namespace: prod}}
- {apiVersion: example.com/v1, kind: Gadget, metadata: {name: g, namespace: prod}}
- {apiVersion: v1, kind: Service, metadata: {name: web, namespace: prod}, spec: {ports: [{port: 80}]}}
`)
	code, _, stderr := checkRun("-translate", dir)
	require.Equal(t, 2, code, stderr)
	file := filepath.Join(dir, "all.yaml")
	require.Contains(t, stderr, "not read: "+file+" document 2 (line 3, Secret prod/tls)")
	require.Contains(t, stderr, "not read: "+file+" document 4 items[0] (line 12, Ingress prod/old)")
	require.Contains(t, stderr, file+"#3: example.com/v1 Widget prod/w skipped")
	require.Contains(t, stderr, file+"#4 items[1]: example.com/v1 Gadget prod/g skipped")
}

// A Helm template that begins with an action ({{- if ... }}) is named as
// a template, and the documents after it are read past as in any file.
func TestReadPastATemplate(t *testing.T) {
	dir := t.TempDir()
	writeCase(t, dir, "chart.yaml", "{{- if .Values.enabled }}\napiVersion: v1\nkind: Service\nmetadata: {name: a}\n{{- end }}\n---\n"+
		"apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: prod}\nspec: {ports: [{port: 80}]}\n")
	code, stdout, stderr := checkRun("-translate", "-json", dir)
	require.Equal(t, 2, code, stderr)
	var doc struct {
		Errors []string `json:"errors"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &doc))
	require.Equal(t, []string{filepath.Join(dir, "chart.yaml") + " document 1 (line 1): the document begins with {{ }}, a template's: render it first (helm template)"}, doc.Errors)

	code, stdout, stderr = checkRun("-report", dir)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "not read, so not covered: 1 document")
	require.Contains(t, stdout, "no Secrets in the input")
	require.NotContains(t, stdout, "no Services in the input", "the second document is read")
}

// The compile options are -explain's and -report's as much as
// -translate's, and -h says so.
func TestCompileOptionsHelp(t *testing.T) {
	code, _, stderr := checkRun("-h")
	require.Equal(t, 0, code)
	for _, name := range []string{"default-backend", "watch-ingress-without-class", "ssl-redirect", "allow-loopback-endpoints"} {
		i := strings.Index(stderr, "  -"+name)
		require.GreaterOrEqual(t, i, 0, name)
		usage, _, _ := strings.Cut(stderr[i:], "\n  -")
		require.NotContains(t, usage, "-translate:", name)
	}
}

// --version prints the release, the revision and the Go version, and
// exits 0 without arguments.
func TestCheckVersion(t *testing.T) {
	for _, args := range [][]string{{"-version"}, {"--version"}} {
		code, stdout, stderr := checkRun(args...)
		require.Equal(t, 0, code, stderr)
		require.Contains(t, stdout, "ramjet check\n  Release:        ")
		require.Contains(t, stdout, "  Go:             "+runtime.Version()+"\n")
	}
	revision = "0123abc"
	defer func() { revision = "" }()
	_, stdout, _ := checkRun("-version")
	require.Contains(t, stdout, "  Build:          0123abc\n", "a build without version control information")
}

// -translate, -report and -explain are modes: two of them, or a mode's
// own flag without its mode, is a usage error rather than one of them
// silently winning or the flag silently doing nothing.
func TestModeFlagsConflict(t *testing.T) {
	for _, args := range [][]string{
		{"-translate", "-report", "../../examples/manifests"},
		{"-report", "-explain", "-host", "shop.example.com", "../../examples/manifests"},
		{"-translate", "-explain", "-host", "shop.example.com", "../../examples/manifests"},
	} {
		code, stdout, stderr := checkRun(args...)
		require.Equal(t, 2, code, "%v: %s", args, stdout)
		require.Contains(t, stderr, "check: -translate, -report and -explain are alternatives: give one", args)
	}
	for args, want := range map[string]string{
		"-strict ../../testdata/cases":                               "check: -strict goes with -report",
		"-translate -strict ../../examples/manifests":                "check: -strict goes with -report",
		"-translate -host shop.example.com ../../examples/manifests": "check: -host goes with -explain",
		"-report -path /x ../../examples/manifests":                  "check: -path goes with -explain",
		"-https ../../testdata/cases":                                "check: -https goes with -explain",
	} {
		code, stdout, stderr := checkRun(strings.Fields(args)...)
		require.Equal(t, 2, code, "%s: %s", args, stdout)
		require.Contains(t, stderr, want, args)
	}
}

// Go's flag package stops at the first file argument, so a flag written
// after the files was taken as a file ("stat -translate: no such file");
// it is named as a misplaced flag instead.
func TestFlagsAfterFiles(t *testing.T) {
	for args, want := range map[string]string{
		"../../testdata/cases -v":                                  "check: flag -v after the files: flags go first (check -v ../../testdata/cases)",
		"../../examples/manifests -translate":                      "check: flag -translate after the files: flags go first (check -translate ../../examples/manifests)",
		"-explain -host a ../../examples/manifests -path /x":       "check: flag -path after the files: flags go first (check -explain -host a -path /x ../../examples/manifests)",
		"-report ../../examples/manifests --json":                  "check: flag --json after the files: flags go first (check -report --json ../../examples/manifests)",
		"-translate ../../examples/manifests -ingress-class=nginx": "check: flag -ingress-class=nginx after the files: flags go first",
	} {
		code, stdout, stderr := checkRun(strings.Fields(args)...)
		require.Equal(t, 2, code, "%s: %s", args, stdout)
		require.Contains(t, stderr, want, args)
		require.NotContains(t, stderr, "no such file", args)
	}
	// A file whose name starts with "-" is still a file.
	dir := t.TempDir()
	t.Chdir(dir)
	require.NoError(t, os.WriteFile("-v", []byte("- name: x\n"), 0o644))
	_, _, stderr := checkRun("--", "-v")
	require.NotContains(t, stderr, "after the files")
}

// A ConfigMap flag that is not namespace/name is refused, as the
// controller refuses it, rather than matching nothing and leaving
// ingress-nginx's defaults in force with exit 0.
func TestConfigMapFlagsWantNamespace(t *testing.T) {
	for _, args := range [][]string{
		{"-translate", "-configmap", "foo", "../../examples/manifests"},
		{"-report", "-configmap", "foo", "../../examples/manifests"},
		{"-translate", "-tcp-services-configmap", "foo", "../../examples/manifests"},
		{"-report", "-udp-services-configmap", "a/b/c", "../../examples/manifests"},
	} {
		code, stdout, stderr := checkRun(args...)
		require.Equal(t, 2, code, "%v: %s", args, stdout)
		require.Contains(t, stderr, "want namespace/name of a ConfigMap", args)
	}
	code, _, stderr := checkRun("-translate", "-configmap", "ingress-nginx/ingress-nginx-controller", "../../examples/manifests")
	require.Equal(t, 0, code, stderr)
}

// An empty -ingress-class or -controller-name is refused, as the
// controller refuses it: the library would read "" as ramjet's default,
// and the report would claim ramjet's Ingresses under controller "".
func TestEmptyClassFlagsRefused(t *testing.T) {
	for _, mode := range [][]string{{"-translate"}, {"-report"}, {"-explain", "-host", "shop.example.com"}, {"-translate", "-to", "gateway"}} {
		for _, flag := range []string{"-ingress-class", "-controller-name"} {
			args := append(append(slices.Clone(mode), flag, ""), "../../examples/manifests")
			code, stdout, stderr := checkRun(args...)
			require.Equal(t, 2, code, "%v: %s", args, stdout)
			require.Contains(t, stderr, "check: "+flag+` "": give the `, args)
		}
	}
}
