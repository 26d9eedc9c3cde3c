package router

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"ramjet.dev/ramjet/match"
	"ramjet.dev/ramjet/match/htpasswd"
)

// BenchmarkAccessPolicy measures the CORS and basic-auth steps alone on
// the allowed path: an allowed Origin, right credentials whose bcrypt
// verification is cached. The budget: no allocation beyond the headers
// they set, which are shared slices, so 0 allocs/op.
//
//	go test -run '^$' -bench AccessPolicy -benchmem -count 6 ./router/ | benchstat -
func BenchmarkAccessPolicy(b *testing.B) {
	users, _ := htpasswd.ParseHtpasswd([]byte("alice:$2a$05$rFgFSsl37ML.zLKSCEIIK.QfwTggQjkz534JplT68frI1VWhWMFme\n"))
	cors := match.NewCORS(match.CORS{Origins: []string{"https://app.example.com", "https://*.example.org"},
		Methods: match.DefaultCORSMethods, Headers: match.DefaultCORSHeaders, Credentials: true, MaxAge: 600})
	basic := &match.Auth{Basic: match.NewBasicAuth(match.BasicAuth{Realm: "r", Secret: "prod/pw", SecretType: "auth-file", Users: users})}
	for _, tt := range []struct {
		name string
		cors *match.CORS
		auth *match.Auth
	}{{"cors", cors, nil}, {"basic", nil, basic}, {"cors+basic", cors, basic}} {
		b.Run(tt.name, func(b *testing.B) {
			rt := route(match.Prefix, "/", httpBackend("prod/web:80", "10.0.0.1:80"))
			rt.CORS, rt.Auth = tt.cors, tt.auth
			r := newTestRouter(Options{})
			r.Publish(table("bench", vhost("shop.example.com", nil, rt)))
			res := r.state.Load().table.Lookup("shop.example.com", "/api")
			req := httptest.NewRequest(http.MethodGet, "/api", nil)
			req.Host = "shop.example.com"
			origin := []string{"https://app.example.com"}
			authz := []string{"Basic YWxpY2U6d29uZGVybGFuZA=="}
			req.Header["Origin"] = origin
			w := &discardWriter{h: make(http.Header)}
			d := decision{host: "shop.example.com", proto: "http", res: res, src: matched(res), backend: res.Backend}
			s := requestState{w: w, req: req, d: d, loc: res.Location()}
			b.ReportAllocs()
			for b.Loop() {
				req.Header["Authorization"] = authz
				s.ph = policyHeaders{}
				if r.serveCORS(&s) {
					b.Fatal("answered")
				}
				if r.authorize(&s) {
					b.Fatal("refused")
				}
			}
		})
	}
}

// BenchmarkAccessHandler runs the whole handler, through a transport that
// answers at once, for a route without policies and for one with CORS and
// basic auth: the difference is the policies' cost on the allowed path,
// allocations included.
func BenchmarkAccessHandler(b *testing.B) {
	users, _ := htpasswd.ParseHtpasswd([]byte("alice:$2a$05$rFgFSsl37ML.zLKSCEIIK.QfwTggQjkz534JplT68frI1VWhWMFme\n"))
	cors := match.NewCORS(match.CORS{Origins: []string{"https://app.example.com"},
		Methods: match.DefaultCORSMethods, Headers: match.DefaultCORSHeaders, Credentials: true, MaxAge: 600})
	basic := &match.Auth{Basic: match.NewBasicAuth(match.BasicAuth{Realm: "r", Secret: "prod/pw", SecretType: "auth-file", Users: users})}
	tr := roundTripFunc(func(req *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: req}, nil
	})
	for _, policy := range []bool{false, true} {
		name := "policy=none"
		if policy {
			name = "policy=cors+basic"
		}
		b.Run(name, func(b *testing.B) {
			rt := route(match.Prefix, "/", httpBackend("prod/web:80", "10.0.0.1:80"))
			if policy {
				rt.CORS, rt.Auth = cors, basic
			}
			r := newTestRouter(Options{Transport: tr})
			r.Publish(table("bench", vhost("shop.example.com", nil, rt)))
			req := httptest.NewRequest(http.MethodGet, "/api", nil)
			req.Host = "shop.example.com"
			req.Header["Origin"] = []string{"https://app.example.com"}
			authz := []string{"Basic YWxpY2U6d29uZGVybGFuZA=="}
			w := &discardWriter{h: make(http.Header)}
			b.ReportAllocs()
			for b.Loop() {
				if policy {
					// Basic auth removes it before proxying, so both
					// variants forward the same headers.
					req.Header["Authorization"] = authz
				}
				w.serveOK(b, r, req)
			}
		})
	}
}

// BenchmarkExternalAuth is one request through a route with external
// auth against a loopback service, and the same request without it: the
// difference is a subrequest's round trip, which allocates (a request,
// its headers, a response).
func BenchmarkExternalAuth(b *testing.B) {
	svc := newAuthService(b)
	for _, on := range []bool{false, true} {
		name := "auth=none"
		var a *match.Auth
		if on {
			name, a = "auth=external", externalAuth(b, svc.srv.URL+"/ok", func(x *match.ExternalAuth) { x.ResponseHeaders = []string{"X-User"} })
		}
		b.Run(name, func(b *testing.B) {
			_, addr := echoBackend(b, "web")
			rt := route(match.Prefix, "/app", httpBackend("prod/web:80", addr))
			rt.Auth = a
			r := newTestRouter(Options{})
			r.Publish(table("auth", vhost("shop.example.com", nil, rt)))
			b.Cleanup(r.CloseIdleConnections)
			req := httptest.NewRequest(http.MethodGet, "/app", nil)
			req.Host = "shop.example.com"
			w := &discardWriter{h: make(http.Header)}
			b.ReportAllocs()
			for b.Loop() {
				w.serveOK(b, r, req)
			}
		})
	}
}
