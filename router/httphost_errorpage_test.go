package router

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/match"
)

// The custom error backend's Host is ingress-nginx's $best_http_host
// (proxy_set_header Host in the @custom_ location): the Host field as
// sent beside an absolute-form target too, else the target's host.
func TestCustomErrorPageHostAbsoluteForm(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    Options
	}{{"pool", Options{}}, {"transport", Options{Transport: &http.Transport{}}}} {
		t.Run(tc.name, func(t *testing.T) {
			r := newTestRouter(tc.o)
			t.Cleanup(r.CloseIdleConnections)
			_, errAddr := echoBackend(t, "errors")
			web := httpBackend("prod/web:80", errorStatusBackend(t))
			errs := httpBackend("prod/errors:80", errAddr)
			r.Publish(responseTable(web, &match.Response{ErrorCodes: []int{404}, ErrorBackend: errs}, errs))
			send := serveH1(t, r)
			for _, c := range []struct{ head, want string }{
				{"GET http://app.example.com/x HTTP/1.1\r\nHost: b.example:81\r\nX-Answer: 404\r\n", "b.example:81"},
				{"GET http://app.example.com/x HTTP/1.0\r\nX-Answer: 404\r\n", "app.example.com"},
			} {
				res := send(c.head)
				require.Equal(t, 200, res.StatusCode, c.head)
				require.Equal(t, "404", res.Header.Get("Seen-X-Code"), c.head)
				assert.Equal(t, c.want, res.Header.Get("X-Seen-Host"), c.head)
			}
		})
	}
}
