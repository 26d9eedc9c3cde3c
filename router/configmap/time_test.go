package configmap

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// ParseTime takes exactly the spellings nginx 1.22's ngx_parse_time takes
// for a directive of seconds (ssl_session_timeout) or of milliseconds
// (worker_shutdown_timeout, keepalive_time, the stream proxy_timeout),
// as checked with nginx -t.
func TestParseTimeAsNginx(t *testing.T) {
	const day = 24 * time.Hour
	for _, tc := range []struct {
		v         string
		msec, sec time.Duration // -1: nginx refuses it
	}{
		{"0", 0, 0},
		{"00", 0, 0},
		{"0s", 0, 0},
		{"0ms", 0, -1},
		{"600", 600 * time.Second, 600 * time.Second},
		{"500ms", 500 * time.Millisecond, -1},
		{"1m1ms", time.Minute + time.Millisecond, -1},
		{"1m30s", 90 * time.Second, 90 * time.Second},
		{"1m30", 90 * time.Second, 90 * time.Second}, // a last number is seconds
		{"30s10", 40 * time.Second, 40 * time.Second},
		{"1d2", day + 2*time.Second, day + 2*time.Second},
		{"1w1d1h1m1s1ms", 7*day + day + time.Hour + time.Minute + time.Second + time.Millisecond, -1},
		{"1d1h", day + time.Hour, day + time.Hour},
		{"1w", 7 * day, 7 * day},
		{"1y", -1, 365 * day},
		{"1M", -1, 30 * day},
		{"1y1M1w", -1, 365*day + 30*day + 7*day},
		{"1h1d", -1, -1}, // units from the largest down
		{"1s1s", -1, -1}, // each once
		{"1ms1s", -1, -1},
		{"1S", -1, -1},
		{"1H", -1, -1},
		{"1.5s", -1, -1},
		{"s", -1, -1},
		{"", -1, -1},
		{"-1", -1, -1},
		{"1m 30s", -1, -1}, // two words to nginx
		{"9223372036854775", maxTime, maxTime},
		{"9223372036854776", -1, maxTime},
		{"9223372036854775807", -1, maxTime},
		{"9223372036854775808", -1, -1},
	} {
		for _, sec := range []bool{false, true} {
			want := tc.msec
			if sec {
				want = tc.sec
			}
			d, err := ParseTime(tc.v, sec)
			if want < 0 {
				assert.Error(t, err, "%q sec %v", tc.v, sec)
				continue
			}
			if assert.NoError(t, err, "%q sec %v", tc.v, sec) {
				assert.Equal(t, min(want, maxTime), d, "%q sec %v", tc.v, sec)
			}
		}
	}
}

// The keys read their directive's kind of time: ssl-session-timeout is
// nginx's seconds and refuses "500ms", worker-shutdown-timeout and
// upstream-keepalive-time take it; a warning names the key and the value.
func TestTimeKeysAsTheirDirective(t *testing.T) {
	s, warns := Parse("ingress", "nginx", map[string]string{"worker-shutdown-timeout": "500ms", "upstream-keepalive-time": "1m30",
		"ssl-session-timeout": "1y"})
	assert.Empty(t, warns)
	assert.Equal(t, 500*time.Millisecond, s.Connections.ShutdownTimeout)
	assert.Equal(t, 90*time.Second, s.UpstreamKeepalive.Time)
	assert.Equal(t, 365*24*time.Hour, s.TLS.SessionTimeout)
	_, warns = Parse("ingress", "nginx", map[string]string{"worker-shutdown-timeout": "1y", "upstream-keepalive-time": "1h1d",
		"ssl-session-timeout": "500ms"})
	if assert.Len(t, warns, 3) {
		for _, w := range warns {
			assert.Equal(t, Rejected, w.Reason, w.Key)
			assert.Contains(t, w.Message, `value "`, w.Key)
		}
	}
}
