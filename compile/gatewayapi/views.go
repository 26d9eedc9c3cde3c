package gatewayapi

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"ramjet.dev/ramjet/compile"
	"ramjet.dev/ramjet/match"
)

// viewOf is the match.Listener of an HTTP, HTTPS or TLS listener: its
// port, and TLS for HTTPS and TLS.
func viewOf(l *gwv1.Listener) match.Listener {
	return match.Listener{Port: int32(l.Port), TLS: l.Protocol == gwv1.HTTPSProtocolType || l.Protocol == gwv1.TLSProtocolType}
}

func compareListeners(a, b match.Listener) int {
	return cmp.Or(cmp.Compare(a.Port, b.Port), cmp.Compare(b2i(a.TLS), b2i(b.TLS)))
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// served reports whether listener l of gw serves routes: an HTTP or HTTPS
// listener free of conflicts, on a port requests arrive on, that is not
// asked to require client certificates.
func (t *translator) served(gw *gwv1.Gateway, l *gwv1.Listener) bool {
	return (l.Protocol == gwv1.HTTPProtocolType || l.Protocol == gwv1.HTTPSProtocolType) && !t.conflicted(gw, l) && t.portServed(l) &&
		!requiresClientCertificates(gw, l) && t.notAccepted(gw) == ""
}

// notAccepted says why gw is not accepted as a whole, and serves nothing:
// its parametersRef (parametersProblem) or its GatewayClass's
// (classProblem), or an address type (addressProblem); "" when it is.
func (t *translator) notAccepted(gw *gwv1.Gateway) string {
	return cmp.Or(parametersProblem(gw), t.classProblem(gw), addressProblem(gw))
}

// classProblem says why gw's GatewayClass is not accepted
// (classParametersProblem), so that gw is not served either; "" when it
// is.
func (t *translator) classProblem(gw *gwv1.Gateway) string {
	for _, c := range t.objs.GatewayClasses {
		if c.Name == string(gw.Spec.GatewayClassName) && c.Spec.ControllerName == ControllerName {
			if why := classParametersProblem(c); why != "" {
				return "GatewayClass " + c.Name + " " + why
			}
		}
	}
	return ""
}

// classParametersProblem says why GatewayClass c is not accepted for its
// parametersRef, "" when it names none: ramjet reads no parameters, and
// the API asks that a class whose referent is of a kind the controller
// does not support be rejected (InvalidParameters) rather than served
// without them.
func classParametersProblem(c *gwv1.GatewayClass) string {
	p := c.Spec.ParametersRef
	if p == nil {
		return ""
	}
	return "spec.parametersRef: ramjet reads no parameters (" + string(p.Kind) + " " + string(p.Name) + " of group " +
		strconv.Quote(string(p.Group)) + "); the GatewayClass is not accepted and its Gateways are not served"
}

// addressProblem says which of gw's spec.addresses is of a type ramjet
// does not serve, "" when none is: only IPAddress and Hostname can name
// the controller's own addresses, and the API asks that a Gateway with
// another not be accepted (UnsupportedAddress) rather than served without
// it.
func addressProblem(gw *gwv1.Gateway) string {
	for i, a := range gw.Spec.Addresses {
		if typ := deref(a.Type, gwv1.IPAddressType); typ != gwv1.IPAddressType && typ != gwv1.HostnameAddressType {
			return "spec.addresses[" + strconv.Itoa(i) + "].type: address type " + strconv.Quote(string(typ)) +
				" is not supported, only IPAddress and Hostname; the Gateway is not served"
		}
	}
	return ""
}

// unusableAddresses are gw's requested IPAddress and Hostname addresses
// that are not among the controller's (status.addresses): ramjet assigns
// none, so only those can be used.
func unusableAddresses(gw *gwv1.Gateway, have []gwv1.GatewayStatusAddress) []string {
	var out []string
	for _, a := range gw.Spec.Addresses {
		typ := deref(a.Type, gwv1.IPAddressType)
		if !slices.ContainsFunc(have, func(h gwv1.GatewayStatusAddress) bool {
			return deref(h.Type, gwv1.IPAddressType) == typ && h.Value == a.Value
		}) {
			out = append(out, a.Value)
		}
	}
	return out
}

// matchable reports whether a parentRef naming listener l of gw by its
// sectionName and port finds it: an HTTP or HTTPS listener when it is
// served; one of another protocol always, and a route of a kind that
// protocol does not take is NotAllowedByListeners there, as the suite
// asks (tcproute-invalid-non-tcp-listener, udproute-not-allowed-by-listeners).
func (t *translator) matchable(gw *gwv1.Gateway, l *gwv1.Listener) bool {
	if l.Protocol == gwv1.HTTPProtocolType || l.Protocol == gwv1.HTTPSProtocolType {
		return t.served(gw, l)
	}
	return true
}

// parametersProblem says why gw is not accepted for its
// infrastructure.parametersRef, "" when it names none: ramjet reads no
// parameters, so every kind is one it does not support, and the API asks
// that such a Gateway be rejected (InvalidParameters) rather than served
// without them.
func parametersProblem(gw *gwv1.Gateway) string {
	if gw.Spec.Infrastructure == nil || gw.Spec.Infrastructure.ParametersRef == nil {
		return ""
	}
	p := gw.Spec.Infrastructure.ParametersRef
	return "spec.infrastructure.parametersRef: ramjet reads no parameters (" + string(p.Kind) + " " + string(p.Name) + " of group " +
		strconv.Quote(string(p.Group)) + "); the Gateway is not served"
}

// unservedFieldWarnings warn about the fields of our Gateways that change
// nothing here, so that none is dropped silently (SPEC §20).
func (t *translator) unservedFieldWarnings() []compile.Warning {
	var out []compile.Warning
	for _, gw := range t.sortedGateways() {
		warn := func(field, msg string) {
			out = append(out, compile.Warning{Reason: Unsupported, Object: compile.Ref{Kind: "Gateway", Namespace: gw.Namespace, Name: gw.Name},
				Field: field, Message: msg})
		}
		if a := gw.Spec.AllowedListeners; a != nil && a.Namespaces != nil && deref(a.Namespaces.From, gwv1.NamespacesFromNone) != gwv1.NamespacesFromNone {
			warn("spec.allowedListeners.namespaces.from", "ListenerSets are not served: no ListenerSet attaches, and only the listeners in the Gateway's spec serve routes")
		}
		if s := gw.Spec.DefaultScope; s != "" && s != gwv1.GatewayDefaultScopeNone {
			warn("spec.defaultScope", "default Gateways are not served: only routes whose parentRefs name the Gateway attach to it")
		}
		if len(gw.Spec.Addresses) > 0 && addressProblem(gw) == "" {
			warn("spec.addresses", "requested addresses are not assigned: every Gateway of the class is served on the controller's address, which status.addresses lists; the Gateway is not Programmed (AddressNotUsable) while it asks for another")
		}
		if gw.Spec.TLS != nil && gw.Spec.TLS.Backend != nil && gw.Spec.TLS.Backend.ClientCertificateRef != nil {
			warn("spec.tls.backend.clientCertificateRef", "a client certificate for backends is not served: backends are dialled without one")
		}
		for i := range gw.Spec.Listeners {
			if l := &gw.Spec.Listeners[i]; l.TLS != nil && len(l.TLS.Options) > 0 {
				warn("spec.listeners["+strconv.Itoa(i)+"].tls.options", "TLS options are not served: the listener uses the controller's TLS settings")
			}
		}
	}
	return out
}

// parametersWarnings warn about our GatewayClasses that
// classParametersProblem refuses, and our Gateways that parametersProblem
// or addressProblem refuses.
func (t *translator) parametersWarnings() []compile.Warning {
	var out []compile.Warning
	classes := slices.Clone(t.objs.GatewayClasses)
	slices.SortFunc(classes, func(a, b *gwv1.GatewayClass) int { return strings.Compare(a.Name, b.Name) })
	for _, c := range classes {
		if c.Spec.ControllerName != ControllerName {
			continue
		}
		if field, msg, ok := strings.Cut(classParametersProblem(c), ": "); ok {
			out = append(out, compile.Warning{Reason: Unsupported, Object: compile.Ref{Kind: "GatewayClass", Name: c.Name}, Field: field, Message: msg})
		}
	}
	for _, gw := range t.sortedGateways() {
		for _, why := range []string{parametersProblem(gw), addressProblem(gw)} {
			if field, msg, ok := strings.Cut(why, ": "); ok {
				out = append(out, compile.Warning{Reason: Unsupported, Object: compile.Ref{Kind: "Gateway", Namespace: gw.Namespace, Name: gw.Name},
					Field: field, Message: msg})
			}
		}
	}
	return out
}

// frontendValidation is the client certificate validation gw's
// spec.tls.frontend asks of HTTPS listener l (its port's entry, else the
// default), nil for none, and the field that asks it.
func frontendValidation(gw *gwv1.Gateway, l *gwv1.Listener) (*gwv1.FrontendTLSValidation, string) {
	if l.Protocol != gwv1.HTTPSProtocolType || gw.Spec.TLS == nil || gw.Spec.TLS.Frontend == nil {
		return nil, ""
	}
	f := gw.Spec.TLS.Frontend
	for i, p := range f.PerPort {
		if p.Port == l.Port {
			return p.TLS.Validation, "spec.tls.frontend.perPort[" + strconv.Itoa(i) + "].tls.validation"
		}
	}
	return f.Default.Validation, "spec.tls.frontend.default.validation"
}

// requiresClientCertificates reports an HTTPS listener whose Gateway asks
// it to accept only clients with a valid certificate, which ramjet does
// not verify there: the listener is not served, rather than served to
// every client. AllowInsecureFallback accepts clients without one, so
// such a listener is served (and warned, validationWarnings).
func requiresClientCertificates(gw *gwv1.Gateway, l *gwv1.Listener) bool {
	v, _ := frontendValidation(gw, l)
	return v != nil && v.Mode != gwv1.AllowInsecureFallback
}

// validationWarnings warn, once per field, about the client certificate
// validation of our Gateways' HTTPS listeners, which is not served.
func (t *translator) validationWarnings() []compile.Warning {
	var out []compile.Warning
	for _, gw := range t.sortedGateways() {
		seen := map[string]bool{}
		for i := range gw.Spec.Listeners {
			l := &gw.Spec.Listeners[i]
			v, field := frontendValidation(gw, l)
			if v == nil || seen[field] {
				continue
			}
			seen[field] = true
			msg := "client certificate validation is not served; the HTTPS listeners it applies to are not served rather than served to clients without a valid certificate"
			if v.Mode == gwv1.AllowInsecureFallback {
				msg = "client certificate validation is not served; with mode AllowInsecureFallback the HTTPS listeners it applies to are served without asking for a certificate"
			}
			out = append(out, compile.Warning{Reason: Unsupported, Object: compile.Ref{Kind: "Gateway", Namespace: gw.Namespace, Name: gw.Name},
				Field: field, Message: msg})
		}
	}
	return out
}

// portServed reports whether requests arrive on l's port and protocol
// (Objects.Ports; every one when nil).
func (t *translator) portServed(l *gwv1.Listener) bool {
	return t.objs.Ports == nil || slices.Contains(t.objs.Ports, viewOf(l))
}

// portWhy says, for a listener on a port and protocol no request arrives
// on, which the data plane serves (Objects.Ports): each Gateway port maps
// to one listener of the controller (--gateway-http-port to its plain
// HTTP listener, --gateway-https-port to its TLS one, where HTTPS
// listeners are terminated and TLS passthrough listeners spliced by SNI).
// A TLS listener on the plain-HTTP port is not served: that listener
// reads HTTP, not ClientHellos.
func (t *translator) portWhy(l *gwv1.Listener) string {
	var plain, tls []string
	for _, p := range t.objs.Ports {
		if p.TLS {
			tls = append(tls, strconv.Itoa(int(p.Port)))
		} else {
			plain = append(plain, strconv.Itoa(int(p.Port)))
		}
	}
	served := "the controller serves "
	switch {
	case len(plain) > 0 && len(tls) > 0:
		served += "HTTP on Gateway port " + strings.Join(plain, ", ") + ", and HTTPS and TLS passthrough on " + strings.Join(tls, ", ")
	case len(tls) > 0:
		served += "HTTPS and TLS passthrough on Gateway port " + strings.Join(tls, ", ") + " alone"
	case len(plain) > 0:
		served += "HTTP on Gateway port " + strings.Join(plain, ", ") + " alone"
	default:
		served += "no Gateway port"
	}
	served += " (--gateway-http-port, --gateway-https-port)"
	if l.Protocol != gwv1.HTTPProtocolType && slices.Contains(t.objs.Ports, match.Listener{Port: int32(l.Port)}) {
		served += "; port " + strconv.Itoa(int(l.Port)) + " is its plain-HTTP listener, which reads no TLS"
	}
	return served
}

// servedListeners are the hostnames of every listener of our Gateways that
// serves routes, by port and protocol: match's views claim them and tell
// misdirected requests by them.
func (t *translator) servedListeners() []match.ListenerHost {
	var out []match.ListenerHost
	for _, gw := range t.sortedGateways() {
		for i := range gw.Spec.Listeners {
			l := &gw.Spec.Listeners[i]
			if t.served(gw, l) {
				out = append(out, match.ListenerHost{Listener: viewOf(l), Hostname: string(deref(l.Hostname, ""))})
			}
		}
	}
	return out
}

// specificity ranks a listener hostname by the Gateway API's listener
// precedence: none, then wildcards by their number of labels, then a name.
func specificity(h string) int {
	switch {
	case h == "":
		return 0
	case strings.HasPrefix(h, "*."):
		return 1 + strings.Count(h, ".")
	}
	return 1 << 20
}

// servedListener is a served listener's hostname, and the listener.
type servedListener struct {
	gw       *gwv1.Gateway
	name     gwv1.SectionName
	hostname string
}

// shadowedBy is, when host h of a route attached to a listener with
// hostname lh on view l is never reached there, the listener that takes
// it: another served listener on l with a more specific hostname matches
// every name h does, so takes all of h's requests. On a TLS port the
// server name picks the listener, HTTPS or TLS passthrough, of any
// Gateway (match.Table.PassthroughOn), so either kind takes the other's
// hosts. nil when h is reached.
func (t *translator) shadowedBy(l match.Listener, lh, h string) *servedListener {
	if t.hostnamesOn == nil {
		t.hostnamesOn = map[match.Listener][]servedListener{}
		for _, gw := range t.sortedGateways() {
			for i := range gw.Spec.Listeners {
				x := &gw.Spec.Listeners[i]
				if t.tlsServed(gw, x) || t.served(gw, x) {
					t.hostnamesOn[viewOf(x)] = append(t.hostnamesOn[viewOf(x)], servedListener{gw, x.Name, string(deref(x.Hostname, ""))})
				}
			}
		}
	}
	for i, other := range t.hostnamesOn[l] {
		if specificity(other.hostname) <= specificity(lh) || other.hostname == "" {
			continue
		}
		if other.hostname == h || covers(other.hostname, h) {
			return &t.hostnamesOn[l][i]
		}
	}
	return nil
}
