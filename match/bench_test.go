package match

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// benchRoute is one route of the benchmark table, with the equivalent
// net/http.ServeMux pattern (without the host).
type benchRoute struct {
	typ     PathType
	path    string // as declared
	pattern string
}

// Each host gets these ten routes: a realistic mix of Exact and nested
// Prefix routes under a root Prefix.
var benchRoutes = []benchRoute{
	{Exact, "/healthz", "/healthz"},
	{Exact, "/api/v1/status", "/api/v1/status"},
	{Exact, "/login/", "/login/{$}"},
	{Prefix, "/api", "/api/"},
	{Prefix, "/api/v1", "/api/v1/"},
	{Prefix, "/api/v1/users", "/api/v1/users/"},
	{Prefix, "/api/v2/orders", "/api/v2/orders/"},
	{Prefix, "/static", "/static/"},
	{Prefix, "/static/img/icons", "/static/img/icons/"},
	{Prefix, "/", "/"},
}

// benchPaths are request paths; most hit deep prefixes.
var benchPaths = []string{
	"/api/v1/users/12345/profile/settings",
	"/static/img/icons/social/twitter/large.png",
	"/api/v2/orders/987/items/3",
	"/api/v1/status",
	"/healthz",
	"/login/",
	"/api/v3/things/1",
	"/docs/guide/getting-started/install",
}

type benchRequest struct {
	host, path string
	req        *http.Request
	want       *Route
}

type benchFixture struct {
	table     *Table
	reqs      []benchRequest
	patternOf map[*Route]string
	mux       *http.ServeMux // built on first use: slow to build at 100,000 patterns
}

// benchFixtures caches fixtures across benchmarks and -count runs.
var benchFixtures = map[int]*benchFixture{}

func benchHost(i int) string { return fmt.Sprintf("svc%06d.prod.example.com", i) }

// newBenchFixture builds a table with routes/10 hosts of ten routes each,
// and 4096 requests spread over the hosts.
func newBenchFixture(tb testing.TB, routes int) *benchFixture {
	tb.Helper()
	if fx := benchFixtures[routes]; fx != nil {
		return fx
	}
	nHosts := max(routes/len(benchRoutes), 1)
	fx := &benchFixture{patternOf: make(map[*Route]string)}
	hosts := make([]*VirtualHost, 0, nHosts)
	backends := make([]*Backend, 0, nHosts)
	for i := range nHosts {
		name := benchHost(i)
		be := &Backend{ID: fmt.Sprintf("prod/svc%06d:80", i), Endpoints: []string{"10.0.0.1:8080"}}
		backends = append(backends, be)
		vh := &VirtualHost{Name: name}
		for j, br := range benchRoutes {
			r := &Route{Type: br.typ, Path: br.key(), Backend: be, Order: int32(j)}
			vh.Routes = append(vh.Routes, r)
			fx.patternOf[r] = name + br.pattern
		}
		hosts = append(hosts, vh)
	}
	fx.table = mustNew(tb, Spec{VirtualHosts: hosts, Backends: backends})

	rng := rand.New(rand.NewPCG(uint64(routes), 7))
	for range 4096 {
		host, path := benchHost(rng.IntN(nHosts)), benchPaths[rng.IntN(len(benchPaths))]
		res := fx.table.Lookup(host, path)
		if res.Route == nil {
			tb.Fatalf("no route for %s%s", host, path)
		}
		req := httptest.NewRequest(http.MethodGet, "http://"+host+path, nil)
		fx.reqs = append(fx.reqs, benchRequest{host: host, path: path, req: req, want: res.Route})
	}
	benchFixtures[routes] = fx
	return fx
}

// serveMux builds a net/http.ServeMux with the table's hosts and paths and
// checks that it routes every request the way the table does.
func (fx *benchFixture) serveMux(tb testing.TB) *http.ServeMux {
	tb.Helper()
	if fx.mux != nil {
		return fx.mux
	}
	mux := http.NewServeMux()
	for _, vh := range fx.table.hosts {
		for _, r := range vh.Routes {
			mux.Handle(fx.patternOf[r], http.NotFoundHandler())
		}
	}
	for _, r := range fx.reqs {
		if _, pattern := mux.Handler(r.req); pattern != fx.patternOf[r.want] {
			tb.Fatalf("%s%s: ServeMux chose %q, table chose %q", r.host, r.path, pattern, fx.patternOf[r.want])
		}
	}
	fx.mux = mux
	return mux
}

// key is Route.Path: a Prefix is declared with trailing slashes stripped.
func (br benchRoute) key() string {
	if br.typ == Prefix {
		return strings.TrimRight(br.path, "/")
	}
	return br.path
}

var benchSizes = []int{10, 1000, 10000, 100000}

// TestBenchFixtureAgreesWithServeMux runs the cross-check of the benchmark
// table against net/http.ServeMux in ordinary test runs.
func TestBenchFixtureAgreesWithServeMux(t *testing.T) {
	fx := newBenchFixture(t, 1000)
	fx.serveMux(t)
	require.Len(t, fx.reqs, 4096)
}

func BenchmarkLookup(b *testing.B) {
	for _, n := range benchSizes {
		fx := newBenchFixture(b, n)
		b.Run(fmt.Sprintf("routes=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				r := &fx.reqs[i&4095]
				if fx.table.Lookup(r.host, r.path).Route != r.want {
					b.Fatal("wrong route")
				}
				i++
			}
		})
	}
}

// BenchmarkNormalizeLookup adds what a request costs before Lookup: the
// host and path normalized from their raw forms (ServeMux.Handler does the
// equivalent host and path cleaning inside).
func BenchmarkNormalizeLookup(b *testing.B) {
	for _, n := range benchSizes {
		fx := newBenchFixture(b, n)
		b.Run(fmt.Sprintf("routes=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				r := &fx.reqs[i&4095]
				path, err := NormalizePath(r.req.URL.EscapedPath())
				if err != nil || fx.table.Lookup(NormalizeHost(r.req.Host), path).Route != r.want {
					b.Fatal("wrong route")
				}
				i++
			}
		})
	}
}

func BenchmarkServeMux(b *testing.B) {
	for _, n := range benchSizes {
		fx := newBenchFixture(b, n)
		mux := fx.serveMux(b)
		b.Run(fmt.Sprintf("routes=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if h, _ := mux.Handler(fx.reqs[i&4095].req); h == nil {
					b.Fatal("no handler")
				}
				i++
			}
		})
	}
}

func BenchmarkNewTable(b *testing.B) {
	for _, n := range []int{1000, 100000} {
		b.Run(fmt.Sprintf("routes=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				b.StopTimer()
				hosts := make([]*VirtualHost, 0, n/len(benchRoutes))
				for i := range n / len(benchRoutes) {
					vh := &VirtualHost{Name: benchHost(i)}
					for j, br := range benchRoutes {
						vh.Routes = append(vh.Routes, &Route{Type: br.typ, Path: br.key(), Order: int32(j)})
					}
					hosts = append(hosts, vh)
				}
				b.StartTimer()
				if _, err := New(Spec{VirtualHosts: hosts}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkNormalizePath(b *testing.B) {
	for _, tc := range []struct{ name, path string }{
		{"clean", "/api/v1/users/12345/profile/settings"},
		{"dotfile", "/.well-known/acme-challenge/abcdefghijklmnop"},
		{"escaped", "/api/v1/users/caf%C3%A9/profile"},
		{"dotsegments", "/api/v1/../v2/./orders//7"},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := NormalizePath(tc.path); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkNormalizeHost(b *testing.B) {
	for _, tc := range []struct{ name, host string }{
		{"plain", "svc000123.prod.example.com"},
		{"port", "svc000123.prod.example.com:8443"},
		{"upper", "Svc000123.Prod.Example.com"},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				NormalizeHost(tc.host)
			}
		})
	}
}
