package router

import (
	"context"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/match"
	"ramjet.dev/ramjet/router/h1"
)

// A client that goes away before the backend answers ends the span with
// http.status_code 499 and the status Ok: nginx terminates the request
// with 499 as its status when nothing was sent (ngx_http_terminate_request),
// and the module's FinishNgxSpan, at the log phase, reads that status
// and calls only 500 or more an error. Over the router's pool and over a
// Transport, served by net/http and by router/h1.
func TestTracingClientGone(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    Options
		own  bool // served by router/h1
	}{{"pool", Options{}, false}, {"transport", Options{Transport: &http.Transport{}}, false}, {"router/h1", Options{}, true}} {
		t.Run(tc.name, func(t *testing.T) {
			g, addr := newGate(t)
			tr := newEndedTracer()
			tc.o.Tracer = tr
			r := newTestRouter(tc.o)
			t.Cleanup(r.CloseIdleConnections)
			rt := route(match.Prefix, "/", httpBackend("prod/web:80", addr))
			rt.Tracing = &match.Tracing{}
			r.Publish(table("gone", vhost("", nil, rt)))
			front := httptest.NewUnstartedServer(r)
			if tc.own {
				own := &h1.Server{Handler: r, ErrorLog: log.New(io.Discard, "", 0)}
				go func() { _ = own.Serve(front.Listener) }()
				t.Cleanup(func() { _ = own.Close() })
				front.URL = "http://" + front.Listener.Addr().String()
			} else {
				front.Start()
				t.Cleanup(front.Close)
			}

			ctx, cancel := context.WithCancel(context.Background())
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, front.URL+"/slow", nil)
			require.NoError(t, err)
			errc := make(chan error, 1)
			go func() {
				res, err := http.DefaultClient.Do(req)
				if err == nil {
					res.Body.Close()
				}
				errc <- err
			}()
			waitFor(t, g.arrived)
			cancel()
			require.ErrorIs(t, <-errc, context.Canceled)
			s := tr.next(t)
			assert.Equal(t, int64(499), s.attrs()["http.status_code"])
			assert.Equal(t, 499, s.end.Status)
			assert.False(t, s.end.Error)
		})
	}
}
