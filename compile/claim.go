package compile

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	networkingv1 "k8s.io/api/networking/v1"

	"ramjet.dev/ramjet/classify"
)

// claimIngresses keeps the Ingresses that are ours (SPEC §2), turns the
// classifier's findings into warnings, and puts the claimed ones in Ingress
// order (SPEC §7): creationTimestamp ascending, ties by namespace/name
// descending, as ingress-nginx orders them.
func (b *builder) claimIngresses() {
	// The snapshot's order, and an index only to find duplicates: an
	// informer's snapshot has none, and Ingress objects are read in the
	// order they were allocated.
	ings := make([]*networkingv1.Ingress, 0, len(b.snap.Ingresses))
	at := newNameIndex(len(b.snap.Ingresses), func(i int32) (string, string) { return ings[i].Namespace, ings[i].Name })
	for _, ing := range b.snap.Ingresses {
		if ing == nil {
			continue
		}
		if i, dup := at.add(ing.Namespace, ing.Name, int32(len(ings))); dup {
			if precedes(ing, ings[i]) {
				ings[i] = ing
			}
			continue
		}
		ings = append(ings, ing)
	}
	c := classify.New(b.snap.IngressClasses, b.opts.claimOptions())
	tally := newUnclaimedTally(b.snap.IngressClasses, b.opts)
	// The claimed ones are sorted by a small key, and their build state
	// laid out in Ingress order, which is the order every step reads it.
	type claimKey struct {
		sec  int64
		nsec int32
		i    int32  // in ings
		name uint64 // joinedPrefix: most ties are told apart without reading the Ingress
	}
	keys := make([]claimKey, 0, len(ings))
	for i, obj := range ings {
		claimed, finding := c.Decide(obj)
		tally.add(obj, claimed)
		if finding != nil {
			b.warn(Reason(finding.Reason), ingressRef(obj.Namespace, obj.Name), finding.Field, finding.Message)
		}
		if claimed {
			created := obj.CreationTimestamp.Time
			keys = append(keys, claimKey{sec: created.Unix(), nsec: int32(created.Nanosecond()), i: int32(i), name: joinedPrefix(obj.Namespace, obj.Name)})
		}
	}
	slices.SortFunc(keys, func(x, y claimKey) int {
		if c := cmp.Compare(x.sec, y.sec); c != 0 {
			return c
		}
		if c := cmp.Compare(x.nsec, y.nsec); c != 0 {
			return c
		}
		// namespace/name descending
		if x.name != y.name {
			return cmp.Compare(y.name, x.name)
		}
		a, o := ings[x.i], ings[y.i]
		return compareJoined(o.Namespace, o.Name, a.Namespace, a.Name)
	})
	all := make([]ingress, len(keys))
	b.ingresses = make([]*ingress, len(keys))
	b.claimed = make([]Ref, len(keys))
	for r, k := range keys {
		ing := &all[r]
		ing.obj, ing.rank, ing.createdSec, ing.createdNsec = ings[k.i], r, k.sec, int(k.nsec)
		b.ingresses[r] = ing
		b.claimed[r] = ing.ref()
	}
	b.unclaimed = tally.summary()
}

// inspectIngresses withholds each claimed Ingress whose host, path or TLS
// entry ingress-nginx's deep inspection refuses (nginx directives or
// system paths in a value): its store ignores such an Ingress, on by
// default (--deep-inspect), so ramjet serves nothing of it either.
func (b *builder) inspectIngresses() {
	kept := b.ingresses[:0]
	for _, ing := range b.ingresses {
		f := deepInspectFinding(ing.obj)
		if f.what == "" {
			kept = append(kept, ing)
			continue
		}
		reason := RuleRejected
		if f.what == "path" {
			reason = PathRejected
		}
		b.warn(reason, ing.ref(), f.field, f.what+" "+strconv.Quote(f.value)+
			" holds what ingress-nginx's deep inspection refuses (an nginx directive or a system path); "+
			"ingress-nginx ignores the whole Ingress over it, and so does ramjet: this Ingress creates no hosts, routes, fallbacks or certificates")
		b.warnings[len(b.warnings)-1].Rated = Cosmetic // served by neither
	}
	clear(b.ingresses[len(kept):])
	b.ingresses = kept
}

// joinedPrefix is the first 8 bytes of ns+"/"+name, big-endian, padded
// with zeros. Where two differ they order as the strings do; where they are
// equal the strings must be compared.
func joinedPrefix(ns, name string) uint64 {
	var p uint64
	n := 0
	add := func(s string) {
		for i := 0; i < len(s) && n < 8; i++ {
			p |= uint64(s[i]) << (56 - 8*n)
			n++
		}
	}
	add(ns)
	add("/")
	add(name)
	return p
}

// compareJoined compares a1+"/"+a2 with b1+"/"+b2 without building them:
// Ingress order's tie-break is by "namespace/name".
func compareJoined(a1, a2, b1, b2 string) int {
	if a1 == b1 {
		return strings.Compare(a2, b2)
	}
	if n := min(len(a1), len(b1)); a1[:n] != b1[:n] {
		return strings.Compare(a1[:n], b1[:n])
	}
	// One first part is a prefix of the other: compare byte by byte.
	at := func(p1, p2 string, i int) (byte, bool) {
		switch {
		case i < len(p1):
			return p1[i], true
		case i == len(p1):
			return '/', true
		case i-len(p1)-1 < len(p2):
			return p2[i-len(p1)-1], true
		}
		return 0, false
	}
	for i := 0; ; i++ {
		x, okx := at(a1, a2, i)
		y, oky := at(b1, b2, i)
		switch {
		case !okx || !oky:
			return cmp.Compare(len(a1)+len(a2), len(b1)+len(b2))
		case x != y:
			return cmp.Compare(x, y)
		}
	}
}

// Unclaimed summarises the Ingresses a snapshot holds that the options do
// not claim (SPEC §2), grouped by the class they name, with the option
// that would claim each group. A controller that reads Ingresses and
// serves none of them must say so: the controller's log and /readyz,
// examples/check and case runs all report it from this one summary.
type Unclaimed struct {
	// Read is how many Ingresses were read (distinct namespace/name);
	// Claimed how many of them the options claim.
	Read, Claimed int
	// Groups are the unclaimed ones by what they name, the largest group
	// first (ties by annotation, then class name, then option).
	Groups []UnclaimedGroup
	// ControllerName is the controller name the options claim for, which
	// an IngressClass must name to claim a group without an Option.
	ControllerName string
}

// UnclaimedGroup is the unclaimed Ingresses that name the same class the
// same way.
type UnclaimedGroup struct {
	// Annotation is their kubernetes.io/ingress.class value (decisive when
	// set); ClassName their spec.ingressClassName; both "" when they name
	// no class.
	Annotation, ClassName string
	// Controller is the spec.controller of the IngressClass ClassName
	// names; "" when it does not exist or only the annotation counts.
	Controller string
	// Count is how many; Example the first of them by namespace/name.
	Count   int
	Example Ref
	// Claim is the setting that would claim them, by option name
	// ("ingress-class", "controller-name", "watch-ingress-without-class")
	// and value; Option "" when no option can (an IngressClass that does
	// not exist: create it for our controller).
	Option, Value string
}

// The option names UnclaimedGroup.Option uses.
const (
	OptionIngressClass             = "ingress-class"
	OptionControllerName           = "controller-name"
	OptionWatchIngressWithoutClass = "watch-ingress-without-class"
)

// SummarizeUnclaimed groups the Ingresses o does not claim among
// ingresses, given the IngressClasses there are. Compile's
// Result.Unclaimed is the same summary of its snapshot.
func SummarizeUnclaimed(ingresses []*networkingv1.Ingress, classes []*networkingv1.IngressClass, o Options) Unclaimed {
	unique := make(map[string]*networkingv1.Ingress, len(ingresses))
	for _, ing := range ingresses {
		if ing != nil {
			keepOne(unique, ing.Namespace+"/"+ing.Name, ing)
		}
	}
	c := classify.New(classes, o.claimOptions())
	t := newUnclaimedTally(classes, o)
	for _, ing := range unique {
		claimed, _ := c.Decide(ing)
		t.add(ing, claimed)
	}
	return t.summary()
}

// unclaimedTally builds an Unclaimed one Ingress at a time.
type unclaimedTally struct {
	u            Unclaimed
	controllerOf map[string]string
	groups       map[unclaimedKey]*UnclaimedGroup
}

// unclaimedKey tells an annotation with an empty value from none.
type unclaimedKey struct {
	annotated             bool
	annotation, className string
}

func newUnclaimedTally(classes []*networkingv1.IngressClass, o Options) *unclaimedTally {
	t := &unclaimedTally{controllerOf: make(map[string]string, len(classes))}
	t.u.ControllerName = o.claimOptions().ControllerName
	// Of two classes with one name, the one keepOne keeps, whatever the
	// order.
	byName := make(map[string]*networkingv1.IngressClass, len(classes))
	for _, ic := range classes {
		if ic != nil {
			keepOne(byName, ic.Name, ic)
		}
	}
	for name, ic := range byName {
		t.controllerOf[name] = ic.Spec.Controller
	}
	return t
}

func (t *unclaimedTally) add(ing *networkingv1.Ingress, claimed bool) {
	t.u.Read++
	if claimed {
		t.u.Claimed++
		return
	}
	var k unclaimedKey
	annotation, annotated := ing.Annotations[classify.AnnotationIngressClass]
	if annotated {
		k.annotated, k.annotation = true, annotation
	} else if ing.Spec.IngressClassName != nil {
		k.className = *ing.Spec.IngressClassName
	}
	ref := ingressRef(ing.Namespace, ing.Name)
	g := t.groups[k]
	if g == nil {
		g = &UnclaimedGroup{Annotation: k.annotation, ClassName: k.className, Example: ref}
		switch controller, exists := t.controllerOf[k.className]; {
		case annotated:
			g.Option, g.Value = OptionIngressClass, k.annotation
		case k.className == "":
			g.Option, g.Value = OptionWatchIngressWithoutClass, "true"
		case exists:
			g.Controller = controller
			g.Option, g.Value = OptionControllerName, controller
		}
		if t.groups == nil {
			t.groups = make(map[unclaimedKey]*UnclaimedGroup)
		}
		t.groups[k] = g
	}
	g.Count++
	if ref.Namespace+"/"+ref.Name < g.Example.Namespace+"/"+g.Example.Name {
		g.Example = ref
	}
}

func (t *unclaimedTally) summary() Unclaimed {
	u := t.u
	for _, g := range t.groups {
		u.Groups = append(u.Groups, *g)
	}
	slices.SortFunc(u.Groups, func(a, b UnclaimedGroup) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), strings.Compare(a.Annotation, b.Annotation), strings.Compare(a.ClassName, b.ClassName),
			strings.Compare(a.Option, b.Option))
	})
	return u
}

// All reports whether every Ingress read is claimed (true when none
// were read).
func (u Unclaimed) All() bool { return u.Claimed == u.Read }

// Describe renders the summary in one line, spelling each setting with
// spell (FlagSpelling for a command line, CaseSpelling for case options);
// "" when every Ingress read is claimed.
func (u Unclaimed) Describe(spell func(option, value string) string) string {
	if u.All() {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d of %d Ingresses read are not claimed", u.Read-u.Claimed, u.Read)
	if u.Claimed == 0 {
		b.WriteString(" (nothing is served from Ingresses)")
	}
	for i, g := range u.Groups {
		sep := "; "
		if i == 0 {
			sep = ": "
		}
		b.WriteString(sep + strconv.Itoa(g.Count) + " ")
		switch {
		case g.Annotation != "" || g.Option == OptionIngressClass:
			fmt.Fprintf(&b, "annotated %s=%q", classify.AnnotationIngressClass, g.Annotation)
		case g.ClassName == "":
			b.WriteString("naming no class")
		case g.Controller != "":
			fmt.Fprintf(&b, "with ingressClassName %q (IngressClass of controller %q)", g.ClassName, g.Controller)
		default:
			fmt.Fprintf(&b, "with ingressClassName %q (no such IngressClass)", g.ClassName)
		}
		fmt.Fprintf(&b, ", e.g. %s/%s", g.Example.Namespace, g.Example.Name)
		if g.Option == "" {
			fmt.Fprintf(&b, ": an IngressClass %q with spec.controller %q claims them", g.ClassName, u.ControllerName)
			continue
		}
		b.WriteString(": " + spell(g.Option, g.Value) + " claims them")
	}
	return b.String()
}

// FlagSpelling spells a setting as the controller's command-line flag
// (ingress-nginx's spelling where it differs).
func FlagSpelling(option, value string) string {
	switch option {
	case OptionControllerName:
		return "--controller-class=" + value
	case OptionWatchIngressWithoutClass:
		return "--watch-ingress-without-class"
	}
	return "--" + option + "=" + value
}

// CaseSpelling spells a setting as a case file's option (SPEC §18).
func CaseSpelling(option, value string) string {
	switch option {
	case OptionIngressClass:
		return "options.ingressClass: " + value
	case OptionControllerName:
		return "options.controllerName: " + value
	}
	return "options.watchIngressWithoutClass: true"
}
