package compile

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"ramjet.dev/ramjet/match"
)

// Embedder annotations (Options.ExtensionPrefixes). An embedder that adds
// its own per-Ingress behaviour (an auth check, a rate limit) through
// router.Hook registers the annotation prefix it reads; annotations under
// it are then carried into the table on every route of their Ingress, as
// written, and never warned about. ramjet neither parses nor validates
// them: that is the hook's business.
//
// An embedder that serves an ingress-nginx annotation ramjet does not
// implement (the example controller serves ModSecurity with Coraza) names
// it in Options.ExtensionKeys: the annotation is then carried the same
// way, under its name alone, instead of warning AnnotationUnsupported.

// extensionPrefix normalizes a registered prefix: a DNS subdomain with one
// trailing "/" ("example.com/").
func extensionPrefix(p string) (string, error) {
	name := strings.TrimSuffix(p, "/")
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return "", fmt.Errorf("option extension prefix %q: %s", p, strings.Join(errs, "; "))
	}
	prefix := name + "/"
	if prefix == NativePrefix || prefix == NginxPrefix {
		return "", fmt.Errorf("option extension prefix %q: reserved for ramjet's own annotations", p)
	}
	return prefix, nil
}

// validateExtensionPrefixes is Options.Validate's check of the prefixes.
func (o Options) validateExtensionPrefixes() error {
	for _, p := range o.ExtensionPrefixes {
		if _, err := extensionPrefix(p); err != nil {
			return err
		}
	}
	return nil
}

// extensionKey checks an ExtensionKeys name: one ingress-nginx reads as
// an annotation and ramjet does not implement, so that the hook never
// doubles a behaviour ramjet already applies.
func extensionKey(name string) error {
	if !nginxAnnotations[name] {
		return fmt.Errorf("option extension key %q: not an annotation ingress-nginx reads", name)
	}
	if spec := knownAnnotations[name]; spec.apply != nil {
		return fmt.Errorf("option extension key %q: implemented by ramjet", name)
	}
	return nil
}

// validateExtensionKeys is Options.Validate's check of the keys.
func (o Options) validateExtensionKeys() error {
	for _, k := range o.ExtensionKeys {
		if err := extensionKey(k); err != nil {
			return err
		}
	}
	return nil
}

// embedderServes reports whether the annotation name (without prefix) is
// one of Options.ExtensionKeys, which readExtensions carries instead of
// warning. Keys that do not validate are never served: Compile called
// without Validate reads them as any other.
func (b *builder) embedderServes(name string) bool {
	return len(b.opts.ExtensionKeys) > 0 && slices.Contains(b.opts.ExtensionKeys, name) && extensionKey(name) == nil
}

// criticalRisk are the ingress-nginx annotations an embedder may serve
// that ingress-nginx rates Critical (internal/ingress/annotations/*:
// modsecurity-snippet is raw rule-language configuration).
var criticalRisk = map[string]bool{"modsecurity-snippet": true}

// readExtensions collects the Ingress's annotations under a registered
// prefix, and those named by ExtensionKeys under their name alone.
// Prefixes that do not validate were refused by Validate; Compile called
// without it skips them.
func (b *builder) readExtensions(ing *ingress) {
	if len(b.opts.ExtensionPrefixes) == 0 && len(b.opts.ExtensionKeys) == 0 {
		return
	}
	var found map[string]string
	for _, name := range b.opts.ExtensionKeys {
		key := NativePrefix + name
		value, ok := ing.obj.Annotations[key]
		if !ok {
			key = NginxPrefix + name
			value, ok = ing.obj.Annotations[key]
		}
		if ok && criticalRisk[name] && !b.opts.SnippetsEnabled() {
			// ingress-nginx drops a Critical-risk annotation (a snippet of
			// nginx or rule-language configuration) unless snippets are
			// allowed, so the embedder never sees it either. The nginx
			// key has its warning already (criticalOff).
			if key != NginxPrefix+name {
				b.warn(SnippetNoEffect, ing.ref(), annotationField(key),
					"a Critical-risk annotation: off unless allow-snippet-annotations is true and annotations-risk-level Critical, as under ingress-nginx")
			}
			continue
		}
		if ok && b.embedderServes(name) {
			if found == nil {
				found = make(map[string]string)
			}
			found[name] = value
		}
	}
	for _, p := range b.opts.ExtensionPrefixes {
		prefix, err := extensionPrefix(p)
		if err != nil {
			continue
		}
		for key, value := range ing.obj.Annotations {
			if strings.HasPrefix(key, prefix) && len(key) > len(prefix) {
				if found == nil {
					found = make(map[string]string)
				}
				found[key] = value
			}
		}
	}
	ing.ann.extensions = match.NewExtensions(found)
}
