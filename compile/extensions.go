package compile

import (
	"fmt"
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

// readExtensions collects the Ingress's annotations under a registered
// prefix. Prefixes that do not validate were refused by Validate; Compile
// called without it skips them.
func (b *builder) readExtensions(ing *ingress) {
	if len(b.opts.ExtensionPrefixes) == 0 {
		return
	}
	var found map[string]string
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
