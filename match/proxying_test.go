package match

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/match/vars"
)

// Every setting of Proxying and ExternalAuthOptions changes the digest
// and the text of the route that carries it.
func TestProxyingDigestAndText(t *testing.T) {
	key, err := ParseVarTemplate("$http_authorization")
	require.NoError(t, err)
	hdr, err := ParseVarTemplate("blue")
	require.NoError(t, err)
	base := &Proxying{MaxTempFileSize: -1}
	opts := &ExternalAuthOptions{}
	for _, tt := range []struct {
		name string
		p    func(*Proxying)
		o    func(*ExternalAuthOptions)
		text string
	}{
		{name: "buffering", p: func(p *Proxying) { p.Buffering = true }, text: "proxying buffering=on"},
		{name: "buffer size", p: func(p *Proxying) { p.BufferSize = 8 << 10 }, text: "buffer-size=8k"},
		{name: "buffers", p: func(p *Proxying) { p.BuffersNumber = 8 }, text: "buffers=8"},
		{name: "busy", p: func(p *Proxying) { p.BusyBuffersSize = 16 << 10 }, text: "busy-buffers=16k"},
		{name: "temp file", p: func(p *Proxying) { p.MaxTempFileSize = 0 }, text: "max-temp-file=0"},
		{name: "http10", p: func(p *Proxying) { p.HTTP10 = true }, text: "http=1.0"},
		{name: "next", p: func(p *Proxying) { p.NextUpstream = RetryError | Retry503 }, text: "next-upstream=error,http_503"},
		{name: "next timeout", p: func(p *Proxying) { p.NextUpstreamTimeout = time.Second }, text: "next-upstream-timeout=1s"},
		{name: "redirect", p: func(p *Proxying) { p.Redirect = &HeaderRewrite{From: "http://in/", To: "/"} }, text: `rewrites redirect="http://in/"->"/"`},
		{name: "redirect pattern", p: func(p *Proxying) { p.Redirect = &HeaderRewrite{Pattern: regexp.MustCompile(`in`), To: "/"} }, text: `redirect=~"in"->"/"`},
		{name: "relative", p: func(p *Proxying) {
			p.Redirect, p.RedirectRelative = &HeaderRewrite{From: "http://in/", To: "/"}, true
		}, text: `->"/" relative`},
		{name: "cookie domain", p: func(p *Proxying) { p.CookieDomain = &HeaderRewrite{From: "in", To: "out"} }, text: `cookie-domain="in"->"out"`},
		{name: "cookie path", p: func(p *Proxying) { p.CookiePath = &HeaderRewrite{From: "/", To: "/app/"} }, text: `cookie-path="/"->"/app/"`},
		{name: "global", o: func(o *ExternalAuthOptions) { o.Global = true }, text: "auth options global"},
		{name: "cache", o: func(o *ExternalAuthOptions) {
			o.CacheKey, o.CacheValid = &key, []AuthCacheValid{{Codes: []int{200}, TTL: time.Minute}}
		}, text: `cache-key="$http_authorization" cache="200 1m0s"`},
		{name: "keepalive", o: func(o *ExternalAuthOptions) {
			o.Keepalive, o.KeepaliveRequests, o.KeepaliveTimeout = 2, 10, time.Second
		}, text: "keepalive=2 keepalive-requests=10 keepalive-timeout=1s"},
		{name: "share vars", o: func(o *ExternalAuthOptions) { o.KeepaliveShareVars = true }, text: "keepalive-share-vars"},
		{name: "headers", o: func(o *ExternalAuthOptions) {
			o.ProxySetHeadersFrom, o.ProxySetHeaders = "prod/h", []AuthHeader{{Name: "X-Tenant", Value: hdr}}
		}, text: "proxy-set-headers=prod/h(X-Tenant)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			build := func(mutate bool) *Table {
				spec := sectionSpec(t)
				r := specHost(spec, "shop.example.com").Routes[0]
				p, o := *base, *opts
				if mutate && tt.p != nil {
					tt.p(&p)
				}
				if mutate && tt.o != nil {
					tt.o(&o)
				}
				r.Policy.Proxy = &p
				r.Auth.External.Options = &o
				return mustNew(t, spec)
			}
			before, after := build(false), build(true)
			assert.NotEqual(t, before.Digest(), after.Digest())
			assert.Contains(t, after.String(), tt.text)
			assert.NotContains(t, before.String(), tt.text)
		})
	}
	// Without either, the table is the one it was before they existed.
	plain := mustNew(t, sectionSpec(t))
	assert.False(t, strings.Contains(plain.String(), "proxying") || strings.Contains(plain.String(), "auth options"))
}

func TestNextUpstreamConditions(t *testing.T) {
	var all NextUpstream
	for _, name := range strings.Fields("error timeout invalid_header http_500 http_502 http_503 http_504 http_403 http_404 http_429 non_idempotent off") {
		c := ParseNextUpstreamCondition(name)
		require.NotZero(t, c, name)
		assert.Zero(t, all&c, "%s has a bit of its own", name)
		all |= c
		assert.Equal(t, name, c.String())
	}
	assert.Zero(t, ParseNextUpstreamCondition("http_418"))
	assert.Equal(t, Retry503, StatusCondition(503))
	assert.Zero(t, StatusCondition(501))
}

func TestVarTemplate(t *testing.T) {
	v, err := ParseVarTemplate("a-$remote_user-${http_x_tenant}-$cookie_s$arg_q")
	require.NoError(t, err)
	var b strings.Builder
	v.Expand(&b, func(x vars.Ref) string { return x.Var.String() + x.Name })
	assert.Equal(t, "a-$remote_user-$http_<name>x_tenant-$cookie_<name>s$arg_<name>q", b.String())
	for _, bad := range []string{"$request_body", "${host", "$http_"} {
		_, err := ParseVarTemplate(bad)
		assert.Error(t, err, bad)
	}
}
