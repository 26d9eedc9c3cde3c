// Package ramjet is an Ingress data plane for Go: it compiles Kubernetes
// Ingress objects into an immutable routing table and serves that table
// through an ordinary [net/http.Handler]. It keeps ingress-nginx's routing
// semantics where people depend on them, so manifests migrate unchanged, and
// reports every place where it deliberately differs.
//
// This package holds no code; it is the map, and it holds the contract:
// ramjet's routing specification, what a snapshot of objects compiles to and
// what a request then gets, follows the overview below, one heading per
// numbered section. "SPEC §N" in comments and in README.md means section N
// here.
//
// # The flow
//
//	Ingresses, IngressClasses, Services,
//	EndpointSlices, Secrets (k8s.io/api)
//	        │
//	        ▼
//	classify ──▶ compile ──▶ compile.Result: *match.Table, []Warning, claimed
//	                               │
//	                               │ router.Publish: atomic swap,
//	                               │ a no-op when the digest is equal
//	                               ▼
//	request ──────────────────▶ router ──▶ match lookup ──▶ balance ──▶ endpoint
//
// classify and balance import no ramjet package; match imports balance;
// compile imports classify, match and balance; compile/manifest and status
// import compile; router imports match and balance but never compile, so the
// data plane can be fed tables built anywhere; router/routertest, the case
// file runner, imports compile, compile/manifest and router.
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
//     certificates, and returns a Result: the table, the warnings (each
//     naming its object and, for conflicts, the winner as a structured Ref)
//     and the Ingresses it claimed. It reads no files.
//   - compile/manifest reads a Snapshot from YAML or JSON manifest files and
//     folders (one file walk, shared with the controller's folder watcher);
//     each problem is a structured *manifest.Error.
//   - match holds the Table, built in one step by New from a Spec, with its
//     digest computed beside the types it encodes, and the lookup: exact host, then wildcard
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
//     headers, or answers 308/400/404/408/413/502/503/504 itself. It reads a
//     request body (gRPC streams aside) whole, up to a limit, before it
//     picks an endpoint.
//     TLSConfig selects the certificate per SNI from the serving table.
//     router/routertest runs case files against the real handler.
//   - status decides, without writing anything, what the controller writes
//     back (SPEC §16): the load-balancer addresses every claimed Ingress
//     should advertise (Desired), the minimal status updates that get them
//     there (Updates), and which compile warnings to post as Warning Events,
//     so that a problem is posted when it appears rather than on every
//     rebuild (EventDeduper).
//
// The commands under examples are where the outside world comes in:
// examples/controller serves a cluster, or with -manifests a folder of
// manifests with no cluster (and watches it for edits), and examples/check
// runs case files from the command line.
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
//
// # The routing contract
//
// The numbered sections below are the contract, and they describe what the
// code does today. Where ramjet's specification asks for more than is built
// yet, the section says so under "Not yet", together with what happens
// instead. The case files in testdata/cases pin the rules down request by
// request; each file names the sections it covers.
//
// Three rules hold everywhere: one broken object degrades only itself,
// compiling is deterministic, and Compile is pure (see Guarantees above).
//
// # 1. Inputs
//
// A compile.Snapshot holds Ingresses and IngressClasses
// (networking.k8s.io/v1), Services (v1), EndpointSlices (discovery.k8s.io/v1)
// and Secrets (v1), as the k8s.io/api Go types, in any order. Nil entries are
// skipped. Should two Ingresses, Services or Secrets share a namespace and
// name, the one with the smaller JSON encoding is kept, so input order never
// decides (IngressClasses: §2).
//
// compile.Options, with the flag of examples/controller that sets each:
//
//   - IngressClass (-ingress-class, default "ramjet"): the value of the
//     kubernetes.io/ingress.class annotation that is ours.
//   - ControllerName (-controller-name, default "ramjet.dev/ingress"):
//     matched against IngressClass spec.controller.
//   - DefaultBackend (-default-backend, none): the global default backend,
//     namespace/name:port with a port number or name.
//   - WatchIngressWithoutClass (-watch-ingress-without-class, off): also
//     claim Ingresses that name no class.
//   - DisableSSLRedirect (-ssl-redirect=false): the plain-HTTP to HTTPS
//     redirect for TLS hosts is on by default.
//   - AllowLoopbackEndpoints (no flag; off): keep loopback endpoint
//     addresses, which are otherwise dropped (§8). The example controller
//     sets it with -manifests only, where the backends run on the same
//     machine.
//
// The handler's own settings are router.Options: the default certificate
// (self-signed, made by router.New, unless given); whether to trust a
// client's X-Forwarded-Proto (TrustForwardedProto, for a TLS-terminating
// load balancer in front); the connect (ConnectTimeout, 5 s) and
// response-header (ReadTimeout, 60 s) timeouts to backends; and the client
// limits of §13: MaxBodySize (1 MiB, ingress-nginx's proxy-body-size; a
// negative value means none), ClientBodyTimeout (60 s), and IdleTimeout
// (75 s) and ClientHeaderTimeout (60 s), which Router.ConfigureServer puts
// on an http.Server that sets none of its own. The status address source is
// a status.Source (-publish-address or -publish-service; -no-status-update
// writes nothing, §16).
//
// A malformed option is an error before any table exists:
// Options.Validate and ParseServiceRef reject, for example,
// "kube-system/notfound" (no port) and "a/b/c:80", and the example
// controller exits with code 2 before it listens. It also stops, naming the
// flag, on any flag it does not define, so an ingress-nginx flag it lacks is
// never ignored silently.
//
// The example controller takes --proxy-real-ip-cidr (router.Options.ProxyRealIPCIDR)
// and --use-proxy-protocol (PROXY v1/v2 on its listeners; the header of a
// peer in --proxy-real-ip-cidr, or of every peer without it, gives the
// client address).
//
// Not yet: the controller flag for the request body limit (--proxy-body-size;
// the controller uses the 1 MiB default).
//
// # 2. Which Ingresses are claimed
//
// Package classify checks these steps in order; the first that applies
// decides:
//
//  1. The annotation kubernetes.io/ingress.class is present: it decides,
//     even over spec.ingressClassName. The Ingress is ours exactly when the
//     value equals the IngressClass option.
//  2. spec.ingressClassName names an IngressClass whose spec.controller is
//     ours: ours.
//  3. It names an IngressClass of another controller: not ours, silently.
//  4. It names a class that does not exist: not ours, warning ClassNotFound.
//  5. No class (an empty spec.ingressClassName counts as none): ours when
//     one of our IngressClasses carries
//     ingressclass.kubernetes.io/is-default-class: "true", or when
//     WatchIngressWithoutClass is set.
//
// An Ingress that is not ours is invisible: not compiled, never given status,
// and it warns only in step 4. When step 1 claims an Ingress whose
// spec.ingressClassName names another controller's class or a missing one,
// it warns ClassConflict: ingress-nginx would not claim it (§19). A class
// name listed twice counts as ours when any copy is.
//
// # 3. Hosts
//
// Rule hosts are validated strictly and never normalized into a guess. A host
// is "" (no host), a lower-case DNS-1123 subdomain, or "*." followed by one.
// A host with a port, a path, an upper-case letter, a non-ASCII character,
// an IP address, or a "*" anywhere but as the whole left-most label ("*",
// "a.*.com", "*a.com") is refused: that rule is dropped with RuleRejected and
// the rest of the Ingress compiles.
//
// A request's host is its Host header (HTTP/1) or :authority (HTTP/2) with the
// port dropped (everything from the first ':', except that a bracketed IPv6
// literal keeps its brackets), ASCII letters lower-cased and one trailing dot
// dropped. A wildcard "*.example.com" matches exactly one more label:
// foo.example.com, not foo.bar.example.com, not example.com. An IPv4 literal
// never matches a wildcard.
//
// # 4. Paths
//
//   - An empty path means "/". A path that does not begin with "/" is
//     dropped with PathRejected, and so is an Exact or Prefix path that no
//     normalized request path (§13) can equal: one with an empty or dot
//     segment ("//", "/./", "/../"), an encoded slash ("%2F" or "%2f"), or a
//     space or other control byte (a newline, say). One trailing slash is
//     allowed.
//   - Exact: the normalized request path equals the rule path byte for
//     byte, case-sensitive; a trailing slash counts.
//   - Prefix matches whole path elements, case-sensitive. Trailing slashes
//     are stripped at compile time, so "/foo" and "/foo/" are one rule: it
//     matches /foo, /foo/ and /foo/bar, never /foobar. "/" matches
//     everything.
//   - ImplementationSpecific is a regular expression, compiled
//     case-insensitive as ^(?:path): anchored at the start, open at the
//     end, and a top-level alternation "a|b" stays anchored. One leading "^"
//     is dropped first, so "/api/(.*)" and "^/api/(.*)" are one route. A
//     pattern runs on Go's linear-time regexp when that accepts it with the
//     same meaning; the rest (look-around, back-references, atomic groups,
//     ...) runs on github.com/dlclark/regexp2 with a 10 ms match timeout
//     (match.DefaultMatchTimeout, checked every 5 ms). A timed-out match
//     counts as no match and is counted (match.Table.RegexTimeouts), and
//     all the regex matching of one request is bounded by a budget (§13).
//     A pattern that compiles on neither engine (possessive quantifiers such
//     as "a++" included) or whose compiled program would exceed 1 MiB is
//     dropped with PathRejected.
//   - On both engines, regex classes keep to ASCII as in nginx's PCRE
//     without UTF mode: (?i) never folds a non-ASCII letter into an ASCII
//     one (the Kelvin sign does not match "k", nor "ſ" "s", nor "İ" "i"),
//     and \d, \w and \s are ASCII. Two differences remain (§19): (?i)
//     still folds two non-ASCII letters into each other ("é" matches "É"),
//     and on regexp2 \b and the negated classes \D, \W and \S inside a
//     bracket ("[\W.]") keep their Unicode meaning.
//   - A missing pathType, or one that is not Exact, Prefix or
//     ImplementationSpecific, is treated as ImplementationSpecific, with
//     PathTypeUnknown.
//   - A backend that is a resource, or names no Service, is not served:
//     BackendUnsupported.
//
// # 5. Precedence
//
// Host first, then the path within that host only:
//
//	exact host             ─┐
//	else a wildcard host    ├─ exactly one virtual host
//	else the catch-all     ─┘
//	then, within it:  Exact > longest Prefix > first regex in controller order > the host's fallback (§6)
//
// In detail:
//
//   - Every accepted rule host creates a virtual host, even a rule with no
//     http section. Hostless rules add to the catch-all, which always
//     exists and serves every name no exact or wildcard host claims,
//     HTTP/1.0 requests without a host (others answer 400, §13), and IP
//     literals.
//   - A request whose host matched but whose path matches nothing gets that
//     host's fallback; it never falls through to a wildcard or the
//     catch-all. One whose regex matching used up the per-request budget
//     (§13) counts as unmatched without a fallback: 404.
//   - Controller order of regex paths, ingress-nginx's: pattern length
//     (without the dropped "^") descending, then the pattern descending in
//     byte order, then declaration order (§7).
//
// # 6. Default backends
//
//   - A named host's fallback is the spec.defaultBackend of the Ingress that
//     created it (the first in Ingress order to name the host); a newer
//     Ingress's never takes over. Else the global default backend, else
//     404.
//   - The catch-all's fallback is the spec.defaultBackend of the oldest
//     Ingress that has one and no rules at all; later such Ingresses get
//     DefaultBackendConflict naming the winner. An Ingress with rules,
//     hostless ones included, never sets it. Else the global default
//     backend, else 404.
//   - Any matching route outranks the fallback; a Prefix "/" replaces it.
//   - An Ingress's spec.defaultBackend answers like any backend (503 with no
//     ready endpoints), and is resolved, and warned about, even when it
//     serves no host. The global default backend is used only when it
//     resolves and has ready endpoints; otherwise its hosts answer 404 and
//     it warns DefaultBackendUnavailable once.
//
// # 7. Ingress order and conflicts
//
//   - Ingress order: creationTimestamp ascending, ties by namespace/name
//     descending (ingress-nginx's order; timestamps have one-second
//     granularity, so ties are common). Declaration order is Ingress order,
//     then rule index, then path index.
//   - A route's key is (virtual host, type, path): the path for Exact, the
//     prefix without trailing slashes for Prefix (so "/foo" and "/foo/"
//     collide), the pattern without a leading "^" for a regex.
//   - Of two declarations with one key, the first in declaration order
//     wins, within one Ingress too. Each loser gets RouteConflict naming the
//     winner, the host, the path and its type, and why the winner goes
//     first; it keeps its other routes. Creation time decides, so editing
//     an Ingress never changes who wins.
//   - Exact and Prefix on the same path are different keys and coexist: the
//     Exact route gets /x, the Prefix route /x/ and below.
//
// # 8. Backends and endpoints
//
//   - A backend is a Service port in the Ingress's own namespace, named by
//     port number or port name. Its identity is namespace/name:port with
//     the Service port number ("prod/api:80"), or the port as written when
//     it did not resolve. The identity is stable across rebuilds and keys
//     the balancing counters (§9); paths naming one Service port, by number
//     or by name, share one backend.
//   - The port is matched against spec.ports[].port, then name, then
//     (ingress-nginx's quirk, warning PortMatchedTargetPort) a targetPort
//     written as a string. A backend port that gives both a number and a
//     name (the API server refuses this, a manifest file need not) uses the
//     number, and warns ServicePortConflict when the two do not name the
//     same port of the Service.
//   - Endpoints come from the EndpointSlices labelled
//     kubernetes.io/service-name with the Service's name, in its namespace.
//     In each slice the port named like the Service port ("" for an unnamed
//     one) gives the endpoint port, which is how named targetPorts resolve.
//     Endpoints whose conditions.ready is false are left out (absent means
//     ready); only IPv4 and IPv6 slices count (FQDN slices are ignored);
//     duplicate addresses collapse; the list is sorted by address (IPv4
//     first), then port.
//   - No ready endpoints is normal during a rollout: no warning, and the
//     backend answers 503.
//   - A missing Service (ServiceNotFound) or port (ServicePortNotFound)
//     answers 503, as in ingress-nginx. An ExternalName Service compiles but
//     answers 503 (ExternalNameUnsupported): following a DNS name needs a
//     resolver with TTLs in the data plane, and an address frozen at compile
//     time goes stale at the first failover.
//   - Protocol, from the backend-protocol annotation (§11): HTTP (the
//     default), HTTPS, GRPC or GRPCS, in any case. An invalid value warns
//     AnnotationRejected and keeps HTTP. When the Ingresses serving one
//     backend disagree, the oldest decides and the others get
//     AnnotationConflict.
//
// Endpoint addresses that can never be a pod are never dialled: unspecified
// (0.0.0.0, ::), loopback, link-local (169.254.0.0/16, the cloud metadata
// address included, and fe80::/10), multicast, the broadcast address
// 255.255.255.255, and IPv6 addresses scoped to an interface
// ("fd00::1%eth0"); an IPv4-mapped IPv6 address is judged as IPv4. Each is
// dropped with EndpointRejected on the EndpointSlice ("EndpointSlice
// ns/name", field endpoints[i].addresses[j]), since a hand-written slice is
// the classic way to make an ingress proxy reach the node or the metadata
// service. compile.Options.AllowLoopbackEndpoints keeps loopback
// (127.0.0.0/8, ::1) for offline demos and tests, and nothing else.
//
// # 9. Load balancing
//
// Each backend has one policy, from the annotations of the oldest Ingress
// serving it; an Ingress that disagrees gets AnnotationConflict (one that
// sets neither annotation asks for round_robin).
//
//   - round_robin (the default): a cursor per backend walks the sorted
//     endpoints.
//   - least_conn: the endpoint with the fewest requests in flight; ties go
//     round-robin.
//   - hash: consistent hashing on the request key named by
//     upstream-hash-by: $remote_addr, $request_uri, $http_<name> or
//     $cookie_<name> (names case-insensitive, as in nginx). A ring with 160
//     points per endpoint and a fixed, unseeded hash: every replica sends a
//     key to the same endpoint, and adding or removing one of n endpoints
//     moves about 1/n of the keys. A request without its key (no such header
//     or cookie) is balanced round-robin (§19).
//   - upstream-hash-by selects hash whatever load-balance says, as in
//     ingress-nginx. load-balance "hash" without a valid upstream-hash-by
//     warns AnnotationRejected and stays round_robin. ingress-nginx's "ewma"
//     is served as least_conn, with AnnotationSubstituted. Any other
//     upstream-hash-by expression warns AnnotationRejected.
//
// Counters survive a rebuild. Cursors and in-flight counts are not in the
// table: they live in a balance.Registry that its owner (a router.Router)
// keeps across tables, keyed by backend identity for cursors and by socket
// address ("ip:port") for in-flight counts, so one address serving two
// backends has one count. A request that started under one table and ends
// under the next releases the counter it took. After each publish, a Router
// that owns its registry releases the counters nothing references any more,
// once they are idle.
//
// Weights: package balance builds smooth weighted rotations (reduced by
// their GCD, capped in length, never rounding a live endpoint to zero) and
// weighted splits across backends, but no compiled table carries weights
// yet (see §10).
//
// Not yet: session affinity (affinity: cookie and the session-cookie-*
// annotations). They warn AnnotationUnsupported (AnnotationRejected under
// ramjet.dev/) and have no effect.
//
// # 10. Canary and weighted backends
//
// Not yet served: ingress-nginx's canary annotations (canary, canary-weight,
// canary-weight-total, canary-by-header, canary-by-header-value,
// canary-by-header-pattern, canary-by-cookie) split nothing. What is
// guaranteed meanwhile is that a canary is never compiled as an ordinary
// Ingress, which would be the worst outcome (an older canary would win its
// primary's path under §7 and take all of its traffic): an Ingress whose
// canary annotation is true creates no hosts, routes, fallbacks,
// certificates or TLS hosts, and its canary annotation warns
// AnnotationUnsupported (AnnotationRejected under ramjet.dev/) saying so.
// Every request keeps going to the primary. The canary is still claimed
// (it is in compile.Result.Claimed and gets status, §16), and its other
// annotations are still read and warned about. The other canary
// annotations warn AnnotationUnsupported (AnnotationRejected under
// ramjet.dev/) and have no effect; a canary value that is not a boolean
// warns AnnotationRejected and leaves an ordinary Ingress, as in
// ingress-nginx. Weighted splits across backends (where an invalid
// backend's share would answer 500) are not served either.
//
// # 11. Annotations
//
// Two prefixes are read: ramjet.dev/ (native) and
// nginx.ingress.kubernetes.io/ (so manifests migrate unchanged). Any other
// prefix is another controller's business and is ignored.
//
//   - When both prefixes set one key, ramjet.dev/ wins, even when its value
//     is rejected: a typo never silently falls back to the other prefix.
//   - A ramjet.dev/ annotation that is unknown, not implemented, or whose
//     value does not parse is rejected (AnnotationRejected): not applied,
//     the rest of the Ingress compiles.
//   - An nginx.ingress.kubernetes.io/ annotation ramjet does not implement
//     warns AnnotationUnsupported, once per key and Ingress, so a migration
//     lists exactly what does not carry over. One whose value does not parse
//     warns AnnotationRejected.
//
// Implemented, with either prefix:
//
//   - backend-protocol (§8);
//   - load-balance and upstream-hash-by (§9);
//   - ssl-redirect, force-ssl-redirect and preserve-trailing-slash (§12),
//     booleans in Go's syntax ("true", "false", "1", "0", ...).
//
// Not yet: the rest of ingress-nginx's routing set (the canary set of §10,
// rewrite-target, use-regex and its regex mode, app-root,
// permanent-redirect, temporal-redirect, from-to-www-redirect,
// server-alias, upstream-vhost, x-forwarded-prefix, ...) and the whole
// request-policy set (proxy-body-size per Ingress, the global limit being
// router.Options.MaxBodySize of §13; the proxy timeouts,
// proxy-next-upstream-tries, source ranges, CORS, rate limits, basic and
// external auth, session affinity). Each warns as above and has no effect.
// The reason RegexModeHost is defined but never raised yet.
//
// # 12. TLS
//
//   - spec.tls[].secretName must name a kubernetes.io/tls Secret in the
//     Ingress's namespace (stringData, when a manifest carries it, overrides
//     data). A missing Secret, or one of another type, warns SecretNotFound;
//     one whose tls.crt and tls.key do not form a key pair warns
//     SecretInvalid; one whose certificate is not valid for a host listed
//     with it warns CertificateHostMismatch for that host (a wildcard host
//     needs a certificate for every name it stands for). Those hosts get the
//     next certificate that qualifies, else the default certificate (§1). An
//     entry without secretName asks for the default certificate, without a
//     warning. An invalid listed host warns RuleRejected and is skipped.
//   - A host's certificate comes from the oldest Ingress whose tls entry
//     lists the host with a valid Secret that covers it (§19).
//   - SNI selection (router.Router.TLSConfig): lower-case, drop a trailing
//     dot, the exact name, then "*.<rest>" one label up, then the default
//     certificate. TLS 1.2 and up, ALPN h2 and http/1.1. A certificate
//     rotates when a table with a new one is published; the listener never
//     restarts.
//
// The plain-HTTP to HTTPS redirect:
//
//   - A request is plain when it did not arrive over TLS; X-Forwarded-Proto
//     counts only with router.Options.TrustForwardedProto.
//   - The matched route's Ingress decides; with no route matched, the
//     Ingress that created the host (for the catch-all, the one whose
//     spec.defaultBackend is its fallback), else the options.
//     force-ssl-redirect redirects on any host; ssl-redirect (on unless
//     DisableSSLRedirect) only on a TLS host: a host listed under some
//     claimed Ingress's spec.tls, by name or by a "*." entry one label up,
//     even when its Secret is missing and even when no rule names it.
//   - The answer is 308 to https://<the Host header without its
//     port><request-target>, one trailing slash dropped (not before a
//     query) unless preserve-trailing-slash is set. A redirect that is due
//     but has no usable host answers 400 rather than serving in the clear.
//   - /.well-known/acme-challenge and everything under it, judged on the
//     normalized path, is never redirected, whichever route serves it (§19).
//
// # 13. Serving a request
//
// router.Router is the http.Handler. It loads the serving table once per
// request and uses it throughout.
//
//   - The request-target is taken in origin form ("/p?q") or absolute form
//     ("http://h/p?q", whose authority net/http uses as the host). Any other
//     form ("*", authority form), a target holding a space or control byte,
//     and an absolute-form target with userinfo ("http://user@h/") answer
//     400.
//   - An HTTP/1.1 request without a Host header or with an empty one, and an
//     HTTP/2 request without :authority, answer 400. HTTP/1.0 may omit Host:
//     such a request is served by the catch-all, and the backend then sees
//     its own address as the Host.
//   - The path is normalized for matching only: a "#" and what follows are
//     cut off (a decoded "%23" is an ordinary byte), %XX decoded once (a
//     decoded %2F is a separator), repeated slashes merged, "." and ".."
//     resolved, a trailing slash kept. A path that climbs above "/", bad
//     percent-encoding, or a decoded NUL (%00) answers 400; a NUL in the
//     query is the backend's business. The route, the TLS redirect and the
//     ACME exemption (§12) are all decided on this path. The backend
//     receives the client's request-target and query byte for byte, "#"
//     and "//"-prefixed targets included.
//   - Forwarded to the backend: the client's Host unchanged;
//     X-Forwarded-For with the peer's IP appended; X-Forwarded-Host (the
//     Host as sent), X-Forwarded-Port (the listener's port) and
//     X-Forwarded-Proto (the client's scheme), replacing any the client
//     sent; X-Real-IP; exactly one X-Request-ID, the client's first value
//     unless it is empty, else a new random one. The client's X-Scheme and
//     X-Forwarded-Scheme are removed, and so are hop-by-hop headers and, as
//     nginx does by default, every request header whose name contains "_"
//     (CGI-style frameworks read X_Forwarded_For as X-Forwarded-For).
//   - Request bodies are read whole before an endpoint is picked, as nginx
//     buffers them, so a client that sends slowly holds no backend
//     connection, and are sent on with their length. The limit is
//     router.Options.MaxBodySize (1 MiB, ingress-nginx's proxy-body-size
//     default; negative: none, and then only the first 1 MiB is read ahead
//     and the rest streamed). A declared Content-Length over it answers 413
//     before a byte is read; a chunked body that grows past it answers 413.
//     A body that stalls between two reads for ClientBodyTimeout (60 s,
//     nginx's client_body_timeout) answers 408, and malformed chunked
//     framing is the client's 400, not a backend failure. After any of
//     these an HTTP/1 connection is closed. A gRPC request's body is a
//     stream: it is limited and timed the same way, never buffered.
//   - Router.ConfigureServer gives an http.Server that sets none of its
//     own nginx's idle keep-alive timeout (IdleTimeout, 75 s) and a
//     request-header timeout (ClientHeaderTimeout, 60 s); the example
//     controller calls it and sets a 10 s header timeout itself.
//   - Regex matching is bounded per request: however many regex routes a
//     host has, one request spends at most match.RegexBudget (50 ms) in
//     them, overrunning it by at most about one match's timeout (§4).
//     Past it the request answers 404 as unmatched, without the host's
//     fallback. Requests in which a match timed out, and requests whose
//     budget ran out, are counted (Router.Stats: RegexTimeouts,
//     RegexBudgetExceeded), logged at most once a second, and exported by
//     the example controller's /metrics (ramjet_regex_timeouts_total,
//     ramjet_regex_budget_exceeded_total).
//   - Answers the router makes itself, as short plain text naming the
//     reason and never an endpoint address: 404 nothing matched and no
//     fallback, or the regex budget ran out; 503 no ready endpoints, a
//     missing Service or port, an ExternalName Service, or no table
//     published yet; 502 the backend could not be reached or failed before
//     answering, or a gRPC request to a backend not marked GRPC or GRPCS
//     (the message names the backend-protocol fix); 504 the backend sent no
//     response headers within the read timeout (60 s); 400 a malformed
//     request-target, path, Host or body framing; 408 a stalled body; 413 a
//     body over the limit; 308 the TLS redirect (§12). To a gRPC client
//     (Content-Type application/grpc...) each is trailers-only: grpc-status
//     and grpc-message, no body.
//   - gRPC to a GRPC backend goes over cleartext HTTP/2, to GRPCS over
//     HTTP/2 with TLS, trailers intact; HTTP and HTTPS backends get
//     HTTP/1.1. Unless router.Options.Transport is set, HTTP backends go
//     through the router's own pool of HTTP/1.1 keep-alive connections,
//     which writes the request and reads the response on the handler's
//     goroutine; a connection is reused only when its response was read to
//     the end, and a reused connection the backend closed before answering
//     is tried again once when nothing was sent yet. The rest go through
//     net/http's transports. TLS to backends does not verify their certificates, like
//     ingress-nginx's default. Clients may use TLS with ALPN h2, HTTP/1.1, or
//     cleartext HTTP/2 with prior knowledge, as the embedder's http.Server
//     allows.
//   - WebSocket and other Upgrade requests are tunnelled once the backend
//     answers 101. Responses of unknown length are flushed as they arrive.
//   - A backend that cannot be connected to (refused, unreachable, connect
//     timeout, failed TLS handshake) is retried on another of its
//     endpoints, at most 3 tries, for GET, HEAD, OPTIONS, TRACE, PUT and
//     DELETE, when nothing of the request body was read (§19). A failure
//     after the connection opened is never retried. A failure after the
//     response started cuts the client's connection. In-flight counts are
//     released on every way out.
//
// Not yet: X-Scheme and X-Forwarded-Scheme are removed, not set to the
// client's scheme.
//
// # 14. Warnings
//
// A compile warning is a value, compile.Warning: a stable Reason code; the
// Object it is about as a structured compile.Ref (Kind, Namespace, Name;
// rendered "Ingress prod/shop", or "Service ns/name" for the global default
// backend and "EndpointSlice ns/name" for a rejected endpoint address); the
// Field path ("spec.rules[0].http.paths[1].path"); a Message; and, for
// conflicts, the winning declaration as Winner (a Ref) and WinnerField.
// Nothing downstream parses them back out of text: Warning.String renders
// one line, "RouteConflict Ingress prod/b spec.rules[0].http.paths[0]: ...
// (winner: Ingress prod/a spec.rules[0].http.paths[0])", and a
// RouteConflict's message says why the winner went first (an older
// Ingress; one created in the same second that goes first by
// namespace/name, descending; or an earlier declaration in the same
// Ingress). compile.Result.Warnings are sorted by object, field, reason,
// message and winner, exact repeats dropped; the table does not carry
// them. The reasons:
//
//	ClassNotFound             spec.ingressClassName names no IngressClass (§2)
//	ClassConflict             the class annotation overrides spec.ingressClassName (§2)
//	RuleRejected              an invalid rule or TLS host; dropped (§3, §12)
//	PathRejected              a path that can never match or a regex that fails (§4)
//	PathTypeUnknown           pathType missing or unknown; read as a regex (§4)
//	BackendUnsupported        a resource backend, or no Service (§4)
//	RouteConflict             a second declaration of a route key (§7)
//	DefaultBackendConflict    a second rules-less spec.defaultBackend (§6)
//	DefaultBackendUnavailable the global default backend cannot serve (§6)
//	ServiceNotFound           answers 503 (§8)
//	ServicePortNotFound       answers 503 (§8)
//	ServicePortConflict       a port number and name naming different ports; the number is used (§8)
//	PortMatchedTargetPort     the port matched only a targetPort string (§8)
//	ExternalNameUnsupported   answers 503 (§8)
//	EndpointRejected          an endpoint address that can never be a pod; not dialled (§8)
//	AnnotationRejected        a ramjet.dev/ annotation, or a value, not applied (§10, §11)
//	AnnotationUnsupported     an nginx annotation ramjet does not implement, canary included (§10, §11)
//	AnnotationConflict        Ingresses disagree about one backend (§8, §9)
//	AnnotationSubstituted     ewma served as least_conn (§9)
//	SecretNotFound            a spec.tls Secret missing or not kubernetes.io/tls (§12)
//	SecretInvalid             a spec.tls key pair that does not parse (§12)
//	CertificateHostMismatch   a certificate not valid for a listed host (§12)
//	RegexModeHost             reserved for use-regex mode (§11); never raised yet
//
// Worth alerting on: RuleRejected, PathRejected, EndpointRejected, the
// Service, default backend and Secret reasons. The example controller logs
// each warning with log/slog (RAMJET_LOG sets the level: debug, info, warn,
// error): in a cluster when it first appears, with -manifests on every
// reload. It serves the last compile's warnings on /debug/warnings and, in
// a cluster, posts warnings about Ingresses as Warning Events (§16).
//
// # 15. Digest, generations and publishing
//
// match.New builds a table and its digest in one step from a match.Spec, so
// no table exists without one. The digest is a SHA-256 of a canonical
// encoding of everything that affects a response: the compile options
// (passed as Spec.Inputs); hosts, routes in precedence order and their
// redirect settings; backends with their protocol, state, endpoints and
// policy; TLS hosts; certificates with their whole chain. It walks sorted
// lists only, never a map, and reads no clock. Sources and declaration order
// are left out, and warnings are not part of the table: renaming an Ingress
// republishes nothing.
//
// router.Router.Publish swaps the serving table atomically, so a request sees
// one whole table, and in-flight requests finish on the table they started
// with. Publishing a table whose digest equals the serving one's does
// nothing: the generation does not move. The API server re-sends every
// object on each watch restart and resync; without this, each would hand the
// data plane a table it already has. Before the first Publish every request
// answers 503.
//
// # 16. Status
//
// Package status decides what is written back; the controller writes it.
//
//   - status.Desired: the addresses to advertise in
//     .status.loadBalancer.ingress. From --publish-address (IPs as ip,
//     names as hostname), which wins; else from the --publish-service
//     Service: a LoadBalancer's status ingress plus its externalIPs; a
//     NodePort's externalIPs, else its cluster IP; a ClusterIP Service's
//     cluster IP; an ExternalName Service's name as hostname. Values an
//     Ingress status cannot hold are left out. Sorted by hostname, then IP.
//   - status.Updates: one write per claimed Ingress whose status differs
//     from that as a set, and none at all when there is nothing to advertise
//     yet (publish Service missing, load balancer not provisioned):
//     clearing every status would make DNS automation withdraw live
//     records. --no-status-update writes nothing.
//   - status.EventDeduper: which warnings about Ingresses to post as
//     Warning Events: each when it appears, and again every 50 minutes while
//     it persists, so it outlives the API server's one-hour Event TTL.
//
// Status is advertising, not configuration: routing never reads it. In the
// example controller only the replica holding the leader Lease writes status
// and posts Events.
//
// # 17. The controller loop
//
// examples/controller (its own module: the library never imports client-go)
// runs five informers (Ingress, IngressClass, Service, EndpointSlice, and
// Secrets of type kubernetes.io/tls) that feed one rebuild task. A rebuild
// runs 200 ms after the last event, and at least once a second under steady
// churn; it compiles everything in the caches and publishes. An Ingress
// update that touches only its status triggers none. /readyz answers 200
// once the caches have synced and the first table is published. Without
// -manifests it serves a cluster; with -manifests it serves a folder of
// manifests instead, polled every 500 ms and compiled with
// AllowLoopbackEndpoints (§8), and a file that does not parse leaves the
// previous table serving.
//
// # 18. Case files
//
// A case file is YAML: one case or a list of cases. Package routertest
// (router/routertest) runs them (RunFiles in a Go test, LoadCases and Run for
// other tools), and so does go run ./examples/check. Keys (unknown keys are errors):
//
//   - case: name; scenario, notes, source (free text); options
//     (defaultBackend, ingressClass, controllerName,
//     watchIngressWithoutClass, sslRedirect, allowLoopbackEndpoints,
//     trustForwardedProto, defaultSSLCertificate); objects (manifests,
//     inline, or include: a manifest file or folder relative to the case
//     file); warnings (the exact list the objects compile to, in order:
//     reason, object, field); requests.
//   - request: host ("" for none, sent as HTTP/1.0); path (the raw
//     request-target); method (default GET); headers; body or bodySize;
//     clientAddress (the peer the router sees); scheme ("https" means TLS
//     with SNI = host); repeat; scenario, notes, source; expect.
//   - expect: status; service (the backend ID chosen, or null for none);
//     route (the declaration matched, "ns/name spec.rules[0].http.paths[1]",
//     or null); forwardedPath and forwardedHost (what the backend received);
//     requestHeaders (what the backend received, null meaning absent);
//     responseHeaders ("" means absent); certificateHost (the served
//     certificate verifies for this name); distinctEndpoints (over the
//     repeats).
//
// Requests go through the real handler, built as net/http's server would
// hand them over, with a transport that records which endpoint was chosen
// and what it received. Both runners also compare each file's compiled
// tables, warnings included, with x.golden beside x.yaml (rewritten with
// -update), and reach the same verdict on the same files.
//
// Not yet: the options proxyBodySize (router.Options.MaxBodySize exists,
// but a case cannot set it; cases run with the 1 MiB default),
// useForwardedHeaders (only trustForwardedProto, the X-Forwarded-Proto
// part, exists) and proxyRealIPCIDR, which wait for the router options
// they would set.
//
// # 19. Where ramjet differs from ingress-nginx
//
// Each difference is deliberate. Where an object triggers one, the warning
// in brackets says so; the others are documented here. First how
// ingress-nginx v1.15 behaves ("there"), then ramjet ("here"):
//
//   - kubernetes.io/ingress.class and spec.ingressClassName both set:
//     ingressClassName wins there; here the annotation decides
//     (ClassConflict).
//   - An Ingress with no class: ignored there unless
//     --watch-ingress-without-class; here also claimed when our IngressClass
//     is the default class.
//   - pathType ImplementationSpecific: the same as Prefix there; here a
//     case-insensitive regex ^(?:path) (documented).
//   - Prefix "/foo/" and a request for /foo: a 301 to /foo/ there; served
//     directly here.
//   - Prefix "/foo" and "/foo/" in two Ingresses: nginx refuses the config
//     and the whole old one keeps serving; here the oldest Ingress wins
//     (RouteConflict).
//   - A duplicate route: dropped silently there; dropped here with the loser
//     named (RouteConflict).
//   - The oldest TLS Ingress's certificate does not cover the host: the
//     default certificate there; here the oldest valid one that covers it.
//   - Upstream names ns-svc-port colliding across namespaces: the wrong
//     Service there; identity is structural here (ns/name:port).
//   - An ExternalName Service: proxied to the DNS name there; here it
//     compiles and answers 503 (ExternalNameUnsupported).
//   - A gRPC request to a backend without backend-protocol GRPC or GRPCS:
//     proxied over HTTP/1.1 there, which a gRPC server rejects; here a 502
//     (gRPC status UNAVAILABLE) whose message names the fix.
//   - load-balance: ewma: EWMA there; least_conn here
//     (AnnotationSubstituted).
//   - upstream-hash-by: any nginx variable expression there; here only
//     $remote_addr, $request_uri, $http_<name> and $cookie_<name>, others
//     rejected and the backend left round-robin (AnnotationRejected).
//   - A request without its hash key: hashed as the empty key there, so
//     every such request reaches one endpoint; round-robin here
//     (documented).
//   - A backend that connects but sends no response headers in time: 504
//     in both (§13), listed because a 502 would be easy to expect.
//   - Methods retried after a failed connect: all but POST, LOCK and PATCH
//     there; GET, HEAD, OPTIONS, TRACE, PUT and DELETE here.
//   - An nginx.ingress.kubernetes.io/ annotation ramjet does not implement:
//     in effect there; no effect here (AnnotationUnsupported, once per key
//     and Ingress).
//   - The ACME exemption from the TLS redirect: only locations whose own
//     path starts with /.well-known/acme-challenge there; any request under
//     that path here (documented).
//   - A regex with possessive quantifiers ("a++"): accepted by PCRE there;
//     rejected here (PathRejected).
//   - A regex match that runs too long: PCRE's backtracking limit, then no
//     match, there; here 10 ms per backtracking match and 50 ms per request
//     in all, then no match, and a 404 once the request's budget is spent
//     (§13; counted in router.Router.Stats).
//   - (?i) between two non-ASCII letters ("é", "É"): no folding in PCRE
//     without UTF mode there; folded here. On regexp2, \b and negated
//     classes inside a bracket ("[\W]") are Unicode too (documented, §4).
//   - Request bodies: buffered in memory, then in temporary files there;
//     here in memory up to the body limit (with no limit, the first 1 MiB,
//     then streamed), and gRPC bodies streamed (documented, §13).
//   - An EndpointSlice address that can never be a pod (loopback,
//     link-local including the cloud metadata address, ...): dialled there;
//     dropped here (EndpointRejected, §8).
//
// Kept on purpose, with a warning, because migrating users depend on it: a
// Service port referenced by its targetPort string still resolves
// (PortMatchedTargetPort).
package ramjet
