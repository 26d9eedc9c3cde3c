package routertest

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/compile"
	"ramjet.dev/ramjet/match"
	"ramjet.dev/ramjet/router"
)

func TestRunFiles(t *testing.T) {
	RunFiles(t, "testdata/cases")
}

// fakeTB collects what RunFiles reports, to test failures without failing.
type fakeTB struct {
	testing.TB
	errors []string
	logs   []string
}

func (f *fakeTB) Helper()                   {}
func (f *fakeTB) Error(args ...any)         { f.errors = append(f.errors, fmt.Sprint(args...)) }
func (f *fakeTB) Errorf(s string, a ...any) { f.errors = append(f.errors, fmt.Sprintf(s, a...)) }
func (f *fakeTB) Fatal(args ...any)         { f.errors = append(f.errors, fmt.Sprint(args...)) }
func (f *fakeTB) Logf(s string, a ...any)   { f.logs = append(f.logs, fmt.Sprintf(s, a...)) }

// setUpdate sets the -update flag routertest registered, as the command
// line would.
func setUpdate(t *testing.T, v bool) {
	f := flag.Lookup("update")
	require.NotNil(t, f, "routertest registers -update in a test binary")
	old := f.Value.String()
	require.NoError(t, f.Value.Set(strconv.FormatBool(v)))
	t.Cleanup(func() { require.NoError(t, f.Value.Set(old)) })
}

func TestUpdateSwitches(t *testing.T) {
	// Registered once, and never over a flag of the same name.
	fs := flag.NewFlagSet("t", flag.PanicOnError)
	registerUpdate(fs)
	registerUpdate(fs)
	require.NotNil(t, fs.Lookup("update"))
	other := flag.NewFlagSet("t", flag.PanicOnError)
	theirs := other.String("update", "all", "another package's flag")
	registerUpdate(other)
	require.NoError(t, other.Parse([]string{"-update=some"}))
	require.Equal(t, "some", *theirs)

	tests := []struct {
		name string
		flag bool
		env  string
		want bool
	}{
		{"neither", false, "", false},
		{"flag", true, "", true},
		{"environment", false, "1", true},
		{"environment true", false, "true", true},
		{"environment off", false, "0", false},
		{"environment not a boolean", false, "yes please", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			setUpdate(t, tt.flag)
			t.Setenv(UpdateEnv, tt.env)
			require.Equal(t, tt.want, updating())
		})
	}
}

func TestLoadCasesErrors(t *testing.T) {
	tests := []struct {
		file string
		want []string
	}{
		{"unknown-key.yaml", []string{
			`testdata/bad/unknown-key.yaml: case "typo in an expectation": unknown key "options.sslredirect"`,
			`testdata/bad/unknown-key.yaml: case "typo in an expectation": unknown key "requests[0].expect.stauts"`,
		}},
		{"bad-option.yaml", []string{
			`testdata/bad/bad-option.yaml: case "default backend without a port": options.defaultBackend: service reference "kube-system/notfound": missing :port (want namespace/name:port)`,
			`testdata/bad/bad-option.yaml: case "bad class": options: option ingress-class "Not_A_Class": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
		}},
		{"undecodable-object.yaml", []string{
			`testdata/bad/undecodable-object.yaml: case "misspelled field in a manifest": objects[1] (Ingress prod/shop): strict decoding error: unknown field "spec.rules[0].htp"`,
			`testdata/bad/undecodable-object.yaml: case "misspelled field in a manifest": objects[2] (Ingress prod/old): networking.k8s.io/v1beta1 Ingress is not supported: ramjet reads networking.k8s.io/v1 Ingress`,
			`testdata/bad/undecodable-object.yaml: case "misspelled field in a manifest": objects[3] (Service prod/shop): defined twice: first at objects[0]`,
		}},
		{"duplicate-key.yaml", []string{
			`testdata/bad/duplicate-key.yaml: line 5: key "path" already set in map`,
		}},
		{"empty.yaml", []string{`testdata/bad/empty.yaml: no cases`}},
		{"two-documents.yaml", []string{
			`testdata/bad/two-documents.yaml: line 8: a second YAML document: a case file is one case or one list of cases; list every case in the first document`,
		}},
		// Without objects every request answers 404, and a case expecting
		// 404 would pass on nothing.
		// A manifest given where a case file belongs says so once, not
		// one unknown key per field.
		{"manifest.yaml", []string{
			`testdata/bad/manifest.yaml: case #1: a Kubernetes manifest (Service prod/web), not a case: list it under a case's objects, or read manifests with check -translate, -explain or -report`,
		}},
		{"no-objects.yaml", []string{
			`testdata/bad/no-objects.yaml: case "forgot the objects": objects: required ([] for none)`,
			`testdata/bad/no-objects.yaml: case "objets misspelled": unknown key "objets"`,
		}},
		{"scalars.yaml", []string{
			`testdata/bad/scalars.yaml: case #1: want a mapping, got string "just"`,
			`testdata/bad/scalars.yaml: case #2: want a mapping, got string "strings"`,
		}},
		{"requests.yaml", []string{
			`testdata/bad/requests.yaml: case "wrong types": requests[0].expect.distinctEndpoints: want a whole number, got number 1.5`,
			`testdata/bad/requests.yaml: case "wrong types": requests[0].expect.service: want namespace/name:port or null, got number 80`,
			`testdata/bad/requests.yaml: case "wrong types": requests[0].expect.status: want a whole number, got string "200"`,
			`testdata/bad/requests.yaml: case "wrong types": requests[0].headers.X-Count: want a string, got number 1`,
			`testdata/bad/requests.yaml: case "wrong types": requests[0].repeat: want a whole number, got string "3"`,
			`testdata/bad/requests.yaml: case "missing pieces": requests[0].host: required ("" for a request without Host)`,
			`testdata/bad/requests.yaml: case "missing pieces": requests[1].path: required (the raw request-target, e.g. /)`,
			`testdata/bad/requests.yaml: case "missing pieces": requests[2].expect: at least one check is required`,
			`testdata/bad/requests.yaml: case "missing pieces": requests[3].expect: at least one check is required`,
			`testdata/bad/requests.yaml: case "bad values": requests[0].method: "GE T" is not an HTTP method token`,
			`testdata/bad/requests.yaml: case "bad values": requests[1].scheme: "ftp": want http or https`,
			`testdata/bad/requests.yaml: case "bad values": requests[2].headers: Host is set with host, not as a header`,
			`testdata/bad/requests.yaml: case "bad values": requests[3].repeat: 0: want 1 to 100000`,
			`testdata/bad/requests.yaml: case "bad values": requests[4].expect.status: 99 is not an HTTP status`,
			`testdata/bad/requests.yaml: case "bad values": requests[5].expect.service: "" is not a backend: write null for none`,
			`testdata/bad/requests.yaml: case "bad values": requests[6].expect.service: service reference "prod/api": missing :port (want namespace/name:port)`,
			`testdata/bad/requests.yaml: case "bad values": requests[7].expect.distinctEndpoints: 3: want 0 to repeat (2)`,
			`testdata/bad/requests.yaml: case "bad values": requests[8].host: "a .example.com" holds whitespace or control characters`,
			`testdata/bad/requests.yaml: case "bad values": name already used by case #3`,
			`testdata/bad/requests.yaml: case #5: name: required`,
			`testdata/bad/requests.yaml: case "no requests": requests: at least one request is required`,
		}},
		{"new-keys.yaml", []string{
			`testdata/bad/new-keys.yaml: case "bad new keys": objects[2].include: an include item holds only include: path`,
			`testdata/bad/new-keys.yaml: case "bad new keys": objects[0] (include ../manifests/keys-backends.yaml) (Service prod/api): defined twice: first in the inline objects`,
			`testdata/bad/new-keys.yaml: case "bad new keys": objects[1] (include nowhere.yaml): manifest: stat testdata/bad/nowhere.yaml: no such file or directory`,
			`testdata/bad/new-keys.yaml: case "bad new keys": warnings[0]: reason and object are required`,
			`testdata/bad/new-keys.yaml: case "bad new keys": requests[0].expect.route: "prod/shop": want "namespace/name field" (e.g. "prod/shop spec.rules[0].http.paths[1]"), "--default-backend" or null`,
			`testdata/bad/new-keys.yaml: case "bad new keys": requests[1].expect.route: "" is not a route: write null for none`,
			`testdata/bad/new-keys.yaml: case "bad new keys": requests[2].body, bodySize: give one or the other`,
			`testdata/bad/new-keys.yaml: case "bad new keys": requests[3].bodySize: -1: want 0 to 1073741824`,
			`testdata/bad/new-keys.yaml: case "bad new keys": requests[4].bodySize: sent with its own Content-Length; drop the Content-Length and Transfer-Encoding headers, or write the body with body`,
			`testdata/bad/new-keys.yaml: case "bad new keys": requests[5].clientAddress: "somewhere": want an IP address, or ip:port`,
			`testdata/bad/new-keys.yaml: case "bad new keys": requests[6].expect.requestHeaders: the Host the backend received is checked with forwardedHost`,
			`testdata/bad/new-keys.yaml: case "bad new keys": requests[7].clientCertificate: only over https`,
			`testdata/bad/new-keys.yaml: case "bad new keys": requests[8].clientCertificate: want PEM CERTIFICATE blocks`,
			`testdata/bad/new-keys.yaml: case "wrong types": requests[0].body: want a string, got number 5`,
			`testdata/bad/new-keys.yaml: case "wrong types": requests[0].expect.requestHeaders.X-A: want a string, got number 1`,
			`testdata/bad/new-keys.yaml: case "wrong types": requests[0].expect.route: want "namespace/name field" or null, got number 5`,
			`testdata/bad/new-keys.yaml: case "wrong types": unknown key "warnings[0].winner"`,
			`testdata/bad/new-keys.yaml: case "default certificate not among the objects": options.defaultSSLCertificate: the Secret prod/missing is not among the objects`,
			`testdata/bad/new-keys.yaml: case "default certificate of the wrong type": options.defaultSSLCertificate: the Secret prod/opaque is of type "Opaque", not kubernetes.io/tls`,
		}},
		{"nonexistent.yaml", []string{
			`routertest: stat testdata/bad/nonexistent.yaml: no such file or directory`,
		}},
		{"*.nothing", []string{`routertest: no case files match "testdata/bad/*.nothing"`}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			cases, err := LoadCases(filepath.Join("testdata/bad", tt.file))
			require.Error(t, err)
			require.Nil(t, cases)
			if d := cmp.Diff(tt.want, strings.Split(err.Error(), "\n")); d != "" {
				t.Errorf("errors (-want +got):\n%s", d)
			}
		})
	}
}

func TestLoadCases(t *testing.T) {
	cases, err := LoadCases("testdata/cases/*.yaml")
	require.NoError(t, err)
	var names []string
	for _, c := range cases {
		names = append(names, c.File+": "+c.Name)
	}
	want := []string{
		"testdata/cases/keys.yaml: every case-file key",
		"testdata/cases/routes.yaml: prefix and exact routes",
		"testdata/cases/tls.yaml: certificates by SNI",
	}
	require.Empty(t, cmp.Diff(want, names))

	tls := cases[2]
	wantOptions := compile.Options{
		DefaultBackend:     &compile.ServiceRef{Namespace: "infra", Name: "fallback", Port: "80"},
		DisableSSLRedirect: true,
	}
	if d := cmp.Diff(wantOptions, tls.Options); d != "" {
		t.Errorf("options (-want +got):\n%s", d)
	}
	if !strings.HasPrefix(tls.Scenario, "shop.example.com has a valid certificate") || tls.Source != "SPEC §12" {
		t.Errorf("free text not kept: scenario %q source %q", tls.Scenario, tls.Source)
	}
	require.Len(t, tls.Objects.Ingresses, 1)
	require.Len(t, tls.Objects.Secrets, 1)
	require.Len(t, tls.Objects.Services, 2)
	if d := cmp.Diff([]string{"testdata/cases/tls.yaml#7: apps/v1 Deployment prod/web skipped"}, tls.Skipped); d != "" {
		t.Errorf("skipped (-want +got):\n%s", d)
	}
	// Defaults are filled in.
	r := tls.Requests[2]
	if r.Method != http.MethodGet || r.Scheme != "http" || r.Repeat != 1 {
		t.Errorf("defaults: %+v", r)
	}
	routes := cases[1]
	if got := routes.Requests[2].Expect.Service; got != (OptionalService{Checked: true}) {
		t.Errorf("service: null read as %+v, want checked with no ID", got)
	}
	if got := routes.Requests[1].Expect.Service; got.Checked {
		t.Errorf("absent service read as %+v, want unchecked", got)
	}
}

func TestLoadNewKeys(t *testing.T) {
	cases, err := LoadCases("testdata/cases/keys.yaml")
	require.NoError(t, err)
	require.Len(t, cases, 1)
	c := cases[0]
	require.True(t, c.Options.AllowLoopbackEndpoints)
	require.True(t, c.Router.TrustForwardedProto)
	require.NotNil(t, c.Router.DefaultCertificate, "defaultSSLCertificate is read from the Secret among the objects")
	require.True(t, c.CheckWarnings)
	want := []ExpectedWarning{{Reason: "SnippetAnswerIgnored", Object: "Ingress prod/shop", Field: "metadata.annotations[nginx.ingress.kubernetes.io/auth-snippet]"}}
	require.Empty(t, cmp.Diff(want, c.Warnings))
	// Inline objects and the included file's, merged.
	require.Len(t, c.Objects.Ingresses, 1)
	require.Len(t, c.Objects.Services, 1)
	require.Len(t, c.Objects.EndpointSlices, 1)
	require.Len(t, c.Objects.Secrets, 1)

	first := c.Requests[0]
	require.Equal(t, "203.0.113.7:5555", first.ClientAddress)
	require.Equal(t, "SPEC §13", first.Source)
	require.NotEmpty(t, first.Scenario)
	require.NotEmpty(t, first.Notes)
	require.Equal(t, OptionalRoute{Checked: true, Route: "prod/shop spec.rules[0].http.paths[0]"}, first.Expect.Route)
	require.Nil(t, first.Expect.RequestHeaders["X_Forwarded_For"], "null means absent")
	require.Contains(t, first.Expect.RequestHeaders, "X_Forwarded_For")
	require.Equal(t, "name=ramjet", c.Requests[1].Body)
	require.Equal(t, 100000, c.Requests[2].BodySize)
	require.Equal(t, "5\r\nhello\r\n0\r\n\r\n", c.Requests[3].Body)
	require.Equal(t, "198.51.100.20:1234", c.Requests[5].ClientAddress, "an IP alone gets port 1234")
	require.Equal(t, defaultClientAddress, c.Requests[6].ClientAddress)
	require.Equal(t, OptionalRoute{Checked: true}, c.Requests[6].Expect.Route)
	require.True(t, c.Requests[1].Expect.Route.Checked)
}

func TestRunReportsNewKeyMismatches(t *testing.T) {
	cases, err := LoadCases("testdata/fail/new-keys.yaml")
	require.NoError(t, err)
	require.Len(t, cases, 1)
	res := Run(cases[0])
	require.False(t, res.OK())
	require.Equal(t, 3, res.Failed())
	// Warnings are compared in order on reason, object and field.
	require.Contains(t, res.WarningsDiff, `"RouteConflict Ingress prod/shop spec.rules[0].http.paths[0]"`)
	require.Contains(t, res.WarningsDiff, `"EndpointRejected EndpointSlice prod/api-1 endpoints[1].addresses[0]"`)
	require.Equal(t, []Warning{{
		Reason: "EndpointRejected", Object: "EndpointSlice prod/api-1", Field: "endpoints[1].addresses[0]",
		Message: "address 127.0.0.1 is loopback and can never be a pod; it is not dialled",
	}}, res.Warnings)

	want := [][]Mismatch{
		{
			{Field: "route", Want: "prod/shop spec.rules[0].http.paths[1]", Got: "prod/shop spec.rules[0].http.paths[0]"},
			{Field: "requestHeaders.X-Forwarded-Host", Want: "absent", Got: `"shop.example.com"`},
			{Field: "requestHeaders.X-Missing", Want: `"x"`, Got: "absent"},
			{Field: "requestHeaders.X-Real-Ip", Want: `"203.0.113.1"`, Got: `"203.0.113.9"`},
		},
		{
			{Field: "route", Want: "prod/shop spec.rules[0].http.paths[0]", Got: "none"},
			{Field: "requestHeaders.X-Real-Ip", Want: "absent", Got: "not forwarded"},
		},
		{
			{Field: "route", Want: "none", Got: "prod/shop spec.rules[0].http.paths[0]"},
		},
	}
	var got [][]Mismatch
	for _, rr := range res.Requests {
		got = append(got, rr.Mismatches)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("mismatches (-want +got):\n%s", d)
	}
	// The body reached the backend.
	require.Equal(t, int64(len("hello")), res.Requests[2].Got.ForwardedBodySize)

	report := res.Report()
	for _, line := range []string{
		`case "wrong new keys" (testdata/fail/new-keys.yaml)`,
		`  warnings differ (-want +got):`,
		`  compiled to:`,
		`    EndpointRejected EndpointSlice prod/api-1 endpoints[1].addresses[0]: address 127.0.0.1 is loopback and can never be a pod; it is not dialled`,
		`  requests[0]: GET /api host="shop.example.com" client=203.0.113.9:1234`,
		`  requests[2]: POST /api host="shop.example.com" body="hello"`,
	} {
		require.Contains(t, report, line+"\n")
	}

	// The same case with the warnings it does compile to passes that check.
	c := cases[0]
	c.Warnings = []ExpectedWarning{{Reason: "EndpointRejected", Object: "EndpointSlice prod/api-1", Field: "endpoints[1].addresses[0]"}}
	require.Empty(t, Run(c).WarningsDiff)
	c.Warnings = nil
	require.NotEmpty(t, Run(c).WarningsDiff, "warnings: [] means none")
	c.CheckWarnings = false
	require.Empty(t, Run(c).WarningsDiff, "no warnings key: not checked")
}

func TestRouteText(t *testing.T) {
	tests := []struct {
		src  match.Source
		want string
	}{
		{match.Source{Namespace: "prod", Name: "shop", Field: "spec.rules[0].http.paths[1]"}, "prod/shop spec.rules[0].http.paths[1]"},
		{match.Source{Namespace: "prod", Name: "shop", Field: "spec.defaultBackend"}, "prod/shop spec.defaultBackend"},
		{match.Source{Field: "--default-backend"}, "--default-backend"},
		{match.Source{}, ""},
	}
	for _, tt := range tests {
		got := routeText(tt.src)
		require.Equal(t, tt.want, got)
		if got != "" {
			require.NoError(t, checkRoute(got), "what the router records can be written in a case file")
		}
	}
}

func TestOptions(t *testing.T) {
	tests := []struct {
		yaml string
		want compile.Options
	}{
		{"{}", compile.Options{}},
		{"{sslRedirect: true}", compile.Options{}},
		{"{sslRedirect: false}", compile.Options{DisableSSLRedirect: true}},
		{
			"{ingressClass: nginx, controllerName: k8s.io/ingress-nginx, watchIngressWithoutClass: true, defaultBackend: 'ns/svc:http'}",
			compile.Options{
				IngressClass: "nginx", ControllerName: "k8s.io/ingress-nginx", WatchIngressWithoutClass: true,
				DefaultBackend: &compile.ServiceRef{Namespace: "ns", Name: "svc", Port: "http"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.yaml, func(t *testing.T) {
			data := "name: x\noptions: " + tt.yaml + "\nobjects: []\nrequests: [{host: a, path: /, expect: {status: 404}}]\n"
			cases, err := parseCases("inline.yaml", []byte(data))
			require.NoError(t, err)
			if d := cmp.Diff(tt.want, cases[0].Options); d != "" {
				t.Errorf("options (-want +got):\n%s", d)
			}
		})
	}
}

func TestRunReportsMismatches(t *testing.T) {
	cases, err := LoadCases("testdata/fail/mismatch.yaml")
	require.NoError(t, err)
	require.Len(t, cases, 1)
	res := Run(cases[0])

	require.False(t, res.OK())
	require.Equal(t, 1, res.Passed())
	require.Equal(t, 4, res.Failed())
	want := [][]Mismatch{
		{
			{Field: "forwardedPath", Want: `"/api/x"`, Got: `"/api/x?y"`, Repeat: 1},
			{Field: "forwardedHost", Want: `"api.prod"`, Got: `"shop.example.com"`, Repeat: 1},
			{Field: "responseHeaders.Content-Type", Want: `"application/json"`, Got: `"text/plain; charset=utf-8"`, Repeat: 1},
			{Field: "distinctEndpoints", Want: "3", Got: "2 over 3 requests"},
		},
		{
			{Field: "status", Want: "200", Got: "404 (no-route)"},
			{Field: "service", Want: "prod/api:80", Got: "not forwarded"},
			{Field: "forwardedPath", Want: `"/nothing"`, Got: "not forwarded"},
		},
		{
			{Field: "service", Want: "not forwarded", Got: "prod/api:80"},
		},
		{
			{Field: "certificateHost", Want: `a certificate valid for "shop.example.com"`, Got: `certificate for ["CN=ramjet default certificate"]`},
		},
		nil,
	}
	var got [][]Mismatch
	for _, rr := range res.Requests {
		got = append(got, rr.Mismatches)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("mismatches (-want +got):\n%s", d)
	}

	report := res.Report()
	for _, line := range []string{
		`case "wrong expectations" (testdata/fail/mismatch.yaml)`,
		`  requests[0]: GET /api/x?y host="shop.example.com" repeat=3`,
		`    forwardedPath:                 want "/api/x"`,
		`                                   got  "/api/x?y"  (repeat 1 of 3)`,
		`  requests[1]: GET /nothing host="shop.example.com"`,
		`    got: 404 no-route, not forwarded, body "404 Not Found: no route for this host and path\n"`,
	} {
		require.Contains(t, report, line+"\n")
	}
	require.NotContains(t, report, "requests[4]", "passing requests are not reported")
	require.Empty(t, Result{Requests: []RequestResult{{Pass: true}}}.Report())
}

// TestNotForwardedSameWords: a refusal inside the matched location and a
// redirect reach no backend alike, and the runner says so in the same
// words for both.
func TestNotForwardedSameWords(t *testing.T) {
	cases, err := LoadCases("testdata/fail/not-forwarded.yaml")
	require.NoError(t, err)
	require.Len(t, cases, 1)
	res := Run(cases[0])
	require.Equal(t, 2, res.Failed())
	for i, reason := range []string{router.ReasonSourceDenied, router.ReasonRedirect} {
		rr := res.Requests[i]
		require.Equal(t, []Mismatch{{Field: "service", Want: "prod/api:80", Got: "not forwarded"}}, rr.Mismatches, "request %d", i)
		require.Equal(t, reason, rr.Got.Reason)
		require.Empty(t, rr.Got.Service)
		require.NotEmpty(t, rr.Got.Route, "the location matched")
		require.Contains(t, rr.Got.String(), ", not forwarded")
		require.NotContains(t, rr.Got.String(), "backend")
	}
}

func TestRunFilesReportsFailures(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile("testdata/fail/mismatch.yaml")
	require.NoError(t, err)
	caseFile := filepath.Join(dir, "mismatch.yaml")
	require.NoError(t, os.WriteFile(caseFile, data, 0o644))

	setUpdate(t, false)
	tb := &fakeTB{}
	RunFiles(tb, dir)
	require.Len(t, tb.errors, 2)
	require.Contains(t, tb.errors[0], `case "wrong expectations"`)
	require.Contains(t, tb.errors[0], `requests[3]: GET /api host="shop.example.com" scheme=https`)
	require.Equal(t, filepath.Join(dir, "mismatch.golden")+": golden table missing; run go test (or examples/check) with -update to create it", tb.errors[1])

	// -update writes the golden; later runs compare against it.
	setUpdate(t, true)
	tb = &fakeTB{}
	RunFiles(tb, caseFile)
	require.Len(t, tb.errors, 1, "cases still fail while updating")
	golden, err := os.ReadFile(filepath.Join(dir, "mismatch.golden"))
	require.NoError(t, err)
	cases, err := LoadCases(caseFile)
	require.NoError(t, err)
	want, err := RenderGolden(cases)
	require.NoError(t, err)
	require.Equal(t, want, string(golden))
	require.True(t, strings.HasPrefix(want, "# case: wrong expectations\ndigest "), want)
	require.Contains(t, want, "route Prefix /api -> prod/api:80 from Ingress prod/shop spec.rules[0].http.paths[0]\n")

	setUpdate(t, false)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "mismatch.golden"), []byte(strings.Replace(want, "/api", "/apx", 1)), 0o644))
	tb = &fakeTB{}
	RunFiles(tb, caseFile)
	require.Len(t, tb.errors, 2)
	require.Contains(t, tb.errors[1], "compiled tables differ from the golden (-golden +got)")
	// Changed lines are shown whole, before and after.
	for _, path := range []string{"/apx", "/api"} {
		require.Contains(t, tb.errors[1], `"  route Prefix `+path+` -> prod/api:80 from Ingress prod/shop spec.rules[0].http.paths[0]"`)
	}

	tb = &fakeTB{}
	RunFiles(tb, filepath.Join(dir, "*.none"))
	require.Equal(t, []string{fmt.Sprintf("routertest: no case files match %q", filepath.Join(dir, "*.none"))}, tb.errors)
}

func TestRunInvalidOptions(t *testing.T) {
	c := Case{
		Name:     "built in code",
		Options:  compile.Options{IngressClass: "Bad Class"},
		Requests: []Request{{Host: "a", Path: "/", Method: "GET", Scheme: "http", Repeat: 1, Expect: Expect{Status: 404}}},
	}
	res := Run(c)
	require.False(t, res.OK())
	require.Equal(t, 1, res.Failed())
	require.Contains(t, res.Error, `option ingress-class "Bad Class"`)
	_, err := RenderTable(c)
	require.ErrorContains(t, err, `case "built in code"`)
}

func TestBuildRequest(t *testing.T) {
	tests := []struct {
		name                         string
		req                          Request
		uri, host, path, rawQuery    string
		proto, forwardedPort, scheme string
		tls                          bool
	}{
		{
			name: "origin form keeps escapes and repeated slashes",
			req:  Request{Host: "Shop.Example.com:8443", Path: "//a/%2e%2E/b%2Fc?q=%20&q", Method: "GET", Scheme: "http"},
			uri:  "//a/%2e%2E/b%2Fc?q=%20&q", host: "Shop.Example.com:8443", path: "//a/../b/c", rawQuery: "q=%20&q",
			proto: "HTTP/1.1", forwardedPort: "80",
		},
		{
			name: "absolute form takes the host from the target",
			req:  Request{Host: "shop.example.com", Path: "http://other.example.com/x?", Method: "PUT", Scheme: "https"},
			uri:  "http://other.example.com/x?", host: "other.example.com", path: "/x",
			proto: "HTTP/1.1", forwardedPort: "443", scheme: "http", tls: true,
		},
		{
			name: "no host is HTTP/1.0",
			req:  Request{Host: "", Path: "/", Method: "GET", Scheme: "http"},
			uri:  "/", host: "", path: "/",
			proto: "HTTP/1.0", forwardedPort: "80",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := buildRequest(tt.req)
			require.NoError(t, err)
			got := []string{req.RequestURI, req.Host, req.URL.Path, req.URL.RawQuery, req.Proto, req.URL.Scheme, req.Method}
			want := []string{tt.uri, tt.host, tt.path, tt.rawQuery, tt.proto, tt.scheme, tt.req.Method}
			require.Empty(t, cmp.Diff(want, got))
			require.Equal(t, tt.tls, req.TLS != nil)
			addr, ok := req.Context().Value(http.LocalAddrContextKey).(*net.TCPAddr)
			require.True(t, ok)
			require.Equal(t, tt.forwardedPort, fmt.Sprint(addr.Port))
			require.Empty(t, req.Header.Get("Host"), "Host is not left among the headers")
		})
	}

	// A request-target net/http's server would refuse never reaches the router.
	_, err := buildRequest(Request{Host: "a", Path: "/a b", Method: "GET", Scheme: "http"})
	require.Error(t, err)
	h := newHarness(router.Options{})
	out := h.serve(Request{Host: "a", Path: "/a b", Method: "GET", Scheme: "http"})
	require.Equal(t, http.StatusBadRequest, out.Status)
	require.False(t, out.Recorded)
	require.Contains(t, out.Reason, "refused by net/http before the handler")
}

func TestServerName(t *testing.T) {
	for host, want := range map[string]string{
		"shop.example.com":      "shop.example.com",
		"shop.example.com:8443": "shop.example.com",
		"shop.example.com.":     "shop.example.com",
		"10.0.0.1":              "",
		"[fd00::1]:443":         "",
		"":                      "",
	} {
		require.Equal(t, want, serverName(host), host)
	}
}

func TestBackendsRecordWireRequest(t *testing.T) {
	b := &backends{}
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, "http://10.0.0.1:8080/x", nil)
	require.NoError(t, err)
	req.URL.Opaque = "/a%2Fb//c"
	req.Host = "shop.example.com"
	req.Header.Set("X-Real-Ip", "192.0.2.1")
	req.Body = io.NopCloser(strings.NewReader("hello"))
	resp, err := b.RoundTrip(req)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	x, ok := b.last()
	require.True(t, ok)
	require.Equal(t, exchange{endpoint: "10.0.0.1:8080", target: "/a%2Fb//c", host: "shop.example.com",
		header: http.Header{"X-Real-Ip": {"192.0.2.1"}}, bodySize: 5}, x)
	b.reset()
	_, ok = b.last()
	require.False(t, ok)
}

func TestResultJSON(t *testing.T) {
	cases, err := LoadCases("testdata/fail/mismatch.yaml")
	require.NoError(t, err)
	res := Run(cases[0])
	data, err := json.Marshal(res)
	require.NoError(t, err)
	var back struct {
		Case     string `json:"case"`
		Requests []struct {
			Pass    bool `json:"pass"`
			Request struct {
				Expect map[string]any `json:"expect"`
			} `json:"request"`
			Mismatches []Mismatch `json:"mismatches"`
			Got        struct {
				Status  int    `json:"status"`
				Service string `json:"service"`
			} `json:"got"`
		} `json:"requests"`
	}
	require.NoError(t, json.Unmarshal(data, &back))
	require.Equal(t, "wrong expectations", back.Case)
	require.Len(t, back.Requests, 5)
	require.Equal(t, 404, back.Requests[1].Got.Status)
	// null (no backend) survives; an unchecked service is left out.
	expect2 := back.Requests[2].Request.Expect
	v, present := expect2["service"]
	require.True(t, present)
	require.Nil(t, v)
	_, present = back.Requests[4].Request.Expect["service"]
	require.False(t, present)
	require.Empty(t, cmp.Diff(res.Requests[0].Mismatches, back.Requests[0].Mismatches, cmpopts.EquateEmpty()))
}

// The router options of SPEC §18: proxyBodySize in nginx's size syntax,
// useForwardedHeaders as the flag spells trustForwardedProto, and
// proxyRealIPCIDR as ranges or addresses.
func TestRouterOptions(t *testing.T) {
	dir := t.TempDir()
	write := func(name, options string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte("name: "+name+"\noptions: "+options+"\nobjects: []\nrequests: [{host: a.example, path: /, expect: {status: 404}}]\n"), 0o644))
		return p
	}
	tests := []struct {
		options string
		check   func(t *testing.T, o router.Options)
		err     string
	}{
		{`{proxyBodySize: 8m, useForwardedHeaders: true, proxyRealIPCIDR: [10.0.0.0/8, "192.0.2.7, ::ffff:172.16.0.0/108"]}`, func(t *testing.T, o router.Options) {
			require.Equal(t, int64(8<<20), o.MaxBodySize)
			require.True(t, o.TrustForwardedProto)
			require.Equal(t, []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("172.16.0.0/12"), netip.MustParsePrefix("192.0.2.7/32")}, o.ProxyRealIPCIDR)
		}, ""},
		{`{proxyBodySize: "0"}`, func(t *testing.T, o router.Options) {
			require.Equal(t, int64(-1), o.MaxBodySize, "nginx's 0: no limit")
		}, ""},
		{`{useForwardedHeaders: true, trustForwardedProto: true}`, func(t *testing.T, o router.Options) { require.True(t, o.TrustForwardedProto) }, ""},
		{`{useForwardedHeaders: true, trustForwardedProto: false}`, nil, "say different things"},
		{`{proxyBodySize: 15r}`, nil, "options.proxyBodySize"},
		{`{proxyRealIPCIDR: [10.0.0.0/33]}`, nil, "options.proxyRealIPCIDR[0]"},
	}
	for i, tt := range tests {
		cases, err := LoadCases(write(fmt.Sprintf("o%d.yaml", i), tt.options))
		if tt.err != "" {
			require.ErrorContains(t, err, tt.err)
			continue
		}
		require.NoError(t, err)
		tt.check(t, cases[0].Router)
	}
}

// A case whose Ingress is another class's passes on its 404s; the result
// says that nothing was claimed and which option would claim it.
func TestRunSaysWhatIsNotClaimed(t *testing.T) {
	data := `name: other class
objects:
  - apiVersion: networking.k8s.io/v1
    kind: Ingress
    metadata: {name: a, namespace: demo, annotations: {kubernetes.io/ingress.class: nginx}}
    spec: {defaultBackend: {service: {name: web, port: {number: 80}}}}
requests: [{host: a, path: /, expect: {status: 404}}]
`
	cases, err := parseCases("inline.yaml", []byte(data))
	require.NoError(t, err)
	res := Run(cases[0])
	require.True(t, res.OK(), res.Report())
	require.True(t, res.NothingClaimed)
	require.Equal(t, `1 of 1 Ingresses read are not claimed (nothing is served from Ingresses): 1 annotated kubernetes.io/ingress.class="nginx", e.g. demo/a: options.ingressClass: nginx claims them`, res.Unclaimed)

	cases[0].Requests[0].Expect.Status = 200
	require.Contains(t, Run(cases[0]).Report(), "  warning: 1 of 1 Ingresses read are not claimed")

	cases[0].Options.IngressClass = "nginx"
	res = Run(cases[0])
	require.False(t, res.NothingClaimed)
	require.Empty(t, res.Unclaimed)
}

// Separators around the one document that holds cases, and documents of
// comments only, are no second document.
func TestCaseFileSeparators(t *testing.T) {
	const one = "- name: one\n  objects: []\n  requests: [{host: a, path: /, expect: {status: 404}}]\n"
	for _, data := range []string{
		"---\n" + one,
		"--- # cases\n" + one + "---\n",
		"# header\n---\n" + one + "--- \n# trailing notes\n\n---\n",
	} {
		cases, err := parseCases("inline.yaml", []byte(data))
		require.NoError(t, err, "%q", data)
		require.Len(t, cases, 1)
	}
	_, err := parseCases("inline.yaml", []byte(one+"---\n\n"+strings.Replace(one, "one", "two", 1)))
	require.EqualError(t, err, "inline.yaml: line 5: a second YAML document: a case file is one case or one list of cases; list every case in the first document")
}

// A golden file given where case files are (the shell's expansion of
// cases/*) stands for its case file, and each case file is read once.
func TestCaseFilesGolden(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"a.yaml", "a.golden", "b.yml", "b.golden", "orphan.golden"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, f), []byte("# "+f+"\n"), 0o644))
	}
	at := func(names ...string) []string {
		var out []string
		for _, n := range names {
			out = append(out, filepath.Join(dir, n))
		}
		return out
	}
	files, err := CaseFiles(at("a.golden", "a.yaml", "b.golden", "b.yml")...)
	require.NoError(t, err)
	require.Equal(t, at("a.yaml", "b.yml"), files)
	files, err = CaseFiles(filepath.Join(dir, "[ab].*"), dir)
	require.NoError(t, err)
	require.Equal(t, at("a.yaml", "b.yml"), files)

	_, err = CaseFiles(at("orphan.golden")...)
	require.EqualError(t, err, "routertest: "+filepath.Join(dir, "orphan.golden")+" is a golden file, and no case file orphan.yaml is beside it")
}
