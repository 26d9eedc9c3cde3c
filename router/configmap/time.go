package configmap

import (
	"errors"
	"math"
	"strings"
	"time"
)

// maxTime is where ParseTime saturates: nginx takes times up to int64
// seconds or milliseconds, past what a Duration holds; a century is as
// good as for ever.
const maxTime = 100 * 365 * 24 * time.Hour

// nginxUnits are ngx_parse_time's units, from the largest down, in
// seconds (ms: 0, milliseconds).
var nginxUnits = []struct {
	name    string
	seconds int64
}{{"y", 365 * 24 * 3600}, {"M", 30 * 24 * 3600}, {"w", 7 * 24 * 3600}, {"d", 24 * 3600}, {"h", 3600}, {"m", 60}, {"s", 1}, {"ms", 0}}

// ParseTime reads an nginx time as ngx_parse_time reads it for a
// directive of seconds (sec: ssl_session_timeout) or of milliseconds
// (worker_shutdown_timeout, keepalive_time, proxy_timeout): numbers each
// followed by a unit, the units from the largest down and each once
// (y and M for seconds only, w, d, h, m, s, and ms for milliseconds
// only), the last number with no unit being seconds ("600", "1m30");
// 0 is a time. A time nginx holds but a century does not is a century.
func ParseTime(v string, sec bool) (time.Duration, error) {
	bad := errors.New("want an nginx time (10m, 1h, 600" + map[bool]string{false: ", 500ms)", true: "; no ms)"}[sec])
	// nginx counts in its directive's unit, ms or s, up to int64.
	perSecond := int64(1000)
	next := 2 // the first unit allowed: w for milliseconds
	if sec {
		perSecond, next = 1, 0
	}
	var total int64
	add := func(n, scale int64) bool {
		if scale > 0 && n > math.MaxInt64/scale || total > math.MaxInt64-n*scale {
			return false
		}
		total += n * scale
		return true
	}
	valid := false
	for rest := v; rest != ""; {
		i := 0
		for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
			i++
		}
		var n int64
		for _, c := range rest[:i] {
			if n > (math.MaxInt64-int64(c-'0'))/10 {
				return 0, bad
			}
			n = n*10 + int64(c-'0')
		}
		valid = valid || i > 0
		rest = rest[i:]
		if rest == "" {
			// A last number without a unit: seconds.
			if !add(n, perSecond) {
				return 0, bad
			}
			break
		}
		u := -1
		for j := len(nginxUnits) - 1; j >= 0; j-- {
			if strings.HasPrefix(rest, nginxUnits[j].name) {
				u = j
				break
			}
		}
		if u < next || u == len(nginxUnits)-1 && sec {
			return 0, bad
		}
		scale := nginxUnits[u].seconds * perSecond
		if u == len(nginxUnits)-1 {
			scale = 1
		}
		if !add(n, scale) {
			return 0, bad
		}
		next, rest = u+1, rest[len(nginxUnits[u].name):]
	}
	if !valid {
		return 0, bad
	}
	unit := time.Second
	if !sec {
		unit = time.Millisecond
	}
	if total > int64(maxTime/unit) {
		return maxTime, nil
	}
	return time.Duration(total) * unit, nil
}
