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
// classify and balance import no ramjet package; match imports balance
// and its own match/htpasswd (password files and hashes) and
// match/urltemplate (rewrite and auth URL templates), which import no
// ramjet package; compile imports classify, match, balance and
// router/configmap (the router's ConfigMap keys, which imports match);
// compile/manifest and status import compile; router imports match,
// balance, router/configmap and router/h1 but never compile, so the data
// plane can be fed tables built anywhere; router/h1 imports router/rawsock
// and no other ramjet package; router/routertest, the case file runner,
// imports compile, compile/manifest and router. No library package
// imports examples/.
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
//     backend (SPEC §5). A Table holds VirtualHosts, each with its Routes
//     and its fallback, and Backends. What a location asks of a request
//     besides its backend (rewrite, request policy, CORS, authentication,
//     backend TLS, response, snippets) is one match.Location: each Route
//     embeds one (route.Policy reads it), each VirtualHost holds its
//     fallback's (FallbackLocation), and Result.Location hands the router
//     the one a lookup chose. Each feature's digest and text are a section
//     declared in the feature's file and listed in match/section.go.
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
//     Lookup reports what ServeHTTP would do with a request without serving
//     it (the same code decides both); Options.Hook and Options.BodyHook
//     run the embedder's own per-route steps; Options.Observer gets a Record per request;
//     DefaultTransport is the default upstream transport, to wrap.
//     router/routertest runs case files against the real handler.
//   - router/h1 is HTTP/1: the server that serves the router (§13), the
//     framing guard for net/http's server (GuardFraming), the client for
//     HTTP backends (Pool, Conn, Response; §13), and the message rules
//     (tokens, Content-Length, Expect) all three share. router/rawsock
//     beneath it reads and writes plain TCP sockets with raw system calls.
//   - status decides, without writing anything, what the controller writes
//     back (SPEC §16): the load-balancer addresses every claimed Ingress
//     should advertise (Desired), the minimal status updates that get them
//     there (Updates), and which compile warnings to post as Warning Events,
//     so that a problem is posted when it appears rather than on every
//     rebuild (EventDeduper).
//
// The commands under examples are where the outside world comes in:
// examples/controller serves a cluster, or with -manifests a folder of
// manifests with no cluster (and watches it for edits); examples/embed is
// the router inside someone else's server, with an annotation of its own;
// examples/check runs case files from the command line, and for a folder of
// manifests prints the table (-translate), the decision for one request
// (-explain) or the migration report from ingress-nginx (-report).
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
// (networking.k8s.io/v1), Services (v1), EndpointSlices (discovery.k8s.io/v1),
// Secrets (v1) and ConfigMaps (v1), as the k8s.io/api Go types, in any order. Nil entries are
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
// read (ReadTimeout, 60 s: the response headers, then each wait between
// two reads of the body) timeouts to backends; and the client
// limits of §13: MaxBodySize (1 MiB, ingress-nginx's proxy-body-size; a
// negative value means none), ClientBodyTimeout (60 s), and IdleTimeout
// (75 s) and ClientHeaderTimeout (60 s), which Router.ConfigureServer puts
// on an http.Server that sets none of its own; the peers trusted to name
// the client (ProxyRealIPCIDR), whether their X-Forwarded-For is believed
// (TrustForwardedFor) and passed on whole (ComputeFullForwardedFor); and
// the rate-limit counters the zones
// share (RateLimitEntries, §11.5). The status address source is
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
// The example controller takes --proxy-real-ip-cidr (router.Options.ProxyRealIPCIDR),
// --use-forwarded-headers (TrustForwardedProto and TrustForwardedFor),
// --compute-full-forwarded-for (ComputeFullForwardedFor) and
// --use-proxy-protocol (PROXY v1/v2 on its listeners; the header of a
// peer in --proxy-real-ip-cidr, or of every peer without it, gives the
// client address, and X-Forwarded-For is then believed only with
// --use-forwarded-headers, from a PROXY source in --proxy-real-ip-cidr, as
// ingress-nginx's proxy chain does; PROXY UNKNOWN and v2 LOCAL mean the
// connection's own peer, router.PeerIsClient).
// --proxy-body-size (nginx size syntax, default 1m, 0 for no limit) is
// router.Options.MaxBodySize.
//
// The ingress-nginx ConfigMap. compile.ParseConfigMap reads one with
// ingress-nginx v1.15's defaults and value syntax (booleans as
// strconv.ParseBool reads them and "" as false, numbers in Go's base-0
// syntax, sizes as nginx's), and is the one parser the example controller
// (--configmap ns/name, watched; with -manifests a ConfigMap of that name
// in the folder), examples/check (-report, -translate and -explain read
// the ConfigMap named by -configmap, else the one named
// ingress-nginx-controller, the Helm chart's) and case files (the
// configMap option) share. A Snapshot also holds ConfigMaps, for the
// ConfigMaps add-headers and proxy-set-headers name. Its keys land in
// three places:
//
//   - Location keys, the defaults of the annotations of the same name,
//     which an Ingress's own annotation overrides (ingress-nginx's
//     annotation parsers default to them): force-ssl-redirect,
//     preserve-trailing-slash, use-port-in-redirects, proxy-body-size, client-body-buffer-size,
//     proxy-connect-timeout, proxy-read-timeout, proxy-send-timeout,
//     proxy-next-upstream-tries,
//     load-balance, upstream-hash-by, service-upstream (every backend
//     dialled at its Service's cluster IP unless its oldest Ingress says
//     "false"), whitelist-source-range, denylist-source-range, limit-rate,
//     limit-rate-after, proxy-buffering, proxy-buffer-size,
//     proxy-buffers-number, proxy-busy-buffers-size,
//     proxy-max-temp-file-size, proxy-request-buffering,
//     proxy-http-version, proxy-next-upstream,
//     proxy-next-upstream-timeout, proxy-redirect-from, proxy-redirect-to,
//     proxy-cookie-domain, proxy-cookie-path (read as nginx reads them:
//     ingress-nginx validates only the annotations; the two source range
//     lists skip empty entries, as its splitAndTrimSpace does, and one
//     with an entry nginx cannot read denies the locations that take it,
//     503, where nginx would refuse the whole configuration, rather than
//     opening them); and block-cidrs (an entry that does not parse
//     is left out with a warning, the others still denied), denied (403) on every
//     location without source ranges of its own, as nginx inherits an
//     http-level deny only into locations without allow or deny rules;
//     and disable-proxy-intercept-errors, which turns off the
//     interception of the global custom-http-errors only (§11.8).
//     Set compile.Options.ConfigMap: they are in the table's text and
//     digest, the catch-all's fallback included.
//   - Option keys: ssl-redirect overrides Options.DisableSSLRedirect,
//     relative-redirects sets Options.RelativeRedirects (nginx's
//     http-level absolute_redirect off: every location's redirects stay
//     relative, a relative-redirects annotation "false" included),
//     proxy-ssl-location-only Options.ProxySSLLocationOnly (no host-level
//     backend TLS: each location has only its own proxy-ssl-*),
//     custom-http-errors Options.CustomHTTPErrors,
//     allow-snippet-annotations and annotations-risk-level the options of
//     those names, allow-cross-namespace-resources
//     Options.AllowCrossNamespaceResources (auth-secret,
//     auth-proxy-set-headers, auth-tls-secret and proxy-ssl-secret may
//     then name another namespace's Secret or ConfigMap), the global-auth-* keys (all but
//     global-auth-snippet) Options.GlobalAuth, and enable-opentelemetry,
//     opentelemetry-trust-incoming-span and opentelemetry-operation-name
//     Options.Tracing (§23), and the stream keys proxy-stream-timeout,
//     proxy-stream-next-upstream, proxy-stream-next-upstream-timeout,
//     proxy-stream-next-upstream-tries and proxy-stream-responses
//     Options.StreamSettings, which every TCP and UDP service follows
//     (§22). Of ingress-nginx's other stream keys, stream-snippet warns
//     traffic-moves when set, log-format-stream,
//     stream-access-log-path and disable-stream-access-log are cosmetic
//     (the example controller's stream access log reads them), and proxy-protocol-header-timeout, which ingress-nginx
//     applies to its TLS passthrough listener only, is cosmetic too.
//   - Keys an embedder serves itself (ParseConfigMapFor's ExtensionKeys,
//     in ConfigMap.Extensions, unwarned): the example controller's
//     enable-modsecurity, enable-owasp-modsecurity-crs and
//     modsecurity-snippet, and the OpenTelemetry exporter's keys
//     (otlp-collector-host, otel-sampler, ...; §23), which follow every
//     rebuild; without an embedder serving them, the exporter's keys warn
//     feature-missing.
//   - Router keys, read by the router's own parser, package
//     router/configmap (configmap.Parse, whose warnings ParseConfigMap
//     joins to the ConfigMap's), in ConfigMap.Router, which
//     router.Options.ApplyConfigMap sets in the router's options (the
//     case files' runner and the example controller call it; each key
//     replaces only its own settings): the hsts keys,
//     use-forwarded-headers (TrustForwardedProto and TrustForwardedFor),
//     enable-real-ip (TrustForwardedFor alone), compute-full-forwarded-for
//     (with use-forwarded-headers only), forwarded-for-header
//     (ForwardedForHeader, the header the client address is read from),
//     forwarded-host-header (ForwardedHostHeader, the client's header
//     sent on as X-Original-Forwarded-Host, from any peer),
//     proxy-real-ip-cidr, limit-req-status-code and limit-conn-status-code
//     (LimitReqStatusCode, LimitConnStatusCode: the answer of a request
//     over limit-rps or limit-rpm, and over limit-connections),
//     http-redirect-code (HTTPRedirectCode: the status of the HTTPS
//     redirect and of a from-to-www-redirect twin's, 301, 302, 307 or
//     308; another value keeps 308, as ingress-nginx keeps it, and warns
//     ConfigMapKeyIgnored), no-tls-redirect-locations
//     (NoTLSRedirectLocations: the paths, comma-separated, under which
//     plain HTTP is not redirected, /.well-known/acme-challenge by
//     default; an item not starting with "/" matches nothing there either
//     and warns ConfigMapKeyIgnored), block-user-agents and block-referers (BlockUserAgents,
//     BlockReferers: 403 on every host, before anything else of it, to a
//     request whose User-Agent or Referer an entry names: a string, the
//     whole value without case, "~" a regex found anywhere in it, "~*"
//     one without case, as nginx's map reads its keys; an entry nginx
//     would not read as one word, or a regex that does not compile,
//     rejects the key), add-headers and proxy-set-headers (AddHeaders on every answer over a
//     backend's, ProxySetHeaders on every proxied request over the
//     client's, read by ConfigMap.ReadHeaders
//     (configmap.Settings.ReadHeaders) from the ConfigMaps they
//     name; Router.SetConfigMapHeaders changes them live; the values are
//     nginx's more_set_headers and proxy_set_header values, so their
//     variables, those of §11.9 but the captures, are expanded per
//     request, one that expands to a control byte is not sent (§11.9), an
//     empty one clears the header, and one with another variable, such as
//     ${msec}, warns ConfigMapKeyUnsupported and is left out), use-gzip with
//     gzip-level, gzip-min-length and gzip-types (Gzip: 200, 403 and 404
//     answers of a listed type, text/html always, whose Content-Length,
//     when there is one, is not below the minimum, to HTTP/1.1 clients
//     that accept gzip, with Vary: Accept-Encoding), server-tokens
//     (ServerTokens: "false", the default, sends no Server header, not
//     even an add-headers one, "true" sends "Server: ramjet" on every
//     answer, or the add-headers Server; a backend's own is not passed
//     on, as nginx's proxy_hide_header hides it, but with
//     allow-backend-server-header (BackendServerHeader) beside "true": a
//     proxied answer then carries the backend's Server, or none),
//     enable-brotli
//     with brotli-level, brotli-min-length and brotli-types (Brotli: the
//     answers gzip would compress, in br to a client that accepts it,
//     preferred over gzip as ngx_brotli's filter runs first; the encoder
//     is the embedder's, Brotli.NewEncoder, as the library brings none:
//     the example controller's uses github.com/andybalholm/brotli; a case
//     file's ConfigMap sets Brotli without one, so a case run as loaded
//     answers nothing in br); and, not router options but in the same
//     Settings for the embedder's listeners and access log (the example
//     controller's), use-proxy-protocol, disable-ipv6 (DisableIPv6:
//     ingress-nginx then writes no "listen [::]" line, so listeners for
//     every address take IPv4 clients only), large-client-header-buffers
//     and client-header-buffer-size (router/h1.Server's HeaderBuffers:
//     an HTTP/1 request line longer than one of the large buffers
//     answers 414, a header line longer than one, or a head whose lines,
//     none split between two buffers, need more of them than there are,
//     400 "Request Header Or Cookie Too Large", as nginx's
//     ngx_http_alloc_large_header_buffer; over HTTP/2, and under the
//     example controller's -http1-server net/http, the head is bounded
//     at number×size instead: §13), http2-max-concurrent-streams (128,
//     the HTTP/2 servers' SETTINGS_MAX_CONCURRENT_STREAMS, as nginx's
//     http2_max_concurrent_streams), the client connection keys
//     keep-alive, keep-alive-requests, client-header-timeout and
//     worker-shutdown-timeout (router.Options.IdleTimeout and
//     ClientHeaderTimeout take the two timeouts, ClientBodyTimeout
//     client-body-timeout; keep-alive "0" and the request count are
//     the server's), and log-format-upstream
//     with log-format-escape-json (its access log in nginx's variable
//     syntax: $remote_addr, $remote_user, $host, $request,
//     $request_method, $request_uri, $uri, $args, $scheme,
//     $server_protocol, $status, $body_bytes_sent, $bytes_sent,
//     $request_length, $request_time, $msec, $time_iso8601, $time_local,
//     $req_id, $upstream_addr, $upstream_status, $upstream_response_time,
//     $upstream_header_time, $upstream_response_length,
//     $proxy_upstream_name, $namespace, $ingress_name, $service_name,
//     $service_port, $location_path, $server_name, $http_*, $cookie_*;
//     any other is warned about once, by name, and logged as "-").
//
// A key given as a flag too is left to the flag (ParseConfigMap's keep
// names them), with a cosmetic warning. Every other key warns once,
// naming it: ConfigMapKeyRejected for a value that does not parse (the
// default stays), ConfigMapKeyUnsupported for a key ramjet lacks
// (traffic-moves where answers change, such as no-auth-locations;
// feature-missing otherwise, such as default-type),
// ConfigMapKeyIgnored for nginx's own
// tuning (worker-processes, buffers, caches) and for keys ingress-nginx
// reads only as annotations (app-root, upstream-hash-by-subset,
// upstream-hash-by-subset-size): compile adds them to
// Result.Warnings, on the ConfigMap, field "data[key]". The example
// controller follows every key at every rebuild (configmap.Key.Live;
// Router.SetConfigMapOptions swaps the router keys' settings, the access
// log's format is swapped whole) but use-proxy-protocol and
// proxy-real-ip-cidr, which its listeners are made with: those are read
// at start, and a later change warns that it waits for a restart.
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
// Invisible is not silent: compile.Result.Unclaimed (and
// compile.SummarizeUnclaimed) counts the Ingresses read and not claimed,
// grouped by the class annotation or ingressClassName they name, with the
// setting that would claim each group (the class, the controller of the
// IngressClass they name, or watch-ingress-without-class). The controller's
// log and /readyz, examples/check -translate and -report, and case runs
// (routertest.Result.Unclaimed) all print it from that one summary.
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
// foo.example.com, not foo.bar.example.com, not example.com; that label is
// letters, digits, '_' and '-', as ingress-nginx's server_name regex
// ^(?<subdomain>[\w-]+)\.example\.com$ takes it. A wildcard an
// HTTPRoute names (§20) matches any number of labels, as the Gateway API
// says: foo.bar.example.com too ("any-depth" in the table text), the
// longest wildcard first. An IPv4 literal never matches a wildcard.
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
//     as "a++" included), whose compiled program would exceed 1 MiB, or
//     whose text is longer than 32 KiB (match.MaxRegexPattern, checked
//     before parsing, so that one enormous path cannot add seconds to every
//     rebuild) is dropped with PathRejected.
//   - On both engines, regex classes keep to ASCII as in nginx's PCRE
//     without UTF mode: (?i) never folds a non-ASCII letter into an ASCII
//     one (the Kelvin sign does not match "k", nor "ſ" "s", nor "İ" "i"),
//     and \d, \w and \s are ASCII; two non-ASCII letters are different
//     bytes there, so "é" does not match "É" either. Neither engine is
//     asked to ignore case: the pattern spells out the ASCII folds itself.
//     Differences remain only for what paths rarely hold (§19): a case flag
//     written inside the pattern ("(?-i)") keeps the engine's Unicode
//     meaning, a pattern with a back-reference folds Unicode on regexp2,
//     and on regexp2 \b and the negated classes \D, \W and \S inside a
//     bracket ("[\W.]") keep their Unicode meaning.
//   - ingress-nginx matches an ImplementationSpecific path as a
//     case-sensitive Prefix path unless its host is in regex mode
//     (§11.1). Where the host is not and the path holds a letter or regex
//     syntax, or does not end in "/" (the regex goes on past its last
//     segment: /v1 takes /v10), so that the two can differ, the path warns
//     PathCaseInsensitive (§19); so does a literal one whose requests a
//     Prefix route takes here (a shorter prefix of it, "/" above all, or a
//     newer declaration of the same path), since a regex is tried after
//     every Prefix, where ingress-nginx serves them from it.
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
//     byte order, then declaration order (§7). On a host in regex mode the
//     declared path places each pattern it makes (its "^" kept, a Prefix
//     path's "/p/" and "/p" together, "/p/" first), as ingress-nginx sorts
//     the declared paths before it adds the twins, and of two declarations
//     making one pattern the one placed first serves it (RouteConflict on
//     the other).
//   - A host in ingress-nginx's regex mode (§11.1) has regex paths only, so
//     there the first pattern in controller order wins, however short the
//     Prefix or Exact path it came from.
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
//     On the catch-all ingress-nginx keeps a rules-less Ingress's default
//     backend against any hostless path "/" of the same type, so its
//     Ingress gets DefaultBackendConflict naming each such path.
//   - The fallback is a location of the Ingress that supplies the host's
//     settings (the creator; for the catch-all, the rules-less Ingress whose
//     spec.defaultBackend it serves), as ingress-nginx applies an Ingress's
//     annotations to the default location it creates for it: its
//     authentication, CORS, source ranges, rate limits, body size and
//     timeouts guard every request no route matches, before the global
//     default backend's 404 too, and its nginx rewrite-target,
//     x-forwarded-prefix and upstream-vhost apply there as on a Prefix "/"
//     path (rewrite "(?i)/", so no group captures). The catch-all keeps no
//     rewrite, as ingress-nginx keeps its catch-all's; a ramjet.dev/
//     rewrite-target affects only its own paths. No request reaches a
//     Service without the checks the Ingress that named it asks for. The
//     fallback's settings are one match.Location, the value a route holds
//     (VirtualHost.FallbackLocation), which compile builds with the
//     function that builds a route's.
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
//   - Protocol, from the backend-protocol annotation (§11.1): HTTP (the
//     default), HTTPS, GRPC or GRPCS, in any case; with the
//     nginx.ingress.kubernetes.io/ prefix also AUTO_HTTP, HTTPS for a
//     client whose own connection is TLS and HTTP otherwise (nginx's
//     proxy_pass $scheme://). FCGI is not served (AnnotationRejected,
//     traffic moves). An invalid value warns AnnotationRejected and keeps
//     HTTP. When the Ingresses serving one
//     backend disagree, the oldest decides and the others get
//     AnnotationConflict.
//
// Endpoint addresses that can never be a pod are never dialled: unspecified
// (0.0.0.0, ::), loopback, link-local (169.254.0.0/16 and fe80::/10),
// multicast, the broadcast address 255.255.255.255, IPv6 addresses scoped
// to an interface ("fd00::1%eth0"), and the cloud metadata services:
// 169.254.169.254 (AWS, GCP, Azure, Oracle, refused with the rest of
// link-local), fd00:ec2::254 (AWS), fd20:ce::254 (GCP), 168.63.129.16
// (Azure's WireServer), 100.100.100.200 (Alibaba) and 192.0.0.192
// (Oracle). An IPv6 address is also judged by the IPv4 address it carries
// in a form that delivers to it: IPv4-mapped, IPv4-compatible (::/96), SIIT
// (::ffff:0:0:0/96), NAT64 (64:ff9b::/96, and 64:ff9b:1::/48 at every
// RFC 6052 prefix length), 6to4 (2002::/16) and Teredo; so
// 64:ff9b::a9fe:a9fe and 2002:a9fe:a9fe::1 are refused as 169.254.169.254
// is, and an embedded loopback even with AllowLoopbackEndpoints. Each is
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
//   - hash onto subsets (upstream-hash-by-subset, with
//     upstream-hash-by-subset-size, default 3): the sorted endpoints are cut
//     into sets of that size, the last one filled up again from the first
//     endpoints, and the key hashes onto a set (the same ring, over the
//     sets) whose endpoints then serve its requests round-robin, by the
//     backend's cursor; a retry takes the set's next untried endpoint, then
//     the next set on the ring.
//   - upstream-hash-by selects hash whatever load-balance says, as in
//     ingress-nginx. load-balance "hash" without a valid upstream-hash-by
//     warns AnnotationRejected and stays round_robin. ingress-nginx's "ewma"
//     is served as least_conn, with AnnotationSubstituted. Any other
//     upstream-hash-by expression warns AnnotationRejected.
//   - ingress-nginx's own balancer names are served as it serves them:
//     with upstream-hash-by (or affinity) the load-balance name does
//     nothing; "chash" alone hashes the constant "nil", every request to
//     one endpoint ("chashsubset": to one subset); "sticky_balanced" and
//     "sticky_persistent" without affinity set and read no cookie (their
//     cookie name is then "", not "route"): round_robin, where
//     ingress-nginx draws at random. Each warns AnnotationSubstituted,
//     cosmetic.
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
// their GCD, capped in length, never rounding a live endpoint to zero).
// A weighted split across backends (balance.Split, the canary weight of
// §10) walks such a rotation with a cursor kept in the registry by the
// split's identity (the primary backend), like a backend's: every replica
// walks the same sequence, there is no random draw, a table swap in the
// middle of a rotation continues it, and over each full rotation every
// backend gets exactly its share. A split (a canary, or a Gateway API
// rule's backendRefs) whose reduced total exceeds the rotation's cap
// (65,536) needs no rotation: each turn is computed, a chain of evenly
// spread two-way choices (each backend against the ones after it), exact
// for any canary-weight-total or set of weights. Weights over one
// backend's endpoints are dealt alike: past the endpoint rotation's cap
// (4,096) each turn is computed by halving the endpoints (each half's
// share evenly spread), so every endpoint gets exactly its share of each
// period in log2(endpoints) steps a pick.
//
// Session affinity: affinity: cookie (the only type) with
// session-cookie-name (default INGRESSCOOKIE), -path, -domain, -max-age,
// -expires (whole seconds under nginx.ingress.kubernetes.io/, a duration
// with a unit such as 1h under ramjet.dev/), -samesite (None, Lax,
// Strict), -secure, -conditional-samesite-none, -change-on-failure, and
// affinity-mode balanced (default) or persistent. The oldest Ingress
// whose rule paths route to a backend with affinity: cookie decides its
// settings whole (a later one asking for others gets AnnotationConflict);
// ingress-nginx takes the affinity type and mode from the first Ingress
// that sets them but writes each later one's cookie settings over the
// earlier ones', so the newest Ingress's cookie name and attributes win
// there (internal/ingress/controller/controller.go, getBackendServers).
// An Ingress's spec.defaultBackend takes no affinity from it, as
// there. The cookie is
// set only on the routes of Ingresses with affinity: cookie, and a route of
// another Ingress on the same backend, or a host's fallback, follows a
// cookie the request carries but sets none. session-cookie-* settings without affinity: cookie warn
// AnnotationRejected and have no effect. The cookie's value is
// "<session>|<backend token>", both 16 hex digits derived by a fixed hash,
// the same on every replica, and never an address: in persistent mode the
// session names the endpoint by a hash of backend and address, and a new
// session is placed by the policy; in balanced mode the session is a key
// that consistent hashing (§9's ring) maps to an endpoint, so that adding
// endpoints moves about 1/n of the sessions onto them, and a new session
// gets a new key from the backend's cursor. The cookie is read as
// lua-resty-cookie reads it for ingress-nginx's sticky balancers, not as
// $cookie_<name>: its name exactly, the last of several (a browser sends
// one set on a shorter path after one set on a longer path), its value to
// the next ';' or tab. A request whose cookie names a
// live endpoint of the backend goes there and gets no new cookie;
// otherwise the endpoint is chosen as above and the answer sets the cookie,
// its attributes in the order ingress-nginx's lua-resty-cookie writes them:
// Expires (nginx's cookie time, "Tue, 01-Dec-26 18:00:00 GMT"), Max-Age,
// Domain, Path (session-cookie-path, else the matched route's path as
// declared, "/" for a pattern with regex syntax), Secure (with session-cookie-secure,
// and on every request that came over TLS), HttpOnly, SameSite. When the
// session's endpoint cannot be connected to, the retry goes to another
// endpoint (ingress-nginx's sticky balancer gives the failed one again);
// only with session-cookie-change-on-failure does the cookie move there.
// session-cookie-hash, gone from ingress-nginx, warns as unsupported.
//
// # 10. Canary and weighted backends
//
// ingress-nginx's canary annotations, with either prefix: canary (a
// boolean; a value that does not parse leaves an ordinary Ingress, as in
// ingress-nginx), canary-by-header, canary-by-header-value,
// canary-by-header-pattern, canary-by-cookie, canary-weight and
// canary-weight-total. A canary rule annotation on an Ingress that is not
// a canary warns AnnotationRejected and has no effect.
//
// A canary Ingress is never compiled as an ordinary one (older than its
// primary it would win the path under §7 and take all of its traffic): it
// creates no hosts, routes, fallbacks, certificates or TLS hosts. Each of
// its paths attaches its backend to the backend of the primary route with
// the same host, path and path type; its spec.defaultBackend attaches to
// the backends of the catch-all's routes and of an Ingress's catch-all
// fallback. Being on the backend, the canary applies wherever that backend
// is used. The oldest canary of a backend wins; a later one warns
// CanaryConflict naming it. A canary path with no such primary (or naming
// the primary's own backend) serves nothing and warns CanaryWithoutPrimary:
// a host only canaries name answers like any unknown host. On a host an
// Ingress serves, such a path (or a default backend with no catch-all
// primary) also withdraws its canary backend, as ingress-nginx deletes the
// canary's upstream: the primaries it joined serve every request
// themselves, a newer canary of theirs still taking nothing, and later
// declarations naming it take nothing. Canaries are still claimed
// (compile.Result.Claimed, status of §16). A canary's auth-tls-* and
// proxy-ssl-* still reach the server of each of its rules' hosts (the
// catch-all's for a host no Ingress serves) when no older Ingress set
// them, as ingress-nginx's getBackendServers applies them (§12).
//
// The rules a canary backend serves with belong to the first Ingress in
// Ingress order that names its Service port, as ingress-nginx keeps them
// on the upstream that Ingress made: a newer canary Ingress naming it
// warns AnnotationConflict that its own rules are not applied, and where
// the first is an ordinary Ingress no rule applies at all (only a session
// pinned to the canary reaches it).
//
// Per request, the first rule that decides wins: a session pinned to the
// canary (below); the header (named case-insensitively, '_' read as '-' as
// nginx's $http_<name> does, so a request's X_Canary line counts where
// nginx keeps it: with enable-underscores-in-headers or
// ignore-invalid-headers "false"; canary-by-header-value sends the request to
// the canary on an exact, case-sensitive match; else
// canary-by-header-pattern on an unanchored, case-sensitive match, in Go's
// regexp syntax; else "always" and "never" decide; any other value passes
// on); the cookie ("always" or "never", cookie name case-insensitive);
// then the weight: canary-weight of canary-weight-total (a total of 100 or
// less reads as 100) by the rotation of §9, so weight 0 never and a weight
// of the total or more always takes the canary, and every full rotation of
// weighted requests gives the canary exactly its share.
//
// A primary with no ready endpoints answers 503 even where the canary
// would be chosen; a canary with no ready endpoints is skipped (its rules
// are not even consulted). A canary whose Service or port does not exist,
// or that is an ExternalName, answers 500 for the requests its rules
// choose (Gateway API's rule for invalid weighted backends; its
// ServiceNotFound warning says so); a header or cookie "never" still
// reaches the primary.
//
// With session affinity on the primary (§9) a canary shares it
// (affinity-canary-behavior sticky, the default): both read one cookie,
// and a request whose cookie names the canary's backend stays on the
// canary while the canary has ready endpoints, whatever the other rules
// say. affinity-canary-behavior: legacy on the canary Ingress leaves the
// canary without affinity.
//
// Of a canary Ingress's other annotations only those of its backend apply
// (load-balance, upstream-hash-by, service-upstream): it has no location
// of its own, so the requests its canary takes are served with the
// primary location's settings (limits, rewrites, authentication,
// timeouts, backend-protocol, session affinity), as in ingress-nginx. Each
// annotation only a location reads warns AnnotationRejected (cosmetic)
// that it has no effect; backend-protocol and session affinity warn so
// where they differ from what the backend has.
//
// Differences from ingress-nginx: the weight is a rotation, not
// math.random; a canary-by-header-pattern only PCRE runs (look-ahead,
// back-references, possessive repeats) is not applied (AnnotationRejected),
// so the header decides by "always" and "never", where ingress-nginx
// matches it. One neither engine compiles (an unclosed group) warns too
// and, as there, sends every request carrying the header to the primary.
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
//     warns AnnotationRejected. Values are read as ingress-nginx reads them:
//     a boolean or number as written (" 10" is refused), and the strings
//     its parser trims (backend-protocol, load-balance, upstream-hash-by,
//     canary-by-header, canary-by-cookie and the session-cookie-* values)
//     with spaces around them dropped.
//
// Annotations under a prefix the embedder registers in
// compile.Options.ExtensionPrefixes ("example.com/") are neither read nor
// warned about: they are carried, as written, onto every route of their
// Ingress and the host fallbacks it supplies (match.Location.Extensions,
// router.Match.Extensions) for the embedder's router.Options.Hook, which
// runs for the matched route or fallback with the table the request is
// served with and may answer the request or pass it on with headers of its
// own.
// They count in the digest. The reserved prefixes cannot be registered.
// An ingress-nginx annotation ramjet does not implement and the embedder
// serves itself is named in compile.Options.ExtensionKeys
// ("enable-modsecurity"): it is carried the same way under its name alone,
// from either prefix (ramjet.dev/ winning), instead of warning; the
// example controller serves ModSecurity so (§19).
//
// The implemented annotations follow by area, one subsection each (§11.1 to
// §11.9), all with either prefix. Those of §11.4 to §11.7 are request
// policies, and apply per location, as in ingress-nginx: every path of an
// Ingress, and the fallback of a host the Ingress created (for the
// catch-all, of the rules-less Ingress whose spec.defaultBackend it
// serves), since ingress-nginx gives the default location of a server the
// annotations of the Ingress that created it (§6).
//
// # 11.1 Routing
//
// Where a request goes and what the backend receives, or the redirect the
// router answers instead:
//
//   - backend-protocol (§8);
//   - ssl-redirect, force-ssl-redirect, preserve-trailing-slash and
//     use-port-in-redirects (§12),
//     booleans in Go's syntax ("true", "false", "1", "0", ...);
//   - use-regex, rewrite-target, upstream-vhost and x-forwarded-prefix, as
//     below. Each is per location: it applies to the routes of the Ingress
//     that sets it, and a route shows it in the table rendering and the
//     digest (match.Route.Rewrite);
//   - the redirect and host annotations (from-to-www-redirect, app-root,
//     permanent-redirect, temporal-redirect, relative-redirects,
//     server-alias) and the backend annotations service-upstream and
//     default-backend, below.
//
// Redirects are answered by the router itself, never proxied (the route's
// backend is still resolved and listed), before the TLS redirect of §12,
// in the order nginx meets them:
//
//   - from-to-www-redirect: a host any of whose routes comes from an
//     Ingress with it gets a redirect-only twin, "www." added (or removed
//     when the host starts with it), that answers every request 308 (the
//     ConfigMap's http-redirect-code, §12) to
//     <scheme>://<host>:<port><request-uri>, the request-uri's last byte
//     dropped when it is "/" (ingress-nginx's ngx_srv_redirect.lua; port
//     and scheme from X-Forwarded-Port and -Proto when those are trusted).
//     The twin is served the host's certificate when it covers the twin.
//     No twin is made when it is a host of its own (AnnotationConflict), or
//     for a wildcard host (AnnotationRejected, §19).
//   - app-root: on the whole host, a request whose normalized path is "/"
//     answers 302 to <scheme>://<Host header as sent><app-root>, the query
//     dropped, before any route (nginx's server-level "if ($uri = /)"); an
//     HTTP/1.0 request without a Host field gets nginx's "http:///app"; a
//     configuration-snippet's rewrite to "/" is not redirected, as nginx
//     searches the location again without the server's rewrite phase.
//     When Ingresses on one host disagree, the one whose location comes
//     first in nginx's order (longest path, then path descending; the host
//     creator's default location counts as "/") wins and the others get
//     AnnotationConflict. ingress-nginx ignores, with a warning, a value
//     outside its character set, not a request URI, or absolute.
//   - permanent-redirect (-code, 300–308, default 301) and
//     temporal-redirect (-code, 300–307, default 302; it wins over
//     permanent-redirect, which gets AnnotationConflict): the Ingress's
//     routes, and for the Ingress that created a host, the requests no route
//     matches (its default location), answer "return <code> <url>": the
//     Location is the value as written, the request's path and query not
//     appended. A value starting with "/" is made absolute with the
//     request's scheme and host (no port) unless relative-redirects is set,
//     on the Ingress or as the ConfigMap key (nginx's absolute_redirect
//     off, which changes nothing else here).
//     301, 302, 303, 307 and 308 carry a Location; nginx answers other codes
//     with the URL as the body. An out-of-range code falls back to the
//     default with AnnotationRejected. ingress-nginx drops every redirect
//     annotation of the Ingress when a value is empty or temporal-redirect
//     is not an http(s) URL; so does ramjet, with AnnotationRejected.
//   - server-alias: comma-separated further names of each host the Ingress
//     has a rule for, reaching the whole host (every Ingress's routes, its
//     fallback and, where it covers the alias, certificate and TLS
//     redirect, as ingress-nginx has no certificate entry for an alias its
//     certificate does not cover).
//     For each host the oldest Ingress with aliases sets them (later ones:
//     AnnotationConflict); an alias that is another host, or a www twin, is
//     not served (AnnotationConflict); of two hosts with one alias the
//     first by name keeps it. Names are matched without regard to case;
//     exact names and "*.<domain>" (one label, AnnotationSubstituted) are
//     served, nginx's regex and other wildcard forms are not (§19).
//   - service-upstream: the backend's only endpoint is the Service's
//     cluster IP and port (the oldest Ingress serving the backend decides,
//     others get AnnotationConflict). The address rules of §8 apply to the
//     cluster IP (EndpointRejected on the Service's spec.clusterIP, then no
//     endpoints); a headless Service keeps its endpoints, as in
//     ingress-nginx, with AnnotationRejected. ingress-nginx reads a value
//     that is not a boolean as false.
//   - default-backend: a Service in the Ingress's namespace whose first
//     port serves the Ingress's routes whose own Service has no endpoints
//     (missing, port missing, none ready), when it has ready endpoints
//     itself; decided per table, since endpoints are in the snapshot. The
//     same holds for a host's fallback that is the Ingress's own
//     spec.defaultBackend, where the Ingress created the host or is the
//     catch-all's fallback Ingress (§6); the global default backend is
//     never replaced. A missing default Service warns ServiceNotFound, and
//     the warnings about a missing Service or port it stands in for say
//     where requests go.
//
// Under nginx.ingress.kubernetes.io/ these values are judged as
// ingress-nginx judges them. Where its annotation validation refuses a
// value (a redirect URL with a character outside letters, digits and
// -._~/:,?&=; a -code or redirect boolean that does not parse; a
// server-alias name with a character nginx does not accept; a
// default-backend that is not a DNS-1035 label), ingress-nginx ignores the
// whole Ingress, so ramjet withholds it: no hosts, routes, fallbacks or
// certificates, AnnotationRejected saying why. The Ingress stays claimed,
// so its warnings still reach it as Events. Under ramjet.dev/ each value is
// rejected on its own; redirect targets must be http or https URLs with a
// host, or paths starting with a single "/"; app-root a path.
//
// ingress-nginx's deep inspection (on by default) ignores an Ingress whose
// host, path, TLS host or TLS Secret name holds an nginx directive
// (alias …;, root …;, *_by_lua*) or a system path (/etc/passwd,
// /var/run/secrets, …); ramjet withholds it likewise, with PathRejected or
// RuleRejected on the field (cosmetic: served by neither).
//
// Regex mode (nginx.ingress.kubernetes.io/ only). use-regex "true", or a
// rewrite-target that differs from a path, on any Ingress puts that path's
// host in ingress-nginx's regex mode: every path of the host, from every
// Ingress, becomes a case-insensitive regular expression anchored at the
// start, tried in controller order of the declared paths (§5). As
// ingress-nginx does, an Exact
// path loses its end anchor ("/p" matches "/p/x" and "/P"), and a Prefix
// path "/p" of an Ingress that did not ask for regex mode becomes two
// patterns, "/p/" and "/p", the latter left out when some Ingress declares
// "/p" Exact on the host (then "/p" goes to the Exact owner, "/p/x" to the
// Prefix owner). A path that then does not compile is dropped with
// PathRejected. Each Ingress that caused the mode warns RegexModeHost on
// its annotation; every other Ingress with paths on the host warns
// RegexModeHost on its rule's host, naming the oldest cause. Other hosts
// of the same Ingresses are unaffected.
//
// rewrite-target. With nginx.ingress.kubernetes.io/, the target replaces
// the whole request-target, as nginx's "rewrite (?i)path target break":
// $1 to $9 are the groups of the path's pattern matched against the
// normalized request path (§13), $12 is group 1 then "2", a group the
// pattern lacks or that did not take part is empty; $scheme and $host are
// the client's scheme and the request host. A path equal to the target is
// left alone, but not the location "p/" ingress-nginx adds for a Prefix
// path "p" (updateServerLocations): that one is rewritten, and puts the
// host in regex mode. The value must pass ingress-nginx's own validator
// (letters, digits, "-._~/:" and "$"); anything else is AnnotationRejected
// and, as there, ignored. With ramjet.dev/, captures are written ${1} (${0} the
// whole match) and only the Ingress's own paths are affected, with no regex
// mode: an Exact or regex match gets the target outright, a Prefix match
// has the matched leading segments replaced and keeps the rest ("/api" →
// "/v2": "/api/users" goes as "/v2/users"); a "?" in the target starts a
// query. In both syntaxes the client's query follows the new path (after
// the target's own query with "&"), unless the target ends in "?", which
// drops it. Captured text is percent-encoded where a path or query could
// not carry it as is. A target that is an absolute http or https URL (or
// starts with $scheme) answers 302 with that Location and the query, as
// nginx's rewrite does, before any HTTPS redirect; its host may not come
// from a capture. A request no rewrite touches keeps its target byte for
// byte (§13).
//
// upstream-vhost is the Host header the backend receives (a host name or
// address with an optional port); X-Forwarded-Host still carries the
// client's. With nginx.ingress.kubernetes.io/ it may use the variables
// ingress-nginx sets in every location: $namespace, $service_name and
// $service_port (the Service and port as the path declares them, the
// port's number or else its name; for the host's default location,
// spec.defaultBackend's), expanded route by route when the table is built,
// and $host, the request's host in lower case without its port, and
// $http_host, the Host field as sent (its case and port kept), expanded
// per request; one that expands to nothing ($http_host without a Host
// field) keeps the client's Host, where nginx would send no Host field.
// A value that is no Host header once expanded (a port name
// after ':') is AnnotationRejected for that path; any other variable is
// AnnotationRejected. x-forwarded-prefix sets X-Forwarded-Prefix, replacing the
// client's, and may use the same captures as rewrite-target; with
// nginx.ingress.kubernetes.io/ it takes effect only on paths rewrite-target
// rewrites, as ingress-nginx's template sets it only together with the
// rewrite (otherwise AnnotationRejected, and the client's header passes
// through), and an empty value sets nothing. With ramjet.dev/ it applies to
// every path of the Ingress. use-regex with ramjet.dev/ makes the
// Ingress's own Exact and Prefix paths case-insensitive patterns, nothing
// more.
//
// When default-backend's Service stands in for a path's own (without
// endpoints), the request carries what ingress-nginx sends a custom default
// backend: X-Code: 503, X-Format (the client's Accept), X-Namespace,
// X-Ingress-Name, X-Service-Name and X-Service-Port (the Service and port
// the path declares), replacing the client's, an empty one left out; the
// table shows "default-backend for <service>:<port>" under the route. Its
// use with custom-http-errors is §11.8.
//
// # 11.2 Canary
//
// canary, canary-by-header, canary-by-header-value,
// canary-by-header-pattern, canary-by-cookie, canary-weight and
// canary-weight-total; §10 says what they do. canary is a boolean in Go's
// syntax; canary-weight and canary-weight-total are whole numbers (decimal,
// optionally signed, within 32 bits, no spaces: ingress-nginx refuses " 10"
// and weighs 0 of 100); canary-by-header and canary-by-cookie
// name a header or cookie (an HTTP token); canary-by-header-value is any
// value without a line break or NUL (under ingress-nginx's prefix, letters,
// digits and /-._~: as its validator takes them, trimmed: another value is
// not applied, so the header decides by "always" and "never", as there);
// canary-by-header-pattern is a
// non-empty regular expression in Go's syntax. A value that does not parse
// warns AnnotationRejected and is not applied, except that
// canary-by-header-pattern follows ingress-nginx: a value with a byte its
// validator refuses (other than letters, digits and /-._~:^$[](){}*+?|&=\)
// is not applied, so the header decides by "always" and "never"; one
// that compiles in neither Go's syntax nor PCRE's (an unclosed group or
// class, a repeat of nothing, "a**") sends every request carrying the
// header to the primary, the cookie and weight unasked, as ingress-nginx's
// balancer answers its match error.
//
// # 11.3 Balancing and affinity
//
// load-balance (round_robin, ewma, or ingress-nginx's chash, chashsubset,
// sticky_balanced, sticky_persistent; least_conn and hash under ramjet.dev/
// only, as ingress-nginx's validator refuses them), upstream-hash-by
// ($remote_addr, $request_uri, $http_<name> or $cookie_<name>),
// upstream-hash-by-subset (a boolean; without a valid upstream-hash-by it
// warns and has no effect) and upstream-hash-by-subset-size (a whole
// number, 0 for the default 3; a negative one warns and keeps 3; without
// subsets it warns and has no effect), affinity (cookie) and
// affinity-mode (balanced or persistent), both in lower case as
// ingress-nginx's validator wants them ("Cookie" is no affinity),
// affinity-canary-behavior (sticky or legacy, in lower case under
// nginx.ingress.kubernetes.io/, where "Legacy" is refused and the canary
// stays sticky; read off a canary Ingress only, as ingress-nginx reads it,
// and on any other it warns AnnotationRejected) and the session-cookie-*
// settings; §9 says what they do and which Ingress decides for a backend.
// session-cookie-name is an HTTP token; session-cookie-path starts with
// "/", and it and session-cookie-domain are printable ASCII without spaces
// or ';'; session-cookie-max-age and -expires are whole seconds under
// nginx.ingress.kubernetes.io/ ("3600"; a negative number, as there, makes
// the cookie expire at once) and a duration with a unit, in
// whole seconds, under ramjet.dev/ ("1h"); session-cookie-samesite is None,
// Lax or Strict, written so under nginx.ingress.kubernetes.io/ (ingress-
// nginx's cookie library drops "lax", leaving the cookie without SameSite)
// and in any case under ramjet.dev/; session-cookie-secure,
// -conditional-samesite-none and -change-on-failure are booleans. A value
// that does not parse warns AnnotationRejected and is not applied.
//
// # 11.4 Body and timeouts
//
// The table rendering shows the request policies of this section and §11.5
// after each route and fallback line ("policy body=8m read=20s
// allow=10.0.0.0/8 limit=prod/shop(rps=5/25)") and the digest encodes them.
// A value that does not parse warns AnnotationRejected on its own
// annotation and leaves the location protected or closed, never open:
//
//   - proxy-body-size: nginx's size (digits with k, m or g; "0" for no
//     limit) replaces the router's body limit (§13) for the location,
//     lower or higher: 413, before anything reaches the backend, for a
//     declared length over it, and for a streamed body as it grows past
//     it. The declared length is checked as soon as the location is found,
//     as nginx checks client_max_body_size: before the location's CORS
//     preflight and headers, its TLS redirect and rewrite, its denial
//     (§11.5), rate limits, source ranges and authentication, so such a
//     request spends no rate and asks no auth service. A size that does
//     not parse ("15r", "8b") keeps the router's.
//   - client-body-buffer-size: nginx's size (bytes, k or m: ingress-nginx
//     writes no client_body_buffer_size for "1g"), more than 0; how much of a
//     request body the location holds in memory before the rest goes to a
//     temporary file (§13). proxy-request-buffering: "on" (the default) or
//     "off", which passes the body to the backend as it arrives instead of
//     reading it whole first; on the router's own HTTP/1 server a body of
//     known length that came whole with the head is held as buffered, as
//     nginx holds a body it pre-read, and a failed try sends it again.
//     Other values ("Off", "16x", "0") warn and
//     keep the router's buffering. Rendered body-buffer=16k and
//     request-buffering=off.
//   - proxy-connect-timeout, proxy-send-timeout, proxy-read-timeout: whole
//     seconds under nginx.ingress.kubernetes.io/ (as ingress-nginx, which
//     refuses "50k" or "5s"), nginx time with its unit under ramjet.dev/
//     ("90s", "1m30s", "500ms"). They bound dialling and the TLS
//     handshake, each write of the request to the backend (a backend that
//     stops taking the body answers 504), and the wait for the response
//     headers (504), on the router's own HTTP/1.1 pool and on the net/http
//     transports, which keep one set of connections per distinct set of
//     timeouts; proxy-read-timeout also closes an Upgrade tunnel (a
//     WebSocket) through which nothing passed either way for that long.
//     A value that does not parse keeps the router's.
//   - proxy-next-upstream-tries: the endpoints a request whose connection
//     failed is sent to, the first included (default 3; "0" every endpoint
//     once, nginx's unlimited).
//   - proxy-buffering: "on" reads the response whole before the client
//     gets it, proxy-buffers-number × proxy-buffer-size bytes (4 × 4k) in
//     memory and the rest in a temporary file (router.Options.BodyTempDir)
//     of at most proxy-max-temp-file-size (1024m; "0": none), so a slow
//     client holds no backend connection; past both the rest streams, as
//     nginx stops buffering. A response with X-Accel-Buffering: no
//     streams, as nginx lets it. proxy-buffer-size also bounds the response
//     head: 502 beyond it, as nginx answers "upstream sent too big
//     header". proxy-busy-buffers-size is checked and shown but changes
//     nothing a client sees. Values are nginx sizes in bytes, k or m
//     ("b" and "g" pass ingress-nginx's check but not nginx's, and warn);
//     at least 2 buffers; sizes nginx would refuse together (busy buffers
//     under one buffer or over all but one, a temporary file under one
//     buffer) warn on each and leave nginx's defaults. "off" (the default)
//     streams as before and is not shown. Rendered on a line of their own
//     under the route ("proxying buffering=on buffers=8 buffer-size=8k").
//   - proxy-http-version: "1.0" sends the request as HTTP/1.0 with
//     Connection: close, a body read whole and sent with its length, and
//     never reuses the connection; "1.1" is the default. Rendered
//     http=1.0.
//   - proxy-next-upstream: the conditions of nginx's proxy_next_upstream
//     (error, timeout, invalid_header, http_500, http_502, http_503,
//     http_504, http_403, http_404, http_429, non_idempotent, off), each
//     followed by one blank at most, as ingress-nginx checks them. Set, it
//     replaces §13's rule: a try that fails so moves the request to
//     another endpoint within proxy-next-upstream-tries, a POST, LOCK or
//     PATCH that reached a backend only with non_idempotent (one whose
//     connection could not be opened goes on, as in nginx, and so does a
//     gRPC call whose connection was lost before its HEADERS and any of
//     its body were written), no request
//     whose body streamed to a backend under proxy-request-buffering
//     "off" (one without a body, or with one that came whole with the
//     head, goes on, as nginx streams neither), never
//     with off; when no endpoint is left the last answer stands.
//     proxy-next-upstream-timeout (whole
//     seconds, 0 for none; a unit under ramjet.dev/) starts no try past it.
//     Rendered next-upstream=error,http_503 next-upstream-timeout=10s.
//   - These six are served on the router's own HTTP/1.1 pool (HTTP
//     backends, unless router.Options.Transport is set); through net/http's
//     transports only proxy-next-upstream and its timeout apply (§19).
//   - connection-proxy-header: "close" or "keep-alive" (spaces removed,
//     as ingress-nginx validates it) is the Connection header sent to an
//     HTTP or HTTPS backend in place of nginx.tmpl's $connection_upgrade
//     ("Upgrade" for an upgrade, none otherwise), an upgrade's included
//     on the router's own pool (the backend may then refuse it, as under
//     ingress-nginx); through net/http's transports an upgrade keeps
//     "Upgrade". Rendered connection=close.
//   - proxy-redirect-from and -to, proxy-cookie-domain and
//     proxy-cookie-path: nginx's proxy_redirect, proxy_cookie_domain and
//     proxy_cookie_path as nginx.tmpl writes them, on the backend's answer
//     whatever the backend's protocol or the client's, a 101 included
//     (never on the router's own answers or error pages). "off" is the default; a
//     proxy-redirect-from of "default" rewrites only proxy_pass's
//     http://upstream_balancer/, which no backend sends, and a
//     proxy-redirect-to of "off" writes no proxy_redirect: both leave
//     responses as they are. Otherwise proxy_redirect replaces the
//     Location's (and Refresh's text after url=) prefix, compared
//     case-sensitively, and a rewritten Location beginning with "/" gets
//     the request's scheme and host (no port) put first, as nginx's
//     absolute_redirect, unless relative-redirects (the annotation or
//     the ConfigMap key) is "true";
//     proxy_cookie_domain matches the whole Domain, a leading dot apart,
//     in any case; proxy_cookie_path a prefix of Path; a Set-Cookie with
//     one rewritten is written again with "; " between attributes. A
//     value beginning with "~" ("~*": without case) is a regular
//     expression matched anywhere, the whole value then replaced, $1 to
//     $9 its groups; nginx variables are not read (ingress-nginx's
//     validator refuses "$" in the annotations). A value ingress-nginx's
//     validator refuses, or one nginx would not load (one word, three),
//     warns and the ConfigMap's value applies. Rendered "rewrites
//     redirect="http://in/"->"/app/" cookie-path="/"->"/app/"".
//
// # 11.5 Access
//
// Who may reach a location, and how often; a value that does not parse
// leaves it protected or closed, as in §11.4:
//
//   - allowlist-source-range (also spelled whitelist-source-range, read
//     only when the former is unset or empty; an empty
//     whitelist-source-range is absent, as in ingress-nginx, so the
//     ConfigMap's default applies) and denylist-source-range: CIDR
//     ranges and bare addresses, IPv4 and IPv6, comma-separated. A client
//     in the denylist, or outside the allowlist, gets 403. The client
//     address is router.Router.ClientAddr: the peer, or, with
//     router.Options.TrustForwardedFor, the X-Forwarded-For client when the
//     peer is inside router.Options.ProxyRealIPCIDR, never a header from
//     anyone else (§13). A list with any entry that does not parse
//     (an empty one included) denies the location, as ingress-nginx's
//     "Location denied" does: 503 to every request, before the location's
//     CORS preflight and headers, TLS redirect, rate limits and
//     authentication, with no body limit of its own (the router's, nginx's
//     default 1m, still answers 413 first).
//   - limit-rps, limit-rpm, limit-connections, limit-burst-multiplier
//     (default 5) and limit-whitelist (also spelled limit-allowlist): per
//     client address and per Ingress, as ingress-nginx's zones are one per
//     Ingress shared by its paths, per replica. The rates are nginx's
//     limit_req with burst = limit × multiplier and nodelay: 1 + burst
//     requests pass at once, then one per 1/rate, and the rest answer 503;
//     limit-connections bounds a client's requests in flight, 503 over it.
//     Clients in limit-whitelist are never limited. As in nginx, limits
//     run before the source ranges (a refused client still spends its
//     rate), and a request refused by one rate is counted by none. A
//     limit that does not parse closes the location (503 for everyone);
//     a negative limit, or an empty nginx.ingress.kubernetes.io/ one, is
//     no limit, as in ingress-nginx; a bad multiplier keeps 5 and a bad
//     limit-whitelist exempts nobody (an empty one is absent).
//
// A location whose backend has no ready endpoints (or no Service, port or
// proxiable address) answers its 503 before its rate limits, source
// ranges and authentication (§11.7), and router.Options.Hook runs before
// that 503 and router.Options.BodyHook after it: ingress-nginx's balancer
// answers it at the end of the location's rewrite phase, where
// ModSecurity has already run its request-head phase, ModSecurity reads
// the body first in the preaccess phase, and nginx's limits and access
// checks come after. So a client is not asked
// for credentials, the auth service is not asked, and no rate is spent,
// for a backend that could not take the request.
//
// The rate-limit counters are not in the table: they live in the
// router.Router, keyed by the zone's name and the client address, so every
// rebuild that keeps their Ingress keeps them. Their memory is bounded, like
// nginx's fixed-size zones: a table per zone (per Ingress, as
// ingress-nginx gives each Ingress its own zones, so one Ingress's clients
// cannot evict another's or take their room), the zones sharing
// router.Options.RateLimitEntries entries, each at least 4,096, allocated when a limited request first arrives; the router package
// documentation has its sizes and layout. A new client takes a free entry
// or the least recently used idle one of those its address may take, so a
// flood from any number of addresses evicts idle counters (an evicted
// counter starts again from empty, as when nginx drops old states from a
// full zone) and the table never grows; an entry with requests in flight is
// never evicted, and a request that finds no entry to take answers 503, as
// nginx does when its zone has no room.
//
// # 11.6 CORS
//
// enable-cors, cors-allow-origin, cors-allow-methods, cors-allow-headers,
// cors-expose-headers, cors-allow-credentials, cors-max-age, with
// ingress-nginx's defaults (origin "*", methods "GET, PUT, POST, DELETE,
// PATCH, OPTIONS", its header list, credentials true, max-age 1728000).
// With origin "*" every request of the location gets the Access-Control-*
// headers and Access-Control-Allow-Origin "*"; with a list
// (scheme://host[:port], null, or scheme://*.host[:port], the "*" standing
// for exactly one label of letters, digits and '-'), only a request whose
// Origin matches one, without regard to ASCII case only (as ingress-nginx's
// PCRE without UTF mode: "localhoſt", with U+017F, is not "localhost"),
// gets them, its Origin echoed. The headers go on every answer of the
// location, the router's own 401, 503 and 308 included, and replace any the
// backend sent; an OPTIONS request that qualifies is the preflight and is
// answered 204 by the router before the TLS redirect and authentication, as
// ingress-nginx answers it (without a Content-Type, which nginx clears on a
// 204 whatever its template sets). A request that does not qualify is served as if
// CORS were off. The cors-* annotations do nothing without enable-cors.
//
// Each value is read as ingress-nginx reads it, and one that does not
// validate warns (AnnotationRejected) and falls back to its key's default,
// CORS staying on: methods, headers, credentials on, no expose headers,
// max-age 1728000 (any whole number is accepted, as written). A blank
// value is the default. In cors-allow-origin an entry that is no origin
// ("example.com") is skipped and the others apply; if none is left no
// origin qualifies; a value that fails ingress-nginx's check of the whole
// list (a path, '_', an upper-case scheme, "*" among origins) allows any
// origin, as there, and its warning says so. An enable-cors that is no
// boolean leaves CORS off.
// The table's text shows the policy under its route and fallback lines; the
// digest covers it.
//
// # 11.7 Auth
//
// Basic authentication, per location: auth-type basic, auth-secret (name,
// or namespace/name in the Ingress's own namespace), auth-secret-type
// auth-file (an htpasswd file under key auth, the default) or auth-map
// (each key a user, its value the hash), auth-realm. The Secret is read
// when the table is compiled. A request without matching credentials
// answers 401 with WWW-Authenticate: Basic realm="<realm>"; the backend
// never sees the Authorization header. Hashes: bcrypt ($2a$, $2b$, $2y$),
// apr1 and $1$ MD5-crypt, SHA-crypt ($5$, $6$), {SHA}, {SSHA} and {PLAIN},
// the schemes nginx accepts on ingress-nginx's image except DES crypt,
// whose users cannot log in (SecretInvalid). The htpasswd file is
// read as nginx reads it: "user:hash", the hash ending at the next ':', '#'
// lines and blank lines skipped, the first line of a user winning; an entry
// that cannot be used only locks that user out (SecretInvalid names it,
// never its hash). The outcomes of bcrypt and MD5-crypt checks, right and
// wrong, are cached by the router, keyed by the SHA-256 of the stored hash
// and the password, in a cache of fixed size (its sizes are in the router
// package documentation) where a failure never evicts a success: a rotated
// password invalidates its entries, a repeated wrong password costs one
// check, and memory never grows. Checks not in the cache are bounded (§13).
//
// Digest authentication, per location: auth-type digest with the same
// auth-secret and auth-secret-type, the Secret's key auth an htdigest file
// (user:realm:HA1, HA1 the lower-case hex MD5 of user:realm:password; with
// auth-map each key a user and its value realm:HA1), and auth-realm, which
// digest needs. As nginx's auth_digest module that ingress-nginx builds
// (atomx/nginx-http-auth-digest v1.0.0), with its defaults: a request
// without matching credentials answers 401 with WWW-Authenticate: Digest
// algorithm="MD5", qop="auth", realm="<realm>", nonce="<nonce>";
// credentials pass when the user and the realm they name have an entry,
// their uri is the request's target (or the target without its query),
// their response is the MD5 of HA1, nonce, nc, cnonce, qop and the MD5 of
// method and uri, their nonce count is below 20 and not used before with
// that nonce (any order; the exact header sent again gets a new
// challenge), and their nonce is fresh; the answer then carries
// Authentication-Info (qop, rspauth, cnonce, nc) and the backend never
// sees Authorization. A nonce is fresh for 60 seconds from its challenge
// until its first use (auth_digest_timeout), then for 10 seconds from
// that use (auth_digest_expires), in whole seconds; right credentials
// with a nonce count of 20 or more or a nonce no longer fresh get the
// challenge with stale="true", which browsers answer without asking
// again. Each refused login of credentials that parse (a replay or a
// stale nonce included) counts against the client address
// (router.Router.ClientAddr, without the port), at every digest location
// of the Router, as the module counts in one zone; after 5 within 300
// seconds of each other (auth_digest_maxtries), the address gets 401
// without a challenge (auth-lockout) for 300 seconds after the last
// (auth_digest_evasion_time), whatever it sends; a login clears the
// count. A nonce is the time it was issued, a sequence number and an
// HMAC of both and the realm under a key each router.Router draws at
// random: it cannot be forged, works only at the Router that issued it,
// and a challenge keeps nothing. What is kept is bounded, in two tables of
// fixed size per Router (their sizes are in the router package
// documentation): the nonce counts used of each nonce from its first use,
// 70 seconds at most, where a full table drops the oldest nonce and then
// answers stale to every nonce issued before it that it does not hold, so
// no count is ever accepted twice; and the failing addresses, where a full table
// tracks no new address until an entry's 300 seconds end, and never
// drops one locked out. Each check is a few hashes, no slot needed. An
// entry whose HA1 is not 32 lower-case hex digits cannot log in
// (SecretInvalid).
//
// External authentication, per location: auth-url (http or https, which may
// use $host, $http_host, $best_http_host, $scheme, $pass_access_scheme,
// $request_uri, $escaped_request_uri, $remote_addr), auth-method,
// auth-signin, auth-signin-redirect-param, auth-response-headers,
// auth-request-redirect, auth-always-set-cookie. Before proxying, the
// router sends a subrequest as ingress-nginx's auth_request does: GET (or
// auth-method), no body, the client's headers except hop-by-hop ones, its
// X-Forwarded-*, X-Real-IP and the names the backend does not get either
// (with '_', unless enable-underscores-in-headers), plus X-Original-URL,
// X-Original-Method, X-Sent-From: nginx-ingress-controller, X-Real-IP and
// X-Forwarded-For (the client's address), X-Auth-Request-Redirect
// (auth-request-redirect, else the request URI), X-Request-ID (the one the
// backend and, with Options.ReturnRequestID, the client get; none with
// generate-request-id off and none sent), and with auth-method
// X-Original-URI and X-Scheme. A 2xx
// passes: each auth-response-headers header is set on the proxied request
// from the service's answer, or removed when the service did not send it,
// and the service's Set-Cookie goes to the client with a successful answer
// (any answer with auth-always-set-cookie). A 401 is passed on with the
// service's WWW-Authenticate, or with auth-signin becomes a 302 to the
// sign-in URL (one starting with "/" made absolute with the scheme and host
// name, as nginx's absolute_redirect makes it, unless the ConfigMap's
// relative-redirects turns that off; the annotation does not reach the
// sign-in location), whose rd parameter
// (auth-signin-redirect-param) is added as
// $pass_access_scheme://$http_host$escaped_request_uri unless the URL sets
// it; a 403 is passed on; anything else, a failure, or a timeout is 500:
// ingress-nginx's auth location has nginx's default timeouts, 60 s to
// connect and 60 s for the answer, whatever the location's proxy-*-timeout
// say (router.Options.AuthTimeout may bound the whole subrequest too). The
// subrequest goes through router.Options.Transport when set. With both
// kinds, basic is checked first.
//
// Authentication fails closed, and each rejected value warns. A location
// whose authentication ingress-nginx denies (a missing Secret or key auth,
// a Secret in another namespace without allow-cross-namespace-resources, auth-type neither basic nor digest, an
// unknown auth-secret-type, auth-type without auth-secret, an auth-url that
// is no http(s) URL or uses another variable, an invalid auth-method or
// auth-response-headers) answers 503 to every request, as there; so does
// auth-type digest without a usable auth-realm, and an invalid
// auth-request-redirect, which there silently drops the whole external
// authentication (one with an inner space passes its check there and then
// makes nginx refuse the configuration). An invalid auth-realm is sent empty and the location
// stays protected; an invalid auth-signin passes the 401 on. auth-secret
// without auth-type protects nothing, as there, and warns
// AnnotationRejected; so does an empty auth-url, which ingress-nginx
// ignores too: the paths get no external authentication of their own (the
// global one, if any). The table's text shows the authentication under its
// route and fallback lines (the Secret's name and how many users it holds,
// never a hash); the digest covers it, the passwords included, so a rotated
// Secret publishes a new table.
//
// Such a 503 is a denied location's, as in §11.5: it comes before the
// location's CORS preflight and headers, redirects, rate limits and
// source ranges. A path declared under /.well-known/acme-challenge (its
// declared path starts with it: ingress-nginx's no-auth-locations
// default) is served without the Ingress's authentication, basic and
// external, unless denied, so an HTTP-01 challenge added to a protected
// Ingress can be answered; a request under that path matched by another
// path is authenticated as that path is.
//
// External authentication's options, each needing auth-url (without it
// each warns and does nothing): auth-cache-key (letters, digits, -, _ and
// the variables $remote_addr, $remote_user, $host, $request_uri, $uri,
// $args, $scheme, $request_method, $http_<name>, $cookie_<name>,
// $arg_<name>, read as in ingress-nginx's auth location: $uri is that
// location's "/_external-auth-..." and $args and $arg_<name> are empty)
// keeps the service's answers per server (a wildcard host's hosts share
// them), auth location and expanded key, for auth-cache-duration
// (comma-separated "[code ...] time" as nginx's proxy_cache_valid,
// default "200 202 401 5m"), so a
// request whose key was answered is not asked for again; an answer
// setting a cookie is not kept, and one that says how long it may be kept
// says it as nginx's proxy_cache reads it: X-Accel-Expires (0: not kept),
// else Cache-Control (no-store, no-cache or private: not kept; s-maxage,
// else max-age), else Expires (a past or bad date: not kept), else the
// duration applies. A bad key warns and nothing is cached; a bad
// duration denies the location (503), as ingress-nginx denies it.
// auth-keepalive, -requests, -timeout and -share-vars are read and shown
// with ingress-nginx's rules (a negative count, a variable in the URL's
// host, or requests or timeout of 0 turn keep-alive off), and change
// nothing a client sees (§19). auth-proxy-set-headers names a ConfigMap
// ("namespace/name", in the Ingress's namespace) whose data are headers
// sent to the service over the client's, with the variables above; a
// missing ConfigMap, a bare name (ingress-nginx finds no ConfigMap by
// it), one in another namespace without allow-cross-namespace-resources,
// a key that is not a header name or a
// value with a line break or another variable denies the location
// (503). Shown as "auth options cache-key=... cache=...".
//
// Global authentication: compile.Options.GlobalAuth carries the
// global-auth-url, -method, -signin, -signin-redirect-param,
// -response-headers, -request-redirect, -cache-key, -cache-duration and
// -always-set-cookie ConfigMap keys (global-auth-snippet is not read).
// Every location without an auth-url of its own is then authenticated by
// that service, unless its Ingress sets enable-global-auth: "false" (a
// value that is not a boolean warns and keeps it on); the ACME path stays
// open as above. Unlike auth-cache-duration, global-auth-cache-duration
// has no default, as in ingress-nginx: without it only answers that say
// how long they may be kept (X-Accel-Expires, Cache-Control, Expires) are
// cached; an empty value is "200 202 401 5m", and so, with a warning, is
// one that does not parse. Shown as "auth options global". A ConfigMap key whose
// value does not parse (a global-auth-request-redirect with an inner
// space among them) is rejected alone, with ConfigMapKeyRejected, and the
// others still apply; global-auth-response-headers drops only the names
// that are not header names, naming them in the warning.
//
// Not yet: of the authentication group, auth-snippet (nginx configuration
// ramjet cannot run); it warns as above and has no effect (cosmetic
// without auth-url, as ingress-nginx writes it into the auth-url's
// location only). The auth-tls-*
// client certificate set is §12's.
//
// # 11.8 Response
//
// What a location does around its backend's answer, per location like
// §11.4 to §11.7 (match.Location.Response, a route's and the fallback's),
// each in the table rendering and the digest:
//
//   - custom-http-errors: a comma-separated list of statuses from 400 to
//     599 (spaces ignored, repeats dropped; any other value is
//     AnnotationRejected and the global list applies). compile.Options
//     CustomHTTPErrors, the ConfigMap key of that name (300 to 599; an entry
//     that is not one is left out with ConfigMapKeyRejected and the others
//     kept, as ingress-nginx keeps them), is the list of every location
//     without its own. A listed status from the
//     backend, or from the router's own answers to a failed exchange (502,
//     504), is replaced as nginx's proxy_intercept_errors
//     with error_page code = @custom_... replaces it: the backend's head
//     and body are dropped and the client gets the error backend's answer,
//     status included ("NGINX does not change the response from the custom
//     default backend"), with the location's CORS, HSTS and request-ID
//     headers set again. The error backend is the Ingress's default-backend
//     Service (its first port), else the global default backend (listed in
//     the table for it); it receives the client's method and headers, the
//     URI "/" with the client's query, the client's Host, and X-Code,
//     X-Format (the client's Accept), X-Original-URI, X-Namespace,
//     X-Ingress-Name, X-Service-Name, X-Service-Port, X-Request-ID and
//     X-Forwarded-For, a header whose value would be empty left out, as
//     nginx's proxy_set_header does. A default-backend Service without
//     endpoints hands the error pages to the global default backend, as
//     ingress-nginx makes its upstream only when it has endpoints. Without
//     a default backend with endpoints the answer is the 404 of
//     ingress-nginx's built-in one; one that does not answer within the
//     connect and read timeouts answers 504, one that fails otherwise 502
//     (router.ReasonErrorPage). gRPC
//     backends are never intercepted (grpc_pass has its own switch).
//     disable-proxy-intercept-errors: "true" turns interception of the
//     location's own list off, unless the global list is intercepted,
//     as nginx inherits the http level's proxy_intercept_errors into a
//     location that sets none. The ConfigMap key of that name turns off
//     the global list's interception only (nginx's http level); it is not
//     the annotation's default, which is "false". A list not intercepted
//     still replaces the router's own answers to a failed exchange (502,
//     504), as nginx's error_page does without proxy_intercept_errors.
//   - limit-rate and limit-rate-after: whole kilobytes (strconv.Atoi, times
//     1024, as ingress-nginx writes "<n>k"; zero or less is none, anything
//     else AnnotationRejected). Per request, as nginx's limit_rate: by t
//     seconds after the request came, at most limit-rate-after +
//     limit-rate × (t + 1 s) body bytes have been sent.
//   - mirror-target (an http or https URL; the path may use $request_uri,
//     the request-target as received even after a snippet's rewrite, $uri,
//     $args, $query_string, $is_args, $host and $scheme),
//     mirror-request-body ("on", the default, or "off") and mirror-host
//     (the copy's Host; by default the target's host name): a copy of each
//     request is sent, with the client's method, headers and body, on a
//     goroutine of its own; its answer is read and ignored, and the real
//     request neither waits for it nor fails with it. A target without
//     variables follows proxy_pass: with no path the copy's path is the
//     subrequest's, "/_mirror-<Ingress UID>", else that path; the client's
//     query follows either. $uri is the subrequest's path too, as in
//     nginx, where $request_uri and $args are the request's. At most
//     router.MirrorInFlight copies are in flight per Router; one more is
//     dropped and counted (router.Stats.MirrorsDropped). As nginx's
//     mirror_request_body, a location that mirrors the body reads it whole
//     first (into its temporary file past client-body-buffer-size), even
//     with proxy-request-buffering "off"; a gRPC call's body (backend-protocol
//     GRPC or GRPCS) is not held back: the copy, a POST to the target
//     with the call's headers, gathers the body as it streams to the
//     backend and goes with its Content-Length once the body is over, as
//     nginx's subrequest sends a body it read whole (a call whose body
//     passes 8 MiB, or ends before its body, is dropped and counted).
//     A target ramjet cannot serve (a
//     variable in its host, another variable, no scheme) is
//     AnnotationRejected and nothing is mirrored.
//   - enable-access-log: "false" marks the location's records
//     (router.Record.NoAccessLog), which the example controller's access
//     log skips; metrics still count them. enable-rewrite-log: "true" logs
//     each rewrite-target rewrite on the router's log at debug level. A
//     value that is no boolean keeps the default, AnnotationRejected.
//   - custom-headers names a ConfigMap ("namespace/name", of any
//     namespace the snapshot holds, as ingress-nginx's store key) whose
//     data are response headers set on every answer of the Ingress's
//     locations, after its configuration-snippet's, each value as written
//     ("$" is no variable). Each name must be listed in the ConfigMap key
//     global-allowed-response-headers (comma-separated, empty by
//     default); a header it does not list, a missing ConfigMap, a bare
//     name (ingress-nginx finds no ConfigMap by it), or a name or value
//     ingress-nginx's patterns refuse denies the location (503,
//     router.ReasonHeadersDenied), AnnotationRejected, as ingress-nginx
//     denies it.
//
// Mirroring costs the request its goroutine and a copy of the request's
// method, host and headers (the copy outlives the handler, and a server
// may reuse the request); a location without any of these costs a
// request nothing (BenchmarkHandler, BenchmarkMirror).
//
// # 11.9 Snippets
//
// configuration-snippet (per location) and server-snippet (per host) are
// read as nginx configuration by package compile/nginxconf (nginx's own
// tokenizing: quotes, escapes, comments, blocks, "${var}", and the Lua
// text of *_by_lua_block read apart), and each directive with a
// structured equivalent becomes a step of a match.Snippet, on the route
// and on the fallback (match.Location.Snippet; a server-snippet's location
// blocks in VirtualHost.SnippetLocations).
// The table's text shows each step under its route ("snippet …"); the
// digest covers them. Translated:
//
//   - response headers: more_set_headers (replaces; "Name:" clears) and
//     more_clear_headers (a trailing "*" clears a family), both with -s
//     statuses and -t content types; add_header (appends, on 200, 201,
//     204, 206, 301, 302, 303, 304, 307 and 308 unless always); expires
//     (a time, epoch, max, off); proxy_hide_header. They go on the
//     backend's answer and on the router's own answers for the location.
//     They are inherited as nginx inherits them: headers-more's add the
//     server's to the location's and an if's to its location's, while a
//     block with add_header (or proxy_hide_header) of its own drops its
//     parent's.
//   - request headers to the backend: proxy_set_header (an empty value
//     drops the header; Host sets the backend's Host),
//     more_set_input_headers (-r: only replace, -t) and
//     more_clear_input_headers. A value that holds a control byte once
//     expanded (CR, LF, NUL: $uri and the captures are the decoded path,
//     so %0d%0a puts CRLF in them) is not sent, nor the client's header of
//     that name, and a Host so keeps the client's: counted in
//     router.Stats.HeadersDropped. nginx sends it as it is, adding header
//     lines, or a whole second request, to the head the backend reads.
//   - answers: return code [text|URL] and return URL (a relative redirect
//     made absolute, as nginx's absolute_redirect, unless relative-redirects
//     keeps it: the annotation in its location's steps, the ConfigMap key
//     in all); rewrite regex
//     replacement [last|break|redirect|permanent] on the normalized path,
//     with $1..$9, a replacement starting http://, https:// or $scheme
//     redirecting, and the client's query kept unless the replacement ends
//     in "?"; if ($var), ($var = s), != , ~, ~*, !~, !~* guarding return,
//     rewrite and the header directives; allow and deny (all, addresses,
//     CIDRs; the first that covers the client decides, 403).
//   - the proxy directives that are annotations (proxy_read_timeout,
//     proxy_connect_timeout, proxy_send_timeout, client_max_body_size,
//     client_body_buffer_size, proxy_request_buffering,
//     proxy_next_upstream_tries, and the buffering ones where implemented)
//     set the same settings, unless the Ingress sets the annotation, which
//     applies (SnippetNoEffect); a value the annotation refuses (a time of
//     0, one past a time.Duration) warns SnippetIgnored, and
//     compile.ReadSnippet, which the migration report lists, calls it
//     untranslated too; at server level they change nothing, as
//     ingress-nginx sets them again in every location (SnippetNoEffect).
//   - location blocks of a server-snippet with =, ^~, ~, ~* or a prefix,
//     holding the directives above: chosen over the route as nginx would
//     (exact, then the longest prefix, then the snippet's regular
//     expressions, which ingress-nginx writes before its own locations);
//     one without a return answers 404, as nginx serves files there.
//
// Values may use the variables of §11.10's S column ($cookie_<name>
// among them), the captures, and the variables ingress-nginx sets per
// location; a directive with any other variable, and
// every other directive, warns with its name and line in the snippet and
// does nothing: SnippetAnswerIgnored (traffic moves: one that answers,
// refuses, reroutes or runs code there, proxy_pass, root, alias, include,
// *_by_lua*, load_module among them) or SnippetIgnored (a missing
// feature). Nothing a snippet says reaches a file, a script or another
// upstream. Regular expressions are Go's (RE2); a PCRE-only pattern warns.
// A host takes the server-snippet of the first Ingress in Ingress order
// that sets one; the others warn SnippetNoEffect. A server-snippet whose
// server-level return, rewrite or if (which run before every location of
// the host) or one of whose location blocks can answer paths another
// Ingress (or HTTPRoute) of the host declares warns SnippetCrossesIngress,
// once per such object, naming it: ingress-nginx lets it do so too, so one
// tenant's snippet decides requests meant for another's backend. examples/check -report
// lists each snippet's directives, translated or not.
//
// Snippets apply only with compile.Options.AllowSnippetAnnotations (the
// ConfigMap's allow-snippet-annotations, false by default) and
// AnnotationsRiskLevel Critical (annotations-risk-level, High by default;
// the snippets are Critical). Below Critical, where ingress-nginx refuses
// the whole Ingress carrying any Critical-risk annotation (the two
// snippets, auth-snippet, modsecurity-snippet, stream-snippet), ramjet
// serves it without the annotation and warns SnippetAnswerIgnored
// (traffic-moves); at Critical with allow-snippet-annotations false both
// drop the annotation, and it warns SnippetNoEffect (cosmetic).
//
// The steps run where nginx runs them. The server-snippet's return,
// rewrite and if run in the server's rewrite phase, before a location is
// chosen: after the block-user-agents and block-referers 403 and before
// app-root's redirect, the location's body size limit, denial and CORS
// preflight; its return answers with the server-snippet's header
// directives and the ConfigMap's add-headers only, none of the location's
// (its snippet's, CORS, HSTS), and the variables ingress-nginx sets per
// location ($namespace, $service_name, …) are empty there. The
// configuration-snippet's run after the
// CORS preflight and before the location's redirects; allow and deny
// after the rate limits and before authentication.
//
// A rewrite that moves the URI is served by the location the new URI
// lands in, as nginx searches the location again: after a server-snippet
// rewrite (nginx's server rewrite phase comes before the location is
// chosen, whatever its flag), and after a location's rewrite with last or
// without a flag (break keeps the location). The request is routed again
// for the new URI and every request step runs for that location from the
// start: its redirects, rate limits, source ranges, authentication and
// its own snippet (without the server-snippet's rewrite phase, which has
// run; its header directives still apply). The 11th such change answers
// 500 (snippet-rewrite-cycle), as nginx's "rewrite or internal
// redirection cycle". Router.Lookup follows the same rewrites. A
// replacement's arguments start at its first literal '?': a '?' a capture
// brings stays in the URI and is escaped for the backend ("%3F"); a
// capture in the arguments, or in a redirect's Location, is escaped as
// rewrite-target escapes it.
//
// # 11.10 Variables
//
// Every value that takes nginx variables is read by one parser
// (match/vars) against one table; each place expands a subset of it and
// refuses any other variable in the same words, naming the annotation or
// key and the variable: "$x is not a variable ramjet expands in <place>
// (it expands …)". $name and ${name} are read everywhere; $1 to $9 (one
// digit) in nginx's directive syntax, ${0} to ${9} in ramjet's.
//
//	variable                       known          places
//	$host                          per request    A R V M S H C L
//	$http_host                     per request    A V S H C
//	$best_http_host                per request    A
//	$server_name                   per request    S H L
//	$scheme                        per request    A R M S H C L
//	$pass_access_scheme            per request    A
//	$request_uri                   per request    A M S H C L
//	$escaped_request_uri           per request    A
//	$uri ($document_uri)           per request    M S H C L (S H only)
//	$args ($query_string)          per request    M S H C L
//	$is_args                       per request    M
//	$remote_addr                   per request    A S H C L
//	$remote_user                   per request    C L
//	$request_method                per request    S H C L
//	$http_<name>, $cookie_<name>   per request    S H C L
//	$arg_<name>                    per request    S H C
//	$1 to $9                       per request    R S
//	$namespace, $service_name,
//	$service_port                  at build       V S H L
//	$ingress_name, $location_path  at build       S H L
//	$req_id, $status, $request,
//	$request_time, $upstream_*, …  after answer   L
//	$literal_dollar                a "$"          every value
//
// $literal_dollar is ingress-nginx's own (a geo in its http block): text
// meant literally is written with it for each "$" (match/vars.Escape), as
// compile writes the Gateway API's filter values.
//
// $scheme is the connection's, as nginx's; $pass_access_scheme is
// ingress-nginx's, the scheme a trusted X-Forwarded-Proto (or a PROXY
// protocol header naming port 443) says the client used, and
// $best_http_host the Host header, or a trusted X-Forwarded-Host's first
// name.
//
// $http_host is the Host field as sent, port and case kept, empty without
// one; beside an absolute-form target ("GET http://a.example/x" with
// "Host: b.example:81") it is still that field, "b.example:81", while
// $host is the target's host, "a.example", as in nginx. So are the
// backend's Host and X-Forwarded-Host, the HTTPS redirect's and
// app-root's host, and an auth subrequest's X-Original-URL. The field is
// known when router/h1 read the request; under net/http's server,
// Request.Host, the target's host, is all there is.
//
// A: auth-url, auth-signin, global-auth-url; C: auth-cache-key,
// auth-proxy-set-headers; R: rewrite-target, x-forwarded-prefix; V:
// upstream-vhost (build-time variables expanded per route, $host and
// $http_host per request); M: mirror-target's path; S: snippets' values and if
// conditions; H: ConfigMap add-headers and proxy-set-headers values; L:
// log-format-upstream (what the access log cannot fill is logged as "-").
// The table and each place's list are match/vars.Table and the Places
// declared beside each parser.
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
//   - The TLS policy (router.Options.TLS, router/configmap's TLS keys) is
//     ingress-nginx's: ssl-protocols ("TLSv1.2 TLSv1.3"; Go serves a range,
//     so a list with a gap serves the versions between, and no SSLv3, each
//     warned; TLSv1 and TLSv1.1 only when ssl-ciphers sets @SECLEVEL=0, as
//     ingress-nginx's OpenSSL 3 refuses them above it), ssl-ciphers (its default list, read with OpenSSL's syntax:
//     names, aliases such as ECDHE+AESGCM or HIGH, '!', '-', '+',
//     @STRENGTH; suites Go lacks, DHE among them, are left out with a
//     warning, RC4 and 3DES suites are never served, as ingress-nginx's
//     OpenSSL is built without them, and TLS 1.3's suites are Go's),
//     ssl-ecdh-curve ("auto" is Go's choice; X448 and ffdhe groups are
//     left out, warned),
//     ssl-session-cache, -cache-size (4000 sessions a megabyte) and
//     -timeout with ssl-session-tickets off (the default): session state
//     stays in a server-side cache and the client resumes through the
//     ticket extension holding only its name (Go has no TLS 1.2 session
//     IDs); tickets on: Go's encrypted tickets, valid for the timeout,
//     under per-router keys, or one derived from ssl-session-ticket-key
//     (48 or 80 bytes, as nginx takes it) that every replica shares.
//     ssl-early-data "true" warns: Go's server takes no 0-RTT data.
//     ssl-reject-handshake "true" refuses a handshake naming no host of
//     the table (nor a name a table certificate is for), or no name, with
//     the unrecognized_name alert, as nginx's default server does. The
//     ssl-ciphers annotation sets a host's suites, the first Ingress of
//     the host with it deciding (match.VirtualHost.ServerTLS);
//     ssl-prefer-server-ciphers "false" warns (Go always prefers its own
//     order). These keys are read at start.
//   - enable-ocsp "true" staples OCSP responses (router.Router.StapleOCSP)
//     as nginx's ssl_stapling: each served certificate's status is fetched
//     in the background from the OCSP URL of its Authority Information
//     Access, verified against the issuer (the chain's second
//     certificate), and a "good" response is stapled until its NextUpdate;
//     it is refreshed 5 minutes before, at least hourly, and a failed
//     fetch is retried with backoff (5 s doubling to 5 min). A handshake
//     never waits: a certificate whose response is not in is served
//     without one, as are revoked and unknown statuses.
//
// Backend TLS (proxy-ssl-secret, "namespace/name" in the Ingress's
// namespace, with proxy-ssl-verify, -verify-depth, -name, -server-name,
// -protocols, -ciphers), for backends with backend-protocol HTTPS or GRPCS
// (AUTO_HTTP for a client over TLS):
//
//   - Per location, and the host's first Ingress (in Ingress order) whose
//     Secret has a ca.crt also for the host's fallback and its locations
//     without one of their own, as ingress-nginx writes it in the server
//     block (match.Location.BackendTLS, a route's and the fallback's). A
//     location with a Secret of its own takes from that server level, as
//     nginx merges each directive, what it does not set: the name without
//     proxy-ssl-name, the client certificate without a key pair, and the
//     CA, verification, depth, protocols and ciphers without a ca.crt.
//     The ConfigMap's proxy-ssl-location-only leaves out the server level.
//   - ca.crt verifies the backend's certificate when proxy-ssl-verify is
//     on, against proxy-ssl-name (which may use $host, the request's)
//     or else nginx's $proxy_host,
//     "upstream_balancer", with at most proxy-ssl-verify-depth (1)
//     intermediates between it and the CA, as OpenSSL counts the depth: a
//     failure answers 502. tls.crt and tls.key,
//     beside a ca.crt, are presented as the client certificate.
//     proxy-ssl-server-name on sends that name as SNI. Without ca.crt only
//     the name and SNI are the location's own (SecretInvalid when the
//     Ingress asked for more). Without proxy-ssl-secret nothing changes: no verification, no
//     client certificate, no SNI, and a key set to something else than its
//     default warns AnnotationRejected.
//   - A Secret that is missing, in another namespace (without
//     allow-cross-namespace-resources), or holds neither
//     ca.crt nor a key pair denies the location: 503 (SecretNotFound,
//     SecretInvalid, AnnotationRejected). Other bad values take their
//     default (verify off, depth 1, TLSv1.2, DEFAULT, no SNI) with
//     AnnotationRejected. The table's text shows the setting under its
//     route or host, the digest covers it, certificates by fingerprint.
//   - The router keeps one set of transports per distinct setting
//     (router/backendtls.go); a location without it costs nothing more.
//
// Client certificates (auth-tls-secret with a ca.crt, auth-tls-verify-client
// on (default), optional, optional_no_ca or off, -verify-depth (1),
// -error-page, -pass-certificate-to-upstream, -match-cn "CN=<regex>"):
//
//   - Per host, from its first Ingress (in Ingress order, canaries
//     included) that sets auth-tls-secret (match.VirtualHost.ClientTLS). A TLS listener with
//     router.Router.GetConfigForClient asks a client for a certificate when
//     the SNI names such a host, listing the CA; the handshake never fails
//     for the answer. A TLS session resumes there only if it was made
//     under the same CAs, as nginx's session ID context allows, so a
//     session from before the host asked for certificates, which holds
//     none, makes a full handshake that asks.
//   - The request is then judged by its host, before anything else: over
//     TLS, no certificate where one is required answers 400 "No required
//     SSL certificate was sent", one that does not verify against ca.crt
//     within the depth (auth-tls-verify-depth intermediates, as OpenSSL
//     counts), or that the Secret's ca.crl revokes (every certificate of
//     the chain below the anchor needs a current CRL of its issuer there,
//     as nginx's ssl_crl checks), 400 "The SSL certificate error"
//     (optional_no_ca passes an unknown issuer), or auth-tls-error-page
//     instead, as nginx's "error_page 495 496 =" takes it: a URL is a 302
//     to it, and a path serves the request in place (an internal
//     redirect: the host's location for the path, as a GET without the
//     query, its answer and status, the certificate not judged again and
//     ssl-client-verify saying why it failed); a
//     subject DN that does not match auth-tls-match-cn answers 403, over
//     plain HTTP too, as the server block's "if" does. The value is a
//     regular expression matched anywhere in the RFC 2253 subject DN, as
//     nginx's "$ssl_client_s_dn !~" test does, so CN=alice also passes
//     CN=alice.evil; such a value warns AnnotationUnanchored (cosmetic)
//     with an anchored spelling: the value must begin with "CN=", so
//     "CN=^|^CN=alice$", whose first branch never matches, passes only the
//     DN CN=alice. A Secret that is
//     missing, a ca.crl that does not parse, or a match-cn that does not
//     parse, makes every request to the host answer 403. A Secret without ca.crt asks for nothing
//     (SecretInvalid). A request over a connection whose SNI named another
//     host (HTTP/2 reuses connections) answers 421, as nginx does, so the
//     client opens one for this host.
//   - The backend gets ssl-client-verify (SUCCESS, FAILED:<reason>, NONE),
//     ssl-client-subject-dn and ssl-client-issuer-dn (RFC 2253 as OpenSSL
//     writes it for nginx: every attribute, last first, under OpenSSL's
//     short names such as emailAddress and DC, non-ASCII bytes as \XX;
//     auth-tls-match-cn reads the same), and with
//     auth-tls-pass-certificate-to-upstream ssl-client-cert, the
//     certificate's PEM escaped as nginx's $ssl_client_escaped_cert; a
//     request's own headers of those names are removed on such hosts.
//
// SSL passthrough (ssl-passthrough, with compile.Options.EnableSSLPassthrough,
// the controller's --enable-ssl-passthrough; without it the annotation
// warns AnnotationRejected and changes nothing, as in ingress-nginx):
//
//   - The host's TLS connections go, unterminated, to its "/" location's
//     backend (an Ingress's spec.defaultBackend serving the host when no
//     path is "/"), an endpoint picked by the backend's balancer
//     (match.Table.Passthrough, router.Router.PassthroughEndpoint). The
//     SNI is compared with the host's name exactly: a wildcard host or the
//     catch-all passes nothing through (AnnotationRejected), nor does a
//     host without a "/" location. Without a ready endpoint the
//     connection is closed, TLS never terminated, as ingress-nginx's TCP
//     proxy closes it when its dial to the cluster IP is refused; a host
//     whose Service is missing, which that proxy leaves out, is terminated.
//   - router.PeekClientHello reads the SNI without consuming the
//     ClientHello; router.PeekedConn.Splice copies both ways (splice(2)
//     between TCP connections, no allocation per byte). Other hosts'
//     connections are handed to the TLS server with the ClientHello
//     replayed, and plain HTTP to a passthrough host is routed as before.
//
// The plain-HTTP to HTTPS redirect:
//
//   - A request is plain when it did not arrive over TLS; X-Forwarded-Proto
//     counts only with router.Options.TrustForwardedProto, and then decides
//     over TLS too, as ingress-nginx's use-forwarded-headers (a balancer
//     that re-encrypts sends "http" for a plain-HTTP client).
//   - The matched route's Ingress decides; with no route matched, the
//     Ingress that created the host (for the catch-all, the one whose
//     spec.defaultBackend is its fallback), else the options.
//     force-ssl-redirect redirects on any host, but never what the
//     catch-all's fallback serves (ingress-nginx keeps its catch-all
//     location's own rewrite settings); ssl-redirect (on unless
//     DisableSSLRedirect) only on a TLS host: a host listed under some
//     claimed Ingress's spec.tls, by name or by a "*." entry one label up,
//     even when its Secret is missing and even when no rule names it, and
//     a server-alias name of one that its certificate covers.
//   - The answer is 308 (the ConfigMap's http-redirect-code: 301, 302,
//     307 or 308; any other value keeps 308, as in ingress-nginx) to
//     https://<the Host header without its port><request-target>, its last byte dropped when it is "/" (as
//     nginx drops it from $request_uri: "/a/?x" keeps its slash,
//     "/a?next=/" loses the query's) unless preserve-trailing-slash is set.
//     With use-port-in-redirects, ":<port>" follows the host: the HTTPS
//     listener's port (router.Options.HTTPSPort, 443 by default; the
//     example controller's -https-addr), as ingress-nginx names its
//     --https-port (lua_ingress.lua). A redirect that is due
//     but has no usable host answers 400 rather than serving in the clear.
//   - /.well-known/acme-challenge and everything under it, judged on the
//     normalized path, is never redirected, whichever route serves it (§19);
//     the ConfigMap's no-tls-redirect-locations (comma-separated paths)
//     replaces that list, and an empty one exempts nothing.
//
// HSTS, as ingress-nginx's hsts settings (router.Options.HSTS):
//
//   - Every answer to a request that arrived over TLS carries
//     Strict-Transport-Security: max-age=31536000; includeSubDomains
//     (ingress-nginx's defaults), the router's own answers (404, 503,
//     redirects) included, replacing a value the backend sent; not the
//     answers nginx makes outside any location (a www twin's redirect,
//     app-root's, the block-user-agents and block-referers 403, a 400 for
//     a bad Host or request-target, a client certificate's refusal: 400,
//     403, 421 or the error page's redirect). A request
//     over plain HTTP never gets it, whatever X-Forwarded-Proto says, as
//     ingress-nginx tests the connection's scheme; hosts without a
//     certificate of their own get it too, as ingress-nginx's header filter
//     does not in fact check for one.
//   - router.HSTSHeader builds the value from hsts-max-age,
//     hsts-include-subdomains and hsts-preload; router.Options.DisableHSTS
//     (hsts: "false") sends none and lets a backend's through;
//     router.Router.SetHSTS changes either while serving.
//
// # 13. Serving a request
//
// router.Router is the http.Handler. It loads the serving table once per
// request and uses it throughout. Its ServeHTTP is three listed phases:
// decide routes the request (the same code Lookup runs), the answer
// decorations (router's answerDecorations: compression, the returned
// X-Request-ID, Server, Strict-Transport-Security, the ConfigMap's
// add-headers) put the router's own headers on whatever answers, each
// declaring the headers it sets, and the request steps (requestSteps)
// answer or proxy it; a test holds that each decoration sets exactly the
// headers it declares and no other declares them.
//
//   - The request-target is taken in origin form ("/p?q") or absolute form
//     ("http://h/p?q", whose authority net/http uses as the host). Any other
//     form ("*", authority form), a target holding a space or control byte,
//     and an absolute-form target with userinfo ("http://user@h/") answer
//     400. What nginx refuses once it has read a head, before any
//     location, is refused whichever server passed it on, as router/h1
//     refuses it (refused, with the request line in the record): a method
//     other than upper-case letters, '_' and '-', a "*" target (OPTIONS *;
//     an http.Server answers it itself unless DisableGeneralOptionsHandler)
//     and a field nginx takes once (Host, Content-Length, Authorization,
//     the If- fields, ...) sent twice answer 400 (closing an HTTP/1
//     connection), TRACE 405.
//   - An HTTP/1.1 request without a Host header or with an empty one, and an
//     HTTP/2 request without :authority, answer 400. HTTP/1.0 may omit Host:
//     such a request is served by the catch-all, and the backend then sees
//     its own address as the Host. A Host or HTTP/2 :authority that nginx
//     or net/http's HTTP/1 server refuses answers 400 (bad-host): bytes
//     outside a URI host and port (space, TAB, '/', '?', '#', '\',
//     non-ASCII), an empty label ("h.test.."), or no host before the port
//     ("::1", ":80"); so does an HTTP/2 request whose Host field names
//     another host than :authority (RFC 9113 §8.3.1; router/h2 refuses it
//     itself, logged as refused). Two Host fields are refused as the
//     other fields nginx takes once.
//   - Who the client is (source ranges, rate limits, X-Real-IP,
//     X-Forwarded-For, records): the peer. With
//     router.Options.TrustForwardedFor (the controller's
//     -use-forwarded-headers) and a peer inside ProxyRealIPCIDR, the
//     X-Forwarded-For client, walked from the right over trusted
//     addresses; ProxyRealIPCIDR alone never makes the router believe the
//     header. Behind PROXY protocol the peer is the PROXY header's source,
//     and X-Forwarded-For is believed only as above; PROXY UNKNOWN and v2
//     LOCAL mean the connection's own address (router.PeerIsClient).
//   - The path is normalized for matching only: a "#" and what follows are
//     cut off (a decoded "%23" is an ordinary byte), %XX decoded once (a
//     decoded %2F is a separator), repeated slashes merged, "." and ".."
//     resolved, a trailing slash kept. A path that climbs above "/", bad
//     percent-encoding, or a decoded NUL (%00) answers 400; a NUL in the
//     query is the backend's business. The route, the TLS redirect and the
//     ACME exemption (§12) are all decided on this path. The backend
//     receives the client's request-target and query byte for byte, "#"
//     and "//"-prefixed targets included, unless the matched route's
//     rewrite-target (§11.1) gives it a new one.
//   - Forwarded to the backend: the client's Host unchanged (unless the
//     route's upstream-vhost, §11.1, names another), the Host field as
//     sent also beside an absolute-form target when router/h1 read the
//     request ($best_http_host), that target's host without one;
//     X-Forwarded-For, the client address alone (ingress-nginx's
//     $remote_addr; with TrustForwardedFor and ComputeFullForwardedFor, the
//     client's X-Forwarded-For with the peer appended), the client's own
//     value passed as X-Original-Forwarded-For; X-Forwarded-Host (the
//     Host as sent), X-Forwarded-Port (the listener's port) and
//     X-Forwarded-Proto, X-Scheme and X-Forwarded-Scheme (the client's
//     scheme), replacing any the client sent, but that with
//     TrustForwardedProto (use-forwarded-headers) X-Forwarded-Host is the
//     first value of the client's and X-Forwarded-Port the client's, as
//     ingress-nginx's $best_http_host and $pass_server_port; X-Real-IP (the client
//     address, router.Router.ClientAddr); exactly one X-Request-ID, the
//     client's first value unless it is empty, else a new random one.
//     The client's Proxy header is dropped, as ingress-nginx clears it
//     against httpoxy. Hop-by-hop headers are removed, and a field the client's Connection
//     header names never removes one the router sets, auth-response-headers
//     included; as
//     nginx does by default, every request header whose name contains "_"
//     (CGI-style frameworks read X_Forwarded_For as X-Forwarded-For).
//   - Request bodies are read whole before an endpoint is picked, as nginx
//     buffers them (proxy_request_buffering on), whatever their size or
//     limit, so a client that sends slowly holds no backend connection;
//     they are sent on with their length. Up to
//     router.Options.ClientBodyBufferSize (8 KiB, ingress-nginx's
//     client-body-buffer-size) is held in memory, the rest in a temporary
//     file in Options.BodyTempDir (os.TempDir()), unlinked as soon as it is
//     made and closed when the request ends; a file that cannot be written
//     answers 500 (body-temp-file). A location's client-body-buffer-size
//     replaces the memory size; proxy-request-buffering: "off" passes the
//     body on as it arrives. The limit is router.Options.MaxBodySize (1 MiB,
//     ingress-nginx's proxy-body-size default; negative: none). A declared
//     Content-Length over it answers 413 before a byte is read, as soon as
//     the location is found (§11.4), a request no location matches
//     included; a chunked
//     body that grows past it answers 413. A body that stalls between two
//     reads for ClientBodyTimeout (60 s, nginx's client_body_timeout)
//     answers 408, and malformed chunked framing is the client's 400, not a
//     backend failure. After any of these an HTTP/1 connection is closed. A
//     gRPC request's body is a stream: it is limited and timed the same
//     way, never buffered.
//   - Slow password checks are bounded: at most router.Options.PasswordChecks
//     (half of GOMAXPROCS, at least 1) bcrypt or MD5-crypt checks run at
//     once, on threads of lowered priority; a request that finds no free
//     slot within a second answers 503 (auth-busy), so a flood of wrong
//     passwords leaves other requests their latency.
//   - What a rewrite builds from one request (the new request-target, a
//     rewrite's redirect URL, X-Forwarded-Prefix) is bounded by
//     match.MaxRewriteTarget (64 KiB, eight times nginx's 8k request-line
//     buffer), since a template that repeats a capture grows with the path;
//     past it the request answers 500 (rewrite-too-long) before the
//     location's source ranges, authentication and rate limits, as nginx's
//     rewrite phase comes before its access phase, and nothing is sent to a
//     backend. A rewrite-target or x-forwarded-prefix longer than 4 KiB
//     (match.MaxRewriteTemplate) is rejected with AnnotationRejected; the
//     rest of the Ingress is served as before. A trusted X-Forwarded-Proto
//     names https without regard to ASCII case only.
//   - Router.ConfigureServer gives an http.Server that sets none of its
//     own nginx's idle keep-alive timeout (IdleTimeout, 75 s) and a
//     request-header timeout (ClientHeaderTimeout, 60 s); the example
//     controller sets the same values on its listeners itself (a 60 s
//     header timeout, which also bounds the PROXY header, and 75 s idle).
//   - router/h1.Server is the documented way to serve the router, and the
//     example controller serves HTTP/1 on its traffic listeners with it
//     (-http1-server ramjet, the default; -http1-server net/http keeps
//     net/http's server for everything). It calls the same http.Handler
//     with net/http's server semantics: one goroutine per connection and
//     none per request, the ResponseWriter and buffers reused,
//     keep-alive and pipelining (one
//     request at a time), Content-Length and chunked bodies with
//     trailers, 100-continue, response framing (Content-Length for a
//     short complete body, chunked, trailers, HEAD, 1xx, 204 and 304,
//     Connection: close), Flush, Hijack, http.ResponseController's
//     deadlines, the header and idle timeouts, the 1 MiB header limit
//     (431; with HeaderBuffers, nginx's large_client_header_buffers
//     instead, §1: 414 for the request line, 400 "Request Header Or
//     Cookie Too Large" for the fields, and the connection closed) and
//     Shutdown's drain. Connections that negotiate h2 over TLS,
//     and cleartext HTTP/2 with prior knowledge, are served by router/h2,
//     the project's own HTTP/2 server (RFC 9113, HPACK written there; it
//     passes h2spec), when h1.Server.HTTP2 is set (the example
//     controller's default, -http2-server ramjet), else handed to
//     net/http's server; either way with the same handler and settings.
//     router/h2 keeps net/http's HTTP/2 semantics for the handler (see
//     its package documentation) and runs each handler on a pooled
//     worker that writes its own frames, the writes of concurrent
//     streams coalesced (issue 41). The head limit is MaxHeaderBytes
//     (the example controller sets number×size of
//     large-client-header-buffers, 32 KiB by default): both servers
//     advertise SETTINGS_MAX_HEADER_LIST_SIZE of that plus 320 (32 bytes
//     a field counted for ten fields) and answer a longer header list 431
//     on its stream; router/h2 decodes any header block up to 64 KiB
//     past the limit to answer it so, and ends the connection (GOAWAY
//     ENHANCE_YOUR_CALM) past that, where net/http's ends it when one
//     field is longer than the whole limit or a frame carries more than
//     twice what is left of it; a field longer than one buffer is served.
//     nginx's HTTP/2 instead ends the connection (GOAWAY
//     ENHANCE_YOUR_CALM) on a field longer than one buffer or a list over
//     number×size; Go's client never sends a list over the advertised
//     size, failing the request itself. A differential fuzz
//     test sends the same bytes to both servers and compares what the
//     handler sees and what the client gets. Its deliberate differences:
//     the framing refusal above is made by the loop itself; the request's
//     context is cancelled when the client leaves only from the moment
//     something waits on it (context.AfterFunc, a Done channel), and
//     always when the handler returns; the request (its header map and
//     URL too), its context and the ResponseWriter are reused for the
//     connection's next request unless something waited on the context
//     (net/http's rule already forbids using them after ServeHTTP returns;
//     a mirror's copy takes its own copy of the headers); header fields go
//     out in map order (but a relayed backend head: below), chunks follow
//     the handler's writes, the idle wait
//     may last a tenth longer than its timeout (a second at most), and
//     the context carries no http.ServerContextKey. Plain TCP sockets, on
//     both sides of the router, are read and written with raw system
//     calls (router/rawsock), which keep the Go scheduler from handing
//     the processor to another thread on every slow loopback write.
//   - A request with both Content-Length and Transfer-Encoding: chunked
//     (another coding is 501, as nginx answers it, Content-Length or not),
//     with Transfer-Encoding on HTTP/1.0, with Content-Length twice (equal
//     values too), or with a folded field line (obs-fold: a line that
//     begins with a space or tab, continuing the one before), answers 400
//     and closes the connection, as nginx does. net/http's server rewrites
//     it before the handler sees it (it joins a folded line to the value
//     before, and merges equal Content-Lengths), so the check is made on
//     the connection:
//     callers who bring their own listener wrap it with
//     router/h1.GuardFraming (router/h1.GuardFramingConn for one connection;
//     over TLS after the handshake, leaving connections that negotiated h2
//     as the bare *tls.Conn), as the example controller does on both its
//     listeners under -http1-server net/http, its HTTPS listener doing the
//     handshakes itself within the header timeout; its own loop (below)
//     refuses them as it reads the head. The heads net/http's HTTP/1
//     server answers itself (two differing Content-Lengths or one not a
//     number, two Hosts, a malformed or missing Host, a malformed request
//     line or field line, an unsupported Transfer-Encoding: 400, 501, 505;
//     a head over MaxHeaderBytes: 431), and those GuardFraming refuses,
//     never reach a handler and are not logged: net/http tells no hook of
//     them (not ErrorLog, not ConnState), where router/h1 tells
//     Server.Refused, which the example controller logs as nginx does.
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
//     (the message names the backend-protocol fix); 504 the backend did not
//     take the connection within the connect timeout (5 s, or the
//     location's proxy-connect-timeout; a refused one is 502, as nginx
//     answers), sent no response headers within the read timeout (60 s,
//     or the location's proxy-read-timeout), or stopped taking the request
//     for its proxy-send-timeout; 403 a client outside the location's source
//     ranges; 503 a location whose source ranges do not parse, and 503
//     over the location's rate limits (§11.5); 500 the share of a
//     canary whose Service or port does not exist (§10); 400 a malformed
//     request-target, path, Host or body framing; 408 a stalled body; 413 a
//     body over the limit; 500 a rewrite that would build a target over
//     the bound, or a body that could not be written to its temporary
//     file; 503 too many password checks at once; 308 the TLS redirect
//     (§12); the redirects of
//     §11.1 (from-to-www-redirect, app-root, permanent-redirect,
//     temporal-redirect); and for the policies of §11.6 and §11.7, 204 a CORS
//     preflight, 401 basic credentials missing or wrong or the auth
//     service's 401, 302 to the sign-in page, 403 the auth service's 403,
//     500 the auth service failed, 503 a location whose authentication
//     cannot be served. To a gRPC client
//     (Content-Type application/grpc...) each is trailers-only: grpc-status
//     and grpc-message, no body.
//   - gRPC to a GRPC backend goes over cleartext HTTP/2, to GRPCS over
//     HTTP/2 with TLS, trailers intact; HTTP and HTTPS backends get
//     HTTP/1.1. Unless router.Options.Transport is set, HTTP backends, and
//     HTTPS ones of locations without proxy-ssl-* settings, go
//     through the router's own pools of HTTP/1.1 keep-alive connections,
//     which writes the request and reads the response on the handler's
//     goroutine; a connection is reused only when its response was read to
//     the end, and a request whose reused connection the backend closed
//     before answering is sent again once on a new connection when it is
//     idempotent and its body, if any, is held whole (not streamed), as
//     nginx sends again the body it buffered; through net/http's
//     transports (router.Options.Transport) as well. It reads response
//     heads as net/http does, up to 1 MiB or the location's
//     proxy-buffer-size (502 beyond, §11.4, §19), and passes a backend's
//     Pragma on as it came, without the Cache-Control net/http makes of
//     it. The pool is router/h1's client, and the seam is one request:
//     the router takes a connection (h1.Pool.Get), writes the head it
//     builds (request line, the client's fields less hop-by-hop ones, the
//     forwarded, action and request-ID fields) into the buffer Conn.Begin
//     hands it with the body and timeouts, reads each head back from
//     Conn.Next, copies Conn.Body and Conn.Trailer to the client and ends
//     the connection with Conn.End. When nothing else puts headers on the
//     answer (no policy, request ID, HSTS or ConfigMap header, no error
//     page, compression or tracing wrapping the writer) and the client is
//     served by the loop, the head goes to the client straight from the
//     parsed fields in the backend's order, as nginx passes it on, rather
//     than through the header map (h1.Relayer, the same bytes but for the
//     order); the wire (dialing, the idle check, the
//     body's sender, deadlines, framing, watching the client) is h1's, and
//     which informational responses are relayed, retries, buffering and
//     the fields hidden from the client stay the router's. The rest go through net/http's transports. TLS to backends does not verify their certificates, like
//     ingress-nginx's default, unless the location sets proxy-ssl-* (§12). Clients may use TLS with ALPN h2, HTTP/1.1, or
//     cleartext HTTP/2 with prior knowledge, as the embedder's http.Server
//     allows.
//   - WebSocket and other Upgrade requests are tunnelled once the backend
//     answers 101. Responses of unknown length are flushed as they arrive;
//     a body of known length that comes in pieces is sent up to where it
//     stopped before the router waits for more, as nginx sends it with
//     proxy-buffering "off", on every way out (through a net/http
//     transport, from its first piece on: the head waits for it).
//   - A location's Response (§11.8) acts around the exchange: a listed
//     status is replaced by the error backend's answer once the backend's
//     answer is over (its body read and dropped), a bandwidth limit paces
//     the body, and a mirrored copy leaves before the request is proxied,
//     on its own goroutine, never delaying or failing it.
//   - router.Options.Transport replaces every upstream transport, HTTP
//     backends' own pool included; router.DefaultTransport(o) is the
//     default set (timeouts, h2c for GRPC, HTTP/2 for GRPCS, byte-exact
//     targets), which a wrapper keeps. Through a transport of one's own
//     the read timeout still bounds the wait for the response head (504),
//     counted from when the transport reports the request written
//     (httptrace's WroteRequest); the connect and send timeouts are the
//     transport's. GRPC, GRPCS (and H2C) backends are
//     called through router/h2's Client, the project's own HTTP/2 client
//     (cleartext, or TLS with "h2" by ALPN): a call is its HEADERS and
//     DATA queued and written in one write, its body sent by a goroutine
//     of its own while the answer is read, where net/http's HTTP/2
//     client spent most of a proxied unary call's CPU (issue 41).
//     Request headers go to GRPC and GRPCS
//     backends without HPACK's dynamic table, as nginx's grpc_pass sends
//     them: each call's X-Request-ID is new, and indexing it cost the proxy
//     CPU on every call. Retries, the router's answers and
//     the forwarded headers stay the router's either way.
//   - Each request ends in one router.Record for Options.Observer: the
//     generation; the method, host and target; the status and, for the
//     router's own answers, the reason; the virtual host's name, the
//     matched route and its Ingress, the backend and its Service; the
//     endpoint and the number of tries; the request ID; the client
//     address (Router.ClientAddr); total and upstream durations (to
//     response headers and to the end of the body); request and response
//     body bytes; and the request itself, valid during the call. With an
//     Observer the request ID is made before the backend is picked, one
//     allocation; Options.ReturnRequestID also sends it to the client as
//     X-Request-ID, on the router's own answers too.
//   - Router.Lookup(req) reports the decision ServeHTTP makes for req (the
//     host and route chosen, the answer and its reason, the redirect's
//     Location, the backend) from the same code, without serving: the
//     answers of the request steps only serving runs (the location's rate
//     limits and source ranges, CORS preflight and authentication, the
//     hooks, the canary's choice, the request body) and the backend's answer
//     are not part of it; Decision.LeavesToServing reads them from the
//     steps' declarations. A route's weighted split (§20) chooses when
//     serving: Decision.Shares lists its backends, each with the answer
//     serving makes when it is chosen (503 for one without ready
//     endpoints, 500 for an invalid one, ...). Every case-file request
//     (§18) checks that the two agree.
//   - A backend that cannot be connected to (refused, unreachable, connect
//     timeout, failed TLS handshake) is retried on another of its
//     endpoints, at most 3 tries (the location's proxy-next-upstream-tries,
//     §11.4), for GET, HEAD, OPTIONS, TRACE, PUT and
//     DELETE, when nothing of the request body was read (§19). A failure
//     after the connection opened is never retried, unless the location's
//     proxy-next-upstream says otherwise (§11.4). A failure after the
//     response started cuts the client's connection. In-flight counts are
//     released on every way out.
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
// them. Warning.Severity says what each means for traffic moving from
// ingress-nginx (traffic-moves, feature-missing, cosmetic), by reason and
// measured against what ingress-nginx does (RegexModeHost, which describes
// ingress-nginx's own regex mode, is cosmetic); Warning.SeverityFor also
// reads the object's annotation values. Compile records each warning's
// verdict in Warning.Rated, with the annotations and options in hand, so
// the controller, the migration report and an admission webhook say the
// same: a RouteConflict where ingress-nginx keeps the same winner (the
// same path and type declared twice, or the twin pattern it orders first)
// is cosmetic; satisfy "any" on an Ingress with an allowlist and
// authentication moves traffic (every check must pass here). An unsupported nginx annotation is
// cosmetic when ingress-nginx does not read it as an annotation either (a
// ConfigMap key such as use-forwarded-headers, a removed name such as
// session-cookie-hash; the message says so) or when its value asks for
// what ramjet does anyway (proxy-ssl-verify "off", proxy-http-version
// "1.1", proxy-buffering "off"); ModSecurity moves traffic when its
// modsecurity-snippet turns the engine on with rules that refuse requests
// (or with the OWASP core rules), for an embedder that does not serve it
// (the migration report reads it for the example controller, which does,
// §19); otherwise it moves traffic when the
// annotation registry knows the key (one ingress-nginx routes, rewrites or
// refuses by), and is a missing feature when not. The migration report (go
// run ./examples/check -report) lists them per Ingress. The reasons:
//
//	ClassNotFound             spec.ingressClassName names no IngressClass (§2)
//	ClassConflict             the class annotation overrides spec.ingressClassName (§2)
//	RuleRejected              an invalid rule or TLS host; dropped (§3, §12)
//	PathRejected              a path that can never match or a regex that fails (§4)
//	PathTypeUnknown           pathType missing or unknown; read as a regex (§4)
//	PathCaseInsensitive       an ImplementationSpecific path ingress-nginx matches as a case-sensitive prefix, or whose requests a Prefix takes (§4, §5, §19)
//	BackendUnsupported        a resource backend, or no Service (§4)
//	RouteConflict             a second declaration of a route key (§7)
//	DefaultBackendConflict    a second rules-less spec.defaultBackend, or a hostless "/" over one (§6)
//	DefaultBackendUnavailable the global default backend cannot serve (§6)
//	ServiceNotFound           answers 503; a canary's share answers 500 (§8, §10)
//	ServicePortNotFound       answers 503 (§8)
//	ServicePortConflict       a port number and name naming different ports; the number is used (§8)
//	PortMatchedTargetPort     the port matched only a targetPort string (§8)
//	ExternalNameUnsupported   answers 503 (§8)
//	EndpointRejected          an endpoint address that can never be a pod; not dialled (§8)
//	AnnotationRejected        a ramjet.dev/ annotation, or a value, not applied (§10, §11)
//	AnnotationUnsupported     an nginx annotation ramjet does not implement (§11)
//	AnnotationConflict        Ingresses disagree about one backend (§8, §9)
//	CanaryWithoutPrimary      a canary path or default backend with no primary to attach to (§10)
//	CanaryConflict            a backend already has an older canary (§10)
//	AnnotationSubstituted     ewma served as least_conn (§9); a rewrite-target sent with a leading "/" (§11.1)
//	SecretNotFound            a spec.tls Secret missing or not kubernetes.io/tls (§12); an auth-secret missing (§11.7)
//	SecretInvalid             a spec.tls key pair that does not parse (§12); an auth-secret without key auth, or with unusable entries (§11.7)
//	CertificateHostMismatch   a certificate not valid for a listed host (§12)
//	RegexModeHost             a host in ingress-nginx's regex mode, on every Ingress with paths there (§11.1)
//	SnippetIgnored            a snippet directive not translated, one that adds or tunes (§11.9)
//	SnippetAnswerIgnored      a snippet directive not translated, one that answers or reroutes; a snippet the risk level refuses (§11.9)
//	SnippetNoEffect           snippets off, or a snippet directive that does nothing there either (§11.9)
//	SnippetCrossesIngress     a server-snippet can answer paths another Ingress of the host declares (§11.9)
//	AnnotationUnanchored      an auth-tls-match-cn that matches anywhere in the subject DN, as in ingress-nginx (§12)
//	ConfigMapKeyRejected      an ingress-nginx ConfigMap value that does not parse; the default stays (§1)
//	ConfigMapKeyUnsupported   an ingress-nginx ConfigMap key ramjet does not implement (§1)
//	ConfigMapKeyIgnored       a ConfigMap key that changes no answer here: it tunes nginx, or a flag decided (§1)
//	L4ServiceRejected         a TCP or UDP services entry not served: malformed, or its port taken (§22)
//	L4ServicePartIgnored      a part of such an entry ignored, as ingress-nginx ignores it (§22)
//	L4ServicesNotFound        the TCP or UDP services ConfigMap a flag names does not exist (§22)
//	L4ServiceDiffers          an entry served otherwise than by ingress-nginx: a PROXY header names the client (§19, §22)
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
// (passed as Spec.Inputs); hosts, routes in precedence order with their
// redirect settings and rewrites, the redirect answers, aliases and
// app-roots of §11.1; the request policies, CORS and authentication of
// routes and fallbacks; backends with their protocol, state, endpoints,
// balancing algorithm, canary and affinity; TLS hosts; certificates with
// their whole chain. Each feature of a route, host or backend declares its
// part of the digest and of the text in one section of package match, and
// a test fails when a field of match.Route, VirtualHost, Backend or
// Location belongs to no section, or when a Location field changes the
// digest on a route but not on a fallback. Each host (with its fallback
// and routes) and each backend is encoded and hashed on its own; the
// digest hashes the options, those sums in the table's order (hosts by
// name, backends by ID) and the table-wide parts (TLS hosts,
// certificates, listeners, TCP/UDP services), so a table built from the
// previous one with match.Table.Update hashes only what changed. It walks
// sorted lists only, never a map, and reads no clock. Sources and
// declaration order are left out, and warnings are not part of the table:
// renaming an Ingress republishes nothing.
//
// A table may be built anywhere, not only by compile: New prepares each
// feature value written as a struct literal as its constructor would
// (match.NewCORS, NewBasicAuth, NewRewrite, urltemplate.ParseAuthURL,
// CompileRegex; source ranges masked, a canary total under 100 read as
// 100), in a copy, never writing to the value, which tables built at once
// may share; and it refuses, with a *match.ValueError naming the host, the
// route (type, path, source) or backend, and the field, a value the router
// could not serve: a template, URL or pattern that does not parse, a
// redirect code outside 300–308, a rate limit without a zone, a canary
// without a backend or sticky without session affinity, an affinity
// without a cookie name. Preparing is idempotent: a literal that holds
// values a constructor already prepared (a Response whose Mirror came from
// NewMirror, as compile builds them) answers as one of plain literals.
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
// AllowLoopbackEndpoints (§8); a document or file that cannot be read is
// logged as an error and the rest is served, and a file that read without
// error before is served in that last good version until it reads again.
//
// A rebuild's result is what compiling everything gives, but the work need
// not be total. compile.Compiler, a value the caller keeps, compiles one
// snapshot after another with compile.Compile's result (table text,
// warnings, digest, claimed Ingresses) and reuses the previous compile's
// work: an unchanged snapshot (the same objects, or objects equal in every
// field a compile reads: a status, resourceVersion or managedFields write
// changes nothing) with equal options returns the previous result; a
// change to Ingresses, Services or EndpointSlices compiles only the
// Ingresses it reaches through the hosts and Services they name (closed
// over both, old and new versions) and hands their hosts and backends to
// match.Table.Update, which builds the next table from the previous one:
// the unchanged hosts and backends are shared with it, with their entries
// in the lookup index (copied page by page where it changes) and their
// digest sums (§15), so the work follows the change, not the table; the
// claimed Ingresses, the unclaimed summary and the warnings are merged
// the same way. An endpoint-only change (EndpointSlices alone) compiles
// no Ingress: the backends of the slices' Services get their new endpoint
// lists (and warnings about the slices' addresses), and the hosts naming
// them are copied to point at the new backends (match.Changes.Endpoints);
// unless an Ingress naming the Service decides by endpoints or is referred
// to beyond its hosts (spec.defaultBackend, canary, service-upstream,
// default-backend, custom-http-errors and the other coupling annotations
// below), when the Ingresses naming the Service are recompiled as for any
// change. Gateway listeners and TLS passthrough (§20), few and
// table-wide, do not stop a recompile: every recompile reaches the
// Services of every TLSRoute (before the change and after) and compiles
// all TLSRoutes with the Ingresses it reaches, their passthrough routes
// and warnings replacing the previous ones whole, and the listeners' own
// hosts (each listener's copy of the catch-all, and an empty host for
// each listener hostname no host serves) are made again from the new
// table's hosts (match.Changes.Gateway); a change to listeners,
// passthrough listeners or TLSRoutes alone is recompiled so. Everything
// else compiles in full: a change to IngressClasses, Secrets, ConfigMaps
// or the options; a snapshot with HTTPRoutes, GRPCRoutes or listener
// certificates; a reached Ingress that is coupled further (a rule without
// a host or with a wildcard, spec.defaultBackend, spec.tls, an annotation
// naming a Secret, server-alias, from-to-www-redirect, default-backend,
// custom-http-errors, ssl-passthrough); a change reaching the global
// default backend's Service or a TCP or UDP service's Service (those are
// otherwise kept from the previous table, with their warnings), or more
// than a quarter of the Ingresses; and
// a small compile that produced a host, backend, certificate or warning
// outside what it was given. The snapshot's objects must not be modified
// once compiled, as an informer's never are. TestRecompileEqualsCompile
// and FuzzRecompile replay random changes of every kind over the case
// files' objects and compare after each step; the example controller
// rebuilds with a Compiler (-manifests mode compiles in full), and
// router.Publish keeps the balancers of the backends the serving table
// has too, sweeping the registry once the new ones are a sixteenth of the
// live ones.
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
//     enableSSLPassthrough,
//     trustForwardedProto or its flag's name useForwardedHeaders,
//     proxyBodySize in nginx's size syntax, proxyRealIPCIDR as a list of
//     ranges or addresses, hsts, hstsMaxAge, hstsIncludeSubdomains,
//     hstsPreload, defaultSSLCertificate, globalAuth: the global-auth-*
//     keys as compile.GlobalAuth names them, customHTTPErrors as the
//     ConfigMap key writes it, allowSnippetAnnotations,
//     annotationsRiskLevel, configMap: the ingress-nginx ConfigMap as
//     "namespace/name" of one among the objects or as its data inline,
//     whose keys the other options override as flags do); objects (manifests,
//     inline, or include: a manifest file or folder relative to the case
//     file, all read together as one folder would be: Gateway API objects
//     too where compile/gatewayapi's extension is registered, §20);
//     warnings (the exact list the objects compile to, in order: reason,
//     object, field); requests.
//   - request: host ("" for none, sent as HTTP/1.0); path (the raw
//     request-target); method (default GET); headers; body or bodySize;
//     clientAddress (the peer the router sees); scheme ("https" means TLS
//     with SNI = host); repeat; session (send the cookies the answers to
//     the case's earlier session requests set, and keep the ones this one's
//     answers set, as a browser does); clientCertificate (https: the PEM
//     chain the client presents, its own certificate first, which the
//     router verifies as a handshake's); digest (username and password, and
//     optionally realm, uri, nc or nonce to send instead of a browser's: the
//     runner first sends the request without Authorization, uncounted, and
//     answers the Digest challenge it gets, qop auth; or again: true alone,
//     which sends the previous digest request's Authorization once more,
//     a replay); scenario, notes,
//     source; expect.
//   - expect: status; service (the backend ID that received the request,
//     or null when none did); route (the declaration matched,
//     "ns/name spec.rules[0].http.paths[1]", or null); forwardedPath and
//     forwardedHost (what the backend received);
//     requestHeaders (what the backend received, null meaning absent);
//     responseHeaders ("" means absent; a Digest challenge's nonce is
//     compared as <nonce> and an Authentication-Info's rspauth as
//     <rspauth>, both unpredictable by design); certificateHost (the served
//     certificate verifies for this name); distinctEndpoints (over the
//     repeats); services (requests per backend ID over the repeats, exact
//     under a weighted rotation; a backend not listed must not receive
//     any); errorPage (the error backend of an intercepted status, §11.8:
//     its service and requestHeaders as above); accessLogged (whether the
//     record asks for an access log line, §11.8).
//
// expect.service names the Service that did receive the request, never
// one that would have: a request the router answers itself reached none,
// whether it matched no location, was redirected (the TLS redirect,
// app-root, permanent-redirect) or was refused inside the matched location
// (401, 403, 413, a 204 preflight, 503 for a backend without endpoints),
// so its service is null and its route says which location answered. The
// runners report each such request as "not forwarded", in those words.
//
// Requests go through the real handler, built as net/http's server would
// hand them over, with a transport that records which endpoint was chosen
// and what it received. It answers 200, or the status a request's
// X-Routertest-Status header names unless the request asks for an error
// page (carries X-Code), with the Server header X-Routertest-Server
// names and the headers X-Routertest-Set-Header lists ("Name:value,...",
// as the Gateway API suite's echo backend reads X-Echo-Set-Header);
// error page requests are kept apart for expect.errorPage, and
// mirrored copies (§11.8) are answered and not recorded. The router's external-auth subrequests (auth-url,
// §11.7) go to a stand-in that answers like httpbin, whatever the host:
// /status/<code>, /basic-auth/<user>/<password> (401 with a challenge
// unless the request carries those credentials) and
// /response-headers?<name>=<value>&... (200 with those headers); they are
// not counted as forwarded. Both runners also compare each file's compiled
// tables, warnings included, with x.golden beside x.yaml (rewritten with
// -update), and reach the same verdict on the same files. Every request
// is also looked up with Router.Lookup before it is served; a decision
// that differs from what ServeHTTP then did fails the request.
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
//   - pathType ImplementationSpecific on a host not in regex mode: a
//     case-sensitive prefix of bytes there; here a case-insensitive regex
//     ^(?:path), so "/Admin" also serves /admin and "/robots.txt"
//     /robotsXtxt (PathCaseInsensitive, when the path holds a letter or
//     regex syntax; a path of neither matches the same in both).
//   - backend-protocol differing between Ingresses on one Service port:
//     set per location there, so each Ingress's paths are dialled as it
//     asks; here the oldest Ingress's protocol for all of them
//     (AnnotationConflict naming it). The table keys a backend by its
//     Service port (§8), and the balancing state and endpoints belong to
//     that backend; a protocol per route would split one Service port into
//     backends with separate counters, so the row stays.
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
//   - A request with both Content-Length and Transfer-Encoding: chunked,
//     with Transfer-Encoding on HTTP/1.0, or with a folded field line: 400 and
//     the connection closed in both. net/http's server rewrites such a
//     request before any handler runs, so the refusal is made on the
//     connection by router/h1.GuardFraming, which the example controller puts
//     on both its listeners; on a listener without it net/http reads the
//     first by its chunked framing, the second by Content-Length and the
//     third with the line joined to the value before. The 400's body is
//     net/http's plain "400 Bad Request", and a connection that switched
//     protocols (a CONNECT answered 2xx, an Upgrade answered 101; one
//     answered otherwise goes on being checked, as nginx reads the
//     requests after it) or whose framing net/http judges itself
//     (a malformed or repeated Content-Length, malformed chunking) is not
//     checked further (documented).
//   - load-balance: ewma: EWMA there; least_conn here
//     (AnnotationSubstituted).
//   - upstream-hash-by: any nginx variable expression there; here only
//     $remote_addr, $request_uri, $http_<name> and $cookie_<name>, others
//     rejected and the backend left round-robin (AnnotationRejected).
//   - A request without its hash key: hashed as the empty key there, so
//     every such request reaches one endpoint; round-robin here
//     (documented).
//   - upstream-hash-by-subset: a random endpoint of the key's subset per
//     request there; round-robin within the subset here (documented, §9).
//   - canary-weight: a random draw per request there; a deterministic
//     interleaved rotation here, exact over each rotation (documented, §10).
//   - A canary whose Service or port does not exist: skipped there; here
//     its share answers 500, Gateway API's rule (ServiceNotFound,
//     ServicePortNotFound, ExternalNameUnsupported on the canary's path).
//   - canary-by-header-pattern with syntax only PCRE runs (look-ahead
//     "(?=", back-references "\1", possessive repeats "a++", PCRE's own
//     escapes): matched there; not applied here, so the header decides by
//     "always" and "never" (AnnotationRejected).
//   - Session cookie values: an endpoint hash (persistent) or a random key
//     (balanced) there; a hash or a key from the backend's cursor here,
//     the same on every replica (documented, §9).
//   - A backend that connects but sends no response headers in time: 504
//     in both (§13), listed because a 502 would be easy to expect.
//   - Methods retried after a failed connect: all but POST, LOCK and PATCH
//     there; GET, HEAD, OPTIONS, TRACE, PUT and DELETE here.
//   - An nginx.ingress.kubernetes.io/ annotation ramjet does not implement:
//     in effect there; no effect here (AnnotationUnsupported, once per key
//     and Ingress; its message says when ingress-nginx does not read the key
//     either, or when the value asks for what ramjet does anyway).
//   - The ACME exemption from the TLS redirect (no-tls-redirect-locations,
//     default /.well-known/acme-challenge): only locations whose own path
//     starts with a listed path there; any request under one here
//     (documented).
//   - A regex with possessive quantifiers ("a++"): accepted by PCRE there;
//     rejected here (PathRejected).
//   - A regex match that runs too long: PCRE's backtracking limit, then no
//     match, there; here 10 ms per backtracking match and 50 ms per request
//     in all, then no match, and a 404 once the request's budget is spent
//     (§13; counted in router.Router.Stats).
//   - Case flags written inside a pattern ("(?-i)", "(?i)"), and patterns
//     with a back-reference on regexp2: Unicode folding here, bytes in
//     PCRE without UTF mode there. On regexp2, \b and negated classes
//     inside a bracket ("[\W]") are Unicode too (documented, §4).
//   - An auth-realm, auth-request-redirect or auth-always-set-cookie value
//     that does not validate: dropping the whole authentication there;
//     here the location stays protected (AnnotationRejected, §11.7).
//   - A cors-allow-origin entry is matched as a suffix there (the regex
//     is anchored only at its end); here the whole Origin must match. No
//     browser sends an Origin that tells them apart (documented).
//   - auth-type digest: the module keeps every nonce it issues in a 4 MiB
//     shared memory zone, and once it is full answers every challenge 503
//     until nonces expire; here a nonce is signed, not stored, and works
//     only at the Router that issued it, and only the nonces in use are
//     kept, in a table whose oldest entry gives way, unused nonces issued
//     before it then answering stale (§11.7). A nonce the module has
//     forgotten (unused past 60 seconds, or 300 seconds after its first
//     use) gets a challenge without stale there; stale here (documented).
//     Without auth-realm (or with realm "off") the module leaves the
//     location open there; it answers 503 here (AnnotationRejected). An
//     htdigest line with a one-character user and realm is skipped there
//     (a length check off by one); it logs in here.
//   - DES crypt password hashes: verified there; here those users cannot
//     log in (SecretInvalid).
//   - An EndpointSlice address that can never be a pod (loopback,
//     link-local including the cloud metadata address, ...): dialled there;
//     dropped here (EndpointRejected, §8). The same holds for the cluster IP
//     service-upstream dials (EndpointRejected on the Service).
//   - app-root with a "$": expanded as an nginx variable there; rejected
//     here (AnnotationRejected).
//   - server-alias names that are nginx regexes ("~..."), IP addresses, or
//     wildcards other than a leading "*.": server names there; not served
//     here (AnnotationRejected). A "*.<domain>" alias matches any number of
//     labels there, exactly one here, as rule hosts do
//     (AnnotationSubstituted).
//   - from-to-www-redirect on a wildcard host: a "www.*.<domain>" server
//     name there, which nginx refuses; no twin here (AnnotationRejected).
//   - The scheme of the redirects of §11.1 (app-root, a permanent or temporal
//     redirect made absolute): nginx's own connection's there; the client's
//     here, which differs only behind a TLS-terminating load balancer with
//     router.Options.TrustForwardedProto (documented).
//   - An Ingress withheld over an annotation value (§11.1): absent from
//     ingress-nginx's store there, so it gets no status; here it stays
//     claimed and gets status, so that its warning reaches it as an Event
//     (documented).
//   - default-backend standing in for a Service without endpoints: the
//     request is balanced as the original upstream there; as the default
//     Service's backend here. Both send it X-Code: 503 and the related
//     headers (documented, §11.1).
//   - custom-http-errors: nginx's error_page replaces a listed status
//     whoever made it in the location, its own 401, 403, 413 and 503 (a
//     rate limit, an upstream without endpoints) included; here the
//     backend's answers and the router's answers to a failed exchange
//     (502, 504), not the answers of the steps before it, nor the 503 of
//     a backend without endpoints (documented, §11.8). With
//     disable-proxy-intercept-errors turning interception off, nginx's
//     error_page directives stay and still replace the listed statuses
//     nginx makes itself (a failed exchange's 502 and 504 among them),
//     only the backend's pass; so here (match.Response.OwnOnly), within
//     the answers above. The request to the
//     error backend: the client's body re-sent there, none here; a port the
//     path names by name is X-Service-Port's value there, the Service
//     port's number here (documented).
//   - mirror-target: every copy is sent there, as a subrequest with the
//     body nginx buffered; here at most router.MirrorInFlight copies are
//     in flight per Router, the rest dropped and counted
//     (router.Stats.MirrorsDropped). A gRPC call's body, which nginx reads
//     whole before the call goes on (so a streaming call waits for its
//     client's last message), streams to the backend here; the copy goes,
//     as there, with its Content-Length once the body is over. A target
//     ingress-nginx's validator
//     refuses still leaves a mirror directive there, whose subrequest goes
//     to the server's own locations; here nothing is mirrored
//     (AnnotationRejected).
//   - limit-rate: in effect there only with proxy-buffering on, as its
//     documentation says; here always (documented, §11.8).
//   - enable-rewrite-log: every rewrite at notice level in nginx's error
//     log there; here rewrite-target's rewrites at debug level on the
//     router's log (documented).
//   - upstream-vhost or x-forwarded-prefix with a value ingress-nginx's
//     validator refuses (a space, say): the whole Ingress is not served
//     there; here only the annotation is dropped (AnnotationRejected).
//   - nginx variables in rewrite-target, upstream-vhost or
//     x-forwarded-prefix: any is expanded there; here only $1 to $9,
//     $scheme and $host in a target or prefix, and $namespace,
//     $service_name, $service_port, $host and $http_host in upstream-vhost
//     (§11.1);
//     the others are rejected (AnnotationRejected).
//   - A rewrite-target that does not begin with "/" (such as "$1"): the
//     rewritten URI is sent as is there, which is no path when the capture
//     lacks a slash; here it is sent with a leading "/"
//     (AnnotationSubstituted).
//   - Captured text in a rewritten target: escaped there only in some cases
//     (when the client's URI was escaped); here every byte a path or query
//     cannot carry is percent-encoded, so the backend always gets a valid
//     request-target (documented).
//   - A rate limit that does not parse: the whole Ingress is dropped
//     there; here its locations answer 503 to everyone and the rest of it
//     is served (AnnotationRejected).
//   - permanent-redirect and temporal-redirect: a return inside the
//     location there (nginx.tmpl:1417-1419), after its declared-body
//     check, its denial and its CORS preflight and headers; here answered
//     before the location, as a server-level redirect (documented).
//   - proxy-read-timeout: between two reads of the whole response there;
//     here between two reads of the response head and body (§13). A
//     tunnel after 101 closes once nothing passed either way for it on
//     both, but a write stuck in a tunnel is cut there by
//     proxy-send-timeout (to the backend) or send_timeout (to the
//     client), here only once that idle time passes (documented). On the fast
//     path a stall is cut between three quarters of the timeout and the
//     timeout after the read began. proxy-send-timeout and proxy-connect-timeout on a
//     router given its own Options.Transport: that transport's settings
//     apply (documented).
//   - A backend's response head (status line and header fields) larger
//     than proxy-buffer-size (4k by default): 502 there; here up to 1 MiB,
//     502 beyond, unless the location sets proxy-buffer-size (documented).
//   - proxy-buffering, proxy-buffer-size's head bound and
//     proxy-http-version on gRPC backends, on HTTPS backends of a
//     location with proxy-ssl-* settings, or with
//     router.Options.Transport: applied there; here those go through
//     net/http's transports, which stream, bound heads at 1 MiB and speak
//     HTTP/1.1 (documented).
//   - A backend response with Content-Length repeated (equal values
//     too) or beside Transfer-Encoding: 502 there and, on HTTP and HTTPS
//     backends, here; on HTTPS backends of a location with proxy-ssl-*
//     settings, or with router.Options.Transport, net/http's transport
//     reads the chunks, or the one length, and passes the response on.
//     An HTTP/1.0 response with Transfer-Encoding: chunked is read
//     chunked there and here, but net/http's transport passes the chunks
//     on as data; and it answers 502 for a field name with a byte no
//     token has, which nginx passes on and the router's own pool drops
//     (documented).
//   - proxy-buffering "on": nginx sends the head and the first buffers
//     while it still reads; here the client gets the head once the body
//     is read whole or both buffers are full (documented).
//     proxy-busy-buffers-size: read and checked, no effect (documented).
//   - proxy-next-upstream on a gRPC call whose body began to go out:
//     here a call's body is streamed, never held, so the try is not
//     passed on; a body the router held whole (in memory or in its
//     temporary file) is sent again from its start, as nginx sends its
//     buffered body (documented).
//   - auth-keepalive*: a keep-alive pool per auth service there, and a new
//     connection per subrequest without it; here subrequests always reuse
//     the router's pooled connections, and the settings are shown only
//     (documented).
//   - auth-cache-duration "200 1h 30m" (more than one time) or "200 500ms"
//     (proxy_cache_valid counts seconds): passes ingress-nginx's check,
//     which nginx then refuses to load; here the location is denied
//     (AnnotationRejected).
//   - Rate limits when the counter table is full: nginx drops the oldest
//     states of the Ingress's 5 MB zone; here the least recently used idle
//     entry of a set in one table shared by all zones (§11.5, documented).
//   - auth-tls-error-page, auth-tls-pass-certificate-to-upstream or
//     auth-tls-match-cn with a value the validator refuses: the whole
//     Ingress is not served there; here the error page or the header is
//     dropped, and a bad match-cn closes the host with 403
//     (AnnotationRejected). An error page that is a path, not a URL: an
//     internal redirect there; a 302 to it here (documented).
//   - ssl-client-verify's FAILED reason: OpenSSL's text there; here the
//     nearest of "unable to get local issuer certificate", "certificate
//     has expired", "certificate chain too long", "unsupported certificate
//     purpose", "certificate verify failed" (documented).
//   - proxy-ssl-ciphers: read with ssl-ciphers' OpenSSL syntax (names,
//     aliases, '!', '-', '+'); suites Go lacks (DHE, CAMELLIA, ARIA, CCM,
//     PSK) are left out (AnnotationSubstituted), and a list that leaves no
//     suite Go serves, which nginx refuses ("no cipher match"), gets
//     DEFAULT (AnnotationRejected).
//   - ssl-passthrough: connections go to the Service's cluster IP there;
//     here to an endpoint the backend's balancer picks, counted in flight
//     (documented). A router given its own Options.Transport does not
//     apply proxy-ssl-* (the transport's TLS settings do; documented).
//   - Snippets: pasted into nginx.conf there, so any directive works (or
//     breaks the reload); here only the translated ones act, each other
//     warns (SnippetIgnored, SnippetAnswerIgnored, §11.9). A proxy
//     directive in a configuration-snippet that an annotation also sets
//     is a duplicate nginx refuses; here the annotation's value applies
//     (SnippetNoEffect). The snippet's allow/deny is checked after the
//     whitelist-source-range the location may have, not merged with it
//     (documented).
//   - An Ingress with snippets at an annotations-risk-level below
//     Critical: not served there; here served without them
//     (SnippetAnswerIgnored).
//   - A request header value that holds CR, LF, NUL or another control
//     byte once its variables are expanded (a snippet's, §11.9;
//     proxy-set-headers, §1): written into the backend's request head
//     there, where it adds header lines or a whole request; not sent here
//     (counted in router.Stats.HeadersDropped).
//   - An add-headers or proxy-set-headers value with a variable ramjet
//     does not expand (§1: ${msec}, $request_id, ...): expanded there;
//     here the header is left out (ConfigMapKeyUnsupported).
//   - ModSecurity (enable-modsecurity, enable-owasp-core-rules,
//     modsecurity-snippet, modsecurity-transaction-id, and the ConfigMap's
//     enable-modsecurity, enable-owasp-modsecurity-crs, modsecurity-snippet):
//     libmodsecurity with the CRS v4.22 there; here the library carries
//     the annotations (compile.Options.ExtensionKeys) and the example
//     controller serves them through router.Options.Hook with Coraza and
//     the CRS v4.25 it embeds, each location's rules built as
//     ingress-nginx's template builds them (DetectionOnly unless a snippet
//     says SecRuleEngine On, which answers with the rule's status). The
//     hook sees requests only, so the response phases (the CRS's
//     RESPONSE-* rules) do not run; audit-log and file directives are
//     dropped and matched rules go to the controller's log; Include and
//     the file operators read only the image's modsecurity.conf and CRS
//     files; a body is inspected before the router's body step, within the
//     location's body limit, and not when it streams (gRPC,
//     proxy-request-buffering "off"). modsecurity-transaction-id expands
//     $request_id (the request's X-Request-ID, given to one that has none),
//     $host, $remote_addr and $http_<name>, and keeps other variables as
//     written (documented; the migration report says so per Ingress); a
//     value ingress-nginx's validator refuses is not applied, there and
//     here (AnnotationRejected, from the controller).
//   - ModSecurity rules that do not build (a modsecurity-snippet Coraza
//     refuses, an Include of another file): nginx refuses the whole
//     configuration there and the previous one keeps serving; here the
//     Ingress's paths answer 503, since a WAF that cannot be built must not
//     serve unprotected, and the rest is served (AnnotationRejected naming
//     the Ingress and modsecurity-snippet, from the controller). Keeping
//     the previous rules instead would protect only until a restart, after
//     which there are none: 503 behaves the same at every start.
//   - server-tokens "true": every answer carries Server: nginx/<version>
//     there, Server: ramjet here (no version: it tells an attacker
//     nothing and a client relies on none). With "false", the default,
//     neither sends one, and neither passes a backend's on, whatever
//     allow-backend-server-header says.
//   - TCP and UDP services (§22): an entry whose Service or port is
//     missing, or without ready endpoints, is dropped there, so its port
//     stops listening until the next reload; here it stays in the table
//     (ServiceNotFound, ServicePortNotFound) and its port closes
//     connections until the Service comes. A port added later is served
//     there after a reload, here after a restart (logged). With
//     ":PROXY:PROXY" the backend's header names the load balancer there
//     unless enable-real-ip, the client from the decoded header here. A
//     half-closed TCP connection is closed both ways there (nginx's
//     proxy_half_close off), kept open the other way here.
//
// Kept on purpose, with a warning, because migrating users depend on it: a
// Service port referenced by its targetPort string still resolves
// (PortMatchedTargetPort).
//
// # 20. Gateway API routes
//
// Gateway API HTTPRoutes are served from the same table as Ingresses, so
// a cluster can move from one to the other route by route. The
// sigs.k8s.io/gateway-api types stay out of this module: the nested module
// ramjet.dev/ramjet/compile/gatewayapi (its own go.mod, v1.6.3) holds
// them, and its Translate turns GatewayClasses with controllerName
// ramjet.dev/gateway, their Gateways, HTTPRoutes, ReferenceGrants and the
// Namespaces' labels into compile.HTTPRoute values, which
// compile.Snapshot.HTTPRoutes carries into Compile beside the Ingresses.
// compile.HTTPRoute is compile's own input, not annotation-shaped: a route
// with its creation time and the host names it is served on, rules of
// path matches (match.Exact, match.Prefix, match.Regex) and weighted
// Service backends, each with the field it came from for warnings.
// Translate's warnings go in compile.Snapshot.Warnings, which Compile
// reports in Result.Warnings, sorted and deduplicated with its own.
//
// Manifests: gatewayapi.Register adds a manifest.Extension to the loader
// (compile/manifest), so manifest.Load and Decode, and everything built on
// them, read GatewayClass, Gateway, HTTPRoute and ReferenceGrant (v1 and
// v1beta1), TLSRoute (v1, and the experimental channel's v1alpha3 and
// v1alpha2) and Namespaces as strictly as Ingresses (an error names file,
// document, object and field) and translate them once every file is read.
// A manifest.Reader reads several pieces as one folder; case files (§18)
// read their inline objects and includes so. examples/check registers it:
// its case-file runs, -translate, -explain and -report read both kinds.
//
// The other way, gatewayapi.FromIngress converts a snapshot's Ingresses
// into Gateways and HTTPRoutes (what ingress2gateway does) by compiling
// them and converting the table, so the objects say what ramjet serves:
// one Gateway per namespace and IngressClass (or per class in one
// namespace, with ReferenceGrants for the TLS Secrets), an HTTP listener
// per host and an HTTPS one per host with a TLS Secret; one HTTPRoute per
// Ingress and host, plus one with RequestRedirect rules on the HTTP
// listener where ssl-redirect applies; Exact and PathPrefix paths, and on
// a host ingress-nginx matches by regular expression (use-regex or
// rewrite-target among its Ingresses, or an ImplementationSpecific path
// with regex syntax) RegularExpression ones, "(?i)" first where the
// pattern has letters, since the API's are case-sensitive (elsewhere an
// ImplementationSpecific path is the PathPrefix it is in ingress-nginx,
// listed with what it no longer matches); object names that are not valid
// (a class from an annotation, an Ingress read from a file) made valid
// DNS-1123 subdomains with a hash of the original, at most 253 bytes and
// apart from every other name; a host's spec.defaultBackend as a PathPrefix
// "/" rule; server-alias as more hostnames; app-root, rewrite-target
// without captures, upstream-vhost, x-forwarded-prefix, permanent- and
// temporal-redirect, canary weights and headers, mirror-target to a
// cluster Service and a configuration-snippet that is only header edits
// as their filters, matches and backendRefs, and cookie affinity that
// sessionPersistence serves alike (affinity-mode persistent, the cookie's
// name, a session-cookie-max-age as a Permanent cookie's absoluteTimeout,
// no other cookie attribute, a cookie path the rule's own path gives, no
// canary) as the rule's sessionPersistence;
// other cookie affinity is listed with what differs. Every other annotation is
// listed per Ingress with why it has no equivalent. It never fails open:
// an Ingress whose routes authenticate (auth-url, auth-type), restrict
// client addresses (whitelist-, allowlist-, denylist-source-range), run
// ModSecurity or carry a snippet that can answer a request itself (allow,
// deny, return) becomes no route at all and is listed with that
// annotation, and so does every other Ingress's path on its hosts (a "/"
// there would take its requests), each Ingress listed; a host checked as
// a whole (client certificates, auth-tls-*, or a server-snippet location
// block, which may guard another Ingress's path) is not converted, and
// every Ingress on it is listed. A host not converted keeps its name as
// listeners without routes, so that a wildcard's or the catch-all's
// routes do not take its requests (they answer 404). A host listed
// under spec.tls without a rule of its own gets its HTTP and HTTPS
// listeners and the routes of the host that serves it (a wildcard, or the
// catch-all) under its name, so its plain HTTP is redirected as
// ingress-nginx redirects it, not served by the catch-all's HTTP listener.
// /.well-known/acme-challenge is never redirected: a rule wholly under it
// stays unredirected on the HTTP listener, and the longest redirected
// PathPrefix rule holding it gets a twin there with PathPrefix
// /.well-known/acme-challenge (a redirected regular expression matching
// it is listed instead: no pattern form leaves those paths out); so are
// the ConfigMap's no-tls-redirect-locations in its place, one listed with
// a trailing slash with an Exact rule that keeps its bare path redirected. A rule
// that redirects of its own (permanent-redirect, app-root) does so on
// plain HTTP too, as ramjet answers it before the HTTPS redirect; it is
// listed, since its RequestRedirect keeps the request's query, which
// nginx's return drops (app-root also keeps the Host header's port there,
// where RequestRedirect writes the listener's), and no Gateway API field
// says otherwise. Also listed, with the route converted: an upstream-vhost
// with a port (URLRewrite's hostname takes none; a RequestHeaderModifier
// on Host is refused by Envoy Gateway and Istio), so the Host is left as
// sent; a canary's cookie, on the canary and its primary; the ConfigMap's
// proxy-body-size (HTTPRoute has no body limit). An invalid
// canary-by-header-pattern sends every request with the header to the
// primary, as ingress-nginx's balancer gives up on the canary then. The
// HTTPS redirect keeps a trailing slash ingress-nginx drops, a query's
// too (no RequestRedirect says otherwise). examples/check -translate -to gateway
// prints the objects, and -report the list. TestFromIngressRoundTripCases
// sends every request of every case file to both tables; what still
// differs is argued case by case there (the Gateway API's 500 for a
// missing Service, the precedence of patterns, a wildcard's depth, a
// canary skipped for want of endpoints at request time).
//
// Served now:
//
//   - Listeners keep routes apart. A route attached to a listener is served
//     only to requests that arrived on that listener's port and protocol:
//     each Gateway port and protocol (HTTP; HTTPS, TLS terminated) with a
//     listener of ours is a view of the table (match.Listener,
//     VirtualHost.Listener, Table.LookupOn) holding the routes of its
//     listeners beside every Ingress's hosts, which every listener serves
//     as before (an Ingress path and a route's with the same host and key
//     are resolved per listener by the rule below). A request on a port
//     and protocol with no listener of ours sees the Ingresses only; a
//     route of an HTTPS listener never answers plain HTTP, so an HTTP
//     listener whose route redirects to HTTPS redirects while the HTTPS
//     listener serves the application (what -translate -to gateway
//     writes). Listener precedence by hostname (an exact name, then the
//     wildcard with more labels, then none) is kept by the hosts
//     themselves: a route's host that a more specific listener on the
//     same port takes wholly is left out there, and each listener
//     hostname without a host gets an empty one (404), so its requests
//     never reach a less specific listener's routes. All Gateways of our
//     class share the controller's ports: listeners of two Gateways on one
//     port and hostname serve their routes together (one address, so the
//     routes of the same catch-all "/" conflict by the tie-break below).
//     The port a request arrived on is the local port, published as the
//     Gateway port router.Options.GatewayPorts maps it to (the example
//     controller maps its HTTP listener to --gateway-http-port, default
//     80, and its HTTPS listener to --gateway-https-port, default 443); a
//     listener on another port is not served (PortUnavailable, below). A request over TLS whose
//     Host belongs to another of the port's HTTPS listeners than its
//     server name (SNI) answers 421 (Table.Misdirected). A table without
//     listeners is looked up exactly as before (match's
//     BenchmarkLookupListeners).
//   - Attachment: parentRefs to a Gateway of our class, by sectionName and
//     port, to HTTP and HTTPS listeners whose allowedRoutes admit
//     HTTPRoutes from the route's namespace (Same, the default; All;
//     Selector on the Namespace's labels). The route's hosts are the
//     intersection of its hostnames with each listener's; no hostname on
//     either is the catch-all host. A parentRef that attaches nothing
//     warns RouteNotAttached on spec.parentRefs[i] or spec.hostnames;
//     parentRefs to other controllers' Gateways are not ours to judge.
//   - Path matches Exact, PathPrefix (whole path elements, as an Ingress
//     Prefix; their %XX escapes, which the API allows, are decoded, as the
//     request path is, so "/caf%C3%A9" matches GET /caf%C3%A9, and the
//     migration view escapes an Ingress path's "%") and RegularExpression (the dialect of an ImplementationSpecific
//     path, §4, anchored at the start only, but case-sensitive as the API
//     defines it: match.Route.CaseSensitive, match.CompileCaseSensitiveRegex;
//     a "(?i)" in the pattern folds case); a rule without matches is
//     PathPrefix "/". An Ingress's regex mode on a shared host (§4) changes
//     the Ingresses' paths only (case file gateway-regex-case). Precedence is the table's (§5): Exact,
//     then the longest prefix, then regular expressions in order.
//   - Matches on method, headers (Exact, RegularExpression) and query
//     parameters (Exact, RegularExpression), as the route's conditions
//     (match.Conditions, Table.LookupRequest): a request whose path
//     matches but which does not meet them goes on to the next candidate,
//     so rule A "/foo" with a header and rule B "/" send GET /foo without
//     the header to B. Among the routes of one host and key the Gateway
//     API's order decides: a method match, then more header matches, then
//     more query parameter matches, then the tie-break below. Header
//     names are matched without regard to case and a header sent several
//     times as its values joined with ", "; query parameter names exactly,
//     the first occurrence deciding, its value decoded. Regular
//     expressions are RE2, unanchored. A host without conditions is
//     looked up exactly as before; match's BenchmarkLookupConditions
//     measures a lookup among 10,000 routes with them.
//   - The same host and path in several HTTPRoutes: the oldest route wins,
//     then the first by namespace/name, then the first rule and match of
//     the route (seed 002); the others warn RouteConflict naming it.
//   - An Ingress path and an HTTPRoute match with the same host and key:
//     the older object wins, the Ingress when both were created in the
//     same instant; the loser warns RouteConflict naming the winner. The
//     table's digest (§15) covers both kinds.
//   - backendRefs to Services with a port, in the route's namespace or,
//     with a ReferenceGrant in the Service's namespace from HTTPRoutes of
//     the route's, in another (RefNotPermitted otherwise, on the
//     backendRef's namespace). The rule's requests are shared by weight
//     (default 1; 0 is never chosen) in a deterministic rotation (§9,
//     match.Split). An invalid backendRef (a kind other than Service,
//     another namespace without a ReferenceGrant, a Service or port that
//     does not exist, an ExternalName Service) answers 500 for its share,
//     a valid one without ready endpoints 503 (seed 002); a rule whose
//     backendRefs are all invalid or of weight 0, or that has none,
//     answers every request 500 (ReasonNoValidBackend), unless it
//     redirects. Each invalid reference warns on its field.
//     router.Router.Lookup lists the shares with those answers
//     (Decision.Shares, §13).
//   - RequestMirror, on the mirror feature (§11.8, match.Mirror with a
//     Backend): a copy of each request goes to an endpoint of the
//     mirrored Service in turn, with the request's Host, path and query,
//     its answer dropped; several filters send several copies, and
//     percent or fraction copies exactly that share of the requests,
//     evenly spread. A mirror whose backendRef is invalid, or whose
//     Service or port does not exist, is dropped with a warning (and
//     ResolvedRefs False on the route) while the rule serves its requests.
//   - timeouts (match.Proxying's RequestTimeout and TryTimeout, router
//     routetimeouts.go): request bounds the whole exchange with the
//     backend from its first try, retries and backoff included, and
//     backendRequest each try from its connection to its response's last
//     byte. One that runs out before the response head answers 504 (a
//     try's is retried under the rule's retry), after it the client's
//     connection is cut; "0s" keeps the router's. The time the client
//     takes to send the request head is not counted (the API allows
//     starting once the request was received).
//   - The URLRewrite filter, as a route rewrite (§11.1, match.Rewrite):
//     hostname sets the Host the backend receives; ReplaceFullPath
//     replaces the path, ReplacePrefixMatch (PathPrefix matches only) the
//     matched leading segments, the rest and the query following, as the
//     API's table says for URLRewrite and RequestRedirect alike: an empty
//     replacement leaves the rest ("/foo/bar" → "/bar", "/foo" → "/"), a
//     trailing slash after the prefix is kept and none is doubled
//     (compile/gatewayapi's case file gateway-replace-prefix). Values are
//     literal text: a "$" is sent as written, no variable expands
//     (gateway-literal-dollar). A hostname that is not a host name, a
//     path not beginning with "/" or a prefix replacement on another
//     match type warns RuleRejected and the rule's requests answer 500.
//   - RequestHeaderModifier and ResponseHeaderModifier, as the route's
//     snippet steps (§11.9, which edit headers both ways whether or not
//     snippet annotations are allowed): set replaces, add appends
//     ",value" to a present request header and adds a response header
//     line, remove clears. Values are literal text, a "$" sent as written.
//     An empty value or a name that is not a token warns RuleRejected and
//     the rule's requests answer 500.
//   - RequestRedirect, as a snippet return (§11.9) before the backend is
//     looked at, so a redirect rule needs no backendRefs: scheme,
//     hostname and port replace the request's ($scheme, $host; a port is
//     written unless it is the scheme's default; without scheme and port
//     the listener's port is kept), ReplaceFullPath the path and ReplacePrefixMatch
//     the matched segments, keeping the query; otherwise the request's
//     path and query follow as received. statusCode 301, 302 (default),
//     303, 307 or 308. The path is literal text, a "$" written as it is.
//     Combined with URLRewrite, or with "?" or "#" in the path, it warns
//     RuleRejected and the rule's requests answer 500.
//   - The CORS filter, as the route's CORS policy in its Gateway form
//     (match.CORS with Gateway set, compile.CORSFilter; the ingress-nginx
//     form of §11.6 is unchanged): only a request with an Origin
//     qualifies; an allowed origin is scheme://host[:port], the port the
//     scheme's default (80, 443) when not written on either side, its host
//     "*" (any) or beginning with "*." (any number of labels), compared
//     without regard to ASCII case; allowOrigins "*" allows every origin.
//     Access-Control-Allow-Origin always echoes the request's Origin (the
//     API requires it with allowCredentials and allows it without), with
//     Vary: Origin. A preflight (OPTIONS with Origin and
//     Access-Control-Request-Method) is answered 204 by the router before
//     anything else of the route, with Allow-Origin, Allow-Methods (the
//     list joined with ", ", or for "*" the requested method, none when
//     none was asked), Allow-Headers (likewise with
//     Access-Control-Request-Headers), Expose-Headers,
//     Allow-Credentials: true when allowCredentials is, and Max-Age
//     (maxAge, else 5), or, for an origin not allowed, with none of them
//     (router.ReasonCORSPreflightDenied) and never proxied. Any other
//     request of an allowed origin is proxied and its answer gets
//     Allow-Origin, Allow-Credentials and Expose-Headers; a request of
//     another origin is served as without the filter. A value the API
//     refuses ("*" beside other origins, methods or headers, a method not
//     in its list, a name that is not a token, exposeHeaders "*" with
//     allowCredentials) warns RuleRejected and the rule's requests answer
//     500, as for every rule filter refused here: the API does not let a
//     filter that cannot be applied be skipped, and the requests must not
//     fall through to another rule that lacks it. A new
//     digest part ("cors-gateway") covers the form, so other tables keep
//     their digest.
//   - Filters on a backendRef: RequestHeaderModifier and
//     ResponseHeaderModifier, URLRewrite and RequestRedirect, once each,
//     apply to the requests the rule's split sends to that backend only,
//     after the rule's own (match.Alternative, applied when the split
//     chooses the backend; a rule with one such backend is a split of
//     one): the header edits on the request and its answer; the rewrite
//     as the rule's is made (its ReplacePrefixMatch needs PathPrefix
//     matches), the request-target or Host it sets replacing what the
//     rule's set; the redirect, built per match as the rule's is, answers
//     the backend's share (Record.Reason "backend-redirect") whether or
//     not it has endpoints, with the rule's response header edits and its
//     own. RequestMirror, as often as given, copies the requests sent
//     to that backend only (match.Alternative.Mirrors), after the rule's
//     mirrors, as the rule's does: its share, an invalid or missing
//     mirror Service dropped with a warning (and ResolvedRefs False), the
//     backend served without it; on a GRPCRoute it is not served, as the
//     rule's is not. An invalid value (as for the rule's filters, a
//     mirror's share above one included) makes that backend's share
//     answer 500 with a RuleRejected warning; any other filter type on a
//     backendRef (CORS, ExtensionRef) warns GatewayFeatureUnsupported and
//     its share answers 500, as the API leaves their support to the
//     implementation. The table's text lists them under "split <i>
//     only:"; digest parts of their own ("weighted-backend-filters",
//     "weighted-backend-actions", "weighted-backend-mirrors") cover them.
//   - A Service port's appProtocol, for the backends HTTPRoutes send to:
//     kubernetes.io/h2c is dialled with HTTP/2 prior knowledge over
//     cleartext (match.H2C, the router's h2c transport that gRPC backends
//     use too), kubernetes.io/ws, http and none with HTTP/1.1, which
//     carries WebSocket upgrades; any other value warns BackendUnsupported
//     on the Service's spec.ports[i].appProtocol and is dialled with
//     HTTP/1.1, and the route's ResolvedRefs is False with
//     UnsupportedProtocol, as the API asks (its share is still dialled,
//     where the API would answer 500: the port may speak HTTP/1.1 after
//     all, and the warning names it). A backend an Ingress serves keeps the protocol the
//     Ingresses decide (ingress-nginx reads no appProtocol), an h2c port
//     there warning on the HTTPRoute's backendRef, and a GRPCRoute's is
//     dialled as gRPC.
//   - Listener TLS: an HTTPS listener's tls.certificateRefs (core Secrets
//     of type kubernetes.io/tls; in another namespace only with a
//     ReferenceGrant there from Gateways of the Gateway's namespace) are
//     served on the TLS listener by SNI for the listener's hostname, or,
//     when it has none, for the hostnames of the routes attached to it
//     that no more specific listener on the port takes (that one's
//     certificate serves them) and then for every server name (and a ClientHello without one) no other
//     certificate serves, before the default certificate (match.AnyName)
//     (compile.ListenerCertificate, set by gatewayapi.TranslateAll in
//     compile.Snapshot.ListenerCertificates). A host an Ingress's spec.tls
//     lists keeps the Ingress's certificate (§12); among listeners the
//     oldest Gateway's wins. A refused reference warns RefNotPermitted, or
//     GatewayFeatureUnsupported for another kind, naming the Gateway and
//     spec.listeners[i].tls.certificateRefs[j]; a missing or invalid
//     Secret warns as for an Ingress (SecretNotFound, SecretInvalid), and
//     one not valid for a host it is offered for warns
//     CertificateHostMismatch (the host gets another, else the default). A
//     listener certificate does not make its hosts TLS hosts: plain HTTP
//     to them is not redirected (the Gateway says what plain HTTP gets).
//   - GRPCRoute v1 on the same listeners and table (Objects.GRPCRoutes;
//     the manifest loader reads kind GRPCRoute v1). A gRPC call is an
//     HTTP/2 POST to /<service>/<method>, served over TLS (ALPN h2) on
//     HTTPS listeners and over h2c with prior knowledge on HTTP ones, so
//     a method match is a path match (compile.GRPCMethodMatch): an Exact
//     service and method is the Exact path /service/method, an Exact
//     service alone the Prefix /service, and a method alone,
//     RegularExpression service and method (RE2, whole name,
//     case-sensitive: match.CompileCaseSensitiveRegex) and a rule without a
//     method match are Regex routes ranked by the characters of service,
//     then method they match. With the table's own order (Exact, Prefix,
//     Regex) this is the GRPCRoute precedence: characters of the matching
//     hostname, of service, of method, then more header matches, then the
//     oldest route, namespace/name and rule order. Header matches (Exact,
//     RegularExpression; of several with one name the first) are the
//     route's conditions, as an HTTPRoute's. backendRefs are weighted and
//     checked as an HTTPRoute's (ReferenceGrants from GRPCRoutes), and
//     each backend a GRPCRoute sends to is dialled as gRPC (cleartext
//     HTTP/2, the backend-protocol GRPC path, §8) unless an Ingress
//     serving it decides otherwise (GRPC or GRPCS kept; any other warns
//     AnnotationConflict on the GRPCRoute, and its calls answer 502).
//     Filters RequestHeaderModifier, ResponseHeaderModifier and
//     RequestMirror (with its percent or fraction) as an HTTPRoute's; a
//     mirrored copy is a gRPC call of its own to the mirror Service (HTTP/2
//     as that Service is dialled, the call's path and the client's
//     headers), fed the call's body as it streams to the backend through a
//     bounded buffer: a copy that falls behind past it, or whose call ends
//     before its body did, is abandoned (router.Stats.MirrorsDropped), one
//     whose exchange fails counts in MirrorsFailed, and the call itself is
//     never slowed; its answer and trailers are ignored. ExtensionRef, or
//     one type twice (RequestMirror excepted), is refused with a warning (a
//     rule's calls then answer an error, as an HTTPRoute rule's do). On a
//     backendRef the header modifiers and RequestMirror are served as on an
//     HTTPRoute's, for the calls sent to that backend only; any other
//     filter there refuses that backend's share, as an HTTPRoute's does. An
//     HTTPRoute and a GRPCRoute on one listener whose hostnames intersect:
//     the older (then the first by namespace/name) is served there, the
//     other warns RouteKindConflict and is not accepted (reason
//     RouteKindConflict). A call no route takes answers grpc-status 12
//     (UNIMPLEMENTED), a trailers-only answer (§13). Status as for an
//     HTTPRoute, except that a match ramjet cannot read (an unknown type,
//     an Exact name that is not a gRPC name, a pattern that does not
//     compile) makes the route Accepted False with reason
//     UnsupportedValue, as the GRPCRoute API asks; listeners list
//     HTTPRoute and GRPCRoute in supportedKinds (those allowedRoutes
//     names), and one whose allowedRoutes.kinds leaves GRPCRoute out does
//     not attach it (NotAllowedByListeners).
//   - Listeners that conflict (one port under two protocols, or one port
//     and hostname twice) are both left out, with Conflicted status.
//   - TLSRoute, on listeners with protocol TLS and tls.mode Passthrough:
//     a TLS connection's server name (SNI) is matched against the
//     TLSRoutes' hostnames, intersected with the listener's as for an
//     HTTPRoute (an exact name, then the wildcard with more labels, any
//     depth below it, then a route without hostnames under a listener
//     without one), and the connection is spliced, TLS and all, to an
//     endpoint of one of the route's backendRefs, chosen by weight in the
//     rotation of match.Split; ramjet never terminates it
//     (compile.TLSRoute, match.PassthroughRoute,
//     router.Router.PassthroughFor, which ssl-passthrough (§12) goes
//     through too). A TLS listener shares its port with the HTTPS
//     listeners there, both beginning with a TLS handshake: the listener
//     whose hostname the server name matches most specifically decides
//     whether the connection is passed through or terminated, so an HTTPS
//     listener "www.example.com" keeps its name beside a TLS listener
//     "*.example.com", and a TLS listener "*.example.com" takes
//     "a.example.com" from an HTTPS listener without a hostname (the
//     route's host is left out and warns, as below). A connection refused: one whose name the TLS
//     listener takes but no route of it does, one whose chosen backendRef
//     is invalid (its share, as for an HTTPRoute's 500) or has no ready
//     endpoint, and one no listener on the port accepts when no Ingress
//     serves the name. Every listener serves the Ingresses' hosts: one
//     that names the server name more specifically than the TLS
//     listener's route (or the listener, without one) keeps it, and is
//     terminated as before. Of two
//     TLSRoutes naming one hostname on one listener the older keeps it
//     (RouteConflict); a TLSRoute's rules beyond the first, which match
//     nothing of their own, warn and are left out. The example controller
//     serves TLS listeners on --gateway-https-port, through its
//     -https-addr listener, which reads a connection's ClientHello first
//     only while the table passes some connection through. Each Gateway
//     port maps to one listener of the controller, and TLS is read on the
//     HTTPS one alone: a TLS listener on another port, the plain-HTTP
//     one included, is not served (Accepted False, PortUnavailable, the
//     message naming the ports served) and its TLSRoutes are not
//     attached; a data plane that listened on each Gateway port would
//     serve it, and router.Options.GatewayPorts can map more ports. A TLS listener whose port and
//     hostname a served HTTPS listener of another Gateway has is
//     Conflicted (HostnameConflict): Gateways share the controller's
//     ports, and the HTTPS listener keeps its names. Status: the listener
//     lists TLSRoute in supportedKinds (InvalidRouteKinds for any other
//     kind) and counts its TLSRoutes in attachedRoutes; each TLSRoute
//     parentRef of ours gets Accepted (False: NoMatchingParent,
//     NotAllowedByListeners for an HTTP, HTTPS, TCP or UDP listener or
//     allowedRoutes without TLSRoute, NoMatchingListenerHostname) and ResolvedRefs
//     (False: BackendNotFound, InvalidKind, RefNotPermitted, the
//     ReferenceGrant naming kind TLSRoute). A TLS listener in tls.mode
//     Terminate (the Extended feature TLSRouteModeTerminate) is not
//     served: its listener is Accepted False, reason UnsupportedValue,
//     and the Gateway warns GatewayFeatureUnsupported on
//     spec.listeners[i].tls.mode; HTTPS listeners are where ramjet
//     terminates TLS, and a terminated TLSRoute would be an HTTPS route
//     without HTTP. Terminate and Passthrough TLS listeners on one port
//     conflict (ProtocolConflict), as the suite asks of an implementation
//     without TLSRouteModeMixed. The table's text lists the listeners and
//     routes ("tls-listener", "tls-route" lines) and a new digest part
//     covers them, so tables without TLSRoutes keep their digest.
//   - Status, decided by package status from what TranslateAll found
//     (status.GatewayConditions, status.RouteParentConditions) and written
//     by the leader of the example controller, only where it changed:
//     GatewayClass Accepted; Gateway Accepted (reason ListenersNotValid
//     when a listener is not valid; False when none is) and Programmed,
//     and status.addresses from the Ingresses' published addresses (§16;
//     left as they are while none is known); per listener Accepted (False:
//     UnsupportedProtocol; PortUnavailable for a port and protocol no
//     request arrives on, gatewayapi.Objects.Ports, whose routes are then
//     not attached), Conflicted (HostnameConflict,
//     ProtocolConflict), ResolvedRefs (False: InvalidCertificateRef,
//     RefNotPermitted, InvalidRouteKinds), Programmed (False: Invalid, for
//     a conflicted listener or one without its certificate),
//     OverlappingTLSConfig (True only, OverlappingHostnames: an HTTPS
//     listener whose hostname a wildcard of another on the port matches,
//     or the reverse), supportedKinds and attachedRoutes; per HTTPRoute parentRef naming a
//     Gateway of ours, an entry of status.parents with Accepted (False:
//     NoMatchingParent, NotAllowedByListeners, NoMatchingListenerHostname,
//     UnsupportedValue for a value outside the API's enums: a match,
//     filter or path modifier type, a redirect scheme or status code, a
//     method; and for ReplacePrefixMatch beside a match that is not
//     PathPrefix, and when compile refuses every rule,
//     compile.RefusedRules, IncompatibleFilters when each is refused for
//     RequestRedirect beside URLRewrite; True lists
//     what is not served (a match compile refuses among them), and
//     PartiallyInvalid, "Dropped Rule", names the rules compile refuses,
//     whose requests answer 500 (a filter the translation does not serve,
//     compile.HTTPRouteRule.Refused, among them), or whose every match it
//     refuses) and
//     ResolvedRefs (False:
//     BackendNotFound, RefNotPermitted, InvalidKind; the first decides the
//     reason, the message lists all). Other controllers' entries stay. A
//     condition keeps its lastTransitionTime while its status holds, and
//     observedGeneration is the object's generation, so a resync or a
//     rebuild that changes nothing writes nothing.
//
// Not served yet, each refused with a warning naming the field
// (GatewayFeatureUnsupported unless said otherwise): header and query
// parameter match types other than Exact and RegularExpression (the match
// is left out); the filters ExternalAuth and ExtensionRef,
// or one filter type twice (RequestMirror excepted), on a rule (the
// rule's requests answer 500: the API does not let a filter that cannot
// be applied be skipped, and they must not reach another rule without it)
// and filters on a backendRef other than the header modifiers, URLRewrite,
// RequestRedirect and RequestMirror (on a GRPCRoute's, other than the
// header modifiers and RequestMirror: that
// backend's share answers 500, for the same reason, and is not handed to
// the other backends); a Gateway's
// client certificate validation (spec.tls.frontend: the HTTPS listeners
// it applies to are not accepted, UnsupportedValue, rather than served to
// clients without a certificate; with AllowInsecureFallback they are
// served without asking for one); a Gateway's
// infrastructure.parametersRef (ramjet reads no parameters: the Gateway is
// not accepted, InvalidParameters, and serves nothing, as the API asks),
// and a GatewayClass's spec.parametersRef (the class is not accepted,
// InvalidParameters, nor are its Gateways, which serve nothing);
// a Gateway's spec.addresses of a type other than IPAddress and Hostname
// (not accepted, UnsupportedAddress, and serves nothing, as the API
// asks); requested IPAddress and Hostname addresses, which ramjet does not
// assign (the Gateway is served on the controller's addresses and is
// Programmed False, AddressNotUsable, naming those not among them); its
// client certificate for backends (spec.tls.backend), listener tls.options, ListenerSets
// (spec.allowedListeners from other than None) and a default Gateway's
// spec.defaultScope, which change nothing and warn naming the field.
// An Ingress sharing a wildcard host with an HTTPRoute matches any depth
// there too (§3).
// Not served by design: Gateways on addresses of their own. ramjet is one
// data plane, as ingress-nginx is, and serves every Gateway of its class
// on the controller's ports and address (the API lets an implementation
// merge Gateways onto one set of addresses); a Gateway's status lists
// that address. Two Gateways whose listeners share a port and hostname
// therefore serve their routes together, and routes with the same key
// conflict by the tie-break above (RouteConflict names the winner), where
// the suite's httproute-multiple-gateways gives each Gateway an address
// and wants each one's catch-all "/" served on it: that one request is
// not served. Listener hostname precedence spans them too: a listener
// of one Gateway with a more specific hostname takes that host from the
// routes of another's, which warn GatewayFeatureUnsupported naming both
// Gateways, their listeners and the host (their Accepted message lists
// it), unless attached there as well. Telling Gateways apart by address would take a listener,
// Service and address per Gateway, that is a data plane per Gateway; a
// cluster that wants two addresses runs two ramjet controllers, each
// serving its own Gateways.
// A rule's retry is match.Retry on its routes (router retry.go): a try
// answered with one of codes, or that failed before its response head
// (refused, broken, timed out), is sent again, at most attempts times
// (default 1) after the first, backoff after the failure, to an endpoint
// of the backend not tried yet or, when all were, to the last one; any
// method, its body sent again whole when the router read it first (in
// memory or its temporary file), a streamed one (proxy-request-buffering
// off, a gRPC call) only while no try began to send it; the last answer is
// the client's. It replaces proxy-next-upstream's rule on those routes.
// A rule's sessionPersistence is the session affinity of §9 on its
// backend (compile.HTTPRouteRule.Affinity): a cookie named sessionName
// (else INGRESSCOOKIE) that pins a session to its endpoint (persistent
// mode), Max-Age its absoluteTimeout for a Permanent cookie; the rule's
// routes set it, other routes to that backend follow it and set none; an
// Ingress's affinity on the backend, or an older route's, decides, and a
// different one warns AnnotationConflict. Header-based persistence, a
// Session cookie's absoluteTimeout and a rule split among several
// backends are served without it, warned.
//
// Conformance: each HTTPRoute and GRPCRoute test of the suite
// (sigs.k8s.io/gateway-api/conformance/tests/<test>.go, v1.6.3) is a case
// file, compile/gatewayapi/testdata/cases/<test>.yaml, citing it, with the
// suite's manifests; its notes name the test's features and count the
// requests not served yet, each listed in a comment. What a case file
// cannot show is a Go test beside them (conformance_test.go), counted in
// the notes too: the copies a mirror receives and a mirror's share, a
// backend slower than a timeout, a ReferenceGrant deleted mid-test, a
// WebSocket conversation, an HTTP/2 request with prior knowledge to an
// h2c-only backend (TestConformanceBackendH2C), the header each of 100
// split requests carries to its backend (TestConformanceBackendHeaders),
// and the conditions of the tests that check
// status only (their case files check what the routes serve).
// The suite's TLSRoute tests are Go tests (tlsroute_conformance_test.go):
// the connections of tlsroute-simple-same-namespace,
// tlsroute-hostname-intersection (each Gateway on an address of its own,
// as the suite gives it), tlsroute-invalid-backendref-nonexistent,
// -unknown-kind and tlsroute-invalid-reference-grant are made to loopback
// TLS backends through the router's passthrough decision and splice
// (TestConformanceTLSRoutePassthrough), and the route and listener
// conditions of these and of tlsroute-invalid-no-matching-listener,
// -no-matching-listener-hostname, tlsroute-listener-passthrough-supported-kinds,
// -terminate-not-supported and -mixed-termination-not-supported are
// checked (TestConformanceTLSRouteStatus). Not served, as argued above:
// tlsroute-terminate-simple-same-namespace,
// tlsroute-mixed-termination-same-namespace and
// tlsroute-listener-terminate-supported-kinds, which need
// TLSRouteModeTerminate.
// TestFeatureReport renders this from them and fails when a case file
// fails:
//
// 58 suite tests are case files: 287 of their requests pass (11 of them
// checked in part, 19 checked by Go tests beside the case files) and 1
// are not served yet.
// The suite's features these tests cover, each passing in every
// request of its tests that is served:
//
//   - GRPCRoute (Core): 5 tests
//   - GRPCRouteNamedRouteRule (Extended): 1 test
//   - Gateway (Core): 58 tests, 11 requests checked in part, 19 requests checked by Go tests, 1 request not served yet
//   - GatewayHTTPSListenerDetectMisdirectedRequests (Extended): 1 test
//   - GatewayPort8080 (Extended): 1 test
//   - HTTPRoute (Core): 53 tests, 11 requests checked in part, 19 requests checked by Go tests, 1 request not served yet
//   - HTTPRoute303RedirectStatusCode (Extended): 1 test
//   - HTTPRoute307RedirectStatusCode (Extended): 1 test
//   - HTTPRoute308RedirectStatusCode (Extended): 1 test
//   - HTTPRouteBackendProtocolH2C (Extended): 1 test, 1 request checked by Go tests
//   - HTTPRouteBackendProtocolWebSocket (Extended): 1 test, 1 request checked by Go tests
//   - HTTPRouteBackendRequestHeaderModification (Extended): 1 test, 1 request checked by Go tests
//   - HTTPRouteBackendTimeout (Extended): 1 test, 2 requests checked by Go tests
//   - HTTPRouteCORS (Extended): 1 test
//   - HTTPRouteDestinationPortMatching (Extended): 1 test
//   - HTTPRouteHostRewrite (Extended): 1 test
//   - HTTPRouteMethodMatching (Extended): 1 test
//   - HTTPRouteNamedRouteRule (Extended): 1 test
//   - HTTPRouteParentRefPort (Extended): 2 tests
//   - HTTPRoutePathRedirect (Extended): 1 test
//   - HTTPRoutePathRewrite (Extended): 1 test
//   - HTTPRoutePortRedirect (Extended): 2 tests
//   - HTTPRouteQueryParamMatching (Extended): 1 test
//   - HTTPRouteRequestMirror (Extended): 2 tests, 4 requests checked in part
//   - HTTPRouteRequestMultipleMirrors (Extended): 1 test, 2 requests checked in part
//   - HTTPRouteRequestPercentageMirror (Extended): 1 test, 3 requests checked in part
//   - HTTPRouteRequestTimeout (Extended): 1 test, 2 requests checked by Go tests
//   - HTTPRouteResponseHeaderModification (Extended): 1 test, 4 requests checked in part
//   - HTTPRouteRetry (Extended): 1 test, 11 requests checked by Go tests
//   - HTTPRouteSchemeRedirect (Extended): 1 test
//   - ReferenceGrant (Core): 4 tests, 1 request checked by Go tests
//
// # 21. Admission
//
// compile.Reviewer judges an Ingress about to be created or changed
// against a snapshot, as the controller's validating webhook
// (--validating-webhook) does with the snapshot of the last table it
// published: NewReviewer indexes the snapshot once, and Review compiles
// the Ingress, replacing its old version, with the claimed Ingresses that
// share a host (its rules' and TLS hosts, their www twins, its
// server-alias names, the wildcards covering them, the catch-all) or a
// Service with it. Of those sharing only a Service, alike in what decides
// a shared backend (annotations, backends, paths, the kind of host; a
// thousand tenants' Ingresses on one Service, say), the first two in
// order stand for all, as the oldest that asks decides a backend's
// settings. Review.Warnings are the compile's warnings about the
// Ingress, exactly those of compiling the whole snapshot with it (a test
// reviews every Ingress of every case file, and a new copy of each, both
// ways). ReviewRoute does the same for an HTTPRoute or GRPCRoute, and
// ReviewTLSRoute for a TLSRoute (with the translation's passthrough
// listeners and the other TLSRoutes, whose older claim on a hostname
// warns RouteConflict); the webhook reads TLSRoutes in v1, v1alpha3 and
// v1alpha2.
//
// Review.Refusal is set exactly where ingress-nginx v1.15's webhook
// refuses (compile.NginxRefusal, then its host/path check), with its
// message (but for a too-risky annotation, where ramjet names the key and
// both risk levels and ingress-nginx only the annotation group): the deep inspector's patterns in a host, path or TLS Secret
// name; with strict-validate-path-type (on by default) an Exact or Prefix
// path outside [A-Za-z0-9._/-]; a word of annotation-value-word-blocklist
// in an nginx.ingress.kubernetes.io/ value; any *-snippet annotation while
// allow-snippet-annotations is off; an nginx annotation (or a key without
// a prefix spelling its name) riskier than annotations-risk-level (snippets are Critical, the default level
// High); a value its validator refuses, for the keys whose parser passes
// the refusal on (load-balance, upstream-hash-by, default-backend, the
// redirects, server-alias, limit-rps, ...; a timeout that does not parse
// only falls back to its default there, and is admitted); and a host and
// path string (whatever the path types) another stored Ingress already
// serves, unless exactly one of the two carries canary "true"
// (ingress-nginx compares the annotation's presence, so canary "false"
// admits). An Ingress ingress-nginx would not store (its annotations
// refused, its deep inspector's patterns found, or a word of the
// blocklist in an nginx value) owns no path. Another
// class's Ingress is not reviewed at all (ingress-nginx's deep inspector
// looks at those too). With
// --admission-reject-severity the controller also refuses warnings of that
// severity or worse (compile.Warning.SeverityFor).
//
// # 22. TCP and UDP services
//
// ingress-nginx's --tcp-services-configmap and --udp-services-configmap
// name ConfigMaps whose entries expose Services on raw ports:
//
//	"<port>": "<namespace>/<service>:<port>[:PROXY][:PROXY]"
//
// compile.Options.TCPServices and UDPServices name them ("namespace/name"
// of a ConfigMap among Snapshot.ConfigMaps); each entry becomes a
// match.L4Service of the table (Table.L4Services, Table.L4Service), with
// the table's digest (an optional part: a table without them keeps its
// digest) and text ("l4 tcp 5432 -> db/postgres:5432 Serving ..." lines
// after the certificates, then one "l4-settings" line). Read as
// ingress-nginx's getStreamServices reads them:
//
//   - The key is the port listened on, in decimal, 1–65535; a port in
//     Options.ReservedPorts (the embedder's own listeners) is refused, as
//     ingress-nginx refuses its own; of two keys naming one port ("9000",
//     "09000") the first in key order serves.
//   - The Service port is matched by number when the entry gives one,
//     else by name, among the Service's ports of the ConfigMap's protocol
//     (unset is TCP), so "kube-system/kube-dns:53" in the UDP ConfigMap is
//     the UDP port 53. Endpoints come from the EndpointSlice port of that
//     name and protocol, with §8's readiness, duplicate and address rules
//     (an endpoint that can never be a pod warns EndpointRejected).
//   - The third part "PROXY" (any case) makes every connection start with
//     a PROXY protocol header (v1 or v2) giving the client's address (as
//     nginx reads it, a v2 header other than the PROXY command over TCP,
//     such as LOCAL, UNSPEC, UDP or unix, gives none and the peer stays
//     the client); the fourth, in an entry of exactly four parts, sends a v1 header naming
//     the client to the backend. "ns/svc:80::PROXY" sends without
//     decoding. Both apply to TCP only; in the UDP ConfigMap, and a part
//     that is not "PROXY" or follows the fourth, they are ignored as
//     ingress-nginx ignores them, with L4ServicePartIgnored.
//   - A malformed key or value (not "namespace/service:port", a namespace,
//     name or port the API server would refuse) warns L4ServiceRejected on
//     the entry's data[key] and only that entry is left out. A missing
//     ConfigMap warns L4ServicesNotFound.
//   - A missing Service or port warns ServiceNotFound or
//     ServicePortNotFound on the entry, an ExternalName Service
//     ExternalNameUnsupported (as §8). Unlike ingress-nginx, which then
//     drops the entry (and so stops listening on its port), the entry stays
//     in the table with that state and no endpoints: its port is listened
//     on from the start and its connections are closed until the Service
//     comes, with no restart.
//   - Balancing is round-robin (ingress-nginx's stream balancer knows no
//     other), through the balance package like an HTTP backend's: the
//     backend's ID is ingress-nginx's upstream name
//     ("tcp-<namespace>-<service>-<port>"), and a connection (or UDP
//     session) counts as in flight on its endpoint's address for as long as
//     it lasts, shared with HTTP requests to that address (§9).
//
// The ConfigMap's proxy-stream-* keys set match.StreamSettings, which
// every service follows, with ingress-nginx's defaults: proxy-stream-timeout
// (600s: a connection or UDP session idle that long both ways is closed),
// proxy-stream-next-upstream (on), -next-upstream-tries (3) and
// -next-upstream-timeout (600s) (a failed dial goes on to another
// endpoint within those bounds; 0 no bound), proxy-stream-responses (1:
// a UDP session ends once each datagram sent got that many back). A bare
// number is seconds, as nginx reads it. The connect timeout is nginx's
// stream default, 60s, which ingress-nginx does not change.
//
// The listeners are the example controller's (examples/controller, README
// "TCP and UDP services"): one TCP and one UDP listener per port, bound when
// the first table is published, on the host of -http-addr. A port that
// appears in a later table warns that a restart is needed, as
// ingress-nginx reloads nginx for it; one that disappears closes new
// connections at once until the restart, and its open TCP connections
// after worker-shutdown-timeout, as long as nginx's old workers serve
// theirs after the reload that drops the port. TCP connections are spliced
// (splice(2) on Linux: no copy through user space, no allocation per
// read); with the PROXY protocol from clients a header must come within
// 30 s (nginx's stream proxy_protocol_timeout) and whole in the first read,
// as nginx reads it (one cut across segments is a bad request, closed at
// once), and its source is the
// client's address when the peer is trusted by -proxy-real-ip-cidr
// (none given: every peer, ingress-nginx's default 0.0.0.0/0).
// ingress-nginx sends the backend the client address of a decoded header
// only with enable-real-ip; ramjet always does (§19), and an entry that
// both decodes and sends warns L4ServiceDiffers unless the ConfigMap sets
// enable-real-ip. A half-closed connection stays open the other way (nginx's
// proxy_half_close off closes both). UDP datagrams are relayed per client
// address through a session of their own, answers sent back from the
// listening socket, read and written in batches (recvmmsg and sendmmsg
// on Linux) with no allocation per datagram; the session table is bounded
// (-udp-max-sessions): at the bound a new client address takes the place
// of a session with no exchange in progress (nginx's session ends with
// its answers), and a flood of new addresses while every session has one
// is dropped rather than growing memory. Every rebuild's endpoints apply to
// new connections and sessions; those already open keep theirs. On
// shutdown the listeners stop accepting when the drain period ends and
// open connections get the shutdown timeout to finish.
//
// # 23. Tracing and observability
//
// OpenTelemetry tracing is configured as ingress-nginx v1.15 configures
// it, and compiled into the table as a location setting
// (match.Location.Tracing, its own digest part; the table's text shows
// "tracing trust-incoming-span on|off [operation-name "…"]" under each
// traced route and fallback):
//
//   - The ConfigMap's enable-opentelemetry traces every location, the
//     default server's included; an Ingress's enable-opentelemetry
//     annotation turns its own locations on or off over it (without the
//     key, only the Ingresses that say "true" are traced, where
//     ingress-nginx's module, loaded for them, traces every location:
//     AnnotationSubstituted on each, kubernetes/ingress-nginx#10966).
//   - opentelemetry-trust-incoming-span (ConfigMap, default true; and
//     annotation) says whether a valid incoming traceparent (with its
//     tracestate; the first line of each, as the module's propagator
//     reads them) is the span's parent; of its flags only sampled is
//     kept, as the module's SDK passes on no other. Untrusted, the span
//     starts a trace of its own and the client's trace headers are
//     replaced.
//   - opentelemetry-operation-name names the span: the annotation's
//     (letters, digits, '_' and '-': another value under
//     nginx.ingress.kubernetes.io/ makes ingress-nginx ignore the whole
//     Ingress, and ramjet withholds it too; under ramjet.dev/ it is
//     rejected alone), else the ConfigMap's, which may hold the variables
//     a ConfigMap header value takes ("HTTP $request_method $service_name
//     $uri", expanded once the answer is written), else the nginx
//     location's own name (match.LocationSpanName): "/api/" for a
//     request under the prefix /api, "/api" for /api itself (the exact
//     location ingress-nginx adds beside each prefix), the path of an
//     Exact route, "^" and the pattern on a host in regex mode, "/" for
//     the fallback. A request an error page answers (custom-http-errors)
//     ends its span named as ingress-nginx's @custom_<upstream>_<code>
//     location that serves the page ("@custom_upstream-default-backend_404",
//     "@custom_custom-default-backend-<namespace>-<name>_404" for an
//     Ingress's default-backend), or by the ConfigMap's name alone, with
//     $uri "/" as that location's rewrite leaves it: the module names the
//     span as it ends, in that location.
//   - As ingress-nginx's parser does, the trust and name annotations are
//     read only with enable-opentelemetry "true" on the same Ingress;
//     otherwise they warn AnnotationRejected and change nothing.
//
// The router makes one server span per request to a traced location
// through router.Options.Tracer, an interface of two methods the
// embedder adapts to a tracing SDK: the library has no OpenTelemetry
// dependency, and the example controller adapts OpenTelemetry's SDK with
// an OTLP/gRPC exporter (its README lists the exporter keys:
// otlp-collector-host and -port, otel-service-name, otel-sampler,
// otel-sampler-ratio, otel-sampler-parent-based, otel-max-queuesize,
// otel-schedule-delay-millis, otel-max-export-batch-size). A Tracer that
// is also a router.SpanRestarter is handed back, for a later request, a
// span that ended, kept with the router's pooled state of the request,
// and starts the new span in its record: a traced request then takes one
// pooled object, not one of the router's and one of the tracer's (the
// example controller's does). The span has
// the attributes ingress-nginx's module sets (http.method, http.flavor,
// http.target, http.server_name, http.host, http.user_agent,
// http.status_code, http.scheme, net.host.port, net.peer.ip,
// net.peer.port; http.target is $request_uri, http.server_name a
// wildcard host's server block name, the regex ingress-nginx writes
// for it, http.host the Host field as sent, $http_host, also beside an
// absolute-form target when router/h1 read the request) and the status Error for an answer of 500 or more. Its
// W3C context (traceparent, and tracestate when there is one) goes to
// the backend, in place of the client's, as the module's
// proxy_set_header sets it: the router's steps between, an
// Options.Hook among them, see the client's headers. The external auth
// service (auth-url) gets neither header: ingress-nginx's auth location
// propagates the subrequest's own context, which the module never makes
// (open-telemetry/opentelemetry-cpp-contrib#143), and does so under the
// ConfigMap's enable-opentelemetry also for a location its Ingress turns
// off (match.ExternalAuth.NoTraceContext). The error backend and
// a mirror get the client's as received, as ingress-nginx's @custom_ and
// mirror locations propagate none. An answer made before any location (a www or app-root
// redirect, a request that cannot be routed) is not traced, as nginx's
// module starts its span in the location, nor is the 413 of a declared
// body length over the limit, which nginx answers before the location's
// rewrite phase. Without a Tracer, or on a
// location that is not traced, a request costs nothing more and its
// trace headers pass through untouched.
//
// Metrics and the access log (the example controller):
//   - Metric names and labels are ingress-nginx v1.15's
//     (internal/ingress/metric/collectors): besides the request series,
//     nginx_ingress_controller_ssl_expire_time_seconds and
//     ssl_certificate_info per host and certificate of the published
//     table (labels namespace, class, host, secret_name, identifier, and
//     the issuer, serial and key algorithm), orphan_ingress (type
//     no-service or no-endpoint), connect_duration_seconds and
//     header_duration_seconds with the request labels. The connect time
//     is router.Record.UpstreamConnectTime: 0 for a reused connection, as
//     $upstream_connect_time.
//   - The default access log line is ingress-nginx's default
//     log-format-upstream (compile.DefaultLogFormat), every variable
//     filled ($request_length counts the request line, headers and body);
//     log-format-upstream and log-format-escape-json change it.
package ramjet
