package router

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/match"
)

// TestRecordConnectTime: a request that opened its backend connection
// records how long that took, and one that reused a kept-alive connection
// records 0, as nginx's $upstream_connect_time, whichever way out carries
// it: the router's own pool, net/http's transport for HTTPS and for a
// Transport given in Options, and either HTTP/2 client.
func TestRecordConnectTime(t *testing.T) {
	plain := httptest.NewServer(echoHandler("plain"))
	t.Cleanup(plain.Close)
	secure := httptest.NewTLSServer(echoHandler("secure"))
	t.Cleanup(secure.Close)
	h2c := httptest.NewUnstartedServer(echoHandler("h2c"))
	h2c.Config.Protocols = new(http.Protocols)
	h2c.Config.Protocols.SetUnencryptedHTTP2(true)
	h2c.Start()
	t.Cleanup(h2c.Close)
	for _, tc := range []struct {
		name  string
		o     Options
		proto match.Protocol
		addr  string
	}{
		{"pool", Options{}, match.HTTP, plain.Listener.Addr().String()},
		{"transport", Options{Transport: &http.Transport{}}, match.HTTP, plain.Listener.Addr().String()},
		{"https", Options{}, match.HTTPS, secure.Listener.Addr().String()},
		{"verbatim", Options{}, match.HTTPS, secure.Listener.Addr().String()},
		{"h2c", Options{}, match.H2C, h2c.Listener.Addr().String()},
		{"h2c net/http", Options{NetHTTP2Client: true}, match.H2C, h2c.Listener.Addr().String()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rs := newRecords()
			tc.o.Observer = rs.observe
			r := newTestRouter(tc.o)
			t.Cleanup(r.CloseIdleConnections)
			rt := route(match.Prefix, "/", backend("prod/web:80", tc.proto, match.Serving, tc.addr))
			target := "/"
			if tc.name == "verbatim" {
				// A target only the verbatim way out carries byte for
				// byte, on net/http's path (backend TLS settings).
				target = "//a{b"
				rt.BackendTLS = match.NewBackendTLS(match.BackendTLS{Secret: "prod/up"})
			}
			r.Publish(table("c", vhost("", nil, rt)))
			for i, want := range []string{"opened", "reused"} {
				res := serve(r, http.MethodGet, "web", target, nil)
				body(t, res)
				require.Equal(t, http.StatusOK, res.StatusCode)
				rs.mu.Lock()
				rec := rs.raw[len(rs.raw)-1]
				rs.mu.Unlock()
				if i == 0 || tc.name == "verbatim" { // the verbatim way out keeps no connection
					assert.Positive(t, rec.UpstreamConnectTime, want)
					assert.LessOrEqual(t, rec.UpstreamConnectTime, rec.UpstreamHeaderTime, "opened before the head came")
				} else {
					assert.Zero(t, rec.UpstreamConnectTime, want)
				}
			}
		})
	}
}

// TestRecordErrorPageConnectTime: the error page's exchange records its
// own connect time, as nginx's $upstream_connect_time lists it after
// " : ": the time it took to open the error backend's connection, 0 when
// a kept-alive one was reused.
func TestRecordErrorPageConnectTime(t *testing.T) {
	rs := newRecords()
	r := newTestRouter(Options{Observer: rs.observe})
	t.Cleanup(r.CloseIdleConnections)
	_, errAddr := echoBackend(t, "errors")
	web := httpBackend("prod/web:80", errorStatusBackend(t))
	errs := httpBackend("prod/errors:80", errAddr)
	r.Publish(responseTable(web, &match.Response{ErrorCodes: []int{404}, ErrorBackend: errs}, errs))
	for i, want := range []string{"opened", "reused"} {
		res := serve(r, http.MethodGet, "app.example.com", "/", http.Header{"X-Answer": {"404"}})
		body(t, res)
		require.Equal(t, http.StatusOK, res.StatusCode)
		rs.mu.Lock()
		rec := rs.raw[len(rs.raw)-1]
		rs.mu.Unlock()
		require.NotNil(t, rec.ErrorPage)
		if i == 0 {
			assert.Positive(t, rec.ErrorPage.Connect, want)
			assert.LessOrEqual(t, rec.ErrorPage.Connect, rec.ErrorPage.Header, want)
		} else {
			assert.Zero(t, rec.ErrorPage.Connect, want)
		}
	}
}
