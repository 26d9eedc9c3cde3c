package match

import (
	"errors"
	"net/netip"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/balance"
	"ramjet.dev/ramjet/match/htpasswd"
	"ramjet.dev/ramjet/match/urltemplate"
)

// pair builds the same spec twice, once from struct literals and once
// through the constructors, and returns both tables.
func pair(t *testing.T, build func(literal bool) Spec) (lit, built *Table) {
	t.Helper()
	return mustNew(t, build(true)), mustNew(t, build(false))
}

// sameTables checks what every feature shares: the same digest and text.
func sameTables(t *testing.T, lit, built *Table) {
	t.Helper()
	assert.Equal(t, built.Digest(), lit.Digest(), "digest")
	assert.Equal(t, built.String(), lit.String(), "text")
}

var prepBackend = &Backend{ID: "prod/web:80", Namespace: "prod", Name: "web", Port: 80, Endpoints: []string{"10.0.0.1:80"}}

func prepHost(routes ...*Route) []*VirtualHost {
	return []*VirtualHost{{Name: "a.example", Routes: routes}}
}

func prepRoute(typ PathType, path string) *Route {
	return &Route{Type: typ, Path: path, Backend: prepBackend,
		Source: Source{Namespace: "prod", Name: "web", Field: "spec.rules[0].http.paths[0]"}}
}

func TestNewPreparesCORS(t *testing.T) {
	spec := CORS{Origins: []string{"https://App.example", "https://*.Example.org"}, Methods: "GET, PUT", Headers: "X-A",
		ExposeHeaders: "X-B", Credentials: true, MaxAge: 60}
	shared := &spec // one literal for two routes, as compile shares one per Ingress
	lit, built := pair(t, func(literal bool) Spec {
		c := NewCORS(spec)
		if literal {
			c = shared
		}
		a, b := prepRoute(Prefix, "/a"), prepRoute(Prefix, "/b")
		a.CORS, b.CORS = c, c
		return Spec{VirtualHosts: prepHost(a, b), Backends: []*Backend{prepBackend}}
	})
	sameTables(t, lit, built)
	got, want := lit.Lookup("a.example", "/a/x").Route.CORS, built.Lookup("a.example", "/a/x").Route.CORS
	assert.Same(t, got, lit.Lookup("a.example", "/b").Route.CORS, "a shared literal stays shared")
	assert.NotSame(t, shared, got, "the caller's value is prepared in a copy")
	assert.Nil(t, shared.hdr.maxAge, "and is never written")
	for _, origin := range []string{"https://app.example", "https://x.example.org", "https://y.x.example.org", "", "null"} {
		assert.Equal(t, want.Allows(origin), got.Allows(origin), origin)
		gh, wh := map[string][]string{}, map[string][]string{}
		got.SetHeaders(gh, []string{origin})
		want.SetHeaders(wh, []string{origin})
		assert.Equal(t, wh, gh, origin)
	}

	// The example: a literal allowing any origin used to send
	// empty Access-Control-* values.
	anyOrigin := prepRoute(Prefix, "/")
	anyOrigin.CORS = &CORS{AnyOrigin: true, Methods: DefaultCORSMethods, Headers: DefaultCORSHeaders, MaxAge: DefaultCORSMaxAge}
	h := map[string][]string{}
	mustNew(t, Spec{VirtualHosts: prepHost(anyOrigin)}).Lookup("a.example", "/").Route.CORS.SetHeaders(h, nil)
	assert.Equal(t, map[string][]string{
		"Access-Control-Allow-Origin":  {"*"},
		"Access-Control-Allow-Methods": {DefaultCORSMethods},
		"Access-Control-Allow-Headers": {DefaultCORSHeaders},
		"Access-Control-Max-Age":       {"1728000"},
	}, h)
}

func TestNewPreparesAuth(t *testing.T) {
	users, problems := htpasswd.ParseHtpasswd([]byte("alice:{PLAIN}pw\n"))
	require.Empty(t, problems)
	const authURL, signin = "https://$host/check?ip=$remote_addr", "/start?rd=$escaped_request_uri"
	lit, built := pair(t, func(literal bool) Spec {
		basic := BasicAuth{Realm: "staff", Secret: "prod/pw", SecretType: "auth-file", Users: users}
		ext := &ExternalAuth{URL: urltemplate.AuthURL{Raw: authURL}, Signin: &urltemplate.AuthURL{Raw: signin}, ResponseHeaders: []string{"X-User"}}
		a := &Auth{Basic: &basic, External: ext}
		if !literal {
			u, err := urltemplate.ParseAuthURL(authURL, false)
			require.NoError(t, err)
			s, err := urltemplate.ParseAuthURL(signin, true)
			require.NoError(t, err)
			ext.URL, ext.Signin = u, &s
			a.Basic = NewBasicAuth(basic)
		}
		r := prepRoute(Prefix, "/admin")
		r.Auth = a
		vh := prepHost(r)
		vh[0].FallbackLocation.Auth = a
		return Spec{VirtualHosts: vh, Backends: []*Backend{prepBackend}}
	})
	sameTables(t, lit, built)
	vars := &urltemplate.RequestVars{Host: "a.example", HTTPHost: "a.example", Scheme: "https", RequestURI: "/admin?x=1 2", RemoteAddr: "192.0.2.1"}
	for _, path := range []string{"/admin", "/other"} {
		got, want := lit.Lookup("a.example", path).Location().Auth, built.Lookup("a.example", path).Location().Auth
		require.NotNil(t, got, path)
		assert.Equal(t, want.Basic.Challenge(), got.Basic.Challenge(), path)
		assert.Equal(t, 0.0, testing.AllocsPerRun(10, func() { got.Basic.Challenge() }), "the challenge is prepared once")
		assert.Equal(t, want.External.URL.Expand(vars), got.External.URL.Expand(vars), path)
		assert.Equal(t, "https://a.example/check?ip=192.0.2.1", got.External.URL.Expand(vars))
		assert.Equal(t, want.External.Signin.Expand(vars), got.External.Signin.Expand(vars), path)
	}

	bad := prepRoute(Prefix, "/admin")
	bad.Auth = &Auth{External: &ExternalAuth{URL: urltemplate.AuthURL{Raw: "ftp://auth/"}}}
	_, err := New(Spec{VirtualHosts: prepHost(bad)})
	require.Error(t, err)
	assert.Equal(t, `match: host "a.example" route Prefix "/admin" (Ingress prod/web spec.rules[0].http.paths[0]) Auth.External.URL: is not an http or https URL`, err.Error())
	var ve *ValueError
	require.True(t, errors.As(err, &ve))
	assert.Same(t, bad, ve.Route)
	assert.Equal(t, "Auth.External.URL", ve.Field)

	fallback := &VirtualHost{Name: "b.example", FallbackLocation: Location{
		Auth: &Auth{External: &ExternalAuth{URL: urltemplate.AuthURL{Raw: "https://auth/"}, Signin: &urltemplate.AuthURL{Raw: "start"}}}}}
	_, err = New(Spec{VirtualHosts: []*VirtualHost{fallback}})
	assert.EqualError(t, err, `match: host "b.example" FallbackLocation.Auth.External.Signin: is not an http or https URL`)
}

func TestNewPreparesRewrite(t *testing.T) {
	spec := Rewrite{Target: "/v2/$1", Host: "internal.svc:8080", ForwardedPrefix: "/$1", ForwardedPrefixSet: true}
	lit, built := pair(t, func(literal bool) Spec {
		rw := &spec
		if !literal {
			var err error
			rw, err = NewRewrite(spec)
			require.NoError(t, err)
		}
		r := prepRoute(Regex, `/api/(.*)`)
		r.Rewrite = rw
		redirect := prepRoute(Prefix, "/old")
		redirect.Rewrite = &Rewrite{Target: "https://new.example/x"}
		if !literal {
			redirect.Rewrite, _ = NewRewrite(*redirect.Rewrite)
		}
		return Spec{VirtualHosts: prepHost(r, redirect), Backends: []*Backend{prepBackend}}
	})
	sameTables(t, lit, built)
	for _, path := range []string{"/api/users", "/API/a b", "/old/x"} {
		gr, wr := lit.Lookup("a.example", path).Route, built.Lookup("a.example", path).Route
		assert.Equal(t, wr.Rewrite.Redirect(), gr.Rewrite.Redirect(), path)
		assert.Equal(t, wr.Rewrite.Apply(wr, path, "q=1", "https", "a.example"), gr.Rewrite.Apply(gr, path, "q=1", "https", "a.example"), path)
	}
	assert.Equal(t, "/v2/users?q=1", lit.Lookup("a.example", "/api/users").Route.Rewrite.Apply(lit.Lookup("a.example", "/api/users").Route, "/api/users", "q=1", "http", "h").Target)
	assert.False(t, spec.ready, "the caller's value is never written")

	for _, tt := range []struct {
		vh   *VirtualHost
		want string
	}{
		{&VirtualHost{Name: "a.example", Routes: []*Route{{Type: Prefix, Path: "/x", Location: Location{Rewrite: &Rewrite{Target: "/$request_uri"}}}}},
			`match: host "a.example" route Prefix "/x" Rewrite: rewrite target "/$request_uri": $request_uri is not a variable ramjet expands in a rewrite target (it expands $host, $scheme, $1 to $9)`},
		{&VirtualHost{Name: "a.example", FallbackLocation: Location{Rewrite: &Rewrite{Host: "a b"}}},
			`match: host "a.example" FallbackLocation.Rewrite: upstream host "a b" is not a host name or address with an optional port`},
	} {
		_, err := New(Spec{VirtualHosts: []*VirtualHost{tt.vh}})
		assert.EqualError(t, err, tt.want)
	}
}

// An Extensions cannot be written with content as a literal; the empty
// literal answers as NewExtensions of nothing.
func TestNewExtensionsLiteral(t *testing.T) {
	lit, built := pair(t, func(literal bool) Spec {
		r := prepRoute(Prefix, "/")
		r.Extensions = NewExtensions(nil)
		if literal {
			r.Extensions = &Extensions{}
		}
		return Spec{VirtualHosts: prepHost(r), Backends: []*Backend{prepBackend}}
	})
	sameTables(t, lit, built)
	got, want := lit.Lookup("a.example", "/").Route.Extensions, built.Lookup("a.example", "/").Route.Extensions
	assert.Equal(t, want.Len(), got.Len())
	gv, gok := got.Get("example.com/x")
	wv, wok := want.Get("example.com/x")
	assert.Equal(t, [2]any{wv, wok}, [2]any{gv, gok})
	keys := func(e *Extensions) (ks []string) {
		for k := range e.All() {
			ks = append(ks, k)
		}
		return ks
	}
	assert.Equal(t, keys(want), keys(got))
}

func TestNewCompilesRegexRoutes(t *testing.T) {
	lit, built := pair(t, func(literal bool) Spec {
		r := prepRoute(Regex, `/api/v[0-9]+/.*`)
		if !literal {
			re, err := CompileRegex(r.Path, 0)
			require.NoError(t, err)
			r.Regexp = re
		} else {
			r.Regexp = &Regexp{} // an empty literal is compiled from Path too
		}
		return Spec{VirtualHosts: prepHost(r), Backends: []*Backend{prepBackend}}
	})
	sameTables(t, lit, built)
	for _, path := range []string{"/api/v2/x", "/API/V10/", "/api/vx/", "/"} {
		assert.Equal(t, built.Lookup("a.example", path).Route != nil, lit.Lookup("a.example", path).Route != nil, path)
	}
	require.NotNil(t, lit.Lookup("a.example", "/API/V10/").Route)

	_, err := New(Spec{VirtualHosts: prepHost(prepRoute(Regex, `/a(`))})
	require.Error(t, err)
	assert.True(t, strings.HasPrefix(err.Error(), `match: host "a.example" route Regex "/a(" (Ingress prod/web spec.rules[0].http.paths[0]) Regexp: regex "/a(":`), err.Error())
}

func TestNewPreparesPolicy(t *testing.T) {
	canonical := &Policy{Allow: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}, Deny: []netip.Prefix{netip.MustParsePrefix("10.1.0.0/16")},
		RateLimit: &RateLimit{Zone: "prod/web", RPS: 5, BurstRPS: 25, Exempt: []netip.Prefix{netip.MustParsePrefix("192.0.2.0/24")}}}
	written := &Policy{Allow: []netip.Prefix{netip.MustParsePrefix("10.9.9.9/8")}, Deny: []netip.Prefix{netip.MustParsePrefix("::ffff:10.1.0.0/112")},
		RateLimit: &RateLimit{Zone: "prod/web", RPS: 5, BurstRPS: 25, Exempt: []netip.Prefix{netip.MustParsePrefix("::ffff:192.0.2.7/120")}}}
	lit, built := pair(t, func(literal bool) Spec {
		r := prepRoute(Prefix, "/")
		r.Policy = canonical
		if literal {
			r.Policy = written
		}
		return Spec{VirtualHosts: prepHost(r), Backends: []*Backend{prepBackend}}
	})
	sameTables(t, lit, built)
	got := lit.Lookup("a.example", "/").Route.Policy
	assert.Equal(t, canonical, got)
	assert.Equal(t, "10.9.9.9/8", written.Allow[0].String(), "the caller's value is never written")
	for _, a := range []string{"10.2.3.4", "10.1.2.3", "192.0.2.1", "::ffff:10.2.3.4"} {
		addr := netip.MustParseAddr(a)
		assert.Equal(t, canonical.Admits(addr), got.Admits(addr), a)
	}

	for field, p := range map[string]*Policy{
		"Policy.Allow":          {Allow: []netip.Prefix{{}}},
		"Policy.RateLimit.Zone": {RateLimit: &RateLimit{RPS: 1, BurstRPS: 5}},
	} {
		r := prepRoute(Prefix, "/")
		r.Policy = p
		_, err := New(Spec{VirtualHosts: prepHost(r)})
		var ve *ValueError
		require.True(t, errors.As(err, &ve), field)
		assert.Equal(t, field, ve.Field)
	}
}

func TestNewRefusesRedirectCodes(t *testing.T) {
	r := prepRoute(Exact, "/x")
	r.Redirect = &Redirect{URL: "https://elsewhere.example/"}
	_, err := New(Spec{VirtualHosts: prepHost(r)})
	assert.EqualError(t, err, `match: host "a.example" route Exact "/x" (Ingress prod/web spec.rules[0].http.paths[0]) Redirect.Code: 0 is not a redirect status (300 to 308)`)
	_, err = New(Spec{VirtualHosts: []*VirtualHost{{Name: "a.example", Actions: &HostActions{Fallback: &Redirect{Code: 200, URL: "/"}}}}})
	assert.EqualError(t, err, `match: host "a.example" Actions.Fallback.Code: 200 is not a redirect status (300 to 308)`)
}

func TestNewChecksTraffic(t *testing.T) {
	canaryOf := func(c *Canary) *Backend {
		return &Backend{ID: "prod/web:80", Endpoints: []string{"10.0.0.1:80"}, Traffic: &Traffic{Canary: c}}
	}
	next := &Backend{ID: "prod/next:80", Endpoints: []string{"10.0.0.2:80"}}
	c := &Canary{Backend: next, Weight: 10}
	primary := canaryOf(c)
	tab := mustNew(t, Spec{Backends: []*Backend{primary, next}})
	assert.Equal(t, 100, primary.Traffic.Canary.WeightTotal, "a total under 100 is read as 100, as CanaryTotal does")
	assert.Equal(t, 0, c.WeightTotal, "the caller's canary is never written")
	assert.Equal(t, mustNew(t, Spec{Backends: []*Backend{canaryOf(&Canary{Backend: next, Weight: 10, WeightTotal: 100}), next}}).Digest(), tab.Digest())

	for field, be := range map[string]*Backend{
		"Traffic.Canary.Backend":      canaryOf(&Canary{Weight: 10}),
		"Traffic.Canary.Sticky":       canaryOf(&Canary{Backend: next, Sticky: true}),
		"Traffic.Affinity.CookieName": {ID: "prod/web:80", Traffic: &Traffic{Affinity: &SessionAffinity{}}},
	} {
		_, err := New(Spec{Backends: []*Backend{be, next}})
		var ve *ValueError
		require.True(t, errors.As(err, &ve), field)
		assert.Equal(t, field, ve.Field)
		assert.True(t, strings.HasPrefix(err.Error(), `match: backend "prod/web:80" `+field+": "), err.Error())
	}
}

// Tables built at once may share feature values written as literals: New
// only reads them (run with -race).
func TestNewSharedLiteralsConcurrently(t *testing.T) {
	cors := &CORS{AnyOrigin: true, Methods: "GET"}
	rw := &Rewrite{Target: "/v2"}
	auth := &Auth{Basic: &BasicAuth{Realm: "r"}}
	var wg sync.WaitGroup
	tables := make([]*Table, 4)
	for i := range tables {
		wg.Go(func() {
			r := prepRoute(Prefix, "/")
			r.CORS, r.Rewrite, r.Auth = cors, rw, auth
			tab, err := New(Spec{VirtualHosts: prepHost(r)})
			if err == nil {
				tables[i] = tab
			}
		})
	}
	wg.Wait()
	for _, tab := range tables {
		require.NotNil(t, tab)
		assert.Equal(t, tables[0].Digest(), tab.Digest())
	}
}

// A value of each feature New prepares, by the field locationFeatures,
// hostFeatures, routeFeatures and backendFeatures name it by.
var (
	locationSamples = map[string]func(*Location){
		"CORS":     func(l *Location) { l.CORS = sampleCORS() },
		"Auth":     func(l *Location) { l.Auth = sampleAuth() },
		"Rewrite":  func(l *Location) { l.Rewrite = sampleRewrite() },
		"Policy":   func(l *Location) { l.Policy = samplePolicy() },
		"Response": func(l *Location) { l.Response = sampleResponse() },
	}
	hostSamples = map[string]func(*VirtualHost){
		"Actions.Fallback": func(vh *VirtualHost) {
			vh.Actions = &HostActions{Fallback: &Redirect{Code: 301, URL: "https://b.example/"}}
		},
	}
	routeSamples = map[string]func(*Route){
		"Redirect": func(r *Route) { r.Redirect = &Redirect{Code: 308, URL: "https://b.example/x"} },
		"Regexp":   func(r *Route) { r.Type, r.Path = Regex, `/api/v[0-9]+/(.*)` },
		"When": func(r *Route) {
			r.When = &Conditions{Method: "GET", Headers: []ValueMatch{{Name: "x-color", Value: "^(red|blue)$", Regex: true}},
				Query: []ValueMatch{{Name: "q", Value: "1"}, {Name: "v", Value: "[0-9]+", Regex: true}}}
		},
		"Split": func(r *Route) {
			r.Split = &Split{Alternatives: []Alternative{{Backend: prepBackend, Weight: 3}, {Weight: 1}}}
		},
	}
	backendSamples = map[string]func(*Backend){
		"HashSubset": func(be *Backend) { be.Algorithm, be.HashSubset = balance.Hash, 3 },
		"Traffic": func(be *Backend) {
			next := &Backend{ID: "prod/next:80", Traffic: &Traffic{Affinity: &SessionAffinity{CookieName: "c"}}}
			be.Traffic = &Traffic{Canary: &Canary{Backend: next, Weight: 10, Sticky: true}, Affinity: &SessionAffinity{CookieName: "route"}}
		},
	}
)

func sampleCORS() *CORS {
	return &CORS{Origins: []string{"https://App.example", "https://*.Example.org"}, Methods: "GET", Headers: "X-A", ExposeHeaders: "X-B", MaxAge: 5}
}

func sampleAuth() *Auth {
	return &Auth{Basic: &BasicAuth{Realm: "staff"}, External: &ExternalAuth{URL: urltemplate.AuthURL{Raw: "https://$host/check"},
		Signin: &urltemplate.AuthURL{Raw: "/start?rd=$escaped_request_uri"}}}
}

func sampleRewrite() *Rewrite {
	return &Rewrite{Target: "/v2/$1", Host: "$host:8080", ForwardedPrefix: "/$1", ForwardedPrefixSet: true}
}

func samplePolicy() *Policy {
	return &Policy{Allow: []netip.Prefix{netip.MustParsePrefix("10.9.9.9/8")}, Deny: []netip.Prefix{netip.MustParsePrefix("::ffff:10.1.0.0/112")},
		RateLimit: &RateLimit{Zone: "prod/web", RPS: 5, BurstRPS: 25, Exempt: []netip.Prefix{netip.MustParsePrefix("::ffff:192.0.2.7/120")}}}
}

func sampleResponse() *Response {
	return &Response{ErrorCodes: []int{404, 503}, ErrorBackend: prepBackend, LimitRate: 1024,
		Mirror:  &Mirror{Target: "http://m.example$request_uri", Host: "m.example"},
		Mirrors: []*Mirror{{Target: "https://n.example/copy$uri$is_args$args", Host: "n.example", Numerator: 1, Denominator: 2}}}
}

// TestPrepareTwice prepares a value of every feature New prepares, then
// writes the prepared value as a literal again (its exported fields, so
// the values it holds stay prepared, as in a literal Response holding a
// Mirror from NewMirror) and prepares that: the result must be what
// preparing once gave.
func TestPrepareTwice(t *testing.T) {
	twice(t, locationFeatures, locationSamples, func() *Location { return &Location{} }, func(t *testing.T, l *Location) {
		r := prepRoute(Prefix, "/")
		r.Location = *l
		assert.True(t, routeHasFeatures(r), "New passes over a route with only this feature")
	})
	twice(t, hostFeatures, hostSamples, func() *VirtualHost { return &VirtualHost{Name: "a.example"} }, nil)
	twice(t, routeFeatures, routeSamples, func() *Route { return prepRoute(Prefix, "/") }, func(t *testing.T, r *Route) {
		assert.True(t, routeHasFeatures(r), "New passes over a route with only this feature")
	})
	twice(t, backendFeatures, backendSamples, func() *Backend { return &Backend{ID: "prod/web:80", Endpoints: []string{"10.0.0.1:80"}} }, nil)
}

func twice[T any](t *testing.T, features []feature[T], samples map[string]func(T), fresh func() T, check func(*testing.T, T)) {
	t.Helper()
	for _, f := range features {
		set, ok := samples[f.field]
		if !ok {
			t.Errorf("no sample value of %s: add one", f.field)
			continue
		}
		t.Run(f.field, func(t *testing.T) {
			once, again := fresh(), fresh()
			set(once)
			set(again)
			if check != nil {
				check(t, once)
			}
			require.NoError(t, f.prepare(&preparer{}, once))
			require.NoError(t, f.prepare(&preparer{}, again))
			asLiteral(fieldValue(again, f.field))
			require.NoError(t, f.prepare(&preparer{}, again))
			want, got := fieldValue(once, f.field).Interface(), fieldValue(again, f.field).Interface()
			if !reflect.DeepEqual(want, got) {
				t.Errorf("prepared twice differs from once (-once +twice):\n%s",
					cmp.Diff(want, got, cmp.Exporter(func(reflect.Type) bool { return true })))
			}
		})
	}
}

// fieldValue is the field at the dotted path within v, a pointer to a
// struct.
func fieldValue(v any, path string) reflect.Value {
	f := reflect.ValueOf(v)
	for name := range strings.SplitSeq(path, ".") {
		f = f.Elem().FieldByName(name)
	}
	return f
}

// asLiteral points a field holding a pointer to a struct at a copy of
// its exported fields.
func asLiteral(f reflect.Value) {
	if f.Kind() != reflect.Pointer || f.IsNil() {
		return
	}
	v := f.Elem()
	lit := reflect.New(v.Type())
	for i := range v.NumField() {
		if v.Type().Field(i).IsExported() {
			lit.Elem().Field(i).Set(v.Field(i))
		}
	}
	f.Set(lit)
}
