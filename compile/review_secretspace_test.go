package compile

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The admission review compiles a subset of the snapshot, with the
// Secrets the Ingress names. An auth-secret with surrounding whitespace (a
// YAML block scalar's trailing newline, a stray space) is read trimmed by
// the compile, and found by the review as well: the review warns exactly
// what the whole compile warns, not "Secret not found" for an Ingress the
// controller serves with its passwords.
func TestReviewSecretNameWithSpaces(t *testing.T) {
	for _, value := range []string{"htpasswd\n", " htpasswd", "prod/htpasswd "} {
		t.Run(value, func(t *testing.T) {
			htpasswd := &corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{Namespace: "prod", Name: "htpasswd"},
				Type:       corev1.SecretTypeOpaque,
				Data:       map[string][]byte{"auth": []byte("eve:{PLAIN}plain\n")},
			}
			ing := mkIngress("prod", "app", 1,
				withRules(mkRule("app.example.com", prefix("/app", "web", 80))),
				withAnnotations(
					"nginx.ingress.kubernetes.io/auth-type", "basic",
					"nginx.ingress.kubernetes.io/auth-secret", value,
				))
			s := mkSnapshot(ing, htpasswd,
				mkService("prod", "web", "http:80:8080"), mkSlice("prod", "web", "web-1", "http", 8080, "10.0.0.1"))
			var whole []Warning
			for _, w := range Compile(s, Options{}).Warnings {
				if w.Object == ingressRef("prod", "app") {
					whole = append(whole, w)
				}
			}
			rv := NewReviewer(s, Options{}, AdmissionSettings{}).Review(ing)
			if !rv.Claimed {
				t.Fatal("not claimed")
			}
			if d := cmp.Diff(whole, rv.Warnings); d != "" {
				t.Errorf("review warnings differ from the whole compile's (-whole +review):\n%s", d)
			}
		})
	}
}
