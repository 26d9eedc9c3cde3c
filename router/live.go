package router

import (
	"cmp"
	"net/http"
	"net/netip"
	"strings"

	"ramjet.dev/ramjet/match"
)

// liveSettings are the Options an ingress-nginx ConfigMap gives that a
// request reads (the client address, the limit answers, compression, the
// Server header), prepared; swapped whole by SetConfigMapOptions. Each
// place that reads them loads the pointer once (no allocation); a request
// in flight during a swap may read the old settings in one step and the
// new in a later one (nginx finishes it wholly with the old workers'
// settings): the difference lasts one request.
type liveSettings struct {
	trustForwardedProto bool
	// realIPFrom is Options.ProxyRealIPCIDR, normalized, with
	// Options.TrustForwardedFor; nil without, so the peer is the client.
	realIPFrom []netip.Prefix
	// forwardedFor is Options.ForwardedForHeader, canonical.
	forwardedFor string
	// fullForwardedFor: Options.ComputeFullForwardedFor and
	// Options.TrustForwardedFor.
	fullForwardedFor bool
	// ansLimitReq and ansLimitConn answer a rate-limited request.
	ansLimitReq, ansLimitConn answer
	// redirectCode is Options.HTTPRedirectCode (308 for 0), and
	// ansSSLRedirect the HTTPS redirect's answer with it.
	redirectCode   int
	ansSSLRedirect answer
	// noTLSRedirect is Options.NoTLSRedirectLocations, nil replaced by
	// the default.
	noTLSRedirect []string
	// gzip is Options.Gzip; nil: answers are sent as they are.
	gzip *gzipConfig
	// brotli is Options.Brotli; nil: no answer is sent in br.
	brotli *gzipConfig
	// serverTokens is Options.ServerTokens as a header value; nil: none.
	serverTokens []string
	// blockUA and blockRef are Options.BlockUserAgents and BlockReferers.
	blockUA, blockRef *match.BlockList
	// The header keys (headers.go): Options.HideHeaders,
	// UnderscoresInHeaders, KeepInvalidHeaders, NoRequestID,
	// OriginalURIHeader and ForwardedHostHeader.
	headers headerSettings
}

// SetConfigMapOptions replaces, from the next request on, the settings of
// the Router that an ingress-nginx ConfigMap gives: TrustForwardedProto,
// TrustForwardedFor, ProxyRealIPCIDR, ComputeFullForwardedFor,
// ForwardedForHeader, ForwardedHostHeader, LimitReqStatusCode, LimitConnStatusCode, HTTPRedirectCode, NoTLSRedirectLocations, Gzip,
// Brotli, ServerTokens, BackendServerHeader, BlockUserAgents, BlockReferers, the header keys (HideHeaders, UnderscoresInHeaders,
// KeepInvalidHeaders, NoRequestID, OriginalURIHeader), HSTS with DisableHSTS (SetHSTS), and AddHeaders with
// ProxySetHeaders (SetConfigMapHeaders), as New reads them. The other
// fields of o are not looked at. So the ConfigMap's keys change without a
// restart, as ingress-nginx reloads nginx for them.
func (r *Router) SetConfigMapOptions(o Options) {
	l := &liveSettings{
		trustForwardedProto: o.TrustForwardedProto,
		forwardedFor:        http.CanonicalHeaderKey(cmp.Or(o.ForwardedForHeader, "X-Forwarded-For")),
		ansLimitReq:         limitAnswer(o.LimitReqStatusCode),
		ansLimitConn:        limitAnswer(o.LimitConnStatusCode),
		redirectCode:        cmp.Or(o.HTTPRedirectCode, http.StatusPermanentRedirect),
		gzip:                newGzipConfig(o.Gzip),
		brotli:              newBrotliConfig(o.Brotli),
		serverTokens:        serverTokensValue(o.ServerTokens),
		headers:             newHeaderSettings(o),
		blockUA:             o.BlockUserAgents,
		blockRef:            o.BlockReferers,
	}
	l.ansSSLRedirect = sslRedirectAnswer(l.redirectCode)
	l.noTLSRedirect = o.NoTLSRedirectLocations
	if l.noTLSRedirect == nil {
		l.noTLSRedirect = DefaultNoTLSRedirectLocations
	}
	if o.TrustForwardedFor {
		l.realIPFrom = normalizePrefixes(o.ProxyRealIPCIDR)
		l.fullForwardedFor = o.ComputeFullForwardedFor
	}
	r.live.Store(l)
	r.SetHSTS(o.HSTS, o.DisableHSTS)
	r.SetConfigMapHeaders(o.AddHeaders, o.ProxySetHeaders)
}

// blocked reports a request block-user-agents or block-referers lists:
// nginx's $http_user_agent and $http_referer join repeated fields with
// ", ".
func (l *liveSettings) blocked(h http.Header) bool {
	if l.blockUA == nil && l.blockRef == nil {
		return false
	}
	return l.blockUA.Blocks(strings.Join(h["User-Agent"], ", ")) || l.blockRef.Blocks(strings.Join(h["Referer"], ", "))
}
