package main

import (
	"bytes"
	"crypto/tls"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/compile"
	"ramjet.dev/ramjet/match"
	"ramjet.dev/ramjet/match/vars"
	"ramjet.dev/ramjet/router"
)

func nginxLogRecord() router.Record {
	req := httptest.NewRequest(http.MethodGet, "/shop/cart?item=7", nil)
	req.Header.Set("User-Agent", `curl/8 "x"`)
	req.Header.Set("X-Forwarded-For", "203.0.113.9")
	req.SetBasicAuth("alice", "secret")
	req.AddCookie(&http.Cookie{Name: "session", Value: "4f1c"})
	req.TLS = &tls.ConnectionState{}
	return router.Record{
		Method: "GET", Host: "shop.example.com", Path: "/shop/cart?item=7", Status: 200,
		Endpoint: "10.0.1.1:8080", Tries: 1, Request: req, RequestID: "abc123", ClientAddr: "192.0.2.1",
		VirtualHost: "shop.example.com",
		Route:       match.Source{Namespace: "prod", Name: "shop", Field: "spec.rules[0].http.paths[0]"},
		Service:     router.Service{Namespace: "prod", Name: "web", Port: 80},
		Start:       time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC), Duration: 1234 * time.Millisecond,
		UpstreamTime: 1200 * time.Millisecond, UpstreamHeaderTime: 1100 * time.Millisecond,
		BytesIn: 120, BytesOut: 512, HeaderBytes: 180, UpstreamBytes: 512,
	}
}

// TestNginxAccessLog: ingress-nginx's default log-format-upstream, and the
// variables people add, filled from a record as nginx fills them.
func TestNginxAccessLog(t *testing.T) {
	var out bytes.Buffer
	log, unknown := newNginxAccessLog(&out, `$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent" $request_length $request_time [$proxy_upstream_name] [$proxy_alternative_upstream_name] $upstream_addr $upstream_response_length $upstream_response_time $upstream_status $req_id`, escapeDefault, false)
	assert.Empty(t, unknown, "ingress-nginx's default format")
	log(nginxLogRecord())
	// $request_length: the request line, headers and body (120 bytes) as received.
	assert.Equal(t, `192.0.2.1 - alice [04/Mar/2026:05:06:08 +0000] "GET /shop/cart?item=7 HTTP/1.1" 200 512 "-" "curl/8 \x22x\x22" 288 1.234 [prod-web-80] [] 10.0.1.1:8080 512 1.200 200 abc123`+"\n", out.String())

	out.Reset()
	log, unknown = newNginxAccessLog(&out, `$host ${scheme}://$uri $args $time_iso8601 $namespace/$ingress_name $service_name:$service_port $http_x_forwarded_for $cookie_session $upstream_header_time $nope $geoip_country $nope`, escapeDefault, false)
	assert.Equal(t, []string{"nope", "geoip_country"}, unknown, "each unknown variable once")
	log(nginxLogRecord())
	assert.Equal(t, "shop.example.com https:///shop/cart item=7 2026-03-04T05:06:08+00:00 prod/shop web:80 203.0.113.9 4f1c 1.100 - - -\n", out.String())

	// $bytes_sent counts the head, $body_bytes_sent not.
	out.Reset()
	log, _ = newNginxAccessLog(&out, `$body_bytes_sent $bytes_sent`, escapeDefault, false)
	log(nginxLogRecord())
	assert.Equal(t, "512 692\n", out.String())

	// $cookie_<name> is the router's: nginx's reading, names in any case.
	out.Reset()
	rec := nginxLogRecord()
	rec.Request.Header.Set("Cookie", `a=1, SESSION="7\0542"`)
	log, _ = newNginxAccessLog(&out, `$cookie_session`, escapeDefault, false)
	log(rec)
	assert.Equal(t, `\x227\x5C0542\x22`+"\n", out.String())

	// A request the router answered itself: no upstream values.
	out.Reset()
	rec = nginxLogRecord()
	rec.Tries, rec.Endpoint, rec.Status = 0, "", 404
	log, _ = newNginxAccessLog(&out, `$status $upstream_addr $upstream_status $upstream_response_time`, escapeDefault, false)
	log(rec)
	assert.Equal(t, "404 - - -\n", out.String())
}

// TestNginxAccessLogAbsoluteForm: $request is the request line as
// received; $request_uri, $uri and $args of an absolute-form target start
// at its path, as nginx's (nginx 1.22: "GET http://h?q" has $request_uri
// "?q" and $uri "/").
func TestNginxAccessLogAbsoluteForm(t *testing.T) {
	var out bytes.Buffer
	log, _ := newNginxAccessLog(&out, `"$request" $request_uri $uri $args`, escapeDefault, false)
	rec := nginxLogRecord()
	rec.Path = "http://shop.example.com/shop/cart?item=7"
	log(rec)
	assert.Equal(t, `"GET http://shop.example.com/shop/cart?item=7 HTTP/1.1" /shop/cart?item=7 /shop/cart item=7`+"\n", out.String())

	out.Reset()
	rec.Path = "http://shop.example.com?item=7"
	log(rec)
	assert.Equal(t, `"GET http://shop.example.com?item=7 HTTP/1.1" ?item=7 / item=7`+"\n", out.String())
}

// TestNginxAccessLogJSON: log-format-escape-json escapes for a JSON
// string and logs an empty value as "".
func TestNginxAccessLogJSON(t *testing.T) {
	var out bytes.Buffer
	log, _ := newNginxAccessLog(&out, `{"ua": "$http_user_agent", "ref": "$http_referer", "status": $status}`, escapeJSON, false)
	log(nginxLogRecord())
	assert.Equal(t, `{"ua": "curl/8 \"x\"", "ref": "", "status": 200}`+"\n", out.String())

	// ngx_escape_json: the named control characters by name, the rest
	// as \u00XX with an upper-case digit; bytes from 0x7f kept.
	out.Reset()
	rec := nginxLogRecord()
	rec.Request.Header.Set("User-Agent", "a\x1b\x1f\x00\n\t\x7f\xe9")
	log(rec)
	assert.Equal(t, `{"ua": "a\u001B\u001F\u0000\n\t`+"\x7f\xe9"+`", "ref": "", "status": 200}`+"\n", out.String())
}

// TestNginxLogVariables: the access log fills exactly the variables the
// library's parser knows, so its warnings name what the log cannot fill.
func TestNginxLogVariables(t *testing.T) {
	for name := range nginxLogVars {
		r, ok := compile.LogFormat.Vars.Lookup(name)
		assert.True(t, ok && r.Var != vars.Unknown, name)
	}
	for prefix := range nginxLogPrefixes {
		r, ok := compile.LogFormat.Vars.Lookup(prefix + "x")
		assert.True(t, ok && r.Var.Family(), prefix)
	}
	_, unknown := parseNginxLogFormat(compile.LogFormat.Expands(), false)
	assert.Equal(t, []string{"http_", "cookie_"}, unknown, "every variable LogFormat reads has a filler")
}

// TestConfigMapLogFormat: the keys reach the access log, and an unknown
// variable is a warning naming it.
func TestConfigMapLogFormat(t *testing.T) {
	c := flagsWith(t)
	warns := applyConfigMap(&c, cmData(map[string]string{"log-format-upstream": "$status $bogus", "log-format-escape-json": "true"}), c.flagsSet)
	require.Len(t, warns, 1)
	assert.Equal(t, "log-format-upstream", warns[0].key)
	assert.Contains(t, warns[0].message, "$bogus")
	assert.Equal(t, "$status $bogus", c.logKeys.format)
	assert.Equal(t, escapeJSON, c.logKeys.escape)
}

// TestNginxAccessLogRetries: a request passed on from one endpoint to
// another lists every try in the upstream variables, as nginx does
// ("a, b"), the failed try first.
func TestNginxAccessLogRetries(t *testing.T) {
	var out bytes.Buffer
	log, _ := newNginxAccessLog(&out, `$upstream_addr|$upstream_status|$upstream_response_time|$upstream_response_length`, escapeDefault, false)
	rec := nginxLogRecord()
	rec.Tries = 2
	rec.PassedOn = []router.Try{{Endpoint: "10.0.1.9:8080", Status: 502, Ended: 3 * time.Millisecond}}
	log(rec)
	assert.Equal(t, "10.0.1.9:8080, 10.0.1.1:8080|502, 200|0.003, 1.197|0, 512\n", out.String())
}

// TestNginxAccessLogTimeIsTheEnd: $time_local and $time_iso8601 are when
// nginx writes the line, the request's end, as $msec is; a long request
// is not logged at the time it began.
func TestNginxAccessLogTimeIsTheEnd(t *testing.T) {
	var out bytes.Buffer
	log, _ := newNginxAccessLog(&out, `[$time_local] $time_iso8601 $msec`, escapeDefault, false)
	rec := nginxLogRecord()
	rec.Duration = 90 * time.Second
	log(rec)
	assert.Equal(t, "[04/Mar/2026:05:07:37 +0000] 2026-03-04T05:07:37+00:00 1772600857.000\n", out.String())
}

// TestNginxRemoteUser: $remote_user as nginx's ngx_http_auth_basic_user
// reads it: the scheme in any case, spaces after it skipped, and no user
// when the decoded credentials hold no ':' or begin with one.
func TestNginxRemoteUser(t *testing.T) {
	enc := base64.StdEncoding.EncodeToString
	for auth, want := range map[string]string{
		"Basic " + enc([]byte("alice:secret")):   "alice",
		"basic " + enc([]byte("alice:secret")):   "alice",
		"BASIC   " + enc([]byte("alice:secret")): "alice",
		"Basic " + enc([]byte("alice:")):         "alice",
		"Basic " + enc([]byte("alice")):          "",
		"Basic " + enc([]byte(":secret")):        "",
		"Bearer " + enc([]byte("alice:secret")):  "",
		"Basic !!!":                              "",
	} {
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		req.Header.Set("Authorization", auth)
		assert.Equal(t, want, remoteUser(&router.Record{Request: req}), auth)
	}
}

// TestNginxAccessLogNoUpstreamResponse: a backend that sent no response
// (unreachable, or silent past the read timeout) logs
// $upstream_response_length 0, as nginx does; the bytes of the router's
// own 502 or 504 are $body_bytes_sent, not the backend's.
func TestNginxAccessLogNoUpstreamResponse(t *testing.T) {
	var out bytes.Buffer
	log, _ := newNginxAccessLog(&out, `$status $body_bytes_sent $upstream_addr $upstream_status $upstream_response_length`, escapeDefault, false)
	rec := nginxLogRecord()
	rec.Status, rec.Reason, rec.BytesOut, rec.UpstreamHeaderTime, rec.UpstreamBytes = 502, router.ReasonUpstreamUnreachable, 51, 0, 0
	log(rec)
	assert.Equal(t, "502 51 10.0.1.1:8080 502 0\n", out.String())
}

// TestNginxAccessLogErrorPage: an error page's exchange follows the
// intercepted one in the $upstream_* variables after " : ", as nginx lists
// the upstream of an internal redirect.
func TestNginxAccessLogErrorPage(t *testing.T) {
	var out bytes.Buffer
	log, _ := newNginxAccessLog(&out, `$status $upstream_addr|$upstream_status|$upstream_response_time|$upstream_response_length`, escapeDefault, false)
	rec := nginxLogRecord()
	rec.Status, rec.UpstreamBytes, rec.BytesOut = 404, 0, 9
	rec.PassedOn = []router.Try{{Endpoint: "10.0.1.9:8080", Status: 502, Ended: 3 * time.Millisecond}}
	rec.ErrorPage = &router.ErrorPage{Intercepted: 503, Endpoint: "10.0.9.9:8080", Status: 404, Time: 200 * time.Millisecond, Bytes: 9}
	log(rec)
	assert.Equal(t, "404 10.0.1.9:8080, 10.0.1.1:8080 : 10.0.9.9:8080|502, 503 : 404|0.003, 0.997 : 0.200|0, 0 : 9\n", out.String())
}

// TestNginxAccessLogDefaultBackendUpstream: ingress-nginx names the
// global default backend's upstream upstream-default-backend, whichever
// Service --default-backend-service names, on the default server and on
// a host's own default location alike; a Service an Ingress names keeps
// its namespace-service-port.
func TestNginxAccessLogDefaultBackendUpstream(t *testing.T) {
	var out bytes.Buffer
	log, _ := newNginxAccessLog(&out, `$proxy_upstream_name`, escapeDefault, false)
	rec := nginxLogRecord()
	rec.Route = match.Source{Field: compile.GlobalDefaultBackendField}
	rec.Service = router.Service{Namespace: "ingress", Name: "default-http-backend", Port: 80}
	log(rec)
	rec.VirtualHost = ""
	log(rec)
	rec = nginxLogRecord()
	rec.Route = match.Source{Namespace: "prod", Name: "shop", Field: "spec.defaultBackend"}
	log(rec)
	assert.Equal(t, "upstream-default-backend\nupstream-default-backend\nprod-web-80\n", out.String())
}

// TestNginxAccessLogSetEmpty: nginx logs "-" for a variable without a
// value, and nothing for one set to "": ingress-nginx's locations set
// $proxy_alternative_upstream_name (and $namespace, $ingress_name,
// $service_name, $service_port) to "" unless they name something, so its
// default line reads "[]" for a request no canary took. A request refused
// before any location has none of them.
func TestNginxAccessLogSetEmpty(t *testing.T) {
	var out bytes.Buffer
	log, _ := newNginxAccessLog(&out, `[$proxy_upstream_name] [$proxy_alternative_upstream_name] "$namespace" "$ingress_name" "$service_name" "$service_port" "$http_referer"`, escapeDefault, false)
	log(nginxLogRecord())
	rec := nginxLogRecord()
	rec.Tries, rec.Endpoint, rec.Status, rec.Reason, rec.Service, rec.Route, rec.VirtualHost = 0, "", 404, router.ReasonNoRoute, router.Service{}, match.Source{}, ""
	log(rec)
	rec.Status, rec.Reason, rec.RequestLine = 400, router.ReasonRefused, "GET /\x00"
	log(rec)
	assert.Equal(t, `[prod-web-80] [] "prod" "shop" "web" "80" "-"`+"\n"+
		`[upstream-default-backend] [] "" "" "" "" "-"`+"\n"+
		`[-] [-] "-" "-" "-" "-" "-"`+"\n", out.String())
}

// TestNginxAccessLogTryTimes: $upstream_connect_time and
// $upstream_header_time list every try as nginx does, each try's own time
// from its start: "-" for a try that opened no connection or got no
// response head, 0.000 for a kept-alive connection reused, the error
// page's exchange after " : ", "-" there too when it opened no
// connection.
func TestNginxAccessLogTryTimes(t *testing.T) {
	var out bytes.Buffer
	log, unknown := newNginxAccessLog(&out, `$upstream_connect_time|$upstream_header_time`, escapeDefault, false)
	require.Empty(t, unknown)
	rec := nginxLogRecord()
	rec.UpstreamConnectTime = 0 // reused
	log(rec)
	rec.Tries = 3
	rec.PassedOn = []router.Try{
		{Endpoint: "10.0.1.8:8080", Status: 502, Ended: 3 * time.Millisecond, Connect: -1},
		{Endpoint: "10.0.1.9:8080", Status: 503, Ended: 100 * time.Millisecond, Connect: 2 * time.Millisecond, Header: 90 * time.Millisecond},
	}
	rec.UpstreamConnectTime = 6 * time.Millisecond // 2 ms, then 4 ms for the last
	log(rec)
	rec.Status, rec.Reason, rec.UpstreamHeaderTime = 502, router.ReasonUpstreamUnreachable, 0
	log(rec)
	rec.Status, rec.Reason, rec.UpstreamHeaderTime = 404, "", 1100*time.Millisecond
	rec.ErrorPage = &router.ErrorPage{Intercepted: 503, Endpoint: "10.0.9.9:8080", Status: 404, Time: 200 * time.Millisecond, Bytes: 9, Header: 150 * time.Millisecond, Connect: 3 * time.Millisecond}
	log(rec)
	rec.ErrorPage.Status, rec.ErrorPage.Header = 502, 0
	log(rec)
	rec.ErrorPage.Connect = -1 // the error backend refused the connection
	log(rec)
	assert.Equal(t, "0.000|1.100\n"+
		"-, 0.002, 0.004|-, 0.090, 1.000\n"+
		"-, 0.002, -|-, 0.090, -\n"+
		"-, 0.002, 0.004 : 0.003|-, 0.090, 1.000 : 0.150\n"+
		"-, 0.002, 0.004 : 0.003|-, 0.090, 1.000 : -\n"+
		"-, 0.002, 0.004 : -|-, 0.090, 1.000 : -\n", out.String())
}

// TestNginxAccessLogDefaultBackendService: ingress-nginx's locations set
// $service_name and $service_port from their Ingress
// (getIngressInformation): the default server's location has none, and a
// host's own default location has its creator's spec.defaultBackend,
// none when the global default backend serves it. The global default
// backend's Service is never named there.
func TestNginxAccessLogDefaultBackendService(t *testing.T) {
	var out bytes.Buffer
	log, _ := newNginxAccessLog(&out, `"$namespace" "$ingress_name" "$service_name" "$service_port"`, escapeDefault, false)
	rec := nginxLogRecord()
	rec.Route = match.Source{Namespace: "prod", Name: "shop", Field: compile.GlobalDefaultBackendField}
	rec.Service = router.Service{Namespace: "ingress", Name: "default-http-backend", Port: 80}
	log(rec)
	rec.VirtualHost, rec.Route = "", match.Source{Field: compile.GlobalDefaultBackendField}
	log(rec)
	assert.Equal(t, `"prod" "shop" "" ""`+"\n"+`"" "" "" ""`+"\n", out.String())
}

// TestNginxAccessLogLocationPath: $location_path is what nginx.tmpl sets
// in each location (set $location_path, getIngressInformation's Path):
// the path as the Ingress declares it, "/" for a location with no path of
// its own, and "" on the default server, whose location names no Ingress.
func TestNginxAccessLogLocationPath(t *testing.T) {
	var out bytes.Buffer
	log, unknown := newNginxAccessLog(&out, `"$location_path"`, escapeDefault, false)
	require.Empty(t, unknown)
	rec := nginxLogRecord()
	for _, rt := range []*match.Route{
		{Type: match.Prefix, Path: "/shop"},
		{Type: match.Prefix, Path: ""},
		{Type: match.Exact, Path: "/shop/cart"},
		{Type: match.Regex, Path: "/shop/.*"},
		// A host in regex mode: the pattern of a Prefix path, and a
		// declared pattern's leading "^", are the declared path's.
		{Type: match.Regex, Path: "/shop/", OrderPath: "/shop"},
		{Type: match.Regex, Path: "/shop/[0-9]+", OrderPath: "^/shop/[0-9]+"},
	} {
		rec.MatchedRoute = rt
		log(rec)
	}
	rec.MatchedRoute, rec.Route = nil, match.Source{Namespace: "prod", Name: "shop", Field: "spec.defaultBackend"}
	log(rec)
	rec.Tries, rec.Endpoint, rec.Status, rec.Reason, rec.Service, rec.Route, rec.VirtualHost = 0, "", 404, router.ReasonNoRoute, router.Service{}, match.Source{}, ""
	log(rec)
	assert.Equal(t, `"/shop" "/" "/shop/cart" "/shop/.*" "/shop" "^/shop/[0-9]+" "/" ""`, strings.Join(strings.Fields(out.String()), " "))

	_, unknown = parseNginxLogFormat(`$location_path`, false)
	assert.Empty(t, unknown)
	assert.Empty(t, compile.UnknownLogVariables(`$location_path`), "the ConfigMap's warning")
}

// TestNginxAccessLogUnresolvedPort: a Service port named by the Ingress
// that the Service does not have keeps its name in ingress-nginx's
// upstream (util.go upstreamName: namespace-service-port as the backend
// declares it) and in $service_port (getIngressInformation), not a 0.
func TestNginxAccessLogUnresolvedPort(t *testing.T) {
	var out bytes.Buffer
	log, _ := newNginxAccessLog(&out, `[$proxy_upstream_name] "$service_port"`, escapeDefault, false)
	rec := nginxLogRecord()
	rec.Tries, rec.Endpoint, rec.Status, rec.Reason = 0, "", 503, router.ReasonPortNotFound
	rec.Backend, rec.Service = "prod/web:http", router.Service{Namespace: "prod", Name: "web"}
	log(rec)
	rec = nginxLogRecord()
	rec.Backend = "prod/web:80"
	log(rec)
	assert.Equal(t, "[prod-web-http] \"http\"\n[prod-web-80] \"80\"\n", out.String())
}

// TestNginxAccessLogHTTPVariables: $http_<name> as nginx reads it: $http_host
// is the Host line as sent (net/http keeps it out of Header), Cookie lines
// join with "; ", and an X_User line counts for $http_x_user only where
// nginx keeps names with '_' (enable-underscores-in-headers).
func TestNginxAccessLogHTTPVariables(t *testing.T) {
	for _, underscores := range []bool{false, true} {
		var out bytes.Buffer
		log, unknown := newNginxAccessLog(&out, `$http_host|$http_cookie|$http_x_user`, escapeDefault, underscores)
		assert.Empty(t, unknown)
		rec := nginxLogRecord()
		rec.Request.Host = "Shop.Example.com:8080"
		rec.Request.Header["Cookie"] = []string{"a=1", "b=2"}
		rec.Request.Header["X_User"] = []string{"alice"}
		log(rec)
		want := "Shop.Example.com:8080|a=1; b=2|-\n"
		if underscores {
			want = "Shop.Example.com:8080|a=1; b=2|alice\n"
		}
		assert.Equal(t, want, out.String(), "underscores %v", underscores)
	}
}

// TestNginxAccessLogCanaryService: a request the canary took is logged
// under its location, the primary Ingress's: $service_name and
// $service_port are what getIngressInformation sets there (the
// primary's Service), $proxy_upstream_name the primary's upstream, and
// only $proxy_alternative_upstream_name names the canary's, as
// ingress-nginx's balancer sets it.
func TestNginxAccessLogCanaryService(t *testing.T) {
	var out bytes.Buffer
	log, _ := newNginxAccessLog(&out, `$namespace/$ingress_name $service_name:$service_port [$proxy_upstream_name] [$proxy_alternative_upstream_name]`, escapeDefault, false)
	canary := &match.Backend{ID: "prod/web-canary:8080", Namespace: "prod", Name: "web-canary", Port: 8080}
	primary := &match.Backend{ID: "prod/web:80", Namespace: "prod", Name: "web", Port: 80,
		Traffic: &match.Traffic{Canary: &match.Canary{Backend: canary, Weight: 10, WeightTotal: 100}}}
	rec := nginxLogRecord()
	rec.MatchedRoute = &match.Route{Type: match.Prefix, Path: "/shop", Source: rec.Route, Backend: primary}
	rec.Backend = primary.ID
	log(rec)
	rec.Backend, rec.Service = canary.ID, router.Service{Namespace: "prod", Name: "web-canary", Port: 8080}
	log(rec)
	assert.Equal(t, "prod/shop web:80 [prod-web-80] []\n"+
		"prod/shop web:80 [prod-web-80] [prod-web-canary-8080]\n", out.String())
}

// TestNginxAccessLogURI: nginx's $uri is the normalized path, decoded,
// slashes merged and dot segments resolved, where $request_uri is the
// target as received.
func TestNginxAccessLogURI(t *testing.T) {
	for path, want := range map[string]string{
		"/a%20b//c/./d?x=1":     "/a b/c/d /a%20b//c/./d?x=1\n",
		"/shop/../cart%2Fitems": "/cart/items /shop/../cart%2Fitems\n",
		"http://h.example?q":    "/ ?q\n",
	} {
		var out bytes.Buffer
		log, _ := newNginxAccessLog(&out, `$uri $request_uri`, escapeDefault, false)
		rec := nginxLogRecord()
		rec.Path = path
		log(rec)
		assert.Equal(t, want, out.String(), path)
	}
}

// TestNginxAccessLogRewrittenURI: after a rewrite (rewrite-target's
// "rewrite ... break"), nginx logs the rewritten $uri, decoded and not
// normalized again, and its $args; $request_uri stays as received
// (checked with nginx 1.22 on loopback).
func TestNginxAccessLogRewrittenURI(t *testing.T) {
	for rewritten, want := range map[string]string{
		"/bar/x%41y?foo=1": "/bar/xAy foo=1 /foo/x%41y?foo=1\n",
		"/bar//a":          "/bar//a - /foo/x%41y?foo=1\n",
		"/bar/%zz?":        "/bar/%zz - /foo/x%41y?foo=1\n",
	} {
		var out bytes.Buffer
		log, _ := newNginxAccessLog(&out, `$uri $args $request_uri`, escapeDefault, false)
		rec := nginxLogRecord()
		rec.Path, rec.Rewritten = "/foo/x%41y?foo=1", rewritten
		log(rec)
		assert.Equal(t, want, out.String(), rewritten)
	}
}

// TestNginxAccessLogServerName: $server_name is the server block's name,
// a wildcard as declared, and "_" for ingress-nginx's catch-all server,
// which serves hosts no Ingress names too.
func TestNginxAccessLogServerName(t *testing.T) {
	for vhost, want := range map[string]string{"shop.example.com": "shop.example.com", "*.example.com": "*.example.com", "": "_"} {
		var out bytes.Buffer
		log, _ := newNginxAccessLog(&out, `$server_name`, escapeDefault, false)
		rec := nginxLogRecord()
		rec.VirtualHost = vhost
		log(rec)
		assert.Equal(t, want+"\n", out.String(), vhost)
	}
}

// TestNginxAccessLogConnectTimedOut: a last try whose connect timed out
// (504, as nginx answers it) opened no connection, as a refused one: "-"
// in $upstream_connect_time, as nginx logs it, whatever time it spent.
func TestNginxAccessLogConnectTimedOut(t *testing.T) {
	var out bytes.Buffer
	log, unknown := newNginxAccessLog(&out, `$status $upstream_status $upstream_connect_time`, escapeDefault, false)
	require.Empty(t, unknown)
	rec := nginxLogRecord()
	rec.Status, rec.Reason, rec.UpstreamHeaderTime, rec.UpstreamBytes = 504, router.ReasonUpstreamTimeout, 0, 0
	rec.UpstreamConnectTime, rec.Unconnected = 5*time.Second, true
	log(rec)
	rec.Unconnected = false // a read timeout: connected
	rec.UpstreamConnectTime = 2 * time.Millisecond
	log(rec)
	assert.Equal(t, "504 504 -\n504 504 0.002\n", out.String())
}
