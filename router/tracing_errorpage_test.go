package router

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/match"
)

// errorPageTracingRouter serves shop.example.com's /paged from a backend
// answering 404, which the location's error page replaces with the
// error backend's answer (none: ingress-nginx's built-in 404); own says
// the error backend is the Ingress's default-backend.
func errorPageTracingRouter(t *testing.T, tr *match.Tracing, errs *match.Backend, own bool) (*Router, *testTracer) {
	missing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNotFound) }))
	t.Cleanup(missing.Close)
	paged := route(match.Prefix, "/paged", httpBackend("prod/missing:80", missing.Listener.Addr().String()))
	paged.Response = &match.Response{ErrorCodes: []int{404}, ErrorBackend: errs, OwnErrorBackend: own}
	paged.Tracing = tr
	tt := &testTracer{}
	r := newTestRouter(Options{Tracer: tt})
	t.Cleanup(r.CloseIdleConnections)
	backends := []*match.Backend{paged.Backend}
	if errs != nil {
		backends = append(backends, errs)
	}
	r.Publish(mustTable(match.Spec{VirtualHosts: []*match.VirtualHost{vhost("shop.example.com", nil, paged)}, Backends: backends}))
	return r, tt
}

// A request an error page answers ends its span named after the nginx
// location that served the page, @custom_<upstream>_<code>
// (nginx.tmpl CUSTOM_ERRORS): error_page moves the request there, and
// the module names the span at the log phase (FinishNgxSpan's
// UpdateName with GetOperationName, the location's name). The upstream
// is the Ingress's default-backend's ("custom-default-backend-<ns>-<name>")
// or the global default backend's; the span's status is the page's.
func TestTracingErrorPageName(t *testing.T) {
	_, addr := echoBackend(t, "errors")
	for _, c := range []struct {
		name   string
		errs   *match.Backend
		own    bool
		status int
		want   string
	}{
		{"global default backend", httpBackend("prod/errors:80", addr), false, http.StatusOK, "@custom_upstream-default-backend_404"},
		{"the Ingress's default-backend", httpBackend("prod/errors:80", addr), true, http.StatusOK, "@custom_custom-default-backend-prod-errors_404"},
		{"no default backend", nil, false, http.StatusNotFound, "@custom_upstream-default-backend_404"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, tt := errorPageTracingRouter(t, &match.Tracing{}, c.errs, c.own)
			res := traced(r, "/paged/x", nil)
			require.Equal(t, c.status, res.StatusCode)
			s := tt.last(t)
			assert.Equal(t, "/paged/", s.start, "the location's name as the span starts")
			assert.Equal(t, c.want, s.end.Name)
			assert.Equal(t, int64(c.status), s.attrs()["http.status_code"])
		})
	}

	// An Ingress's operation name is its location's: the @custom_ location
	// does not inherit it.
	r, tt := errorPageTracingRouter(t, &match.Tracing{OperationName: spanName(t, "checkout")}, httpBackend("prod/errors:80", addr), false)
	traced(r, "/paged/x", nil)
	assert.Equal(t, "@custom_upstream-default-backend_404", tt.last(t).end.Name)
}

// The ConfigMap's operation name (match.Tracing.ErrorPageName), written
// in the http block, names an error page's span too, expanded in the
// @custom_ location, whose "rewrite (.*) / break" made $uri "/"; an
// Ingress's name beside it does not.
func TestTracingErrorPageOperationName(t *testing.T) {
	_, addr := echoBackend(t, "errors")
	for _, c := range []struct {
		name string
		tr   *match.Tracing
		want string
	}{
		{"the ConfigMap's with variables", &match.Tracing{OperationName: spanName(t, "HTTP $request_method $uri $request_uri"),
			ErrorPageName: spanName(t, "HTTP $request_method $uri $request_uri")}, "HTTP GET / /paged/x?a=1"},
		{"the ConfigMap's beside the Ingress's", &match.Tracing{OperationName: spanName(t, "checkout"), ErrorPageName: spanName(t, "edge")}, "edge"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, tt := errorPageTracingRouter(t, c.tr, httpBackend("prod/errors:80", addr), false)
			traced(r, "/paged/x?a=1", nil)
			assert.Equal(t, c.want, tt.last(t).end.Name)
		})
	}
}
