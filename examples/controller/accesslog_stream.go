package main

import (
	"errors"
	"io"
	"net"
	"os"
	"slices"
	"strconv"
	"sync"
	"time"

	"ramjet.dev/ramjet/compile"
	"ramjet.dev/ramjet/match"
	"ramjet.dev/ramjet/match/vars"
	"ramjet.dev/ramjet/router/configmap"
)

// The TCP and UDP services' access log: ingress-nginx's stream
// access_log, one line per TCP connection and per UDP session (an
// exchange, nginx's UDP session) in log-format-stream, to
// stream-access-log-path (accesslog_path.go), off with disable-stream-access-log or
// disable-access-log.

// defaultLogFormatStream is ingress-nginx's log-format-stream default.
const defaultLogFormatStream = `[$remote_addr] [$time_local] $protocol $status $bytes_sent $bytes_received $session_time`

// The values of $status, as nginx's stream module sets them.
const (
	streamOK          = 200
	streamBadRequest  = 400 // a PROXY header that does not parse
	streamInternal    = 500 // a socket that could not be opened
	streamBadGateway  = 502 // no service or endpoint, none reached, or a UDP answer missing
	streamUnavailable = 503 // no UDP session free
)

// streamRecord is one TCP connection or UDP session as logged; nil when
// the stream access log is off, its methods doing nothing then.
type streamRecord struct {
	proto  match.L4Protocol
	port   int32
	client net.Addr
	start  time.Time
	end    time.Time
	status int
	// sent and received are the client's bytes, to it and from it.
	sent, received int64
	service        *match.L4Service
	upstream       string
	connect        time.Duration
	connected      bool

	// proxied is the source a trusted peer's PROXY header named; nil
	// for none.
	proxied net.Addr
	// proxyProtocol is the source the client's PROXY header named,
	// trusted or not (nginx's $proxy_protocol_addr); nil for none.
	proxyProtocol net.Addr
}

func (r *streamRecord) in(n int) {
	if r != nil {
		r.received += int64(n)
	}
}

func (r *streamRecord) out(n int) {
	if r != nil {
		r.sent += int64(n)
	}
}

func (r *streamRecord) setStatus(status int) {
	if r != nil {
		r.status = status
	}
}

// streamLogVars fill the variables of nginx's stream modules a format can
// name; "" is logged as "-".
var streamLogVars = map[string]func(r *streamRecord) string{
	"remote_addr": func(r *streamRecord) string { h, _, _ := net.SplitHostPort(r.client.String()); return h },
	"remote_port": func(r *streamRecord) string { _, p, _ := net.SplitHostPort(r.client.String()); return p },
	"server_port": func(r *streamRecord) string { return strconv.Itoa(int(r.port)) },
	"proxy_protocol_addr": func(r *streamRecord) string {
		if r.proxyProtocol == nil {
			return ""
		}
		h, _, _ := net.SplitHostPort(r.proxyProtocol.String())
		return h
	},
	"proxy_protocol_port": func(r *streamRecord) string {
		if r.proxyProtocol == nil {
			return ""
		}
		_, p, _ := net.SplitHostPort(r.proxyProtocol.String())
		return p
	},
	"protocol": func(r *streamRecord) string {
		if r.proto == match.UDP {
			return "UDP"
		}
		return "TCP"
	},
	"status":         func(r *streamRecord) string { return strconv.Itoa(r.status) },
	"bytes_sent":     func(r *streamRecord) string { return strconv.FormatInt(r.sent, 10) },
	"bytes_received": func(r *streamRecord) string { return strconv.FormatInt(r.received, 10) },
	"session_time":   func(r *streamRecord) string { return nginxSeconds(r.end.Sub(r.start)) },
	"time_local":     func(r *streamRecord) string { return r.end.Format("02/Jan/2006:15:04:05 -0700") },
	"time_iso8601":   func(r *streamRecord) string { return r.end.Format("2006-01-02T15:04:05-07:00") },
	"msec": func(r *streamRecord) string {
		return strconv.FormatFloat(float64(r.end.UnixMilli())/1000, 'f', 3, 64)
	},
	"upstream_addr": func(r *streamRecord) string { return r.upstream },
	"upstream_connect_time": func(r *streamRecord) string {
		if !r.connected {
			return ""
		}
		return nginxSeconds(r.connect)
	},
	// The bytes the client sent reach the upstream, and its answer the
	// client.
	"upstream_bytes_sent": func(r *streamRecord) string {
		if r.upstream == "" {
			return ""
		}
		return strconv.FormatInt(r.received, 10)
	},
	"upstream_bytes_received": func(r *streamRecord) string {
		if r.upstream == "" {
			return ""
		}
		return strconv.FormatInt(r.sent, 10)
	},
	// ingress-nginx's preread sets it for each service: tcp- or udp-,
	// then the entry's namespace, service and port as written.
	"proxy_upstream_name": func(r *streamRecord) string {
		if r.service == nil {
			return ""
		}
		b := r.service.Backend
		return r.service.Protocol.String() + "-" + b.Namespace + "-" + b.Name + "-" + r.service.ServicePort
	},
}

// parseStreamLogFormat splits format as nginx's stream log_format reads
// it; unknown are the variables no filler knows, each once.
func parseStreamLogFormat(format string) (parts []streamLogPart, unknown []string) {
	t, _ := compile.LogFormat.Parse(format)
	for _, p := range t {
		if p.Ref.Var == vars.None {
			parts = append(parts, streamLogPart{text: p.Lit})
			continue
		}
		name := logVarName(p.Ref)
		v := streamLogVars[name]
		if v == nil {
			if !slices.Contains(unknown, name) {
				unknown = append(unknown, name)
			}
			v = func(*streamRecord) string { return "" }
		}
		parts = append(parts, streamLogPart{v: v})
	}
	return parts, unknown
}

type streamLogPart struct {
	text string
	v    func(*streamRecord) string
}

// newStreamAccessLog returns a writer of one line per record to w in
// format, escaped as nginx's log_format escape=default.
func newStreamAccessLog(w io.Writer, format string) func(*streamRecord) {
	parts, _ := parseStreamLogFormat(format)
	var mu sync.Mutex
	buf := make([]byte, 0, 256)
	return func(r *streamRecord) {
		mu.Lock()
		defer mu.Unlock()
		buf = buf[:0]
		for _, p := range parts {
			if p.v == nil {
				buf = append(buf, p.text...)
				continue
			}
			if v := p.v(r); v != "" {
				buf = appendNginxEscaped(buf, v)
			} else {
				buf = append(buf, '-')
			}
		}
		buf = append(buf, '\n')
		_, _ = w.Write(buf)
	}
}

// streamLog is the stream access log the keys ask for, writing to out;
// nil when off.
func (k accessLogKeys) streamLog(out io.Writer) func(*streamRecord) {
	if k.streamOff {
		return nil
	}
	format := k.streamFormat
	if format == "" {
		format = defaultLogFormatStream
	}
	log := newStreamAccessLog(out, format)
	if !k.realIP {
		return log
	}
	// nginx's stream realip module makes a PROXY header's source
	// $remote_addr only under set_real_ip_from, which ingress-nginx
	// writes into its stream block with enable-real-ip alone.
	return func(r *streamRecord) {
		if r.proxied != nil {
			c := *r
			c.client = r.proxied
			r = &c
		}
		log(r)
	}
}

// The stream access log's ConfigMap keys.
func init() {
	accessLogConfigMapKeys["disable-stream-access-log"] = func(c *config, v string) error {
		off, err := configmap.ParseBool(v)
		c.logKeys.streamOff = c.logKeys.streamOff || off
		return err
	}
	accessLogConfigMapKeys["log-format-stream"] = func(c *config, v string) error {
		if _, unknown := parseStreamLogFormat(v); len(unknown) > 0 {
			return errors.New("$" + unknown[0] + " is not a variable of nginx's stream modules ramjet fills")
		}
		c.logKeys.streamFormat = v
		return nil
	}
}

// streamAccessLog is the stream access log cfg asks for: nil when the
// access log is off; the live one, following the ConfigMap, when there is
// one.
func streamAccessLog(cfg config) func(*streamRecord) {
	switch {
	case !cfg.enableAccessLog:
		return nil
	case cfg.accessLog != nil:
		return cfg.accessLog.session
	}
	out := cfg.accessLogOut
	if out == nil {
		out = os.Stdout
	}
	// Open for the life of the process, as the log is.
	if w, _, err := logWriter(cfg.logKeys.streamLogPath(), out); err == nil {
		out = w
	}
	return cfg.logKeys.streamLog(out)
}
