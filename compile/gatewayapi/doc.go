// Package gatewayapi translates Gateway API objects into compile's input:
// Gateways of the ramjet.dev/gateway class, HTTPRoutes and GRPCRoutes
// (v1) attached to their listeners, and ReferenceGrants, with the status
// to write for each (SPEC §20; the root package's doc.go §20 says what is
// served). A GRPCRoute becomes a compile.HTTPRoute of Kind GRPCRoute whose
// method matches are matches on the path /service/method and whose
// backends are dialled as gRPC.
package gatewayapi
