package compile

import (
	"fmt"
	"regexp"
	"strings"

	"ramjet.dev/ramjet/match"
)

// GRPCRouteKind is the Kind of a GRPCRoute in warnings and sources. A
// GRPCRoute reaches compile as an HTTPRoute of this Kind whose matches
// carry GRPC (SPEC §20): its requests are HTTP/2 POSTs to
// "/<service>/<method>", so its method matches are path matches, and its
// backends are dialled as gRPC.
const GRPCRouteKind = "GRPCRoute"

// GRPCMethodMatch is a GRPCRoute's method match: Service and Method, ""
// for any; Regex for RegularExpression, whose patterns match the whole
// service or method name, case-sensitive.
type GRPCMethodMatch struct {
	Service, Method string
	Regex           bool
}

// kind is the route's Kind, HTTPRoute when not set.
func (r *HTTPRoute) kind() string {
	if r.Kind == "" {
		return HTTPRouteKind
	}
	return r.Kind
}

// grpcPath places a gRPC method match in the path table so that the
// table's own order is the GRPCRoute precedence (characters of service,
// then of method, then header matches; then age and rule order): an exact
// service and method is an Exact path, which goes first; an exact service
// alone is a Prefix, which goes before every regular expression; the rest
// (a method alone, regular expressions, and a match of every method) are
// Regex routes whose OrderPath ranks them by the characters of service and
// method they match, most first. m.GRPC nil (every method) is the last.
func grpcPath(g *GRPCMethodMatch) (typ match.PathType, path, orderPath string) {
	if g == nil {
		g = &GRPCMethodMatch{}
	}
	switch {
	case !g.Regex && g.Service != "" && g.Method != "":
		return match.Exact, "/" + g.Service + "/" + g.Method, ""
	case !g.Regex && g.Service != "":
		return match.Prefix, "/" + g.Service, ""
	}
	part := func(v string) string {
		switch {
		case v == "":
			return "[^/]+"
		case g.Regex:
			return "(?:" + v + ")"
		}
		return regexp.QuoteMeta(v)
	}
	path = "/" + part(g.Service) + "/" + part(g.Method) + `\z`
	if g.Service == "" && g.Method == "" {
		path = "/"
	}
	// Equal lengths, so the string order decides: more characters first.
	return match.Regex, path, fmt.Sprintf("grpc:%06d:%06d", len(g.Service), len(g.Method))
}

// grpcRouteKey is httpRouteKey for a gRPC method match: its Regex
// patterns are case-sensitive, as the HTTPRoute ones
// (caseSensitiveRegex).
func (b *builder) grpcRouteKey(m HTTPRouteMatch) (key string, re *match.Regexp, why string) {
	if m.Type != match.Regex {
		if strings.Contains(m.Path[1:], "//") || m.Type == match.Exact && strings.Count(m.Path, "/") != 2 {
			return "", nil, "is not /service/method"
		}
		return m.Path, nil, badSegment(m.Path)
	}
	re, why = b.caseSensitiveRegex(m.Path)
	if why != "" {
		return "", nil, why
	}
	return m.Path, re, ""
}

// noteGRPCBackend records that a GRPCRoute sends to backend bi, which
// decideRouteProtocols then dials as gRPC.
func (b *builder) noteGRPCBackend(hr *HTTPRoute, field string, bi *backendInfo) {
	if hr.kind() != GRPCRouteKind {
		return
	}
	if b.grpcBackends == nil {
		b.grpcBackends = make(map[*backendInfo]grpcUse)
	}
	if _, ok := b.grpcBackends[bi]; !ok {
		b.grpcBackends[bi] = grpcUse{hr.ref(), field}
	}
}

// grpcUse is the first GRPCRoute reference to a backend.
type grpcUse struct {
	ref   Ref
	field string
}

// decideRouteProtocols dials as gRPC (cleartext HTTP/2) the backends
// GRPCRoutes send to. A backend that Ingresses serve keeps the protocol
// the oldest of them decided (decideProtocols), GRPC or GRPCS as it is;
// any other protocol warns on the GRPCRoute, whose requests there answer
// 502 as a gRPC request to a backend not marked for gRPC does.
func (b *builder) decideRouteProtocols() {
	for _, bi := range b.backendList {
		use, ok := b.grpcBackends[bi]
		if !ok {
			continue
		}
		if len(bi.claims) == 0 {
			bi.b.Protocol = match.GRPC
			continue
		}
		if p := bi.b.Protocol; p != match.GRPC && p != match.GRPCS {
			owner := bi.claims[0]
			b.conflict(AnnotationConflict, use.ref, use.field,
				"backend "+bi.b.ID+" is dialled as "+p.String()+", as the oldest Ingress serving it decides; gRPC requests to it answer 502",
				owner.ref(), "")
		}
	}
}

// routeKeyOf is the key of a match of hr: grpcRouteKey's on a GRPCRoute,
// httpRouteKey's otherwise.
func (b *builder) routeKeyOf(hr *HTTPRoute, m HTTPRouteMatch) (key string, re *match.Regexp, why string) {
	if hr.kind() == GRPCRouteKind {
		return b.grpcRouteKey(m)
	}
	return b.httpRouteKey(m)
}
