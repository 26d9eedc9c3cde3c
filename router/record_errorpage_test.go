package router

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/match"
)

// TestRecordErrorPage: across an error page's internal redirect the record
// keeps both upstream exchanges, as nginx's $upstream_addr ("a : b") and
// $upstream_status ("404 : 200") list them: the intercepted backend's
// endpoint and status, and the error backend's.
func TestRecordErrorPage(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    Options
	}{{"pool", Options{}}, {"transport", Options{Transport: &http.Transport{}}}} {
		t.Run(tc.name, func(t *testing.T) {
			rs := newRecords()
			tc.o.Observer = rs.observe
			r := newTestRouter(tc.o)
			t.Cleanup(r.CloseIdleConnections)
			_, errAddr := echoBackend(t, "errors")
			webAddr := errorStatusBackend(t)
			web := httpBackend("prod/web:80", webAddr)
			errs := httpBackend("prod/errors:80", errAddr)
			r.Publish(responseTable(web, &match.Response{ErrorCodes: []int{404}, ErrorBackend: errs}, errs))

			res := serve(r, http.MethodGet, "app.example.com", "/", http.Header{"X-Answer": {"404"}})
			require.Equal(t, http.StatusOK, res.StatusCode)
			page := body(t, res)
			rs.mu.Lock()
			rec := rs.raw[len(rs.raw)-1]
			rs.mu.Unlock()
			assert.Equal(t, webAddr, rec.Endpoint, "the intercepted exchange's endpoint")
			require.NotNil(t, rec.ErrorPage)
			assert.Equal(t, ErrorPage{Intercepted: 404, Service: Service{Namespace: "prod", Name: "errors", Port: 80}, Endpoint: errAddr, Status: 200, Time: rec.ErrorPage.Time, Header: rec.ErrorPage.Header, Connect: rec.ErrorPage.Connect, Bytes: int64(len(page))}, *rec.ErrorPage)
			assert.Positive(t, rec.ErrorPage.Time)
			assert.Positive(t, rec.ErrorPage.Header, "the page's head came")
			assert.LessOrEqual(t, rec.ErrorPage.Header, rec.ErrorPage.Time)
			assert.LessOrEqual(t, rec.ErrorPage.Time, rec.UpstreamTime)
			assert.Zero(t, rec.UpstreamBytes, "the intercepted body is dropped unread")

			serve(r, http.MethodGet, "app.example.com", "/", nil)
			assert.Nil(t, rs.raw[len(rs.raw)-1].ErrorPage, "not intercepted")
		})
	}
}
