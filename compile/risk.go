package compile

import (
	"cmp"
	"strings"
)

// criticalAnnotations are the annotations ingress-nginx v1.15 rates
// Critical (internal/ingress/annotations: snippet, serversnippet,
// authreq's auth-snippet, modsecurity, streamsnippet). Its
// annotations-risk-level, High by default, refuses an Ingress that
// carries one at all (the annotation extractor fails, so the admission
// webhook refuses it and the sync leaves it out); at Critical,
// allow-snippet-annotations false drops the five and serves the rest.
var criticalAnnotations = setOf("auth-snippet", "configuration-snippet", "modsecurity-snippet", "server-snippet", "stream-snippet")

// refusesCritical reports whether annotations-risk-level refuses
// Critical-risk annotations ("" is ingress-nginx's default, High).
func (o Options) refusesCritical() bool {
	return !strings.EqualFold(strings.TrimSpace(o.AnnotationsRiskLevel), "Critical")
}

// criticalOff warns about the nginx annotation key (name without prefix)
// when it is Critical-risk and snippets are off, and reports whether it
// did: the key is then read no further. Under the default risk level
// ingress-nginx refuses the whole Ingress, which ramjet serves: traffic
// moves. With only allow-snippet-annotations false, ingress-nginx drops
// the annotation, as ramjet does: nothing moves.
func (b *builder) criticalOff(ing *ingress, key, name string) bool {
	if !criticalAnnotations[name] || b.opts.SnippetsEnabled() {
		return false
	}
	if b.opts.refusesCritical() {
		level := cmp.Or(strings.TrimSpace(b.opts.AnnotationsRiskLevel), "High")
		b.warn(SnippetAnswerIgnored, ing.ref(), annotationField(key),
			key+" is a Critical-risk annotation and annotations-risk-level is "+level+
				": ingress-nginx refuses the whole Ingress (its admission webhook at apply, its sync otherwise); ramjet serves it without the annotation")
		return true
	}
	b.warn(SnippetNoEffect, ing.ref(), annotationField(key),
		"snippets are off (allow-snippet-annotations is false, ingress-nginx's default): "+key+" does nothing, as under ingress-nginx")
	return true
}
