package compile

import (
	"testing"

	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/match"
)

func mkGRPCRoute(ns, name string, created int64, host string, ms ...HTTPRouteMatch) *HTTPRoute {
	r := mkHTTPRoute(ns, name, created, host, ms...)
	r.Kind = GRPCRouteKind
	return r
}

// TestGRPCRoutePrecedence: the table's order is the GRPCRoute precedence
// (characters of service, then of method), method names are
// case-sensitive, and the backends are dialled as gRPC.
func TestGRPCRoutePrecedence(t *testing.T) {
	m := func(svc, method string, regex bool) HTTPRouteMatch {
		return HTTPRouteMatch{Field: "spec.rules[0].matches[0]", GRPC: &GRPCMethodMatch{Service: svc, Method: method, Regex: regex}}
	}
	s := routeSnapshot(t, nil,
		mkGRPCRoute("prod", "all", 1, "api.example", HTTPRouteMatch{Field: "spec.rules[0]"}),
		mkGRPCRoute("prod", "method", 1, "api.example", m("", "Get", false)),
		mkGRPCRoute("prod", "regex-method", 1, "api.example", m("", "Ge.", true)),
		mkGRPCRoute("prod", "service", 1, "api.example", m("shop.Cart", "", false)),
		mkGRPCRoute("prod", "both", 1, "api.example", m("shop.Cart", "Get", false)),
		mkGRPCRoute("prod", "regex-service", 1, "api.example", m(`shop\.[A-Z][a-z]+`, "", true)),
	)
	res := Compile(s, Options{AllowLoopbackEndpoints: true})
	require.Empty(t, res.Warnings)
	for path, want := range map[string]string{
		"/shop.Cart/Get":   "both",
		"/shop.Cart/Put":   "service",
		"/shop.Items/Put":  "regex-service", // 16 service characters
		"/other.Items/Get": "method",        // 3 method characters, as "Ge." has: first by name
		"/other.Items/Gex": "regex-method",
		"/other.Items/get": "all", // case-sensitive
		"/SHOP.Cart/Get":   "method",
		"/x/y/z":           "all",
	} {
		got := res.Table.Lookup("api.example", path)
		require.NotNil(t, got.Route, path)
		require.Equal(t, want, got.Route.Source.Name, path)
		require.Equal(t, GRPCRouteKind, got.Route.Source.Kind)
		require.Equal(t, match.GRPC, got.Backend.Protocol, path)
	}
}

// TestGRPCPath is grpcPath's placement of each kind of method match.
func TestGRPCPath(t *testing.T) {
	for _, c := range []struct {
		in         *GRPCMethodMatch
		typ        match.PathType
		path, rank string
	}{
		{&GRPCMethodMatch{Service: "a.B", Method: "C"}, match.Exact, "/a.B/C", ""},
		{&GRPCMethodMatch{Service: "a.B"}, match.Prefix, "/a.B", ""},
		{&GRPCMethodMatch{Method: "C"}, match.Regex, `/[^/]+/C\z`, "grpc:000000:000001"},
		{&GRPCMethodMatch{Service: "a.*", Method: "C|D", Regex: true}, match.Regex, `/(?:a.*)/(?:C|D)\z`, "grpc:000003:000003"},
		{nil, match.Regex, "/", "grpc:000000:000000"},
	} {
		typ, path, rank := grpcPath(c.in)
		require.Equal(t, c.typ, typ)
		require.Equal(t, c.path, path)
		require.Equal(t, c.rank, rank)
	}
}

// FuzzGRPCRoute compiles a GRPCRoute with any method match: no panic, and
// an accepted Exact service and method is found at its path.
func FuzzGRPCRoute(f *testing.F) {
	for _, s := range []struct {
		svc, method string
		regex       bool
	}{{"a.B", "C", false}, {"", "C", false}, {"a(", "", true}, {"a/b", "c", false}, {"", "", false}, {"..", "%2F", false}, {`\z`, "(?i)x", true}} {
		f.Add(s.svc, s.method, s.regex)
	}
	f.Fuzz(func(t *testing.T, svc, method string, regex bool) {
		s := routeSnapshot(t, nil, mkGRPCRoute("prod", "r", 1, "api.example",
			HTTPRouteMatch{Field: "spec.rules[0].matches[0]", GRPC: &GRPCMethodMatch{Service: svc, Method: method, Regex: regex}}))
		res := Compile(s, Options{})
		if regex || svc == "" || method == "" || len(res.Warnings) > 0 {
			return
		}
		if got := res.Table.Lookup("api.example", "/"+svc+"/"+method); got.Route == nil {
			t.Errorf("/%s/%s: not found, and no warning", svc, method)
		}
	})
}
