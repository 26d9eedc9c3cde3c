package gatewayapi

import (
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// BenchmarkTranslateAll: what the controller adds to each rebuild for
// 10,000 HTTPRoutes on one Gateway, status included, against Translate.
func BenchmarkTranslateAll(b *testing.B) {
	const n = 10000
	o := Objects{GatewayClasses: classes(), Gateways: []*gwv1.Gateway{gateway("infra", "gw", "ours", listener("http", "", gwv1.NamespacesFromAll))}}
	for i := range n {
		name := "r" + strconv.Itoa(i)
		o.Services = append(o.Services, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "app", Name: name}})
		o.HTTPRoutes = append(o.HTTPRoutes, httpRoute("app", name, []gwv1.ParentReference{{Name: "gw", Namespace: new(gwv1.Namespace("infra"))}},
			[]gwv1.Hostname{gwv1.Hostname(name + ".example.com")}, gwv1.HTTPRouteRule{BackendRefs: []gwv1.HTTPBackendRef{toService("", name, 80)}}))
	}
	b.Run("Translate", func(b *testing.B) {
		for b.Loop() {
			Translate(o)
		}
	})
	b.Run("TranslateAll", func(b *testing.B) {
		for b.Loop() {
			TranslateAll(o)
		}
	})
}
