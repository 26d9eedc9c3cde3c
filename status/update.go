package status

import (
	"cmp"
	"slices"

	networkingv1 "k8s.io/api/networking/v1"
)

// Update is one status write: set Ingress Namespace/Name's status to Status.
type Update struct {
	Namespace string
	Name      string
	Status    networkingv1.IngressStatus
}

// Updates returns the status writes that bring the claimed Ingresses to
// advertise desired (SPEC §16), sorted by namespace then name.
//
// claimed must be the Ingresses this controller claims (classify.Claim):
// an Ingress that is not ours is never given status. An Ingress is written
// only when its .status.loadBalancer.ingress differs from desired as a set:
// order and repeats are ignored and IPs compare by address, so a status
// another writer sorted differently is left alone rather than rewritten on
// every rebuild.
//
// Nothing is written when enabled is false (--no-status-update), and
// nothing when desired is empty: an empty desired means the address is not
// known yet (the publish Service not in the cache, its load balancer not
// provisioned), and clearing every Ingress's status over that gap would make
// DNS automation withdraw records for hosts that still serve.
//
// Each Update carries its own copy of desired, sorted and without repeats.
func Updates(claimed []*networkingv1.Ingress, desired []networkingv1.IngressLoadBalancerIngress, enabled bool) []Update {
	if !enabled || len(desired) == 0 {
		return nil
	}
	want := normalize(deepCopy(desired))

	ings := slices.DeleteFunc(slices.Clone(claimed), func(ing *networkingv1.Ingress) bool { return ing == nil })
	slices.SortFunc(ings, compareIngress)
	var out []Update
	for i := 0; i < len(ings); {
		// A key listed twice is written once, if any copy differs, so the
		// result does not depend on which copy came first.
		j, differs := i, false
		for ; j < len(ings) && compareIngress(ings[i], ings[j]) == 0; j++ {
			differs = differs || !sameSet(ings[j].Status.LoadBalancer.Ingress, want)
		}
		if differs {
			out = append(out, Update{
				Namespace: ings[i].Namespace,
				Name:      ings[i].Name,
				Status: networkingv1.IngressStatus{
					LoadBalancer: networkingv1.IngressLoadBalancerStatus{Ingress: deepCopy(want)},
				},
			})
		}
		i = j
	}
	return out
}

func compareIngress(a, b *networkingv1.Ingress) int {
	return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
}

// sameSet reports whether have holds the entries of want, which is
// normalized, in any order and with any repeats.
func sameSet(have, want []networkingv1.IngressLoadBalancerIngress) bool {
	if len(have) < len(want) {
		return false
	}
	return slices.EqualFunc(normalize(slices.Clone(have)), want, func(a, b networkingv1.IngressLoadBalancerIngress) bool {
		return compareEntry(a, b) == 0
	})
}

func deepCopy(es []networkingv1.IngressLoadBalancerIngress) []networkingv1.IngressLoadBalancerIngress {
	out := make([]networkingv1.IngressLoadBalancerIngress, len(es))
	for i := range es {
		es[i].DeepCopyInto(&out[i])
	}
	return out
}
