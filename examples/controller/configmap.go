package main

import (
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"ramjet.dev/ramjet/compile"
	"ramjet.dev/ramjet/router"
	"ramjet.dev/ramjet/router/configmap"
)

// The ingress-nginx ConfigMap (--configmap) is read by the library's
// parsers, through compile.ParseConfigMap, which the case files and
// examples/check share: its location keys (proxy-body-size, the timeouts,
// load-balance, force-ssl-redirect, block-cidrs, ...) and ssl-redirect
// reach the compile through compile.Options.ConfigMap, so they follow
// every rebuild; its router keys, read by the router's parser
// (router/configmap), reach the router through
// router.Options.ApplyConfigMap (configMapRouterOptions), and the
// listeners and access log read theirs from the same settings. A flag
// given on the command line wins over its key.

// flagKeys are the ConfigMap keys that have a command-line flag of the
// same name.
var flagKeys = []string{"ssl-redirect", "use-forwarded-headers", "compute-full-forwarded-for", "proxy-real-ip-cidr", "use-proxy-protocol", "proxy-body-size"}

// configMapWarning is one problem with a key, with its severity.
type configMapWarning struct {
	key, message string
	severity     compile.Severity
	// compiled: the library's own warning, which every compile with the
	// ConfigMap carries too; the settings neither log nor list it again.
	compiled bool
}

func (w configMapWarning) String() string {
	if w.key == "" {
		return fmt.Sprintf("%s (%s)", w.message, w.severity)
	}
	return fmt.Sprintf("key %q: %s (%s)", w.key, w.message, w.severity)
}

// applyConfigMap reads cm with the library's parsers, leaving out the keys
// whose flag is in set (the flags given on the command line): the router
// keys go in c.routerKeys, the compile half in c.options. It
// returns one warning per key ramjet does not implement and per bad value,
// in key order.
func applyConfigMap(c *config, cm *corev1.ConfigMap, set []string, others ...*corev1.ConfigMap) []configMapWarning {
	var keep []string
	for _, k := range flagKeys {
		if slices.Contains(set, k) {
			keep = append(keep, k)
		}
	}
	extensions := slices.Concat(slices.Collect(maps.Keys(modSecurityConfigMapKeys)), slices.Collect(maps.Keys(otelConfigMapKeys)),
		slices.Collect(maps.Keys(accessLogConfigMapKeys)), slices.Collect(maps.Keys(nginxStatusConfigMapKeys)))
	parsed := compile.ParseConfigMapFor(cm, compile.ConfigMapOptions{Keep: keep, ExtensionKeys: slices.Sorted(slices.Values(extensions))})
	parsed.ReadHeaders(others)
	c.options.ConfigMap = parsed
	c.routerKeys = parsed.Router
	// The listeners and the access log read their keys here; the router's
	// options take the router keys in configMapRouterOptions.
	o := configMapRouterOptions(*c)
	c.useForwardedHeaders, c.proxyRealIPCIDR = o.TrustForwardedProto, o.ProxyRealIPCIDR
	if slices.Contains(parsed.Router.Keys, "use-proxy-protocol") {
		c.useProxyProtocol = parsed.Router.UseProxyProtocol
	}
	c.logKeys = accessLogKeysOf(parsed.Router)
	c.logKeys.underscoreNames = o.UnderscoresInHeaders || o.KeepInvalidHeaders // as the router reads them
	var warns []configMapWarning
	// The ModSecurity keys are the controller's (modsecurity.go); they
	// follow every rebuild.
	c.modSecurity = modSecuritySettings{}
	c.otel = defaultOtelSettings() // otel.go
	c.nginxStatus = nginxStatusAllow{}
	for _, key := range slices.Sorted(maps.Keys(parsed.Extensions)) {
		v := parsed.Extensions[key]
		apply, severity := modSecurityConfigMapKeys[key], compile.TrafficMoves
		if apply == nil {
			apply, severity = otelConfigMapKeys[key], compile.FeatureMissing
		}
		if apply == nil {
			apply, severity = accessLogConfigMapKeys[key], compile.FeatureMissing
		}
		if apply == nil {
			apply, severity = nginxStatusConfigMapKeys[key], compile.FeatureMissing
		}
		if err := apply(c, strings.TrimSpace(v)); err != nil {
			warns = append(warns, configMapWarning{key, fmt.Sprintf("value %q: %v; ingress-nginx's default is kept", v, err), severity, false})
		}
	}
	warns = append(warns, otelWarnings(c, parsed, cm)...)
	for _, w := range parsed.Warnings() {
		key := strings.TrimSuffix(strings.TrimPrefix(w.Field, "data["), "]")
		warns = append(warns, configMapWarning{key, w.Message, w.Severity(), true})
	}
	return warns
}

// atStart reports whether a change of key waits for a restart: the router
// and listener keys the router is made with, except those it takes live.
func atStart(key string) bool {
	k, ok := configmap.Keys[key]
	return ok && !k.Live
}

// configMapSettings follows the --configmap ConfigMap for one controller:
// the settings it gave at start (those the router and listeners were made
// with) and the warnings of its latest version, for /debug/warnings.
type configMapSettings struct {
	ref types.NamespacedName
	log *slog.Logger
	// base is the configuration of the command line alone, set the flags
	// given on it; start the ConfigMap's data when the router was made.
	base  config
	set   []string
	start map[string]string

	mu       sync.Mutex
	warnings []configMapWarning
}

// newConfigMapSettings applies data, the ConfigMap as found at start (nil
// when absent), to cfg and returns the configuration to start with.
func newConfigMapSettings(cfg config, data map[string]string, found bool, log *slog.Logger, others ...*corev1.ConfigMap) (*configMapSettings, config) {
	if cfg.configMap == nil {
		return nil, cfg
	}
	if cfg.enableAccessLog {
		cfg.accessLog = &liveAccessLog{out: cfg.accessLogOut, format: cfg.accessLogFormat}
		if cfg.accessLog.out == nil {
			cfg.accessLog.out = os.Stdout
		}
		if cfg.reopenLogs != nil {
			go cfg.accessLog.reopenOn(cfg.reopenLogs, log)
		}
	}
	cfg.tracing = newLiveTracer(log) // otel.go
	cfg.liveNginxStatus = new(atomic.Pointer[nginxStatusAllow])
	s := &configMapSettings{ref: *cfg.configMap, log: log, base: cfg, set: cfg.flagsSet, start: data}
	return s, s.update(data, found, others...)
}

// update applies data, the ConfigMap's current version, to the command
// line's configuration and returns the result (the caller compiles with
// it and hands its HSTS settings to the router); a start-only key whose
// value changed since start warns that it waits for a restart. The
// warnings are logged when they differ from the last version's.
func (s *configMapSettings) update(data map[string]string, found bool, others ...*corev1.ConfigMap) config {
	return s.updateUnread(data, found, false, others...)
}

// updateUnread is update where the ConfigMap may be there but not
// readable (unread: a manifest error names it): its settings are lost,
// which ingress-nginx, holding the last version the API server took,
// would not do.
func (s *configMapSettings) updateUnread(data map[string]string, found, unread bool, others ...*corev1.ConfigMap) config {
	c := s.base
	cm := &corev1.ConfigMap{Data: data}
	cm.Namespace, cm.Name = s.ref.Namespace, s.ref.Name
	warns := applyConfigMap(&c, cm, s.set, others...)
	switch {
	case !found && unread:
		warns = append(warns, configMapWarning{"", "not read (see its manifest error); the flags' settings apply", compile.TrafficMoves, false})
	case !found:
		warns = append(warns, configMapWarning{"", "not found; the flags' settings apply", compile.Cosmetic, false})
	}
	for _, key := range slices.Sorted(maps.Keys(configmap.Keys)) {
		old, had := s.start[key]
		cur, has := data[key]
		if atStart(key) && (old != cur || had != has) && !slices.Contains(s.set, key) {
			warns = append(warns, configMapWarning{key, "changed since start; it takes effect when the controller restarts", compile.TrafficMoves, false})
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !slices.Equal(warns, s.warnings) {
		for _, w := range warns {
			switch {
			case w.compiled:
			case w.key == "": // about the ConfigMap as a whole
				s.log.Warn("ConfigMap "+w.message, "configmap", s.ref.String(), "severity", string(w.severity))
			default:
				s.log.Warn(w.message, "configmap", s.ref.String(), "key", w.key, "severity", string(w.severity))
			}
		}
		s.warnings = warns
	}
	return c
}

// lines are the warnings for /debug/warnings.
func (s *configMapSettings) lines() []string {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, w := range s.warnings {
		if !w.compiled {
			out = append(out, "ConfigMap "+s.ref.String()+": "+w.String())
		}
	}
	return out
}

// configMapInFolder finds the ConfigMap ref among the manifests under
// root that can be read; found is false when none holds it. err is set
// only when the folder cannot be listed.
func configMapInFolder(root string, ref types.NamespacedName) (data map[string]string, found bool, err error) {
	snap, _, _, _, err := readFolder(root, nil)
	if err != nil {
		return nil, false, err
	}
	data, found = configMapIn(snap.ConfigMaps, ref)
	return data, found, nil
}

// configMapIn finds the ConfigMap ref among cms.
func configMapIn(cms []*corev1.ConfigMap, ref types.NamespacedName) (data map[string]string, found bool) {
	for _, cm := range cms {
		if cm.Namespace == ref.Namespace && cm.Name == ref.Name {
			return cm.Data, true
		}
	}
	return nil, false
}

// applyLive hands the router and the access log what the ConfigMap's live
// keys say in cfg; proxy-real-ip-cidr stays as in start, the configuration
// the listeners were made with (whose PROXY headers they believe).
func applyLive(r *router.Router, cfg, start config) {
	o := configMapRouterOptions(cfg)
	o.ProxyRealIPCIDR = start.proxyRealIPCIDR
	r.SetConfigMapOptions(o)
	cfg.accessLog.set(cfg.logKeys)
	cfg.tracing.set(cfg.otel)
	if cfg.liveNginxStatus != nil {
		cfg.liveNginxStatus.Store(&cfg.nginxStatus)
	}
}

// liveAccessLog is the access log as the ConfigMap's access log keys give
// it at the latest rebuild (in the -access-log-format format without
// log-format-upstream), swapped whole: each line is one write, so the old
// and the new log never mix within a line.
type liveAccessLog struct {
	out    io.Writer
	format string // -access-log-format

	mu   sync.Mutex // serializes set, reopenOn and close
	keys accessLogKeys
	cur  atomic.Pointer[func(router.Record)]
	// stream is the stream access log (nil inside: off).
	stream atomic.Pointer[func(*streamRecord)]
	// files are the files the path keys name (accesslog_path.go), kept
	// open while a key names them.
	files logFiles
}

// set switches to keys when they differ from the current ones; a nil l
// (no access log) does nothing.
func (l *liveAccessLog) set(keys accessLogKeys) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.cur.Load() != nil && keys.equal(l.keys) {
		return
	}
	files := logFiles{}
	httpOut := l.out
	if !keys.off {
		httpOut = files.writer(keys.httpLogPath(), l.out, l.files)
	}
	f := keys.accessLog(httpOut, l.format)
	var s func(*streamRecord)
	if !keys.streamOff {
		s = keys.streamLog(files.writer(keys.streamLogPath(), l.out, l.files))
	}
	l.keys = keys
	l.cur.Store(&f)
	l.stream.Store(&s)
	for path, old := range l.files {
		if files[path] == nil {
			// A line being written now may be lost to the closed file.
			_ = old.close()
		}
	}
	l.files = files
}

func (l *liveAccessLog) observe(r router.Record) { (*l.cur.Load())(r) }

// session logs a TCP connection or UDP session, when the stream access
// log is on.
func (l *liveAccessLog) session(r *streamRecord) {
	if f := l.stream.Load(); f != nil && *f != nil {
		(*f)(r)
	}
}
