package match

import (
	"errors"
	"regexp"
	"strconv"
	"strings"
)

// HeaderRewrite is one of nginx's rewrites of a backend's response head
// (ngx_http_proxy_module): proxy_redirect's of Location and Refresh,
// proxy_cookie_domain's and proxy_cookie_path's of a Set-Cookie attribute.
type HeaderRewrite struct {
	// From is the literal text matched: for proxy_redirect and
	// proxy_cookie_path a prefix, compared case-sensitively, which To
	// replaces; for proxy_cookie_domain the whole domain, compared
	// case-insensitively, a leading dot on either side apart (the
	// cookie's is kept).
	From string
	// Pattern, when set, is matched instead of From (the "~" and "~*"
	// forms), anywhere in the value; the whole value then becomes To,
	// where $1 to $9 are its groups.
	Pattern *regexp.Regexp
	To      string
}

// checkHeaderRewrite refuses a rewrite the router cannot follow.
func checkHeaderRewrite(field string, rw *HeaderRewrite) error {
	if rw != nil && rw.Pattern == nil && rw.From == "" {
		return &fieldError{field, errors.New("has neither From nor Pattern")}
	}
	return nil
}

// rewriteAt applies rw to v[prefix:] as ngx_http_proxy_rewrite_complex_handler
// (a literal prefix) and ngx_http_proxy_rewrite_regex_handler do.
func (rw *HeaderRewrite) rewriteAt(v string, prefix int) (string, bool) {
	rest := v[prefix:]
	if rw.Pattern != nil {
		m := rw.Pattern.FindStringSubmatchIndex(rest)
		if m == nil {
			return v, false
		}
		return v[:prefix] + expandCaptures(rw.To, rest, m), true
	}
	if !strings.HasPrefix(rest, rw.From) {
		return v, false
	}
	return v[:prefix] + rw.To + rest[len(rw.From):], true
}

// expandCaptures writes to as nginx's script does with the captures m of
// s: $1 to $9 are the groups (empty when a group took no part or there
// is no such group); any other '$' is itself.
func expandCaptures(to, s string, m []int) string {
	if strings.IndexByte(to, '$') < 0 {
		return to
	}
	var b strings.Builder
	for i := 0; i < len(to); i++ {
		c := to[i]
		if c != '$' || i+1 >= len(to) || to[i+1] < '1' || to[i+1] > '9' {
			b.WriteByte(c)
			continue
		}
		n := int(to[i+1] - '0')
		if 2*n+1 < len(m) && m[2*n] >= 0 {
			b.WriteString(s[m[2*n]:m[2*n+1]])
		}
		i++
	}
	return b.String()
}

// RewriteLocation is a Location header's value under proxy_redirect, and
// whether it was rewritten.
func (rw *HeaderRewrite) RewriteLocation(v string) (string, bool) {
	return rw.rewriteAt(v, 0)
}

// RewriteRefresh is a Refresh header's value under proxy_redirect: the
// text after its first "url=", in any case, is rewritten as a Location
// (ngx_http_upstream_rewrite_refresh); a value without one is left.
func (rw *HeaderRewrite) RewriteRefresh(v string) (string, bool) {
	i := indexFold(v, "url=")
	if i < 0 {
		return v, false
	}
	return rw.rewriteAt(v, i+len("url="))
}

// indexFold is the index of the first instance of the lower-case ASCII
// sub in s, compared without case; -1 when there is none.
func indexFold(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if strings.EqualFold(s[i:i+len(sub)], sub) {
			return i
		}
	}
	return -1
}

// rewriteDomain applies a proxy_cookie_domain rewrite to a cookie's
// Domain value as ngx_http_proxy_rewrite_domain_handler does: the whole
// domain, a leading dot apart, equals From in any case; the dot stays.
func (rw *HeaderRewrite) rewriteDomain(v string) (string, bool) {
	if rw.Pattern != nil {
		return rw.rewriteAt(v, 0)
	}
	prefix := 0
	if strings.HasPrefix(v, ".") {
		prefix = 1
	}
	if !strings.EqualFold(v[prefix:], rw.From) {
		return v, false
	}
	return v[:prefix] + rw.To, true
}

// RewriteSetCookie is a Set-Cookie header's value under
// proxy_cookie_domain (domain) and proxy_cookie_path (path), either nil,
// and whether it changed. As ngx_http_proxy_rewrite_cookie, the value is
// split at each ';' into attributes, each name=value pair trimmed of
// spaces around its parts; a cookie whose first pair has no '=' is left
// as it is; a Domain or Path attribute (name in any case) with a value is
// rewritten; and a value with one rewritten is written again from its
// attributes, joined by "; ".
func RewriteSetCookie(v string, domain, path *HeaderRewrite) (string, bool) {
	first, rest, more := strings.Cut(v, ";")
	if !strings.Contains(first, "=") || !more || domain == nil && path == nil {
		return v, false
	}
	attrs := []string{trimCookiePair(first)}
	changed := false
	for {
		var a string
		a, rest, more = strings.Cut(rest, ";")
		name, value, hasValue := strings.Cut(a, "=")
		name = strings.Trim(name, " ")
		if hasValue {
			value = strings.Trim(value, " ")
			var ok bool
			switch {
			case domain != nil && strings.EqualFold(name, "domain"):
				value, ok = domain.rewriteDomain(value)
			case path != nil && strings.EqualFold(name, "path"):
				value, ok = path.rewriteAt(value, 0)
			}
			changed = changed || ok
			attrs = append(attrs, name+"="+value)
		} else {
			attrs = append(attrs, name)
		}
		if !more {
			break
		}
	}
	if !changed {
		return v, false
	}
	return strings.Join(attrs, "; "), true
}

// trimCookiePair is a name=value pair as ngx_http_proxy_parse_cookie
// keeps it: the spaces around the name and the value dropped.
func trimCookiePair(a string) string {
	name, value, ok := strings.Cut(a, "=")
	if !ok {
		return strings.Trim(a, " ")
	}
	return strings.Trim(name, " ") + "=" + strings.Trim(value, " ")
}

// HasHeaderRewrites reports whether p rewrites response headers.
func (p *Proxying) HasHeaderRewrites() bool {
	return p != nil && (p.Redirect != nil || p.CookieDomain != nil || p.CookiePath != nil)
}

func hasHeaderRewrites(p *Policy) bool { return proxyingOf(p).HasHeaderRewrites() }

// checkHeaderRewrites refuses a location's rewrite the router cannot follow.
func checkHeaderRewrites(p *Proxying) error {
	if p == nil {
		return nil
	}
	for _, c := range []struct {
		field string
		rw    *HeaderRewrite
	}{{"Proxy.Redirect", p.Redirect}, {"Proxy.CookieDomain", p.CookieDomain}, {"Proxy.CookiePath", p.CookiePath}} {
		if err := checkHeaderRewrite(c.field, c.rw); err != nil {
			return err
		}
	}
	return nil
}

func (e *encoder) headerRewrites(p *Proxying) {
	if !p.HasHeaderRewrites() {
		e.flag(false)
		return
	}
	e.flag(true)
	for _, rw := range []*HeaderRewrite{p.Redirect, p.CookieDomain, p.CookiePath} {
		e.flag(rw != nil)
		if rw == nil {
			continue
		}
		e.str(rw.From)
		pattern := ""
		if rw.Pattern != nil {
			pattern = rw.Pattern.String()
		}
		e.str(pattern)
		e.str(rw.To)
	}
	e.flag(p.RedirectRelative)
}

// headerRewritesText renders a location's rewrites on one line; "" for none.
func headerRewritesText(p *Proxying) string {
	if !p.HasHeaderRewrites() {
		return ""
	}
	var parts []string
	for _, c := range []struct {
		name string
		rw   *HeaderRewrite
	}{{"redirect", p.Redirect}, {"cookie-domain", p.CookieDomain}, {"cookie-path", p.CookiePath}} {
		if c.rw == nil {
			continue
		}
		from := strconv.Quote(c.rw.From)
		if c.rw.Pattern != nil {
			from = "~" + strconv.Quote(c.rw.Pattern.String())
		}
		parts = append(parts, c.name+"="+from+"->"+strconv.Quote(c.rw.To))
	}
	if p.Redirect != nil && p.RedirectRelative {
		parts = append(parts, "relative")
	}
	return "rewrites " + strings.Join(parts, " ")
}
