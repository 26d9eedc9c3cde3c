package classify

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func class(name, controller string, isDefault string) *networkingv1.IngressClass {
	ic := &networkingv1.IngressClass{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       networkingv1.IngressClassSpec{Controller: controller},
	}
	if isDefault != "" {
		ic.Annotations = map[string]string{networkingv1.AnnotationIsDefaultIngressClass: isDefault}
	}
	return ic
}

// ing builds an Ingress; annotation "-" means the class annotation is absent,
// className "-" means spec.ingressClassName is nil.
func ing(name, annotation, className string) *networkingv1.Ingress {
	i := &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Namespace: "prod", Name: name}}
	if annotation != "-" {
		i.Annotations = map[string]string{AnnotationIngressClass: annotation}
	}
	if className != "-" {
		i.Spec.IngressClassName = &className
	}
	return i
}

func TestDecide(t *testing.T) {
	const ours, theirs = DefaultControllerName, "k8s.io/ingress-nginx"
	standard := []*networkingv1.IngressClass{
		class("ramjet", ours, ""),
		class("ramjet-internal", ours, ""),
		class("nginx", theirs, ""),
	}
	tests := []struct {
		name       string
		classes    []*networkingv1.IngressClass
		opts       Options
		ingress    *networkingv1.Ingress
		wantClaim  bool
		wantReason string
		wantField  string
	}{
		// Step 1: annotation decisive.
		{name: "annotation ours", classes: standard, ingress: ing("a", "ramjet", "-"), wantClaim: true},
		{name: "annotation theirs", classes: standard, ingress: ing("a", "nginx", "-")},
		{name: "annotation theirs beats our className", classes: standard, ingress: ing("a", "nginx", "ramjet")},
		{name: "annotation empty value is not ours", classes: standard, ingress: ing("a", "", "-")},
		{name: "annotation ours and className ours", classes: standard, ingress: ing("a", "ramjet", "ramjet-internal"), wantClaim: true},
		{name: "annotation ours, className another controller", classes: standard, ingress: ing("a", "ramjet", "nginx"),
			wantClaim: true, wantReason: ReasonClassConflict, wantField: FieldIngressClassName},
		{name: "annotation ours, className missing", classes: standard, ingress: ing("a", "ramjet", "ghost"),
			wantClaim: true, wantReason: ReasonClassConflict, wantField: FieldIngressClassName},
		{name: "annotation ours, className empty", classes: standard, ingress: ing("a", "ramjet", ""), wantClaim: true},
		{name: "custom class option", classes: standard, opts: Options{IngressClass: "edge"}, ingress: ing("a", "edge", "-"), wantClaim: true},
		{name: "custom class option, default value not ours", classes: standard, opts: Options{IngressClass: "edge"}, ingress: ing("a", "ramjet", "-")},
		// Step 2.
		{name: "className ours", classes: standard, ingress: ing("a", "-", "ramjet"), wantClaim: true},
		{name: "className second class of ours", classes: standard, ingress: ing("a", "-", "ramjet-internal"), wantClaim: true},
		{name: "custom controller name", classes: []*networkingv1.IngressClass{class("edge", "example.com/edge", "")},
			opts: Options{ControllerName: "example.com/edge"}, ingress: ing("a", "-", "edge"), wantClaim: true},
		{name: "default controller name not ours under custom option", classes: standard,
			opts: Options{ControllerName: "example.com/edge"}, ingress: ing("a", "-", "ramjet")},
		// Step 3.
		{name: "className another controller", classes: standard, ingress: ing("a", "-", "nginx")},
		// Step 4.
		{name: "className missing", classes: standard, ingress: ing("a", "-", "ghost"),
			wantReason: ReasonClassNotFound, wantField: FieldIngressClassName},
		{name: "className missing even with watch-without-class", classes: standard, opts: Options{WatchWithoutClass: true},
			ingress: ing("a", "-", "ghost"), wantReason: ReasonClassNotFound, wantField: FieldIngressClassName},
		{name: "className missing with no classes at all", ingress: ing("a", "-", "ramjet"),
			wantReason: ReasonClassNotFound, wantField: FieldIngressClassName},
		// Step 5.
		{name: "no class, no default", classes: standard, ingress: ing("a", "-", "-")},
		{name: "no class, empty className, no default", classes: standard, ingress: ing("a", "-", "")},
		{name: "no class, watch without class", classes: standard, opts: Options{WatchWithoutClass: true}, ingress: ing("a", "-", "-"), wantClaim: true},
		{name: "no class, our class is default", classes: []*networkingv1.IngressClass{class("ramjet", ours, "true")},
			ingress: ing("a", "-", "-"), wantClaim: true},
		{name: "no class, their class is default", classes: []*networkingv1.IngressClass{class("ramjet", ours, ""), class("nginx", theirs, "true")},
			ingress: ing("a", "-", "-")},
		{name: "no class, default annotation not exactly true", classes: []*networkingv1.IngressClass{class("ramjet", ours, "True")},
			ingress: ing("a", "-", "-")},
		{name: "default class does not override another controller's className", classes: []*networkingv1.IngressClass{class("ramjet", ours, "true"), class("nginx", theirs, "")},
			ingress: ing("a", "-", "nginx")},
		// Duplicate class names: ours when any copy is ours, in either order.
		{name: "duplicate class ours first", classes: []*networkingv1.IngressClass{class("x", ours, ""), class("x", theirs, "")},
			ingress: ing("a", "-", "x"), wantClaim: true},
		{name: "duplicate class ours last", classes: []*networkingv1.IngressClass{class("x", theirs, ""), class("x", ours, "")},
			ingress: ing("a", "-", "x"), wantClaim: true},
		{name: "nil class skipped", classes: []*networkingv1.IngressClass{nil, class("ramjet", ours, "")},
			ingress: ing("a", "-", "ramjet"), wantClaim: true},
		{name: "nil ingress", classes: standard, ingress: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			claimed, f := New(tt.classes, tt.opts).Decide(tt.ingress)
			require.Equal(t, tt.wantClaim, claimed, "claimed")
			if tt.wantReason == "" {
				require.Nil(t, f, "finding")
				return
			}
			require.NotNil(t, f, "finding")
			require.Equal(t, tt.wantReason, f.Reason)
			require.Equal(t, tt.wantField, f.Field)
			require.Same(t, tt.ingress, f.Ingress)
			require.NotEmpty(t, f.Message)
		})
	}
}

func TestClaim(t *testing.T) {
	classes := []*networkingv1.IngressClass{
		class("ramjet", DefaultControllerName, ""),
		class("nginx", "k8s.io/ingress-nginx", ""),
	}
	a := ing("a", "ramjet", "-")
	b := ing("b", "-", "nginx")
	c := ing("c", "-", "typo")
	d := ing("d", "-", "ramjet")
	e := ing("e", "ramjet", "nginx")
	claimed, findings := Claim([]*networkingv1.Ingress{a, b, nil, c, d, e}, classes, Options{})

	var names []string
	for _, i := range claimed {
		names = append(names, i.Name)
	}
	if diff := cmp.Diff([]string{"a", "d", "e"}, names); diff != "" {
		t.Errorf("claimed (-want +got):\n%s", diff)
	}
	type short struct{ Name, Reason, Field string }
	var got []short
	for _, f := range findings {
		got = append(got, short{f.Ingress.Name, f.Reason, f.Field})
	}
	want := []short{
		{"c", ReasonClassNotFound, FieldIngressClassName},
		{"e", ReasonClassConflict, FieldIngressClassName},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
}

func TestConflictMessageNamesBothSides(t *testing.T) {
	classes := []*networkingv1.IngressClass{class("nginx", "k8s.io/ingress-nginx", "")}
	_, f := New(classes, Options{}).Decide(ing("a", "ramjet", "nginx"))
	require.NotNil(t, f)
	require.Contains(t, f.Message, `"ramjet"`)
	require.Contains(t, f.Message, `"nginx"`)
	require.Contains(t, f.Message, "another controller")

	_, f = New(nil, Options{}).Decide(ing("a", "ramjet", "ghost"))
	require.NotNil(t, f)
	require.Contains(t, f.Message, "does not exist")
}
