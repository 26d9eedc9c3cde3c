// Package classify decides which Ingresses this controller claims (SPEC §2).
//
// It is pure and tiny on purpose: claiming too much fights another
// controller for host names, claiming too little silently 404s, so the rule
// lives in one place with nothing else mixed in. It imports no ramjet
// package.
package classify

import (
	"strconv"

	networkingv1 "k8s.io/api/networking/v1"
)

// Defaults for Options left empty (SPEC §1).
const (
	DefaultIngressClass   = "ramjet"
	DefaultControllerName = "ramjet.dev/ingress"
)

// AnnotationIngressClass is the legacy class annotation. When present it is
// decisive, even over spec.ingressClassName (ingress-nginx's order).
const AnnotationIngressClass = "kubernetes.io/ingress.class"

// Finding reasons, spelled as the warning reasons of SPEC §14.
const (
	// ReasonClassNotFound: spec.ingressClassName names a class that does
	// not exist, so the Ingress is not claimed and nobody would otherwise
	// be told why it serves nothing.
	ReasonClassNotFound = "ClassNotFound"
	// ReasonClassConflict: the class annotation claimed the Ingress while
	// spec.ingressClassName points elsewhere; ingress-nginx would not have
	// claimed it (SPEC §19).
	ReasonClassConflict = "ClassConflict"
)

// FieldIngressClassName is the field path both findings name: the class
// name that was not found, or that the annotation overrode.
const FieldIngressClassName = "spec.ingressClassName"

// Options are the claiming options of SPEC §1. Empty names take the defaults.
type Options struct {
	// IngressClass is the value of kubernetes.io/ingress.class that is ours.
	IngressClass string
	// ControllerName is the IngressClass spec.controller that is ours.
	ControllerName string
	// WatchWithoutClass also claims Ingresses that name no class at all.
	WatchWithoutClass bool
}

// WithDefaults returns o with empty names replaced by the defaults.
func (o Options) WithDefaults() Options {
	if o.IngressClass == "" {
		o.IngressClass = DefaultIngressClass
	}
	if o.ControllerName == "" {
		o.ControllerName = DefaultControllerName
	}
	return o
}

// Finding is something worth telling the Ingress's owner about its class.
type Finding struct {
	// Ingress is the Ingress the finding is about.
	Ingress *networkingv1.Ingress
	// Reason is ReasonClassNotFound or ReasonClassConflict.
	Reason string
	// Field is the field path the finding is about.
	Field string
	// Message explains the finding to the Ingress's owner.
	Message string
}

// Classifier answers Decide for one set of IngressClasses and options. Build
// it once per snapshot with New; it is read-only afterwards.
type Classifier struct {
	opts Options
	// owner maps an IngressClass name to whether its controller is ours.
	owner map[string]bool
	// defaultClass: one of our IngressClasses is marked the cluster default.
	defaultClass bool
}

// New indexes classes for Decide. A nil entry is skipped. Should a class
// name appear twice, it counts as ours when any copy is ours, so the answer
// does not depend on input order.
func New(classes []*networkingv1.IngressClass, o Options) *Classifier {
	o = o.WithDefaults()
	c := &Classifier{opts: o, owner: make(map[string]bool, len(classes))}
	controller := o.ControllerName
	for _, ic := range classes {
		if ic == nil {
			continue
		}
		ours := ic.Spec.Controller == controller
		c.owner[ic.Name] = c.owner[ic.Name] || ours
		if ours && ic.Annotations[networkingv1.AnnotationIsDefaultIngressClass] == "true" {
			c.defaultClass = true
		}
	}
	return c
}

// Decide reports whether ing is ours, and at most one finding about it.
// The first applicable step of SPEC §2 decides. An empty
// spec.ingressClassName counts as absent.
func (c *Classifier) Decide(ing *networkingv1.Ingress) (claimed bool, finding *Finding) {
	if ing == nil {
		return false, nil
	}
	className := ""
	if ing.Spec.IngressClassName != nil {
		className = *ing.Spec.IngressClassName
	}

	// Step 1: the annotation is decisive.
	if value, ok := ing.Annotations[AnnotationIngressClass]; ok {
		if value != c.opts.IngressClass {
			return false, nil
		}
		if className != "" && !c.owner[className] {
			where := "an IngressClass of another controller"
			if _, exists := c.owner[className]; !exists {
				where = "an IngressClass that does not exist"
			}
			return true, &Finding{
				Ingress: ing,
				Reason:  ReasonClassConflict,
				Field:   FieldIngressClassName,
				Message: "claimed by annotation " + AnnotationIngressClass + "=" + strconv.Quote(value) +
					", which is decisive; spec.ingressClassName " + strconv.Quote(className) + " names " + where +
					" and is ignored (ingress-nginx would not claim this Ingress)",
			}
		}
		return true, nil
	}

	if className != "" {
		ours, exists := c.owner[className]
		switch {
		case ours: // step 2
			return true, nil
		case exists: // step 3: another controller's, silently
			return false, nil
		default: // step 4
			return false, &Finding{
				Ingress: ing,
				Reason:  ReasonClassNotFound,
				Field:   FieldIngressClassName,
				Message: "IngressClass " + strconv.Quote(className) + " does not exist; the Ingress is not served",
			}
		}
	}

	// Step 5: no class at all.
	return c.defaultClass || c.opts.WatchWithoutClass, nil
}

// Claim returns the Ingresses that are ours, in input order, and the
// findings about all of them, in input order. Nil entries are skipped.
func Claim(ingresses []*networkingv1.Ingress, classes []*networkingv1.IngressClass, o Options) (claimed []*networkingv1.Ingress, findings []Finding) {
	c := New(classes, o)
	for _, ing := range ingresses {
		ok, f := c.Decide(ing)
		if ok {
			claimed = append(claimed, ing)
		}
		if f != nil {
			findings = append(findings, *f)
		}
	}
	return claimed, findings
}
