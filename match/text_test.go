package match

import (
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite golden files")

func goldenTable(t *testing.T) *Table {
	api := &Backend{ID: "prod/api:80", Namespace: "prod", Name: "api", Port: 80, Protocol: GRPC, Endpoints: []string{"10.0.0.1:8080", "[fd00::1]:8080"}}
	web := &Backend{ID: "prod/web:80", Namespace: "prod", Name: "web", Port: 80}
	gone := &Backend{ID: "prod/gone:http", Namespace: "prod", Name: "gone", State: ServiceNotFound}
	notFound := &Backend{ID: "kube-system/notfound:8080", Namespace: "kube-system", Name: "notfound", Port: 8080, Endpoints: []string{"10.0.9.9:8080"}}
	src := func(ing string, rule, path int) Source {
		ns, name, _ := strings.Cut(ing, "/")
		return Source{Namespace: ns, Name: name, Field: "spec.rules[" + strconv.Itoa(rule) + "].http.paths[" + strconv.Itoa(path) + "]"}
	}
	linear, err := CompileRegex(`/api/v[0-9]+/(.*)`, 0)
	require.NoError(t, err)
	backtracking, err := CompileRegex(`/(?!admin)`, 0)
	require.NoError(t, err)
	spaced, err := CompileRegex(`/a b`, 0)
	require.NoError(t, err)

	hosts := []*VirtualHost{
		{
			Name: "shop.example.com",
			TLS:  true,
			Routes: []*Route{
				{Type: Regex, Path: `/(?!admin)`, Backend: web, Regexp: backtracking, Source: src("prod/shop", 0, 4), Order: 4},
				{Type: Prefix, Path: "", Backend: web, Source: src("prod/shop", 0, 0), Order: 0},
				{Type: Regex, Path: `/api/v[0-9]+/(.*)`, Backend: api, Regexp: linear, Source: src("prod/shop", 0, 3), Order: 3},
				{Type: Prefix, Path: "/api", Backend: api, Source: src("prod/shop", 0, 1), Order: 1},
				{Type: Exact, Path: "/login", Backend: web, Source: src("prod/shop", 0, 2), Order: 2, SSLRedirect: true},
			},
			Fallback:       web,
			FallbackSource: Source{Namespace: "prod", Name: "shop", Field: "spec.defaultBackend"},
			SSLRedirect:    true,
		},
		{
			Name:        "*.apps.example.com",
			Routes:      []*Route{{Type: Regex, Path: `/a b`, Backend: gone, Regexp: spaced, Source: src("prod/apps", 1, 0), SSLRedirect: true, ForceSSLRedirect: true}},
			SSLRedirect: true, // no tls: not redirected
		},
		{Name: "", Fallback: notFound, FallbackSource: Source{Field: "--default-backend"}},
	}
	certs := []*Certificate{{Secret: "prod/shop-tls", Hosts: []string{"shop.example.com", "*.apps.example.com"}, Fingerprint: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"}}
	return mustNew(t, Spec{VirtualHosts: hosts, Backends: []*Backend{web, gone, notFound, api}, Certificates: certs, TLSHosts: []string{"shop.example.com"}})
}

func TestWriteTextGolden(t *testing.T) {
	tab := goldenTable(t)
	var b strings.Builder
	require.NoError(t, tab.WriteText(&b))
	got := b.String()
	require.Equal(t, got, tab.String())

	path := filepath.Join("testdata", "table.golden")
	if *update {
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run with -update to create the golden file")
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("WriteText (-want +got):\n%s", diff)
	}
}

func TestWriteTextEmptyTable(t *testing.T) {
	tab := mustNew(t, Spec{})
	want := "digest " + tab.Digest() + "\nhost * catch-all\n  fallback none (404)\n"
	if diff := cmp.Diff(want, tab.String()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, os.ErrClosed }

func TestWriteTextReportsWriteError(t *testing.T) {
	require.ErrorIs(t, goldenTable(t).WriteText(failingWriter{}), os.ErrClosed)
}
