package main

import (
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
)

// modsecurity-transaction-id fills its variables and keeps others as
// written.
func TestTransactionID(t *testing.T) {
	req := httptest.NewRequest("GET", "/", nil)
	req.Host = "Shop.Example"
	req.RemoteAddr = "192.0.2.9:1234"
	req.Header.Set("X-Request-Id", "abc")
	req.Header.Set("X-Tenant", "blue")
	assert.Equal(t, "abc-shop.example-192.0.2.9-blue-$msec-$", transactionID("$request_id-$host-$remote_addr-${http_x_tenant}-$msec-$", req))
}
