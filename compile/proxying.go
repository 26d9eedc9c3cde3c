package compile

import (
	"cmp"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"ramjet.dev/ramjet/match"
)

// Buffers and protocol knobs (SPEC §11 "Also served"), per location:
// proxy-buffering, proxy-buffer-size, proxy-buffers-number,
// proxy-busy-buffers-size, proxy-max-temp-file-size, proxy-http-version,
// proxy-next-upstream and proxy-next-upstream-timeout. Each value is read
// with ingress-nginx v1.15's syntax; one it does not accept warns
// AnnotationRejected and the default applies, as ingress-nginx falls back
// to its default for an annotation that fails validation. Values
// ingress-nginx accepts but nginx refuses to load (a size in bytes "b" or
// gigabytes "g", fewer than 2 buffers, busy buffers outside nginx's
// bounds) warn too and leave the location's buffers at their defaults:
// under ingress-nginx the whole configuration would fail to load.

func init() {
	registerAnnotations(map[string]annotationSpec{
		"proxy-buffering": {apply: applyProxying(func(p *proxyValues, key, v string) error {
			return onOff(&p.buffering, key, v, "responses stream as they arrive")
		})},
		"proxy-buffer-size":           {apply: applyProxying(proxySize(func(p *proxyValues) *int64 { return &p.bufferSize }))},
		"proxy-busy-buffers-size":     {apply: applyProxying(proxySize(func(p *proxyValues) *int64 { return &p.busySize }))},
		"proxy-max-temp-file-size":    {apply: applyProxying(proxySize(func(p *proxyValues) *int64 { return &p.maxTemp }))},
		"proxy-buffers-number":        {apply: applyProxying(applyBuffersNumber)},
		"proxy-http-version":          {apply: applyProxying(applyHTTPVersion)},
		"proxy-next-upstream":         {apply: applyProxying(applyNextUpstream)},
		"proxy-next-upstream-timeout": {apply: applyProxying(applyNextUpstreamTimeout)},
		"connection-proxy-header":     {apply: applyProxying(applyConnectionHeader)},
	})
}

// proxyValues are an Ingress's proxying annotations as read; each key's
// field is set only when its value was accepted.
type proxyValues struct {
	buffering  *bool
	bufferSize int64 // 0: unset
	busySize   int64 // 0: unset
	maxTemp    int64 // -1: unset
	buffers    int   // 0: unset
	http10     bool
	next       match.NextUpstream
	nextTO     time.Duration
	// keys are the annotations of the buffer sizes, for the warning when
	// nginx would refuse them together.
	keys []string
	// redirectFrom and redirectTo are proxy-redirect-from and -to as
	// read ("" unset), redirect and redirectRelative what they make
	// (header_rewrites.go); cookieDomain and cookiePath the cookie keys'.
	redirectFrom, redirectTo string
	redirect                 *match.HeaderRewrite
	redirectRelative         bool
	cookieDomain, cookiePath *match.HeaderRewrite
	// connection is connection-proxy-header ("" unset).
	connection string
}

func applyProxying(f func(p *proxyValues, key, value string) error) func(v *annotationValues, key, value string) error {
	return func(v *annotationValues, key, value string) error {
		pv := v.requestW()
		if pv.proxy == nil {
			pv.proxy = &proxyValues{maxTemp: -1}
		}
		if err := f(pv.proxy, key, value); err != nil {
			return err
		}
		pv.set = true
		return nil
	}
}

func onOff(dst **bool, key, value, otherwise string) error {
	switch strings.TrimSpace(value) {
	case "on":
		on := true
		*dst = &on
	case "off":
		off := false
		*dst = &off
	default:
		return fmt.Errorf("%s %q is neither \"on\" nor \"off\"; %s", key, value, otherwise)
	}
	return nil
}

// parseBufferSize reads an nginx size as proxy_buffer_size and its kin
// take it: digits, then optionally k or m in either case. ingress-nginx
// also lets "b" and "g" through, which nginx then refuses to load.
func parseBufferSize(s string) (int64, error) {
	s = strings.TrimSpace(s)
	if s != "" && strings.ContainsAny(s[len(s)-1:], "bBgG") {
		return 0, errors.New("nginx takes sizes in bytes, k or m only and would refuse to load this")
	}
	return ParseSize(s)
}

func proxySize(field func(*proxyValues) *int64) func(p *proxyValues, key, value string) error {
	return func(p *proxyValues, key, value string) error {
		n, err := parseBufferSize(value)
		if err != nil {
			return fmt.Errorf("%s %q: %v; the default applies", key, value, err)
		}
		if n == 0 && !strings.HasSuffix(key, "proxy-max-temp-file-size") {
			return fmt.Errorf("%s %q: a buffer must be more than 0 bytes; the default applies", key, value)
		}
		*field(p) = n
		p.keys = append(p.keys, key)
		return nil
	}
}

func applyBuffersNumber(p *proxyValues, key, value string) error {
	n, err := strconv.Atoi(strings.TrimSpace(value))
	if err != nil || n < 2 || n > 1<<16 {
		return fmt.Errorf("%s %q is not a whole number of at least 2 (nginx needs two buffers); the default, 4, applies", key, value)
	}
	p.buffers = n
	p.keys = append(p.keys, key)
	return nil
}

// applyConnectionHeader reads connection-proxy-header as ingress-nginx's
// connection parser does: "close" or "keep-alive", spaces removed
// (internal/ingress/annotations/connection).
func applyConnectionHeader(p *proxyValues, key, value string) error {
	v := strings.ReplaceAll(value, " ", "")
	if v != "close" && v != "keep-alive" {
		return fmt.Errorf("%s %q is neither \"close\" nor \"keep-alive\"; the Connection header is nginx's default (Upgrade for an upgrade, none otherwise)", key, value)
	}
	p.connection = v
	return nil
}

func applyHTTPVersion(p *proxyValues, key, value string) error {
	switch strings.TrimSpace(value) {
	case "1.0":
		p.http10 = true
	case "1.1":
		p.http10 = false
	default:
		return fmt.Errorf("%s %q is neither \"1.0\" nor \"1.1\"; HTTP/1.1 is used", key, value)
	}
	return nil
}

// nextUpstreamRE is ingress-nginx's check of proxy-next-upstream: the
// conditions nginx names, each followed by at most one blank.
var nextUpstreamRE = regexp.MustCompile(`^((error|timeout|invalid_header|http_500|http_502|http_503|http_504|http_403|http_404|http_429|non_idempotent|off)\s?)+$`)

func applyNextUpstream(p *proxyValues, key, value string) error {
	if !nextUpstreamRE.MatchString(value) {
		return fmt.Errorf("%s %q is not a list of nginx's proxy_next_upstream conditions (error timeout invalid_header http_500 http_502 http_503 http_504 http_403 http_404 http_429 non_idempotent off); the default applies", key, value)
	}
	var n match.NextUpstream
	for _, f := range strings.Fields(value) {
		n |= match.ParseNextUpstreamCondition(f)
	}
	if n&match.RetryOff != 0 {
		n = match.RetryOff // nginx: off overrides the rest
	}
	p.next = n
	return nil
}

func applyNextUpstreamTimeout(p *proxyValues, key, value string) error {
	if strings.HasPrefix(key, NativePrefix) {
		d, err := ParseDuration(value)
		if err != nil {
			return fmt.Errorf("%s %q: %v; requests are passed on without a time bound", key, value, err)
		}
		p.nextTO = d
		return nil
	}
	n, err := strconv.Atoi(value)
	if err != nil || n < 0 || n > maxTimeoutSeconds {
		return fmt.Errorf("%s %q is not a whole number of seconds (0 for no bound); requests are passed on without a time bound", key, value)
	}
	p.nextTO = time.Duration(n) * time.Second
	return nil
}

// nginx's defaults as ingress-nginx writes them: proxy_buffers 4 4k,
// proxy_buffer_size 4k, proxy_max_temp_file_size 1024m.
const (
	defaultProxyBuffers    = 4
	defaultProxyBufferSize = 4 << 10
	defaultMaxTempFile     = 1 << 30
)

// resolveProxying checks the buffer sizes together as nginx does when it
// loads the location (ngx_http_proxy_merge_loc_conf); when they break
// its rules, the buffer sizes are dropped with a warning.
func (b *builder) resolveProxying(ing *ingress) {
	b.resolveRedirectRewrite(ing)
	pv := ing.ann.request
	if pv == nil || pv.proxy == nil {
		return
	}
	p := pv.proxy
	if len(p.keys) == 0 {
		return
	}
	size := cmp.Or(p.bufferSize, defaultProxyBufferSize)
	num := int64(cmp.Or(p.buffers, defaultProxyBuffers))
	busy := p.busySize
	if busy == 0 {
		busy = 2 * size
	}
	var why string
	switch {
	case busy < size:
		why = "proxy-busy-buffers-size must be at least proxy-buffer-size"
	case busy > (num-1)*size:
		why = "proxy-busy-buffers-size (twice proxy-buffer-size when unset) must be at most proxy-buffers-number - 1 buffers"
	case p.maxTemp > 0 && p.maxTemp < size:
		why = "proxy-max-temp-file-size must be 0 or at least proxy-buffer-size"
	}
	if why == "" {
		return
	}
	for _, k := range p.keys {
		b.warn(AnnotationRejected, ing.ref(), annotationField(k),
			k+": "+why+", or nginx refuses to load the configuration; the buffer settings are ignored and nginx's defaults (4 buffers of 4k) apply")
	}
	p.bufferSize, p.busySize, p.buffers, p.maxTemp, p.keys = 0, 0, 0, -1, nil
}

// proxying is the location's Proxying, nil when nothing is set.
func (p *proxyValues) proxying() *match.Proxying {
	if p == nil {
		return nil
	}
	redirect := p.redirect
	if redirect == nil {
		// The ConfigMap's for the locations no Ingress's annotations
		// were read for (resolveRedirectRewrite warned for the others).
		redirect, _ = p.redirectRewrite()
	}
	out := &match.Proxying{
		BufferSize:          p.bufferSize,
		BuffersNumber:       p.buffers,
		BusyBuffersSize:     p.busySize,
		MaxTempFileSize:     p.maxTemp,
		HTTP10:              p.http10,
		NextUpstream:        p.next,
		NextUpstreamTimeout: p.nextTO,
		Redirect:            redirect,
		RedirectRelative:    p.redirectRelative,
		CookieDomain:        p.cookieDomain,
		CookiePath:          p.cookiePath,
		Connection:          p.connection,
	}
	if p.buffering != nil {
		out.Buffering = *p.buffering
	}
	if *out == (match.Proxying{MaxTempFileSize: -1}) {
		return nil // only values that change nothing (proxy-buffering: off)
	}
	return out
}
