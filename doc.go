// Package ramjet is an Ingress data plane for Go: it compiles Kubernetes
// Ingress objects into an immutable routing table and serves that table
// through an ordinary [net/http.Handler]. It keeps ingress-nginx's routing
// semantics where people depend on them, so manifests migrate unchanged, and
// reports every place where it deliberately differs.
//
// This package holds no code; it is the map. The contract is ramjet's routing
// specification, SPEC.md, kept beside the repository: what a snapshot of
// objects compiles to and what a request then gets. The § marks in comments
// point into it.
//
// # The flow
//
//	Ingresses, IngressClasses, Services,
//	EndpointSlices, Secrets (k8s.io/api)
//	        │
//	        ▼
//	classify ──▶ compile ──▶ *match.Table + []Warning
//	                               │
//	                               │ router.Publish: atomic swap,
//	                               │ a no-op when the digest is equal
//	                               ▼
//	request ──────────────────▶ router ──▶ match lookup ──▶ balance ──▶ endpoint
//
// match, classify and balance import no ramjet package; compile imports
// classify and match; router imports match and balance but never compile, so
// the data plane can be fed tables built anywhere.
//
// # The packages
//
//   - classify decides which Ingresses this controller claims: the
//     kubernetes.io/ingress.class annotation, then spec.ingressClassName
//     against the IngressClasses whose controller is ours, then the default
//     class (SPEC §2).
//   - compile is the one pure function at the heart of ramjet. Compile takes
//     a Snapshot (Ingresses, IngressClasses, Services, EndpointSlices,
//     Secrets) and Options, validates hosts and paths, resolves Service ports
//     to endpoints, orders routes and resolves conflicts, parses
//     certificates, and returns a Table plus structured warnings.
//     compile/manifest reads a Snapshot from YAML or JSON manifests.
//   - match holds the Table types and the lookup: exact host, then wildcard
//     host, then the catch-all; within a host, Exact, then the longest Prefix,
//     then the first regex in controller order, then the host's default
//     backend (SPEC §5).
//   - balance holds the endpoint-picking policies (round-robin,
//     least-connections, consistent hashing, weighted rotations) and owns the
//     cursors and in-flight counts, keyed by backend identity and socket
//     address so that a rebuild never resets them (SPEC §9).
//   - router is the http.Handler. Publish swaps in a new table atomically and
//     does nothing when its digest equals the serving one; ServeHTTP
//     normalizes the path for matching, looks the request up, and proxies it
//     with the client's original request-target and the X-Forwarded-*
//     headers, or answers 400/404/502/503 itself. TLSConfig selects the
//     certificate per SNI from the serving table. router/routertest runs case
//     files against the real handler.
//   - status is to compute, without writing anything, the load-balancer
//     status each claimed Ingress should carry (SPEC §16). It is not written
//     yet; README.md's Status section lists what is and is not implemented.
//
// The commands under examples are where the outside world comes in:
// examples/controller serves a folder of manifests with no cluster (and
// watches it for edits), and examples/check runs case files from the
// command line.
//
// # Guarantees
//
//   - One broken object degrades itself only. Compiling never fails as a
//     whole: a bad host, path, annotation, Service reference or Secret drops
//     or degrades that declaration and yields a Warning that names the
//     object, the field and, for conflicts, the winner. The rest of the
//     table is built.
//   - Deterministic. The same objects in any order give the same table, the
//     same warnings in the same order and the same digest, on every replica.
//     Route conflicts are decided by Ingress creation time, never by map
//     iteration or edit order.
//   - Pure. Compile reads only its arguments: no I/O, no clock, no global
//     state. A Table never changes once built; the only state that crosses
//     tables is the balance.Registry its owner holds.
//   - Never silent about a deviation. Each place where ramjet routes
//     differently from ingress-nginx is documented and raises a warning when
//     an object triggers it.
//
// # Where to start
//
// Run the demo: go run ./examples/controller -manifests examples/manifests
// -demo-backends, then curl -H 'Host: shop.example.com'
// localhost:8080/api/x, and read the commented manifests in
// examples/manifests next to /debug/table on localhost:8081. To embed
// ramjet, read compile.Compile and router.New. To pin down a routing
// decision, write a case file (SPEC §18) and run it with go run
// ./examples/check. README.md has all of this with examples.
package ramjet
