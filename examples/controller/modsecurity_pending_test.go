package main

import (
	"fmt"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestModSecurityPendingCounted: every transaction left for the body phase
// is counted out again, whichever way its request ends (passed, refused
// in the head phase, in the body phase, the client gone mid-body), so
// that bodyHook keeps skipping the map on hosts without the WAF.
func TestModSecurityPendingCounted(t *testing.T) {
	inst, _ := startWAF(t, map[string]map[string]string{
		"on.test": {"enable-modsecurity": "true", "modsecurity-snippet": "SecRuleEngine On\nSecRequestBodyAccess On\n" +
			"SecRule REQUEST_URI \"@contains head-deny\" \"id:1000,phase:1,deny,status:403\"\n" +
			"SecRule ARGS \"@contains evilpayload\" \"id:1001,phase:2,deny,status:403\""},
		"off.test": {},
	}, modSecuritySettings{})
	waf := inst.offline.waf
	status, _ := send(t, inst, http.MethodPost, "on.test", "/", "x=fine")
	assert.Equal(t, http.StatusOK, status)
	status, _ = send(t, inst, http.MethodPost, "on.test", "/head-deny", "x=fine")
	assert.Equal(t, http.StatusForbidden, status)
	status, _ = send(t, inst, http.MethodPost, "on.test", "/", "x=evilpayload")
	assert.Equal(t, http.StatusForbidden, status)
	c, err := net.Dial("tcp", inst.HTTPAddr)
	require.NoError(t, err)
	fmt.Fprintf(c, "POST / HTTP/1.1\r\nHost: on.test\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 100000\r\n\r\nx=")
	time.Sleep(20 * time.Millisecond)
	require.NoError(t, c.Close())
	require.Eventually(t, func() bool { return waf.npending.Load() == 0 }, 10*time.Second, 10*time.Millisecond,
		"pending transactions counted: %d", waf.npending.Load())

	status, _ = send(t, inst, http.MethodPost, "off.test", "/", "x=evilpayload")
	assert.Equal(t, http.StatusOK, status)
	assert.Zero(t, waf.npending.Load())
}
