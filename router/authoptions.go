package router

import (
	"crypto/sha256"
	"net/http"
	"strings"
	"sync"
	"time"

	"ramjet.dev/ramjet/balance"
	"ramjet.dev/ramjet/match"
	"ramjet.dev/ramjet/match/vars"
)

// The external-auth options served here (match.ExternalAuthOptions): the
// answer cache (auth-cache-key, auth-cache-duration) and the headers of
// auth-proxy-set-headers. Connections to the service are always reused
// from the router's pool, whatever auth-keepalive says (SPEC §19).

// authVars expands the nginx variables of a cache key or header value
// for one request, as nginx does in the auth location, whose subrequest
// has a URI of its own (location, authLocation's) and no arguments;
// the rest are the request's.
type authVars struct {
	req *http.Request
	// scheme is the connection's ($scheme).
	host, location, scheme string
	remoteAddr             string
	// hdr are the header keys' settings: which names nginx keeps.
	hdr *headerSettings
}

func (v *authVars) value(x vars.Ref) string {
	req := v.req
	switch x.Var.Canon() {
	case vars.RemoteAddr:
		return v.remoteAddr
	case vars.RemoteUser:
		u, _, _ := req.BasicAuth()
		return u
	case vars.Host:
		return v.host
	case vars.HTTPHost:
		h, _ := httpHost(req)
		return h
	case vars.RequestURI:
		return receivedTarget(req)
	case vars.URI:
		return v.location
	case vars.Scheme:
		return v.scheme
	case vars.RequestMethod:
		return req.Method
	case vars.HTTP:
		h, _ := v.hdr.httpVariable(req, http.CanonicalHeaderKey(strings.ReplaceAll(x.Name, "_", "-")))
		return h
	case vars.Cookie:
		c, _ := balance.Cookie(req, x.Name)
		return c
	}
	return ""
}

func (v *authVars) expand(t *match.VarTemplate) string {
	var b strings.Builder
	t.Expand(&b, v.value)
	return b.String()
}

// setAuthHeaders puts the location's auth-proxy-set-headers on the
// subrequest, over the client's: an empty value removes the header, as
// nginx's proxy_set_header does.
func setAuthHeaders(h http.Header, o *match.ExternalAuthOptions, v *authVars) {
	for i := range o.ProxySetHeaders {
		a := &o.ProxySetHeaders[i]
		if val := v.expand(&a.Value); val != "" {
			h[a.Name] = []string{val}
		} else {
			delete(h, a.Name)
		}
	}
}

// authCacheKey is the cache key of a request's subrequest: the server
// block's name, the location and the expanded auth-cache-key, as
// ingress-nginx keys its auth_cache zone (nginx.tmpl's $tmp_cache_key:
// the server's hostname, so every host a wildcard server answers shares
// the entry, the auth location and the key).
func authCacheKey(o *match.ExternalAuthOptions, x *match.ExternalAuth, server, loc string, v *authVars) [sha256.Size]byte {
	h := sha256.New()
	for _, s := range []string{server, loc, x.URL.Raw, x.Method, v.expand(o.CacheKey)} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	var k [sha256.Size]byte
	h.Sum(k[:0])
	return k
}

// authCache keeps the auth service's answers for auth-cache-key. It is
// bounded: past maxAuthCacheEntries, expired entries are swept and, if
// none has expired, the answer is not kept.
type authCache struct {
	mu      sync.Mutex
	entries map[[sha256.Size]byte]authCached
}

const maxAuthCacheEntries = 16 << 10

type authCached struct {
	status  int
	header  http.Header
	expires time.Time
	// vary are the request headers the answer's Vary names, and variant
	// the digest of the values they had: nginx's cache keeps such an
	// answer per variant and serves it to that variant only.
	vary    []string
	variant [sha256.Size]byte
}

// get returns the answer kept for k that answers a request with header
// req (its Vary variant), if there is one.
func (c *authCache) get(k [sha256.Size]byte, now time.Time, req http.Header) (authCached, bool) {
	c.mu.Lock()
	e, ok := c.entries[k]
	c.mu.Unlock()
	if !ok || !now.Before(e.expires) || len(e.vary) > 0 && varyVariant(e.vary, req) != e.variant {
		return authCached{}, false
	}
	return e, true
}

// put keeps an answer of status to a request with header req for its
// time (see cacheTTL), if any.
func (c *authCache) put(k [sha256.Size]byte, o *match.ExternalAuthOptions, status int, h http.Header, now time.Time, req http.Header) {
	ttl := cacheTTL(o, status, h, now)
	if ttl <= 0 {
		return
	}
	vary, ok := varyNames(h)
	if !ok {
		return
	}
	var variant [sha256.Size]byte
	if len(vary) > 0 {
		variant = varyVariant(vary, req)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = make(map[[sha256.Size]byte]authCached)
	}
	if len(c.entries) >= maxAuthCacheEntries {
		for key, e := range c.entries {
			if !now.Before(e.expires) {
				delete(c.entries, key)
			}
		}
		if len(c.entries) >= maxAuthCacheEntries {
			return
		}
	}
	c.entries[k] = authCached{status: status, header: h.Clone(), expires: now.Add(ttl), vary: vary, variant: variant}
}

// varyNames are the request headers an answer's Vary names, canonical;
// ok is false for "*", an answer nginx's cache never keeps.
func varyNames(h http.Header) (names []string, ok bool) {
	for _, v := range h["Vary"] {
		for f := range strings.SplitSeq(v, ",") {
			switch f = strings.TrimSpace(f); f {
			case "":
			case "*":
				return nil, false
			default:
				names = append(names, http.CanonicalHeaderKey(f))
			}
		}
	}
	return names, true
}

// varyVariant digests the values req has of the headers names.
func varyVariant(names []string, req http.Header) [sha256.Size]byte {
	d := sha256.New()
	for _, n := range names {
		for _, v := range req[n] {
			d.Write([]byte(v))
			d.Write([]byte{'\n'})
		}
		d.Write([]byte{0})
	}
	var sum [sha256.Size]byte
	d.Sum(sum[:0])
	return sum
}

// cacheTTL is how long nginx's proxy_cache keeps an answer that came at
// now (ngx_http_upstream_process_accel_expires, _cache_control and
// _expires): not at all when it sets a cookie; else as X-Accel-Expires
// says (0: not at all; @t: until t); else as Cache-Control says, where
// no-cache, no-store or private anywhere keep it not at all and s-maxage,
// else max-age, says how long (0 or not a number: not at all); else until
// Expires (a past or bad date: not at all); else auth-cache-duration's
// time for its status.
func cacheTTL(o *match.ExternalAuthOptions, status int, h http.Header, now time.Time) time.Duration {
	if len(h["Set-Cookie"]) > 0 {
		return 0
	}
	if v := h["X-Accel-Expires"]; len(v) > 0 {
		at, abs := strings.CutPrefix(v[0], "@")
		if n, ok := digits(at); ok {
			if abs {
				return time.Unix(n, 0).Sub(now)
			}
			return time.Duration(n) * time.Second
		}
	}
	if cc := strings.ToLower(strings.Join(h["Cache-Control"], ", ")); cc != "" {
		if strings.Contains(cc, "no-cache") || strings.Contains(cc, "no-store") || strings.Contains(cc, "private") {
			return 0
		}
		i, n := strings.Index(cc, "s-maxage="), len("s-maxage=")
		if i < 0 {
			i, n = strings.Index(cc, "max-age="), len("max-age=")
		}
		if i >= 0 {
			v := cc[i+n:]
			if j := strings.IndexAny(v, ",; "); j >= 0 {
				v = v[:j]
			}
			if v == "" {
				return 0
			}
			secs, ok := digits(v)
			if !ok {
				return 0
			}
			return time.Duration(secs) * time.Second
		}
	}
	if v := h["Expires"]; len(v) > 0 {
		t, err := http.ParseTime(v[0])
		if err != nil || t.Before(now) {
			return 0
		}
		return t.Sub(now)
	}
	return o.TTLFor(status)
}

// maxCacheSeconds caps a time an answer names, so that it stays a Duration.
const maxCacheSeconds = 1 << 32

// digits reads a whole number of ASCII digits, as nginx's ngx_atoi does,
// capped at maxCacheSeconds; ok is false for anything else.
func digits(s string) (n int64, ok bool) {
	if s == "" {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		if n < maxCacheSeconds {
			n = n*10 + int64(c-'0')
		}
	}
	return min(n, maxCacheSeconds), true
}
