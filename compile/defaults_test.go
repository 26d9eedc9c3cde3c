package compile

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime"

	"ramjet.dev/ramjet/match"
)

func backendsFixture() []runtime.Object {
	var objs []runtime.Object
	for _, n := range []string{"a", "b", "c", "d", "global", "web"} {
		objs = append(objs, mkService("prod", n, ":80:"), mkSlice("prod", n, n, "", 80, "10.0.0.1"))
	}
	objs = append(objs, mkService("prod", "empty", ":80:"), mkService("kube-system", "fallback", ":80:"),
		mkSlice("kube-system", "fallback", "f", "", 80, "10.9.9.9"))
	return objs
}

func TestDefaultBackends(t *testing.T) {
	global := &ServiceRef{Namespace: "kube-system", Name: "fallback", Port: "80"}
	type want struct {
		host, path, backend string
		source              string // FallbackSource of the host, "" to skip
	}
	tests := []struct {
		name     string
		opts     Options
		ings     []runtime.Object
		want     []want
		warnings []short
	}{
		{
			name: "host fallback from the creating Ingress; a newer one never takes over",
			ings: []runtime.Object{
				mkIngress("prod", "old", 1, withDefault("a", 80), withRules(mkRule("shop.example.com", prefix("/a", "web", 80)))),
				mkIngress("prod", "new", 2, withDefault("b", 80), withRules(mkRule("shop.example.com", prefix("/b", "web", 80)),
					mkRule("new.example.com", prefix("/b", "web", 80)))),
			},
			want: []want{
				{"shop.example.com", "/zzz", "prod/a:80", "Ingress prod/old spec.defaultBackend"},
				{"new.example.com", "/zzz", "prod/b:80", "Ingress prod/new spec.defaultBackend"},
				{"other.example.com", "/", "404", ""},
			},
		},
		{
			name: "a declared Prefix / outranks the fallback",
			ings: []runtime.Object{mkIngress("prod", "a", 1, withDefault("a", 80), withRules(mkRule("shop.example.com", prefix("/", "web", 80))))},
			want: []want{{"shop.example.com", "/zzz", "prod/web:80", ""}},
		},
		{
			name: "catch-all from the oldest Ingress without rules",
			ings: []runtime.Object{
				mkIngress("prod", "rules-hostless", 1, withDefault("a", 80), withRules(mkRule("", prefix("/x", "web", 80)))),
				mkIngress("prod", "norules-old", 2, withDefault("b", 80)),
				mkIngress("prod", "norules-new", 3, withDefault("c", 80)),
			},
			want: []want{
				{"anything.test", "/zzz", "prod/b:80", "Ingress prod/norules-old spec.defaultBackend"},
				{"anything.test", "/x", "prod/web:80", ""},
			},
			warnings: []short{{DefaultBackendConflict, "Ingress prod/norules-new", "spec.defaultBackend"}},
		},
		{
			name: "an Ingress with rules never sets the catch-all, even hostless ones",
			opts: Options{DefaultBackend: global},
			ings: []runtime.Object{mkIngress("prod", "hostless", 1, withDefault("a", 80), withRules(mkRule("", prefix("/x", "web", 80))))},
			want: []want{{"anything.test", "/zzz", "kube-system/fallback:80", "--default-backend"}},
		},
		{
			name: "global default for hosts without their own",
			opts: Options{DefaultBackend: global},
			ings: []runtime.Object{
				mkIngress("prod", "a", 1, withRules(mkRule("shop.example.com", prefix("/a", "web", 80)))),
				mkIngress("prod", "b", 2, withDefault("b", 80), withRules(mkRule("own.example.com", prefix("/a", "web", 80)))),
			},
			want: []want{
				{"shop.example.com", "/zzz", "kube-system/fallback:80", "--default-backend"},
				{"own.example.com", "/zzz", "prod/b:80", "Ingress prod/b spec.defaultBackend"},
				{"", "/", "kube-system/fallback:80", "--default-backend"},
			},
		},
		{
			name: "global default by port name",
			opts: Options{DefaultBackend: &ServiceRef{Namespace: "prod", Name: "named", Port: "http"}},
			ings: []runtime.Object{mkService("prod", "named", "http:8080:"), mkSlice("prod", "named", "n", "http", 8080, "10.1.1.1")},
			want: []want{{"x.test", "/", "prod/named:8080", "--default-backend"}},
		},
		{
			name: "global default missing: 404 and DefaultBackendUnavailable",
			opts: Options{DefaultBackend: &ServiceRef{Namespace: "kube-system", Name: "notfound", Port: "80"}},
			ings: []runtime.Object{mkIngress("prod", "a", 1, withRules(mkRule("shop.example.com", prefix("/a", "web", 80))))},
			want: []want{
				{"shop.example.com", "/zzz", "404", ""},
				{"shop.example.com", "/a", "prod/web:80", ""},
				{"", "/", "404", ""},
			},
			warnings: []short{{DefaultBackendUnavailable, "Service kube-system/notfound", "--default-backend"}},
		},
		{
			name:     "global default without endpoints: 404 and DefaultBackendUnavailable",
			opts:     Options{DefaultBackend: &ServiceRef{Namespace: "prod", Name: "empty", Port: "80"}},
			want:     []want{{"", "/", "404", ""}},
			warnings: []short{{DefaultBackendUnavailable, "Service prod/empty", "--default-backend"}},
		},
		{
			name:     "global default with a missing port",
			opts:     Options{DefaultBackend: &ServiceRef{Namespace: "prod", Name: "a", Port: "9999"}},
			want:     []want{{"", "/", "404", ""}},
			warnings: []short{{DefaultBackendUnavailable, "Service prod/a", "--default-backend"}},
		},
		{
			name: "an Ingress default without endpoints is still the fallback (503)",
			opts: Options{DefaultBackend: global},
			ings: []runtime.Object{mkIngress("prod", "a", 1, withDefault("empty", 80), withRules(mkRule("shop.example.com")))},
			want: []want{{"shop.example.com", "/", "prod/empty:80", "Ingress prod/a spec.defaultBackend"}},
		},
		{
			name:     "an Ingress default naming a missing Service is the fallback and warns",
			opts:     Options{DefaultBackend: global},
			ings:     []runtime.Object{mkIngress("prod", "a", 1, withDefault("ghost", 80), withRules(mkRule("shop.example.com")))},
			want:     []want{{"shop.example.com", "/", "prod/ghost:80", "Ingress prod/a spec.defaultBackend"}},
			warnings: []short{{ServiceNotFound, "Ingress prod/a", "spec.defaultBackend.service.name"}},
		},
		{
			name: "a shadowed default is still checked",
			ings: []runtime.Object{
				mkIngress("prod", "old", 1, withRules(mkRule("shop.example.com"))),
				mkIngress("prod", "new", 2, withDefault("ghost", 80), withRules(mkRule("shop.example.com"))),
			},
			want:     []want{{"shop.example.com", "/", "404", ""}},
			warnings: []short{{ServiceNotFound, "Ingress prod/new", "spec.defaultBackend.service.name"}},
		},
		{
			name: "a global default missing that only error pages use still warns",
			opts: Options{DefaultBackend: &ServiceRef{Namespace: "kube-system", Name: "notfound", Port: "80"}},
			ings: []runtime.Object{
				mkIngress("prod", "catch", 1, withDefault("a", 80)),
				mkIngress("prod", "shop", 2, withDefault("b", 80), withAnnotations(NginxPrefix+"custom-http-errors", "503"),
					withRules(mkRule("shop.example.com", prefix("/", "web", 80)))),
			},
			want:     []want{{"shop.example.com", "/zzz", "prod/web:80", ""}, {"", "/", "prod/a:80", ""}},
			warnings: []short{{DefaultBackendUnavailable, "Service kube-system/notfound", "--default-backend"}},
		},
		{
			name: "a resource default backend is unsupported; the global default applies",
			opts: Options{DefaultBackend: global},
			ings: []runtime.Object{func() runtime.Object {
				ing := mkIngress("prod", "a", 1, withRules(mkRule("shop.example.com")))
				p := mkPath("Prefix", "/", "", nil)
				ing.Spec.DefaultBackend = &p.Backend
				return ing
			}()},
			want:     []want{{"shop.example.com", "/", "kube-system/fallback:80", "--default-backend"}},
			warnings: []short{{BackendUnsupported, "Ingress prod/a", "spec.defaultBackend.resource"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tab, ws := compileOK(t, mkSnapshot(append(backendsFixture(), tt.ings...)...), tt.opts)
			if diff := cmp.Diff(tt.warnings, shorten(ws), cmpEmpty); diff != "" {
				t.Errorf("warnings (-want +got):\n%s\n%s", diff, warningText(ws))
			}
			for _, w := range tt.want {
				require.Equal(t, w.backend, served(tab, w.host, w.path), "%s%s", w.host, w.path)
				if w.source != "" {
					res := tab.Lookup(w.host, w.path)
					require.Nil(t, res.Route)
					src := res.Host.FallbackSource
					got := src.Field
					if src.Name != "" {
						got = src.String()
					}
					require.Equal(t, w.source, got)
				}
			}
		})
	}
}

func TestDefaultBackendConflictNamesWinner(t *testing.T) {
	s := mkSnapshot(append(backendsFixture(),
		mkIngress("prod", "first", 1, withDefault("a", 80)),
		mkIngress("prod", "second", 2, withDefault("b", 80)),
		mkIngress("prod", "third", 3, withDefault("c", 80)),
	)...)
	tab, ws := compileOK(t, s, Options{})
	require.Len(t, ws, 2)
	for _, w := range ws {
		require.Equal(t, DefaultBackendConflict, w.Reason)
		require.Equal(t, "Ingress prod/first spec.defaultBackend", w.WinnerText())
	}
	require.Equal(t, "prod/a:80", served(tab, "x.test", "/"))
	// Losers' backends are not in the table.
	var ids []string
	for be := range tab.Backends() {
		ids = append(ids, be.ID)
	}
	require.Equal(t, []string{"prod/a:80"}, ids)
}

// cmpEmpty treats nil and empty slices alike.
var cmpEmpty = cmp.FilterValues(func(a, b []short) bool { return len(a) == 0 && len(b) == 0 }, cmp.Comparer(func(a, b []short) bool { return true }))

// ingress-nginx's createServers gives a named host's default location "/"
// to the first Ingress that declares the host, whatever backend serves
// it; its template labels requests there with that Ingress.
func TestHostCreatorNamesDefaultLocation(t *testing.T) {
	global := &ServiceRef{Namespace: "kube-system", Name: "fallback", Port: "80"}
	s := mkSnapshot(append(backendsFixture(),
		mkIngress("prod", "old", 1, withRules(mkRule("shop.example.com", prefix("/a", "web", 80)))),
		mkIngress("prod", "new", 2, withRules(mkRule("shop.example.com", prefix("/b", "web", 80)), mkRule("", prefix("/c", "web", 80)))),
	)...)
	tab, _ := compileOK(t, s, Options{DefaultBackend: global})
	require.Equal(t, match.Source{Namespace: "prod", Name: "old"}, tab.VirtualHostByName("shop.example.com").Creator)
	require.Zero(t, tab.VirtualHostByName("").Creator, "the catch-all's default location has no Ingress")
}
