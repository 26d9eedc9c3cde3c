package ramjet_test

import (
	"bytes"
	"encoding/json"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"ramjet.dev/ramjet/compile"
	"ramjet.dev/ramjet/router/routertest"
)

// TestCases runs every case file in testdata/cases through the real handler
// and compares each file's compiled tables with its golden rendering.
func TestCases(t *testing.T) {
	routertest.RunFiles(t, "testdata/cases")
}

// TestCasesOrderIndependent compiles every case with its objects shuffled
// and requires the same digest, warnings, table, claimed Ingresses and
// unclaimed summary (SPEC §15).
func TestCasesOrderIndependent(t *testing.T) {
	cases, err := routertest.LoadCases("testdata/cases")
	require.NoError(t, err)
	require.NotEmpty(t, cases)
	rng := rand.New(rand.NewPCG(1, 2))
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			want := compile.Compile(c.Objects, c.Options)
			for range 20 {
				got := compile.Compile(shuffled(rng, c.Objects), c.Options)
				require.Equal(t, want.Table.Digest(), got.Table.Digest())
				if d := cmp.Diff(want.Warnings, got.Warnings); d != "" {
					t.Fatalf("warnings depend on object order (-want +got):\n%s", d)
				}
				if d := cmp.Diff(want.Table.String(), got.Table.String()); d != "" {
					t.Fatalf("table depends on object order (-want +got):\n%s", d)
				}
				if d := cmp.Diff(want.Claimed, got.Claimed); d != "" {
					t.Fatalf("claimed Ingresses depend on object order (-want +got):\n%s", d)
				}
				if d := cmp.Diff(want.Unclaimed, got.Unclaimed); d != "" {
					t.Fatalf("unclaimed summary depends on object order (-want +got):\n%s", d)
				}
			}
		})
	}
}

func shuffled(rng *rand.Rand, s compile.Snapshot) compile.Snapshot {
	return compile.Snapshot{
		Ingresses:      shuffle(rng, s.Ingresses),
		IngressClasses: shuffle(rng, s.IngressClasses),
		Services:       shuffle(rng, s.Services),
		EndpointSlices: shuffle(rng, s.EndpointSlices),
		Secrets:        shuffle(rng, s.Secrets),
		ConfigMaps:     shuffle(rng, s.ConfigMaps),
	}
}

func shuffle[T any](rng *rand.Rand, in []T) []T {
	out := append([]T(nil), in...)
	rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// TestCasesBrokenIngressDegradesOnlyItself breaks each Ingress of every
// case in turn (nonsense annotation values, backends, paths, pathTypes,
// TLS Secrets, class) and requires that compiling neither panics nor
// changes any host block the Ingress had no part in (SPEC: one broken
// object degrades itself only).
func TestCasesBrokenIngressDegradesOnlyItself(t *testing.T) {
	cases, err := routertest.LoadCases("testdata/cases")
	require.NoError(t, err)
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			want := hostBlocks(compile.Compile(c.Objects, c.Options).Table.String())
			for i, ing := range c.Objects.Ingresses {
				if ing == nil {
					continue
				}
				shaped := shapedBy(t, ing)
				for _, b := range ingressBreakers {
					broken := ing.DeepCopy()
					b.apply(broken)
					s := c.Objects
					s.Ingresses = slices.Clone(s.Ingresses)
					s.Ingresses[i] = broken
					got := hostBlocks(compile.Compile(s, c.Options).Table.String())
					for header, block := range want {
						if shaped(header, block) {
							continue
						}
						if d := cmp.Diff(block, got[header]); d != "" {
							t.Errorf("Ingress %s/%s with %s changed %q (-want +got):\n%s", ing.Namespace, ing.Name, b.name, header, d)
						}
					}
				}
			}
		})
	}
}

// TestCasesBrokenObjectDegradesOnlyItsUsers does the same for each
// Service, EndpointSlice and Secret: nothing changes in a host block
// whose routes come from Ingresses that do not name it.
func TestCasesBrokenObjectDegradesOnlyItsUsers(t *testing.T) {
	cases, err := routertest.LoadCases("testdata/cases")
	require.NoError(t, err)
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			want := hostBlocks(compile.Compile(c.Objects, c.Options).Table.String())
			check := func(kind, namespace, name string, s compile.Snapshot) {
				t.Helper()
				got := hostBlocks(compile.Compile(s, c.Options).Table.String())
				users := usersOf(t, c.Objects, name)
				for header, block := range want {
					if usesAny(header, block, users, name) {
						continue
					}
					if d := cmp.Diff(block, got[header]); d != "" {
						t.Errorf("%s %s/%s broken changed %q (-want +got):\n%s", kind, namespace, name, header, d)
					}
				}
			}
			for i, svc := range c.Objects.Services {
				if svc == nil {
					continue
				}
				b := svc.DeepCopy()
				b.Spec.Type, b.Spec.ClusterIP, b.Spec.ExternalName = nonsense, nonsense, nonsense
				for j := range b.Spec.Ports {
					p := &b.Spec.Ports[j]
					p.Name, p.Port, p.Protocol, p.TargetPort = nonsense, -1, nonsense, intstr.FromString(nonsense)
				}
				s := c.Objects
				s.Services = slices.Clone(s.Services)
				s.Services[i] = b
				check("Service", svc.Namespace, svc.Name, s)
			}
			for i, sl := range c.Objects.EndpointSlices {
				if sl == nil {
					continue
				}
				b := sl.DeepCopy()
				b.AddressType = nonsense
				for j := range b.Endpoints {
					b.Endpoints[j].Addresses = []string{nonsense, "::ffff:10.0.0.1", "169.254.169.254"}
				}
				for j := range b.Ports {
					n, p := nonsense, int32(-1)
					b.Ports[j].Name, b.Ports[j].Port = &n, &p
				}
				s := c.Objects
				s.EndpointSlices = slices.Clone(s.EndpointSlices)
				s.EndpointSlices[i] = b
				check("EndpointSlice", sl.Namespace, sl.Labels[discoveryv1.LabelServiceName], s)
			}
			for i, sec := range c.Objects.Secrets {
				if sec == nil {
					continue
				}
				b := sec.DeepCopy()
				for k := range b.Data {
					b.Data[k] = []byte(nonsense)
				}
				s := c.Objects
				s.Secrets = slices.Clone(s.Secrets)
				s.Secrets[i] = b
				check("Secret", sec.Namespace, sec.Name, s)
			}
		})
	}
}

// usersOf returns "from Ingress ns/name " for each Ingress whose text
// names name: those that may use the object.
func usersOf(t *testing.T, s compile.Snapshot, name string) []string {
	var out []string
	for _, ing := range s.Ingresses {
		if ing == nil {
			continue
		}
		text, err := json.Marshal(ing)
		require.NoError(t, err)
		if bytes.Contains(text, []byte(name)) {
			out = append(out, "from Ingress "+ing.Namespace+"/"+ing.Name+" ")
		}
	}
	return out
}

// usesAny reports whether a host block holds a route of one of users, or
// names name at all (a backend, a Secret).
func usesAny(header, block string, users []string, name string) bool {
	if strings.HasPrefix(header, "host * ") || strings.Contains(block, name) {
		return true
	}
	for _, u := range users {
		if strings.Contains(block, u) {
			return true
		}
	}
	return false
}

const nonsense = "no(n)sense{"

var ingressBreakers = []struct {
	name  string
	apply func(*networkingv1.Ingress)
}{
	{"nonsense annotation values", func(ing *networkingv1.Ingress) {
		for i, k := range slices.Sorted(maps.Keys(ing.Annotations)) {
			ing.Annotations[k] = []string{nonsense, "-99999999999999999999999"}[i%2]
		}
	}},
	{"nonsense backends", func(ing *networkingv1.Ingress) {
		i := 0
		forEachBackend(ing, func(b *networkingv1.IngressBackend) {
			if i++; i%2 == 0 {
				*b = networkingv1.IngressBackend{}
				return
			}
			b.Service = &networkingv1.IngressServiceBackend{Name: nonsense, Port: networkingv1.ServiceBackendPort{Name: nonsense, Number: -1}}
		})
	}},
	{"nonsense paths", func(ing *networkingv1.Ingress) {
		for i := range ing.Spec.Rules {
			if h := ing.Spec.Rules[i].HTTP; h != nil {
				for j := range h.Paths {
					pt := networkingv1.PathType(nonsense)
					h.Paths[j].Path, h.Paths[j].PathType = nonsense, &pt
				}
			}
		}
	}},
	{"nonsense TLS", func(ing *networkingv1.Ingress) {
		for i := range ing.Spec.TLS {
			ing.Spec.TLS[i].SecretName = nonsense
		}
	}},
	{"nonsense class", func(ing *networkingv1.Ingress) {
		name := nonsense
		ing.Spec.IngressClassName = &name
	}},
}

func forEachBackend(ing *networkingv1.Ingress, f func(*networkingv1.IngressBackend)) {
	if ing.Spec.DefaultBackend != nil {
		f(ing.Spec.DefaultBackend)
	}
	for i := range ing.Spec.Rules {
		if h := ing.Spec.Rules[i].HTTP; h != nil {
			for j := range h.Paths {
				f(&h.Paths[j].Backend)
			}
		}
	}
}

// shapedBy reports whether ing may shape a host block: every block when
// it has a default backend or a rule without a host; else a block that
// names a host (or its www twin, or a wildcard's domain) appearing
// anywhere in ing, or a backend of a Service ing names, whose settings
// ing may decide (SPEC §8).
func shapedBy(t *testing.T, ing *networkingv1.Ingress) func(header, block string) bool {
	text, err := json.Marshal(ing)
	require.NoError(t, err)
	text = bytes.ToLower(text)
	everywhere := ing.Spec.DefaultBackend != nil
	for _, r := range ing.Spec.Rules {
		everywhere = everywhere || r.Host == ""
	}
	var services []string
	forEachBackend(ing.DeepCopy(), func(b *networkingv1.IngressBackend) {
		if b.Service != nil {
			services = append(services, ing.Namespace+"/"+b.Service.Name+":")
		}
	})
	return func(header, block string) bool {
		if everywhere || strings.HasPrefix(header, "host * ") {
			return true
		}
		for _, f := range strings.Fields(header + "\n" + block) {
			name := strings.ToLower(strings.TrimPrefix(f, "www."))
			if i := strings.IndexByte(name, '.'); strings.HasPrefix(name, "*") && i > 0 {
				name = name[i+1:]
			}
			if strings.Contains(name, ".") && bytes.Contains(text, []byte(name)) {
				return true
			}
			for _, svc := range services {
				if strings.HasPrefix(f, svc) {
					return true
				}
			}
		}
		return false
	}
}

// hostBlocks splits a table's text into its host blocks by header line.
func hostBlocks(text string) map[string]string {
	out := map[string]string{}
	header := ""
	for line := range strings.Lines(text) {
		switch {
		case strings.HasPrefix(line, "host "):
			header = strings.TrimSuffix(line, "\n")
			out[header] = ""
		case header != "" && strings.HasPrefix(line, " "):
			out[header] += line
		default:
			header = ""
		}
	}
	return out
}
