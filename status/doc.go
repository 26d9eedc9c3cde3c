// Package status computes what the controller writes back to the API server:
// the addresses advertised in each claimed Ingress's
// .status.loadBalancer.ingress, the Warning Events that tell an Ingress's
// owner what is wrong with it (SPEC §14, §16), and the Gateway API status
// conditions of GatewayClasses, Gateways and HTTPRoutes (§20).
//
// Status is advertising, not configuration. It tells DNS automation and
// people where the claimed Ingresses are served; routing never reads it, so
// a stale or missing status never changes where a request goes. Only the
// replica holding the leader Lease writes it: every replica compiles the
// same table, and two writers would only fight over the same field.
//
// Everything here is pure and deterministic except EventDeduper, which
// remembers what it has already reported. The controller does the writing,
// with client-go; this package only decides what to write.
package status
