package match

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestWarningRef(t *testing.T) {
	type ref struct{ Kind, Namespace, Name string }
	tests := []struct {
		object string
		want   ref
	}{
		{"Ingress prod/shop", ref{"Ingress", "prod", "shop"}},
		{"Service demo/missing", ref{"Service", "demo", "missing"}},
		{"Secret kube-system/tls.example.com", ref{"Secret", "kube-system", "tls.example.com"}},
		{"", ref{}},
		{"Ingress", ref{}},
		{"Ingress ", ref{}},
		{"Ingress shop", ref{}},
		{"Ingress /shop", ref{}},
		{"Ingress prod/", ref{}},
		{"Ingress prod/shop/extra", ref{}},
		{"Ingress prod/shop extra", ref{}},
		{"Ingress pr od/shop", ref{}},
		{" prod/shop", ref{}},
		{"Ingress/x prod/shop", ref{}},
		{"prod/shop", ref{}},
	}
	for _, tt := range tests {
		t.Run(tt.object, func(t *testing.T) {
			var got ref
			got.Kind, got.Namespace, got.Name = Warning{Object: tt.object}.Ref()
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Warning{Object: %q}.Ref() (-want +got):\n%s", tt.object, diff)
			}
		})
	}
}
