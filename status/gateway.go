package status

import (
	"cmp"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Gateway API status (SPEC §20). This package cannot import the Gateway
// API's types (the library's go.mod keeps its list), so the translation
// (compile/gatewayapi) states what it found as the facts below, these
// functions decide the conditions, and the translation copies them into
// the Gateway API's status structs. The condition types and reasons are
// the Gateway API's own strings.

// Condition types.
const (
	ConditionAccepted     = "Accepted"
	ConditionProgrammed   = "Programmed"
	ConditionResolvedRefs = "ResolvedRefs"
	ConditionConflicted   = "Conflicted"
	// ConditionPartiallyInvalid is a route's, set only True: some of its
	// rules are not served, others are.
	ConditionPartiallyInvalid = "PartiallyInvalid"
	// ConditionOverlappingTLSConfig is a listener's, set only True: its
	// hostname overlaps another HTTPS listener's on the port.
	ConditionOverlappingTLSConfig = "OverlappingTLSConfig"
)

// Condition reasons. A reason equal to its condition type (Accepted,
// Programmed, ResolvedRefs) is the healthy one.
const (
	ReasonAccepted     = "Accepted"
	ReasonProgrammed   = "Programmed"
	ReasonResolvedRefs = "ResolvedRefs"
	ReasonInvalid      = "Invalid"

	// Gateways.
	ReasonListenersNotValid = "ListenersNotValid"
	ReasonInvalidParameters = "InvalidParameters"
	// ReasonUnsupportedAddress (Accepted) and ReasonAddressNotUsable
	// (Programmed) answer a Gateway's spec.addresses.
	ReasonUnsupportedAddress = "UnsupportedAddress"
	ReasonAddressNotUsable   = "AddressNotUsable"

	// Listeners, and a route's backendRef to a port whose appProtocol is
	// not spoken.
	ReasonUnsupportedProtocol   = "UnsupportedProtocol"
	ReasonPortUnavailable       = "PortUnavailable"
	ReasonInvalidCertificateRef = "InvalidCertificateRef"
	ReasonInvalidRouteKinds     = "InvalidRouteKinds"
	ReasonHostnameConflict      = "HostnameConflict"
	ReasonProtocolConflict      = "ProtocolConflict"
	ReasonNoConflicts           = "NoConflicts"
	ReasonOverlappingHostnames  = "OverlappingHostnames"

	// Routes.
	ReasonNotAllowedByListeners      = "NotAllowedByListeners"
	ReasonNoMatchingListenerHostname = "NoMatchingListenerHostname"
	ReasonNoMatchingParent           = "NoMatchingParent"
	ReasonUnsupportedValue           = "UnsupportedValue"
	ReasonIncompatibleFilters        = "IncompatibleFilters"
	ReasonBackendNotFound            = "BackendNotFound"
	ReasonInvalidKind                = "InvalidKind"

	// Listeners and routes: a cross-namespace reference without a
	// ReferenceGrant.
	ReasonRefNotPermitted = "RefNotPermitted"
)

// Problem is one thing found wrong: the condition reason it gives and a
// message naming the object and field.
type Problem struct {
	Reason  string
	Message string
}

// GatewayClassConditions are the conditions of a GatewayClass whose
// controllerName is ours: Accepted, unless invalidParameters says why its
// parametersRef cannot be used (ReasonInvalidParameters, as the API asks).
func GatewayClassConditions(generation int64, invalidParameters string) []metav1.Condition {
	if invalidParameters != "" {
		return []metav1.Condition{cond(ConditionAccepted, false, ReasonInvalidParameters, invalidParameters, generation)}
	}
	return []metav1.Condition{cond(ConditionAccepted, true, ReasonAccepted, "the GatewayClass is served by ramjet", generation)}
}

// ListenerFacts is what the translation found about one listener.
type ListenerFacts struct {
	// Name is the listener's name.
	Name string
	// UnsupportedProtocol is the listener's protocol when it is none of
	// HTTP, HTTPS and TLS, else "".
	UnsupportedProtocol string
	// UnsupportedValue, when set, names a field of the listener whose
	// value is not served and why (a TLS listener's tls.mode Terminate):
	// the listener is not Accepted, reason UnsupportedValue.
	UnsupportedValue string
	// Kinds are the route kinds the listener serves, named in the
	// message of InvalidRouteKinds; nil: HTTPRoute, empty: none.
	Kinds []string
	// PortUnavailable: the data plane receives no requests on the
	// listener's port and protocol (see the controller's port flags).
	PortUnavailable bool
	// PortWhy, with PortUnavailable, says which ports are served instead
	// (the condition's message); "" gives a generic one.
	PortWhy string
	// Conflict is ReasonHostnameConflict or ReasonProtocolConflict when
	// another listener of the Gateway claims its port and hostname, or
	// its port with another protocol; "" for none.
	Conflict string
	// OverlappingHostnames names the other HTTPS listeners of the Gateway
	// on its port whose hostname overlaps its own (one matches a name the
	// other does): OverlappingTLSConfig True.
	OverlappingHostnames []string
	// InvalidRouteKinds are the allowedRoutes kinds it cannot serve.
	InvalidRouteKinds []string
	// CertificateProblems are its refused tls.certificateRefs
	// (ReasonInvalidCertificateRef, ReasonRefNotPermitted).
	CertificateProblems []Problem
	// AttachedRoutes counts the routes attached to it.
	AttachedRoutes int32
}

// GatewayFacts is what the translation found about one Gateway of ours.
type GatewayFacts struct {
	Generation int64
	Listeners  []ListenerFacts
	// InvalidParameters, when set, says why the Gateway's parametersRef
	// cannot be used: the Gateway is not accepted (ReasonInvalidParameters)
	// and serves nothing.
	InvalidParameters string
	// UnsupportedAddress, when set, says which of spec.addresses is of a
	// type not served: the Gateway is not accepted
	// (ReasonUnsupportedAddress) and serves nothing.
	UnsupportedAddress string
}

// GatewayConditions decides a Gateway's conditions and those of each of
// its listeners (listeners[i] for f.Listeners[i]).
//
// A listener is Accepted unless its protocol is not served, or its port
// (PortUnavailable); it is
// Conflicted when it shares a port and hostname with another listener,
// or a port under another protocol, and then it is not Programmed either;
// its ResolvedRefs is False for a route kind it cannot serve or a refused
// certificate, which also leaves it not Programmed (an HTTPS listener
// without its certificate answers with another one: its routes are
// served, and the message says so). An HTTPS listener whose hostname
// overlaps another's on its port is OverlappingTLSConfig True (never
// False, as the API asks). The Gateway is Accepted while any listener is,
// with reason ListenersNotValid when some is not, and Programmed while
// any listener is.
func GatewayConditions(f GatewayFacts) (gateway []metav1.Condition, listeners [][]metav1.Condition) {
	g := f.Generation
	accepted, programmed, invalid := 0, 0, 0
	for _, l := range f.Listeners {
		var cs []metav1.Condition
		ok := l.UnsupportedProtocol == "" && l.UnsupportedValue == "" && !l.PortUnavailable
		switch {
		case ok:
			cs = append(cs, cond(ConditionAccepted, true, ReasonAccepted, "the listener is served", g))
			accepted++
		case l.UnsupportedProtocol != "":
			cs = append(cs, cond(ConditionAccepted, false, ReasonUnsupportedProtocol, "protocol "+l.UnsupportedProtocol+" is not served; only HTTP, HTTPS and TLS (passthrough) are", g))
		case l.UnsupportedValue != "":
			cs = append(cs, cond(ConditionAccepted, false, ReasonUnsupportedValue, l.UnsupportedValue, g))
		default:
			msg := "no request reaches this port and protocol: the controller serves other Gateway ports"
			if l.PortWhy != "" {
				msg = "no request reaches this port and protocol: " + l.PortWhy
			}
			cs = append(cs, cond(ConditionAccepted, false, ReasonPortUnavailable, msg, g))
		}
		if l.Conflict != "" {
			cs = append(cs, cond(ConditionConflicted, true, l.Conflict, conflictMessage(l.Conflict), g))
			ok = false
		} else {
			cs = append(cs, cond(ConditionConflicted, false, ReasonNoConflicts, "no conflict with another listener", g))
		}
		// A refused certificate alone leaves the listener serving its
		// routes under another certificate.
		certOnly := false
		switch {
		case len(l.CertificateProblems) > 0:
			cs = append(cs, cond(ConditionResolvedRefs, false, l.CertificateProblems[0].Reason, joinProblems(l.CertificateProblems), g))
			certOnly = ok
			ok = false
		case len(l.InvalidRouteKinds) > 0:
			serves := "HTTPRoute"
			if l.Kinds != nil {
				serves = cmp.Or(strings.Join(l.Kinds, ", "), "none of the kinds it allows")
			}
			cs = append(cs, cond(ConditionResolvedRefs, false, ReasonInvalidRouteKinds,
				"route kinds "+strings.Join(l.InvalidRouteKinds, ", ")+" are not served; the listener serves "+serves, g))
		default:
			cs = append(cs, cond(ConditionResolvedRefs, true, ReasonResolvedRefs, "every reference resolves", g))
		}
		switch {
		case ok:
			cs = append(cs, cond(ConditionProgrammed, true, ReasonProgrammed, "the listener is in the served table", g))
			programmed++
		case certOnly:
			cs = append(cs, cond(ConditionProgrammed, false, ReasonInvalid,
				"the listener's routes are served, but without its certificate: its hosts get another certificate, else the default certificate (see ResolvedRefs)", g))
		default:
			cs = append(cs, cond(ConditionProgrammed, false, ReasonInvalid, "the listener is not served: see its other conditions", g))
		}
		if !ok || len(l.InvalidRouteKinds) > 0 {
			invalid++
		}
		if len(l.OverlappingHostnames) > 0 {
			cs = append(cs, cond(ConditionOverlappingTLSConfig, true, ReasonOverlappingHostnames,
				"the hostname overlaps that of listener "+strings.Join(l.OverlappingHostnames, ", ")+
					" on the same port: a client that reuses a connection for another name (HTTP/2 coalescing) may send one listener's requests over the other's TLS session", g))
		}
		listeners = append(listeners, cs)
	}
	if f.InvalidParameters != "" {
		return []metav1.Condition{cond(ConditionAccepted, false, ReasonInvalidParameters, f.InvalidParameters, g),
			cond(ConditionProgrammed, false, ReasonInvalid, "the Gateway is not accepted", g)}, listeners
	}
	if f.UnsupportedAddress != "" {
		return []metav1.Condition{cond(ConditionAccepted, false, ReasonUnsupportedAddress, f.UnsupportedAddress, g),
			cond(ConditionProgrammed, false, ReasonInvalid, "the Gateway is not accepted", g)}, listeners
	}
	switch {
	case accepted == 0:
		gateway = append(gateway, cond(ConditionAccepted, false, ReasonListenersNotValid, "no listener can be served", g))
	case invalid > 0:
		gateway = append(gateway, cond(ConditionAccepted, true, ReasonListenersNotValid, "the Gateway is served; some listeners are not valid: see their conditions", g))
	default:
		gateway = append(gateway, cond(ConditionAccepted, true, ReasonAccepted, "the Gateway is served by ramjet", g))
	}
	if programmed > 0 {
		gateway = append(gateway, cond(ConditionProgrammed, true, ReasonProgrammed, "the Gateway's listeners are in the served table", g))
	} else {
		gateway = append(gateway, cond(ConditionProgrammed, false, ReasonInvalid, "no listener is programmed: see the listeners' conditions", g))
	}
	return gateway, listeners
}

func conflictMessage(reason string) string {
	if reason == ReasonProtocolConflict {
		return "another listener uses the same port with another protocol"
	}
	return "another listener uses the same port and hostname"
}

// RouteParentFacts is what the translation found about one parentRef of a
// route that names a Gateway of ours.
type RouteParentFacts struct {
	// Generation is the route's metadata.generation.
	Generation int64
	// NotAccepted is why the route is not attached to this parent:
	// ReasonNoMatchingParent (no listener matches sectionName and port),
	// ReasonNotAllowedByListeners, ReasonNoMatchingListenerHostname; nil
	// when it is attached.
	NotAccepted *Problem
	// Unsupported lists parts of the route that are not served (a filter,
	// a match); the route is still Accepted, with a message saying so.
	Unsupported []string
	// RefProblems are the route's refused backendRefs
	// (ReasonBackendNotFound, ReasonRefNotPermitted, ReasonInvalidKind,
	// ReasonUnsupportedProtocol).
	RefProblems []Problem
	// DroppedRules say which rules are not served and why (their requests
	// answer an error); with a rule still served the route is
	// PartiallyInvalid, as the API asks.
	DroppedRules []string
}

// RouteParentConditions decides the conditions of one parent's entry in
// a route's status.parents: Accepted, ResolvedRefs, and PartiallyInvalid
// when an accepted route has DroppedRules. ResolvedRefs is
// decided even for a route that is not accepted, as the Gateway API asks.
// With several reference problems the reason is the first one's and the
// message lists them all.
func RouteParentConditions(f RouteParentFacts) []metav1.Condition {
	g := f.Generation
	var out []metav1.Condition
	switch {
	case f.NotAccepted != nil:
		out = append(out, cond(ConditionAccepted, false, f.NotAccepted.Reason, f.NotAccepted.Message, g))
	case len(f.Unsupported) > 0:
		out = append(out, cond(ConditionAccepted, true, ReasonAccepted, "the route is served, except: "+strings.Join(f.Unsupported, "; "), g))
	default:
		out = append(out, cond(ConditionAccepted, true, ReasonAccepted, "the route is served", g))
	}
	if len(f.RefProblems) > 0 {
		out = append(out, cond(ConditionResolvedRefs, false, f.RefProblems[0].Reason, joinProblems(f.RefProblems), g))
	} else {
		out = append(out, cond(ConditionResolvedRefs, true, ReasonResolvedRefs, "every reference resolves", g))
	}
	if f.NotAccepted == nil && len(f.DroppedRules) > 0 {
		// The API's message for rules left out starts "Dropped Rule".
		out = append(out, cond(ConditionPartiallyInvalid, true, ReasonUnsupportedValue,
			truncate("Dropped Rule "+strings.Join(f.DroppedRules, "; "), maxConditionMessage), g))
	}
	return out
}

// maxConditionMessage is the API's limit on metav1.Condition.Message.
const maxConditionMessage = 32768

func joinProblems(ps []Problem) string {
	msgs := make([]string, len(ps))
	for i, p := range ps {
		msgs[i] = p.Message
	}
	return truncate(strings.Join(msgs, "; "), maxConditionMessage)
}

func cond(typ string, ok bool, reason, message string, generation int64) metav1.Condition {
	s := metav1.ConditionFalse
	if ok {
		s = metav1.ConditionTrue
	}
	return metav1.Condition{Type: typ, Status: s, Reason: reason, Message: message, ObservedGeneration: generation}
}

// MergeConditions returns the conditions to write in place of old:
// decided, each with old's lastTransitionTime when old has that type with
// the same status, else now. Conditions of other types in old (another
// controller's, or ones ramjet does not decide) are kept after them.
// changed is false when the result equals old, so that an unchanged
// decision is not written again and a resync writes nothing.
func MergeConditions(old, decided []metav1.Condition, now metav1.Time) (merged []metav1.Condition, changed bool) {
	merged = make([]metav1.Condition, 0, len(decided)+len(old))
	for _, d := range decided {
		d.LastTransitionTime = now
		if i := slices.IndexFunc(old, func(o metav1.Condition) bool { return o.Type == d.Type }); i >= 0 && old[i].Status == d.Status {
			d.LastTransitionTime = old[i].LastTransitionTime
		}
		merged = append(merged, d)
	}
	for _, o := range old {
		if !slices.ContainsFunc(decided, func(d metav1.Condition) bool { return d.Type == o.Type }) {
			merged = append(merged, o)
		}
	}
	return merged, !slices.EqualFunc(merged, old, sameCondition)
}

func sameCondition(a, b metav1.Condition) bool {
	return a.Type == b.Type && a.Status == b.Status && a.Reason == b.Reason && a.Message == b.Message &&
		a.ObservedGeneration == b.ObservedGeneration && a.LastTransitionTime.Equal(&b.LastTransitionTime)
}
