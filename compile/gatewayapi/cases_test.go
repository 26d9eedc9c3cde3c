package gatewayapi

import (
	"testing"

	"ramjet.dev/ramjet/router/routertest"
)

// TestCases runs every case file in testdata/cases with the Extension
// registered, so their objects hold Gateways and HTTPRoutes beside
// Ingresses, and compares each file's tables with its golden (SPEC §18).
// The root module's TestCases cannot: it does not depend on this module.
func TestCases(t *testing.T) {
	Register()
	routertest.RunFiles(t, "testdata/cases")
}
