package compile

import (
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
)

// TestReviewSharedServiceAsWithAll: a review keeps, of the Ingresses that
// share a Service with the reviewed one, only the first two of each
// backend signature (firstOfEachSignature); its warnings and refusal must
// be those it gives with every one of them, and its warnings those of
// compiling the whole snapshot. Tenants' Ingresses on one Service, with
// settings drawn from a few (so that many are alike), ties in age, some
// hosts shared and canaries among them.
func TestReviewSharedServiceAsWithAll(t *testing.T) {
	pool := [][]string{
		nil,
		{NginxPrefix + "load-balance", "ewma"},
		{NginxPrefix + "affinity", "cookie"},
		{NginxPrefix + "affinity", "cookie", NginxPrefix + "session-cookie-name", "other"},
		{NginxPrefix + "upstream-hash-by", "$request_uri"},
		{NginxPrefix + "backend-protocol", "HTTPS"},
		{NginxPrefix + "service-upstream", "true"},
		{NginxPrefix + "canary", "true", NginxPrefix + "canary-weight", "10"},
	}
	for seed := range 40 {
		rng := rand.New(rand.NewPCG(uint64(seed), 7))
		const n = 40
		s := Snapshot{
			IngressClasses: []*networkingv1.IngressClass{mkClass("ramjet", DefaultControllerName)},
			Services:       []*corev1.Service{mkService("ns", "svc", "http:80:8080", "alt:81:8081")},
			EndpointSlices: []*discoveryv1.EndpointSlice{mkSlice("ns", "svc", "svc-a", "http", 8080, "10.0.0.1", "10.0.0.2")},
		}
		ingress := func(name string) *networkingv1.Ingress {
			port := "http"
			if rng.IntN(4) == 0 {
				port = "alt"
			}
			path := "/"
			if rng.IntN(3) == 0 {
				path = "/api"
			}
			return mkIngress("ns", name, int64(rng.IntN(4)),
				withRules(mkRule("t"+strconv.Itoa(rng.IntN(3*n))+".example.com", prefix(path, "svc", port))),
				withAnnotations(pool[rng.IntN(len(pool))]...))
		}
		for i := range n {
			s.Ingresses = append(s.Ingresses, ingress("ing-"+strconv.Itoa(i)))
		}
		r := NewReviewer(s, Options{}, AdmissionSettings{})
		all := *r
		all.byService = map[objKey][]*networkingv1.Ingress{}
		for _, ing := range s.Ingresses {
			for _, k := range ingressServices(ing) {
				all.byService[k] = append(all.byService[k], ing)
			}
		}
		for trial := range 16 {
			name := "new"
			switch trial % 4 {
			case 0:
				// The oldest: the first of its signature, whose alike
				// must stand in for it.
				for _, other := range s.Ingresses {
					if r.order[objKey{"ns", other.Name}] == 0 {
						name = other.Name
					}
				}
			case 2:
				name = s.Ingresses[rng.IntN(n)].Name
			}
			ing := ingress(name)
			whole := s
			whole.Ingresses = []*networkingv1.Ingress{ing}
			for _, other := range s.Ingresses {
				if other.Name != name {
					whole.Ingresses = append(whole.Ingresses, other)
				}
			}
			ref := ingressRef("ns", name)
			got, with := r.Review(ing), all.Review(ing)
			if diff := cmp.Diff(with, got); diff != "" {
				t.Fatalf("seed %d, %s: review with every Ingress of the Service (-) and with the first of each signature (+):\n%s", seed, name, diff)
			}
			if diff := cmp.Diff(warningsAbout(Compile(whole, Options{}).Warnings, ref), got.Warnings); diff != "" {
				t.Fatalf("seed %d, %s: warnings of the whole compile (-) and of the review (+):\n%s", seed, name, diff)
			}
		}
	}
}
