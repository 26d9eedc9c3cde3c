package router

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestSetConfigMapOptions: the ConfigMap's settings change from the next
// request on, and a zero Options puts every one back to New's default.
func TestSetConfigMapOptions(t *testing.T) {
	r := newTestRouter(Options{})
	r.Publish(table("live", vhost("shop.example.com", nil)))
	req := httptest.NewRequest(http.MethodGet, "/", nil)
	req.RemoteAddr = "10.1.2.3:5000"
	req.Header.Set("X-Client", "203.0.113.9")
	req.Header.Set("X-Forwarded-Proto", "https")

	check := func(addr, server, sts string, proto string, limit int) {
		t.Helper()
		assert.Equal(t, addr, r.ClientAddr(req).String())
		res := serve(r, http.MethodGet, "shop.example.com", "https://shop.example.com/x", nil)
		assert.Equal(t, server, res.Header.Get("Server"))
		assert.Equal(t, sts, res.Header.Get("Strict-Transport-Security"))
		assert.Equal(t, proto, r.clientProto(req))
		assert.Equal(t, limit, r.live.Load().ansLimitReq.status)
	}
	check("10.1.2.3", "", DefaultHSTS, "http", http.StatusServiceUnavailable)

	r.SetConfigMapOptions(Options{
		TrustForwardedProto: true, TrustForwardedFor: true, ForwardedForHeader: "x-client",
		ProxyRealIPCIDR: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}, ServerTokens: "ramjet",
		DisableHSTS: true, LimitReqStatusCode: http.StatusTooManyRequests,
	})
	check("203.0.113.9", "ramjet", "", "https", http.StatusTooManyRequests)

	r.SetConfigMapOptions(Options{})
	check("10.1.2.3", "", DefaultHSTS, "http", http.StatusServiceUnavailable)
}
