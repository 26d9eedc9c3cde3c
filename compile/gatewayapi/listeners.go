package gatewayapi

import (
	"crypto/tls"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"ramjet.dev/ramjet/compile"
	"ramjet.dev/ramjet/match"
	"ramjet.dev/ramjet/status"
)

// Translation is everything TranslateAll makes of the objects: compile's
// input, the warnings, and the status it decided.
type Translation struct {
	// HTTPRoutes and ListenerCertificates go into compile.Snapshot's
	// fields of those names (AddTo).
	HTTPRoutes           []*compile.HTTPRoute
	ListenerCertificates []*compile.ListenerCertificate
	// Listeners go into compile.Snapshot.Listeners: the hostnames of the
	// served listeners by port and protocol (SPEC §20).
	Listeners []match.ListenerHost
	// TLSRoutes and PassthroughListeners go into compile.Snapshot's
	// fields of those names: the TLSRoutes on TLS passthrough listeners,
	// and those listeners' hostnames.
	TLSRoutes            []*compile.TLSRoute
	PassthroughListeners []match.ListenerHost
	Warnings             []compile.Warning
	// Status holds the decided status of the GatewayClasses, Gateways and
	// HTTPRoutes of ours; it writes nothing.
	Status *Status
}

// AddTo adds the translation's routes, certificates and warnings to s;
// Compile reports the warnings with its own (Snapshot.Warnings).
func (tr *Translation) AddTo(s *compile.Snapshot) {
	s.HTTPRoutes = append(s.HTTPRoutes, tr.HTTPRoutes...)
	s.ListenerCertificates = append(s.ListenerCertificates, tr.ListenerCertificates...)
	s.Listeners = append(s.Listeners, tr.Listeners...)
	s.TLSRoutes = append(s.TLSRoutes, tr.TLSRoutes...)
	s.PassthroughListeners = append(s.PassthroughListeners, tr.PassthroughListeners...)
	s.Warnings = append(s.Warnings, tr.Warnings...)
}

// TranslateAll is Translate, plus the certificates of HTTPS listeners
// (tls.certificateRefs, served by SNI for the listener's hostname, or for
// its attached routes' hostnames when it has none) and the status of every
// GatewayClass, Gateway and HTTPRoute of ours (SPEC §20). o.Services and
// o.Secrets are read only to decide status (BackendNotFound,
// InvalidCertificateRef); compile reads its own.
func TranslateAll(o Objects) Translation {
	routes, warnings := Translate(o)
	t := translator{objs: o}
	t.index()
	tr := Translation{HTTPRoutes: routes, Status: t.decideStatus(warnings, routes), Listeners: t.servedListeners()}
	t.listenerCertificates(&tr) // after decideStatus: the hosts of each listener's routes
	tr.Warnings = append(warnings, t.certWarnings...)
	tr.Warnings = append(tr.Warnings, t.validationWarnings()...)
	tr.Warnings = append(tr.Warnings, t.parametersWarnings()...)
	tr.Warnings = append(tr.Warnings, t.unservedFieldWarnings()...)
	tr.Warnings = append(tr.Warnings, t.tlsWarnings...)
	tr.TLSRoutes, tr.PassthroughListeners = t.tlsRoutes, t.servedPassthroughListeners()
	return tr
}

// conflicts marks the listeners of gw that conflict with another: one
// port under two protocols that cannot share it (ProtocolConflict), or
// one port and hostname twice (HostnameConflict). Both sides of a
// conflict are refused, so that neither wins by its position in the list.
func conflicts(gw *gwv1.Gateway) []string {
	out := make([]string, len(gw.Spec.Listeners))
	ls := gw.Spec.Listeners
	for i := range ls {
		for j := range ls {
			if i == j || ls[i].Port != ls[j].Port {
				continue
			}
			switch {
			case family(ls[i].Protocol) != family(ls[j].Protocol):
				out[i] = status.ReasonProtocolConflict
			case ls[i].Protocol == gwv1.TLSProtocolType && ls[j].Protocol == gwv1.TLSProtocolType && tlsMode(&ls[i]) != tlsMode(&ls[j]):
				// Terminate and Passthrough TLS listeners on one port
				// (tlsroute.go).
				out[i] = status.ReasonProtocolConflict
			case deref(ls[i].Hostname, "") == deref(ls[j].Hostname, "") && out[i] == "":
				out[i] = status.ReasonHostnameConflict
			}
		}
	}
	return out
}

// family groups the protocols that can share a port: HTTPS and TLS both
// begin with a TLS handshake and are told apart by SNI.
func family(p gwv1.ProtocolType) gwv1.ProtocolType {
	if p == gwv1.TLSProtocolType {
		return gwv1.HTTPSProtocolType
	}
	return p
}

// conflicted reports whether listener l of gw is refused as conflicted.
func (t *translator) conflicted(gw *gwv1.Gateway, l *gwv1.Listener) bool {
	c, ok := t.conflictsOf[gw]
	if !ok {
		if t.conflictsOf == nil {
			t.conflictsOf = make(map[*gwv1.Gateway][]string)
		}
		c = conflicts(gw)
		t.conflictsOf[gw] = c
	}
	i := slices.IndexFunc(gw.Spec.Listeners, func(x gwv1.Listener) bool { return x.Name == l.Name })
	return i >= 0 && c[i] != ""
}

// certCheck is the verdict on one tls.certificateRefs entry, or on the
// listener's TLS as a whole when ref is -1.
type certCheck struct {
	ref     int
	field   string
	problem *status.Problem
	// serve: the reference goes to compile, which reads the Secret and
	// warns itself when it is missing or invalid.
	serve bool
}

// checkCertificates judges an HTTPS listener's tls.certificateRefs.
func (t *translator) checkCertificates(gw *gwv1.Gateway, li int) []certCheck {
	l := &gw.Spec.Listeners[li]
	base := "spec.listeners[" + strconv.Itoa(li) + "].tls"
	if l.TLS == nil || len(l.TLS.CertificateRefs) == 0 {
		return []certCheck{{ref: -1, field: base, problem: &status.Problem{Reason: status.ReasonInvalidCertificateRef,
			Message: base + ": an HTTPS listener needs tls.certificateRefs"}}}
	}
	if m := deref(l.TLS.Mode, gwv1.TLSModeTerminate); m != gwv1.TLSModeTerminate {
		return []certCheck{{ref: -1, field: base + ".mode", problem: &status.Problem{Reason: status.ReasonInvalidCertificateRef,
			Message: base + ".mode: an HTTPS listener terminates TLS; mode " + string(m) + " is not served"}}}
	}
	var out []certCheck
	for i, ref := range l.TLS.CertificateRefs {
		c := certCheck{ref: i, field: base + ".certificateRefs[" + strconv.Itoa(i) + "]"}
		ns := string(deref(ref.Namespace, gwv1.Namespace(gw.Namespace)))
		switch {
		case deref(ref.Group, "") != "" || deref(ref.Kind, "Secret") != "Secret":
			what := string(deref(ref.Kind, "Secret"))
			if g := deref(ref.Group, ""); g != "" {
				what += " of group " + strconv.Quote(string(g))
			}
			c.problem = &status.Problem{Reason: status.ReasonInvalidCertificateRef,
				Message: c.field + ": " + what + " is not a core Secret"}
		case ns != gw.Namespace && !t.grantedSecret(gw.Namespace, ns, string(ref.Name)):
			c.problem = &status.Problem{Reason: status.ReasonRefNotPermitted,
				Message: c.field + ": no ReferenceGrant in namespace " + ns + " lets Gateways of " + gw.Namespace + " use Secret " + string(ref.Name)}
		default:
			c.serve = true
			if why := t.secretProblem(ns, string(ref.Name)); why != "" {
				c.problem = &status.Problem{Reason: status.ReasonInvalidCertificateRef, Message: c.field + ": Secret " + ns + "/" + string(ref.Name) + " " + why}
			}
		}
		out = append(out, c)
	}
	return out
}

// secretProblem says why Secret ns/name cannot serve a certificate, or ""
// when it can.
func (t *translator) secretProblem(ns, name string) string {
	s := t.secrets[nsName{ns, name}]
	if s == nil {
		return "not found"
	}
	if s.Type != corev1.SecretTypeTLS {
		return "is of type " + strconv.Quote(string(s.Type)) + ", not kubernetes.io/tls"
	}
	data := func(k string) []byte {
		if v, ok := s.StringData[k]; ok {
			return []byte(v) // a manifest's; the API server returns data only
		}
		return s.Data[k]
	}
	if _, err := tls.X509KeyPair(data(corev1.TLSCertKey), data(corev1.TLSPrivateKeyKey)); err != nil {
		return "holds no valid key pair: " + err.Error()
	}
	return ""
}

// grantedSecret reports a ReferenceGrant in toNS letting Gateways of
// fromNS refer to Secret name.
func (t *translator) grantedSecret(fromNS, toNS, name string) bool {
	for _, g := range t.objs.ReferenceGrants {
		if g.Namespace != toNS {
			continue
		}
		from := slices.ContainsFunc(g.Spec.From, func(f gwv1.ReferenceGrantFrom) bool {
			return f.Group == Group && f.Kind == "Gateway" && string(f.Namespace) == fromNS
		})
		to := slices.ContainsFunc(g.Spec.To, func(to gwv1.ReferenceGrantTo) bool {
			return (to.Group == "" || to.Group == "core") && to.Kind == "Secret" && (to.Name == nil || string(*to.Name) == name)
		})
		if from && to {
			return true
		}
	}
	return false
}

// listenerCertificates adds the certificates of every HTTPS listener of
// our Gateways that is not conflicted, and warns for each refused
// reference. A listener without a hostname offers its certificates for
// the hostnames of the routes attached to it that no more specific
// listener takes, and for any name no other certificate serves
// (match.AnyName).
func (t *translator) listenerCertificates(tr *Translation) {
	for _, gw := range t.sortedGateways() {
		gwRef := compile.Ref{Kind: "Gateway", Namespace: gw.Namespace, Name: gw.Name}
		for li := range gw.Spec.Listeners {
			l := &gw.Spec.Listeners[li]
			if l.Protocol != gwv1.HTTPSProtocolType || !t.served(gw, l) {
				continue
			}
			checks := t.checkCertificates(gw, li)
			for _, c := range checks {
				if c.problem == nil || c.serve {
					continue // compile warns about the Secret itself
				}
				reason := RefNotPermitted
				if c.problem.Reason != status.ReasonRefNotPermitted {
					reason = Unsupported
				}
				t.certWarnings = append(t.certWarnings, compile.Warning{Reason: reason, Object: gwRef, Field: c.field,
					Message: strings.TrimPrefix(c.problem.Message, c.field+": ") + "; the listener's hosts get another certificate, else the default one"})
			}
			var hosts []string
			if l.Hostname != nil && *l.Hostname != "" {
				hosts = []string{string(*l.Hostname)}
			} else {
				// Without a hostname the listener takes every name: its
				// routes' first, then any name no other certificate serves;
				// but a route's name that a more specific listener on the
				// port takes is that listener's connection, and certificate.
				hosts = slices.DeleteFunc(slices.Clone(t.listenerHosts[listenerKey{gw, l.Name}]), func(h string) bool {
					return t.shadowedBy(viewOf(l), "", h) != nil
				})
				hosts = append(hosts, match.AnyName)
			}
			hosts = slices.DeleteFunc(slices.Clone(hosts), func(h string) bool { return h == "" })
			slices.Sort(hosts)
			hosts = slices.Compact(hosts)
			if len(hosts) == 0 {
				continue
			}
			for _, c := range checks {
				if !c.serve {
					continue
				}
				ref := l.TLS.CertificateRefs[c.ref]
				tr.ListenerCertificates = append(tr.ListenerCertificates, &compile.ListenerCertificate{
					Object: gwRef, Field: c.field,
					Created:         gw.CreationTimestamp.Time,
					SecretNamespace: string(deref(ref.Namespace, gwv1.Namespace(gw.Namespace))), SecretName: string(ref.Name),
					Hosts: hosts,
				})
			}
		}
	}
}
