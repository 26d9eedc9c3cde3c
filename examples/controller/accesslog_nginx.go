package main

import (
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"ramjet.dev/ramjet/balance"
	"ramjet.dev/ramjet/compile"
	"ramjet.dev/ramjet/match"
	"ramjet.dev/ramjet/match/vars"
	"ramjet.dev/ramjet/router"
	"ramjet.dev/ramjet/router/h1"
)

// The ConfigMap's log-format-upstream and log-format-escape-json: the
// access log line in nginx's log_format syntax, for the variables people
// put in it. A variable ramjet cannot fill is named once in the warnings
// and logged as nginx logs a value it has not, "-".

// nginxLogVar fills one variable from a record; "" is logged as "-" (or
// "" with escape=json), as nginx logs an absent value, unless a location
// sets the variable (nginxLocationVars).
type nginxLogVar func(r *router.Record) string

// nginxLogVars are the variables a format can name, by name without "$";
// those of a prefix ($http_, $cookie_) are in nginxLogPrefixes.
var nginxLogVars = map[string]nginxLogVar{
	"remote_addr": func(r *router.Record) string { return r.ClientAddr },
	"remote_user": remoteUser,
	"host":        func(r *router.Record) string { return r.Host },
	"request": func(r *router.Record) string {
		if r.Reason == router.ReasonRefused {
			return r.RequestLine // as far as the server read it
		}
		return r.Method + " " + r.Path + " " + proto(r)
	},
	"request_method": func(r *router.Record) string { return r.Method },
	"request_uri":    func(r *router.Record) string { return vars.RequestURIOf(r.Path) },
	// nginx's $uri is the path as the location was searched with:
	// decoded, slashes merged, dot segments resolved, before any '#'
	// (match.NormalizePath, SPEC §13); one that does not normalize (a 400)
	// as received.
	"uri": func(r *router.Record) string {
		if r.Subrequest != "" {
			return r.Subrequest // the auth location's
		}
		if r.Rewritten != "" {
			// A rewrite's result, which nginx decodes but does not
			// normalize again.
			p, _, _ := strings.Cut(r.Rewritten, "?")
			if u, err := url.PathUnescape(p); err == nil {
				return u
			}
			return p
		}
		p, _, _ := strings.Cut(vars.RequestURIOf(r.Path), "?")
		if i := strings.IndexByte(p, '#'); i >= 0 {
			p = p[:i]
		}
		if p == "" {
			return "/" // "http://h?q": nginx's URI with an empty path
		}
		if clean, err := match.NormalizePath(p); err == nil {
			return clean
		}
		return p
	},
	"args":            args,
	"query_string":    args,
	"server_protocol": proto,
	"scheme": func(r *router.Record) string {
		if r.Request != nil && r.Request.TLS != nil {
			return "https"
		}
		return "http"
	},
	"status":          func(r *router.Record) string { return strconv.Itoa(r.Status) },
	"body_bytes_sent": func(r *router.Record) string { return strconv.FormatInt(r.BytesOut, 10) },
	"bytes_sent":      func(r *router.Record) string { return strconv.FormatInt(r.HeaderBytes+r.BytesOut, 10) },
	"request_length":  func(r *router.Record) string { return strconv.FormatInt(requestLength(*r), 10) },
	"request_time":    func(r *router.Record) string { return nginxSeconds(r.Duration) },
	"msec": func(r *router.Record) string {
		return strconv.FormatFloat(float64(r.Start.Add(r.Duration).UnixMilli())/1000, 'f', 3, 64)
	},
	// nginx's times are when it writes the line: the request's end.
	"time_iso8601": func(r *router.Record) string { return r.Start.Add(r.Duration).Format("2006-01-02T15:04:05-07:00") },
	"time_local":   func(r *router.Record) string { return r.Start.Add(r.Duration).Format("02/Jan/2006:15:04:05 -0700") },
	"req_id":       func(r *router.Record) string { return r.RequestID },
	// nginx's own ID of the request, which $req_id takes when the client
	// sent none: another when it did, or when none was made for $req_id
	// (generate-request-id "false").
	"request_id": func(r *router.Record) string {
		var sent []string
		if r.Request != nil {
			sent = r.Request.Header["X-Request-Id"]
		}
		if r.RequestID != "" && (len(sent) == 0 || sent[0] != r.RequestID) {
			return r.RequestID
		}
		return newRequestID()
	},
	"upstream_addr": func(r *router.Record) string {
		return upstreamList(r, func(t router.Try) string { return t.Endpoint }, r.Endpoint) +
			errorPageLeg(r, func(p *router.ErrorPage) string { return p.Endpoint })
	},
	"upstream_status": func(r *router.Record) string {
		if r.Tries == 0 {
			return ""
		}
		last := r.Status
		if r.ErrorPage != nil {
			last = r.ErrorPage.Intercepted
		}
		return upstreamList(r, func(t router.Try) string { return strconv.Itoa(t.Status) }, strconv.Itoa(last)) +
			errorPageLeg(r, func(p *router.ErrorPage) string { return strconv.Itoa(p.Status) })
	},
	"upstream_response_time": func(r *router.Record) string {
		if r.Tries == 0 {
			return ""
		}
		// Each try's own time: the failed ones' ends split UpstreamTime,
		// and the error page's exchange takes its end.
		var prev, page time.Duration
		if r.ErrorPage != nil {
			page = r.ErrorPage.Time
		}
		return upstreamList(r, func(t router.Try) string {
			d := t.Ended - prev
			prev = t.Ended
			return nginxSeconds(d)
		}, nginxSeconds(r.UpstreamTime-passedTime(r)-page)) +
			errorPageLeg(r, func(p *router.ErrorPage) string { return nginxSeconds(p.Time) })
	},
	// Each try's own, from its start; "-" for a try that got no head.
	"upstream_header_time": func(r *router.Record) string {
		if r.Tries == 0 {
			return ""
		}
		last := "-"
		if r.UpstreamHeaderTime > 0 {
			last = nginxSeconds(r.UpstreamHeaderTime - passedTime(r))
		}
		return upstreamList(r, func(t router.Try) string { return triedSeconds(t.Header, t.Header > 0) }, last) +
			errorPageLeg(r, func(p *router.ErrorPage) string { return triedSeconds(p.Header, p.Header > 0) })
	},
	// Each try's own, the error page's exchange's too; "-" for one that
	// opened no connection, 0.000 for a kept-alive one reused.
	"upstream_connect_time": func(r *router.Record) string {
		if r.Tries == 0 {
			return ""
		}
		last := r.UpstreamConnectTime
		for _, t := range r.PassedOn {
			last -= max(t.Connect, 0)
		}
		return upstreamList(r, func(t router.Try) string { return triedSeconds(t.Connect, t.Connect >= 0) },
			triedSeconds(last, !r.Unconnected && r.Reason != router.ReasonUpstreamUnreachable)) +
			errorPageLeg(r, func(p *router.ErrorPage) string { return triedSeconds(p.Connect, p.Connect >= 0) })
	},
	"upstream_response_length": func(r *router.Record) string {
		if r.Tries == 0 {
			return ""
		}
		return upstreamList(r, func(router.Try) string { return "0" }, strconv.FormatInt(r.UpstreamBytes, 10)) +
			errorPageLeg(r, func(p *router.ErrorPage) string { return strconv.FormatInt(p.Bytes, 10) })
	},
	"proxy_upstream_name": func(r *router.Record) string {
		// ingress-nginx names an upstream namespace-service-port, and
		// each location sets its own, whatever answers then: its
		// canary, or the location itself. An error page is served from
		// the @custom_<upstream>_<code> location, which sets the error
		// backend's: the Ingress's default-backend, else the global
		// default backend (ingress-nginx's own when none answers).
		switch {
		case r.ErrorPage != nil && r.ErrorPage.Own:
			return "custom-default-backend-" + r.ErrorPage.Service.Namespace + "-" + r.ErrorPage.Service.Name
		case r.ErrorPage != nil || r.Reason == router.ReasonErrorPage:
			return "upstream-default-backend"
		case r.Reason == router.ReasonNoRoute || r.Route.Field == compile.GlobalDefaultBackendField:
			// The default backend's upstream, whichever Service
			// --default-backend-service names.
			return "upstream-default-backend"
		case r.StandIn:
			return "custom-default-backend-" + r.Service.Namespace + "-" + r.Service.Name
		}
		s := locationOf(r)
		if s.Name == "" {
			return ""
		}
		return upstreamName(s.Namespace, s.Name, s.WrittenPort())
	},
	// With a canary serving, the primary's upstream and the canary's, as
	// ingress-nginx's balancer sets them.
	"proxy_alternative_upstream_name": func(r *router.Record) string {
		if _, ok := servedByCanary(*r); ok {
			return upstreamName(r.Service.Namespace, r.Service.Name, r.Service.WrittenPort())
		}
		return ""
	},
	"namespace":    func(r *router.Record) string { return r.Route.Namespace },
	"ingress_name": func(r *router.Record) string { return r.Route.Name },
	// From the location's Ingress, as getIngressInformation: the global
	// default backend's Service is no Ingress's, and a canary that took
	// the request has no location of its own (the primary's Service).
	"service_name": func(r *router.Record) string {
		if r.Route.Field == compile.GlobalDefaultBackendField {
			return ""
		}
		return locationOf(r).Name
	},
	"service_port": func(r *router.Record) string {
		if r.Route.Field == compile.GlobalDefaultBackendField {
			return ""
		}
		return locationOf(r).WrittenPort()
	},
	// The server block's name: ingress-nginx's catch-all server, which
	// also serves a host no Ingress names, is "_".
	"server_name": func(r *router.Record) string {
		if r.VirtualHost == "" {
			return "_"
		}
		return r.VirtualHost
	},
	// As getIngressInformation: the default server's location, which no
	// Ingress declares, sets "".
	"location_path": func(r *router.Record) string {
		if r.MatchedRoute == nil && r.Route.Name == "" {
			return ""
		}
		return match.LocationPath(r.MatchedRoute)
	},
}

// nginxLocationVars are the variables ingress-nginx's locations set,
// to "" when they name nothing: nginx logs such a value as nothing, and
// "-" only for a request answered before any location.
var nginxLocationVars = map[string]bool{
	"proxy_alternative_upstream_name": true,
	"namespace":                       true,
	"ingress_name":                    true,
	"service_name":                    true,
	"service_port":                    true,
	"location_path":                   true,
}

// nginxLogPrefixes are the variables named by a prefix and a name;
// underscoreNames: nginx keeps request header names with '_'.
var nginxLogPrefixes = map[string]func(name string, underscoreNames bool) nginxLogVar{
	// $http_x_forwarded_for: the request header X-Forwarded-For, as the
	// router's variables read it ($http_host the Host line, Cookie lines
	// joined with "; ", the '_' spellings where nginx keeps them).
	"http_": func(name string, underscoreNames bool) nginxLogVar {
		h := http.CanonicalHeaderKey(strings.ReplaceAll(name, "_", "-"))
		read := vars.Header
		if underscoreNames {
			read = vars.HeaderSpellings
		}
		return func(r *router.Record) string {
			if r.Request == nil {
				return ""
			}
			host := r.Request.Host
			if h == "Host" {
				// An absolute-form target's host is Request.Host ($host);
				// $http_host is the Host field as sent, or nothing.
				if f, present, ok := h1.HostField(r.Request); ok {
					if !present {
						return ""
					}
					host = f
				}
			}
			v, _ := read(r.Request.Header, host, h)
			return v
		}
	},
	"cookie_": func(name string, _ bool) nginxLogVar {
		return func(r *router.Record) string {
			if r.Request == nil {
				return ""
			}
			// The router's reader: Go's Request.Cookie matches names
			// exactly and refuses values nginx logs as sent.
			v, _ := balance.Cookie(r.Request, name)
			return v
		}
	},
}

// args is $args: none in an auth subrequest, which nginx makes without.
func args(r *router.Record) string {
	if r.Subrequest != "" {
		return ""
	}
	target := r.Path
	if r.Rewritten != "" {
		target = r.Rewritten // with the arguments the rewrite kept or made
	}
	_, q, _ := strings.Cut(target, "?")
	return q
}

func proto(r *router.Record) string {
	if r.Request == nil {
		return "HTTP/1.1"
	}
	return r.Request.Proto
}

func header(r *router.Record, name string) string {
	if r.Request == nil {
		return ""
	}
	return strings.Join(r.Request.Header[name], ", ")
}

// remoteUser is the user name of a basic Authorization header, as nginx's
// $remote_user decodes it (ngx_http_auth_basic_user: the scheme in any
// case, and no user unless a ':' follows one); the password is not
// checked here.
func remoteUser(r *router.Record) string {
	v := header(r, "Authorization")
	if len(v) < len("Basic ") || !strings.EqualFold(v[:len("Basic ")], "Basic ") {
		return ""
	}
	dec, err := base64.StdEncoding.DecodeString(strings.TrimSpace(v[len("Basic "):]))
	if err != nil {
		return ""
	}
	user, _, ok := strings.Cut(string(dec), ":")
	if !ok {
		return ""
	}
	return user
}

// servicePort is $service_port for the backend id with Service port
// number port: a port that did not resolve (0) as the ID keeps it, as
// written.
// locationOf is the Service r's location names (Record.Location); for
// a record without one, its route's when its canary answered, else the
// one that answered, with the port as written.
func locationOf(r *router.Record) router.Service {
	if r.Location.Name != "" {
		return r.Location
	}
	if primary, ok := servedByCanary(*r); ok {
		return router.Service{Namespace: primary.Namespace, Name: primary.Name, Port: primary.Port, PortName: primary.WrittenPort(r.MatchedRoute.PortName)}
	}
	s := r.Service
	if s.Port == 0 && s.PortName == "" {
		if i := strings.LastIndexByte(r.Backend, ':'); i >= 0 {
			s.PortName = r.Backend[i+1:]
		}
	}
	return s
}

// nginxSeconds writes a duration as nginx's $request_time: seconds with
// milliseconds.
func nginxSeconds(d time.Duration) string {
	return strconv.FormatFloat(seconds(d), 'f', 3, 64)
}

// upstreamList is an $upstream_* value over every try, as nginx lists
// it: each passed-on try's value, then the last try's, joined by ", ".
func upstreamList(r *router.Record, each func(router.Try) string, last string) string {
	if len(r.PassedOn) == 0 {
		return last
	}
	var b strings.Builder
	for _, t := range r.PassedOn {
		b.WriteString(each(t))
		b.WriteString(", ")
	}
	b.WriteString(last)
	return b.String()
}

// errorPageLeg is an $upstream_* value's part for the error page's
// exchange, after nginx's " : " (an internal redirect's new upstream); ""
// without one.
func errorPageLeg(r *router.Record, f func(*router.ErrorPage) string) string {
	if r.ErrorPage == nil {
		return ""
	}
	return " : " + f(r.ErrorPage)
}

// passedTime is how long the tries before the last took.
func passedTime(r *router.Record) time.Duration {
	if n := len(r.PassedOn); n > 0 {
		return r.PassedOn[n-1].Ended
	}
	return 0
}

// triedSeconds is a try's time as nginx lists it, "-" when it has none.
func triedSeconds(d time.Duration, has bool) string {
	if !has {
		return "-"
	}
	return nginxSeconds(d)
}

// logPart is a literal (v nil) or a variable of a parsed format;
// located: a location sets it (nginxLocationVars).
type logPart struct {
	text    string
	v       nginxLogVar
	located bool
}

// parseNginxLogFormat splits format into literals and variables ($name or
// ${name}) as compile.LogFormat reads it; unknown are the variables no
// filler knows, in order, each once. underscoreNames: nginx keeps request
// header names with '_' (enable-underscores-in-headers, or
// ignore-invalid-headers "false").
func parseNginxLogFormat(format string, underscoreNames bool) (parts []logPart, unknown []string) {
	t, _ := compile.LogFormat.Parse(format)
	for _, p := range t {
		if p.Ref.Var == vars.None {
			parts = append(parts, logPart{text: p.Lit})
			continue
		}
		name := logVarName(p.Ref)
		v := lookupLogVar(name, underscoreNames)
		if v == nil {
			if !slices.Contains(unknown, name) {
				unknown = append(unknown, name)
			}
			v = func(*router.Record) string { return "" }
		}
		parts = append(parts, logPart{v: v, located: nginxLocationVars[name]})
	}
	return parts, unknown
}

func lookupLogVar(name string, underscoreNames bool) nginxLogVar {
	if v, ok := nginxLogVars[name]; ok {
		return v
	}
	for prefix, f := range nginxLogPrefixes {
		if rest, ok := strings.CutPrefix(name, prefix); ok && rest != "" {
			return f(rest, underscoreNames)
		}
	}
	return nil
}

// logEscape is a log_format's escape parameter
// (log-format-escape-json, log-format-escape-none).
type logEscape uint8

const (
	escapeDefault logEscape = iota
	escapeJSON
	escapeNone
)

// newNginxAccessLog returns an observer writing one line per request to w
// in format, its values escaped as nginx's log_format escape=default,
// escape=json or escape=none escapes them; unknown names the variables it
// cannot fill. underscoreNames: nginx keeps request header names with '_'.
func newNginxAccessLog(w io.Writer, format string, escape logEscape, underscoreNames bool) (observe func(router.Record), unknown []string) {
	parts, unknown := parseNginxLogFormat(format, underscoreNames)
	var mu sync.Mutex
	buf := make([]byte, 0, 512)
	return func(r router.Record) {
		if r.NoAccessLog {
			return // enable-access-log: "false": nginx's access_log off in the location
		}
		mu.Lock()
		defer mu.Unlock()
		buf = buf[:0]
		for _, p := range parts {
			if p.v == nil {
				buf = append(buf, p.text...)
				continue
			}
			v := p.v(&r)
			switch {
			case escape == escapeNone:
				buf = append(buf, v...) // an absent value is nothing, as with escape=json
			case escape == escapeJSON:
				buf = appendJSONEscaped(buf, v)
			case v == "":
				if !p.located || r.Reason == router.ReasonRefused {
					buf = append(buf, '-')
				}
			default:
				buf = appendNginxEscaped(buf, v)
			}
		}
		buf = append(buf, '\n')
		_, _ = w.Write(buf)
	}, unknown
}

// appendNginxEscaped escapes as nginx's log module does by default: '"',
// '\' and bytes outside printable ASCII as \xHH.
func appendNginxEscaped(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '"' || c == '\\' || c < 0x20 || c >= 0x7f {
			b = fmt.Appendf(b, `\x%02X`, c)
			continue
		}
		b = append(b, c)
	}
	return b
}

// appendJSONEscaped escapes as nginx's escape=json: '"' and '\' with a
// backslash, control characters as \n, \r, \t, \b, \f or \u00XX (upper-case
// hex, as ngx_escape_json writes it).
func appendJSONEscaped(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c == '\n':
			b = append(b, `\n`...)
		case c == '\r':
			b = append(b, `\r`...)
		case c == '\t':
			b = append(b, `\t`...)
		case c == '\b':
			b = append(b, `\b`...)
		case c == '\f':
			b = append(b, `\f`...)
		case c < 0x20:
			b = fmt.Appendf(b, `\u%04X`, c)
		default:
			b = append(b, c)
		}
	}
	return b
}

// logVarName is the name a log format's variable reference is looked up
// by: the table's spelling of a known variable (with its suffix for a
// family such as $http_), else the name as written.
func logVarName(r vars.Ref) string {
	if r.Var == vars.Unknown {
		return r.Name
	}
	name := vars.Table[r.Var].Name
	if r.Var.Family() {
		name += r.Name
	}
	return name
}
