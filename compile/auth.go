package compile

import (
	"net/http"
	"regexp"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"ramjet.dev/ramjet/match"
	"ramjet.dev/ramjet/match/htpasswd"
	"ramjet.dev/ramjet/match/urltemplate"
)

// Authentication (SPEC §11.7): auth-type basic or digest with auth-secret,
// auth-secret-type and auth-realm; external auth with auth-url,
// auth-method, auth-signin, auth-signin-redirect-param,
// auth-response-headers, auth-request-redirect and auth-always-set-cookie.
//
// Authentication fails closed. What ingress-nginx treats as a denied
// location (a missing Secret or key, a Secret in another namespace, an
// auth-type or auth-url it cannot use) answers 503 here too; where
// ingress-nginx silently drops the whole authentication on a value it
// cannot validate (auth-realm, auth-request-redirect,
// auth-always-set-cookie), ramjet keeps it: a bad realm is sent empty, a
// bad request-redirect or response-header list denies the location, a bad
// always-set-cookie stays false. Every such value warns.

func init() {
	keys := map[string]annotationSpec{}
	for _, k := range []string{"auth-type", "auth-secret", "auth-secret-type", "auth-realm",
		"auth-url", "auth-method", "auth-signin", "auth-signin-redirect-param", "auth-response-headers",
		"auth-request-redirect", "auth-always-set-cookie"} {
		keys[k] = annotationSpec{apply: keepAccessAnnotation}
	}
	registerAnnotations(keys)
}

// resolveAuth builds the Ingress's authentication: basic, external or
// both; nil when it asks for none.
func (b *builder) resolveAuth(ing *ingress) *match.Auth {
	auth := &match.Auth{}
	if basic, digest, denied := b.resolveBasicAuth(ing); denied != "" {
		auth.Denied = denied
	} else {
		auth.Basic, auth.Digest = basic, digest
	}
	ext, denied := b.resolveExternalAuth(ing)
	if denied != "" && auth.Denied == "" {
		auth.Denied = denied
	}
	auth.External = ext
	if auth.Denied != "" || auth.Basic != nil || auth.Digest != nil || auth.External != nil {
		return auth
	}
	return nil
}

// resolveBasicAuth reads auth-type basic or digest. denied is set when the
// Ingress asks for authentication that cannot be served.
func (b *builder) resolveBasicAuth(ing *ingress) (basic *match.BasicAuth, digest *match.DigestAuth, denied string) {
	raw := &ing.ann.access
	typ, ok := raw.get("auth-type")
	if !ok {
		if s, ok := raw.get("auth-secret"); ok {
			b.rejectAccess(ing, s.key, "has no effect without auth-type: basic; the paths are not protected by basic authentication")
		}
		return nil, nil, ""
	}
	deny := func(key, why string) (*match.BasicAuth, *match.DigestAuth, string) {
		b.rejectAccess(ing, key, why+"; every request to this Ingress's paths answers 503")
		return nil, nil, key + ": " + why
	}
	isDigest := false
	switch strings.TrimSpace(typ.value) {
	case "basic":
	case "digest":
		isDigest = true
	default:
		return deny(typ.key, strconv.Quote(typ.value)+` is not "basic" or "digest"`)
	}
	secretType := "auth-file"
	if st, ok := raw.get("auth-secret-type"); ok {
		secretType = strings.TrimSpace(st.value)
		if secretType != "auth-file" && secretType != "auth-map" {
			return deny(st.key, strconv.Quote(st.value)+` is not "auth-file" or "auth-map"`)
		}
	}
	sa, ok := raw.get("auth-secret")
	if !ok || strings.TrimSpace(sa.value) == "" {
		return deny(typ.key, "auth-type "+strings.TrimSpace(typ.value)+" needs auth-secret to name the Secret with the passwords")
	}
	ns, name, found := strings.Cut(strings.TrimSpace(sa.value), "/")
	if !found {
		ns, name = ing.obj.Namespace, ns
	}
	switch {
	case name == "" || strings.Contains(name, "/"):
		return deny(sa.key, strconv.Quote(sa.value)+" is not a Secret name or namespace/name")
	case ns != ing.obj.Namespace && !b.opts.AllowCrossNamespaceResources:
		return deny(sa.key, "Secret "+ns+"/"+name+" is in another namespace, which ingress-nginx allows only with the ConfigMap key allow-cross-namespace-resources")
	}
	ref := ns + "/" + name
	sec := b.secrets[objKey{ns, name}]
	if sec == nil {
		b.warn(SecretNotFound, ing.ref(), annotationField(sa.key), "Secret "+ref+" not found; every request to this Ingress's paths answers 503")
		return nil, nil, "Secret " + ref + " not found"
	}
	realm, realmKey := "", typ.key
	if r, ok := raw.get("auth-realm"); ok {
		realmKey = r.key
		if validRealm(r.value) {
			realm = r.value
		} else if !isDigest {
			b.rejectAccess(ing, r.key, "the realm holds a quote, a backslash or a non-printable character; the challenge is sent with an empty realm")
		}
	}
	if isDigest && (realm == "" || realm == "off") {
		// nginx's digest module declines a location whose realm is empty
		// or "off" (ngx_http_auth_digest_module.c:148-162), leaving it
		// unprotected; and no htdigest line has an empty realm to log in
		// by. Closed here.
		return deny(realmKey, "auth-type digest needs an auth-realm (printable, without quotes or backslashes, not \"off\") naming the realm of the htdigest entries")
	}
	var data []byte
	if secretType == "auth-file" {
		d, ok := sec.StringData["auth"]
		if !ok {
			raw, has := sec.Data["auth"]
			if !has {
				b.warn(SecretInvalid, ing.ref(), annotationField(sa.key), "Secret "+ref+" has no key auth (an "+passwordFile(isDigest)+" file); every request to this Ingress's paths answers 503")
				return nil, nil, "Secret " + ref + " has no key auth"
			}
			d = string(raw)
		}
		data = []byte(d)
	}
	var problems []htpasswd.PasswordProblem
	if isDigest {
		var users *htpasswd.Digests
		if secretType == "auth-file" {
			users, problems = htpasswd.ParseHtdigest(data)
		} else {
			users, problems = htpasswd.ParseHtdigestMap(authMapData(sec))
		}
		digest = &match.DigestAuth{Realm: realm, Secret: ref, SecretType: secretType, Users: users}
	} else {
		var users *htpasswd.Passwords
		if secretType == "auth-file" {
			users, problems = htpasswd.ParseHtpasswd(data)
		} else {
			users, problems = htpasswd.ParseAuthMap(authMapData(sec))
		}
		basic = match.NewBasicAuth(match.BasicAuth{Realm: realm, Secret: ref, SecretType: secretType, Users: users})
	}
	if len(problems) > 0 {
		b.warn(SecretInvalid, ing.ref(), annotationField(sa.key), passwordProblems(ref, problems))
	}
	return basic, digest, ""
}

func passwordFile(digest bool) string {
	if digest {
		return "htdigest"
	}
	return "htpasswd"
}

func authMapData(sec *corev1.Secret) map[string][]byte {
	if len(sec.StringData) == 0 {
		return sec.Data
	}
	m := make(map[string][]byte, len(sec.Data)+len(sec.StringData))
	for k, v := range sec.Data {
		m[k] = v
	}
	for k, v := range sec.StringData {
		m[k] = []byte(v)
	}
	return m
}

func passwordProblems(ref string, ps []htpasswd.PasswordProblem) string {
	const shown = 5
	s := "Secret " + ref + ": " + strconv.Itoa(len(ps)) + " unusable password entr"
	if len(ps) == 1 {
		s += "y"
	} else {
		s += "ies"
	}
	s += " (those users cannot log in): "
	for i, p := range ps[:min(len(ps), shown)] {
		if i > 0 {
			s += "; "
		}
		s += p.String()
	}
	if len(ps) > shown {
		s += "; ..."
	}
	return s
}

func validRealm(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < ' ' || c >= 0x7f || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

var (
	authMethodRE = regexp.MustCompile(`^(GET|HEAD|POST|PUT|PATCH|DELETE|CONNECT|OPTIONS|TRACE)$`)
	authHeaderRE = regexp.MustCompile(`^[a-zA-Z\d\-_]+$`)
	redirParamRE = regexp.MustCompile(`^[\-._~a-zA-Z0-9/:,?&=]+$`)
)

// resolveExternalAuth reads auth-url and its companions.
func (b *builder) resolveExternalAuth(ing *ingress) (ext *match.ExternalAuth, denied string) {
	raw := &ing.ann.access
	u, ok := raw.get("auth-url")
	if ok && strings.TrimSpace(u.value) == "" {
		// ingress-nginx reads an empty auth-url as no auth-url at all
		// (its parser's invalid-content error skips the annotation): the
		// location is served without external auth, or with the global one.
		b.rejectAccess(ing, u.key, "is empty; as in ingress-nginx, the paths get no external authentication of their own")
		ok = false
	}
	if !ok {
		for _, k := range []string{"auth-method", "auth-signin", "auth-signin-redirect-param", "auth-response-headers", "auth-request-redirect", "auth-always-set-cookie"} {
			if a, ok := raw.get(k); ok {
				b.rejectAccess(ing, a.key, "has no effect without auth-url")
			}
		}
		b.resolveAuthOptions(ing, nil)
		return nil, ""
	}
	deny := func(key, why string) (*match.ExternalAuth, string) {
		b.rejectAccess(ing, key, why+"; every request to this Ingress's paths answers 503")
		return nil, key + ": " + why
	}
	target, err := urltemplate.ParseAuthURL(strings.TrimSpace(u.value), false)
	if err != nil {
		return deny(u.key, valueError(u.value, err))
	}
	x := &match.ExternalAuth{URL: target, NoTraceContext: b.opts.Tracing.Enabled}
	if m, ok := raw.get("auth-method"); ok {
		v := strings.TrimSpace(m.value)
		if !authMethodRE.MatchString(v) {
			return deny(m.key, strconv.Quote(m.value)+" is not an HTTP method")
		}
		x.Method = v
	}
	if h, ok := raw.get("auth-response-headers"); ok {
		for _, name := range strings.Split(h.value, ",") {
			name = strings.TrimSpace(name)
			if name == "" {
				continue
			}
			if !authHeaderRE.MatchString(name) {
				return deny(h.key, "header "+strconv.Quote(name)+" is not a header name")
			}
			// A name listed twice stays twice: ingress-nginx writes a
			// proxy_set_header line per listing, and nginx sends each.
			x.ResponseHeaders = append(x.ResponseHeaders, http.CanonicalHeaderKey(name))
		}
	}
	if r, ok := raw.get("auth-request-redirect"); ok {
		// ingress-nginx validates the value with its spaces removed but
		// writes it as trimmed, unquoted (nginx.tmpl: proxy_set_header
		// X-Auth-Request-Redirect), where an inner space is one argument
		// too many and nginx refuses the configuration.
		v := strings.TrimSpace(r.value)
		switch {
		case v != "" && !redirParamRE.MatchString(strings.ReplaceAll(v, " ", "")):
			return deny(r.key, strconv.Quote(r.value)+" holds characters a URL does not")
		case strings.Contains(v, " "):
			return deny(r.key, strconv.Quote(r.value)+" holds a space, which ingress-nginx writes unquoted into nginx's configuration, and nginx refuses it")
		}
		x.RequestRedirect = v
	}
	param := ""
	if p, ok := raw.get("auth-signin-redirect-param"); ok {
		// What ingress-nginx's URLIsValidRegex takes; an inner space,
		// which passes its check, breaks nginx's "return 302" line.
		if v := strings.TrimSpace(p.value); redirParamRE.MatchString(v) {
			param = v
		} else {
			b.rejectAccess(ing, p.key, strconv.Quote(p.value)+" is not a query parameter name; rd is used")
		}
	}
	if s, ok := raw.get("auth-signin"); ok {
		signin, err := urltemplate.SigninURL(strings.TrimSpace(s.value), param)
		if err != nil {
			b.rejectAccess(ing, s.key, valueError(s.value, err)+"; a 401 from the auth service is passed to the client")
		} else {
			x.Signin, x.SigninRelative = &signin, b.opts.RelativeRedirects
		}
	}
	if c, ok := raw.get("auth-always-set-cookie"); ok {
		v, err := strconv.ParseBool(c.value)
		if err != nil {
			b.rejectAccess(ing, c.key, strconv.Quote(c.value)+" is not a boolean; the auth service's cookie is passed only with successful answers")
		}
		x.AlwaysSetCookie = v
	}
	if denied := b.resolveAuthOptions(ing, x); denied != "" {
		return nil, denied
	}
	return x, ""
}

// noAuthLocation is ingress-nginx's no-auth-locations default
// (controller/config/config.go:909): a location whose own path, as
// declared, starts with it is written without any of its authentication
// (nginx.tmpl:1220, template.go:912-932), so an ACME HTTP-01 challenge
// added to a protected Ingress can be answered. A denied location stays
// denied: that is decided before (nginx.tmpl:1205).
const noAuthLocation = "/.well-known/acme-challenge"

// pathAuth is the authentication of ing's path declared as path.
func pathAuth(ing *ingress, path string) *match.Auth {
	a := ing.ann.access.auth
	if a != nil && a.Denied == "" && strings.HasPrefix(path, noAuthLocation) {
		return nil
	}
	return a
}
