package compile

import (
	"cmp"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"ramjet.dev/ramjet/match"
)

// ingressOf finds the claimed Ingress that declared src; nil for what no
// Ingress declared.
func (b *builder) ingressOf(src match.Source) *ingress {
	if src.Name == "" {
		return nil
	}
	if b.byKey == nil {
		b.byKey = make(map[objKey]*ingress, len(b.ingresses))
		for _, ing := range b.ingresses {
			b.byKey[objKey{ing.obj.Namespace, ing.obj.Name}] = ing
		}
	}
	return b.byKey[objKey{src.Namespace, src.Name}]
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
			if key == "" {
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
				v.vh.Fallback = def.b
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
			r.Backend = def.b
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

// applyHostActions attaches the redirect annotations to the table: each
// route's redirect, each host's app-root, fallback redirect, aliases and
// www redirect (SPEC §11). It runs after buildTLS, since aliases and www
// names are served their host's certificate.
func (b *builder) applyHostActions() {
	if !slices.ContainsFunc(b.ingresses, func(ing *ingress) bool { return ing.ann.redirect != nil }) {
		return // the common case: nothing to attach, no index to build
	}
	hosts := slices.Clone(b.vhostOrder)
	www := make(map[*vhost]*ingress)
	for _, v := range hosts {
		for _, r := range v.vh.Routes {
			ing := b.ingressOf(r.Source)
			if ing == nil {
				continue
			}
			r.Redirect = ing.redirectAnns().route
			if ing.redirectAnns().wwwOn && www[v] == nil {
				www[v] = ing
			}
		}
		if c := v.creator; c != nil && c.redirectAnns().route != nil {
			actions(v).Fallback = c.redirectAnns().route
		}
		b.appRoot(v)
	}
	certs := b.certsByHost()
	wwwNames := b.wwwRedirects(hosts, www, certs)
	b.aliases(wwwNames, certs)
	for _, c := range b.certs {
		slices.Sort(c.Hosts)
	}
}

func actions(v *vhost) *match.HostActions {
	if v.vh.Actions == nil {
		v.vh.Actions = &match.HostActions{}
	}
	return v.vh.Actions
}

// appRoot sets the host's app-root. ingress-nginx writes one
// "if ($uri = /) { return 302 ... }" into the server for every location
// whose Ingress sets app-root, in location order (longest path first, then
// path descending), and the first one answers; the host's default location
// counts as "/" with the creator's annotations unless a Prefix "/" route
// replaced it. Others that ask for a different app-root get
// AnnotationConflict.
func (b *builder) appRoot(v *vhost) {
	type candidate struct {
		ing   *ingress
		path  string
		order int
	}
	var cands []candidate
	root := false
	for _, r := range v.vh.Routes {
		path := r.Path
		if r.Type == match.Prefix && path == "" {
			path, root = "/", true
		}
		if ing := b.ingressOf(r.Source); ing != nil && ing.redirectAnns().appRootPath != "" {
			cands = append(cands, candidate{ing, path, r.Order})
		}
	}
	if c := v.creator; c != nil && !root && c.redirectAnns().appRootPath != "" {
		cands = append(cands, candidate{c, "/", 0})
	}
	if len(cands) == 0 {
		return
	}
	slices.SortStableFunc(cands, func(x, y candidate) int {
		return cmp.Or(cmp.Compare(len(y.path), len(x.path)), strings.Compare(y.path, x.path), cmp.Compare(x.order, y.order))
	})
	win := cands[0].ing
	a := actions(v)
	a.AppRoot, a.AppRootSource = win.redirectAnns().appRootPath, win.source("")
	a.AppRootSource.Field = annotationField(win.redirectAnns().appRoot.key)
	for _, c := range cands[1:] {
		if c.ing == win || c.ing.redirectAnns().appRootPath == a.AppRoot {
			continue
		}
		b.conflict(AnnotationConflict, c.ing.ref(), annotationField(c.ing.redirectAnns().appRoot.key),
			hostLabel(v.vh.Name)+" sends / to app-root "+strconv.Quote(a.AppRoot)+
				": of the app-roots on one host, the one on the longest path answers first, as in ingress-nginx; this Ingress's "+
				strconv.Quote(c.ing.redirectAnns().appRootPath)+" is not used",
			win.ref(), a.AppRootSource.Field)
	}
}

// certsByHost maps each host a certificate is chosen for to it, with the
// parsed Secret that says which further names it covers.
func (b *builder) certsByHost() map[string]*parsedSecret {
	bySecret := make(map[*match.Certificate]*parsedSecret, len(b.parsed))
	for _, ps := range b.parsed {
		if ps.cert != nil {
			bySecret[ps.cert] = ps
		}
	}
	m := make(map[string]*parsedSecret)
	for _, c := range b.certs {
		for _, h := range c.Hosts {
			if _, taken := m[h]; !taken {
				m[h] = bySecret[c]
			}
		}
	}
	return m
}

// shareCertificate serves host's certificate for name too (an alias or a
// www name), when it is valid for name and name has none of its own, as
// ingress-nginx does; otherwise name gets the default certificate.
func shareCertificate(certs map[string]*parsedSecret, host, name string) {
	ps := certs[host]
	if ps == nil || certs[name] != nil || !ps.covers(name) {
		return
	}
	ps.cert.Hosts = append(ps.cert.Hosts, name)
	certs[name] = ps
}

// wwwRedirects creates the redirect-only hosts of from-to-www-redirect, as
// ingress-nginx's BuildRedirects: a host any of whose routes comes from an
// Ingress with the annotation gets a server for its www twin ("www." added,
// or removed when the host starts with it) that answers every request with
// a 308 to the host. No twin is made when the twin is a host of its own
// (AnnotationConflict naming its creator). It returns the twins' names.
func (b *builder) wwwRedirects(hosts []*vhost, www map[*vhost]*ingress, certs map[string]*parsedSecret) map[string]bool {
	names := make(map[string]bool)
	for _, v := range hosts {
		ing := www[v]
		if ing == nil || v.vh.Name == "" {
			continue
		}
		a := ing.redirectAnns().fromToWWW
		to := v.vh.Name
		if strings.HasPrefix(to, "*.") {
			b.rejectAnnotation(ing, a, "applies to the wildcard host "+strconv.Quote(to)+", which has no www twin", "no redirect is made for it")
			continue
		}
		from, ok := strings.CutPrefix(to, "www.")
		if !ok {
			from = "www." + to
		}
		if invalidHost(from) != "" {
			b.rejectAnnotation(ing, a, "would redirect from "+strconv.Quote(from)+", which is not a valid host name", "no redirect is made for it")
			continue
		}
		if other := b.vhosts[from]; other != nil {
			msg := hostLabel(to) + ": no redirect from " + strconv.Quote(from) + ", which is a host of its own, as in ingress-nginx"
			if other.creator == nil {
				b.warn(AnnotationConflict, ing.ref(), annotationField(a.key), msg)
			} else {
				b.conflict(AnnotationConflict, ing.ref(), annotationField(a.key), msg, other.creator.ref(), "")
			}
			continue
		}
		nv := b.newVhost(from, nil)
		nv.vh.Actions = &match.HostActions{WWWTo: to}
		_, nv.vh.TLS = slices.BinarySearch(b.tlsHosts, from)
		names[from] = true
		shareCertificate(certs, to, from)
	}
	return names
}

// aliases applies server-alias as ingress-nginx does: for each host, the
// first Ingress in Ingress order with a rule for it and aliases sets them
// (later ones get AnnotationConflict); an alias that is the host itself is
// dropped, one that is another host (or a www twin, whose redirect server
// nginx meets first) is dropped with AnnotationConflict, and of two hosts
// with one alias the first by name keeps it.
func (b *builder) aliases(wwwNames map[string]bool, certs map[string]*parsedSecret) {
	from := make(map[*vhost]*ingress)
	var order []*vhost
	for _, ing := range b.ingresses {
		mine := ing.redirectAnns().aliases
		for _, rh := range ing.rules {
			v := rh.vhost
			if v == nil || v == b.catchAll {
				continue
			}
			owner := from[v]
			switch {
			case owner == nil && len(mine) > 0:
				from[v] = ing
				order = append(order, v)
			case owner != nil && owner != ing && len(mine) > 0 && !slices.Equal(owner.redirectAnns().aliases, mine):
				b.conflict(AnnotationConflict, ing.ref(), annotationField(ing.redirectAnns().alias.key),
					hostLabel(v.vh.Name)+" already has the aliases of an older Ingress; this Ingress's are not applied, as in ingress-nginx",
					owner.ref(), annotationField(owner.redirectAnns().alias.key))
			}
		}
	}
	slices.SortFunc(order, func(x, y *vhost) int { return strings.Compare(x.vh.Name, y.vh.Name) })
	taken := make(map[string]*vhost)
	for _, v := range order {
		ing := from[v]
		field := annotationField(ing.redirectAnns().alias.key)
		var kept []string
		for _, name := range ing.redirectAnns().aliases {
			other := b.vhosts[name]
			switch {
			case name == v.vh.Name:
				continue
			case wwwNames[name]:
				b.warn(AnnotationConflict, ing.ref(), field,
					hostLabel(v.vh.Name)+": alias "+strconv.Quote(name)+" is a from-to-www-redirect name, which redirects; the alias is not served")
				continue
			case other != nil:
				msg := hostLabel(v.vh.Name) + ": alias " + strconv.Quote(name) + " is a host of its own; the alias is not served"
				if other.creator == nil {
					b.warn(AnnotationConflict, ing.ref(), field, msg)
				} else {
					b.conflict(AnnotationConflict, ing.ref(), field, msg, other.creator.ref(), "")
				}
				continue
			case taken[name] != nil:
				w := taken[name]
				b.conflict(AnnotationConflict, ing.ref(), field,
					hostLabel(v.vh.Name)+": alias "+strconv.Quote(name)+" is already an alias of "+hostLabel(w.vh.Name)+", which comes first by name; it is not served here",
					from[w].ref(), annotationField(from[w].ann.redirect.alias.key))
				continue
			}
			taken[name] = v
			kept = append(kept, name)
			shareCertificate(certs, v.vh.Name, name)
		}
		if len(kept) > 0 {
			actions(v).Aliases = kept
		}
	}
}
