package main

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"ramjet.dev/ramjet/compile"
	"ramjet.dev/ramjet/compile/manifest"
	"ramjet.dev/ramjet/router"
)

// The ingress-nginx ConfigMap (--configmap): its keys are read with
// ingress-nginx v1.15's value syntax (internal/ingress/controller/config,
// decoded by mapstructure's weak typing: booleans as strconv.ParseBool
// reads them, numbers as strconv.ParseInt with base 0) and onto the
// settings the flags already set. A flag given on the command line wins
// over its key. A key ramjet does not implement, or a value that does not
// parse, is a warning naming it; the default stays.

// configMapKey is one implemented key: flag names the command-line flag
// for the same setting ("" when there is none), apply reads the value.
type configMapKey struct {
	flag  string
	apply func(c *config, v string) error
	// atStart: the setting is the router's or the listeners', fixed when
	// they are made; a later change of the key waits for a restart. The
	// others (ssl-redirect, hsts*) follow every rebuild.
	atStart bool
}

var configMapKeys = map[string]configMapKey{
	"ssl-redirect": {flag: "ssl-redirect", apply: func(c *config, v string) error {
		b, err := nginxBool(v)
		c.options.DisableSSLRedirect = !b
		return err
	}},
	"use-forwarded-headers": {flag: "use-forwarded-headers", atStart: true, apply: func(c *config, v string) (err error) {
		c.useForwardedHeaders, err = nginxBool(v)
		return err
	}},
	"compute-full-forwarded-for": {flag: "compute-full-forwarded-for", atStart: true, apply: func(c *config, v string) (err error) {
		c.computeFullForwardedFor, err = nginxBool(v)
		return err
	}},
	"proxy-real-ip-cidr": {flag: "proxy-real-ip-cidr", atStart: true, apply: func(c *config, v string) (err error) {
		c.proxyRealIPCIDR, err = parseCIDRs(v)
		return err
	}},
	"use-proxy-protocol": {flag: "use-proxy-protocol", atStart: true, apply: func(c *config, v string) (err error) {
		c.useProxyProtocol, err = nginxBool(v)
		return err
	}},
	"proxy-body-size": {flag: "proxy-body-size", atStart: true, apply: func(c *config, v string) error {
		n, err := compile.ParseSize(v)
		if err != nil {
			return err
		}
		c.maxBodySize = n
		if n == 0 {
			c.maxBodySize = -1 // nginx's 0: no limit
		}
		return nil
	}},
	"client-body-buffer-size": {atStart: true, apply: func(c *config, v string) error {
		n, err := compile.ParseSize(v)
		if err == nil && n <= 0 {
			err = fmt.Errorf("want a positive size")
		}
		c.bodyBufferSize = n
		return err
	}},
	"proxy-connect-timeout": {atStart: true, apply: func(c *config, v string) (err error) {
		c.connectTimeout, err = nginxSeconds(v)
		return err
	}},
	"proxy-read-timeout": {atStart: true, apply: func(c *config, v string) (err error) {
		c.readTimeout, err = nginxSeconds(v)
		return err
	}},
	"hsts": {apply: func(c *config, v string) error {
		b, err := nginxBool(v)
		c.setHSTS(func(h *hstsSettings) { h.off = !b })
		return err
	}},
	"hsts-max-age": {apply: func(c *config, v string) error {
		// ingress-nginx writes the string into the header as given; a
		// value that is not a number of seconds makes a header browsers
		// ignore, so it is refused here.
		n, err := strconv.ParseUint(v, 10, 63)
		c.setHSTS(func(h *hstsSettings) { h.maxAge = int64(n) })
		return err
	}},
	"hsts-include-subdomains": {apply: func(c *config, v string) error {
		b, err := nginxBool(v)
		c.setHSTS(func(h *hstsSettings) { h.includeSubDomains = b })
		return err
	}},
	"hsts-preload": {apply: func(c *config, v string) error {
		b, err := nginxBool(v)
		c.setHSTS(func(h *hstsSettings) { h.preload = b })
		return err
	}},
}

// configMapMissing are keys of the first set that need a library feature
// ramjet lacks (a global default the compiler or router does not take):
// each changes answers, so each warns as traffic-moves.
var configMapMissing = map[string]string{
	"force-ssl-redirect":        "no global force-ssl-redirect; set the annotation on each Ingress",
	"proxy-send-timeout":        "the router has no send timeout",
	"proxy-next-upstream-tries": "no global default; set the annotation on each Ingress",
	"load-balance":              "no global default; set the annotation on each Ingress",
	"upstream-hash-by":          "no global default; set the annotation on each Ingress",
}

// configMapTuning are ingress-nginx keys that tune nginx itself (workers,
// buffers, caches, logs, hash tables) and change no answer: ramjet has no
// such knob, and their warning is cosmetic.
var configMapTuning = []string{
	"worker-processes", "max-worker-connections", "max-worker-open-files", "worker-cpu-affinity",
	"worker-shutdown-timeout", "worker-rlimit-nofile", "reuse-port", "keep-alive", "keep-alive-requests",
	"upstream-keepalive-connections", "upstream-keepalive-timeout", "upstream-keepalive-requests",
	"upstream-keepalive-time", "proxy-buffer-size", "proxy-buffers-number", "proxy-busy-buffers-size",
	"proxy-buffering", "server-name-hash-bucket-size", "server-name-hash-max-size",
	"map-hash-bucket-size", "proxy-headers-hash-bucket-size", "proxy-headers-hash-max-size",
	"variables-hash-bucket-size", "variables-hash-max-size", "ssl-session-cache", "ssl-session-cache-size",
	"ssl-session-tickets", "ssl-session-timeout", "ssl-buffer-size", "error-log-level", "error-log-path",
	"access-log-path", "http-access-log-path", "disable-access-log", "enable-opentelemetry",
	"lua-shared-dicts", "plugins", "nginx-status-ipv4-whitelist", "nginx-status-ipv6-whitelist",
	"enable-multi-accept", "use-geoip", "use-geoip2", "http-snippet", "main-snippet", "stream-snippet",
	"bind-address", "enable-ipv6", "disable-ipv6-dns", "resolver", "log-format-stream",
	"debug-connections", "enable-access-log-for-default-backend", "skip-access-log-urls",
	"syslog-host", "syslog-port", "enable-syslog", "client-header-buffer-size",
}

// hstsSettings are the hsts-* keys, with ingress-nginx's defaults.
type hstsSettings struct {
	off               bool
	maxAge            int64
	includeSubDomains bool
	preload           bool
}

var defaultHSTS = hstsSettings{maxAge: 31536000, includeSubDomains: true}

// setHSTS changes c's HSTS settings with f, on a copy: configurations
// copied from c keep theirs.
func (c *config) setHSTS(f func(*hstsSettings)) {
	h := defaultHSTS
	if c.hsts != nil {
		h = *c.hsts
	}
	f(&h)
	c.hsts = &h
}

// routerValue is the router's HSTS setting for s; nil: the router's
// default, which is ingress-nginx's.
func (s *hstsSettings) routerValue() (value string, disabled bool) {
	if s == nil {
		return "", false
	}
	if s.off {
		return "", true
	}
	return router.HSTSHeader(s.maxAge, s.includeSubDomains, s.preload), false
}

// configMapWarning is one problem with a key, with its severity.
type configMapWarning struct {
	key, message string
	severity     compile.Severity
}

func (w configMapWarning) String() string {
	if w.key == "" {
		return fmt.Sprintf("%s (%s)", w.message, w.severity)
	}
	return fmt.Sprintf("key %q: %s (%s)", w.key, w.message, w.severity)
}

// applyConfigMap sets in c what data says, for the implemented keys no
// flag in set (the flags given on the command line) already decided; it
// returns one warning per other key and per bad value, in key order.
func applyConfigMap(c *config, data map[string]string, set []string) []configMapWarning {
	var warns []configMapWarning
	for _, key := range slices.Sorted(maps.Keys(data)) {
		v := strings.TrimSpace(data[key])
		k, ok := configMapKeys[key]
		switch {
		case ok && k.flag != "" && slices.Contains(set, k.flag):
			// The flag wins, as in ingress-nginx where flags and keys
			// never overlap; say so, since the key reads as applied.
			warns = append(warns, configMapWarning{key, fmt.Sprintf("-%s given on the command line wins over %q", k.flag, v), compile.Cosmetic})
		case ok:
			keep := *c
			if err := k.apply(c, v); err != nil {
				*c = keep
				warns = append(warns, configMapWarning{key, fmt.Sprintf("value %q: %v; the default is kept", v, err), compile.TrafficMoves})
			}
		case configMapMissing[key] != "":
			warns = append(warns, configMapWarning{key, "not implemented: " + configMapMissing[key], compile.TrafficMoves})
		case slices.Contains(configMapTuning, key):
			warns = append(warns, configMapWarning{key, "tunes nginx itself, no answer changes; ignored", compile.Cosmetic})
		default:
			warns = append(warns, configMapWarning{key, "not implemented; ignored (it may change answers)", compile.FeatureMissing})
		}
	}
	if _, ok := data["proxy-real-ip-cidr"]; !ok && c.useForwardedHeaders && len(c.proxyRealIPCIDR) == 0 && !slices.Contains(set, "proxy-real-ip-cidr") {
		// ingress-nginx's default is 0.0.0.0/0; ramjet's flag trusts no
		// peer unless told, so a client cannot forge its address.
		warns = append(warns, configMapWarning{"proxy-real-ip-cidr", "absent: ingress-nginx's default 0.0.0.0/0 believes X-Forwarded-For from every peer, ramjet from none until the load balancers are listed", compile.TrafficMoves})
	}
	return warns
}

// nginxBool reads a boolean as ingress-nginx's ConfigMap decoder
// (mapstructure, weakly typed) does: strconv.ParseBool, and "" is false.
func nginxBool(v string) (bool, error) {
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("want true or false")
	}
	return b, nil
}

// nginxSeconds reads ingress-nginx's integer timeouts (seconds).
func nginxSeconds(v string) (time.Duration, error) {
	n, err := strconv.ParseInt(v, 0, 32)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("want a positive number of seconds")
	}
	return time.Duration(n) * time.Second, nil
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
func newConfigMapSettings(cfg config, data map[string]string, found bool, log *slog.Logger) (*configMapSettings, config) {
	if cfg.configMap == nil {
		return nil, cfg
	}
	s := &configMapSettings{ref: *cfg.configMap, log: log, base: cfg, set: cfg.flagsSet, start: data}
	return s, s.update(data, found)
}

// update applies data, the ConfigMap's current version, to the command
// line's configuration and returns the result (the caller compiles with
// it and hands its HSTS settings to the router); a start-only key whose
// value changed since start warns that it waits for a restart. The
// warnings are logged when they differ from the last version's.
func (s *configMapSettings) update(data map[string]string, found bool) config {
	c := s.base
	warns := applyConfigMap(&c, data, s.set)
	if !found {
		warns = append(warns, configMapWarning{"", "not found; the flags' settings apply", compile.Cosmetic})
	}
	for _, key := range slices.Sorted(maps.Keys(configMapKeys)) {
		old, had := s.start[key]
		cur, has := data[key]
		k := configMapKeys[key]
		if k.atStart && (old != cur || had != has) && (k.flag == "" || !slices.Contains(s.set, k.flag)) {
			warns = append(warns, configMapWarning{key, "changed since start; it takes effect when the controller restarts", compile.TrafficMoves})
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !slices.Equal(warns, s.warnings) {
		for _, w := range warns {
			s.log.Warn(w.message, "configmap", s.ref.String(), "key", w.key, "severity", string(w.severity))
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
	out := make([]string, len(s.warnings))
	for i, w := range s.warnings {
		out[i] = "ConfigMap " + s.ref.String() + ": " + w.String()
	}
	return out
}

// configMapInFolder finds the ConfigMap ref among the manifests under
// root; found is false when no file holds it. A file that does not parse
// is manifest.Load's to report.
func configMapInFolder(root string, ref types.NamespacedName) (data map[string]string, found bool, err error) {
	files, err := manifest.Files(root)
	if err != nil {
		return nil, false, err
	}
	type object struct {
		Kind     string `json:"kind"`
		Metadata struct {
			Name      string `json:"name"`
			Namespace string `json:"namespace"`
		} `json:"metadata"`
		Data  map[string]string `json:"data"`
		Items []json.RawMessage `json:"items"`
	}
	var look func(raw []byte)
	look = func(raw []byte) {
		var o object
		if json.Unmarshal(raw, &o) != nil {
			return
		}
		if o.Kind == "List" {
			for _, it := range o.Items {
				look(it)
			}
		}
		if o.Kind == "ConfigMap" && o.Metadata.Name == ref.Name && cmp.Or(o.Metadata.Namespace, "default") == ref.Namespace {
			data, found = o.Data, true
		}
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, false, err
		}
		d := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(b), 4096)
		for {
			var raw json.RawMessage
			if err := d.Decode(&raw); err != nil {
				break
			}
			look(raw)
		}
	}
	return data, found, nil
}
