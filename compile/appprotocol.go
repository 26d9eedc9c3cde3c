package compile

import (
	"strconv"

	corev1 "k8s.io/api/core/v1"

	"ramjet.dev/ramjet/match"
)

// The appProtocol values of a Service port (KEP-3726) an HTTPRoute's
// backend is dialled by (SPEC §20): kubernetes.io/h2c is HTTP/2 with prior
// knowledge over cleartext (match.H2C); kubernetes.io/ws, http and none
// are HTTP/1.1, which carries WebSocket upgrades. Ingresses never read
// appProtocol, as ingress-nginx does not.
const (
	AppProtocolH2C = "kubernetes.io/h2c"
	AppProtocolWS  = "kubernetes.io/ws"
)

// noteRouteBackend records that an HTTPRoute sends to backend bi, which
// decideAppProtocols then dials by its port's appProtocol.
func (b *builder) noteRouteBackend(hr *HTTPRoute, field string, bi *backendInfo) {
	if hr.kind() == GRPCRouteKind {
		return // dialled as gRPC (decideRouteProtocols)
	}
	if b.routeBackends == nil {
		b.routeBackends = make(map[*backendInfo]grpcUse)
	}
	if _, ok := b.routeBackends[bi]; !ok {
		b.routeBackends[bi] = grpcUse{hr.ref(), field}
	}
}

// decideAppProtocols dials the backends HTTPRoutes send to as their
// Service port's appProtocol asks: kubernetes.io/h2c as H2C. A backend an
// Ingress or a GRPCRoute serves keeps the protocol they decided, and an
// h2c port there warns on the HTTPRoute; an appProtocol ramjet does not
// dial by warns on the Service port, which is dialled as HTTP/1.1.
func (b *builder) decideAppProtocols() {
	for _, bi := range b.backendList {
		use, ok := b.routeBackends[bi]
		if !ok || bi.port == nil || bi.port.AppProtocol == nil {
			continue
		}
		ap := *bi.port.AppProtocol
		switch ap {
		case "", "http", AppProtocolWS:
			continue
		case AppProtocolH2C:
			if _, grpc := b.grpcBackends[bi]; len(bi.claims) > 0 || grpc {
				if bi.b.Protocol != match.GRPC && bi.b.Protocol != match.H2C {
					b.warn(BackendUnsupported, use.ref, use.field, "backend "+bi.b.ID+" has appProtocol "+AppProtocolH2C+
						" but is dialled as "+bi.b.Protocol.String()+", as the Ingress serving it decides")
				}
				continue
			}
			bi.b.Protocol = match.H2C
			continue
		}
		b.warn(BackendUnsupported, Ref{Kind: "Service", Namespace: bi.b.Namespace, Name: bi.b.Name}, servicePortField(b, bi),
			"appProtocol "+strconv.Quote(ap)+" is not one ramjet dials by ("+AppProtocolH2C+", "+AppProtocolWS+" or http); "+
				use.ref.Kind+" "+use.ref.Namespace+"/"+use.ref.Name+" reaches port "+strconv.Itoa(int(bi.b.Port))+" over HTTP/1.1")
	}
}

// servicePortField locates bi's port in its Service ("spec.ports[1].appProtocol").
func servicePortField(b *builder, bi *backendInfo) string {
	var ports []corev1.ServicePort
	if svc := b.serviceEntry(bi.b.Namespace, bi.b.Name).svc; svc != nil {
		ports = svc.Spec.Ports
	}
	for i := range ports {
		if &ports[i] == bi.port {
			return "spec.ports[" + strconv.Itoa(i) + "].appProtocol"
		}
	}
	return "spec.ports.appProtocol"
}

// AppProtocolServed reports whether ramjet speaks a Service port's
// appProtocol ap to an HTTPRoute's backend: unset, http, kubernetes.io/ws
// and kubernetes.io/h2c. Another is dialled as HTTP/1.1, warned, and the
// route's ResolvedRefs is False with UnsupportedProtocol.
func AppProtocolServed(ap string) bool {
	switch ap {
	case "", "http", AppProtocolWS, AppProtocolH2C:
		return true
	}
	return false
}
