package router

import (
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/balance"
	"ramjet.dev/ramjet/match"
)

// An error page keeps the session cookie the primary exchange set: the
// sticky balancer puts it on the request's response headers before the
// backend answers, and nginx's error_page to @custom_… clears none of
// them (ngx_http_upstream_intercept_errors only adds WWW-Authenticate).
func TestCustomErrorPageKeepsAffinityCookie(t *testing.T) {
	_, errAddr := echoBackend(t, "errors")
	r := newTestRouter(Options{})
	t.Cleanup(r.CloseIdleConnections)
	web := httpBackend("prod/web:80", errorStatusBackend(t))
	web.Traffic = &match.Traffic{Affinity: &match.SessionAffinity{Mode: balance.Persistent, CookieName: "route"}}
	eb := httpBackend("prod/errors:80", errAddr)
	r.Publish(responseTable(web, &match.Response{ErrorCodes: []int{503}, ErrorBackend: eb}, eb))
	res := serve(r, http.MethodGet, "app.example.com", "/", http.Header{"X-Answer": {"503"}})
	assert.Equal(t, http.StatusOK, res.StatusCode)
	assert.Equal(t, "errors\n", body(t, res))
	cookies := res.Header.Values("Set-Cookie")
	require.Len(t, cookies, 1)
	assert.Regexp(t, regexp.MustCompile(`^route=[0-9a-f]{16}\|[^;]+; Path=/; HttpOnly$`), cookies[0])
}

// firstWrite is a ResponseWriter that tells when the first body bytes
// reach it and lets the test hold them there.
type firstWrite struct {
	h        http.Header
	code     int
	wrote    chan struct{}
	proceed  chan struct{}
	once     bool
	received []byte
}

func (w *firstWrite) Header() http.Header { return w.h }
func (w *firstWrite) WriteHeader(c int)   { w.code = c }
func (w *firstWrite) Write(p []byte) (int, error) {
	if !w.once {
		w.once = true
		close(w.wrote)
		<-w.proceed
	}
	w.received = append(w.received, p...)
	return len(p), nil
}

// The error backend's endpoint stays in flight while its page is relayed,
// as any backend's does until its answer is read: least_conn and the
// counters see the request it is serving.
func TestCustomErrorPageHoldsItsEndpoint(t *testing.T) {
	errs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "error page\n")
	}))
	t.Cleanup(errs.Close)
	errAddr := errs.Listener.Addr().String()
	r := newTestRouter(Options{})
	t.Cleanup(r.CloseIdleConnections)
	eb := httpBackend("prod/errors:80", errAddr)
	r.Publish(responseTable(httpBackend("prod/web:80", errorStatusBackend(t)), &match.Response{ErrorCodes: []int{404}, ErrorBackend: eb}, eb))
	w := &firstWrite{h: http.Header{}, wrote: make(chan struct{}), proceed: make(chan struct{})}
	req := httptest.NewRequest(http.MethodGet, "/", nil)
	req.Host = "app.example.com"
	req.Header.Set("X-Answer", "404")
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.ServeHTTP(w, req)
	}()
	<-w.wrote
	assert.Equal(t, int64(1), r.InFlight(errAddr), "the error backend is serving the page")
	close(w.proceed)
	<-done
	assert.Equal(t, "error page\n", string(w.received))
	assert.Zero(t, r.InFlight(errAddr))
}
