package compile

import (
	"cmp"
	"slices"
	"strings"

	networkingv1 "k8s.io/api/networking/v1"

	"ramjet.dev/ramjet/classify"
)

// claimIngresses keeps the Ingresses that are ours (SPEC §2), turns the
// classifier's findings into warnings, and puts the claimed ones in Ingress
// order (SPEC §7): creationTimestamp ascending, ties by namespace/name
// descending, as ingress-nginx orders them.
func (b *builder) claimIngresses() {
	unique := make(map[string]*networkingv1.Ingress, len(b.snap.Ingresses))
	for _, ing := range b.snap.Ingresses {
		if ing != nil {
			keepOne(unique, ing.Namespace+"/"+ing.Name, ing)
		}
	}
	c := classify.New(b.snap.IngressClasses, b.opts.claimOptions())
	all := make([]ingress, 0, len(unique))
	for key, obj := range unique {
		claimed, finding := c.Decide(obj)
		if finding != nil {
			b.warn(Reason(finding.Reason), ingressRef(obj.Namespace, obj.Name), finding.Field, finding.Message)
		}
		if claimed {
			created := obj.CreationTimestamp.Time
			all = append(all, ingress{obj: obj, key: key, createdSec: created.Unix(), createdNsec: created.Nanosecond()})
		}
	}
	b.ingresses = make([]*ingress, len(all))
	for i := range all {
		b.ingresses[i] = &all[i]
	}
	slices.SortFunc(b.ingresses, func(x, y *ingress) int {
		if c := cmp.Compare(x.createdSec, y.createdSec); c != 0 {
			return c
		}
		if c := cmp.Compare(x.createdNsec, y.createdNsec); c != 0 {
			return c
		}
		return strings.Compare(y.key, x.key) // descending
	})
	b.claimed = make([]Ref, len(b.ingresses))
	for i, ing := range b.ingresses {
		ing.rank = i
		b.claimed[i] = ing.ref()
	}
}
