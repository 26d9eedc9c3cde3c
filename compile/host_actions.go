package compile

import (
	"cmp"
	"net/url"
	"slices"
	"strconv"
	"strings"

	networkingv1 "k8s.io/api/networking/v1"

	"ramjet.dev/ramjet/match"
)

// The host actions (SPEC §11.1): app-root, server-alias and the twins of
// from-to-www-redirect, read here and attached to the table with each
// route's redirect (route_redirect.go), once hosts and certificates are
// known.
func init() {
	registerAnnotations(map[string]annotationSpec{
		"app-root":     {apply: recordRedirect(func(r *redirectAnnotations) *annValue { return &r.appRoot })},
		"server-alias": {apply: recordRedirect(func(r *redirectAnnotations) *annValue { return &r.alias })},
	})
}

// applyHostActions attaches the redirect annotations to the table: each
// route's redirect, each host's app-root, fallback redirect, aliases and
// www redirect (SPEC §11.1). It runs after buildTLS, since aliases and www
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
// whose Ingress sets app-root, in location order, and the first one
// answers. That order is getBackendServers': longest path first, then path
// descending, then insertion, on the paths as declared (before
// updateServerLocations adds a Prefix path's slash). The host's default
// location, inserted first, counts as "/" with the creator's annotations,
// unless a "/" path that is not Exact took its place (and its rank) with
// its own Ingress's. Others that ask for a different app-root get
// AnnotationConflict.
func (b *builder) appRoot(v *vhost) {
	type candidate struct {
		ing   *ingress
		path  string
		order int32
	}
	var cands []candidate
	root := false
	for _, r := range v.vh.Routes {
		path, order, replaces := r.Path, r.Order, r.Type == match.Prefix && r.Path == ""
		if p := b.declaredPathOf(r.Source); p != nil {
			// A missing or ImplementationSpecific type is Prefix there.
			path = declaredPath(p)
			replaces = path == "/" && (p.PathType == nil || *p.PathType != networkingv1.PathTypeExact)
		}
		if replaces {
			path, order, root = "/", 0, true
		}
		if ing := b.ingressOf(r.Source); ing != nil && ing.redirectAnns().appRootPath != "" {
			cands = append(cands, candidate{ing, path, order})
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
				": of the app-roots on one host, the one of the location ingress-nginx orders first (longest declared path first) answers, as there; this Ingress's "+
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
		if other := b.vhostOf(from); other != nil {
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
			other := b.vhostOf(name)
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

// resolveAppRoot follows ingress-nginx: a value outside its character set,
// one that is not a request URI, or an absolute URL is ignored with a
// warning. A "$" (an nginx variable there) is refused here (§19).
func (b *builder) resolveAppRoot(ing *ingress, r *redirectAnnotations) {
	a := r.appRoot
	if !a.set() {
		return
	}
	consequence := "not applied"
	if !a.native() {
		consequence = "not applied, as in ingress-nginx"
	}
	switch {
	case a.value == "":
		b.rejectAnnotation(ing, a, "is empty", consequence)
	case strings.Contains(a.value, "$"):
		b.rejectAnnotation(ing, a, "contains $, which nginx would expand as a variable; ramjet does not expand variables", "not applied")
	case a.native() && badAppRoot(a.value) != "":
		b.rejectAnnotation(ing, a, badAppRoot(a.value), consequence)
	case !a.native() && !onlyBytes(strings.TrimPrefix(a.value, "/"), "-._~/:"):
		b.rejectAnnotation(ing, a, "has a character outside ingress-nginx's app-root set (letters, digits and -._~/:)", consequence)
	case !a.native() && badAppRoot(a.value) != "":
		b.rejectAnnotation(ing, a, badAppRoot(a.value), consequence)
	default:
		r.appRootPath = a.value
	}
}

// badAppRoot says why s is not an app-root: it must be a path starting with
// a single "/".
func badAppRoot(s string) string {
	if why := unsafeHeaderValue(s); why != "" {
		return why
	}
	if !strings.HasPrefix(s, "/") || strings.HasPrefix(s, "//") {
		return "is not a path starting with a single /"
	}
	if _, err := url.ParseRequestURI(s); err != nil {
		return "is not a valid request URI"
	}
	return ""
}

// resolveAliases reads server-alias: comma-separated names, trimmed, empty
// ones skipped, sorted and unique (ingress-nginx's parse). Under the nginx
// prefix a name with a character outside nginx's server-name set withholds
// the Ingress. Names are matched without regard to case, as nginx does.
// ramjet serves exact names and "*.<rest>" wildcards (one label, like rule
// hosts, AnnotationSubstituted); nginx's regex ("~...") and other wildcard
// forms are refused name by name (§19).
func (b *builder) resolveAliases(ing *ingress, r *redirectAnnotations) {
	a := r.alias
	if !a.set() {
		return
	}
	var names []string
	for item := range strings.SplitSeq(a.value, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		if !a.native() && !onlyBytes(item, `-._~/:^$[](){}*+?|&=\`) {
			b.withhold(ing, r, a, "has a server name ("+strconv.Quote(item)+") with a character nginx does not accept")
			return
		}
		names = append(names, item)
	}
	slices.Sort(names)
	names = slices.Compact(names)
	for _, n := range names {
		name := strings.ToLower(n)
		switch why := invalidHost(name); {
		case strings.HasPrefix(n, "~"):
			b.rejectAnnotation(ing, a, "names the regular expression "+strconv.Quote(n)+"; ramjet serves exact alias names and *.<domain> wildcards only", "that alias is not served")
			continue
		case why != "":
			b.rejectAnnotation(ing, a, "names "+strconv.Quote(n)+", which "+why, "that alias is not served")
			continue
		case strings.HasPrefix(name, "*."):
			b.warn(AnnotationSubstituted, ing.ref(), annotationField(a.key),
				"the alias "+strconv.Quote(n)+" matches exactly one more label here, as rule hosts do; nginx matches any number of labels")
		}
		r.aliases = append(r.aliases, name)
	}
	slices.Sort(r.aliases)
	r.aliases = slices.Compact(r.aliases)
}
