package router

import (
	"net/http"
	"slices"
	"strings"

	"ramjet.dev/ramjet/match"
	"ramjet.dev/ramjet/match/vars"
)

// The header keys of an ingress-nginx ConfigMap (SPEC §1), as nginx.tmpl
// writes them at the http level:
//
//   - hide-headers: proxy_hide_header for each name: the backend's
//     response header never reaches the client (Options.HideHeaders).
//   - enable-underscores-in-headers and ignore-invalid-headers:
//     underscores_in_headers and ignore_invalid_headers. nginx marks a
//     request header name invalid unless it is letters, digits and '-'
//     ('_' too with underscores on), and with ignore_invalid_headers on
//     (the default) drops it: the backend never sees it (nor does
//     $http_<name>), since CGI-style frameworks read X_Forwarded_For as
//     X-Forwarded-For.
//   - generate-request-id: the $req_id map: off, a request without
//     X-Request-ID gets none (Options.NoRequestID).
//   - proxy-add-original-uri-header: proxy_set_header X-Original-URI
//     $request_uri (Options.OriginalURIHeader).
//
// X-Original-Forwarded-For is the client's forwarded-for-header
// (proxy_set_header X-Original-Forwarded-For $http_<forwarded-for-header>),
// X-Forwarded-For unless the key names another (Options.ForwardedForHeader).
//
// X-Original-Forwarded-Host is always set as nginx.tmpl sets it
// (proxy_set_header X-Original-Forwarded-Host
// $http_<forwarded-host-header>), whatever use-forwarded-headers and the
// peer's trust say: the client's X-Forwarded-Host unless the key names
// another (Options.ForwardedHostHeader), and none when it sent none.

// headerSettings are the header keys as a request reads them.
type headerSettings struct {
	hide                      []string
	underscores, keepBadNames bool
	noRequestID               bool
	originalURI               bool
	// forwardedHostPort is Options.TrustForwardedProto (use-forwarded-
	// headers): X-Forwarded-Host and X-Forwarded-Port pass on the
	// balancer's (see forwardingOf).
	forwardedHostPort bool
	// originalFor is Options.ForwardedForHeader, canonical, when it is
	// not X-Forwarded-For: X-Original-Forwarded-For carries it.
	originalFor string
	// originalHost is Options.ForwardedHostHeader, canonical with '_' as
	// '-' (nginx's $http_x_real_host reads X-Real-Host), when it is not
	// X-Forwarded-Host: X-Original-Forwarded-Host carries it.
	originalHost string
	// passServer is Options.BackendServerHeader with ServerTokens set:
	// the backend's Server is not hidden (servertokens.go).
	passServer bool
}

func newHeaderSettings(o Options) headerSettings {
	hs := headerSettings{
		hide:        slices.Clone(o.HideHeaders),
		underscores: o.UnderscoresInHeaders, keepBadNames: o.KeepInvalidHeaders,
		noRequestID: o.NoRequestID, originalURI: o.OriginalURIHeader,
		forwardedHostPort: o.TrustForwardedProto,
		passServer:        o.BackendServerHeader && serverTokensValue(o.ServerTokens) != nil,
	}
	if h := http.CanonicalHeaderKey(o.ForwardedForHeader); h != "" && h != "X-Forwarded-For" {
		hs.originalFor = h
	}
	if h := http.CanonicalHeaderKey(strings.ReplaceAll(o.ForwardedHostHeader, "_", "-")); h != "" && h != "X-Forwarded-Host" {
		hs.originalHost = h
	}
	return hs
}

// defaultHeaderSettings are ingress-nginx's defaults.
var defaultHeaderSettings headerSettings

// invalidName reports a request header name nginx calls invalid under hs.
func (hs *headerSettings) invalidName(k string) bool {
	if hs.keepBadNames {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' && hs.underscores {
			continue
		}
		return true
	}
	return false
}

// httpVariable is nginx's $http_<name> for the canonical header name
// (the variable's '_' as '-'): with '_' names kept (underscores_in_headers,
// or ignore_invalid_headers off) it reads the lines of every spelling
// ("X_User" for $http_x_user), which nginx otherwise drops as it reads
// the request.
func (hs *headerSettings) httpVariable(req *http.Request, name string) (string, bool) {
	// Host is the field as sent (httpHost), beside an absolute-form target too.
	host := req.Host
	if name == "Host" {
		host, _ = httpHost(req)
	}
	if hs.underscoreNames() {
		return vars.HeaderSpellings(req.Header, host, name)
	}
	return vars.Header(req.Header, host, name)
}

// underscoreNames reports that nginx keeps request header names with '_'.
func (hs *headerSettings) underscoreNames() bool { return hs.underscores || hs.keepBadNames }

// hidden reports a backend response header the client never gets:
// proxy_hide_header's defaults (hiddenResponseHeader) and hide-headers',
// but Server with passServer: nginx's proxy_pass_header takes a name out
// of the hidden ones, proxy_hide_header's included
// (ngx_http_upstream_hide_headers_hash).
func (hs *headerSettings) hidden(k string) bool {
	if hs.passServer && k == "Server" {
		return false
	}
	return hiddenResponseHeader(k) || len(hs.hide) > 0 && slices.Contains(hs.hide, k)
}

// untyped keeps a backend's answer without a Content-Type without one:
// nginx passes the head as it came, where the server would sniff one
// from the body (net/http's rule, which router/h1's server keeps); the
// field present without a value stops it.
func untyped(h http.Header) {
	if _, ok := h["Content-Type"]; !ok {
		h["Content-Type"] = nil
	}
}

// backendServer clears the Server ServerTokens put on h before the
// backend's head is copied onto it, with passServer: the answer carries
// the backend's, or none, as nginx with proxy_pass_header Server sends
// none when the backend sent none.
func (hs *headerSettings) backendServer(h http.Header) {
	if hs.passServer {
		delete(h, "Server")
	}
}

// headers are the exchange's header settings; the defaults for one made
// without a request of the router's (an error page's).
// withheld is the package's withheld for the exchange: a field external
// auth set from the service's answer is sent under the name
// auth-response-headers gives it, as nginx's proxy_set_header sends it,
// whatever ignore_invalid_headers says of the client's.
func (x *exchange) withheld(k string) bool {
	return withheld(k, x.headers()) && !x.authResponseHeader(k)
}

// authResponseHeader reports that k is an auth-response-headers name of
// the exchange's location: the request passed its external auth, which
// removed the client's fields of those names, so a field k is the
// service's.
func (x *exchange) authResponseHeader(k string) bool {
	var a *match.Auth
	switch {
	case x.route != nil:
		a = x.route.Auth
	case x.vhost != nil:
		a = x.vhost.FallbackLocation.Auth
	}
	return a != nil && a.External != nil && slices.Contains(a.External.ResponseHeaders, k)
}

func (x *exchange) headers() *headerSettings {
	if x.hdr == nil {
		return &defaultHeaderSettings
	}
	return x.hdr
}
