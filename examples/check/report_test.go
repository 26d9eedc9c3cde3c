package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"ramjet.dev/ramjet/compile"
)

const (
	clusterDump  = "testdata/cluster-dump.yaml"
	snippetsDump = "testdata/snippets-dump.yaml"
)

// TestReportGolden runs the migration report on a cluster dump (a v1 List
// as kubectl prints it, 56 Ingresses using the common ingress-nginx
// annotations) and compares it with its golden. The report follows the
// compiler's warnings, so it changes as annotations are implemented:
// regenerate with RAMJET_UPDATE_GOLDEN=1 go test ./examples/check -run Report
// and review the diff.
func TestReportGolden(t *testing.T) {
	code, stdout, stderr := checkRun("-report", clusterDump)
	require.Equal(t, 0, code, stderr)
	golden := strings.TrimSuffix(clusterDump, ".yaml") + ".report"
	if os.Getenv("RAMJET_UPDATE_GOLDEN") == "1" {
		require.NoError(t, os.WriteFile(golden, []byte(stdout), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err, "run with RAMJET_UPDATE_GOLDEN=1 to create it")
	assert.Empty(t, cmp.Diff(string(want), stdout), "report differs from %s; RAMJET_UPDATE_GOLDEN=1 rewrites it", golden)

	// The dump is what the issue asks of it: at least 50 Ingresses and 30
	// distinct ingress-nginx annotations.
	dump, err := os.ReadFile(clusterDump)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, strings.Count(string(dump), "\n  kind: Ingress\n"), 50)
	keys := map[string]bool{}
	for line := range strings.Lines(string(dump)) {
		line = strings.TrimSpace(line)
		if k, _, ok := strings.Cut(line, ": "); ok && strings.HasPrefix(k, "nginx.ingress.kubernetes.io/") {
			keys[k] = true
		}
	}
	assert.GreaterOrEqual(t, len(keys), 30)
}

func TestReportStrictAndJSON(t *testing.T) {
	// The dump's four snippet Ingresses move traffic at ingress-nginx's
	// default risk level (High), which refuses them where ramjet serves
	// them; at Critical with snippets disallowed both drop the snippets
	// and nothing else on the dump moves traffic. The snippets dump, read
	// with snippets on, still has findings that move traffic.
	code, _, _ := checkRun("-report", "-strict", clusterDump)
	assert.Equal(t, 3, code, "the snippet Ingresses move traffic")
	code, _, _ = checkRun("-report", "-strict", "-annotations-risk-level", "Critical", clusterDump)
	assert.Equal(t, 0, code, "nothing moves traffic")
	code, _, _ = checkRun("-report", "-strict", "-allow-snippet-annotations", "-annotations-risk-level", "Critical", snippetsDump)
	assert.Equal(t, 3, code, "something moves traffic")

	code, stdout, stderr := checkRun("-report", "-json", clusterDump)
	require.Equal(t, 0, code, stderr)
	var doc migration
	require.NoError(t, json.Unmarshal([]byte(stdout), &doc))
	assert.False(t, doc.OK)
	assert.Equal(t, 4, doc.Totals.TrafficMoves)
	assert.Equal(t, 54, doc.Claimed)
	assert.Equal(t, 2, doc.Unclaimed)
	total := doc.Totals.TrafficMoves + doc.Totals.FeatureMissing + doc.Totals.Cosmetic
	n := len(doc.Other)
	for _, in := range doc.Ingress {
		n += len(in.Findings)
	}
	assert.Equal(t, total, n)
	var rewrite *finding
	for _, in := range doc.Ingress {
		for i, f := range in.Findings {
			if f.Annotation == "nginx.ingress.kubernetes.io/rewrite-target" {
				rewrite = &in.Findings[i]
			}
		}
	}
	if rewrite != nil { // until rewrite-target is implemented
		assert.Equal(t, "traffic-moves", string(rewrite.Severity))
		assert.Equal(t, "/$2", rewrite.Value)
	}

	// Nothing that moves traffic: -strict exits 0.
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "ok.yaml"), []byte(`apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: web
  namespace: prod
  annotations: {nginx.ingress.kubernetes.io/http2-push-preload: "true", kubernetes.io/ingress.class: nginx}
spec:
  rules:
  - host: web.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
`), 0o644))
	code, stdout, _ = checkRun("-report", "-strict", dir)
	assert.Equal(t, 0, code, stdout)
	assert.Contains(t, stdout, "feature-missing nginx.ingress.kubernetes.io/http2-push-preload")
	assert.Contains(t, stdout, "nothing moves traffic")

	// Nothing to load: exit 2, and still JSON.
	code, stdout, _ = checkRun("-report", "-json", filepath.Join(dir, "absent.yaml"))
	assert.Equal(t, 2, code)
	require.NoError(t, json.Unmarshal([]byte(stdout), &doc))
	assert.NotEmpty(t, doc.Errors)
}

// A dump as kubectl prints it, of Ingresses only: no Services, Secrets or
// IngressClasses, one document ramjet cannot read, and settings whose
// severity depends on their value.
const ingressOnly = `apiVersion: v1
kind: List
items:
- apiVersion: networking.k8s.io/v1
  kind: Ingress
  metadata: {name: old, namespace: prod, creationTimestamp: "2025-01-01T00:00:00Z",
    annotations: {nginx.ingress.kubernetes.io/backend-protocol: HTTPS, nginx.ingress.kubernetes.io/satisfy: "all"}}
  spec:
    ingressClassName: nginx
    tls: [{hosts: [a.example.com], secretName: a-tls}]
    rules: [{host: a.example.com, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 443}}}}]}}]
- apiVersion: networking.k8s.io/v1
  kind: Ingress
  metadata: {name: new, namespace: prod, creationTimestamp: "2025-02-01T00:00:00Z",
    annotations: {nginx.ingress.kubernetes.io/use-forwarded-headers: "true"}}
  spec:
    ingressClassName: nginx
    rules: [{host: b.example.com, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 443}}}}]}}]
- apiVersion: networking.k8s.io/v1
  kind: Ingress
  metadata: {name: waf, namespace: prod, creationTimestamp: "2025-03-01T00:00:00Z",
    annotations: {nginx.ingress.kubernetes.io/enable-modsecurity: "true",
      nginx.ingress.kubernetes.io/modsecurity-snippet: "SecRuleEngine On\nSecRule REQUEST_URI \"@beginsWith /admin\" \"id:1,phase:1,deny,status:403\"\n"}}
  spec:
    ingressClassName: nginx
    rules: [{host: c.example.com, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: waf, port: {number: 80}}}}]}}]
- apiVersion: networking.k8s.io/v1beta1
  kind: Ingress
  metadata: {name: legacy, namespace: prod}
  spec: {backend: {serviceName: web, servicePort: 80}}
`

func TestReportIngressOnlyDump(t *testing.T) {
	dump := writeCase(t, t.TempDir(), "dump.yaml", ingressOnly)

	// One unreadable item is a finding, not the end of the report.
	code, stdout, stderr := checkRun("-report", dump)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "3 Ingresses claimed, 0 of another class not covered; 0 carry over unchanged, 1 more with cosmetic findings only\n")
	// The class the dump names but does not hold is taken as ours.
	assert.Contains(t, stdout, `note: IngressClass "nginx" is not in the input: its 3 Ingresses taken as controller "k8s.io/ingress-nginx"'s`)
	assert.Contains(t, stdout, "not read, so not covered: 1 document (listed below)")
	assert.Contains(t, stdout, "items[3]")
	assert.Contains(t, stdout, "networking.k8s.io/v1beta1 Ingress is not supported")
	// Findings that only say the dump lacks a kind are summed once.
	assert.Contains(t, stdout, "left out: 3 findings (ServiceNotFound on 3 Ingresses) that only say the input has no Services")
	assert.Contains(t, stdout, "left out: 1 finding (SecretNotFound on 1 Ingress) that only says the input has no Secrets")
	assert.NotContains(t, stdout, "[ServiceNotFound]")
	// Severity reads the value, and keys ingress-nginx does not read are cosmetic.
	assert.Contains(t, stdout, `cosmetic        nginx.ingress.kubernetes.io/satisfy: "all" [AnnotationUnsupported]`)
	assert.Contains(t, stdout, `cosmetic        nginx.ingress.kubernetes.io/use-forwarded-headers: "true" [AnnotationUnsupported]`)
	assert.Contains(t, stdout, "no effect under ingress-nginx either")
	// The controller serves ModSecurity, but modsecurity-snippet is
	// Critical-risk: at the default risk level ingress-nginx refuses the
	// whole Ingress, which the controller serves.
	assert.Contains(t, stdout, `traffic-moves   nginx.ingress.kubernetes.io/modsecurity-snippet: `)
	assert.Contains(t, stdout, "modsecurity-snippet is a Critical-risk annotation and annotations-risk-level is High: ingress-nginx refuses the whole Ingress")
	assert.Contains(t, stdout, "served by the controller (Coraza")
	// A conflict names its winner; a setting the Ingress leaves unset is
	// shown as such.
	assert.Contains(t, stdout, "ramjet.dev/backend-protocol (not set) [AnnotationConflict]")
	assert.Contains(t, stdout, "winner: Ingress prod/old\n")

	code, _, _ = checkRun("-report", "-strict", dump)
	assert.Equal(t, 3, code, "not everything was read")

	code, stdout, stderr = checkRun("-report", "-json", dump)
	require.Equal(t, 0, code, stderr)
	var doc migration
	require.NoError(t, json.Unmarshal([]byte(stdout), &doc))
	assert.Len(t, doc.Unreadable, 1)
	assert.Equal(t, 0, doc.Clean)
	assert.Equal(t, 1, doc.CosmeticOnly)
	assert.Equal(t, []missing{
		{Kind: "Services", Reason: "ServiceNotFound", Findings: 3, Ingresses: 3},
		{Kind: "Secrets", Reason: "SecretNotFound", Findings: 1, Ingresses: 1},
	}, doc.Missing)
	var conflict *finding
	for _, in := range doc.Ingress {
		for i, f := range in.Findings {
			if f.Reason == "AnnotationConflict" {
				conflict = &in.Findings[i]
			}
		}
	}
	require.NotNil(t, conflict)
	assert.Equal(t, "Ingress prod/old", conflict.Winner)
	assert.True(t, conflict.Unset)

	// -translate and -explain claim what -report claims.
	code, _, stderr = checkRun("-translate", dump)
	assert.Equal(t, 2, code, "-translate reads strictly")
	assert.Contains(t, stderr, "v1beta1")
	require.NoError(t, os.WriteFile(dump, []byte(ingressOnly[:strings.Index(ingressOnly, "- apiVersion: networking.k8s.io/v1beta1")]), 0o644))
	code, stdout, stderr = checkRun("-translate", dump)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "host a.example.com")
	assert.Contains(t, stderr, `note: IngressClass "nginx" is not in the input`)
	code, stdout, stderr = checkRun("-explain", "-host", "b.example.com", "-path", "/", dump)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "WIN Prefix / -> Ingress prod/new")
}

// The exit codes the README documents reach the shell: go run turns every
// failing exit into 1, so each documented -strict command runs a built
// binary, and the built binary exits 3.
func TestReportExitCodes(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	n := 0
	for line := range strings.Lines(string(readme)) {
		if strings.Contains(line, "-report -strict") {
			n++
			assert.NotContains(t, line, "go run", "go run reports exit 3 as 1: %s", line)
		}
	}
	require.NotZero(t, n, "the README documents -report -strict")
	if testing.Short() {
		t.Skip("builds the command")
	}
	bin := filepath.Join(t.TempDir(), "check")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, "%s", out)
	err = exec.Command(bin, "-report", "-strict", "-allow-snippet-annotations", "-annotations-risk-level", "Critical", snippetsDump).Run()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit)
	assert.Equal(t, 3, exit.ExitCode())
	err = exec.Command(bin, "-report", filepath.Join(t.TempDir(), "absent")).Run()
	require.ErrorAs(t, err, &exit)
	assert.Equal(t, 2, exit.ExitCode())
}

// The report lists each snippet's directives, translated or not, and the
// snippet flags decide whether they apply, as the ConfigMap keys do.
func TestReportSnippets(t *testing.T) {
	dump := snippetsDump
	code, stdout, stderr := checkRun("-report", dump)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "Snippets (off with these options")
	// ingress-nginx's defaults (risk level High) refuse the snippet
	// Ingresses; ramjet serves them.
	assert.Contains(t, stdout, "[SnippetAnswerIgnored]\n                  -> nginx.ingress.kubernetes.io/configuration-snippet is a Critical-risk annotation and annotations-risk-level is High")
	assert.Contains(t, stdout, "5 findings move traffic")
	// Risk level Critical, snippets disallowed: dropped under both.
	code, stdout, stderr = checkRun("-report", "-annotations-risk-level", "Critical", dump)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "[SnippetNoEffect]\n                  -> snippets are off (allow-snippet-annotations is false")
	assert.Contains(t, stdout, "nothing moves traffic")

	code, stdout, stderr = checkRun("-report", "-allow-snippet-annotations", "-annotations-risk-level", "Critical", dump)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "Snippets (applied)\n")
	assert.Contains(t, stdout, "4 Ingresses claimed, 0 of another class not covered; 2 carry over unchanged\n", "every directive of two Ingresses translates")
	assert.Contains(t, stdout, "  Ingress ops/admin nginx.ingress.kubernetes.io/configuration-snippet\n    translated: allow (line 1), allow (line 2), deny (line 3), more_set_input_headers (line 4)\n")
	assert.Contains(t, stdout, "    not:        proxy_pass (line 7) [SnippetAnswerIgnored]")
	assert.Contains(t, stdout, "-> line 1: access_by_lua_block: a block ramjet does not translate; ramjet does nothing instead")
	assert.Contains(t, stdout, "feature-missing nginx.ingress.kubernetes.io/configuration-snippet: ")
	assert.Contains(t, stdout, "-> line 5: proxy_set_header: $msec is not a variable ramjet expands in a snippet")

	code, _, stderr = checkRun("-report", "-annotations-risk-level", "Extreme", dump)
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "annotations-risk-level")
}

// TestReportConfigMap: beside a dump, the chart's ConfigMap is found by
// name and read by the library's parser: its keys land in the table
// (-translate), and each key ramjet lacks is one finding on the
// ConfigMap (-report); -configmap names another or none.
func TestReportConfigMap(t *testing.T) {
	cm := filepath.Join("testdata", "ingress-nginx-configmap.yaml")
	code, stdout, stderr := checkRun("-report", clusterDump, cm)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "note: ConfigMap ingress-nginx/ingress-nginx-controller read as the ingress-nginx ConfigMap")
	// The ConfigMap's allow-snippet-annotations is read: the snippets are
	// then refused by the risk level (High), as ingress-nginx refuses them.
	require.NotContains(t, stdout, "data[allow-snippet-annotations]")
	require.Contains(t, stdout, "configuration-snippet is a Critical-risk annotation and annotations-risk-level is High")
	require.Contains(t, stdout, "cosmetic        data[worker-processes] [ConfigMapKeyIgnored]")
	require.Contains(t, stdout, `$geoip2_city is not a variable`)
	require.NotContains(t, stdout, "data[proxy-body-size]", "implemented")

	code, stdout, stderr = checkRun("-translate", clusterDump, cm)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "policy body=50m send=2m0s read=2m0s", "the location keys are in the table")

	code, stdout, stderr = checkRun("-report", "-configmap", "ingress-nginx/other", clusterDump, cm)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "note: -configmap ingress-nginx/other is not in the input")
	require.NotContains(t, stdout, "[ConfigMapKey")
}

// A dump without the ingress-nginx ConfigMap (the README's kubectl get
// once listed no configmaps) is reported with ingress-nginx's defaults for
// every key, which can change what a finding says (allow-snippet-annotations,
// for one); the report says so, as it says when Secrets or Services are
// missing, rather than reading as if the keys had been checked.
func TestReportNoConfigMap(t *testing.T) {
	const line = "no ingress-nginx ConfigMap in the input (one named ingress-nginx-controller, or the one -configmap names): its keys are taken at ingress-nginx's defaults"
	code, stdout, stderr := checkRun("-report", clusterDump)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, line)
	code, stdout, stderr = checkRun("-report", "-json", clusterDump)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, `"noConfigMap": true`)

	cm := filepath.Join("testdata", "ingress-nginx-configmap.yaml")
	code, stdout, stderr = checkRun("-report", clusterDump, cm)
	require.Equal(t, 0, code, stderr)
	require.NotContains(t, stdout, line)
	code, stdout, stderr = checkRun("-report", "-json", clusterDump, cm)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, `"noConfigMap": false`)
	// -configmap naming one that is absent has its own note.
	_, stdout, _ = checkRun("-report", "-configmap", "ingress-nginx/other", clusterDump, cm)
	require.NotContains(t, stdout, line)
}

// Nothing read is not a clean migration: -report exits 2 when no
// document could be read, or there are no manifests at all, as the
// README says.
func TestReportNothingRead(t *testing.T) {
	dir := t.TempDir()
	legacy := filepath.Join(dir, "legacy.yaml")
	require.NoError(t, os.WriteFile(legacy, []byte(`apiVersion: networking.k8s.io/v1beta1
kind: Ingress
metadata: {name: legacy, namespace: prod}
spec: {backend: {serviceName: web, servicePort: 80}}
`), 0o644))
	code, stdout, stderr := checkRun("-report", legacy)
	assert.Equal(t, 2, code, stdout)
	assert.Contains(t, stderr, "nothing could be read from "+legacy)
	assert.Contains(t, stderr, "networking.k8s.io/v1beta1 Ingress is not supported")
	assert.Empty(t, stdout)

	code, stdout, _ = checkRun("-report", "-json", legacy)
	assert.Equal(t, 2, code)
	var doc migration
	require.NoError(t, json.Unmarshal([]byte(stdout), &doc))
	assert.False(t, doc.OK)
	assert.Len(t, doc.Unreadable, 1)

	empty := t.TempDir()
	code, _, stderr = checkRun("-report", empty)
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "nothing could be read")
}

// The other modes agree with -report on input with nothing to read: an
// empty folder, or one of kinds ramjet does not read, exits 2 rather
// than printing an empty table as if it were the translation.
func TestNothingReadEveryMode(t *testing.T) {
	empty := t.TempDir()
	others := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(others, "app.yaml"), []byte("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: prod}\n"), 0o644))
	for _, dir := range []string{empty, others} {
		for _, mode := range [][]string{{"-translate"}, {"-translate", "-json"}, {"-translate", "-to", "gateway"}, {"-explain", "-host", "a.example.com"}, {"-report"}} {
			code, stdout, stderr := checkRun(append(mode, dir)...)
			assert.Equal(t, 2, code, "%v %s: %s", mode, dir, stdout)
			if slices.Contains(mode, "-json") {
				assert.Contains(t, stdout, "nothing could be read from "+dir, mode)
				continue
			}
			assert.Contains(t, stderr, "nothing could be read from "+dir, mode)
			assert.Empty(t, stdout, mode)
			if dir == others && mode[0] == "-report" {
				assert.Contains(t, stderr, "apps/v1 Deployment prod/web skipped", "the report says what it skipped")
			}
		}
	}
}

// Findings on one object other than an Ingress sit under one heading,
// although the report orders them by severity first.
func TestReportOtherObjectsOneHeading(t *testing.T) {
	cm := "ConfigMap ingress-nginx/ingress-nginx-controller"
	m := migration{Other: []finding{
		{Severity: compile.FeatureMissing, Reason: "ConfigMapKeyUnsupported", Object: cm, Field: "data[a]", Instead: "ignored"},
		{Severity: compile.FeatureMissing, Reason: "ServiceNotFound", Object: "Service demo/x", Field: "spec", Instead: "absent"},
		{Severity: compile.Cosmetic, Reason: "ConfigMapKeyIgnored", Object: cm, Field: "data[b]", Instead: "ignored"},
	}}
	var out strings.Builder
	writeMigration(&out, m)
	require.Equal(t, 1, strings.Count(out.String(), "  "+cm+"\n"), out.String())
	require.Less(t, strings.Index(out.String(), "data[b]"), strings.Index(out.String(), "Service demo/x"), out.String())
}

func TestReportOneIngressSingular(t *testing.T) {
	dump := writeCase(t, t.TempDir(), "dump.yaml", `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: shop, namespace: prod}
spec:
  ingressClassName: nginx
  tls: [{hosts: [a.example.com], secretName: shop-tls}]
  rules: [{host: a.example.com, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}}]
`)

	code, stdout, stderr := checkRun("-report", dump)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "\n1 Ingress claimed, 0 of another class not covered; 1 carries over unchanged\n")
	assert.Contains(t, stdout, "left out: 1 finding (SecretNotFound on 1 Ingress) that only says the input has no Secrets\n")
	assert.Contains(t, stdout, "left out: 1 finding (ServiceNotFound on 1 Ingress) that only says the input has no Services\n")
}

// TestReportListsSkipped: the text report names the objects of kinds
// ramjet does not read, as -json's skipped does, so a reader knows what
// the report did not look at.
func TestReportListsSkipped(t *testing.T) {
	dump := writeCase(t, t.TempDir(), "dump.yaml", `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: shop, namespace: prod}
spec:
  ingressClassName: nginx
  rules: [{host: a.example.com, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: prod}
---
apiVersion: v1
kind: Endpoints
metadata: {name: web, namespace: prod}
`)

	code, stdout, stderr := checkRun("-report", dump)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "\nSkipped: kinds ramjet does not read\n  "+dump+"#2: apps/v1 Deployment prod/web skipped\n  "+
		dump+"#3: v1 Endpoints prod/web skipped (ramjet reads discovery.k8s.io/v1 EndpointSlice)\n")
	assert.Contains(t, stdout, "skipped, so not covered: 2 objects of kinds ramjet does not read (listed below)\n")
}

// TestTranslateAndExplainSayNoConfigMap: -translate (both targets) and
// -explain decide with the same ConfigMap keys as -report, so they say,
// as -report does, when the input holds none and its keys are taken at
// ingress-nginx's defaults.
func TestTranslateAndExplainSayNoConfigMap(t *testing.T) {
	const note = "note: no ingress-nginx ConfigMap in the input (one named ingress-nginx-controller, or the one -configmap names): its keys are taken at ingress-nginx's defaults\n"
	cm := filepath.Join("testdata", "ingress-nginx-configmap.yaml")
	for _, args := range [][]string{
		{"-translate"},
		{"-translate", "-to", "gateway"},
		{"-explain", "-host", "shop.example.com"},
	} {
		_, _, stderr := checkRun(append(args, clusterDump)...)
		assert.Equal(t, 1, strings.Count(stderr, note), "%v: %s", args, stderr)
		_, _, stderr = checkRun(append(args, clusterDump, cm)...)
		assert.NotContains(t, stderr, note, "%v with the ConfigMap", args)
		_, _, stderr = checkRun(append(args, "-configmap", "ingress-nginx/other", clusterDump)...)
		assert.NotContains(t, stderr, note, "%v: -configmap naming an absent one has its own note", args)
	}
	// -report says it once, on its own line, not again as a note.
	_, stdout, _ := checkRun("-report", clusterDump)
	assert.NotContains(t, stdout, note)
}
