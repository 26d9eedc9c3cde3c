package match

import (
	"crypto/tls"
	"crypto/x509"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/balance"
	"ramjet.dev/ramjet/match/urltemplate"
)

// unencoded are the fields of Route, VirtualHost and Backend that no
// section carries, each with why it changes no answer.
var unencoded = map[string]string{
	"Route.Order":          "ranks routes of equal precedence; the digest has its effect, the order the routes are encoded in",
	"Route.OrderPath":      "places a Regex route in controller order; the digest has its effect, the order the routes are encoded in",
	"Route.Regexp":         "is compiled from Path, which the digest carries",
	"VirtualHost.Creator":  "names the Ingress that created the host, for records and metrics",
	"Backend.PortNames":    "spells the port for the declarations that name it by index; error-page-sources digests the spelling where an answer carries it",
	"VirtualHost.regex":    "is the Regex routes in order, derived from Routes by New",
	"VirtualHost.regexIdx": "indexes regex for lookups, derived from Routes by New",
}

// sectionClaims maps "Type.Field" to the sections claiming it; a field
// of a Location is "Route.Location.Field" or
// "VirtualHost.FallbackLocation.Field" (see claimedBy).
func sectionClaims() map[string][]string {
	claims := make(map[string][]string)
	for _, s := range sections {
		for _, name := range claimedBy(s) {
			claims[name] = append(claims[name], s.name)
		}
	}
	return claims
}

// claimedBy names the fields s claims: a Location field on a route and on
// a fallback alike.
func claimedBy(s *section) []string {
	var names []string
	for _, c := range []struct {
		prefixes []string
		fields   []string
	}{
		{[]string{"Route."}, s.route},
		{[]string{"VirtualHost."}, s.host},
		{[]string{"Backend."}, s.backend},
		{[]string{"Route.Location.", "VirtualHost.FallbackLocation."}, s.location},
	} {
		for _, f := range c.fields {
			for _, p := range c.prefixes {
				names = append(names, p+f)
			}
		}
	}
	return names
}

// fieldNames names the fields of typ as "Type.Field"; a field holding a
// Location (Route's embedded one, VirtualHost.FallbackLocation) is named
// by each of its own, "Type.Field.LocationField".
func fieldNames(typ reflect.Type) []string {
	var names []string
	for f := range typ.Fields() {
		name := typ.Name() + "." + f.Name
		if f.Type != reflect.TypeFor[Location]() {
			names = append(names, name)
			continue
		}
		for lf := range f.Type.Fields() {
			names = append(names, name+"."+lf.Name)
		}
	}
	return names
}

// Every field of Route, VirtualHost and Backend, and of the Location of a
// route and of a fallback, is in exactly one section or declared
// unencoded, so a field added without a section fails here.
func TestSectionsClaimEveryField(t *testing.T) {
	claims := sectionClaims()
	for f, why := range unencoded {
		require.NotEmpty(t, why, f)
		claims[f] = append(claims[f], "unencoded")
	}
	fields := make(map[string]bool)
	for _, typ := range []reflect.Type{reflect.TypeFor[Route](), reflect.TypeFor[VirtualHost](), reflect.TypeFor[Backend]()} {
		for _, name := range fieldNames(typ) {
			fields[name] = true
			switch owners := claims[name]; len(owners) {
			case 0:
				t.Errorf("%s is in no section: add it to the section whose behaviour it changes, with its digest and text, or to unencoded with why it changes no answer", name)
			case 1:
			default:
				t.Errorf("%s is claimed by %s: one section owns a field", name, strings.Join(owners, " and "))
			}
		}
	}
	for name, owners := range claims {
		if !fields[name] {
			t.Errorf("%s, claimed by %s, is not a field", name, strings.Join(owners, " and "))
		}
	}
}

// The list is well formed: names unique; the routing part first and the
// only one without a tag; a tag repeated only by adjacent parts (which are
// encoded as one); each optional part asks about what it encodes.
func TestSectionList(t *testing.T) {
	names := make(map[string]bool)
	for _, s := range sections {
		require.NotEmpty(t, s.name)
		assert.False(t, names[s.name], "section %s twice", s.name)
		names[s.name] = true
		require.NotEmpty(t, s.digest, s.name)
	}
	require.LessOrEqual(t, len(digestBlocks), 64, "presence is a bit per block")
	assert.Equal(t, "", digestBlocks[0].tag, "routing first")
	tags := make(map[string]bool)
	for i, b := range digestBlocks {
		if i > 0 {
			assert.NotEmpty(t, b.tag, "block %d has no tag", i)
		}
		assert.False(t, tags[b.tag], "tag %q in two places: parts sharing a tag must be adjacent", b.tag)
		tags[b.tag] = true
		for _, p := range b.parts {
			if p.table != nil {
				assert.Len(t, b.parts, 1, "tag %q: a part encoded whole shares its tag with no other", b.tag)
				continue
			}
			assert.Equal(t, p.hostHas != nil, p.host != nil || p.route != nil, "tag %q: host predicate and encoders", b.tag)
			assert.Equal(t, p.backendHas != nil, p.backend != nil, "tag %q: backend predicate and encoder", b.tag)
		}
		if b.tag != "" {
			p := b.parts[0]
			assert.True(t, p.hostHas != nil || p.backendHas != nil || p.tableHas != nil, "tag %q: never present", b.tag)
		}
	}
}

// sectionSpec is a table with every section's feature set, built afresh
// each call: New takes ownership of what a Spec points to.
func sectionSpec(t *testing.T) Spec {
	key, err := balance.ParseHashKey("$remote_addr")
	require.NoError(t, err)
	canary := &Backend{ID: "prod/web-canary:80", Namespace: "prod", Name: "web-canary", Port: 80, Endpoints: []string{"10.0.1.1:8080"}}
	web := &Backend{ID: "prod/web:80", Namespace: "prod", Name: "web", Port: 80, Endpoints: []string{"10.0.0.1:8080"},
		Algorithm: balance.Hash, HashKey: key,
		Traffic: &Traffic{
			Canary:   &Canary{Backend: canary, Header: "X-Canary", HeaderValue: "yes", Weight: 10, WeightTotal: 100},
			Affinity: &SessionAffinity{Mode: balance.Balanced, CookieName: "route", MaxAge: "60"},
		}}
	api := &Backend{ID: "prod/api:80", Namespace: "prod", Name: "api", Port: 80, Protocol: GRPC, Endpoints: []string{"10.0.0.2:9090"}}
	policy := func() *Policy {
		return &Policy{MaxBodySize: 1 << 20, ReadTimeout: time.Minute, BodyBufferSize: 16 << 10}
	}
	cors := func() *CORS {
		return &CORS{Origins: []string{"https://a.example"}, Methods: "GET", Headers: "X-A", MaxAge: 60}
	}
	auth := func() *Auth {
		return &Auth{
			Basic:    &BasicAuth{Realm: "staff", Secret: "prod/pw", SecretType: "auth-file"},
			External: &ExternalAuth{URL: urltemplate.AuthURL{Raw: "http://auth/check"}},
		}
	}
	shop := &VirtualHost{
		Name: "shop.example.com", TLS: true, SSLRedirect: true, PreserveTrailingSlash: true, UsePortInRedirects: true,
		Fallback: web, FallbackLocation: Location{Policy: policy(), CORS: cors(), Auth: auth(),
			Rewrite:    &Rewrite{Host: "internal.example"},
			BackendTLS: &BackendTLS{Secret: "prod/up", CAs: []*x509.Certificate{{Raw: []byte{1}}}, Verify: true, VerifyDepth: 1},
			Response:   &Response{ErrorCodes: []int{404, 503}, ErrorBackend: web, NoAccessLog: true},
			Snippet:    &Snippet{Ops: []SnippetOp{{Kind: OpAddHeader, Name: "X-A", Value: "1"}}},
			Tracing:    &Tracing{TrustIncomingSpan: true},
			Extensions: NewExtensions(map[string]string{"example.com/team": "shop"}),
		},
		ClientTLS:   &ClientTLS{Secret: "prod/ca", CAs: []*x509.Certificate{{Raw: []byte{2}}}, Verify: VerifyOn, VerifyDepth: 1},
		Passthrough: web,
		SnippetLocations: []*SnippetLocation{{Match: "=", Path: "/ping",
			Snippet: &Snippet{Ops: []SnippetOp{{Kind: OpReturn, Code: 200, Value: "pong"}}}}},
		Actions: &HostActions{Aliases: []string{"store.example.com"}, AppRoot: "/app", Fallback: &Redirect{Code: 308, URL: "https://new.example/"}},
		Routes: []*Route{
			{Type: Prefix, Path: "/api", Backend: api, Order: 1, SSLRedirect: true, PreserveTrailingSlash: true, UsePortInRedirects: true,
				Location: Location{
					Extensions: NewExtensions(map[string]string{"example.com/team": "a"}),
					Rewrite:    &Rewrite{Host: "api.internal"}, Policy: policy(), CORS: cors(), Auth: auth(),
					BackendTLS: &BackendTLS{Secret: "prod/api-up", Name: "api.internal", ServerName: true},
					Response:   &Response{LimitRate: 1024, Mirror: &Mirror{Target: "http://mirror.internal$request_uri", Host: "mirror.internal"}},
					Snippet: &Snippet{Ops: []SnippetOp{{Kind: OpIf, Cond: &SnippetCond{Var: "host", Op: "=", Operand: "a.example"},
						Then: []SnippetOp{{Kind: OpReturn, Code: 301, Value: "https://b.example"}}}},
						Access: []AccessRule{{All: true, Deny: true}}},
					Tracing: &Tracing{OperationName: mustSpanName("HTTP $request_method $uri")}}},
			{Type: Exact, Path: "/old", Backend: web, Order: 2, Redirect: &Redirect{Code: 301, URL: "https://new.example/"}},
			{Type: Regex, Path: "/re/[a-z]+", Backend: web, Order: 3, Location: Location{Response: &Response{ErrorCodes: []int{503}, ErrorBackend: web}}},
		},
	}
	www := &VirtualHost{Name: "example.com", Actions: &HostActions{WWWTo: "www.example.com"}}
	certs := []*Certificate{{Secret: "prod/shop-tls", Hosts: []string{"shop.example.com"}, Fingerprint: "ab",
		Cert: &tls.Certificate{Certificate: [][]byte{{1, 2, 3}}}}}
	return Spec{VirtualHosts: []*VirtualHost{shop, www}, Backends: []*Backend{web, api, canary}, Certificates: certs, TLSHosts: []string{"shop.example.com"}}
}

// In sectionSpec: a host by name, a route by path, a backend by ID.
func specHost(s Spec, name string) *VirtualHost {
	return s.VirtualHosts[slices.IndexFunc(s.VirtualHosts, func(vh *VirtualHost) bool { return vh.Name == name })]
}

func specRoute(s Spec, path string) *Route {
	rs := specHost(s, "shop.example.com").Routes
	return rs[slices.IndexFunc(rs, func(r *Route) bool { return r.Path == path })]
}

func specBackend(s Spec, id string) *Backend {
	return s.Backends[slices.IndexFunc(s.Backends, func(be *Backend) bool { return be.ID == id })]
}

const shop = "shop.example.com"

// sectionChanges change one value of a section's feature each, by the
// field that holds it. sameText says why the text does not show it.
var sectionChanges = []struct {
	section, field, change string
	mutate                 func(Spec)
	sameText               string
}{
	{section: "routing", field: "Route.Type", change: "Exact to Prefix", mutate: func(s Spec) { specRoute(s, "/old").Type = Prefix }},
	{section: "routing", field: "Route.Path", change: "path", mutate: func(s Spec) { specRoute(s, "/api").Path = "/v2" }},
	{section: "routing", field: "Route.Backend", change: "backend", mutate: func(s Spec) { specRoute(s, "/api").Backend = specBackend(s, "prod/web:80") }},
	{section: "routing", field: "Route.SSLRedirect", change: "off", mutate: func(s Spec) { specRoute(s, "/api").SSLRedirect = false }},
	{section: "routing", field: "Route.ForceSSLRedirect", change: "on", mutate: func(s Spec) { specRoute(s, "/old").ForceSSLRedirect = true }},
	{section: "routing", field: "VirtualHost.Name", change: "name", mutate: func(s Spec) { specHost(s, "example.com").Name = "example.org" }},
	{section: "routing", field: "VirtualHost.Routes", change: "one fewer", mutate: func(s Spec) { vh := specHost(s, shop); vh.Routes = vh.Routes[:1] }},
	{section: "routing", field: "VirtualHost.Fallback", change: "none", mutate: func(s Spec) { specHost(s, shop).Fallback = nil }},
	{section: "routing", field: "VirtualHost.TLS", change: "off", mutate: func(s Spec) { specHost(s, shop).TLS = false }},
	{section: "routing", field: "VirtualHost.SSLRedirect", change: "off", mutate: func(s Spec) { specHost(s, shop).SSLRedirect = false }},
	{section: "routing", field: "VirtualHost.ForceSSLRedirect", change: "on", mutate: func(s Spec) { specHost(s, "example.com").ForceSSLRedirect = true }},
	{section: "deep-wildcard", field: "VirtualHost.DeepWildcard", change: "on", mutate: func(s Spec) { specHost(s, shop).DeepWildcard = true }},
	{section: "server-tls", field: "VirtualHost.ServerTLS", change: "ciphers", mutate: func(s Spec) {
		specHost(s, shop).ServerTLS = &ServerTLS{Ciphers: "ECDHE+AESGCM", CipherSuites: []uint16{0xc02f}}
	}},
	{section: "nginx-location", field: "Route.NginxLocation", change: "Prefix", mutate: func(s Spec) { specRoute(s, "/api").NginxLocation = NginxPrefix },
		sameText: "it names the route's external auth location, which the text does not show"},
	{section: "case-sensitive-regex", field: "Route.CaseSensitive", change: "on", mutate: func(s Spec) { specRoute(s, "/re/[a-z]+").CaseSensitive = true }},
	{section: "listener", field: "VirtualHost.Listener", change: "on :443 tls", mutate: func(s Spec) { specHost(s, shop).Listener = Listener{Port: 443, TLS: true} }},
	{section: "routing", field: "Backend.ID", change: "ID", mutate: func(s Spec) { specBackend(s, "prod/api:80").ID = "prod/api:8080" }},
	{section: "routing", field: "Backend.Namespace", change: "namespace", mutate: func(s Spec) { specBackend(s, "prod/api:80").Namespace = "staging" }, sameText: "a backend line shows its ID"},
	{section: "routing", field: "Backend.Name", change: "name", mutate: func(s Spec) { specBackend(s, "prod/api:80").Name = "api2" }, sameText: "a backend line shows its ID"},
	{section: "routing", field: "Backend.Port", change: "port", mutate: func(s Spec) { specBackend(s, "prod/api:80").Port = 81 }, sameText: "a backend line shows its ID"},
	{section: "routing", field: "Backend.Protocol", change: "GRPCS", mutate: func(s Spec) { specBackend(s, "prod/api:80").Protocol = GRPCS }},
	{section: "routing", field: "Backend.State", change: "PortNotFound", mutate: func(s Spec) { specBackend(s, "prod/api:80").State = PortNotFound }},
	{section: "routing", field: "Backend.Endpoints", change: "one more", mutate: func(s Spec) {
		be := specBackend(s, "prod/api:80")
		be.Endpoints = append(be.Endpoints, "10.0.0.3:9090")
	}},

	{section: "balancing", field: "Backend.Algorithm", change: "hash to least_conn", mutate: func(s Spec) {
		be := specBackend(s, "prod/web:80")
		be.Algorithm, be.HashKey = balance.LeastConn, balance.HashKey{}
	}},
	{section: "balancing", field: "Backend.Algorithm", change: "none to least_conn", mutate: func(s Spec) { specBackend(s, "prod/api:80").Algorithm = balance.LeastConn }},
	{section: "balancing", field: "Backend.HashKey", change: "key", mutate: func(s Spec) {
		key, _ := balance.ParseHashKey("$request_uri")
		specBackend(s, "prod/web:80").HashKey = key
	}},
	{section: "balancing", field: "Backend.HashSubset", change: "subsets of 3", mutate: func(s Spec) { specBackend(s, "prod/web:80").HashSubset = 3 }},

	{section: "https-redirect-trailing-slash", field: "Route.PreserveTrailingSlash", change: "off", mutate: func(s Spec) { specRoute(s, "/api").PreserveTrailingSlash = false }},
	{section: "https-redirect-trailing-slash", field: "VirtualHost.PreserveTrailingSlash", change: "off", mutate: func(s Spec) { specHost(s, shop).PreserveTrailingSlash = false }},
	{section: "https-redirect-trailing-slash", field: "Route.UsePortInRedirects", change: "off", mutate: func(s Spec) { specRoute(s, "/api").UsePortInRedirects = false }},
	{section: "https-redirect-trailing-slash", field: "VirtualHost.UsePortInRedirects", change: "off", mutate: func(s Spec) { specHost(s, shop).UsePortInRedirects = false }},

	{section: "extensions", field: "Route.Location.Extensions", change: "value", mutate: func(s Spec) {
		specRoute(s, "/api").Extensions = NewExtensions(map[string]string{"example.com/team": "b"})
	}},
	{section: "extensions", field: "Route.Location.Extensions", change: "none", mutate: func(s Spec) { specRoute(s, "/api").Extensions = nil }},
	{section: "extensions", field: "VirtualHost.FallbackLocation.Extensions", change: "value", mutate: func(s Spec) {
		specHost(s, shop).FallbackLocation.Extensions = NewExtensions(map[string]string{"example.com/team": "b"})
	}},
	{section: "extensions", field: "VirtualHost.FallbackLocation.Extensions", change: "none", mutate: func(s Spec) { specHost(s, shop).FallbackLocation.Extensions = nil }},

	{section: "redirects-and-aliases", field: "Route.Redirect", change: "code", mutate: func(s Spec) { specRoute(s, "/old").Redirect.Code = 302 }},
	{section: "redirects-and-aliases", field: "Route.Redirect", change: "relative", mutate: func(s Spec) { specRoute(s, "/old").Redirect.Relative = true }},
	{section: "redirects-and-aliases", field: "VirtualHost.Actions", change: "alias", mutate: func(s Spec) { specHost(s, shop).Actions.Aliases = []string{"shop.example.net"} }},
	{section: "redirects-and-aliases", field: "VirtualHost.Actions", change: "app-root", mutate: func(s Spec) { specHost(s, shop).Actions.AppRoot = "/start" }},
	{section: "redirects-and-aliases", field: "VirtualHost.Actions", change: "unmatched redirect", mutate: func(s Spec) { specHost(s, shop).Actions.Fallback.URL = "https://other.example/" }},
	{section: "redirects-and-aliases", field: "VirtualHost.Actions", change: "www redirect", mutate: func(s Spec) { specHost(s, "example.com").Actions.WWWTo = "web.example.com" }},

	{section: "rewrite", field: "Route.Location.Rewrite", change: "upstream host", mutate: func(s Spec) { specRoute(s, "/api").Rewrite.Host = "api2.internal" }},
	{section: "rewrite", field: "Route.Location.Rewrite", change: "forwarded prefix", mutate: func(s Spec) {
		rw := specRoute(s, "/api").Rewrite
		rw.ForwardedPrefix, rw.ForwardedPrefixSet = "/api", true
	}},
	{section: "rewrite", field: "VirtualHost.FallbackLocation.Rewrite", change: "none", mutate: func(s Spec) { specHost(s, shop).FallbackLocation.Rewrite = nil }},

	{section: "request-policy", field: "Route.Location.Policy", change: "body size", mutate: func(s Spec) { specRoute(s, "/api").Policy.MaxBodySize = 2 << 20 }},
	{section: "request-policy", field: "Route.Location.Policy", change: "body buffer", mutate: func(s Spec) { specRoute(s, "/api").Policy.BodyBufferSize = 32 << 10 }},
	{section: "request-policy", field: "Route.Location.Policy", change: "streamed body", mutate: func(s Spec) { specRoute(s, "/api").Policy.StreamRequestBody = true }},
	{section: "request-policy", field: "Route.Location.Policy", change: "rate limit", mutate: func(s Spec) {
		specRoute(s, "/api").Policy.RateLimit = &RateLimit{Zone: "prod/shop", RPS: 5, BurstRPS: 25}
	}},
	{section: "request-policy", field: "VirtualHost.FallbackLocation.Policy", change: "read timeout", mutate: func(s Spec) { specHost(s, shop).FallbackLocation.Policy.ReadTimeout = time.Second }},

	{section: "canary-and-affinity", field: "Backend.Traffic", change: "canary weight", mutate: func(s Spec) { specBackend(s, "prod/web:80").Traffic.Canary.Weight = 20 }},
	{section: "canary-and-affinity", field: "Backend.Traffic", change: "canary header value", mutate: func(s Spec) { specBackend(s, "prod/web:80").Traffic.Canary.HeaderValue = "always" }},
	{section: "canary-and-affinity", field: "Backend.Traffic", change: "canary header pattern error", mutate: func(s Spec) {
		c := specBackend(s, "prod/web:80").Traffic.Canary
		c.HeaderValue, c.HeaderPatternError = "", true
	}},
	{section: "canary-and-affinity", field: "Backend.Traffic", change: "affinity cookie", mutate: func(s Spec) { specBackend(s, "prod/web:80").Traffic.Affinity.CookieName = "s" }},
	{section: "canary-and-affinity", field: "Backend.Traffic", change: "affinity mode", mutate: func(s Spec) {
		specBackend(s, "prod/web:80").Traffic.Affinity.Mode = balance.Persistent
	}},
	{section: "canary-and-affinity", field: "Backend.Traffic", change: "none", mutate: func(s Spec) { specBackend(s, "prod/web:80").Traffic = nil }},
	{section: "canary-and-affinity", field: "Route.NoAffinityCookie", change: "no cookie set", mutate: func(s Spec) { specRoute(s, "/api").NoAffinityCookie = true }},
	{section: "canary-and-affinity", field: "Route.CookieSlash", change: "cookie path /api/", mutate: func(s Spec) { specRoute(s, "/api").CookieSlash = true }},

	{section: "cors", field: "Route.Location.CORS", change: "max-age", mutate: func(s Spec) { specRoute(s, "/api").CORS.MaxAge = 61 }},
	{section: "cors", field: "Route.Location.CORS", change: "credentials", mutate: func(s Spec) { specRoute(s, "/api").CORS.Credentials = true }},
	{section: "cors", field: "VirtualHost.FallbackLocation.CORS", change: "origin", mutate: func(s Spec) { specHost(s, shop).FallbackLocation.CORS.Origins = []string{"https://b.example"} }},
	{section: "cors", field: "VirtualHost.FallbackLocation.CORS", change: "none", mutate: func(s Spec) { specHost(s, shop).FallbackLocation.CORS = nil }},

	{section: "auth", field: "Route.Location.Auth", change: "realm", mutate: func(s Spec) { specRoute(s, "/api").Auth.Basic.Realm = "admins" }},
	{section: "auth", field: "Route.Location.Auth", change: "digest", mutate: func(s Spec) {
		specRoute(s, "/api").Auth.Digest = &DigestAuth{Realm: "admins", Secret: "prod/pw", SecretType: "auth-file"}
	}},
	{section: "auth", field: "Route.Location.Auth", change: "denied", mutate: func(s Spec) { specRoute(s, "/api").Auth.Denied = "Secret prod/pw not found" }},
	{section: "auth", field: "VirtualHost.FallbackLocation.Auth", change: "auth URL", mutate: func(s Spec) {
		specHost(s, shop).FallbackLocation.Auth.External.URL = urltemplate.AuthURL{Raw: "http://auth/verify"}
	}},
	{section: "response", field: "Route.Location.Response", change: "limit rate", mutate: func(s Spec) { specRoute(s, "/api").Response.LimitRate = 2048 }},
	{section: "response", field: "Route.Location.Response", change: "rate after", mutate: func(s Spec) { specRoute(s, "/api").Response.LimitRateAfter = 1 }},
	{section: "response", field: "Route.Location.Response", change: "mirror host", mutate: func(s Spec) { specRoute(s, "/api").Response.Mirror.Host = "m2.internal" }},
	{section: "response", field: "Route.Location.Response", change: "mirror body", mutate: func(s Spec) { specRoute(s, "/api").Response.Mirror.NoBody = true }},
	{section: "response", field: "Route.Location.Response", change: "stand-in", mutate: func(s Spec) { specRoute(s, "/api").Response.StandIn = &StandIn{Service: "old", Port: "80"} }},
	{section: "response", field: "Route.Location.Response", change: "rewrite log", mutate: func(s Spec) { specRoute(s, "/api").Response.RewriteLog = true }},
	{section: "response", field: "VirtualHost.FallbackLocation.Response", change: "codes", mutate: func(s Spec) { specHost(s, shop).FallbackLocation.Response.ErrorCodes = []int{404} }},
	{section: "response", field: "VirtualHost.FallbackLocation.Response", change: "error backend", mutate: func(s Spec) { specHost(s, shop).FallbackLocation.Response.ErrorBackend = nil }},
	{section: "response", field: "VirtualHost.FallbackLocation.Response", change: "access log", mutate: func(s Spec) { specHost(s, shop).FallbackLocation.Response.NoAccessLog = false }},
	{section: "response", field: "VirtualHost.FallbackLocation.Response", change: "none", mutate: func(s Spec) { specHost(s, shop).FallbackLocation.Response = nil }},
	{section: "error-page-sources", field: "Route.Source", change: "Ingress renamed", mutate: func(s Spec) {
		specRoute(s, "/re/[a-z]+").Source = Source{Namespace: "prod", Name: "shop-v2"}
	}},
	{section: "error-page-sources", field: "VirtualHost.FallbackSource", change: "Ingress renamed", mutate: func(s Spec) {
		specHost(s, shop).FallbackSource = Source{Namespace: "prod", Name: "shop-v2"}
	}},
	{section: "error-page-sources", field: "Route.PortName", change: "port by name", mutate: func(s Spec) {
		r := specRoute(s, "/re/[a-z]+")
		r.Backend.PortNames, r.PortName = []string{"http"}, 1
	}},
	{section: "error-page-sources", field: "VirtualHost.FallbackPortName", change: "port by name", mutate: func(s Spec) {
		vh := specHost(s, shop)
		vh.Fallback.PortNames, vh.FallbackPortName = []string{"http"}, 1
	}},
	{section: "auth", field: "VirtualHost.FallbackLocation.Auth", change: "none", mutate: func(s Spec) { specHost(s, shop).FallbackLocation.Auth = nil }},

	{section: "tracing", field: "Route.Location.Tracing", change: "trust", mutate: func(s Spec) { specRoute(s, "/api").Tracing.TrustIncomingSpan = true }},
	{section: "tracing", field: "Route.Location.Tracing", change: "operation name", mutate: func(s Spec) { specRoute(s, "/api").Tracing.OperationName = mustSpanName("api") }},
	{section: "tracing", field: "Route.Location.Tracing", change: "none", mutate: func(s Spec) { specRoute(s, "/api").Tracing = nil }},
	{section: "tracing", field: "VirtualHost.FallbackLocation.Tracing", change: "untrusted", mutate: func(s Spec) { specHost(s, shop).FallbackLocation.Tracing.TrustIncomingSpan = false }},
	{section: "tracing", field: "VirtualHost.FallbackLocation.Tracing", change: "none", mutate: func(s Spec) { specHost(s, shop).FallbackLocation.Tracing = nil }},

	{section: "tls-ends", field: "Route.Location.BackendTLS", change: "no SNI", mutate: func(s Spec) { specRoute(s, "/api").BackendTLS.ServerName = false }},
	{section: "tls-ends", field: "Route.Location.BackendTLS", change: "denied", mutate: func(s Spec) { specRoute(s, "/api").BackendTLS.Denied = "Secret prod/api-up not found" }},
	{section: "tls-ends", field: "VirtualHost.FallbackLocation.BackendTLS", change: "CA", mutate: func(s Spec) { specHost(s, shop).FallbackLocation.BackendTLS.CAs[0].Raw = []byte{3} }, sameText: "the text counts the CAs"},
	{section: "tls-ends", field: "VirtualHost.FallbackLocation.BackendTLS", change: "depth", mutate: func(s Spec) { specHost(s, shop).FallbackLocation.BackendTLS.VerifyDepth = 2 }},
	{section: "tls-ends", field: "VirtualHost.ClientTLS", change: "optional", mutate: func(s Spec) { specHost(s, shop).ClientTLS.Verify = VerifyOptional }},
	{section: "tls-ends", field: "VirtualHost.ClientTLS", change: "pass certificate", mutate: func(s Spec) { specHost(s, shop).ClientTLS.PassCertificate = true }},
	{section: "tls-ends", field: "VirtualHost.ClientTLS", change: "match CN", mutate: func(s Spec) { specHost(s, shop).ClientTLS.MatchCN = "CN=a" }},
	{section: "tls-ends", field: "VirtualHost.ClientTLS", change: "CRL", mutate: func(s Spec) {
		specHost(s, shop).ClientTLS.CRLs = []*x509.RevocationList{{Raw: []byte{3}}}
	}},
	{section: "tls-ends", field: "VirtualHost.Passthrough", change: "none", mutate: func(s Spec) { specHost(s, shop).Passthrough = nil }},
	{section: "snippets", field: "Route.Location.Snippet", change: "if operand", mutate: func(s Spec) { specRoute(s, "/api").Snippet.Ops[0].Cond.Operand = "c.example" }},
	{section: "snippets", field: "Route.Location.Snippet", change: "return code", mutate: func(s Spec) { specRoute(s, "/api").Snippet.Ops[0].Then[0].Code = 302 }},
	{section: "snippets", field: "Route.Location.Snippet", change: "allow", mutate: func(s Spec) { specRoute(s, "/api").Snippet.Access[0].Deny = false }},
	{section: "snippets", field: "Route.Location.Snippet", change: "none", mutate: func(s Spec) { specRoute(s, "/api").Snippet = nil }},
	{section: "request-conditions", field: "Route.When", change: "method", mutate: func(s Spec) { specRoute(s, "/api").When = &Conditions{Method: "GET"} }},
	{section: "request-conditions", field: "Route.When", change: "header", mutate: func(s Spec) {
		specRoute(s, "/api").When = &Conditions{Headers: []ValueMatch{{Name: "Version", Value: "two"}}}
	}},
	{section: "request-conditions", field: "Route.When", change: "query regex", mutate: func(s Spec) {
		specRoute(s, "/api").When = &Conditions{Query: []ValueMatch{{Name: "v", Value: "^t", Regex: true}}}
	}},
	{section: "weighted-backends", field: "Route.Split", change: "split", mutate: func(s Spec) {
		specRoute(s, "/api").Split = &Split{Alternatives: []Alternative{{Backend: specBackend(s, "prod/api:80"), Weight: 3}, {Weight: 1}}}
	}},
	{section: "weighted-backends", field: "Route.Split", change: "a backend's rewrite", mutate: func(s Spec) {
		specRoute(s, "/api").Split = &Split{Alternatives: []Alternative{{Backend: specBackend(s, "prod/api:80"), Weight: 1, Rewrite: &Rewrite{Host: "a.example"}}}}
	}},
	{section: "weighted-backends", field: "Route.Split", change: "a backend's redirect", mutate: func(s Spec) {
		sn, err := NewSnippet(Snippet{Ops: []SnippetOp{{Kind: OpReturn, Code: 301, Value: "https://a.example/"}}})
		if err != nil {
			panic(err)
		}
		specRoute(s, "/api").Split = &Split{Alternatives: []Alternative{{Backend: specBackend(s, "prod/api:80"), Weight: 1, Redirect: 301, Snippet: sn}}}
	}},
	{section: "snippets", field: "VirtualHost.FallbackLocation.Snippet", change: "always", mutate: func(s Spec) { specHost(s, shop).FallbackLocation.Snippet.Ops[0].Always = true }},
	{section: "snippets", field: "VirtualHost.SnippetLocations", change: "path", mutate: func(s Spec) { specHost(s, shop).SnippetLocations[0].Path = "/health" }},
	{section: "snippets", field: "VirtualHost.SnippetLocations", change: "none", mutate: func(s Spec) { specHost(s, shop).SnippetLocations = nil }},
}

// A change to any value a section carries changes the digest, and the
// text where the section renders it; every section has such changes, for
// every field it claims.
func TestSectionDigests(t *testing.T) {
	base := mustNew(t, sectionSpec(t))
	require.Equal(t, base.String(), mustNew(t, sectionSpec(t)).String(), "the fixture builds alike")
	baseText := withoutDigest(base.String())

	for _, s := range sections {
		t.Run(s.name, func(t *testing.T) {
			covered := make(map[string]bool)
			claimed := make(map[string]bool)
			for _, name := range claimedBy(s) {
				claimed[name] = true
			}
			for _, c := range sectionChanges {
				if c.section != s.name {
					continue
				}
				require.True(t, claimed[c.field], "%s does not claim %s", s.name, c.field)
				covered[c.field] = true
				spec := sectionSpec(t)
				c.mutate(spec)
				tab := mustNew(t, spec)
				assert.NotEqual(t, base.Digest(), tab.Digest(), "%s %s: digest unchanged", c.field, c.change)
				if c.sameText == "" {
					assert.NotEqual(t, baseText, withoutDigest(tab.String()), "%s %s: text unchanged", c.field, c.change)
				} else {
					assert.Equal(t, baseText, withoutDigest(tab.String()), "%s %s: %s", c.field, c.change, c.sameText)
				}
			}
			for f := range claimed {
				assert.True(t, covered[f], "no change of %s in sectionChanges", f)
			}
		})
	}
	for _, c := range sectionChanges {
		assert.True(t, slices.ContainsFunc(sections, func(s *section) bool { return s.name == c.section }), "no section %q", c.section)
	}
}

func withoutDigest(text string) string {
	_, rest, _ := strings.Cut(text, "\n")
	return rest
}

func mustSpanName(s string) SpanName {
	n, err := ParseSpanName(s)
	if err != nil {
		panic(err)
	}
	return n
}
