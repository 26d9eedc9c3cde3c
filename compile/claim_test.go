package compile

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"ramjet.dev/ramjet/classify"
)

func TestClaimWarningsAndInvisibility(t *testing.T) {
	svc := mkService("prod", "web", ":80:")
	sl := mkSlice("prod", "web", "web-1", "", 80, "10.0.0.1")
	s := mkSnapshot(
		mkClass("nginx", "k8s.io/ingress-nginx"),
		svc, sl,
		// Ours by class name.
		mkIngress("prod", "ours", 1, withRules(mkRule("ours.example.com", prefix("/", "web", 80)))),
		// Another controller's: invisible, no warning.
		mkIngress("prod", "theirs", 1, withClassName("nginx"), withRules(mkRule("theirs.example.com", prefix("/", "web", 80)))),
		// A dangling class: invisible and ClassNotFound.
		mkIngress("prod", "typo", 1, withClassName("ramjte"), withRules(mkRule("typo.example.com", prefix("/", "web", 80)))),
		// The annotation is decisive over the class name: ClassConflict, but served.
		mkIngress("prod", "both", 1, withClassName("nginx"), withAnnotations("kubernetes.io/ingress.class", "ramjet"),
			withRules(mkRule("both.example.com", prefix("/", "web", 80)))),
		// The annotation names another class: invisible, even with our class name.
		mkIngress("prod", "annotated-away", 1, withAnnotations("kubernetes.io/ingress.class", "nginx"),
			withRules(mkRule("away.example.com", prefix("/", "web", 80)))),
		// No class at all and no default class: invisible.
		mkIngress("prod", "classless", 1, withClassName(""), withRules(mkRule("classless.example.com", prefix("/", "web", 80)))),
	)
	tab, ws := compileOK(t, s, Options{})

	want := []short{
		{ClassConflict, "Ingress prod/both", "spec.ingressClassName"},
		{ClassNotFound, "Ingress prod/typo", "spec.ingressClassName"},
	}
	if diff := cmp.Diff(want, shorten(ws)); diff != "" {
		t.Errorf("warnings (-want +got):\n%s\n%s", diff, warningText(ws))
	}
	for host, want := range map[string]string{
		"ours.example.com":      "prod/web:80",
		"both.example.com":      "prod/web:80",
		"theirs.example.com":    "404",
		"typo.example.com":      "404",
		"away.example.com":      "404",
		"classless.example.com": "404",
	} {
		require.Equal(t, want, served(tab, host, "/"), host)
	}
	for _, name := range []string{"theirs.example.com", "typo.example.com", "away.example.com", "classless.example.com"} {
		require.Nil(t, tab.VirtualHostByName(name), "an unclaimed Ingress creates no host %s", name)
	}
}

func TestClaimOptions(t *testing.T) {
	classless := mkIngress("prod", "classless", 1, withClassName(""), withRules(mkRule("a.example.com", prefix("/", "web", 80))))
	annotated := mkIngress("prod", "annotated", 1, withClassName(""), withAnnotations("kubernetes.io/ingress.class", "edge"),
		withRules(mkRule("b.example.com", prefix("/", "web", 80))))
	custom := mkIngress("prod", "custom", 1, withClassName("edge-class"), withRules(mkRule("c.example.com", prefix("/", "web", 80))))
	defaultClass := mkClass("ramjet", DefaultControllerName)
	defaultClass.Annotations = map[string]string{networkingv1.AnnotationIsDefaultIngressClass: "true"}

	tests := []struct {
		name    string
		opts    Options
		classes []*networkingv1.IngressClass
		want    map[string]string
	}{
		{name: "defaults", opts: Options{},
			want: map[string]string{"a.example.com": "404", "b.example.com": "404", "c.example.com": "404"}},
		{name: "watch without class", opts: Options{WatchIngressWithoutClass: true},
			want: map[string]string{"a.example.com": "prod/web:80", "b.example.com": "404", "c.example.com": "404"}},
		{name: "our class is default", classes: []*networkingv1.IngressClass{defaultClass},
			want: map[string]string{"a.example.com": "prod/web:80", "b.example.com": "404", "c.example.com": "404"}},
		{name: "custom class and controller",
			opts:    Options{IngressClass: "edge", ControllerName: "example.com/edge"},
			classes: []*networkingv1.IngressClass{mkClass("edge-class", "example.com/edge")},
			want:    map[string]string{"a.example.com": "404", "b.example.com": "prod/web:80", "c.example.com": "prod/web:80"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mkSnapshot(classless, annotated, custom, mkService("prod", "web", ":80:"), mkSlice("prod", "web", "w", "", 80, "10.0.0.1"))
			s.IngressClasses = tt.classes
			tab, _ := compileOK(t, s, tt.opts)
			for host, want := range tt.want {
				require.Equal(t, want, served(tab, host, "/x"), host)
			}
		})
	}
}

// Ingress order (SPEC §7): creationTimestamp ascending, ties by
// namespace/name descending. The winner of a route conflict shows it.
func TestIngressOrder(t *testing.T) {
	tests := []struct {
		name   string
		a, b   *networkingv1.Ingress
		winner string
	}{
		{"older wins", mkIngress("prod", "z", 1), mkIngress("prod", "a", 2), "prod/z"},
		{"older wins regardless of name", mkIngress("prod", "a", 1), mkIngress("prod", "z", 2), "prod/a"},
		{"tie: name descending", mkIngress("prod", "a", 5), mkIngress("prod", "b", 5), "prod/b"},
		{"tie: namespace descending", mkIngress("aaa", "x", 5), mkIngress("zzz", "x", 5), "zzz/x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var objs []runtime.Object
			for _, ing := range []*networkingv1.Ingress{tt.a, tt.b} {
				// Each Ingress routes to a Service named after it.
				withRules(mkRule("shop.example.com", prefix("/api", ing.Name, 80)))(ing)
				objs = append(objs, ing, mkService(ing.Namespace, ing.Name, ":80:"),
					mkSlice(ing.Namespace, ing.Name, "s", "", 80, "10.0.0.1"))
			}
			tab, ws := compileOK(t, mkSnapshot(objs...), Options{})
			require.Equal(t, tt.winner+":80", served(tab, "shop.example.com", "/api"))
			w := findWarning(t, ws, RouteConflict, "spec.rules[0].http.paths[0]")
			require.Equal(t, "Ingress "+tt.winner+" spec.rules[0].http.paths[0]", w.WinnerText())
			require.NotEqual(t, "Ingress "+tt.winner, w.Object.String())
		})
	}
}

func TestDefaultsAgreeWithClassify(t *testing.T) {
	require.Equal(t, classify.DefaultIngressClass, DefaultIngressClass)
	require.Equal(t, classify.DefaultControllerName, DefaultControllerName)
}

// The result names the claimed Ingresses in Ingress order, so a controller
// gives status to exactly those without deciding claims a second time.
func TestResultClaimed(t *testing.T) {
	s := mkSnapshot(
		mkService("prod", "web", ":80:"),
		mkIngress("prod", "newer", 2, withRules(mkRule("a.example.com", prefix("/", "web", 80)))),
		mkIngress("prod", "other-class", 1, withClassName("nginx")),
		mkIngress("prod", "b-tie", 1),
		mkIngress("prod", "a-tie", 1),
		mkIngress("dev", "legacy", 3, withAnnotations("kubernetes.io/ingress.class", "ramjet")),
	)
	res := Compile(s, Options{})
	ing := func(ns, name string) Ref { return Ref{Kind: "Ingress", Namespace: ns, Name: name} }
	require.Equal(t, []Ref{ing("prod", "b-tie"), ing("prod", "a-tie"), ing("prod", "newer"), ing("dev", "legacy")}, res.Claimed)
	require.Equal(t, []short{{ClassNotFound, "Ingress prod/other-class", "spec.ingressClassName"}}, shorten(res.Warnings))

	// String is the golden format: the table, then a line per warning.
	require.Equal(t, res.Table.String()+"warning "+res.Warnings[0].String()+"\n", res.String())
	var b strings.Builder
	require.NoError(t, res.WriteText(&b))
	require.Equal(t, res.String(), b.String())
}

func TestRefString(t *testing.T) {
	require.Equal(t, "Ingress prod/shop", Ref{Kind: "Ingress", Namespace: "prod", Name: "shop"}.String())
	require.Equal(t, "IngressClass ramjet", Ref{Kind: "IngressClass", Name: "ramjet"}.String())
	require.Equal(t, "", Ref{}.String())
	w := Warning{Reason: RouteConflict, Object: Ref{Kind: "Ingress", Namespace: "prod", Name: "b"}, Field: "spec.rules[0]", Message: "lost",
		Winner: Ref{Kind: "Ingress", Namespace: "prod", Name: "a"}, WinnerField: "spec.rules[1]"}
	require.Equal(t, "RouteConflict Ingress prod/b spec.rules[0]: lost (winner: Ingress prod/a spec.rules[1])", w.String())
}

func TestSummarizeUnclaimed(t *testing.T) {
	s := mkSnapshot(
		mkClass("nginx", "k8s.io/ingress-nginx"),
		mkIngress("prod", "a", 1, withClassName("nginx")),
		mkIngress("prod", "b", 1, withClassName("nginx")),
		mkIngress("prod", "c", 1, withAnnotations("kubernetes.io/ingress.class", "nginx")),
		mkIngress("prod", "d", 1, withClassName("")),
		mkIngress("prod", "e", 1, withClassName("gone")),
		mkIngress("prod", "ours", 1, withAnnotations("kubernetes.io/ingress.class", "ramjet")),
	)
	u := SummarizeUnclaimed(s.Ingresses, s.IngressClasses, Options{})
	require.Equal(t, 6, u.Read)
	require.Equal(t, 1, u.Claimed)
	require.Equal(t, []UnclaimedGroup{
		{ClassName: "nginx", Controller: "k8s.io/ingress-nginx", Count: 2, Example: ingressRef("prod", "a"), Option: OptionControllerName, Value: "k8s.io/ingress-nginx"},
		{Count: 1, Example: ingressRef("prod", "d"), Option: OptionWatchIngressWithoutClass, Value: "true"},
		{ClassName: "gone", Count: 1, Example: ingressRef("prod", "e")},
		{Annotation: "nginx", Count: 1, Example: ingressRef("prod", "c"), Option: OptionIngressClass, Value: "nginx"},
	}, u.Groups)
	require.Equal(t, `5 of 6 Ingresses read are not claimed: `+
		`2 with ingressClassName "nginx" (IngressClass of controller "k8s.io/ingress-nginx"), e.g. prod/a: --controller-class=k8s.io/ingress-nginx claims them; `+
		`1 naming no class, e.g. prod/d: --watch-ingress-without-class claims them; `+
		`1 with ingressClassName "gone" (no such IngressClass), e.g. prod/e: an IngressClass "gone" with spec.controller "ramjet.dev/ingress" claims them; `+
		`1 annotated kubernetes.io/ingress.class="nginx", e.g. prod/c: --ingress-class=nginx claims them`,
		u.Describe(FlagSpelling))
	require.Equal(t, u, Compile(s, Options{}).Unclaimed, "Compile summarises its snapshot the same way")
	require.Contains(t, u.Describe(CaseSpelling), "options.controllerName: k8s.io/ingress-nginx claims them")

	none := SummarizeUnclaimed(s.Ingresses[:4], s.IngressClasses, Options{})
	require.Contains(t, none.Describe(FlagSpelling), "4 of 4 Ingresses read are not claimed (nothing is served from Ingresses)")
	all := SummarizeUnclaimed(s.Ingresses[5:], s.IngressClasses, Options{})
	require.True(t, all.All())
	require.Empty(t, all.Describe(FlagSpelling))
	require.True(t, SummarizeUnclaimed(nil, nil, Options{}).All())
}

// TestCompareJoined holds compareJoined to comparing the joined strings,
// over parts that are prefixes of each other and hold "/" themselves.
func TestCompareJoined(t *testing.T) {
	parts := []string{"", "a", "a-b", "a/b", "ab", "a/", "b", "a.", "-", "/", "aa", "a0"}
	for _, a1 := range parts {
		for _, a2 := range parts {
			for _, b1 := range parts {
				for _, b2 := range parts {
					want := strings.Compare(a1+"/"+a2, b1+"/"+b2)
					if got := compareJoined(a1, a2, b1, b2); got != want {
						t.Fatalf("compareJoined(%q, %q, %q, %q) = %d, want %d", a1, a2, b1, b2, got, want)
					}
				}
			}
		}
	}
}

// TestJoinedPrefix holds that prefixes that differ order namespace/name
// as the joined strings do.
func TestJoinedPrefix(t *testing.T) {
	parts := []string{"", "a", "a-b", "a/b", "ab", "a/", "b", "a\x00", "\x00", "abcdefgh", "abcdefg", "abcdefghi", "abcdefgh\x00", "zz\xff", "ns-1", "ns-10"}
	for _, a1 := range parts {
		for _, a2 := range parts {
			for _, b1 := range parts {
				for _, b2 := range parts {
					pa, pb := joinedPrefix(a1, a2), joinedPrefix(b1, b2)
					if pa == pb {
						continue
					}
					got := 1
					if pa < pb {
						got = -1
					}
					if want := strings.Compare(a1+"/"+a2, b1+"/"+b2); got != want {
						t.Fatalf("joinedPrefix orders %q/%q and %q/%q %d, want %d", a1, a2, b1, b2, got, want)
					}
				}
			}
		}
	}
}

// An Ingress annotated kubernetes.io/ingress.class="" and one naming no
// class are two groups: only the second is claimed by
// watch-ingress-without-class. Neither the groups nor their order depend
// on the order Ingresses and IngressClasses are read in, duplicate class
// names included.
func TestSummarizeUnclaimedOrderIndependent(t *testing.T) {
	ings := []*networkingv1.Ingress{
		mkIngress("prod", "empty-annotation", 1, withClassName(""), withAnnotations("kubernetes.io/ingress.class", "")),
		mkIngress("prod", "classless", 1, withClassName("")),
		mkIngress("prod", "dup", 1, withClassName("dup")),
	}
	classes := []*networkingv1.IngressClass{mkClass("dup", "example.com/a"), mkClass("dup", "example.com/b")}
	want := SummarizeUnclaimed(ings, classes, Options{})
	require.Len(t, want.Groups, 3)
	for _, g := range want.Groups {
		if g.Example.Name == "empty-annotation" {
			require.Equal(t, OptionIngressClass, g.Option)
		}
		if g.Example.Name == "classless" {
			require.Equal(t, OptionWatchIngressWithoutClass, g.Option)
		}
	}
	reversed := func(s []*networkingv1.Ingress) []*networkingv1.Ingress {
		return []*networkingv1.Ingress{s[2], s[1], s[0]}
	}
	got := SummarizeUnclaimed(reversed(ings), []*networkingv1.IngressClass{classes[1], classes[0]}, Options{})
	require.Equal(t, want, got)
	snap := Snapshot{Ingresses: reversed(ings), IngressClasses: []*networkingv1.IngressClass{classes[1], classes[0]}}
	require.Equal(t, want, Compile(snap, Options{}).Unclaimed)
}
