package manifest

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"ramjet.dev/ramjet/compile"
)

// limitRanges is an Extension for a kind the loader skips, LimitRange,
// standing in for one whose types this module cannot import: Finish
// reports, as a warning, which objects one load gave it.
type limitRanges struct{}

var limitRangeGVK = corev1.SchemeGroupVersion.WithKind("LimitRange")

func (limitRanges) Kinds() map[schema.GroupVersionKind]bool {
	return map[schema.GroupVersionKind]bool{limitRangeGVK: true}
}

func (limitRanges) AddToScheme(s *runtime.Scheme) error { return corev1.AddToScheme(s) }

func (limitRanges) Finish(objs []runtime.Object, snap *compile.Snapshot) {
	var names []string
	for _, o := range objs {
		lr := o.(*corev1.LimitRange)
		names = append(names, lr.Namespace+"/"+lr.Name)
	}
	snap.Warnings = append(snap.Warnings, compile.Warning{Reason: "Seen", Message: strings.Join(names, " ")})
}

// TestExtension: a registered Extension's kinds are decoded strictly, in
// kubectl's namespace, and handed over once per load, all pieces of a
// Reader together; Register refuses kinds already read.
func TestExtension(t *testing.T) {
	Register(limitRanges{})
	for _, bad := range []Extension{limitRanges{}, ingressExtension{}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Register(%T) did not panic", bad)
				}
			}()
			Register(bad)
		}()
	}

	r := NewReader()
	if err := r.Decode("a.yaml", []byte("apiVersion: v1\nkind: LimitRange\nmetadata: {name: a}\n")); err != nil {
		t.Fatal(err)
	}
	if err := r.Decode("b.json", []byte(`{"apiVersion": "v1", "kind": "LimitRangeList", "items": [{"metadata": {"name": "b", "namespace": "x"}}]}`)); err != nil {
		t.Fatal(err)
	}
	err := r.Decode("c.yaml", []byte("apiVersion: v1\nkind: LimitRange\nmetadata: {name: a}\n---\napiVersion: v1\nkind: LimitRange\nmetadata: {name: c}\nspec: {limitz: []}\n"))
	var got []string
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		var me *Error
		if !errors.As(e, &me) {
			t.Fatalf("%v is not an *Error", e)
		}
		got = append(got, fmt.Sprintf("%s#%d %s %s %v", me.File, me.Document, me.Object(), me.Field, errors.Is(e, ErrDefinedTwice)))
	}
	if want := "c.yaml#1 LimitRange default/a  true,c.yaml#2 LimitRange default/c spec.limitz false"; strings.Join(got, ",") != want {
		t.Errorf("errors %q, want %q", got, want)
	}
	snap, _ := r.Snapshot()
	if len(snap.Warnings) != 1 || snap.Warnings[0].Message != "default/a x/b" {
		t.Errorf("Finish saw %v, want default/a and x/b in one call", snap.Warnings)
	}
	if again, _ := r.Snapshot(); again != snap || len(again.Warnings) != 1 {
		t.Errorf("a second Snapshot finished again")
	}
}

// ingressExtension claims a kind the loader reads itself.
type ingressExtension struct{ limitRanges }

func (ingressExtension) Kinds() map[schema.GroupVersionKind]bool {
	return map[schema.GroupVersionKind]bool{{Group: "networking.k8s.io", Version: "v1", Kind: "Ingress"}: true}
}
