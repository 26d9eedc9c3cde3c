package compile

import (
	"fmt"
	"regexp"
	"strings"

	"ramjet.dev/ramjet/match"
)

// proxy-redirect-from and -to, proxy-cookie-domain and proxy-cookie-path
// (annotations and ConfigMap location defaults): nginx's proxy_redirect,
// proxy_cookie_domain and proxy_cookie_path as nginx.tmpl writes them
// (match.HeaderRewrite). The cookie keys are written as they are, "off"
// (the default) for none. proxy_redirect is written only when
// proxy-redirect-from is neither "off" nor "default" and proxy-redirect-to
// is not "off"; "default" (and no line at all, nginx's default) rewrites
// only a Location starting with proxy_pass's http://upstream_balancer/,
// which no backend sends, so both leave responses as they are.
func init() {
	registerAnnotations(map[string]annotationSpec{
		"proxy-redirect-from": {apply: applyProxying(func(p *proxyValues, key, v string) error {
			return redirectPart(&p.redirectFrom, key, v)
		})},
		"proxy-redirect-to": {apply: applyProxying(func(p *proxyValues, key, v string) error {
			return redirectPart(&p.redirectTo, key, v)
		})},
		"proxy-cookie-domain": {apply: applyProxying(func(p *proxyValues, key, v string) error {
			return cookieRewrite(&p.cookieDomain, key, v, true)
		})},
		"proxy-cookie-path": {apply: applyProxying(func(p *proxyValues, key, v string) error {
			return cookieRewrite(&p.cookiePath, key, v, false)
		})},
	})
}

// ingress-nginx's validators (internal/ingress/annotations/proxy): a URL's
// characters for proxy-redirect-* and proxy-cookie-path (spaces removed
// first), two words of a domain's for proxy-cookie-domain. A value
// failing them leaves the ConfigMap's value in place.
var (
	nginxURLChars    = regexp.MustCompile(`^[\-._~a-zA-Z0-9/:,?&=]*$`)
	nginxCookieChars = regexp.MustCompile(`^(off|[\-._~a-zA-Z0-9/:]+\s+[\-._~a-zA-Z0-9/:]+)$`)
)

// whatApplies is said of a value not applied.
const whatApplies = "the ConfigMap's value, or nginx's default (off), applies"

func redirectPart(dst *string, key, value string) error {
	v := strings.TrimSpace(value)
	switch {
	case strings.HasPrefix(key, NginxPrefix) && !nginxURLChars.MatchString(strings.ReplaceAll(value, " ", "")):
		return fmt.Errorf("%s %q has characters ingress-nginx does not accept in a URL; %s", key, value, whatApplies)
	case v == "":
		return fmt.Errorf("%s is empty; %s", key, whatApplies)
	case len(strings.Fields(v)) > 1:
		return fmt.Errorf("%s %q is more than one word, which nginx's proxy_redirect refuses to load; %s", key, value, whatApplies)
	}
	*dst = v
	return nil
}

// cookieRewrite reads proxy-cookie-domain (domain) or proxy-cookie-path:
// "off", or the text to replace and its replacement.
func cookieRewrite(dst **match.HeaderRewrite, key, value string, domain bool) error {
	valid := nginxURLChars.MatchString(strings.ReplaceAll(value, " ", ""))
	if domain {
		valid = nginxCookieChars.MatchString(value)
	}
	if strings.HasPrefix(key, NginxPrefix) && !valid {
		what := "has characters ingress-nginx does not accept in a URL"
		if domain {
			what = "is not \"off\" or two words of the characters ingress-nginx accepts in a domain"
		}
		return fmt.Errorf("%s %q %s; %s", key, value, what, whatApplies)
	}
	f := strings.Fields(value)
	switch {
	case len(f) == 1 && f[0] == "off":
		*dst = nil
		return nil
	case len(f) != 2:
		return fmt.Errorf("%s %q is neither \"off\" nor a text and its replacement, which nginx refuses to load; %s", key, value, whatApplies)
	}
	rw, err := headerRewrite(f[0], f[1], domain)
	if err != nil {
		return fmt.Errorf("%s %q: %v; %s", key, value, err, whatApplies)
	}
	*dst = rw
	return nil
}

// headerRewrite compiles a pattern and its replacement as nginx's
// proxy_redirect and proxy_cookie_* do: "~" starts a regular expression,
// "~*" one that ignores case (a domain's always does); any other text is
// literal, a domain's leading dot dropped from both. nginx variables are
// not read: only a regular expression's groups, $1 to $9.
func headerRewrite(from, to string, domain bool) (*match.HeaderRewrite, error) {
	if pattern, ok := strings.CutPrefix(from, "~"); ok {
		caseless := domain
		if p, ok := strings.CutPrefix(pattern, "*"); ok && !domain {
			pattern, caseless = p, true
		}
		if caseless {
			pattern = "(?i)" + pattern
		}
		re, err := regexp.Compile(pattern)
		if err != nil {
			return nil, fmt.Errorf("not a regular expression ramjet reads (%v)", err)
		}
		if hasVariable(to, true) {
			return nil, fmt.Errorf("the replacement names an nginx variable, which ramjet does not read")
		}
		return &match.HeaderRewrite{Pattern: re, To: to}, nil
	}
	if hasVariable(from, false) || hasVariable(to, false) {
		return nil, fmt.Errorf("names an nginx variable, which ramjet does not read")
	}
	if domain {
		from, to = strings.TrimPrefix(from, "."), strings.TrimPrefix(to, ".")
	}
	return &match.HeaderRewrite{From: from, To: to}, nil
}

// hasVariable reports a '$' other than a regular expression's group $1
// to $9 (groups: whether those are read).
func hasVariable(s string, groups bool) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '$' && !(groups && i+1 < len(s) && s[i+1] >= '1' && s[i+1] <= '9') {
			return true
		}
	}
	return false
}

// redirectRewrite is the location's proxy_redirect from its two keys as
// nginx.tmpl writes it; nil where it changes nothing.
func (p *proxyValues) redirectRewrite() (*match.HeaderRewrite, error) {
	from, to := p.redirectFrom, p.redirectTo
	if from == "" || from == "off" || from == "default" || to == "" || to == "off" {
		return nil, nil
	}
	return headerRewrite(from, to, false)
}

// resolveRedirectRewrite builds the Ingress's proxy_redirect once both
// keys are read, warning on each key of a pair nginx would not load.
func (b *builder) resolveRedirectRewrite(ing *ingress) {
	pv := ing.ann.request
	if pv == nil || pv.proxy == nil {
		return
	}
	p := pv.proxy
	rw, err := p.redirectRewrite()
	if err != nil {
		for _, k := range []string{"proxy-redirect-from", "proxy-redirect-to"} {
			key := b.annotationKey(ing, k)
			b.warn(AnnotationRejected, ing.ref(), annotationField(key),
				fmt.Sprintf("proxy-redirect-from %q with proxy-redirect-to %q: %v; Location and Refresh headers are passed unchanged", p.redirectFrom, p.redirectTo, err))
		}
		p.redirectFrom, p.redirectTo = "", ""
		return
	}
	p.redirect = rw
	if rw != nil {
		p.redirectRelative = relativeRedirects(ing) || b.opts.RelativeRedirects
	}
}

// annotationKey is the annotation that set key on ing: ramjet's, else
// ingress-nginx's, else the ConfigMap's default.
func (b *builder) annotationKey(ing *ingress, key string) string {
	for _, prefix := range []string{NativePrefix, NginxPrefix} {
		if _, ok := ing.obj.Annotations[prefix+key]; ok {
			return prefix + key
		}
	}
	return NginxPrefix + key
}

// relativeRedirects reports relative-redirects "true" on ing: nginx's
// absolute_redirect off in its locations (the ConfigMap key,
// Options.RelativeRedirects, turns it off for every location).
func relativeRedirects(ing *ingress) bool {
	for _, prefix := range []string{NativePrefix, NginxPrefix} {
		if v, ok := ing.obj.Annotations[prefix+"relative-redirects"]; ok {
			return strings.TrimSpace(v) == "true"
		}
	}
	return false
}

// unvalidatedDefaults are the location defaults ingress-nginx writes into
// nginx.tmpl without its annotation validator: read as nginx reads them.
var unvalidatedDefaults = setOf("proxy-redirect-from", "proxy-redirect-to", "proxy-cookie-domain", "proxy-cookie-path")
