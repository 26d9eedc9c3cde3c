package compile

import (
	"net/netip"
	"strconv"
	"strings"

	"ramjet.dev/ramjet/match"
)

// service-upstream and default-backend (SPEC §11.1): where a backend's
// requests are dialled, read with the redirect and host annotations
// (withhold.go) and applied once each backend knows the Ingresses serving
// it.
func init() {
	registerAnnotations(map[string]annotationSpec{
		"service-upstream": {apply: recordRedirect(func(r *redirectAnnotations) *annValue { return &r.serviceUpstream })},
		"default-backend":  {apply: recordRedirect(func(r *redirectAnnotations) *annValue { return &r.defaultBackend })},
	})
}

// applyBackendAnnotations applies service-upstream and the default-backend
// annotation to the backends and routes, once each backend knows the
// Ingresses serving it (orderClaims) and before its protocol and balancing
// are decided from them.
func (b *builder) applyBackendAnnotations() {
	for _, bi := range b.backendList {
		if len(bi.claims) == 0 {
			continue
		}
		owner := bi.claims[0]
		on := owner.redirectAnns().upstream
		for _, ing := range bi.claims[1:] {
			if ing.redirectAnns().upstream == on {
				continue
			}
			key := ing.redirectAnns().serviceUpstream.key
			if key == "" || strings.HasPrefix(key, configMapKeyName) {
				key = NativePrefix + "service-upstream"
			}
			b.conflict(AnnotationConflict, ing.ref(), annotationField(key),
				"backend "+bi.b.ID+" is dialled at "+upstreamText(on)+
					", as the oldest Ingress serving it decides; this Ingress asks for "+upstreamText(!on),
				owner.ref(), "")
		}
		if on {
			b.useClusterIP(owner, bi)
		}
	}
	b.applyDefaultBackendAnnotation()
}

func upstreamText(on bool) string {
	if on {
		return "the Service's cluster IP (service-upstream)"
	}
	return "its endpoints"
}

// useClusterIP makes the Service's cluster IP and port the backend's only
// endpoint (service-upstream), as ingress-nginx does: kube-proxy then
// balances. A headless Service has none, and keeps its endpoints, as there.
// The address rules of SPEC §8 hold for the cluster IP too.
func (b *builder) useClusterIP(owner *ingress, bi *backendInfo) {
	be := bi.b
	if be.State != match.Serving {
		return
	}
	svc := b.serviceEntry(be.Namespace, be.Name).svc
	ip := svc.Spec.ClusterIP
	addr, err := netip.ParseAddr(ip)
	if err != nil {
		a := owner.redirectAnns().serviceUpstream
		b.warn(AnnotationRejected, owner.ref(), annotationField(a.key),
			"Service "+be.Namespace+"/"+be.Name+" has no cluster IP (headless); backend "+be.ID+" keeps its endpoints, as in ingress-nginx")
		return
	}
	if why := b.notPod(addr); why != "" {
		b.warn(EndpointRejected, Ref{Kind: "Service", Namespace: be.Namespace, Name: be.Name}, "spec.clusterIP",
			"cluster IP "+ip+" is "+why+" and is not dialled; backend "+be.ID+" (service-upstream) has no endpoints")
		be.Endpoints = nil
		return
	}
	be.Endpoints = []string{netip.AddrPortFrom(addr.WithZone("").Unmap(), uint16(be.Port)).String()}
}

// applyDefaultBackendAnnotation sends the routes of an Ingress with the
// default-backend annotation to that Service (its first port, as in
// ingress-nginx) while their own Service has no endpoints: missing, port
// missing, or none ready. A default Service without ready endpoints is not
// used. Since endpoints are in the snapshot, this is decided per table.
func (b *builder) applyDefaultBackendAnnotation() {
	chosen := make(map[*ingress]*backendInfo)
	for _, ing := range b.ingresses {
		r := ing.redirectAnns()
		if r.defaultService == "" {
			continue
		}
		field := annotationField(r.defaultBackend.key)
		svc := b.serviceEntry(ing.obj.Namespace, r.defaultService).svc
		switch {
		case svc == nil:
			b.warn(ServiceNotFound, ing.ref(), field,
				"default-backend Service "+ing.obj.Namespace+"/"+r.defaultService+" not found; not applied")
		case len(svc.Spec.Ports) == 0:
			b.warn(ServicePortNotFound, ing.ref(), field,
				"default-backend Service "+ing.obj.Namespace+"/"+r.defaultService+" has no ports; not applied")
		default:
			chosen[ing] = b.resolve(ing.obj.Namespace, r.defaultService, strconv.Itoa(int(svc.Spec.Ports[0].Port))).backend
		}
	}
	if len(chosen) == 0 {
		return
	}
	substituted := false
	for _, v := range b.vhostOrder {
		// The host's default location carries its settings Ingress's
		// annotations there: a fallback that is that Ingress's own
		// spec.defaultBackend falls back too. The global default backend
		// is never replaced.
		if ing := b.ingressOf(v.vh.FallbackSource); ing != nil && ing == v.settingsFrom {
			if def := chosen[ing]; def != nil && v.vh.Fallback != nil && withoutEndpoints(v.vh.Fallback) && def.b.Servable() {
				b.rewordUnavailable(ing, defaultBackendField, def.b.ID)
				v.vh.Fallback, v.vh.FallbackPortName = def.b, 0
				def.used = true
				def.claims = append(def.claims, ing)
				substituted = true
			}
		}
		for _, r := range v.vh.Routes {
			ing := b.ingressOf(r.Source)
			def := chosen[ing]
			if def == nil || !withoutEndpoints(r.Backend) || !def.b.Servable() {
				continue
			}
			b.rewordUnavailable(ing, r.Source.Field, def.b.ID)
			r.Backend, r.PortName = def.b, 0
			def.used = true
			def.claims = append(def.claims, ing)
			substituted = true
		}
	}
	if substituted {
		b.orderClaims()
	}
}

// rewordUnavailable corrects what the warnings about a route's missing
// Service or port say happens: its requests go to the default backend.
func (b *builder) rewordUnavailable(ing *ingress, field, to string) {
	if field != defaultBackendField {
		field += ".backend"
	}
	for i := range b.warnings {
		w := &b.warnings[i]
		if w.Object == ing.ref() && (w.Reason == ServiceNotFound || w.Reason == ServicePortNotFound) &&
			strings.HasPrefix(w.Field, field+".service") {
			w.Message = strings.TrimSuffix(w.Message, "; requests answer 503") + "; requests go to " + to + " (default-backend annotation)"
		}
	}
}

// withoutEndpoints reports a backend ingress-nginx's upstream for it would
// have no endpoints for: its Service or port missing, or none ready. An
// ExternalName Service has its DNS name there.
func withoutEndpoints(be *match.Backend) bool {
	switch be.State {
	case match.ServiceNotFound, match.PortNotFound:
		return true
	case match.Serving:
		return len(be.Endpoints) == 0
	}
	return false
}

// resolveBackendAnnotations reads service-upstream and default-backend.
// ingress-nginx reads a service-upstream that is not a boolean as false,
// and ignores the whole Ingress over a default-backend that is not a
// DNS-1035 label.
func (b *builder) resolveBackendAnnotations(ing *ingress, r *redirectAnnotations) {
	if a := r.serviceUpstream; a.set() {
		on, err := strconv.ParseBool(a.value)
		switch {
		case err == nil:
			r.upstream = on
		case a.native():
			b.rejectAnnotation(ing, a, "is not a boolean (true or false)", "not applied")
		default:
			b.rejectAnnotation(ing, a, "is not a boolean (true or false)", "read as false, as in ingress-nginx")
		}
	}
	if a := r.defaultBackend; a.set() {
		switch why := invalidDNSLabel(a.value); {
		case why == "":
			r.defaultService = a.value
		case a.native() || a.value == "":
			b.rejectAnnotation(ing, a, why, "not applied")
		default:
			b.withhold(ing, r, a, why)
		}
	}
}

// invalidDNSLabel checks a Service name: a DNS-1035 label.
func invalidDNSLabel(s string) string {
	switch {
	case s == "":
		return "is empty"
	case len(s) > 63:
		return "is longer than 63 characters, so it names no Service"
	case s[0] < 'a' || s[0] > 'z':
		return "does not start with a lower-case letter, so it names no Service"
	case s[len(s)-1] == '-':
		return "ends in '-', so it names no Service"
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return "contains " + strconv.QuoteRune(rune(c)) + ", so it names no Service (a DNS-1035 label)"
		}
	}
	return ""
}
