package compile

import (
	"errors"
	"fmt"
	"math"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"ramjet.dev/ramjet/match"
	"ramjet.dev/ramjet/router/configmap"
)

// Request policies (SPEC §11.4, §11.5): the body limit, upstream timeouts
// and tries, source ranges and rate limits of an Ingress's locations. Each
// annotation is parsed on its own; a value that does not parse warns
// AnnotationRejected and leaves the location as protected as before or
// closed, never open:
//
//   - proxy-body-size: the replica's limit stays;
//   - client-body-buffer-size, proxy-request-buffering: the replica's
//     buffering applies (bodies read whole before the backend is chosen);
//   - the timeouts and proxy-next-upstream-tries: the router's defaults;
//   - a source range: the location is denied, 503 to every request, as
//     ingress-nginx denies it;
//   - limit-rps, limit-rpm, limit-connections: the location refuses
//     everyone (503), as a limit of unknown size cannot be applied;
//   - limit-burst-multiplier: the default 5; limit-whitelist: no exemption.

func init() {
	registerAnnotations(map[string]annotationSpec{
		"proxy-body-size":           {apply: applyProxyBodySize},
		"client-body-buffer-size":   {apply: applyBodyBufferSize},
		"proxy-request-buffering":   {apply: applyRequestBuffering},
		"proxy-connect-timeout":     {apply: applyTimeout(func(p *policyValues) *time.Duration { return &p.connect })},
		"proxy-send-timeout":        {apply: applyTimeout(func(p *policyValues) *time.Duration { return &p.send })},
		"proxy-read-timeout":        {apply: applyTimeout(func(p *policyValues) *time.Duration { return &p.read })},
		"proxy-next-upstream-tries": {apply: applyNextUpstreamTries},
		"whitelist-source-range":    {apply: applySourceRange(func(p *policyValues) *sourceRange { return &p.whitelist })},
		"allowlist-source-range":    {apply: applySourceRange(func(p *policyValues) *sourceRange { return &p.allowlist })},
		"denylist-source-range":     {apply: applySourceRange(func(p *policyValues) *sourceRange { return &p.denylist })},
		"limit-rps":                 {apply: applyLimit(func(p *policyValues) *limitValue { return &p.rps })},
		"limit-rpm":                 {apply: applyLimit(func(p *policyValues) *limitValue { return &p.rpm })},
		"limit-connections":         {apply: applyLimit(func(p *policyValues) *limitValue { return &p.conn })},
		"limit-burst-multiplier":    {apply: applyBurstMultiplier},
		"limit-whitelist":           {apply: applyLimitExempt(func(p *policyValues) *[]netip.Prefix { return &p.limitWhitelist })},
		"limit-allowlist":           {apply: applyLimitExempt(func(p *policyValues) *[]netip.Prefix { return &p.limitAllowlist })},
	})
}

// DefaultBurstMultiplier is ingress-nginx's limit-burst-multiplier default.
const DefaultBurstMultiplier = 5

// policyValues are an Ingress's parsed policy annotations.
type policyValues struct {
	set bool // some policy annotation applied or was rejected

	bodySize                       int64 // 0: unset; negative: no limit
	bodyBuffer                     int64 // 0: unset
	streamBody                     bool  // proxy-request-buffering: "off"
	connect                        time.Duration
	send, read                     time.Duration
	tries                          int // 0: unset; negative: nginx's 0, every endpoint
	whitelist                      sourceRange
	allowlist                      sourceRange
	denylist                       sourceRange
	rps, rpm                       limitValue
	conn                           limitValue
	burst                          int // 0: unset
	burstSet                       bool
	limitWhitelist, limitAllowlist []netip.Prefix
	proxy                          *proxyValues // proxying.go

	built *match.Policy // once requestPolicy ran
	done  bool
}

// sourceRange is one source range annotation: unset, a list, or broken.
type sourceRange struct {
	set    bool
	broken bool
	// empty: allowlist-source-range set to "", which ingress-nginx reads
	// as absent where its alias has a value (requestPolicy).
	empty bool
	// configMap: the ConfigMap's default, not the Ingress's own value.
	configMap bool
	ranges    []netip.Prefix
}

// limitValue is one of limit-rps, limit-rpm, limit-connections.
type limitValue struct {
	n      int
	broken bool
}

func applyProxyBodySize(v *annotationValues, key, value string) error {
	n, err := ParseSize(value)
	if err != nil {
		return fmt.Errorf("%s %q: %v; the replica's body limit applies", key, value, err)
	}
	v.requestW().set = true
	v.requestW().bodySize = n
	if n == 0 {
		v.requestW().bodySize = -1
	}
	return nil
}

func applyBodyBufferSize(v *annotationValues, key, value string) error {
	n, err := ParseSize(value)
	if v := strings.TrimSpace(value); err == nil && strings.ContainsAny(v[len(v)-1:], "gG") {
		// A size, not an offset: ingress-nginx writes no
		// client_body_buffer_size for "1g", so nginx keeps its default.
		err = errors.New("a buffer size is in bytes, k or m")
	}
	if err == nil && n == 0 {
		err = errors.New("a buffer must be more than 0 bytes")
	}
	if err != nil {
		return fmt.Errorf("%s %q: %v; the replica's body buffer size applies", key, value, err)
	}
	v.requestW().set = true
	v.requestW().bodyBuffer = n
	return nil
}

// applyRequestBuffering reads proxy-request-buffering as ingress-nginx
// validates it: "on" or "off", spaces trimmed, lower case only.
func applyRequestBuffering(v *annotationValues, key, value string) error {
	switch strings.TrimSpace(value) {
	case "on":
		v.requestW().set = true
		v.requestW().streamBody = false
	case "off":
		v.requestW().set = true
		v.requestW().streamBody = true
	default:
		return fmt.Errorf("%s %q is neither \"on\" nor \"off\"; request bodies are buffered", key, value)
	}
	return nil
}

func applyTimeout(field func(*policyValues) *time.Duration) func(v *annotationValues, key, value string) error {
	return func(v *annotationValues, key, value string) error {
		var d time.Duration
		var err error
		if strings.HasPrefix(key, NativePrefix) {
			d, err = ParseDuration(value)
		} else {
			d, err = parseNginxSeconds(value)
		}
		if err != nil {
			return fmt.Errorf("%s %q: %v; the default timeout applies", key, value, err)
		}
		v.requestW().set = true
		*field(v.requestW()) = d
		return nil
	}
}

func applyNextUpstreamTries(v *annotationValues, key, value string) error {
	n, err := strconv.Atoi(value)
	if err != nil || n < 0 {
		return fmt.Errorf("%s %q is not a whole number of tries (0 for every endpoint); the default, 3, applies", key, value)
	}
	v.requestW().set = true
	v.requestW().tries = n
	if n == 0 {
		v.requestW().tries = -1
	}
	return nil
}

func applySourceRange(field func(*policyValues) *sourceRange) func(v *annotationValues, key, value string) error {
	return func(v *annotationValues, key, value string) error {
		if value == "" && strings.HasPrefix(key, NginxPrefix) {
			// ingress-nginx reads allowlist-source-range, or its alias
			// whitelist-source-range when the name's value is empty
			// (parser.checkAnnotation's AnnotationAliases); an empty alias
			// is never read, and an empty name alone denies the location
			// (parseString's InvalidContent, a LocationDeniedError).
			switch strings.TrimPrefix(key, NginxPrefix) {
			case "whitelist-source-range":
				return ratedError{fmt.Errorf("%s is empty, which ingress-nginx reads as absent: not applied", key), Cosmetic}
			case "allowlist-source-range":
				v.requestW().set = true
				*field(v.requestW()) = sourceRange{set: true, broken: true, empty: true}
				return ratedError{fmt.Errorf("%s is empty: whitelist-source-range applies in its place when set, else the location is denied, 503 to every request, as ingress-nginx denies it", key), Cosmetic}
			}
		}
		v.requestW().set = true
		sr := field(v.requestW())
		fromConfigMap := strings.HasPrefix(key, configMapKeyName)
		ranges, err := ParseSourceRanges(value)
		if err != nil {
			*sr = sourceRange{set: true, broken: true, configMap: fromConfigMap}
			return fmt.Errorf("%s %q: %v; the location is denied, 503 to every request, until it is fixed", key, value, err)
		}
		*sr = sourceRange{set: true, ranges: ranges, configMap: fromConfigMap}
		return nil
	}
}

func applyLimit(field func(*policyValues) *limitValue) func(v *annotationValues, key, value string) error {
	return func(v *annotationValues, key, value string) error {
		if value == "" && strings.HasPrefix(key, NginxPrefix) {
			// No validator runs on an empty value in ingress-nginx, and
			// parseInt's InvalidContent is not a validation error, the
			// only one its rate limit parser passes on: no limit.
			return ratedError{fmt.Errorf("%s is empty, which ingress-nginx reads as no limit: not applied", key), Cosmetic}
		}
		v.requestW().set = true
		l := field(v.requestW())
		n, err := strconv.Atoi(value)
		switch {
		case err != nil:
			*l = limitValue{broken: true}
			err := fmt.Errorf("%s %q is not a whole number; the location refuses every request (503) until it is fixed", key, value)
			if strings.HasPrefix(key, NginxPrefix) {
				// Requests no longer reach the backend; ingress-nginx's
				// ValidateInt fails, which drops the Ingress there.
				return ratedError{fmt.Errorf("%w, where ingress-nginx ignores the whole Ingress", err), TrafficMoves}
			}
			return err
		case n < 0:
			*l = limitValue{}
			return fmt.Errorf("%s %q is negative; no limit applies, as in ingress-nginx", key, value)
		}
		*l = limitValue{n: n}
		return nil
	}
}

func applyBurstMultiplier(v *annotationValues, key, value string) error {
	n, err := strconv.Atoi(value)
	if err != nil || n < 0 {
		return fmt.Errorf("%s %q is not a whole number of at least 0; the default, %d, applies", key, value, DefaultBurstMultiplier)
	}
	v.requestW().set = true
	v.requestW().burst, v.requestW().burstSet = n, true
	return nil
}

func applyLimitExempt(field func(*policyValues) *[]netip.Prefix) func(v *annotationValues, key, value string) error {
	return func(v *annotationValues, key, value string) error {
		if value == "" && strings.HasPrefix(key, NginxPrefix) {
			// ingress-nginx reads an empty limit-allowlist as absent
			// (parseString's InvalidContent, which its rate limit parser
			// passes over), limit-whitelist then standing in.
			return ratedError{fmt.Errorf("%s is empty, which ingress-nginx reads as absent: not applied", key), Cosmetic}
		}
		ranges, err := ParseSourceRanges(value)
		if err != nil {
			if value != "" {
				// Set, so that limit-allowlist's alias is not read in its place.
				*field(v.requestW()) = []netip.Prefix{}
			}
			return fmt.Errorf("%s %q: %v; no client is exempt from the rate limits", key, value, err)
		}
		v.requestW().set = true
		*field(v.requestW()) = ranges
		return nil
	}
}

// requestPolicy is the Ingress's policy for its locations, built once and
// shared by all of them; nil when it sets none of the annotations.
func (ing *ingress) requestPolicy() *match.Policy {
	pv := ing.ann.request
	if pv == nil {
		return nil // none of the annotations set
	}
	if pv.done {
		return pv.built
	}
	pv.done = true
	if !pv.set {
		return nil
	}
	p := &match.Policy{
		MaxBodySize:       pv.bodySize,
		BodyBufferSize:    pv.bodyBuffer,
		StreamRequestBody: pv.streamBody,
		ConnectTimeout:    pv.connect,
		SendTimeout:       pv.send,
		ReadTimeout:       pv.read,
		NextUpstreamTries: pv.tries,
		Proxy:             pv.proxy.proxying(),
	}
	// allowlist-source-range is the name, whitelist-source-range the alias
	// ingress-nginx reads only when the name is unset or empty; the
	// ConfigMap's whitelist-source-range only when neither has a value.
	allow := pv.allowlist
	switch {
	case allow.set && !allow.empty:
	case pv.whitelist.set && !pv.whitelist.configMap:
		allow = pv.whitelist
	case !allow.set:
		allow = pv.whitelist
	}
	switch {
	case allow.broken || pv.denylist.broken:
		p.DenyAll = true
	default:
		if allow.set {
			p.Allow = nonNil(allow.ranges)
		}
		if pv.denylist.set {
			p.Deny = nonNil(pv.denylist.ranges)
		}
	}
	if pv.rps.n > 0 || pv.rpm.n > 0 || pv.conn.n > 0 || pv.rps.broken || pv.rpm.broken || pv.conn.broken {
		mult := DefaultBurstMultiplier
		if pv.burstSet {
			mult = pv.burst
		}
		exempt := pv.limitAllowlist
		if exempt == nil {
			exempt = pv.limitWhitelist
		}
		if len(exempt) == 0 {
			exempt = nil // a rejected list exempts nobody
		}
		p.RateLimit = &match.RateLimit{
			Zone:        ing.name(),
			RPS:         pv.rps.n,
			RPM:         pv.rpm.n,
			Connections: pv.conn.n,
			BurstRPS:    saturatingMul(pv.rps.n, mult),
			BurstRPM:    saturatingMul(pv.rpm.n, mult),
			Exempt:      exempt,
			Closed:      pv.rps.broken || pv.rpm.broken || pv.conn.broken,
		}
	}
	if p.MaxBodySize == 0 && p.BodyBufferSize == 0 && !p.StreamRequestBody && p.ConnectTimeout == 0 && p.SendTimeout == 0 && p.ReadTimeout == 0 &&
		p.NextUpstreamTries == 0 && p.Allow == nil && p.Deny == nil && !p.DenyAll && p.RateLimit == nil && p.Proxy == nil {
		// Only rejected values that change nothing (a bad timeout, say).
		return nil
	}
	pv.built = p
	return p
}

func nonNil(p []netip.Prefix) []netip.Prefix {
	if p == nil {
		return []netip.Prefix{}
	}
	return p
}

func saturatingMul(a, b int) int {
	if a == 0 || b == 0 {
		return 0
	}
	if a > math.MaxInt32/b {
		return math.MaxInt32
	}
	return a * b
}

// ParseSize reads an nginx size as ingress-nginx passes proxy-body-size to
// client_max_body_size: digits, optionally followed by k, m or g (either
// case) for KiB, MiB, GiB. "0" means no limit to nginx and is returned as 0.
func ParseSize(s string) (int64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, errors.New("an empty size")
	}
	mult := int64(1)
	switch s[len(s)-1] {
	case 'k', 'K':
		mult = 1 << 10
	case 'm', 'M':
		mult = 1 << 20
	case 'g', 'G':
		mult = 1 << 30
	}
	digits := s
	if mult != 1 {
		digits = s[:len(s)-1]
	}
	if digits == "" || strings.IndexFunc(digits, func(r rune) bool { return r < '0' || r > '9' }) >= 0 {
		return 0, errors.New("not an nginx size (digits, then optionally k, m or g)")
	}
	n, err := strconv.ParseInt(digits, 10, 64)
	if err != nil || n > math.MaxInt64/mult {
		return 0, errors.New("too large a size")
	}
	return n * mult, nil
}

// parseNginxSeconds reads a proxy timeout as ingress-nginx does: a whole
// number of seconds, more than zero.
func parseNginxSeconds(s string) (time.Duration, error) {
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, errors.New("ingress-nginx takes a whole number of seconds")
	}
	if n <= 0 || n > maxTimeoutSeconds {
		return 0, fmt.Errorf("a timeout must be between 1 and %d seconds", maxTimeoutSeconds)
	}
	return time.Duration(n) * time.Second, nil
}

// maxTimeoutSeconds bounds timeouts to a year, far beyond any use and far
// below time.Duration's range.
const maxTimeoutSeconds = 366 * 24 * 3600

// ParseDuration reads an nginx time value with its units required, as
// ramjet.dev/ timeouts are written: one or more numbers each followed by
// ms, s, m, h or d ("600s", "1m30s", "500ms"). The result is more than zero
// and at most a year.
func ParseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, errors.New("an empty duration")
	}
	var total time.Duration
	for rest := s; rest != ""; {
		i := 0
		for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
			i++
		}
		if i == 0 {
			return 0, errors.New("not a duration with units (600s, 1m30s, 500ms)")
		}
		if i > 12 {
			return 0, errors.New("too long a duration")
		}
		n, _ := strconv.ParseInt(rest[:i], 10, 64)
		rest = rest[i:]
		var unit time.Duration
		switch {
		case strings.HasPrefix(rest, "ms"):
			unit, rest = time.Millisecond, rest[2:]
		case strings.HasPrefix(rest, "s"):
			unit, rest = time.Second, rest[1:]
		case strings.HasPrefix(rest, "m"):
			unit, rest = time.Minute, rest[1:]
		case strings.HasPrefix(rest, "h"):
			unit, rest = time.Hour, rest[1:]
		case strings.HasPrefix(rest, "d"):
			unit, rest = 24*time.Hour, rest[1:]
		default:
			return 0, errors.New("a duration needs a unit: ms, s, m, h or d (600s, not 600)")
		}
		total += time.Duration(n) * unit
		if total > maxTimeoutSeconds*time.Second {
			return 0, errors.New("too long a duration (more than a year)")
		}
	}
	if total <= 0 {
		return 0, errors.New("a timeout must be more than zero")
	}
	return total, nil
}

// ParseSourceRanges reads a comma-separated list of CIDR ranges and bare
// addresses as ingress-nginx's source range annotations take them; it is
// configmap.ParseSourceRanges, whose proxy-real-ip-cidr takes the same.
func ParseSourceRanges(s string) ([]netip.Prefix, error) { return configmap.ParseSourceRanges(s) }
