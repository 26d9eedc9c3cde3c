// Package router serves a compiled routing table: an http.Handler that
// matches each request against the table being served, answers what the
// table answers itself (the 308 HTTPS redirect, 400, 403, 404, 408, 413,
// 500, 502, 503, 504; a location's request policy, SPEC §11.4–§11.7, included, with
// the CORS preflight's 204 and authentication's 302, 401, 403 and 500) and
// reverse-proxies the rest to one endpoint of the chosen backend, past its
// canary and by its session (SPEC §9, §10, §12, §13, §15).
//
// A Router holds one serving state at a time behind an atomic pointer: the
// table plus one balancer per backend, built once per Publish. A request
// loads that state once and uses it throughout, so it always sees one whole
// table however many tables are published while it runs. Counters (round-robin
// cursors, in-flight counts) live in a balance.Registry that outlives tables.
//
// # Embedding
//
// The Router is an ordinary http.Handler; the embedder owns the listeners
// and servers (see examples/embed):
//
//   - TLS: serve it with Router.TLSConfig(). Certificates come from the
//     table by SNI (exact name, then *.<rest>, then the default) and
//     rotate when a table with new ones is published; the listener is
//     never restarted. HTTP/2 is offered by ALPN.
//   - Cleartext HTTP/2 with prior knowledge (gRPC clients without TLS):
//     set http.Server.Protocols with SetHTTP1(true) and
//     SetUnencryptedHTTP2(true); ServeHTTP needs nothing else.
//   - HTTP/2 by the project's own server (router/h2; its BenchmarkServe
//     takes about a third of net/http's time per small answer): set
//     router/h1.Server.HTTP2, or h2.ConfigureServer on an http.Server.
//   - Put the Router behind your own handler rather than under an
//     http.ServeMux pattern: ServeMux cleans paths and redirects before the
//     Router sees them, and the backend must get the request-target byte
//     for byte. Middleware that wraps the ResponseWriter should implement
//     Unwrap, so that streaming flushes and WebSocket hijacks reach the
//     connection through http.ResponseController.
//   - Call Shutdown with the servers' Shutdown: they stop counting a
//     connection once it is taken over for a WebSocket tunnel, which
//     Shutdown waits for. Call CloseIdleConnections when retiring a Router.
//
// # Answers and failures
//
//   - Plain HTTP to a host under spec.tls (ssl-redirect, on by default), or
//     to any host with force-ssl-redirect, answers 308 to
//     https://<Host without its port><request-target>, one trailing slash
//     dropped unless preserve-trailing-slash; /.well-known/acme-challenge/
//     is never redirected. Plain means req.TLS is nil: X-Forwarded-Proto is
//     trusted only with Options.TrustForwardedProto.
//   - Before that, the table's own redirects are answered (see
//     host_actions.go): a from-to-www-redirect twin's 308, app-root's 302
//     for "/", and a route's permanent-redirect or temporal-redirect.
//   - A backend that cannot be connected to (refused, unreachable, connect
//     timeout, TLS handshake failure) is retried on other endpoints of the
//     same backend, at most 3 tries in all, for idempotent methods only;
//     then 502. A backend that accepted the connection but sent no response
//     headers within Options.ReadTimeout answers 504, as nginx does; any
//     other failure before the response 502. A failure after the response
//     started cuts the client's connection: the status is already sent.
//     Options.ReadTimeout bounds the wait for headers, and then each wait
//     for the next piece of the body, as nginx's proxy_read_timeout does
//     between two reads: a body that stalls that long is cut. A tunnel
//     after 101 is bounded by its two ends.
//   - Answers to gRPC requests (Content-Type application/grpc...) are
//     trailers-only: Content-Type application/grpc, grpc-status mapped from
//     the HTTP status, grpc-message with the reason, no body.
//   - WebSocket and other Upgrade requests are tunnelled once the backend
//     answers 101. Responses of unknown length (chunked, gRPC, server-sent
//     events) are flushed to the client as each piece arrives; one of
//     known length is flushed before each wait for more of it.
//
// # Sizes
//
// What the Router keeps besides the table is bounded, whatever clients
// send:
//
//   - Rate limits (SPEC §11.5): a table of counters per zone, that is per
//     Ingress of the serving table with rate limits, as ingress-nginx
//     gives each its own zones; the zones share Options.RateLimitEntries
//     counters (DefaultRateLimitEntries, 65,536, of 89 bytes each:
//     5.6 MiB), each at least 4,096 (356 KiB), allocated when a request
//     first meets the zone; one Ingress's clients cannot take another's
//     room. It is set-associative: a client address hashes, with a
//     per-Router random seed so that clients cannot aim at one set, to a
//     set of 8 entries under one lock; a new address takes a free entry of
//     its set or the least recently used one without requests in flight,
//     and a request whose set holds only entries with requests in flight
//     answers 503.
//   - Password checks (SPEC §11.7): the outcomes of bcrypt and MD5-crypt
//     checks are cached in 16 shards of 256 entries (4,096 in all,
//     132 KiB), each keyed by the SHA-256 of the stored hash and the
//     password; a new outcome replaces whatever held its slot, except that
//     a failure never evicts a success.
//   - Digest authentication (SPEC §11.7): a challenge keeps nothing. The
//     nonce counts used of each nonce from its first use are kept for 70
//     seconds at most, in a table of 65,536 nonces (about 4 MiB when
//     full) allocated at the first login; when it is full the oldest
//     nonce gives way and every nonce issued before it that the table
//     does not hold answers stale, so a count is never accepted twice.
//     Failed logins are counted for 16,384 client addresses (about
//     1.2 MiB); when that table is full, a new address is not counted
//     until an address's count ends, and an address locked out stays so.
package router

import (
	"cmp"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/netip"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"ramjet.dev/ramjet/balance"
	"ramjet.dev/ramjet/match"
	"ramjet.dev/ramjet/router/configmap"
	"ramjet.dev/ramjet/router/h1"
	"ramjet.dev/ramjet/router/h2"
	"ramjet.dev/ramjet/router/rawsock"
)

// Options configures a Router. The zero value is usable.
type Options struct {
	// Transport carries every proxied request, whatever the backend's
	// protocol; the request's URL scheme is "https" for HTTPS and GRPCS
	// backends. Nil: HTTP backends, and HTTPS ones of locations without
	// match.BackendTLS, go through the Router's own pools of HTTP/1.1
	// keep-alive connections, which exchange each request on the
	// handler's goroutine (the fast path) and read responses as nginx
	// does, and New builds pooled net/http transports for the rest —
	// HTTP/1.1 for HTTPS with match.BackendTLS, cleartext HTTP/2 (h2c)
	// for GRPC, HTTP/2 over TLS for GRPCS. TLS to backends does not verify
	// the certificate, like ingress-nginx's default (proxy-ssl-verify off):
	// backends are addressed by pod IP, which their certificates rarely name.
	// A location with match.BackendTLS (proxy-ssl-*) is dialled as it says,
	// by transports kept per setting; a Transport given here is used as it
	// is for those too.
	// A target starting with "//" that holds a byte RFC 3986 does not allow
	// ('\', '"', non-ASCII) cannot be written byte for byte through a URL;
	// the fast path writes it as received, the built-in HTTPS transport
	// sends it on a connection of its own, while a Transport given here
	// sees it as URL.RequestURI() escapes it. A location's read timeout
	// (ReadTimeout, proxy-read-timeout) bounds the wait for each try's
	// response head through a Transport given here too, from when it
	// reports the request written (httptrace's WroteRequest, as net/http's
	// transports do), beside any bound of the Transport's own (504 either
	// way); its connect and send timeouts are the Transport's. To add to
	// the default rather than replace it, wrap DefaultTransport(o), which
	// says what a Transport given here takes over.
	Transport http.RoundTripper
	// NetHTTP2Client sends calls to GRPC, GRPCS and H2C backends through
	// net/http's HTTP/2 transport rather than router/h2's Client, which
	// the default transports use otherwise: a way back should a backend
	// and the project's client disagree, at about twice the proxy's CPU
	// per unary call. Ignored when Transport is set.
	NetHTTP2Client bool
	// UpstreamKeepalive bounds the default transports' pools of backend
	// connections, whatever the backend's protocol (ingress-nginx's
	// upstream-keepalive-* keys; Connections 0: a connection per request;
	// requests and age bound HTTP backends' connections and the HTTP/2
	// ones of router/h2's client, a call counting as a request). Nil: the
	// keys' ingress-nginx defaults, as an unset ConfigMap has them (320 idle
	// connections per endpoint closed after 60 s idle, each serving up to
	// 10000 requests for up to an hour).
	UpstreamKeepalive *configmap.UpstreamKeepalive
	// Registry holds the counters that outlive tables. Nil: a new one,
	// owned by the Router, which sweeps idle counters of removed backends
	// and addresses after each Publish. Routers may share one; a shared
	// registry is never swept by a Router, since one Router cannot know
	// which counters another still uses.
	Registry *balance.Registry
	// Observer, if set, is called once per request after the answer has
	// been written (access logs, tests). It must be safe for concurrent use.
	Observer func(Record)
	// AuthObserver, if set, is called once per external-auth subrequest
	// (auth-url) after its answer came, with the record nginx's access
	// log writes for ingress-nginx's auth location under
	// enable-auth-access-log (Record.Subrequest). Metrics should not count
	// these: they are not requests a client made. It must be safe for
	// concurrent use.
	AuthObserver func(Record)
	// ReturnRequestID sends the request's X-Request-ID (the client's, or
	// the one generated for it) back to the client as a response header
	// on every answer, the router's own included, so that a user can
	// quote it when reporting a problem. With NoRequestID only the
	// client's is returned: none is made.
	ReturnRequestID bool
	// GatewayPorts maps the local port a request arrived on to the
	// Gateway listener port it is published as (SPEC §20: the controller's
	// HTTP listener on 8080 behind a Service's port 80). A port not in the
	// map is its own Gateway port; a request without a local address is
	// on 443 over TLS, else 80.
	GatewayPorts map[int]int32
	// Hook, if set, runs for every request the table sends to a backend
	// (a route's or a virtual host's fallback), with the table generation
	// the request is then served with (see Hook).
	Hook Hook
	// BodyHook, if set, runs for the same requests later, once a backend
	// without endpoints has answered and before the location's limits,
	// source ranges and authentication: where nginx reads the body for
	// ModSecurity's request-body phase (see Hook).
	BodyHook Hook
	// Logger receives publish events and upstream errors. Nil: slog.Default().
	Logger *slog.Logger
	// DefaultCertificate is served when no table certificate matches the
	// SNI name. Nil: a self-signed one generated by New.
	DefaultCertificate *tls.Certificate
	// ConnectTimeout bounds dialling a backend (and its TLS handshake). 0: 5s.
	ConnectTimeout time.Duration
	// ReadTimeout bounds the wait for a backend's response headers once the
	// request is sent (when it expires the answer is 504), and then each
	// wait for more of the body (when it expires the client's connection
	// is cut), as nginx's proxy_read_timeout. 0: 60s.
	ReadTimeout time.Duration
	// TrustForwardedProto takes the client's scheme from the first value
	// of X-Forwarded-Proto when one is sent, whether or not the connection
	// itself is TLS (a balancer that re-encrypts sends "http" for a
	// plain-HTTP client, which is then redirected): set it only behind a
	// load balancer that terminates TLS and sets (never passes on) that
	// header, like ingress-nginx's use-forwarded-headers. Off, anyone could
	// skip the HTTPS redirect by sending the header, so only req.TLS counts.
	// With it X-Forwarded-Host (its first value) and X-Forwarded-Port are
	// the balancer's too, passed on as ingress-nginx passes them.
	TrustForwardedProto bool
	// ProxyRealIPCIDR lists the peers trusted to say who the client is
	// (--proxy-real-ip-cidr, SPEC §1): a load balancer or proxy in front.
	// With TrustForwardedFor, for a request from inside one of these
	// ranges the client address (ClientAddr, X-Real-IP, source ranges,
	// rate limits) comes from X-Forwarded-For; from anywhere else a header
	// any client can send is never believed. Without TrustForwardedFor the
	// ranges mean nothing to the Router: the client is always the peer.
	// Behind a PROXY protocol listener the peer is already the address the
	// load balancer reported.
	ProxyRealIPCIDR []netip.Prefix
	// TrustForwardedFor believes X-Forwarded-For from ProxyRealIPCIDR
	// peers, as ingress-nginx's use-forwarded-headers: the header is
	// walked from the right over trusted addresses (nginx's realip with
	// real_ip_recursive on). Off, as behind a PROXY protocol load
	// balancer that reports the client itself, the client is the peer.
	TrustForwardedFor bool
	// ComputeFullForwardedFor sends the backend the client's
	// X-Forwarded-For with the peer appended, as ingress-nginx's
	// compute-full-forwarded-for; it needs TrustForwardedFor too.
	// Otherwise the backend's X-Forwarded-For is the client address alone.
	// Either way the client's own value is passed as
	// X-Original-Forwarded-For.
	ComputeFullForwardedFor bool
	// MaxBodySize limits request bodies (ingress-nginx's proxy-body-size):
	// a larger declared Content-Length, or a streamed body that grows past
	// it, answers 413. 0: DefaultMaxBodySize (1 MiB); negative: no limit.
	MaxBodySize int64
	// ClientBodyTimeout is the longest wait between two reads of a request
	// body (nginx's client_body_timeout); when it passes the request
	// answers 408. 0: DefaultClientBodyTimeout (60 s); negative: none.
	ClientBodyTimeout time.Duration
	// ClientBodyBufferSize is how much of a request body is held in
	// memory while it is read before a backend is chosen (ingress-nginx's
	// client-body-buffer-size); the rest of a longer body goes to a
	// temporary file in BodyTempDir. 0 or less: DefaultClientBodyBufferSize
	// (8 KiB).
	ClientBodyBufferSize int64
	// BodyTempDir is where those temporary files are made (nginx's
	// client_body_temp_path). Each is unlinked as soon as it is made and
	// closed when its request ends. "": os.TempDir().
	BodyTempDir string
	// IdleTimeout and ClientHeaderTimeout are what ConfigureServer puts on
	// an http.Server: how long an idle keep-alive connection stays open
	// (0: DefaultIdleTimeout, 75 s) and how long a client may take to send
	// the request headers (0: DefaultClientHeaderTimeout, 60 s).
	IdleTimeout, ClientHeaderTimeout time.Duration
	// RateLimitEntries is how many rate-limit counters (limit-rps,
	// limit-rpm, limit-connections), one per client address and zone,
	// the zones (one per Ingress) share: each zone made by a Publish gets
	// an even share, at least 4,096 (or all of them when fewer), and
	// keeps it while it lives; the least recently used idle entry gives
	// way when a zone is full. 0: DefaultRateLimitEntries.
	RateLimitEntries int
	// AuthTimeout, when more than 0, bounds a whole external-auth
	// subrequest (auth-url): connecting, the answer and reading it. When
	// it passes the request answers 500, as nginx answers a failed auth
	// request. 0: no bound but those of ingress-nginx's auth location,
	// nginx's defaults: 60 s to connect, 60 s for the answer. The
	// subrequest goes through Transport when set, else through a pooled
	// HTTP/1.1 transport New builds with those timeouts.
	AuthTimeout time.Duration
	// HSTS is the Strict-Transport-Security value sent on every answer
	// to a request that came over TLS, the router's own answers and
	// redirects included, replacing a backend's, as ingress-nginx's hsts
	// setting; never over plain HTTP, nor on the answers nginx makes
	// outside a location (www and app-root redirects, a bad Host, a client
	// certificate refused). "": DefaultHSTS, ingress-nginx's
	// default; HSTSHeader builds one from ingress-nginx's hsts-* keys. A
	// value holding a control character sends none.
	HSTS string
	// DisableHSTS sends no Strict-Transport-Security header (ingress-nginx's
	// hsts: "false"); a backend's own passes through.
	DisableHSTS bool
	// PasswordChecks bounds the slow password checks (bcrypt, apr1) of
	// basic authentication running at once. A request that finds no free
	// slot within a second answers 503 (ReasonAuthBusy), so a flood of
	// wrong passwords cannot take the CPUs from every other request.
	// Outcomes are cached, right and wrong, so a repeated password costs
	// one check. 0: half of GOMAXPROCS, at least 1; negative: no bound.
	PasswordChecks int
	// ForwardedForHeader is the header a ProxyRealIPCIDR peer names the
	// client in (ingress-nginx's forwarded-for-header). "": X-Forwarded-For.
	ForwardedForHeader string
	// ForwardedHostHeader is the client's header sent to backends as
	// X-Original-Forwarded-Host (ingress-nginx's forwarded-host-header),
	// from any peer; '_' in it reads as '-', as in nginx's $http_ names.
	// "": X-Forwarded-Host.
	ForwardedHostHeader string
	// LimitReqStatusCode and LimitConnStatusCode answer a request over
	// limit-rps or limit-rpm, and over limit-connections (ingress-nginx's
	// limit-req-status-code and limit-conn-status-code). 0: 503. 444 closes
	// the connection with no answer, as nginx does.
	LimitReqStatusCode, LimitConnStatusCode int
	// HTTPRedirectCode answers the HTTPS redirect and a
	// from-to-www-redirect twin's requests (ingress-nginx's
	// http-redirect-code): 301, 302, 307 or 308; 0: 308.
	HTTPRedirectCode int
	// HTTPSPort is the port a use-port-in-redirects location's HTTPS
	// redirect names (ingress-nginx's --https-port, the port its HTTPS
	// listener binds). 0: 443.
	HTTPSPort int
	// NoTLSRedirectLocations are the paths the HTTPS redirect leaves
	// alone: a request whose normalized path is one of them or under one
	// (ingress-nginx's no-tls-redirect-locations). nil:
	// DefaultNoTLSRedirectLocations; empty: none.
	NoTLSRedirectLocations []string
	// BlockUserAgents and BlockReferers answer 403 to every request whose
	// User-Agent or Referer they list, on every host, before anything else
	// of it (ingress-nginx's block-user-agents and block-referers); nil:
	// none.
	BlockUserAgents, BlockReferers *match.BlockList
	// AddHeaders are set on every answer, over a backend's of the same
	// name, and ProxySetHeaders on every request sent to a backend, over
	// the client's (ingress-nginx's add-headers and proxy-set-headers);
	// SetConfigMapHeaders replaces them. Their values may hold the nginx
	// variables match.ParseHeaderValue takes, expanded per request; an
	// empty value clears the header; a value with a control byte, as
	// written or expanded, is not sent (Stats.HeadersDropped counts the
	// expanded ones), nor one with a variable the router cannot expand.
	AddHeaders, ProxySetHeaders http.Header
	// Gzip compresses answers as ingress-nginx's use-gzip does; nil: none.
	Gzip *Gzip
	// ServerTokens is the Server header sent on every answer; "": none,
	// as ingress-nginx's default server-tokens "false" clears it. A
	// backend's own Server header is not passed on (servertokens.go)
	// unless BackendServerHeader.
	ServerTokens string
	// BackendServerHeader, with ServerTokens set, passes the backend's
	// Server header on in place of ServerTokens, and none when the
	// backend sends none (allow-backend-server-header, nginx's
	// proxy_pass_header Server); the router's own answers keep
	// ServerTokens. Without ServerTokens it does nothing, as
	// ingress-nginx's more_clear_headers Server clears the backend's too.
	BackendServerHeader bool
	// Brotli compresses answers in br as ingress-nginx's enable-brotli
	// does, before Gzip; nil: none.
	Brotli *Brotli
	// Tracer makes a server span for each request to a location the
	// table traces (match.Location.Tracing) and its trace context is sent
	// to the backend (tracing.go); nil: no spans, and trace headers pass
	// through untouched.
	Tracer Tracer

	// TLS is the TLS policy TLSConfig serves (versions, cipher suites,
	// curves, the session cache and tickets: the ssl-* keys, SPEC §12);
	// nil: ingress-nginx's defaults (configmap.DefaultTLS).
	TLS *configmap.TLS
	// HideHeaders are backend response headers never passed to the client
	// (hide-headers, nginx's proxy_hide_header), canonical names.
	HideHeaders []string
	// UnderscoresInHeaders passes request headers whose names hold '_' to
	// the backend (enable-underscores-in-headers); nginx drops them.
	UnderscoresInHeaders bool
	// KeepInvalidHeaders passes request headers whose names nginx calls
	// invalid (other than letters, digits, '-' and '_') to the backend
	// (ignore-invalid-headers "false"); by default they are dropped.
	KeepInvalidHeaders bool
	// NoRequestID sends a backend no X-Request-ID when the client sent
	// none (generate-request-id "false"); by default one is made.
	NoRequestID bool
	// OriginalURIHeader sends the request's URI as received to the backend
	// as X-Original-URI (proxy-add-original-uri-header).
	OriginalURIHeader bool
}

// Record describes one request once it has been answered.
type Record struct {
	// Generation of the table that served the request (0 before any).
	Generation uint64
	// Method as received; Host normalized (no port, lower case, no
	// trailing dot); Path is the request-target as received, with its query.
	Method, Host, Path string
	// Status is the status code sent; 499 when the client went away before
	// the backend answered; 0 when the request ended in a panic before any
	// status was written.
	Status int
	// Backend is the ID of the backend the table chose ("" when none).
	Backend string
	// Route is the declaration the request matched: the route's Source, or
	// the virtual host's FallbackSource when its fallback answered (with
	// the host's Creator as Namespace and Name when that fallback is the
	// global default backend, whose Source names no Ingress); zero when
	// nothing matched or the request was refused before the lookup.
	Route match.Source
	// Endpoint is the "ip:port" the request was proxied to ("" when the
	// router answered without proxying).
	Endpoint string
	// Reason is a short machine code for answers the router made itself
	// ("" when the backend answered): see the Reason constants.
	Reason string
	// Tries is the number of endpoints the request was sent to (more than
	// one when connecting failed and it was retried); 0 when not proxied.
	Tries int
	// PassedOn are the tries before Endpoint's that failed and passed the
	// request on to another endpoint, in order, as nginx's $upstream_addr
	// and $upstream_status list them before the last; nil when none did.
	// A request sent again to the same endpoint on a new connection,
	// because the backend dropped the kept-alive one, lists that try too
	// (502, as nginx), which Tries does not count.
	PassedOn []Try

	// Request is the request as the router received it, for fields the
	// record does not copy (User-Agent, Referer, TLS). It is valid only
	// during the Observer call: keep the values, not the pointer.
	Request *http.Request
	// RequestID is the X-Request-ID of the request: the client's first
	// one, or the one the router generated and forwarded to the backend
	// (and returned with Options.ReturnRequestID). "" for an answer the
	// router made itself (or a Hook made), unless Options.ReturnRequestID
	// is set.
	RequestID string
	// ClientAddr is the client's IP address, without a port: the
	// Router's ClientAddr (the peer, or with Options.TrustForwardedFor the
	// address a trusted proxy forwarded).
	ClientAddr string
	// VirtualHost is the Name of the table's virtual host that served the
	// request: an exact host, "*.<rest>" for a wildcard, "" for the
	// catch-all or when no host matched (then Route is zero). Unlike
	// Host, its values are bounded by the table, so it suits metric labels.
	VirtualHost string
	// MatchedRoute is the table's route that matched (its Path, Type and
	// Extensions); nil when the virtual host's fallback answered or no
	// route matched. It points into the immutable table.
	MatchedRoute *match.Route
	// Service is the chosen backend's Service (namespace, name, port);
	// zero when no backend was chosen. Backend is the same as an ID.
	Service Service
	// Location is the Service the location that answered names, as
	// ingress-nginx's $service_name, $service_port and upstream name
	// (nginx.tmpl sets them at the top of each location): the matched
	// route's or fallback's, whichever backend then took the request (a
	// canary, a default-backend stand-in) or none (the location's
	// redirect or refusal); zero where no location answered. StandIn:
	// the location's Ingress's default-backend Service answered for its
	// own, which has no endpoints (Service is that one's).
	Location Service
	StandIn  bool

	// Start is when the router got the request. Duration runs from Start
	// until the answer was written in full (nginx's $request_time).
	Start    time.Time
	Duration time.Duration
	// UpstreamHeaderTime runs from the first try's send until the last
	// try's response headers arrived (less PassedOn's last Ended, the last
	// try's $upstream_header_time); UpstreamTime until
	// the backend's response body ended ($upstream_response_time), retries
	// included. Both 0 when the request was not proxied; UpstreamHeaderTime
	// stays 0 when no response came.
	UpstreamHeaderTime, UpstreamTime time.Duration
	// UpstreamConnectTime is the time spent opening connections to the
	// backend (the dial and the TLS handshake), every try's
	// ($upstream_connect_time summed); 0 when a kept-alive connection was
	// reused, and through an Options.Transport that reports no connection
	// to httptrace's GetConn and GotConn (net/http's does). The last try's
	// is what PassedOn's Connect times leave of it.
	UpstreamConnectTime time.Duration
	// Unconnected: the last try opened no connection (refused,
	// unreachable, or the connect timeout or TLS handshake ran out), which
	// nginx's $upstream_connect_time gives as "-" whatever time it spent.
	Unconnected bool
	// BytesIn counts the request body bytes read from the client; BytesOut
	// the response body bytes sent to the client, compressed when the
	// router compressed the answer (nginx's $body_bytes_sent; headers not
	// counted).
	BytesIn, BytesOut int64
	// HeaderBytes is the size of the response head sent: the status line,
	// the header fields and the empty line, as HTTP/1.1 writes them (with
	// the Date a server adds; not Connection). BytesOut + HeaderBytes is
	// nginx's $bytes_sent, near enough: the router sits above the server
	// and does not see the wire. 0 when no status was written.
	HeaderBytes int64
	// UpstreamBytes counts the response body bytes the backend sent
	// and the router relayed, before any compression
	// ($upstream_response_length); 0 when not proxied.
	UpstreamBytes int64
	// ErrorPage is the error backend's exchange when an error page
	// (custom-http-errors) replaced the backend's answer, which nginx's
	// $upstream_* variables list after " : "; Status and BytesOut are
	// then the page's, Endpoint, Tries, PassedOn, UpstreamHeaderTime and
	// UpstreamConnectTime the intercepted exchange's (UpstreamBytes 0: its
	// body is dropped).
	// nil when no error backend was asked.
	ErrorPage *ErrorPage
	// NoAccessLog: the location that answered asks not to be
	// access-logged (enable-access-log: "false"); an access log skips the
	// record, metrics still count it.
	NoAccessLog bool
	// Rewritten is the request-target (escaped, with its query) a
	// rewrite made of the request for its backend (rewrite-target, a
	// snippet's rewrite): nginx's $uri and $args after the location's
	// rewrite; "" when nothing rewrote it.
	Rewritten string
	// Subrequest, in a record handed to Options.AuthObserver, is the URI
	// of the auth location whose subrequest the record is of (nginx's
	// $uri there, "/_external-auth-..."); the other fields are the
	// request's but Status (the service's answer, or 502 or 504 when
	// there was none), Start, Duration, the upstream fields (the service's
	// exchange; Tries 0 when the answer came from the auth cache),
	// Reason, and the byte counts, which are 0. "" for a request.
	Subrequest string
	// RequestLine is the request line as far as it was read, for a
	// request refused before any location (Reason ReasonRefused: nginx's
	// $request, "" when none began; an HTTP/2 request's as nginx logs it,
	// "GET / HTTP/2.0"); "" otherwise.
	RequestLine string
}

// ErrorPage is the second upstream exchange of an intercepted answer.
type ErrorPage struct {
	// Intercepted is the backend's status the page replaced.
	Intercepted int
	// Service is the error backend's; Own: it is the location's Ingress's
	// default-backend Service, not the global default backend
	// (match.Response.OwnErrorBackend).
	Service Service
	Own     bool
	// Endpoint is the error backend's "ip:port" asked for the page;
	// Status what it answered (502 when that failed).
	Endpoint string
	Status   int
	// Time runs from the page's request until its body ended (part of
	// UpstreamTime), Header until its response head came (0: none did);
	// Bytes counts its body.
	Time, Header time.Duration
	// Connect is how long opening the error backend's connection took: 0
	// for a kept-alive one reused, negative when none opened.
	Connect time.Duration
	Bytes   int64
}

// Try is a try of a request that failed and passed it on to another
// endpoint (proxy_next_upstream).
type Try struct {
	// Endpoint is the "ip:port" tried.
	Endpoint string
	// Status is what nginx logs for the try: 502 for an error or an
	// invalid header, 504 for a timeout, else the backend's status that
	// proxy-next-upstream names (http_503: 503).
	Status int
	// Ended is when the try ended, from the first try's send (the start
	// of UpstreamTime).
	Ended time.Duration
	// Connect is how long opening the try's connection took: 0 for a
	// kept-alive one reused, negative when none opened (nginx's "-"). Header runs from the try's start (the
	// previous try's Ended) until its response head came; 0 when none
	// did.
	Connect, Header time.Duration
}

// Service names a backend's Kubernetes Service port.
type Service struct {
	Namespace, Name string
	// Port is the Service port number; 0 when it did not resolve.
	Port int32
	// PortName is the port as the declaration that chose the backend
	// wrote it where that is not Port: a name, as ingress-nginx spells
	// its upstream and $service_port (match.Backend.PortNames), or for a
	// port that did not resolve the number or name written; "" else.
	PortName string
}

// WrittenPort is the port as the declaration wrote it.
func (s Service) WrittenPort() string {
	if s.PortName != "" || s.Port == 0 {
		return s.PortName
	}
	return strconv.Itoa(int(s.Port))
}

// locationService is what Record.Location and Record.StandIn say of the
// location res found.
func locationService(res match.Result) (Service, bool) {
	var be *match.Backend
	switch {
	case res.Route != nil && res.Route.Split == nil:
		be = res.Route.Backend
	case res.Route == nil && res.Host != nil:
		be = res.Host.Fallback
	}
	if be == nil {
		return Service{}, false
	}
	s := declaredService(res, be)
	if rp := res.Location().Response; rp != nil && rp.StandIn != nil {
		// The table routes to the stand-in; the location names its own.
		s = Service{Namespace: be.Namespace, Name: rp.StandIn.Service, PortName: rp.StandIn.Port}
		if n, err := strconv.Atoi(rp.StandIn.Port); err == nil && n > 0 {
			s.Port, s.PortName = int32(n), ""
		}
		return s, true
	}
	return s, false
}

// declaredService is the Service of be, chosen for the request res
// matched, with the port as that declaration wrote it.
func declaredService(res match.Result, be *match.Backend) Service {
	s := Service{Namespace: be.Namespace, Name: be.Name, Port: be.Port}
	if name := declaredPortName(res, be); name != 0 || be.Port == 0 {
		s.PortName = be.WrittenPort(name)
	}
	return s
}

// declaredPortName is how the declaration that chose be for the request
// res matched wrote its port (match.Route.PortName): the route's or the
// fallback's, or their canary's.
func declaredPortName(res match.Result, be *match.Backend) uint8 {
	if be == nil || len(be.PortNames) == 0 {
		return 0
	}
	primary, name := res.Backend, uint8(0)
	switch {
	case res.Route != nil:
		primary, name = res.Route.Backend, res.Route.PortName
	case res.Host != nil:
		primary, name = res.Host.Fallback, res.Host.FallbackPortName
	}
	if be == primary {
		return name
	}
	if primary != nil && primary.Traffic != nil && primary.Traffic.Canary != nil && primary.Traffic.Canary.Backend == be {
		return primary.Traffic.Canary.PortName
	}
	return 0
}

// backendSessions bounds the TLS sessions the HTTPS pool keeps for
// resumption, one per backend address.
const backendSessions = 4096

// Reasons reported in Record.Reason.
const (
	ReasonNoTable             = "no-table"             // 503: nothing published yet
	ReasonBadPath             = "bad-path"             // 400: malformed request path
	ReasonNoRoute             = "no-route"             // 404: nothing matched, no fallback
	ReasonNoEndpoints         = "no-endpoints"         // 503: no ready endpoints
	ReasonServiceNotFound     = "service-not-found"    // 503
	ReasonPortNotFound        = "port-not-found"       // 503
	ReasonExternalName        = "external-name"        // 503
	ReasonGRPCNotEnabled      = "grpc-not-enabled"     // 502: gRPC to a non-gRPC backend
	ReasonUpstreamUnreachable = "upstream-unreachable" // 502: dial or TLS handshake failed
	ReasonUpstreamTimeout     = "upstream-timeout"     // 504: no connection within ConnectTimeout, or no response headers within ReadTimeout
	ReasonUpstreamError       = "upstream-error"       // 502: the exchange failed after connecting
	ReasonClientClosed        = "client-closed"        // 499: the client went away first
	ReasonSSLRedirect         = "ssl-redirect"         // 308: plain HTTP to a host served over HTTPS
	ReasonBadHost             = "bad-host"             // 400: no Host, a malformed one, or a redirect is due but the Host names no host
	ReasonRegexBudget         = "regex-budget"         // 404: the regex routes took the whole match budget
	// ReasonRefused: 400, 405, 408, 414, 501, 505, what nginx refuses
	// before any location: router/h1's or router/h2's server refused the
	// head (Refused), or the router refused what another server passed on (a method nginx
	// does not read, a field nginx takes once sent twice: 400; TRACE: 405).
	ReasonRefused = "refused"
)

// Router is an http.Handler serving the most recently published table.
type Router struct {
	state atomic.Pointer[serving]
	mu    sync.Mutex // serializes Publish
	// unswept counts the balancers built since the last sweep: what a
	// sweep could find released is at most what they replaced.
	unswept int

	registry  *balance.Registry
	sweep     bool // the registry is ours alone
	proxy     *httputil.ReverseProxy
	h1        *h1.Pool // HTTP backends, unless Options.Transport is set
	h1s       *h1.Pool // HTTPS ones of locations without BackendTLS, likewise
	observer  func(Record)
	authObs   func(Record)
	tracer    Tracer
	restarter SpanRestarter // tracer, when it is one
	hook      Hook
	bodyHook  Hook
	logger    *slog.Logger
	// baseCert is Options.DefaultCertificate, else New's self-signed one
	// (selfSignedDefault: ECDSA, and clients without ECDSA get
	// selfSignedRSA); defaultCert is what serves now, baseCert unless
	// SetDefaultCertificate replaced it.
	baseCert          *tls.Certificate
	selfSignedDefault bool
	defaultCert       atomic.Pointer[tls.Certificate]

	// live are the settings an ingress-nginx ConfigMap gives, which
	// SetConfigMapOptions replaces (live.go).
	live atomic.Pointer[liveSettings]
	// cmHeaders are Options.AddHeaders and ProxySetHeaders; nil: none.
	cmHeaders atomic.Pointer[configMapHeaders]

	returnRequestID bool
	// httpsPort is Options.HTTPSPort as written in a redirect.
	httpsPort string
	// tls is Options.TLS, defaults filled in (tlspolicy.go).
	tls configmap.TLS
	// ocsp staples OCSP responses (ocsp.go); nil unless enable-ocsp.
	ocsp *stapler
	// chains are the verdicts on connections' client certificate chains
	// (clienttls.go).
	chains chainVerdicts
	// tunnels are the Upgrade tunnels open (tunnels.go), which Shutdown
	// waits for.
	tunnels tunnels
	// gatewayPorts is Options.GatewayPorts, or what SetGatewayPorts set.
	gatewayPorts atomic.Pointer[map[int]int32]
	// hsts is the Strict-Transport-Security value (see hstsValue); nil:
	// none is sent. SetHSTS replaces it.
	hsts atomic.Pointer[[]string]

	// Request body limits (see Options): maxBody 0 means none,
	// bodyBuffer is how much of a body is held in memory.
	maxBody, bodyBuffer     int64
	bodyTempDir             string
	bodyTimeout             time.Duration
	idleTimeout, hdrTimeout time.Duration

	// limits holds the rate-limit counters across tables; timeouts are
	// the upstream timeouts a location's policy may override.
	limits   *limiter
	timeouts timeouts

	// Regex trouble, across tables: requests in which a regex match timed
	// out, and requests whose regex budget ran out (see Stats).
	regexTimeouts, regexBudgetExceeded atomic.Uint64
	lastRegexLog                       atomic.Int64 // unix nanoseconds

	// auth is authentication's transport, timeout and cache (auth.go).
	auth authState
	// mirrors counts the mirrored copies (mirror.go).
	mirrors mirrorState
	// headersDropped counts header values not sent (Stats.HeadersDropped).
	headersDropped atomic.Uint64
}

// Stats are the Router's counters since New.
type Stats struct {
	// RegexTimeouts counts requests in which a regex match hit its
	// timeout and counted as no match.
	RegexTimeouts uint64
	// RegexBudgetExceeded counts requests answered 404 because their
	// host's regex routes took the whole per-request budget
	// (match.RegexBudget) without a match.
	RegexBudgetExceeded uint64
	// MirrorsDropped counts mirrored copies (mirror-target) not sent:
	// MirrorInFlight were in flight already, or, of a gRPC call, a
	// mirror-target copy, or a Service mirror's copy that fell behind the
	// call or whose call ended before its body did.
	// MirrorsFailed counts copies whose exchange failed.
	MirrorsDropped, MirrorsFailed uint64
	// HeadersDropped counts header values not sent because, their
	// variables expanded, they held CR, LF, NUL or another control byte
	// (match.ValidHeaderValue): a snippet's request headers (doc §11.9)
	// and the ConfigMap's add-headers and proxy-set-headers. nginx would
	// send them as they are, splitting the head.
	HeadersDropped uint64
}

// Stats returns the Router's counters.
func (r *Router) Stats() Stats {
	return Stats{RegexTimeouts: r.regexTimeouts.Load(), RegexBudgetExceeded: r.regexBudgetExceeded.Load(),
		MirrorsDropped: r.mirrors.dropped.Load(), MirrorsFailed: r.mirrors.failed.Load(),
		HeadersDropped: r.headersDropped.Load()}
}

// regexTrouble counts a request whose regex matching timed out or ran out
// of budget, and logs it at most once a second: a pattern that backtracks
// catastrophically is an operator's problem to fix, and a flood of such
// requests must not become a flood of log lines.
func (r *Router) regexTrouble(res match.Result, host string) {
	if res.RegexTimedOut {
		r.regexTimeouts.Add(1)
	}
	if res.RegexBudgetExceeded {
		r.regexBudgetExceeded.Add(1)
	}
	now := time.Now().UnixNano()
	last := r.lastRegexLog.Load()
	if now-last < int64(time.Second) || !r.lastRegexLog.CompareAndSwap(last, now) {
		return
	}
	s := r.Stats()
	r.logger.Warn("regex path matching timed out; the request counted as unmatched",
		"host", host, "budgetExceeded", res.RegexBudgetExceeded,
		"regexTimeouts", s.RegexTimeouts, "regexBudgetExceeded", s.RegexBudgetExceeded)
}

// serving is everything a request needs, swapped as one unit.
type serving struct {
	gen       uint64
	table     *match.Table
	balancers map[*match.Backend]*balance.Balancer
	// splits are the canary weight rotations by primary backend,
	// routeSplits those of routes' weighted backends (split.go).
	splits      map[*match.Backend]*balance.Split
	routeSplits map[*match.Split]*balance.Split
	// mirrorShares count the requests of mirrors with a share (mirror.go).
	mirrorShares map[*match.Mirror]*mirrorShare
}

// New returns a Router with no table: it answers 503 until the first Publish.
// It panics only if it cannot generate a default certificate, which means
// the system's random source is broken.
func New(o Options) *Router {
	r := &Router{
		registry:  o.Registry,
		observer:  o.Observer,
		authObs:   o.AuthObserver,
		tracer:    o.Tracer,
		restarter: asRestarter(o.Tracer),
		hook:      o.Hook,
		bodyHook:  o.BodyHook,
		logger:    o.Logger,
		baseCert:  o.DefaultCertificate,

		returnRequestID: o.ReturnRequestID,
		httpsPort:       strconv.Itoa(cmp.Or(o.HTTPSPort, 443)),
		tls:             tlsPolicy(o.TLS),
	}
	r.SetGatewayPorts(o.GatewayPorts)
	if r.logger == nil {
		r.logger = slog.Default()
	}
	if r.tls.EnableOCSP {
		r.ocsp = newStapler(r.logger)
		// The fetching stops with the Router.
		runtime.AddCleanup(r, (*stapler).stop, r.ocsp)
	}
	r.SetConfigMapOptions(o)
	r.maxBody = cmp.Or(o.MaxBodySize, DefaultMaxBodySize)
	if r.maxBody < 0 {
		r.maxBody = 0
	}
	r.bodyBuffer = o.ClientBodyBufferSize
	if r.bodyBuffer <= 0 {
		r.bodyBuffer = DefaultClientBodyBufferSize
	}
	r.bodyTempDir = o.BodyTempDir
	r.bodyTimeout = max(cmp.Or(o.ClientBodyTimeout, DefaultClientBodyTimeout), 0)
	r.idleTimeout = cmp.Or(o.IdleTimeout, DefaultIdleTimeout)
	r.hdrTimeout = cmp.Or(o.ClientHeaderTimeout, DefaultClientHeaderTimeout)
	if r.registry == nil {
		r.registry = balance.NewRegistry()
		r.sweep = true
	}
	if r.baseCert == nil {
		cert, err := selfSigned()
		if err != nil {
			panic(fmt.Sprintf("router: default certificate: %v", err))
		}
		r.baseCert, r.selfSignedDefault = cert, true
	}
	r.defaultCert.Store(r.baseCert)
	connect := o.ConnectTimeout
	if connect <= 0 {
		connect = 5 * time.Second
	}
	read := o.ReadTimeout
	if read <= 0 {
		read = 60 * time.Second
	}
	r.limits = newLimiter(o.RateLimitEntries)
	r.timeouts = timeouts{connect: connect, read: read}
	up := &upstream{h1: o.Transport, h2c: o.Transport, h2: o.Transport}
	if o.Transport == nil {
		p := poolingOf(o)
		up.h1, up.h2c, up.h2 = defaultTransports(connect, read, p)
		up.verbatim = &verbatimTransport{dialer: &net.Dialer{Timeout: connect}, handshake: connect, header: read}
		up.base, up.variants = r.timeouts, &transportVariants{pooling: p}
		up.backendTLS = &tlsVariants{pooling: p}
		r.h1, r.h1s = h1.NewPool(connect), h1.NewPool(connect)
		// Sessions are resumed per backend address, as nginx's
		// proxy_ssl_session_reuse (on by default) does per peer; the cache
		// is bounded, its oldest giving way.
		r.h1s.SetTLS(&tls.Config{InsecureSkipVerify: true, // see Options.Transport
			ClientSessionCache: tls.NewLRUClientSessionCache(backendSessions)})
		for _, pool := range []*h1.Pool{r.h1, r.h1s} {
			pool.SetKeepalive(p.keepalive.Connections, p.keepalive.Timeout, p.keepalive.Requests, p.keepalive.Time)
		}
		r.auth.ext = authTransport(up.h1.(*http.Transport))
	}
	r.auth.rt, r.auth.timeout = up.h1, o.AuthTimeout
	if r.auth.ext == nil {
		r.auth.ext = up.h1
	}
	r.auth.digest.init()
	r.mirrors.send = r.sendMirror
	r.mirrors.h2c, r.mirrors.h2 = up.h2c, up.h2
	if n := passwordCheckSlots(o.PasswordChecks); n > 0 {
		r.auth.checks = make(chan struct{}, n)
	}
	r.proxy = &httputil.ReverseProxy{
		Rewrite:        rewrite,
		Transport:      up,
		ErrorHandler:   r.proxyError,
		ModifyResponse: modifyResponse,
		ErrorLog:       slog.NewLogLogger(r.logger.Handler(), slog.LevelWarn),
		BufferPool:     bufferPool{},
	}
	return r
}

// ConfigureServer sets the client-facing timeouts of SPEC §13 on a server
// that serves the Router, where the server has none of its own: idle
// keep-alive connections close after Options.IdleTimeout (nginx's
// keepalive_timeout, 75 s) and request headers must arrive within
// Options.ClientHeaderTimeout. The request body's timeout is the Router's
// own (Options.ClientBodyTimeout).
func (r *Router) ConfigureServer(s *http.Server) {
	if s.IdleTimeout == 0 {
		s.IdleTimeout = r.idleTimeout
	}
	if s.ReadHeaderTimeout == 0 {
		s.ReadHeaderTimeout = r.hdrTimeout
	}
}

// pooling is what every default transport of a Router shares whatever
// its timeouts: the HTTP/2 client (Options.NetHTTP2Client) and the bounds
// of its backend connection pool (Options.UpstreamKeepalive).
type pooling struct {
	netHTTP2  bool
	keepalive configmap.UpstreamKeepalive
}

// poolingOf is the one place deciding o's pooling, defaults filled in.
func poolingOf(o Options) pooling {
	p := pooling{netHTTP2: o.NetHTTP2Client, keepalive: configmap.DefaultUpstreamKeepalive()}
	if o.UpstreamKeepalive != nil {
		p.keepalive = *o.UpstreamKeepalive
	}
	return p
}

// defaultTransports builds the pooled transports used when Options has
// none; p.netHTTP2 has the HTTP/2 ones be net/http's.
func defaultTransports(connect, read time.Duration, p pooling) (t1 *http.Transport, t2c, t2 http.RoundTripper) {
	dialer := &net.Dialer{Timeout: connect, KeepAlive: 30 * time.Second}
	base := func() *http.Transport {
		return &http.Transport{
			// Never an environment proxy: backends are pod addresses.
			Proxy:               nil,
			DialContext:         dialer.DialContext,
			MaxIdleConnsPerHost: p.keepalive.Connections,
			IdleConnTimeout:     p.keepalive.Timeout,
			// net/http reads 0 idle connections as its default of 2.
			DisableKeepAlives:     p.keepalive.Connections == 0,
			TLSHandshakeTimeout:   connect,
			ResponseHeaderTimeout: read,
			ExpectContinueTimeout: time.Second,
			// A proxy must pass bodies through untouched, never ask for
			// gzip and decode it behind the client's back.
			DisableCompression: true,
			TLSClientConfig:    &tls.Config{InsecureSkipVerify: true}, // see Options.Transport
		}
	}
	// The HTTP/2 (gRPC) backends' sockets are read and written raw, as
	// the HTTP/1 pool's are (rawsock). Header fields go without HPACK's
	// dynamic table, as nginx's grpc_pass sends them: every call carries a
	// new X-Request-ID (and often a new X-Forwarded-For), so indexing
	// would insert and evict entries on every call.
	rawDial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dialer.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return rawsock.NetConn(c), nil
	}
	if p.netHTTP2 {
		h2c, h2 := base(), base()
		h2c.Protocols = new(http.Protocols)
		h2c.Protocols.SetUnencryptedHTTP2(true)
		h2.Protocols = new(http.Protocols)
		h2.Protocols.SetHTTP2(true)
		for _, t := range []*http.Transport{h2c, h2} {
			t.HTTP2 = &http.HTTP2Config{MaxEncoderHeaderTableSize: 1}
			t.DialContext = rawDial
		}
		return base(), h2c, h2
	}
	// A call is nginx's request on an upstream connection: keepalive 0
	// (no connection kept) is a connection per call.
	requests := p.keepalive.Requests
	if p.keepalive.Connections == 0 {
		requests = 1
	}
	c := &h2.Client{DialContext: rawDial, ResponseHeaderTimeout: read, IdleConnTimeout: p.keepalive.Timeout,
		MaxConnRequests: requests, MaxConnAge: p.keepalive.Time, MaxIdleConnsPerHost: p.keepalive.Connections}
	tc := c.Clone()
	tc.TLSClientConfig = &tls.Config{InsecureSkipVerify: true} // see Options.Transport
	tc.TLSHandshakeTimeout = connect
	return base(), c, tc
}

// setDial has an HTTP/2 transport of either kind dial with dial.
func setDial(rt http.RoundTripper, dial func(ctx context.Context, network, addr string) (net.Conn, error)) {
	switch t := rt.(type) {
	case *h2.Client:
		t.DialContext = dial
	case *http.Transport:
		t.DialContext = dial
	}
}

// setTLSConfig has an HTTP/2 transport of either kind dial TLS with cfg.
func setTLSConfig(rt http.RoundTripper, cfg *tls.Config) {
	switch t := rt.(type) {
	case *h2.Client:
		t.TLSClientConfig = cfg
	case *http.Transport:
		t.TLSClientConfig = cfg
	}
}

// cloneTransport is a copy of an HTTP/2 transport of either kind, with
// no connections.
func cloneTransport(rt http.RoundTripper) http.RoundTripper {
	switch t := rt.(type) {
	case *h2.Client:
		return t.Clone()
	case *http.Transport:
		return t.Clone()
	}
	return rt
}

// closeIdle closes rt's idle connections, if it keeps any.
func closeIdle(rt http.RoundTripper) {
	if c, ok := rt.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// Publish makes t the serving table, unless its digest equals the serving
// table's: then nothing changes and the current generation is returned with
// changed false. A nil t is ignored. In-flight requests finish on the table they started with.
func (r *Router) Publish(t *match.Table) (generation uint64, changed bool) {
	if t == nil {
		return r.Generation(), false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	cur := r.state.Load()
	if cur != nil && (cur.table == t || t.Digest() == cur.table.Digest()) {
		return cur.gen, false
	}
	balancers, built := r.balancers(t, cur)
	next := &serving{table: t, balancers: balancers, splits: r.splits(t), routeSplits: r.routeSplits(t), mirrorShares: mirrorShares(t), gen: 1}
	if cur != nil {
		next.gen = cur.gen + 1
	}
	r.limits.retain(t)
	r.state.Store(next)
	if r.ocsp != nil {
		r.ocsp.sync(t)
	}
	r.unswept += built
	// A sweep visits every live balancer: after a change that replaced a
	// few of many (a table recompiled from the last, SPEC §17) it waits
	// until the replaced ones are a sixteenth of the live ones, so its
	// cost is spread over the changes; what it would release is only
	// released later.
	if r.sweep && r.unswept*16 >= len(next.balancers) {
		r.unswept = 0
		// The previous table's balancers count as live too: a request may
		// have loaded that state and not picked yet, and its pick must
		// land on the counter a newer balancer for the address shares.
		live := make([]*balance.Balancer, 0, len(next.balancers))
		for _, b := range next.balancers {
			live = append(live, b)
		}
		if cur != nil {
			for _, b := range cur.balancers {
				live = append(live, b)
			}
		}
		r.registry.SweepSplits(live, liveSplits(next, cur))
	}
	size := t.Size()
	r.logger.Info("routing table published",
		"generation", next.gen, "digest", t.Digest(),
		"hosts", size.VirtualHosts, "routes", size.Routes, "backends", len(next.balancers))
	return next.gen, true
}

// balancers gives every backend the table can return, listed or referenced
// from a route or fallback, its balancer: the serving one's for a backend
// the serving table has too (a table never changes its backends, so the
// same backend has the same configuration), else a new one. built counts
// the new ones.
func (r *Router) balancers(t *match.Table, cur *serving) (m map[*match.Backend]*balance.Balancer, built int) {
	m = make(map[*match.Backend]*balance.Balancer, t.Size().Backends)
	add := func(b *match.Backend) {
		if b == nil {
			return
		}
		if _, ok := m[b]; ok {
			return
		}
		if cur != nil {
			if bal, ok := cur.balancers[b]; ok {
				m[b] = bal
				return
			}
		}
		built++
		m[b] = r.registry.Balancer(balance.Config{ID: b.ID, Endpoints: b.Endpoints, Algorithm: b.Algorithm, HashKey: b.HashKey, HashSubset: int(b.HashSubset), Affinity: affinityMode(b)})
	}
	for b := range t.Backends() {
		add(b)
	}
	for vh := range t.VirtualHosts() {
		add(vh.Fallback)
		for _, rt := range vh.Routes {
			add(rt.Backend)
		}
	}
	for s := range t.L4Services() {
		add(s.Backend) // round-robin, as ingress-nginx's stream balancer (SPEC §22)
	}
	return m, built
}

// Table returns the serving table, nil before the first Publish.
func (r *Router) Table() *match.Table {
	if st := r.state.Load(); st != nil {
		return st.table
	}
	return nil
}

// Generation returns the serving table's generation, 0 before the first
// Publish. It increases by one with every Publish that changes the table.
func (r *Router) Generation() uint64 {
	if st := r.state.Load(); st != nil {
		return st.gen
	}
	return 0
}

// InFlight returns the number of requests in flight to addr ("ip:port")
// across all tables and backends.
func (r *Router) InFlight(addr string) int64 {
	return r.registry.InFlight(addr)
}

// DebugHandler renders the serving generation and table as plain text.
func (r *Router) DebugHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		st := r.state.Load()
		if st == nil {
			io.WriteString(w, "generation 0\nno routing table yet\n")
			return
		}
		fmt.Fprintf(w, "generation %d\n", st.gen)
		_ = st.table.WriteText(w)
	})
}

type exchangeKey struct{}

// EndpointFromContext reports the backend and endpoint chosen for a proxied
// request. It is set on the outgoing request's context, so a RoundTripper
// given in Options.Transport can see the choice.
func EndpointFromContext(ctx context.Context) (backendID, endpoint string, ok bool) {
	x, _ := ctx.Value(exchangeKey{}).(*exchange)
	if x == nil {
		return "", "", false
	}
	return x.backend.ID, x.endpoint.Addr, true
}
