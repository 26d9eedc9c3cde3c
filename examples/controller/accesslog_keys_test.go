package main

import (
	"bytes"
	"log/slog"
	"maps"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/compile"
	"ramjet.dev/ramjet/match"
	"ramjet.dev/ramjet/router"
)

// TestConfigMapAccessLogKeys: enable-access-log-for-default-backend,
// skip-access-log-urls and log-format-escape-none shape the access log as
// ingress-nginx's template does: the default server's own location
// (a host no rule names, served by the default backend or answering 404)
// is logged only when asked, a $request_uri listed in skip-access-log-urls
// (nginx's map: exact, any case) is not logged, and escape=none writes
// values as they are, over escape=json.
func TestConfigMapAccessLogKeys(t *testing.T) {
	unmatched := router.Record{Method: "GET", Host: "stranger.test", Path: "/unmatched", Status: 404, Reason: router.ReasonNoRoute}
	viaDefault := router.Record{Method: "GET", Host: "stranger.test", Path: "/via-default", Status: 200, Tries: 1,
		Route: match.Source{Field: compile.GlobalDefaultBackendField}}
	namedHost := router.Record{Method: "GET", Host: "a.example.com", VirtualHost: "a.example.com", Path: "/named-host-fallback", Status: 200, Tries: 1,
		Route: match.Source{Field: compile.GlobalDefaultBackendField}}
	named404 := router.Record{Method: "GET", Host: "a.example.com", VirtualHost: "a.example.com", Path: "/named-host-404", Status: 404, Reason: router.ReasonNoRoute}
	badPath := router.Record{Method: "GET", Host: "stranger.test", Path: "/../bad", Status: 400, Reason: router.ReasonBadPath}
	at := func(path string) router.Record {
		return router.Record{Method: "GET", Host: "a.example.com", VirtualHost: "a.example.com", Path: path, Status: 200,
			Route: match.Source{Namespace: "prod", Name: "web"}}
	}
	for _, tc := range []struct {
		name   string
		data   map[string]string
		recs   []router.Record
		logged []string // the paths logged, in order
	}{
		{"the default server's location is not logged by default", nil,
			[]router.Record{unmatched, viaDefault, namedHost, named404, badPath},
			[]string{"/named-host-fallback", "/named-host-404", "/../bad"}},
		{"enable-access-log-for-default-backend", map[string]string{"enable-access-log-for-default-backend": "true"},
			[]router.Record{unmatched, viaDefault, namedHost},
			[]string{"/unmatched", "/via-default", "/named-host-fallback"}},
		{"skip-access-log-urls", map[string]string{"skip-access-log-urls": " /health, /Metrics ,"},
			[]router.Record{at("/health"), at("/metrics"), at("/health?x=1"), at("/healthz"), at("/")},
			[]string{"/health?x=1", "/healthz", "/"}},
		// $request_uri of an absolute-form target starts at its path.
		{"skip-access-log-urls absolute form", map[string]string{"skip-access-log-urls": "/health"},
			[]router.Record{at("http://a.example.com/health"), at("http://a.example.com/healthz")},
			[]string{"http://a.example.com/healthz"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, format := range []string{accessLogUpstreamInfo, accessLogText, accessLogJSON} {
				line := "$request_uri"
				if format != accessLogUpstreamInfo {
					line = "" // the -access-log-format line
				}
				c, out := accessLogWith(t, line, tc.data, "-access-log-format", format)
				observe := requestObserver(c, nil)
				require.NotNil(t, observe)
				var want []string
				for _, r := range tc.recs {
					out.Reset()
					observe(r)
					if out.Len() > 0 {
						want = append(want, r.Path)
					}
				}
				assert.Equal(t, tc.logged, want, format)
			}
		})
	}
}

// TestConfigMapLogFormatEscapeNone: log-format-escape-none writes values
// as they are, and wins over log-format-escape-json, as nginx.tmpl tests
// it first.
func TestConfigMapLogFormatEscapeNone(t *testing.T) {
	req := httptest.NewRequest("GET", "/", nil)
	req.Header.Set("User-Agent", "a \"quoted\" \\ agent")
	rec := router.Record{Method: "GET", Host: "a.example.com", VirtualHost: "a.example.com", Path: "/", Status: 200, Request: req}
	for _, tc := range []struct {
		data map[string]string
		want string
	}{
		{map[string]string{}, `a \x22quoted\x22 \x5C agent` + "\n"},
		{map[string]string{"log-format-escape-json": "true"}, `a \"quoted\" \\ agent` + "\n"},
		{map[string]string{"log-format-escape-none": "true"}, `a "quoted" \ agent` + "\n"},
		{map[string]string{"log-format-escape-none": "true", "log-format-escape-json": "true"}, `a "quoted" \ agent` + "\n"},
	} {
		c, out := accessLogWith(t, "$http_user_agent", tc.data)
		requestObserver(c, nil)(rec)
		assert.Equal(t, tc.want, out.String(), "%v", tc.data)
	}
}

// TestAccessLogRequestIDAlwaysFilled: ingress-nginx's $req_id is the
// client's X-Request-ID, else (generate-request-id, on by default) a new
// random one, for every request, its own 404s included: the router
// records none for an answer it made itself, so the log makes it.
func TestAccessLogRequestIDAlwaysFilled(t *testing.T) {
	own := router.Record{Method: "GET", Host: "a.example.com", VirtualHost: "a.example.com", Path: "/", Status: 404, Reason: router.ReasonNoRoute,
		Request: httptest.NewRequest("GET", "/", nil)}
	withHeader := own
	withHeader.Request = httptest.NewRequest("GET", "/", nil)
	withHeader.Request.Header.Set("X-Request-ID", "from-the-client")
	proxied := own
	proxied.RequestID = "0123456789abcdef0123456789abcdef"
	for _, tc := range []struct {
		data map[string]string
		rec  router.Record
		want string // a regular expression
	}{
		{nil, own, `^[0-9a-f]{32}\n$`},
		{nil, withHeader, "^from-the-client\n$"},
		{nil, proxied, "^0123456789abcdef0123456789abcdef\n$"},
		{map[string]string{"generate-request-id": "false"}, own, "^-\n$"},
		{map[string]string{"generate-request-id": "false"}, withHeader, "^from-the-client\n$"},
	} {
		c, out := accessLogWith(t, "$req_id", tc.data)
		requestObserver(c, nil)(tc.rec)
		assert.Regexp(t, tc.want, out.String(), "%v", tc.data)
	}
}

// TestConfigMapDisableAccessLog: disable-access-log and
// disable-http-access-log turn the HTTP access log off, as nginx.tmpl's
// "access_log off" for either, without a warning.
func TestConfigMapDisableAccessLog(t *testing.T) {
	rec := router.Record{Method: "GET", Host: "a.example.com", VirtualHost: "a.example.com", Path: "/", Status: 200,
		Route: match.Source{Namespace: "prod", Name: "web"}}
	for _, tc := range []struct {
		data   map[string]string
		logged bool
	}{
		{map[string]string{}, true},
		{map[string]string{"disable-access-log": "true"}, false},
		{map[string]string{"disable-http-access-log": "true"}, false},
		{map[string]string{"disable-access-log": "false", "disable-http-access-log": "false"}, true},
	} {
		c, out := accessLogWith(t, "", tc.data)
		requestObserver(c, nil)(rec)
		assert.Equal(t, tc.logged, out.Len() > 0, "%v: %q", tc.data, out.String())
	}
}

// TestConfigMapAuthAccessLog: enable-auth-access-log logs each auth-url
// subrequest (the router's AuthObserver) on the access log, as nginx.tmpl
// leaves the auth location's access_log on and log_subrequest logs it:
// the request's line and $request_uri, the auth location as $uri, no
// $args, the service's status and exchange, no request length. Off, as
// by default, only the requests are logged.
func TestConfigMapAuthAccessLog(t *testing.T) {
	req := httptest.NewRequest("GET", "/app/x?a=1", nil)
	main := router.Record{Method: "GET", Host: "a.example.com", VirtualHost: "a.example.com", Path: "/app/x?a=1", Status: 200,
		Request: req, RequestID: "req-1", Endpoint: "10.0.0.1:80", Tries: 1, BytesIn: 3,
		Route: match.Source{Namespace: "prod", Name: "web"}}
	sub := main
	sub.Subrequest, sub.Status, sub.Endpoint, sub.BytesIn = "/_external-auth-L2FwcC8-Prefix", 401, "10.0.0.9:8080", 0
	mainLine := "/app/x [a=1] /app/x?a=1 200 " + strconv.FormatInt(requestLength(main), 10) + " 10.0.0.1:80 200 req-1\n"
	for _, tc := range []struct {
		data map[string]string
		want string
	}{
		{nil, mainLine},
		{map[string]string{"enable-auth-access-log": "false"}, mainLine},
		{map[string]string{"enable-auth-access-log": "true"}, "/_external-auth-L2FwcC8-Prefix [-] /app/x?a=1 401 0 10.0.0.9:8080 401 req-1\n" + mainLine},
	} {
		c, out := accessLogWith(t, "$uri [$args] $request_uri $status $request_length $upstream_addr $upstream_status $req_id", tc.data)
		o := routerOptions(c, slog.New(slog.DiscardHandler), nil)
		require.NotNil(t, o.AuthObserver, "%v", tc.data)
		o.AuthObserver(sub)
		o.Observer(main)
		assert.Equal(t, tc.want, out.String(), "%v", tc.data)
	}
}

// TestAccessLogNginxRequestID: $request_id is nginx's own ID of the
// request, which ingress-nginx's $req_id takes when the client sent no
// X-Request-ID (generate-request-id): the same as $req_id then, another
// random one when the client sent its own, and one even with
// generate-request-id "false" (checked with nginx 1.22 on loopback). It
// is filled, not warned about.
func TestAccessLogNginxRequestID(t *testing.T) {
	assert.Empty(t, compile.UnknownLogVariables("$request_id"))
	own := router.Record{Method: "GET", Host: "a.example.com", VirtualHost: "a.example.com", Path: "/", Status: 200,
		Request: httptest.NewRequest("GET", "/", nil), RequestID: "0123456789abcdef0123456789abcdef"}
	fromClient := own
	fromClient.Request = httptest.NewRequest("GET", "/", nil)
	fromClient.Request.Header.Set("X-Request-ID", "from-the-client")
	fromClient.RequestID = "from-the-client"
	notMade := own
	notMade.RequestID = ""
	for _, tc := range []struct {
		data map[string]string
		rec  router.Record
		want string // a regular expression
	}{
		{nil, own, "^0123456789abcdef0123456789abcdef 0123456789abcdef0123456789abcdef\n$"},
		{nil, fromClient, "^[0-9a-f]{32} from-the-client\n$"},
		{map[string]string{"generate-request-id": "false"}, notMade, "^[0-9a-f]{32} -\n$"},
	} {
		c, out := accessLogWith(t, "$request_id $req_id", tc.data)
		requestObserver(c, nil)(tc.rec)
		assert.Regexp(t, tc.want, out.String(), "%v", tc.data)
	}
}

// accessLogWith is the configuration of flags and a ConfigMap of data,
// with log-format-upstream set to line unless that is empty, and the
// buffer its access log writes to.
func accessLogWith(t *testing.T, line string, data map[string]string, flags ...string) (config, *bytes.Buffer) {
	t.Helper()
	c := flagsWith(t, flags...)
	cm := map[string]string{}
	if line != "" {
		cm["log-format-upstream"] = line
	}
	maps.Copy(cm, data)
	require.Empty(t, applyConfigMap(&c, cmData(cm), c.flagsSet), "%v", data)
	out := &bytes.Buffer{}
	c.accessLogOut = out
	c.accessLog = &liveAccessLog{out: out, format: c.accessLogFormat}
	return c, out
}
