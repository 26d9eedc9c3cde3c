package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/compile"
	"ramjet.dev/ramjet/router"
)

// upstreamInfoLine is written from ingress-nginx's default
// log-format-upstream (internal/ingress/controller/config/config.go,
// logFormatUpstream, v1.15.1), one group per variable:
//
//	$remote_addr - $remote_user [$time_local] "$request" $status
//	$body_bytes_sent "$http_referer" "$http_user_agent" $request_length
//	$request_time [$proxy_upstream_name] [$proxy_alternative_upstream_name]
//	$upstream_addr $upstream_response_length $upstream_response_time
//	$upstream_status $req_id
var upstreamInfoLine = regexp.MustCompile(`^(?P<remote_addr>\S+) - (?P<remote_user>\S+) \[(?P<time_local>\d{2}/[A-Z][a-z]{2}/\d{4}:\d{2}:\d{2}:\d{2} [+-]\d{4})\] "(?P<request>[^"]*)" (?P<status>\d{3}) (?P<body_bytes_sent>\d+) "(?P<http_referer>[^"]*)" "(?P<http_user_agent>[^"]*)" (?P<request_length>\d+) (?P<request_time>\d+\.\d{3}) \[(?P<proxy_upstream_name>[^\]]*)\] \[(?P<proxy_alternative_upstream_name>[^\]]*)\] (?P<upstream_addr>\S+) (?P<upstream_response_length>\S+) (?P<upstream_response_time>\S+) (?P<upstream_status>\S+) (?P<req_id>\S+)\n$`)

func TestAccessLogDefaultIsUpstreamInfo(t *testing.T) {
	cfg, err := parseFlags([]string{"-manifests", t.TempDir()}, &bytes.Buffer{}, func(string) string { return "" })
	require.NoError(t, err)
	assert.Equal(t, accessLogUpstreamInfo, cfg.accessLogFormat)

	var out bytes.Buffer
	log := newAccessLog(&out, cfg.accessLogFormat)
	req := httptest.NewRequest(http.MethodPost, "/shop/cart?item=7", nil)
	req.Header.Set("User-Agent", "curl/8.5")
	req.Header.Set("Referer", "https://shop.example.com/")
	rec := nginxLogRecord()
	rec.Request, rec.Method = req, http.MethodPost
	log(rec)
	m := upstreamInfoLine.FindStringSubmatch(out.String())
	require.NotNil(t, m, "the line %q parses with ingress-nginx's default format", out.String())
	got := map[string]string{}
	for i, name := range upstreamInfoLine.SubexpNames() {
		if name != "" {
			got[name] = m[i]
		}
	}
	assert.Equal(t, "192.0.2.1", got["remote_addr"])
	assert.Equal(t, "POST /shop/cart?item=7 HTTP/1.1", got["request"])
	assert.Equal(t, "https://shop.example.com/", got["http_referer"])
	n, _ := strconv.Atoi(got["request_length"])
	assert.Greater(t, n, len("POST /shop/cart?item=7 HTTP/1.1\r\n"), "$request_length counts the request line and headers")
	assert.Equal(t, "prod-web-80", got["proxy_upstream_name"])
	assert.Equal(t, "10.0.1.1:8080", got["upstream_addr"])
	assert.Equal(t, "200", got["upstream_status"])
	assert.Equal(t, "abc123", got["req_id"])

	// An answer the router made itself still parses: nginx's "-".
	out.Reset()
	rec.Tries, rec.Endpoint, rec.Status, rec.Reason, rec.Service, rec.RequestID = 0, "", 404, router.ReasonNoRoute, router.Service{}, ""
	log(rec)
	m = upstreamInfoLine.FindStringSubmatch(out.String())
	require.NotNil(t, m, out.String())
	assert.Contains(t, out.String(), "[upstream-default-backend] [] - - - - -\n")
	assert.Equal(t, compile.DefaultLogFormat, `$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent" $request_length $request_time [$proxy_upstream_name] [$proxy_alternative_upstream_name] $upstream_addr $upstream_response_length $upstream_response_time $upstream_status $req_id`)
}
