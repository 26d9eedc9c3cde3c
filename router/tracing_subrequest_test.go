package router

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/match"
)

// What the external auth service and the error backend get of a traced
// request's trace headers, as ingress-nginx sends them:
//   - the auth location's opentelemetry_propagate sets traceparent and
//     tracestate from the subrequest's own trace context, which the
//     module never makes (StartNgxSpan declines internal requests, and
//     its context is looked up by request): both are empty, so neither
//     the span's context nor the client's headers reach the auth service
//     (open-telemetry/opentelemetry-cpp-contrib#143,
//     kubernetes/ingress-nginx#9811);
//   - the @custom_ location that asks the error backend has no
//     opentelemetry_propagate and its own proxy_set_header lines: the
//     client's trace headers pass as received, every line.
//
// The backend gets the span's context. Over the router's pool and over a
// Transport (where the context is put on the request's headers before
// the error page is asked).
func TestTracingSubrequestContext(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    Options
	}{{"pool", Options{}}, {"transport", Options{Transport: &http.Transport{}}}} {
		t.Run(tc.name, func(t *testing.T) {
			tt := &testTracer{}
			tc.o.Tracer = tt
			r := newTestRouter(tc.o)
			t.Cleanup(r.CloseIdleConnections)
			_, addr := echoBackend(t, "web")
			web := httpBackend("prod/web:80", addr)
			svc := newAuthService(t)
			authed := route(match.Prefix, "/app", web)
			authed.Auth = externalAuth(t, svc.srv.URL+"/ok", nil)
			authed.Tracing = &match.Tracing{TrustIncomingSpan: true}
			missing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNotFound) }))
			t.Cleanup(missing.Close)
			_, errAddr := echoBackend(t, "errors")
			errs := httpBackend("prod/errors:80", errAddr)
			paged := route(match.Prefix, "/paged", httpBackend("prod/missing:80", missing.Listener.Addr().String()))
			paged.Response = &match.Response{ErrorCodes: []int{404}, ErrorBackend: errs}
			paged.Tracing = &match.Tracing{TrustIncomingSpan: true}
			r.Publish(mustTable(match.Spec{
				VirtualHosts: []*match.VirtualHost{vhost("shop.example.com", nil, authed, paged)},
				Backends:     []*match.Backend{web, errs, paged.Backend},
			}))
			for _, client := range []http.Header{{}, {"Traceparent": {clientParent}, "Tracestate": {"a=1", "b=2"}}} {
				res := traced(r, "/app/x", client)
				require.Equal(t, http.StatusOK, res.StatusCode)
				got, _ := svc.request()
				assert.Empty(t, got.Header["Traceparent"], "%v: what the auth service got", client)
				assert.Empty(t, got.Header["Tracestate"], "%v: what the auth service got", client)
				assert.Equal(t, []string{tt.last(t).ctx.Traceparent()}, res.Header["Seen-Traceparent"], "%v: what the backend got", client)

				res = traced(r, "/paged/x", client)
				require.Equal(t, http.StatusOK, res.StatusCode)
				assert.Equal(t, client["Traceparent"], res.Header["Seen-Traceparent"], "%v: what the error backend got", client)
				assert.Equal(t, client["Tracestate"], res.Header["Seen-Tracestate"], "%v: what the error backend got", client)
			}
		})
	}
}
