package gatewayapi

import (
	"slices"

	"ramjet.dev/ramjet/match"
)

// guarded finds the Ingresses whose routes check a request before serving
// it in a way no Gateway API filter ramjet serves expresses:
// authentication (auth-url, auth-type), client address ranges
// (whitelist-, allowlist-, denylist-source-range), a web application
// firewall (ModSecurity) and a snippet that can answer a request itself
// (allow, deny, return: what people write access checks with). Their
// routes are not converted at all, and each is listed with the
// annotation, so that the migration never serves unchecked what the
// Ingress checked (it never fails open, SPEC §20). Checks of a whole host
// (client certificates, server-snippet locations) are guardedHost's.
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
		if sn := loc.Snippet; sn != nil && (len(sn.Access) > 0 || answers(sn.Ops)) {
			key := "configuration-snippet"
			if len(sn.Access) == 0 && !answers(sn.Ops[sn.Server:]) {
				key = "server-snippet"
			}
			withhold([]string{key}, "a snippet that can answer a request itself (allow, deny, return)")
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

// answers reports whether ops can answer a request themselves (a return,
// or a rewrite that redirects), at any depth.
func answers(ops []match.SnippetOp) bool {
	for _, op := range ops {
		if op.Kind == match.OpReturn || op.Kind == match.OpRewrite && (op.Flag == "redirect" || op.Flag == "permanent") || answers(op.Then) {
			return true
		}
	}
	return false
}

// guardedHost lists every Ingress with a route on vh when the host checks
// or answers requests before any route does, in a way the Gateway API
// objects cannot carry: client certificates (auth-tls-*, a listener's
// frontend TLS validation at best, not generated) or a server-snippet's
// location blocks (which may take, or deny, another Ingress's paths).
// Such a host is not converted at all: its routes would serve unchecked
// what the host checked.
func (c *converter) guardedHost(vh *match.VirtualHost) bool {
	var key, why string
	switch {
	case vh.ClientTLS != nil:
		key, why = "auth-tls-secret", "client certificate authentication of "+hostName(vh.Name)+" has no Gateway API form ramjet's migration generates"
	case len(vh.SnippetLocations) > 0:
		key, why = "server-snippet", "a server-snippet location block of "+hostName(vh.Name)+" answers requests before the Ingresses' paths, which no route carries"
	default:
		return false
	}
	note := func(src match.Source) {
		if src.Kind == "" && src.Name != "" && c.ingresses[nsName{src.Namespace, src.Name}] != nil {
			c.note(src.Namespace, src.Name, nginxPrefix+key, why+"; the host is not converted, so that no route serves its requests unchecked")
		}
	}
	for _, r := range vh.Routes {
		note(r.Source)
	}
	note(vh.FallbackSource)
	if vh.Actions != nil {
		note(vh.Actions.AppRootSource)
	}
	return true
}

// sharesWithheld reports whether a path of vh is an Ingress's that
// guarded withheld. The host is then not converted at all: the other
// Ingresses' paths there (a "/" above all) would take that Ingress's
// requests and serve them unchecked. Each of those Ingresses is listed.
func (c *converter) sharesWithheld(vh *match.VirtualHost) bool {
	ours := func(src match.Source) bool {
		return src.Kind == "" && src.Name != "" && c.ingresses[nsName{src.Namespace, src.Name}] != nil
	}
	i := slices.IndexFunc(vh.Routes, func(r *match.Route) bool {
		return ours(r.Source) && c.withheld[nsName{r.Source.Namespace, r.Source.Name}]
	})
	if i < 0 {
		return false
	}
	w := vh.Routes[i].Source
	note := func(src match.Source) {
		if ours(src) && !c.withheld[nsName{src.Namespace, src.Name}] {
			c.note(src.Namespace, src.Name, src.Field, hostName(vh.Name)+" also serves Ingress "+w.Namespace+"/"+w.Name+
				", which is not converted for its check; the host is not converted, so that no route serves that Ingress's requests unchecked")
		}
	}
	for _, r := range vh.Routes {
		note(r.Source)
	}
	if vh.Fallback != nil {
		note(vh.FallbackSource)
	}
	return true
}
