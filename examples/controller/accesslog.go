package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"time"

	"ramjet.dev/ramjet/compile"
	"ramjet.dev/ramjet/match/vars"
	"ramjet.dev/ramjet/router"
	"ramjet.dev/ramjet/router/configmap"
)

// Access log formats (--access-log-format).
const (
	// accessLogUpstreamInfo is the default: ingress-nginx's default
	// log-format-upstream (upstreaminfo), so existing parsers keep working.
	accessLogUpstreamInfo = "upstreaminfo"
	accessLogText         = "text"
	accessLogJSON         = "json"
)

// newAccessLog returns an observer that writes one line per request to w:
// ingress-nginx's default line (upstreaminfo), or as slog's text or JSON
// handler formats it. It is not subject to
// RAMJET_LOG: like nginx's access_log, it is on unless turned off.
func newAccessLog(w io.Writer, format string) func(router.Record) {
	if format == accessLogUpstreamInfo {
		observe, _ := newNginxAccessLog(w, compile.DefaultLogFormat, escapeDefault, false)
		return observe
	}
	opts := &slog.HandlerOptions{
		// The level says nothing about a request; drop it from the line.
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if len(groups) == 0 && a.Key == slog.LevelKey {
				return slog.Attr{}
			}
			return a
		},
	}
	var h slog.Handler = slog.NewTextHandler(w, opts)
	if format == accessLogJSON {
		h = slog.NewJSONHandler(w, opts)
	}
	return func(r router.Record) {
		if r.NoAccessLog {
			return // enable-access-log: "false" on the location
		}
		h.Handle(context.Background(), accessRecord(r))
	}
}

// accessLogKeys are the ConfigMap's keys for the access log.
type accessLogKeys struct {
	// format is log-format-upstream ("": the -access-log-format line).
	format string
	// escape is log-format-escape-none or -json.
	escape logEscape
	// defaultBackend is enable-access-log-for-default-backend.
	defaultBackend bool
	// skip are skip-access-log-urls.
	skip []string
	// noRequestID is generate-request-id "false".
	noRequestID bool
	// authLog is enable-auth-access-log: the auth-url subrequests'
	// records are logged (nginx.tmpl's auth location has "access_log off"
	// without it).
	authLog bool
	// underscoreNames: request header names with '_' are kept
	// (enable-underscores-in-headers, or ignore-invalid-headers "false"),
	// so $http_<name> reads them.
	underscoreNames bool
	// off is disable-access-log or disable-http-access-log.
	off bool
	// path, httpPath and streamPath are access-log-path,
	// http-access-log-path and stream-access-log-path as parseLogPath
	// reads them (accesslog_path.go).
	path, httpPath, streamPath string
	// The stream access log's (accesslog_stream.go): log-format-stream
	// ("": ingress-nginx's default), and disable-access-log or
	// disable-stream-access-log.
	streamFormat string
	streamOff    bool
	// realIP is enable-real-ip: the stream log's $remote_addr is a
	// trusted PROXY header's source, else the peer.
	realIP bool
}

// accessLogConfigMapKeys are the access log's keys the controller reads
// from the ConfigMap itself (compile.ConfigMapOptions.ExtensionKeys):
// nginx.tmpl writes "access_log off" for either.
var accessLogConfigMapKeys = map[string]func(c *config, v string) error{
	"disable-access-log":      disableAllAccessLogs,
	"disable-http-access-log": disableAccessLog,
}

func disableAccessLog(c *config, v string) error {
	off, err := configmap.ParseBool(v)
	if err != nil {
		return err
	}
	c.logKeys.off = c.logKeys.off || off
	return nil
}

// disableAllAccessLogs is disable-access-log: the stream access log's
// "access_log off" too.
func disableAllAccessLogs(c *config, v string) error {
	off, err := configmap.ParseBool(v)
	if err != nil {
		return err
	}
	c.logKeys.off = c.logKeys.off || off
	c.logKeys.streamOff = c.logKeys.streamOff || off
	return nil
}

func accessLogKeysOf(s configmap.Settings) accessLogKeys {
	k := accessLogKeys{format: s.LogFormat, defaultBackend: s.AccessLogDefaultBackend, skip: s.SkipAccessLogURLs, noRequestID: !s.Headers.GenerateRequestID,
		authLog: s.AuthAccessLog, realIP: s.EnableRealIP}
	// nginx.tmpl tests escape-none first.
	switch {
	case s.LogFormatEscapeNone:
		k.escape = escapeNone
	case s.LogFormatEscapeJSON:
		k.escape = escapeJSON
	}
	return k
}

func (k accessLogKeys) equal(o accessLogKeys) bool {
	return k.format == o.format && k.escape == o.escape && k.defaultBackend == o.defaultBackend && slices.Equal(k.skip, o.skip) &&
		k.noRequestID == o.noRequestID && k.authLog == o.authLog && k.underscoreNames == o.underscoreNames && k.off == o.off &&
		k.path == o.path && k.httpPath == o.httpPath && k.streamPath == o.streamPath &&
		k.streamFormat == o.streamFormat && k.streamOff == o.streamOff && k.realIP == o.realIP
}

// accessLog is the access log the keys ask for, writing to w; format is
// -access-log-format.
func (k accessLogKeys) accessLog(w io.Writer, format string) func(router.Record) {
	if k.off {
		return func(router.Record) {}
	}
	log := newAccessLog(w, format)
	if k.format != "" {
		log, _ = newNginxAccessLog(w, k.format, k.escape, k.underscoreNames)
	}
	skip := make(map[string]bool, len(k.skip))
	for _, u := range k.skip {
		skip[strings.ToLower(u)] = true
	}
	defaultBackend, generateID, authLog := k.defaultBackend, !k.noRequestID, k.authLog
	return func(r router.Record) {
		if r.Subrequest != "" && !authLog {
			return
		}
		if !defaultBackend && defaultServerLocation(r) {
			return
		}
		// nginx.tmpl's map $request_uri $loggable: nginx's map matches
		// strings in any case.
		if len(skip) > 0 && skip[strings.ToLower(vars.RequestURIOf(r.Path))] {
			return
		}
		if r.RequestID == "" {
			// The router records none for an answer it made itself;
			// nginx.tmpl's $req_id is the client's X-Request-ID, else
			// (generate-request-id) a new one, for every request.
			r.RequestID = clientRequestID(r, generateID)
		}
		log(r)
	}
}

// clientRequestID is the client's first X-Request-ID, else a new random
// ID when generate, else "".
func clientRequestID(r router.Record, generate bool) string {
	if r.Request != nil {
		if id := r.Request.Header["X-Request-Id"]; len(id) > 0 {
			return id[0]
		}
	}
	if !generate {
		return ""
	}
	return newRequestID()
}

// newRequestID is a random ID as nginx's $request_id: 32 hex digits.
func newRequestID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails
	return hex.EncodeToString(b[:])
}

// defaultServerLocation reports whether r was answered by what
// ingress-nginx's default server answers with its own location "/", whose
// access_log is off unless enable-access-log-for-default-backend: a host
// no rule names (the catch-all, or no virtual host) where no rule matched
// and no Ingress's spec.defaultBackend served, that is, the global default
// backend or the 404 in its place.
func defaultServerLocation(r router.Record) bool {
	if r.VirtualHost != "" || r.Route.Name != "" {
		return false
	}
	return r.Route.Field == compile.GlobalDefaultBackendField || r.Reason == router.ReasonNoRoute || r.Reason == router.ReasonRegexBudget
}

// accessRecord is the log record of one request. Durations are seconds
// with millisecond resolution, as nginx's $request_time; fields that do
// not apply (no upstream for an answer the router made) are left out
// rather than written empty.
func accessRecord(r router.Record) slog.Record {
	t := r.Start
	if t.IsZero() {
		t = time.Now()
	}
	rec := slog.NewRecord(t, slog.LevelInfo, "request", 0)
	attrs := make([]slog.Attr, 0, 24)
	add := func(key, v string) {
		if v != "" {
			attrs = append(attrs, slog.String(key, v))
		}
	}
	add("client", r.ClientAddr)
	add("request_id", r.RequestID)
	add("method", r.Method)
	add("host", r.Host)
	add("target", r.Path)
	add("subrequest", r.Subrequest)
	add("request_line", r.RequestLine)
	if req := r.Request; req != nil {
		add("proto", req.Proto)
	}
	attrs = append(attrs,
		slog.Int("status", r.Status),
		slog.Int64("bytes_in", r.BytesIn),
		slog.Int64("bytes_out", r.BytesOut),
		slog.Float64("duration", seconds(r.Duration)))
	if r.Tries > 0 {
		attrs = append(attrs,
			slog.String("upstream", r.Endpoint),
			slog.Int("tries", r.Tries),
			slog.Float64("upstream_header_time", seconds(r.UpstreamHeaderTime)),
			slog.Float64("upstream_time", seconds(r.UpstreamTime)))
	}
	add("ingress", r.Route.Ingress())
	add("route", r.Route.Field)
	add("virtual_host", r.VirtualHost)
	if r.Service.Name != "" {
		svc := r.Service.Namespace + "/" + r.Service.Name
		if r.Service.Port != 0 {
			svc += ":" + strconv.Itoa(int(r.Service.Port))
		}
		add("service", svc)
	} else {
		add("backend", r.Backend)
	}
	add("reason", r.Reason)
	if req := r.Request; req != nil {
		add("user_agent", req.UserAgent())
		add("referer", req.Referer())
	}
	attrs = append(attrs, slog.Uint64("generation", r.Generation))
	rec.AddAttrs(attrs...)
	return rec
}

// seconds rounds d to milliseconds, as nginx logs its timings.
func seconds(d time.Duration) float64 {
	return float64(d.Round(time.Millisecond)) / float64(time.Second)
}

// observers calls each non-nil observer in turn; nil when there is none,
// so that the router skips building records nobody reads.
func observers(fs ...func(router.Record)) func(router.Record) {
	var set []func(router.Record)
	for _, f := range fs {
		if f != nil {
			set = append(set, f)
		}
	}
	switch len(set) {
	case 0:
		return nil
	case 1:
		return set[0]
	}
	return func(r router.Record) {
		for _, f := range set {
			f(r)
		}
	}
}
