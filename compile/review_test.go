package compile_test

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"ramjet.dev/ramjet/compile"
	"ramjet.dev/ramjet/router/routertest"
)

// A review compiles only the Ingresses related to the reviewed one; its
// warnings about it must be those of compiling the whole snapshot. Every
// Ingress of every case file is reviewed against its case's snapshot.
func TestReviewWarningsEqualWholeCompile(t *testing.T) {
	cases, err := routertest.LoadCases("../testdata/cases")
	require.NoError(t, err)
	reviewed := 0
	for _, c := range cases {
		full := compile.Compile(c.Objects, c.Options)
		r := compile.NewReviewer(c.Objects, c.Options, compile.AdmissionSettings{})
		for _, ing := range c.Objects.Ingresses {
			ref := compile.Ref{Kind: "Ingress", Namespace: ing.Namespace, Name: ing.Name}
			var want []compile.Warning
			for _, w := range full.Warnings {
				if w.Object == ref {
					want = append(want, w)
				}
			}
			got := r.Review(ing)
			if !got.Claimed {
				continue
			}
			reviewed++
			if d := cmp.Diff(want, got.Warnings); d != "" {
				t.Errorf("case %q (%s), %s: review warnings differ from the whole compile's (-whole +review):\n%s", c.Name, c.File, ref, d)
			}

			// A copy under a new name, created after everything: a new
			// Ingress joining the snapshot.
			twin := ing.DeepCopy()
			twin.Name += "-twin"
			twin.CreationTimestamp = metav1.Unix(1<<40, 0)
			with := c.Objects
			with.Ingresses = append(slices.Clone(with.Ingresses), twin)
			twinRef := compile.Ref{Kind: "Ingress", Namespace: twin.Namespace, Name: twin.Name}
			want = nil
			for _, w := range compile.Compile(with, c.Options).Warnings {
				if w.Object == twinRef {
					want = append(want, w)
				}
			}
			if d := cmp.Diff(want, r.Review(twin).Warnings); d != "" {
				t.Errorf("case %q (%s), new %s: review warnings differ from the whole compile's (-whole +review):\n%s", c.Name, c.File, twinRef, d)
			}
		}
	}
	require.Greater(t, reviewed, 100)
}
