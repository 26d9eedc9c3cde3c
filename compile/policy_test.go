package compile

import (
	"math"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/match"
)

func TestParseSize(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"8m", 8 << 20, true},
		{"8M", 8 << 20, true},
		{"1k", 1 << 10, true},
		{"2g", 2 << 30, true},
		{"1024", 1024, true},
		{" 512k ", 512 << 10, true},
		{"0", 0, true},
		{"0m", 0, true},
		{"15r", 0, false}, // ingress-nginx e2e: not applied
		{"8b", 0, false},  // the annotation validator takes it, the template does not
		{"1.5m", 0, false},
		{"-1", 0, false},
		{"m", 0, false},
		{"", 0, false},
		{"8 m", 0, false},
		{"9223372036854775807", math.MaxInt64, true},
		{"9223372036854775807k", 0, false},
		{"99999999999999999999", 0, false},
	}
	for _, tt := range tests {
		got, err := ParseSize(tt.in)
		if tt.ok {
			require.NoError(t, err, tt.in)
			require.Equal(t, tt.want, got, tt.in)
		} else {
			require.Error(t, err, tt.in)
		}
	}
}

func TestParseDurations(t *testing.T) {
	tests := []struct {
		in     string
		native time.Duration // 0: rejected
		nginx  time.Duration
	}{
		{"600", 0, 600 * time.Second},
		{"5", 0, 5 * time.Second},
		{"600s", 600 * time.Second, 0},
		{"1m", time.Minute, 0},
		{"1m30s", 90 * time.Second, 0},
		{"500ms", 500 * time.Millisecond, 0},
		{"2h", 2 * time.Hour, 0},
		{"1d", 24 * time.Hour, 0},
		{"50k", 0, 0}, // ingress-nginx e2e: not applied
		{"0", 0, 0},
		{"0s", 0, 0},
		{"-5", 0, 0},
		{"-5s", 0, 0},
		{"1.5s", 0, 0},
		{"s", 0, 0},
		{"", 0, 0},
		{"5 s", 0, 0},
		{"400d", 0, 0},
		{"99999999999999s", 0, 0},
		{"31622401", 0, 0},
	}
	for _, tt := range tests {
		got, err := ParseDuration(tt.in)
		if tt.native != 0 {
			require.NoError(t, err, tt.in)
			require.Equal(t, tt.native, got, tt.in)
		} else {
			require.Error(t, err, "ramjet.dev/ %q", tt.in)
		}
		got, err = parseNginxSeconds(tt.in)
		if tt.nginx != 0 {
			require.NoError(t, err, tt.in)
			require.Equal(t, tt.nginx, got, tt.in)
		} else {
			require.Error(t, err, "nginx %q", tt.in)
		}
	}
}

func TestParseSourceRanges(t *testing.T) {
	p := netip.MustParsePrefix
	tests := []struct {
		in   string
		want []netip.Prefix
		ok   bool
	}{
		{"18.0.0.0/8, 56.0.0.0/8", []netip.Prefix{p("18.0.0.0/8"), p("56.0.0.0/8")}, true},
		{"56.0.0.1,18.0.0.0/8", []netip.Prefix{p("18.0.0.0/8"), p("56.0.0.1/32")}, true},
		{"10.1.2.3/8", []netip.Prefix{p("10.0.0.0/8")}, true},
		{"2001:db8::1/32, 2001:db8::5", []netip.Prefix{p("2001:db8::/32"), p("2001:db8::5/128")}, true},
		{"::ffff:10.0.0.0/104", []netip.Prefix{p("10.0.0.0/8")}, true},
		{"::ffff:10.0.0.7", []netip.Prefix{p("10.0.0.7/32")}, true},
		{"10.0.0.0/8,10.0.0.0/8", []netip.Prefix{p("10.0.0.0/8")}, true},
		{"0.0.0.0/0", []netip.Prefix{p("0.0.0.0/0")}, true},
		{"", nil, false},
		{"10.0.0.0/8,", nil, false},
		{"10.0.0.0/33", nil, false},
		{"10.0.0", nil, false},
		{"fe80::1%eth0", nil, false},
		{"example.com", nil, false},
		{"10.0.0.0/8 192.168.0.0/16", nil, false},
	}
	for _, tt := range tests {
		got, err := ParseSourceRanges(tt.in)
		if !tt.ok {
			require.Error(t, err, tt.in)
			continue
		}
		require.NoError(t, err, tt.in)
		if d := cmp.Diff(tt.want, got, cmp.Comparer(func(a, b netip.Prefix) bool { return a == b })); d != "" {
			t.Errorf("%q (-want +got):\n%s", tt.in, d)
		}
	}
}

// CIDR matching as the router does it, on what the parser produced.
func TestSourceRangeMatching(t *testing.T) {
	allow, err := ParseSourceRanges("10.0.0.0/8, 2001:db8::/32, 192.0.2.7")
	require.NoError(t, err)
	deny, err := ParseSourceRanges("10.9.0.0/16")
	require.NoError(t, err)
	pol := &match.Policy{Allow: allow, Deny: deny}
	for addr, want := range map[string]bool{
		"10.0.0.1": true, "10.255.255.255": true, "11.0.0.1": false, "10.9.1.1": false,
		"::ffff:10.1.1.1": true, "2001:db8::99": true, "2001:db9::1": false,
		"192.0.2.7": true, "192.0.2.8": false,
	} {
		require.Equal(t, want, pol.Admits(netip.MustParseAddr(addr)), addr)
	}
	require.False(t, pol.Admits(netip.Addr{}), "an unknown client is not in an allowlist")
	require.True(t, (&match.Policy{Deny: deny}).Admits(netip.Addr{}), "nor in a denylist")
	require.False(t, (&match.Policy{DenyAll: true}).Admits(netip.MustParseAddr("10.0.0.1")))
}

// Every annotation of the set is applied, and none warns
// AnnotationUnsupported; the policy is shared by the Ingress's routes and
// the fallback of the host it created.
func TestPolicyAnnotations(t *testing.T) {
	s := protocolSnapshot(
		NginxPrefix+"proxy-body-size", "8m",
		NginxPrefix+"proxy-connect-timeout", "10",
		NginxPrefix+"proxy-send-timeout", "20",
		NginxPrefix+"proxy-read-timeout", "30",
		NginxPrefix+"proxy-next-upstream-tries", "2",
		NginxPrefix+"whitelist-source-range", "10.0.0.0/8",
		NginxPrefix+"denylist-source-range", "10.9.0.0/16",
		NginxPrefix+"limit-rps", "5",
		NginxPrefix+"limit-rpm", "100",
		NginxPrefix+"limit-connections", "3",
		NginxPrefix+"limit-burst-multiplier", "2",
		NginxPrefix+"limit-whitelist", "192.168.0.0/16",
		"kubernetes.io/ingress.class", "ramjet",
	)
	tab, ws := compileOK(t, s, Options{})
	require.Empty(t, ws, warningText(ws))
	res := tab.Lookup("shop.example.com", "/x")
	require.NotNil(t, res.Route)
	want := &match.Policy{
		MaxBodySize: 8 << 20, ConnectTimeout: 10 * time.Second, SendTimeout: 20 * time.Second, ReadTimeout: 30 * time.Second,
		NextUpstreamTries: 2,
		Allow:             []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")},
		Deny:              []netip.Prefix{netip.MustParsePrefix("10.9.0.0/16")},
		RateLimit: &match.RateLimit{Zone: "prod/shop", RPS: 5, RPM: 100, Connections: 3, BurstRPS: 10, BurstRPM: 200,
			Exempt: []netip.Prefix{netip.MustParsePrefix("192.168.0.0/16")}},
	}
	if d := cmp.Diff(want, res.Route.Policy, cmp.Comparer(func(a, b netip.Prefix) bool { return a == b })); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	other := tab.Lookup("www.example.com", "/")
	require.Same(t, res.Route.Policy, other.Route.Policy, "one policy per Ingress")
	require.Same(t, res.Route.Policy, tab.VirtualHostByName("shop.example.com").FallbackLocation.Policy)
	require.Contains(t, tab.String(), "policy body=8m connect=10s send=20s read=30s tries=2 deny=10.9.0.0/16 allow=10.0.0.0/8 limit=prod/shop(rps=5/10,rpm=100/200,conn=3,exempt=192.168.0.0/16)")
}

// A value that does not parse warns on its own annotation and leaves the
// location protected or closed.
func TestPolicyRejected(t *testing.T) {
	tests := []struct {
		key, value string
		check      func(t *testing.T, p *match.Policy)
	}{
		{"proxy-body-size", "15r", func(t *testing.T, p *match.Policy) { require.Nil(t, p, "the replica limit stays") }},
		{"proxy-read-timeout", "20k", func(t *testing.T, p *match.Policy) { require.Nil(t, p) }},
		{"whitelist-source-range", "10.0.0.0/8, nope", func(t *testing.T, p *match.Policy) { require.True(t, p.DenyAll) }},
		{"allowlist-source-range", "", func(t *testing.T, p *match.Policy) { require.True(t, p.DenyAll) }},
		{"denylist-source-range", "10.0.0.0/40", func(t *testing.T, p *match.Policy) { require.True(t, p.DenyAll) }},
		{"limit-rps", "10r/s", func(t *testing.T, p *match.Policy) { require.True(t, p.RateLimit.Closed) }},
		{"limit-connections", "many", func(t *testing.T, p *match.Policy) { require.True(t, p.RateLimit.Closed) }},
		{"limit-rpm", "-1", func(t *testing.T, p *match.Policy) { require.Nil(t, p, "negative is no limit, as in ingress-nginx") }},
	}
	for _, tt := range tests {
		for _, prefix := range []string{NginxPrefix, NativePrefix} {
			t.Run(prefix+tt.key, func(t *testing.T) {
				tab, ws := compileOK(t, protocolSnapshot(prefix+tt.key, tt.value, "kubernetes.io/ingress.class", "ramjet"), Options{})
				require.Equal(t, []short{{AnnotationRejected, "Ingress prod/shop", "metadata.annotations[" + prefix + tt.key + "]"}}, shorten(ws))
				tt.check(t, tab.Lookup("shop.example.com", "/").Route.Policy)
			})
		}
	}
}

// A limit-allowlist that does not parse exempts nobody, even beside a
// valid limit-whitelist: the alias is read only when the name is unset or
// empty (ingress-nginx's AnnotationAliases), and ingress-nginx would not
// exempt the alias's clients over a name it refuses.
func TestLimitAllowlistRejected(t *testing.T) {
	tab, ws := compileOK(t, protocolSnapshot(
		NginxPrefix+"limit-rps", "5",
		NginxPrefix+"limit-allowlist", "10.0.0.0/40",
		NginxPrefix+"limit-whitelist", "192.168.0.0/16",
		"kubernetes.io/ingress.class", "ramjet"), Options{})
	require.Equal(t, []short{{AnnotationRejected, "Ingress prod/shop", "metadata.annotations[" + NginxPrefix + "limit-allowlist]"}}, shorten(ws))
	rl := tab.Lookup("shop.example.com", "/").Route.Policy.RateLimit
	require.NotNil(t, rl)
	require.Empty(t, rl.Exempt, "no client is exempt")

	tab, ws = compileOK(t, protocolSnapshot(
		NginxPrefix+"limit-rps", "5",
		NginxPrefix+"limit-allowlist", "",
		NginxPrefix+"limit-whitelist", "192.168.0.0/16",
		"kubernetes.io/ingress.class", "ramjet"), Options{})
	require.Equal(t, []netip.Prefix{netip.MustParsePrefix("192.168.0.0/16")}, tab.Lookup("shop.example.com", "/").Route.Policy.RateLimit.Exempt,
		"an empty name reads the alias")
	// ingress-nginx reads an empty value as absent (parseString's
	// InvalidContent, which the rate limit parser ignores): nothing
	// changes against it, and the warning does not claim nobody is exempt.
	require.Len(t, ws, 1)
	require.NotContains(t, ws[0].Message, "no client is exempt")
	require.Equal(t, Cosmetic, ws[0].Severity(), ws[0].Message)

	tab, ws = compileOK(t, protocolSnapshot(
		NginxPrefix+"limit-rps", "5",
		NginxPrefix+"limit-whitelist", "",
		"kubernetes.io/ingress.class", "ramjet"), Options{})
	require.Empty(t, tab.Lookup("shop.example.com", "/").Route.Policy.RateLimit.Exempt)
	require.Len(t, ws, 1)
	require.Equal(t, Cosmetic, ws[0].Severity(), ws[0].Message)
}

// Annotation values from untrusted objects: the parsers never panic, and
// what they accept is in range and canonical.
func FuzzPolicyValues(f *testing.F) {
	for _, s := range []string{"8m", "0", "15r", "1k", "600s", "1m30s", "50", "-1", "18.0.0.0/8, 56.0.0.1", "::ffff:10.0.0.0/104", "2001:db8::/32,", "fe80::1%eth0", "9223372036854775807k"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if n, err := ParseSize(s); err == nil && n < 0 {
			t.Fatalf("ParseSize(%q) = %d", s, n)
		}
		if d, err := ParseDuration(s); err == nil && (d <= 0 || d > maxTimeoutSeconds*time.Second) {
			t.Fatalf("ParseDuration(%q) = %v", s, d)
		}
		if d, err := parseNginxSeconds(s); err == nil && (d <= 0 || d > maxTimeoutSeconds*time.Second) {
			t.Fatalf("parseNginxSeconds(%q) = %v", s, d)
		}
		ps, err := ParseSourceRanges(s)
		if err != nil {
			return
		}
		if len(ps) == 0 || len(ps) > strings.Count(s, ",")+1 {
			t.Fatalf("ParseSourceRanges(%q) = %v", s, ps)
		}
		for i, p := range ps {
			if !p.IsValid() || p != p.Masked() || p.Addr().Is4In6() || p.Addr().Zone() != "" {
				t.Fatalf("ParseSourceRanges(%q)[%d] = %v is not canonical", s, i, p)
			}
			if i > 0 && ps[i-1] == p {
				t.Fatalf("ParseSourceRanges(%q) repeats %v", s, p)
			}
		}
		// Canonical output parses back to itself.
		again := make([]string, len(ps))
		for i, p := range ps {
			again[i] = p.String()
		}
		ps2, err := ParseSourceRanges(strings.Join(again, ","))
		if err != nil || len(ps2) != len(ps) {
			t.Fatalf("round trip of %v: %v, %v", ps, ps2, err)
		}
	})
}

// An empty limit-rps, limit-rpm or limit-connections is no limit in
// ingress-nginx: no validator runs on an empty value, and parseInt's
// InvalidContent is not a validation error, which alone the rate limit
// parser passes on (annotations/ratelimit/main.go Parse).
func TestEmptyLimitIsAbsent(t *testing.T) {
	for _, key := range []string{"limit-rps", "limit-rpm", "limit-connections"} {
		tab, ws := compileOK(t, protocolSnapshot(NginxPrefix+key, "", "kubernetes.io/ingress.class", "ramjet"), Options{})
		require.Nil(t, tab.Lookup("shop.example.com", "/").Route.Policy, key)
		require.Len(t, ws, 1, key)
		require.Equal(t, AnnotationRejected, ws[0].Reason, key)
		require.Equal(t, Cosmetic, ws[0].Severity(), ws[0].Message)

		if key == "limit-rpm" {
			continue
		}
		tab, _ = compileOK(t, protocolSnapshot(NginxPrefix+key, "", NginxPrefix+"limit-rpm", "60", "kubernetes.io/ingress.class", "ramjet"), Options{})
		rl := tab.Lookup("shop.example.com", "/").Route.Policy.RateLimit
		require.False(t, rl.Closed, key)
		require.Equal(t, 60, rl.RPM, key)
	}
}

// A limit-rps, limit-rpm or limit-connections that is not a whole number
// closes the location (503 to every request). Requests there no longer
// reach the backend, and ingress-nginx's validation ignores the whole
// Ingress over such a value (ValidateInt, a validation error): so the
// warning moves traffic and says what ingress-nginx does.
func TestBrokenLimitMovesTraffic(t *testing.T) {
	for _, key := range []string{"limit-rps", "limit-rpm", "limit-connections"} {
		_, ws := compileOK(t, protocolSnapshot(NginxPrefix+key, "ten", "kubernetes.io/ingress.class", "ramjet"), Options{})
		require.Len(t, ws, 1, key)
		require.Equal(t, AnnotationRejected, ws[0].Reason, key)
		require.Equal(t, TrafficMoves, ws[0].Severity(), ws[0].Message)
		require.Equal(t, NginxPrefix+key+` "ten" is not a whole number; the location refuses every request (503) until it is fixed, where ingress-nginx ignores the whole Ingress`, ws[0].Message)
	}
}
