package main

import (
	"io"
	"maps"
	"testing"
)

// TestGatewayPorts: the HTTP and HTTPS listeners' ports map to the Gateway
// ports they serve (-gateway-http-port, -gateway-https-port); a listener
// already on its Gateway port needs no entry, and a bad port is refused.
func TestGatewayPorts(t *testing.T) {
	env := func(string) string { return "" }
	for _, c := range []struct {
		args []string
		want map[int]int32
	}{
		{[]string{"-http-addr", ":8080", "-https-addr", ":8443"}, map[int]int32{8080: 80, 8443: 443}},
		{[]string{"-http-addr", ":80", "-https-addr", ":443"}, nil},
		{[]string{"-http-addr", ":8080", "-gateway-http-port", "8080"}, nil},
		{[]string{"-http-addr", ":9000", "-gateway-http-port", "8080"}, map[int]int32{9000: 8080}},
	} {
		cfg, err := parseFlags(c.args, io.Discard, env)
		if err != nil {
			t.Fatal(err)
		}
		if got := gatewayPorts(cfg.httpAddr, cfg.httpsAddr, cfg); !maps.Equal(got, c.want) {
			t.Errorf("%v: %v, want %v", c.args, got, c.want)
		}
	}
	if _, err := parseFlags([]string{"-gateway-https-port", "0"}, io.Discard, env); err == nil {
		t.Error("-gateway-https-port 0 accepted")
	}
}
