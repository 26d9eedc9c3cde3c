package compile

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// richSnapshot exercises most of the build: conflicts, regexes, default
// backends, TLS, annotations, broken references and Ingress-order ties.
func richSnapshot() Snapshot {
	return mkSnapshot(
		mkClass("nginx", "k8s.io/ingress-nginx"),
		mkService("prod", "web", "http:80:8080"), mkSlice("prod", "web", "web-1", "http", 8080, "10.0.0.2", "10.0.0.1"),
		mkSlice("prod", "web", "web-2", "http", 8080, "10.0.0.3", "!10.0.0.4", "fd00::1"),
		mkService("prod", "api", "grpc:9000:"), mkSlice("prod", "api", "api-1", "grpc", 9000, "10.0.1.1"),
		mkService("prod", "empty", ":80:"),
		mkExternalName("prod", "ext"),
		mkService("kube-system", "fallback", ":80:"), mkSlice("kube-system", "fallback", "f", "", 80, "10.9.9.9"),
		mkSecret("prod", "shop-tls", "a"), mkSecret("prod", "www-tls", "b"),
		mkIngress("prod", "shop", 100, withTLS("shop-tls", "shop.example.com"), withDefault("web", "http"),
			withAnnotations(NginxPrefix+"proxy-body-size", "1m"),
			withRules(mkRule("shop.example.com", prefix("/", "web", 80), exact("/healthz", "web", 80), regex("/api/v[0-9]+/.*", "api", 9000)))),
		mkIngress("prod", "api", 100, withAnnotations(NginxPrefix+"backend-protocol", "GRPC"),
			withRules(mkRule("shop.example.com", prefix("/api/", "api", "grpc"), regex("^/api/v[0-9]+/.*", "api", 9000)),
				mkRule("*.example.com", prefix("/", "api", 9000)))),
		mkIngress("prod", "zz-same-time", 100, withRules(mkRule("shop.example.com", prefix("/api", "web", 80)))),
		mkIngress("prod", "www", 50, withTLS("www-tls", "www.example.com", "shop.example.com"),
			withRules(mkRule("www.example.com", prefix("/", "web", 80), prefix("/missing", "ghost", 80), prefix("/ext", "ext", 80)),
				mkRule("BAD.example.com", prefix("/", "web", 80)))),
		mkIngress("prod", "catch-all-1", 10, withDefault("empty", 80)),
		mkIngress("prod", "catch-all-2", 10, withDefault("web", 80)),
		mkIngress("prod", "paths", 200, withRules(mkRule("", mkPath("", "/nopathtype", "web", 80), mkPath("Prefix", "nope", "web", 80),
			mkPath("Prefix", "/static", "", nil), regex("/(", "web", 80)))),
		mkIngress("prod", "other-class", 1, withClassName("nginx"), withRules(mkRule("nginx.example.com", prefix("/", "web", 80)))),
		mkIngress("prod", "typo", 1, withClassName("nginxx"), withRules(mkRule("typo.example.com", prefix("/", "web", 80)))),
	)
}

func tlsHeavySnapshot() Snapshot {
	var objs []runtime.Object
	for i, id := range []string{"a", "b", "c"} {
		name := string(rune('a' + i))
		objs = append(objs, mkSecret("prod", name, id),
			mkIngress("prod", "ing-"+name, 7, withTLS(name, "shop.example.com", name+".example.com"), withTLS("missing-"+name, "m.example.com"),
				withRules(mkRule(name+".example.com", prefix("/", "svc-"+name, 80)), mkRule("shop.example.com", exact("/"+name, "svc-"+name, 80)))),
			mkService("prod", "svc-"+name, ":80:"), mkSlice("prod", "svc-"+name, "s1", "", 80, "10.0.0.1"), mkSlice("prod", "svc-"+name, "s2", "", 80, "10.0.0.1"))
	}
	return mkSnapshot(objs...)
}

func shuffled(r *rand.Rand, s Snapshot) Snapshot {
	out := Snapshot{
		Ingresses:      append(s.Ingresses[:0:0], s.Ingresses...),
		IngressClasses: append(s.IngressClasses[:0:0], s.IngressClasses...),
		Services:       append(s.Services[:0:0], s.Services...),
		EndpointSlices: append(s.EndpointSlices[:0:0], s.EndpointSlices...),
		Secrets:        append(s.Secrets[:0:0], s.Secrets...),
	}
	r.Shuffle(len(out.Ingresses), func(i, j int) { out.Ingresses[i], out.Ingresses[j] = out.Ingresses[j], out.Ingresses[i] })
	r.Shuffle(len(out.IngressClasses), func(i, j int) {
		out.IngressClasses[i], out.IngressClasses[j] = out.IngressClasses[j], out.IngressClasses[i]
	})
	r.Shuffle(len(out.Services), func(i, j int) { out.Services[i], out.Services[j] = out.Services[j], out.Services[i] })
	r.Shuffle(len(out.EndpointSlices), func(i, j int) {
		out.EndpointSlices[i], out.EndpointSlices[j] = out.EndpointSlices[j], out.EndpointSlices[i]
	})
	r.Shuffle(len(out.Secrets), func(i, j int) { out.Secrets[i], out.Secrets[j] = out.Secrets[j], out.Secrets[i] })
	return out
}

func TestDeterministic(t *testing.T) {
	global := &ServiceRef{Namespace: "kube-system", Name: "fallback", Port: "80"}
	snapshots := map[string]Snapshot{
		"rich":      richSnapshot(),
		"tls-heavy": tlsHeavySnapshot(),
		"duplicates": func() Snapshot {
			s := richSnapshot()
			// The same names twice with different contents: the choice must not
			// depend on order.
			s.Services = append(s.Services, mkService("prod", "web", "http:80:9090"))
			s.Ingresses = append(s.Ingresses, mkIngress("prod", "shop", 100, withRules(mkRule("dup.example.com", prefix("/", "web", 80)))))
			s.Secrets = append(s.Secrets, mkSecret("prod", "shop-tls", "c"))
			s.IngressClasses = append(s.IngressClasses, mkClass("nginx", DefaultControllerName))
			s.Ingresses = append(s.Ingresses, nil)
			s.Services = append(s.Services, nil)
			return s
		}(),
	}
	r := rand.New(rand.NewPCG(1, 2))
	for name, s := range snapshots {
		t.Run(name, func(t *testing.T) {
			for _, o := range []Options{{}, {DefaultBackend: global, DisableSSLRedirect: true}} {
				ref, refWarnings := compileOK(t, s, o)
				refText := ref.String()
				require.NotEmpty(t, refWarnings)
				for i := range 50 {
					got, ws := compileTable(shuffled(r, s), o)
					require.Equal(t, ref.Digest(), got.Digest(), "shuffle %d", i)
					if diff := cmp.Diff(refWarnings, ws); diff != "" {
						t.Fatalf("shuffle %d: warnings (-want +got):\n%s", i, diff)
					}
					if diff := cmp.Diff(refText, got.String()); diff != "" {
						t.Fatalf("shuffle %d: table (-want +got):\n%s", i, diff)
					}
				}
			}
		})
	}
}

func TestWarningsSorted(t *testing.T) {
	_, ws := compileOK(t, richSnapshot(), Options{})
	require.Greater(t, len(ws), 5)
	for i := 1; i < len(ws); i++ {
		require.Negative(t, compareWarnings(ws[i-1], ws[i]), "%v before %v", ws[i-1], ws[i])
	}
}

// The digest covers what affects a response and nothing else.
func TestDigest(t *testing.T) {
	base := func() Snapshot { return richSnapshot() }
	ref, _ := compileTable(base(), Options{})
	again, _ := compileTable(base(), Options{})
	require.Equal(t, ref.Digest(), again.Digest())
	require.Len(t, ref.Digest(), 64)

	changes := map[string]struct {
		edit func(*Snapshot, *Options)
		same bool
	}{
		"endpoint added": {edit: func(s *Snapshot, _ *Options) {
			s.EndpointSlices = append(s.EndpointSlices, mkSlice("prod", "web", "web-3", "http", 8080, "10.0.0.77"))
		}},
		"endpoint not ready": {edit: func(s *Snapshot, _ *Options) {
			for _, sl := range s.EndpointSlices {
				if sl.Name == "api-1" {
					sl.Endpoints[0].Conditions.Ready = ptr(false)
				}
			}
		}},
		"protocol": {edit: func(s *Snapshot, _ *Options) {
			for _, ing := range s.Ingresses {
				if ing.Name == "www" { // the oldest Ingress serving prod/web:80
					withAnnotations(NginxPrefix+"backend-protocol", "HTTPS")(ing)
				}
			}
		}},
		"ssl-redirect annotation": {edit: func(s *Snapshot, _ *Options) {
			for _, ing := range s.Ingresses {
				if ing.Name == "www" {
					withAnnotations(NativePrefix+"ssl-redirect", "false")(ing)
				}
			}
		}},
		"certificate": {edit: func(s *Snapshot, _ *Options) {
			for i, sec := range s.Secrets {
				if sec.Name == "www-tls" {
					s.Secrets[i] = mkSecret("prod", "www-tls", "c")
				}
			}
		}},
		"tls host": {edit: func(s *Snapshot, _ *Options) {
			for _, ing := range s.Ingresses {
				if ing.Name == "shop" {
					ing.Spec.TLS = append(ing.Spec.TLS, ing.Spec.TLS[0])
					ing.Spec.TLS[1].Hosts = []string{"*.example.com"}
				}
			}
		}},
		"route": {edit: func(s *Snapshot, _ *Options) {
			s.Ingresses = append(s.Ingresses, mkIngress("prod", "more", 300, withRules(mkRule("more.example.com", exact("/", "web", 80)))))
		}},
		"service port": {edit: func(s *Snapshot, _ *Options) {
			for i, svc := range s.Services {
				if svc.Name == "web" {
					s.Services[i] = mkService("prod", "web", "http:81:8080")
				}
			}
		}},
		"option default backend": {edit: func(_ *Snapshot, o *Options) {
			o.DefaultBackend = &ServiceRef{Namespace: "kube-system", Name: "fallback", Port: "80"}
		}},
		"option ssl redirect":   {edit: func(_ *Snapshot, o *Options) { o.DisableSSLRedirect = true }},
		"option ingress class":  {edit: func(_ *Snapshot, o *Options) { o.IngressClass = "edge" }},
		"option watch no class": {edit: func(_ *Snapshot, o *Options) { o.WatchIngressWithoutClass = true }},
		"unrelated secret": {same: true, edit: func(s *Snapshot, _ *Options) {
			s.Secrets = append(s.Secrets, &corev1.Secret{})
		}},
		"another controller's Ingress": {same: true, edit: func(s *Snapshot, _ *Options) {
			s.Ingresses = append(s.Ingresses, mkIngress("prod", "nginx-2", 1, withClassName("nginx"),
				withRules(mkRule("z.example.com", prefix("/", "web", 80)))))
		}},
		"a warning only": {same: true, edit: func(s *Snapshot, _ *Options) {
			for _, ing := range s.Ingresses {
				if ing.Name == "shop" {
					ing.Annotations[NginxPrefix+"http2-push-preload"] = "true"
				}
			}
		}},
	}
	for name, c := range changes {
		t.Run(name, func(t *testing.T) {
			s, o := base(), Options{}
			c.edit(&s, &o)
			got, _ := compileTable(s, o)
			if c.same {
				require.Equal(t, ref.Digest(), got.Digest())
			} else {
				require.NotEqual(t, ref.Digest(), got.Digest())
			}
		})
	}
}

// Compiling reads the snapshot and never writes it (SPEC: pure).
func TestCompileDoesNotModifyInput(t *testing.T) {
	s := richSnapshot()
	before := deepCopySnapshot(s)
	compileOK(t, s, Options{DefaultBackend: &ServiceRef{Namespace: "kube-system", Name: "fallback", Port: "80"}})
	require.True(t, reflect.DeepEqual(before, s), "the snapshot changed")
}

func deepCopySnapshot(s Snapshot) Snapshot {
	var out Snapshot
	for _, o := range s.Ingresses {
		out.Ingresses = append(out.Ingresses, o.DeepCopy())
	}
	for _, o := range s.IngressClasses {
		out.IngressClasses = append(out.IngressClasses, o.DeepCopy())
	}
	for _, o := range s.Services {
		out.Services = append(out.Services, o.DeepCopy())
	}
	for _, o := range s.EndpointSlices {
		out.EndpointSlices = append(out.EndpointSlices, o.DeepCopy())
	}
	for _, o := range s.Secrets {
		out.Secrets = append(out.Secrets, o.DeepCopy())
	}
	return out
}

// A nil entry in the snapshot is skipped, here too when a warning is rated
// with its Ingress's annotations: compiling never fails as a whole.
func TestNilIngressBesideUnsupportedAnnotation(t *testing.T) {
	s := mkSnapshot(mkService("prod", "web", ":80:"), mkSlice("prod", "web", "w", "", 80, "10.0.0.1"),
		mkIngress("prod", "a", 1, withAnnotations(NginxPrefix+"http2-push-preload", "true"),
			withRules(mkRule("a.example.com", prefix("/", "web", 80)))))
	s.Ingresses = append([]*networkingv1.Ingress{nil}, s.Ingresses...)
	res := Compile(s, Options{})
	require.Equal(t, "prod/web:80", served(res.Table, "a.example.com", "/"))
	w := findWarning(t, res.Warnings, AnnotationUnsupported, "metadata.annotations["+NginxPrefix+"http2-push-preload]")
	require.Equal(t, FeatureMissing, w.Severity())
}

// Two copies of one Ingress (a folder of manifests can hold them) are
// compiled as the copy claimIngresses keeps, whatever their order, and
// its warnings are rated with that copy's annotations: a severity is part
// of the warning, so it must not follow the copy read last.
func TestDuplicateIngressRatedAsKept(t *testing.T) {
	copyOf := func(tracing string) *networkingv1.Ingress {
		return mkIngress("prod", "dup", 1, withAnnotations(NginxPrefix+"enable-opentracing", tracing),
			withRules(mkRule("dup.example.com", prefix("/", "web", 80))))
	}
	a, b := copyOf("false"), copyOf("true")
	base := mkSnapshot(mkService("prod", "web", ":80:"), mkSlice("prod", "web", "w", "", 80, "10.0.0.1"))
	ab, ba := base, base
	ab.Ingresses = []*networkingv1.Ingress{a, b}
	ba.Ingresses = []*networkingv1.Ingress{b, a}
	want := Compile(ab, Options{}).Warnings
	require.NotEmpty(t, want)
	if diff := cmp.Diff(want, Compile(ba, Options{}).Warnings); diff != "" {
		t.Fatalf("warnings depend on the order of the copies (-[a b] +[b a]):\n%s", diff)
	}
}

// An Ingress deleted and created again under another name, its spec
// unchanged: where its locations send their error pages to a backend,
// that backend is told the Ingress's namespace and name (X-Namespace,
// X-Ingress-Name), so the table must be published again; elsewhere the
// name reaches no answer and the digest stays.
func TestDigestOfRenamedIngress(t *testing.T) {
	snapshot := func(name string, annotations ...string) Snapshot {
		return mkSnapshot(
			mkClass("ramjet", DefaultControllerName),
			mkService("prod", "web", ":80:8080"), mkSlice("prod", "web", "web-1", "", 8080, "10.0.0.1"),
			mkService("prod", "errors", ":80:8080"), mkSlice("prod", "errors", "errors-1", "", 8080, "10.0.0.2"),
			mkIngress("prod", name, 100, withAnnotations(annotations...),
				withRules(mkRule("shop.example.com", prefix("/", "web", 80)))),
		)
	}
	errorPages := []string{NginxPrefix + "custom-http-errors", "503", NginxPrefix + "default-backend", "errors"}
	for _, tc := range []struct {
		name        string
		annotations []string
		same        bool
	}{
		{name: "error pages to a backend", annotations: errorPages},
		{name: "no error pages", same: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before, _ := compileTable(snapshot("shop", tc.annotations...), Options{})
			after, _ := compileTable(snapshot("shop-v2", tc.annotations...), Options{})
			require.Equal(t, tc.same, before.Digest() == after.Digest(), "digest %s, then %s", before.Digest(), after.Digest())
		})
	}
}
