package gatewayapi

import (
	"ramjet.dev/ramjet/match"
)

// guarded finds the Ingresses whose routes check a request before serving
// it in a way no Gateway API filter ramjet serves expresses:
// authentication (auth-url, auth-type), client address ranges
// (whitelist-, allowlist-, denylist-source-range) and a web application
// firewall (ModSecurity). Their routes are not converted at all, and each
// is listed with the annotation, so that the migration never serves
// unchecked what the Ingress checked (it never fails open, SPEC §20).
func (c *converter) guarded(tab *match.Table) {
	c.withheld = make(map[nsName]bool)
	check := func(src match.Source, loc match.Location) {
		if src.Kind != "" || src.Name == "" {
			return
		}
		k := nsName{src.Namespace, src.Name}
		ing := c.ingresses[k]
		if ing == nil {
			return
		}
		withhold := func(keys []string, what string) {
			key := nginxPrefix + keys[0]
			for _, short := range keys {
				if _, ok := ing.Annotations[nginxPrefix+short]; ok {
					key = nginxPrefix + short
					break
				}
			}
			c.withheld[k] = true
			c.note(k.ns, k.name, key, what+" has no Gateway API filter ramjet serves; the Ingress is not converted, so that no route serves its requests unchecked")
		}
		if loc.Auth != nil {
			withhold([]string{"auth-url", "auth-type"}, "authentication")
		}
		if p := loc.Policy; p != nil && (p.Allow != nil || len(p.Deny) > 0 || p.DenyAll) {
			withhold([]string{"whitelist-source-range", "allowlist-source-range", "denylist-source-range"}, "a client address restriction")
		}
		a := ing.Annotations
		if a[nginxPrefix+"enable-modsecurity"] == "true" || a[nginxPrefix+"enable-owasp-core-rules"] == "true" || a[nginxPrefix+"modsecurity-snippet"] != "" {
			withhold([]string{"enable-modsecurity", "enable-owasp-core-rules", "modsecurity-snippet"}, "a web application firewall")
		}
	}
	for vh := range tab.VirtualHosts() {
		for _, r := range vh.Routes {
			check(r.Source, r.Location)
		}
		if vh.Fallback != nil {
			check(vh.FallbackSource, vh.FallbackLocation)
		}
	}
}
