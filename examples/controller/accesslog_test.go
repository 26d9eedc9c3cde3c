package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/router"
)

func TestAccessLog(t *testing.T) {
	refused := router.Record{
		Method: "GET", Host: "shop.example.com", Path: "/nothing", Status: 404, Reason: router.ReasonNoRoute,
		ClientAddr: "192.0.2.1", VirtualHost: "shop.example.com", Start: time.Unix(1700000000, 0).UTC(), Duration: 1500 * time.Microsecond,
		Generation: 3,
	}
	tests := []struct {
		name string
		rec  router.Record
		want map[string]any
	}{
		{
			name: "proxied",
			rec:  proxied("shop.example.com", "shop.example.com", apiRoute),
			want: map[string]any{
				"time": "2023-11-14T22:13:20Z", "msg": "request",
				"client": "192.0.2.1", "request_id": "0123456789abcdef0123456789abcdef",
				"method": "GET", "host": "shop.example.com", "target": "/api/items?x=1", "proto": "HTTP/1.1",
				"status": 200.0, "bytes_in": 0.0, "bytes_out": 55.0, "duration": 0.25,
				"upstream": "10.0.0.7:8080", "tries": 1.0, "upstream_header_time": 0.2, "upstream_time": 0.24,
				"ingress": "shop/web", "route": "spec.rules[0].http.paths[0]", "virtual_host": "shop.example.com",
				"service": "shop/api:80", "user_agent": "test", "generation": 0.0,
			},
		},
		{
			name: "the router's own answer has no upstream fields",
			rec:  refused,
			want: map[string]any{
				"time": "2023-11-14T22:13:20Z", "msg": "request",
				"client": "192.0.2.1", "method": "GET", "host": "shop.example.com", "target": "/nothing",
				"status": 404.0, "bytes_in": 0.0, "bytes_out": 0.0, "duration": 0.002,
				"virtual_host": "shop.example.com", "reason": "no-route", "generation": 3.0,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			newAccessLog(&out, accessLogJSON)(tt.rec)
			require.Equal(t, 1, strings.Count(out.String(), "\n"), "one line: %s", out.String())
			var got map[string]any
			require.NoError(t, json.Unmarshal(out.Bytes(), &got), out.String())
			if ts, ok := got["time"].(string); ok {
				parsed, err := time.Parse(time.RFC3339Nano, ts)
				require.NoError(t, err)
				got["time"] = parsed.UTC().Format(time.RFC3339)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("JSON line (-want +got):\n%s", diff)
			}

			out.Reset()
			newAccessLog(&out, accessLogText)(tt.rec)
			line := out.String()
			require.Equal(t, 1, strings.Count(line, "\n"), line)
			require.True(t, strings.HasPrefix(line, "time="), line)
			require.NotContains(t, line, "level=", "an access line has no level")
			require.Contains(t, line, " msg=request ")
			require.Contains(t, line, " host=shop.example.com ")
			require.Contains(t, line, fmt.Sprintf(" status=%d ", tt.rec.Status))
		})
	}
}

// A location with enable-access-log: "false" writes no line, in either
// format; the next request does.
func TestAccessLogSkipsUnlogged(t *testing.T) {
	for _, format := range []string{accessLogText, accessLogJSON} {
		var out bytes.Buffer
		log := newAccessLog(&out, format)
		log(router.Record{Method: "GET", Host: "a.example.com", Path: "/quiet", Status: 200, NoAccessLog: true})
		require.Empty(t, out.String(), format)
		log(router.Record{Method: "GET", Host: "a.example.com", Path: "/loud", Status: 200})
		require.Contains(t, out.String(), "/loud", format)
	}
}

// enable-access-log: "false" silences the location in ingress-nginx's
// default line and in a log-format-upstream of the ConfigMap too (nginx's
// access_log off in the location, whatever the format).
func TestNginxAccessLogSkipsUnlogged(t *testing.T) {
	var out bytes.Buffer
	logs := map[string]func(router.Record){
		"upstreaminfo": newAccessLog(&out, accessLogUpstreamInfo),
	}
	logs["log-format-upstream"], _ = newNginxAccessLog(&out, "$status $request_uri", escapeDefault, false)
	logs["log-format-escape-json"], _ = newNginxAccessLog(&out, "$status $request_uri", escapeJSON, false)
	for name, log := range logs {
		out.Reset()
		log(router.Record{Method: "GET", Host: "a.example.com", Path: "/quiet", Status: 200, NoAccessLog: true})
		require.Empty(t, out.String(), name)
		log(router.Record{Method: "GET", Host: "a.example.com", Path: "/loud", Status: 200})
		require.Contains(t, out.String(), "/loud", name)
	}
}
