package compile

import (
	"fmt"

	networkingv1 "k8s.io/api/networking/v1"

	"ramjet.dev/ramjet/match"
)

// Field names of the default backends.
const (
	defaultBackendField = "spec.defaultBackend"
	// GlobalDefaultBackendField is the Source.Field of a fallback that is
	// the global default backend, and the Field of warnings about it.
	GlobalDefaultBackendField = "--default-backend"
)

// buildDefaultBackends gives every virtual host its fallback (SPEC §6).
//
//   - A named host: the spec.defaultBackend of the Ingress that created it;
//     a newer Ingress's never takes over.
//   - The catch-all: the spec.defaultBackend of the oldest Ingress that has
//     one and no rules at all; later ones get DefaultBackendConflict.
//   - Otherwise the global default backend, when it has ready endpoints;
//     else nil (404) and DefaultBackendUnavailable.
//
// A spec.defaultBackend that serves no host is still resolved, so a missing
// Service is reported, but the table does not list it.
func (b *builder) buildDefaultBackends() {
	for _, ing := range b.ingresses {
		if db := ing.obj.Spec.DefaultBackend; db != nil {
			ing.defaultBackendOK = b.checkBackendShape(ing, defaultBackendField, "", db)
		}
	}
	used := make(map[*ingress]*match.Backend)
	ingressDefault := func(ing *ingress) *match.Backend {
		be, ok := used[ing]
		if !ok {
			be = b.useBackend(ing, ing.obj.Spec.DefaultBackend.Service, defaultBackendField, ".service", true)
			used[ing] = be
		}
		return be
	}

	for _, v := range b.vhostOrder {
		if v == b.catchAll {
			continue
		}
		if v.creator != nil && v.creator.defaultBackendOK {
			v.vh.Fallback = ingressDefault(v.creator)
			v.vh.FallbackSource = v.creator.source(defaultBackendField)
			v.vh.FallbackPortName = portName(v.vh.Fallback, v.creator.obj.Spec.DefaultBackend.Service.Port)
		} else {
			b.globalFallback(v)
		}
	}

	var winner *ingress
	losers := make(map[*ingress]bool)
	for _, ing := range b.ingresses {
		if len(ing.obj.Spec.Rules) != 0 || !ing.defaultBackendOK {
			continue
		}
		if winner == nil {
			winner = ing
			continue
		}
		losers[ing] = true
		b.conflict(DefaultBackendConflict, ing.ref(), defaultBackendField,
			"the catch-all's fallback is the spec.defaultBackend of the oldest Ingress without rules; this one is not served",
			winner.ref(), defaultBackendField)
	}
	if winner != nil {
		b.catchAll.vh.Fallback = ingressDefault(winner)
		b.catchAll.vh.FallbackSource = winner.source(defaultBackendField)
		b.catchAll.vh.FallbackPortName = portName(b.catchAll.vh.Fallback, winner.obj.Spec.DefaultBackend.Service.Port)
		b.catchAll.settingsFrom = winner
		b.warnRootOverCatchAllDefault(winner)
	} else {
		b.globalFallback(b.catchAll)
	}

	for _, ing := range b.ingresses {
		if _, done := used[ing]; ing.defaultBackendOK && !done && !losers[ing] {
			b.useBackend(ing, ing.obj.Spec.DefaultBackend.Service, defaultBackendField, ".service", false)
		}
	}
}

// warnRootOverCatchAllDefault tells winner, whose spec.defaultBackend is
// the catch-all's fallback, about each served hostless path that takes
// every request from it here (SPEC §6) and that ingress-nginx drops
// instead: its catch-all root location, once an Ingress without rules
// holds it, is kept against any later path "/" of the same type, and
// SetDefaultNGINXPathType reads a missing or ImplementationSpecific type
// as Prefix (controller.go getBackendServers).
func (b *builder) warnRootOverCatchAllDefault(winner *ingress) {
	served := make(map[match.Source]bool)
	for _, r := range b.catchAll.vh.Routes {
		if r.Source.Kind == "" && r.When == nil {
			served[r.Source] = true
		}
	}
	for _, ing := range b.ingresses {
		for i := range ing.obj.Spec.Rules {
			rule := &ing.obj.Spec.Rules[i]
			if ing.rules[i].vhost != b.catchAll || rule.HTTP == nil {
				continue
			}
			for j := range rule.HTTP.Paths {
				p := &rule.HTTP.Paths[j]
				field := pathField(i, j)
				if declaredPath(p) != "/" || pathTypeOf(p) == networkingv1.PathTypeExact || !served[ing.source(field)] {
					continue
				}
				b.conflict(DefaultBackendConflict, winner.ref(), defaultBackendField,
					fmt.Sprintf("the catch-all's fallback is this spec.defaultBackend, but the hostless path \"/\" of Ingress %s matches every request it would serve, and a declared path outranks a fallback (SPEC §6); ingress-nginx keeps this default backend there and does not serve that path, whatever the Ingresses' ages",
						ing.name()),
					ing.ref(), field)
			}
		}
	}
}

// globalFallback makes the global default backend v's fallback if it can
// serve. It is resolved, and warned about, once.
func (b *builder) globalFallback(v *vhost) {
	if !b.resolveGlobal() {
		return
	}
	if b.global.issue().problem != "" || len(b.global.backend.b.Endpoints) == 0 {
		return
	}
	b.global.backend.used = true
	v.vh.Fallback = b.global.backend.b
	v.vh.FallbackSource = match.Source{Field: GlobalDefaultBackendField}
	v.vh.FallbackPortName = 0
}

// resolveGlobal resolves the global default backend into b.global, and
// warns about it, once, whether fallbacks or error pages use it; false
// without one.
func (b *builder) resolveGlobal() bool {
	ref := b.opts.DefaultBackend
	if ref == nil {
		return false
	}
	if b.global != nil {
		return true
	}
	b.global = b.resolve(ref.Namespace, ref.Name, ref.Port)
	object := Ref{Kind: "Service", Namespace: ref.Namespace, Name: ref.Name}
	if b.global.issue().targetMsg != "" {
		b.warn(PortMatchedTargetPort, object, GlobalDefaultBackendField, b.global.issue().targetMsg)
	}
	if why := b.global.issue().message; why != "" {
		b.warn(DefaultBackendUnavailable, object, GlobalDefaultBackendField,
			"global default backend "+ref.String()+": "+why+"; unmatched requests answer 404")
	} else if len(b.global.backend.b.Endpoints) == 0 {
		b.warn(DefaultBackendUnavailable, object, GlobalDefaultBackendField,
			"global default backend "+ref.String()+" has no ready endpoints; unmatched requests answer 404")
	}
	return true
}

// applyFallbackSettings sets each virtual host's own location settings,
// used when no route matches: from the Ingress that supplies them (the
// creator, or the catch-all's fallback Ingress), else the options and the
// ConfigMap's location defaults. ingress-nginx applies an Ingress's
// annotations to the default location it creates for it, so the fallback
// gets that Ingress's redirects and location, as its routes do (SPEC §6).
// Routes got theirs from their own Ingress when declared.
func (b *builder) applyFallbackSettings() {
	for _, v := range b.vhostOrder {
		ing := v.settingsFrom
		if ing != nil {
			v.vh.SSLRedirect, v.vh.ForceSSLRedirect = ing.redirects(b.opts)
			v.vh.PreserveTrailingSlash = ing.ann.preserveTrailingSlash
			v.vh.UsePortInRedirects = ing.ann.usePortInRedirects
		} else {
			v.vh.SSLRedirect = !b.opts.DisableSSLRedirect
			if ing = b.fallbackDefaults(); ing != nil {
				v.vh.ForceSSLRedirect = ing.ann.forceSSLRedirect
				v.vh.PreserveTrailingSlash = ing.ann.preserveTrailingSlash
				v.vh.UsePortInRedirects = ing.ann.usePortInRedirects
			}
		}
		if v == b.catchAll {
			// ingress-nginx gives its catch-all location the Ingress's
			// annotations but keeps its own rewrite settings, whose
			// force-ssl-redirect is false, ConfigMap or not.
			v.vh.ForceSSLRedirect = false
		}
		if ing != nil {
			v.vh.FallbackLocation = b.location(ing, nil, v)
		} else {
			v.vh.FallbackLocation.Tracing = b.tracing(nil)
		}
	}
}
