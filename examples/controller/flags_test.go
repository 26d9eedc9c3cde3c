package main

import (
	"bytes"
	"errors"
	"flag"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/compile"
)

func TestParseFlags(t *testing.T) {
	defaults := config{
		manifests:    "m",
		options:      compile.Options{IngressClass: "ramjet", ControllerName: "ramjet.dev/ingress"},
		httpAddr:     "127.0.0.1:8080",
		debugAddr:    "127.0.0.1:8081",
		pollInterval: 500 * time.Millisecond,
	}
	tests := []struct {
		name    string
		args    []string
		want    func(c *config)
		wantErr string
	}{
		{name: "defaults", args: []string{"-manifests", "m"}, want: func(*config) {}},
		{
			name: "every flag",
			args: []string{
				"-manifests", "m", "-demo-backends", "-ingress-class", "edge", "-controller-name", "example.com/edge",
				"-default-backend", "kube-system/fallback:http", "-watch-ingress-without-class", "-ssl-redirect=false",
				"-http-addr", ":80", "-https-addr", ":443", "-debug-addr", "", "-poll-interval", "2s",
			},
			want: func(c *config) {
				c.demoBackends = true
				c.options = compile.Options{
					IngressClass:             "edge",
					ControllerName:           "example.com/edge",
					DefaultBackend:           &compile.ServiceRef{Namespace: "kube-system", Name: "fallback", Port: "http"},
					WatchIngressWithoutClass: true,
					DisableSSLRedirect:       true,
				}
				c.httpAddr, c.httpsAddr, c.debugAddr = ":80", ":443", ""
				c.pollInterval = 2 * time.Second
			},
		},
		{name: "default backend without port", args: []string{"-manifests", "m", "-default-backend", "kube-system/notfound"}, wantErr: `-default-backend: service reference "kube-system/notfound": missing :port`},
		{name: "default backend with two slashes", args: []string{"-manifests", "m", "-default-backend", "a/b/c:80"}, wantErr: `-default-backend: service reference "a/b/c:80"`},
		{name: "bad ingress class", args: []string{"-manifests", "m", "-ingress-class", "Not_A_Name"}, wantErr: `option ingress-class "Not_A_Name"`},
		{name: "bad controller name", args: []string{"-manifests", "m", "-controller-name", "no-domain"}, wantErr: `option controller-name "no-domain"`},
		{name: "no manifests", args: nil, wantErr: "-manifests is required"},
		{name: "stray argument", args: []string{"-manifests", "m", "extra"}, wantErr: `unexpected argument "extra"`},
		{name: "no traffic listener", args: []string{"-manifests", "m", "-http-addr", ""}, wantErr: "nothing would serve traffic"},
		{name: "zero poll interval", args: []string{"-manifests", "m", "-poll-interval", "0s"}, wantErr: "must be positive"},
		{name: "unknown flag", args: []string{"-manifests", "m", "-nope"}, wantErr: "flag provided but not defined: -nope"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseFlags(tt.args, &bytes.Buffer{})
			if tt.wantErr != "" {
				require.Error(t, err)
				require.ErrorIs(t, err, errUsage)
				require.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			want := defaults
			tt.want(&want)
			if diff := cmp.Diff(want, got, cmp.AllowUnexported(config{})); diff != "" {
				t.Errorf("parseFlags (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseFlagsHelp(t *testing.T) {
	var out bytes.Buffer
	_, err := parseFlags([]string{"-h"}, &out)
	require.True(t, errors.Is(err, flag.ErrHelp), "err = %v", err)
	require.Contains(t, out.String(), "-demo-backends")
}

func TestLogLevel(t *testing.T) {
	tests := []struct {
		in      string
		want    slog.Level
		wantErr bool
	}{
		{in: "", want: slog.LevelInfo},
		{in: "info", want: slog.LevelInfo},
		{in: "DEBUG", want: slog.LevelDebug},
		{in: "warn", want: slog.LevelWarn},
		{in: "error", want: slog.LevelError},
		{in: "loud", wantErr: true},
	}
	for _, tt := range tests {
		got, err := logLevel(tt.in)
		if tt.wantErr {
			require.Error(t, err, "logLevel(%q)", tt.in)
			continue
		}
		require.NoError(t, err, "logLevel(%q)", tt.in)
		require.Equal(t, tt.want, got, "logLevel(%q)", tt.in)
	}
}

func TestRunExitCodes(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		logEnv string
		code   int
		stderr string
	}{
		{name: "help", args: []string{"-h"}, code: 0, stderr: "Usage: controller"},
		{name: "malformed default backend", args: []string{"-manifests", "m", "-default-backend", "kube-system/notfound"}, code: 2, stderr: "missing :port"},
		{name: "bad log level", args: []string{"-manifests", "m"}, logEnv: "loud", code: 2, stderr: `RAMJET_LOG="loud"`},
		{name: "missing folder", args: []string{"-manifests", "/nonexistent/ramjet-manifests", "-http-addr", "127.0.0.1:0", "-debug-addr", ""}, code: 1, stderr: "no such file or directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			code := run(tt.args, tt.logEnv, &stderr)
			require.Equal(t, tt.code, code, "stderr: %s", stderr.String())
			require.True(t, strings.Contains(stderr.String(), tt.stderr), "stderr %q does not contain %q", stderr.String(), tt.stderr)
		})
	}
}
