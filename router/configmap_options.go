package router

import (
	"slices"

	"ramjet.dev/ramjet/router/configmap"
)

// ApplyConfigMap sets in o what the router keys of an ingress-nginx
// ConfigMap say (configmap.Parse; compile.ConfigMap.Router): each key in
// s.Keys replaces only its own settings, so a setting the embedder
// decided otherwise (a flag) stands where the key is absent. Gzip and
// Brotli follow use-gzip and enable-brotli, Brotli keeping o's encoder
// (the embedder's). The listeners' and access log's keys
// (use-proxy-protocol, log-format-upstream, log-format-escape-json,
// use-http2, http2-max-concurrent-streams, large-client-header-buffers,
// client-header-buffer-size, keep-alive-requests, worker-shutdown-timeout)
// are the embedder's to read from s (use-proxy-protocol "true" only keeps
// enable-real-ip from trusting X-Forwarded-For; an embedder whose
// listeners read PROXY headers by a flag does the same); the TLS keys set o.TLS, which
// TLSConfig and GetCertificate serve (enable-ocsp: StapleOCSP). Call
// SetConfigMapOptions with the result to apply a changed ConfigMap while
// serving.
func (o *Options) ApplyConfigMap(s configmap.Settings) {
	has := func(keys ...string) bool {
		return slices.ContainsFunc(keys, func(k string) bool { return slices.Contains(s.Keys, k) })
	}
	if has("hsts", "hsts-max-age", "hsts-include-subdomains", "hsts-preload") {
		o.HSTS, o.DisableHSTS = s.HSTS, s.DisableHSTS
	}
	if has("use-forwarded-headers") {
		o.TrustForwardedProto = s.TrustForwardedProto
	}
	// A flag's use-forwarded-headers stands beside enable-real-ip, which
	// adds TrustForwardedFor alone.
	if has("use-forwarded-headers", "enable-real-ip") {
		o.TrustForwardedFor = o.TrustForwardedProto || has("enable-real-ip") && s.TrustForwardedFor
	}
	// Behind PROXY protocol nginx's realip reads the PROXY header, and
	// X-Forwarded-For only with use-forwarded-headers (SPEC §13).
	if has("use-proxy-protocol") && s.UseProxyProtocol && !o.TrustForwardedProto {
		o.TrustForwardedFor = false
	}
	if has("compute-full-forwarded-for") {
		o.ComputeFullForwardedFor = s.ComputeFullForwardedFor
	}
	// compute-full-forwarded-for acts only with use-forwarded-headers.
	o.ComputeFullForwardedFor = o.ComputeFullForwardedFor && o.TrustForwardedProto
	if has("proxy-real-ip-cidr") {
		o.ProxyRealIPCIDR = s.ProxyRealIPCIDR
	}
	if has("forwarded-for-header") {
		o.ForwardedForHeader = s.ForwardedForHeader
	}
	if has("forwarded-host-header") {
		o.ForwardedHostHeader = s.ForwardedHostHeader
	}
	if has("limit-req-status-code") {
		o.LimitReqStatusCode = s.LimitReqStatusCode
	}
	if has("limit-conn-status-code") {
		o.LimitConnStatusCode = s.LimitConnStatusCode
	}
	if has("http-redirect-code") {
		o.HTTPRedirectCode = s.HTTPRedirectCode
	}
	if has("no-tls-redirect-locations") {
		o.NoTLSRedirectLocations = s.NoTLSRedirectLocations
	}
	if has("add-headers") {
		o.AddHeaders = s.AddHeaders
	}
	if has("proxy-set-headers") {
		o.ProxySetHeaders = s.ProxySetHeaders
	}
	if has("block-user-agents") {
		o.BlockUserAgents = s.BlockUserAgents
	}
	if has("block-referers") {
		o.BlockReferers = s.BlockReferers
	}
	if has("server-tokens") {
		o.ServerTokens = s.ServerTokens
	}
	if has("allow-backend-server-header") {
		o.BackendServerHeader = s.BackendServerHeader
	}
	if has("ssl-protocols", "ssl-ciphers", "ssl-ecdh-curve", "ssl-session-cache", "ssl-session-cache-size",
		"ssl-session-timeout", "ssl-session-tickets", "ssl-session-ticket-key", "ssl-early-data", "enable-ocsp", "ssl-reject-handshake") {
		t := s.TLS
		o.TLS = &t
	}
	if has("hide-headers") {
		o.HideHeaders = s.Headers.Hide
	}
	if has("enable-underscores-in-headers") {
		o.UnderscoresInHeaders = s.Headers.Underscores
	}
	if has("ignore-invalid-headers") {
		o.KeepInvalidHeaders = !s.Headers.IgnoreInvalid
	}
	if has("generate-request-id") {
		o.NoRequestID = !s.Headers.GenerateRequestID
	}
	if has("proxy-add-original-uri-header") {
		o.OriginalURIHeader = s.Headers.OriginalURI
	}
	// keep-alive "0" (keep-alive off) and keep-alive-requests are the
	// embedder's server's.
	if has("keep-alive") && s.Connections.KeepAlive > 0 {
		o.IdleTimeout = s.Connections.KeepAlive
	}
	if has("client-header-timeout") {
		o.ClientHeaderTimeout = s.Connections.HeaderTimeout
	}
	if has("client-body-timeout") {
		o.ClientBodyTimeout = s.Connections.BodyTimeout
	}
	if has("upstream-keepalive-connections", "upstream-keepalive-timeout", "upstream-keepalive-requests", "upstream-keepalive-time") {
		u := s.UpstreamKeepalive
		if has("upstream-keepalive-time") && u.Time == 0 {
			// nginx's keepalive_time 0: no connection is older than 0 ms
			// when its request ends, so none is reused.
			u.Requests = 1
		}
		o.UpstreamKeepalive = &u
	}
	if g := s.Gzip; g != nil {
		o.Gzip = &Gzip{Level: g.Level, MinLength: g.MinLength, Types: g.Types}
	}
	if b := s.Brotli; b != nil {
		nb := &Brotli{Level: b.Level, MinLength: b.MinLength, Types: b.Types}
		if o.Brotli != nil {
			nb.NewEncoder = o.Brotli.NewEncoder
		}
		o.Brotli = nb
	}
}
