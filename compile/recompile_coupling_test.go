package compile

import (
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime"
)

// Ingress prod/w (older) has server-alias alias.example.com, and team v
// then creates an Ingress for the host alias.example.com: the real host
// wins and w's alias is dropped with AnnotationConflict (as in
// ingress-nginx). The incremental Compiler, given the change to v alone,
// reaches w through the alias name and gives what Compile gives (SPEC
// §17), so that a long-running replica and a new one agree.
func TestRecompileServerAliasVsNewHost(t *testing.T) {
	base := mkSnapshot(
		mkService("prod", "web", ":80:"), mkSlice("prod", "web", "w", "", 80, "10.0.0.5"),
		mkIngress("prod", "w", 1, withAnnotations("nginx.ingress.kubernetes.io/server-alias", "alias.example.com"),
			withRules(mkRule("w.example.com", prefix("/", "web", 80)))),
	)
	var c Compiler
	c.Compile(base)

	s := base
	s.Ingresses = append(s.Ingresses[:len(s.Ingresses):len(s.Ingresses)],
		mkIngress("team", "v", 2, withRules(mkRule("alias.example.com", prefix("/", "api", 80)))))
	s.Services = append(s.Services[:len(s.Services):len(s.Services)], mkService("team", "api", ":80:"))
	s.EndpointSlices = append(s.EndpointSlices[:len(s.EndpointSlices):len(s.EndpointSlices)], mkSlice("team", "api", "a", "", 80, "10.0.0.9"))

	fresh := Compile(s, Options{})
	incr := c.Compile(s)
	t.Logf("fresh: alias.example.com/ -> %s; incremental: -> %s", served(fresh.Table, "alias.example.com", "/"), served(incr.Table, "alias.example.com", "/"))
	require.Equal(t, fresh.String(), incr.String())
}

// The same through from-to-www-redirect's www twin.
func TestRecompileWWWTwinVsNewHost(t *testing.T) {
	base := mkSnapshot(
		mkService("prod", "web", ":80:"), mkSlice("prod", "web", "w", "", 80, "10.0.0.5"),
		mkIngress("prod", "w", 1, withAnnotations("nginx.ingress.kubernetes.io/from-to-www-redirect", "true"),
			withRules(mkRule("w.example.com", prefix("/", "web", 80)))),
	)
	var c Compiler
	c.Compile(base)
	s := base
	s.Ingresses = append(s.Ingresses[:len(s.Ingresses):len(s.Ingresses)],
		mkIngress("team", "v", 2, withRules(mkRule("www.w.example.com", prefix("/", "api", 80)))))
	s.Services = append(s.Services[:len(s.Services):len(s.Services)], mkService("team", "api", ":80:"))
	fresh := Compile(s, Options{})
	incr := c.Compile(s)
	require.Equal(t, fresh.String(), incr.String())
}

// The other direction: team v deletes its Ingress for alias.example.com,
// and alias.example.com is served again by w's server-alias.
func TestRecompileServerAliasAfterHostDeleted(t *testing.T) {
	base := mkSnapshot(
		mkService("prod", "web", ":80:"), mkSlice("prod", "web", "w", "", 80, "10.0.0.5"),
		mkService("team", "api", ":80:"), mkSlice("team", "api", "a", "", 80, "10.0.0.9"),
		mkIngress("prod", "w", 1, withAnnotations("nginx.ingress.kubernetes.io/server-alias", "alias.example.com"),
			withRules(mkRule("w.example.com", prefix("/", "web", 80)))),
		mkIngress("team", "v", 2, withRules(mkRule("alias.example.com", prefix("/", "api", 80)))),
	)
	var c Compiler
	c.Compile(base)
	s := base
	s.Ingresses = s.Ingresses[:1:1] // v deleted
	fresh := Compile(s, Options{})
	incr := c.Compile(s)
	t.Logf("fresh: alias.example.com/ -> %s; incremental: -> %s", served(fresh.Table, "alias.example.com", "/"), served(incr.Table, "alias.example.com", "/"))
	require.Equal(t, served(fresh.Table, "alias.example.com", "/"), served(incr.Table, "alias.example.com", "/"))
	require.Equal(t, fresh.String(), incr.String())
}

// from-to-www-redirect, other direction: once the Ingress for
// www.w.example.com is deleted, www.w.example.com redirects to
// w.example.com.
func TestRecompileWWWTwinAfterHostDeleted(t *testing.T) {
	base := mkSnapshot(
		mkService("prod", "web", ":80:"), mkSlice("prod", "web", "w", "", 80, "10.0.0.5"),
		mkService("team", "api", ":80:"),
		mkIngress("prod", "w", 1, withAnnotations("nginx.ingress.kubernetes.io/from-to-www-redirect", "true"),
			withRules(mkRule("w.example.com", prefix("/", "web", 80)))),
		mkIngress("team", "v", 2, withRules(mkRule("www.w.example.com", prefix("/", "api", 80)))),
	)
	var c Compiler
	c.Compile(base)
	s := base
	s.Ingresses = s.Ingresses[:1:1] // v deleted
	fresh := Compile(s, Options{})
	incr := c.Compile(s)
	t.Logf("fresh has www twin: %v; incremental: %v", fresh.Table.VirtualHostByName("www.w.example.com") != nil, incr.Table.VirtualHostByName("www.w.example.com") != nil)
	require.Equal(t, fresh.String(), incr.String())
}

// Ingress prod/y lists x.example.com under spec.tls; Ingress prod/x
// serves x.example.com with no tls of its own, so x.example.com is a TLS
// host (SPEC §12: "any host listed under some claimed Ingress's
// spec.tls"). An edit of x alone keeps it one, as Compile does.
func TestRecompileKeepsTLSHostOfAnotherIngress(t *testing.T) {
	snap := func(xPaths ...string) Snapshot {
		x := mkIngress("prod", "x", 3, withRules(mkRule("x.example.com", prefix("/", "api", 80))))
		for _, p := range xPaths {
			x.Spec.Rules[0].HTTP.Paths = append(x.Spec.Rules[0].HTTP.Paths, prefix(p, "api", 80))
		}
		return mkSnapshot(
			mkService("prod", "api", ":80:"), mkSlice("prod", "api", "a", "", 80, "10.0.0.1"),
			mkService("prod", "web", ":80:"), mkSlice("prod", "web", "w", "", 80, "10.0.0.5"),
			mkIngress("prod", "y", 1, withRules(mkRule("y.example.com", prefix("/", "web", 80))),
				withTLS("s", "x.example.com", "y.example.com")),
			x,
			mkSecret("prod", "s", "a"),
		)
	}
	var c Compiler
	first := c.Compile(snap())
	require.True(t, first.Table.VirtualHostByName("x.example.com").TLS)

	s2 := snap("/new") // the owner of x adds a path
	fresh := Compile(s2, Options{})
	incr := c.Compile(s2)
	require.True(t, fresh.Table.VirtualHostByName("x.example.com").TLS, "fresh")
	require.True(t, incr.Table.VirtualHostByName("x.example.com").TLS, "incremental: x.example.com lost VirtualHost.TLS")
	require.Equal(t, fresh.Table.Digest(), incr.Table.Digest())
	require.Equal(t, fresh.String(), incr.String())
}

// With the ConfigMap's custom-http-errors, every location's error pages
// come from the global default backend, which the table lists while
// something uses it. Here it has no ready endpoints, so no host's
// fallback uses it: the first Ingress added makes it listed, and
// deleting the last one unlists it, in the incremental Compiler as in
// Compile.
func TestRecompileGlobalErrorBackendUse(t *testing.T) {
	opts := Options{DefaultBackend: &ServiceRef{Namespace: "e2e", Name: "errors", Port: "80"}, CustomHTTPErrors: []int{404, 503}}
	snap := func(names ...string) Snapshot {
		objs := []runtime.Object{mkService("e2e", "errors", ":8080:"), mkService("prod", "web", ":80:"), mkSlice("prod", "web", "w", "", 80, "10.0.0.5")}
		for i, n := range names {
			objs = append(objs, mkIngress("prod", n, int64(i+1), withRules(mkRule(n+".example.com", prefix("/", "web", 80)))))
		}
		return mkSnapshot(objs...)
	}
	c := Compiler{Options: opts}
	for i, s := range []Snapshot{snap(), snap("a"), snap("a", "b"), snap("b"), snap()} {
		fresh := Compile(s, opts)
		incr := c.Compile(s)
		require.Equal(t, fresh.String(), incr.String(), "step %d", i)
	}
}

// The catch-all's fallback is a rules-less Ingress's spec.defaultBackend,
// so no host uses the global default backend: Compile neither lists it
// nor warns about it. A change that reaches no Ingress (a Service no
// Ingress names) must not make the incremental Compiler list it, or warn
// that it is unavailable, because the small compile's catch-all lacks
// that Ingress.
func TestRecompileCatchAllKeepsGlobalDefaultUnused(t *testing.T) {
	for _, global := range []string{"fallback", "missing"} {
		t.Run(global, func(t *testing.T) {
			opts := Options{DefaultBackend: &ServiceRef{Namespace: "kube-system", Name: global, Port: "80"}}
			snap := func(unrelated ...runtime.Object) Snapshot {
				objs := []runtime.Object{
					mkService("kube-system", "fallback", ":80:"), mkSlice("kube-system", "fallback", "f", "", 80, "10.9.9.9"),
					mkService("prod", "web", ":80:"), mkSlice("prod", "web", "w", "", 80, "10.0.0.5"),
					mkIngress("prod", "bare", 1, withDefault("web", 80)),
				}
				return mkSnapshot(append(objs, unrelated...)...)
			}
			c := Compiler{Options: opts}
			for i, s := range []Snapshot{snap(), snap(mkService("prod", "unrelated", ":80:"))} {
				fresh := Compile(s, opts)
				incr := c.Compile(s)
				require.Equal(t, fresh.String(), incr.String(), "step %d", i)
			}
		})
	}
}
